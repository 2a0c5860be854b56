"""
The planner services in a child process: their requests never take the ticks' GIL.

A 1,000-point talos ``~/trajectory_torques`` request is 1.2 MB: rclpy deserializes it (and
later serializes its answer) in C code that holds the GIL, on the thread that spins, for
5-6 ms; no thread of the node's process can avoid that (``worker`` moves only the
computation off the executor's thread). A process can: the node starts ``child``
(``python -m rbd_ros.node.planner.child``), whose own rclpy context and node
(``<node>_planner``, the node's namespace and ROS domain) create ``~/trajectory_torques``,
``~/trajectory_forward`` and ``~/retime_trajectory`` under the node's names (resolved by the
node, its remappings applied): clients see no change.

What the node sends it:

* its robot, as a :class:`PlannerRobot` (what the services' handlers read: the model with
  its gravity and payloads, the joint parameters, the joint names and mimic followers),
  pickled over a socket (``multiprocessing.connection``) by a thread of its own whenever the
  node swaps in another robot (a description, a payload, gravity, joint dynamics): the
  newest one, once;
* that robot's version, in 8 bytes of shared memory, written at the swap itself (before a
  ``~/set_payload`` or parameter answer goes out). The child waits for the robot of the
  version it reads there before it computes a request: a request sent after
  ``~/set_payload`` answered sees the payload;
* the node's ``use_sim_time`` and log levels (:meth:`PlannerProcess.settings`: the process's
  default level and the node logger's effective one, so ``--ros-args --log-level debug`` and
  ``--log-level rbd_dynamics:=debug`` both reach the child's node), on its command line and,
  when they change, over the socket: ``use_sim_time`` set on the node at run time is sent at
  once (a post-set parameter callback), a log level set later (``rclpy.logging``, a logger
  service) within :data:`SETTINGS_POLL`. The child sets them on its own node, whose clock
  then follows /clock like the node's.

The child runs at nice +10 (:data:`NICE`, set before it starts a thread: every thread of
it inherits it) with numba on all cores but one, so the ticks keep their core. It starts in
the background (its imports take a second or two of its own CPU; the node's first output
does not wait for them), in a session of its own (a terminal's Ctrl-C is the node's to
handle: the node then closes it), and leaves when its socket closes, that is when the node
closes it (:meth:`PlannerProcess.close`) or the node's process ends in any way, SIGKILL
included, within 1.5 s whatever it is doing (``child.ParentWatch``: a thread that
watches the socket and the parent's pid). A child that exits otherwise is logged, counted
in /diagnostics (``planner_exits``, the ``planner`` entry) and started again after a
backoff (:data:`BACKOFF`).

Its answers can be large (a 1,000-point talos trajectory with derivatives: 23 MB), above the
512 kB shared-memory segment Fast DDS gives a participant, past which Fast DDS sends UDP
fragments and repairs lost ones in ~10 ms steps. Unless the node's environment chooses a
Fast DDS configuration itself, the child runs with the profile
``config/fastdds_large_messages.xml`` (an 8 MB segment; ``rbd_ros.node.fastdds_profile``), as
the node's own process does.
"""
import mmap
import os
import pickle
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
from collections import namedtuple
from multiprocessing.connection import Connection

from ..fastdds_profile import (FASTDDS_VARIABLES, large_messages_profile,  # noqa: F401
                               package_folder, use_large_messages_profile)

NICE = 10                  # added to the node's niceness for the child
BACKOFF = (0.5, 30.0)      # s: first restart delay, doubled per quick exit up to the second
STABLE = 60.0              # s: a child that ran this long restarts after BACKOFF[0] again
CLOSE_TIMEOUT = 3.0        # s: a closed child's time to leave before SIGKILL
EXIT_WAIT = 0.3            # s: the most a node whose process ends waits for its child
SETTINGS_POLL = 1.0        # s: between reads of the node's log levels
VERSION = struct.Struct("<q")
SERVICES = ("trajectory_torques", "trajectory_forward", "retime_trajectory",
            "trajectory_feedforward", "trajectory_effective_mass")


class PlannerRobot:
    """What the planner services' handlers read of a ``robot.Robot``: picklable, no ROS."""

    def __init__(self, robot):
        self.model = robot.model                  # gravity and payloads included
        self.joints = robot.joints                # rbd_ros.actuation.dynamics.Actuation, or None
        self.joint_names = list(robot.joint_names)
        self.dof_names = list(robot.dof_names)
        self.followers = dict(robot.followers)


class PlannerError(RuntimeError):
    """An exception in the child's services, as the child reported it."""


PlannerStatus = namedtuple("PlannerStatus", "state pid exits")
"""The planner process now (:meth:`PlannerProcess.status`): ``state``, ``pid``, ``exits``."""


class PlannerProcess:
    """
    The child process serving the planner services of ``node`` (a ``DynamicsNode``).

    Uses the node's logger, ``callback_failed`` (the child's unexpected exceptions are
    counted and logged there), name, namespace, context and service name resolution.
    ``pid``: the running child's (None while there is none); ``exits``: how many times a
    child exited unasked; ``state``: one line for /diagnostics.
    """

    def __init__(self, node):
        self._node = node
        self._logger = node.get_logger()
        self._command = [sys.executable, "-m", "rbd_ros.node.planner.child",
                         "--name", f"{node.get_name()}_planner",
                         "--namespace", node.get_namespace(),
                         "--domain", str(node.context.get_domain_id()),
                         "--parent", str(os.getpid())]
        for name in SERVICES:
            self._command += [f"--{name}", node.resolve_service_name("~/" + name)]
        self._env = _child_environment()
        self._lock = threading.Lock()            # the fields below, with the child's start
        self._send_lock = threading.Lock()       # held while a robot is written to a child
        self._latest = (0, None)                 # (version, robot) the node swapped in last
        self._version_file = tempfile.TemporaryFile()
        self._version_file.truncate(VERSION.size)
        self._version = mmap.mmap(self._version_file.fileno(), VERSION.size)
        self._conn = self._proc = self._socket = None
        self._child_settings = (None, None)      # (conn, settings): what that child has
        self._ready = False
        self.pid = None
        self.exits = 0
        self.state = "starting"
        self._trouble = ""                       # why the services are down ("" when not)
        self._wake = threading.Event()           # a robot or settings to send, or closing
        self._closing = threading.Event()
        self._threads = [threading.Thread(target=self._supervise, daemon=True,
                                          name="rbd_planner_supervisor"),
                         threading.Thread(target=self._send_robots, daemon=True,
                                          name="rbd_planner_sender")]
        for thread in self._threads:
            thread.start()
        node.add_post_set_parameters_callback(self._on_parameters)

    def status(self):
        """Return a :data:`PlannerStatus` of the child now (a copy: it never changes after)."""
        return PlannerStatus(self.state, self.pid, self.exits)

    # -- the node's side ----------------------------------------------------------------------
    def robot_changed(self, robot):
        """Take the robot the node swapped in (called at the swap: cheap, never blocks long)."""
        with self._lock:
            if self._closing.is_set():            # a description loaded after the close
                return
            version = self._latest[0] + 1
            self._latest = (version, robot)
            VERSION.pack_into(self._version, 0, version)
        self._wake.set()

    def settings(self):
        """Return what the child copies of the node: (use_sim_time, default and node levels)."""
        import rclpy.logging
        sim = self._node.get_parameter_or("use_sim_time").value
        return (bool(sim), int(rclpy.logging.get_logger_level("")),
                int(self._logger.get_effective_level()))

    def _on_parameters(self, changed):
        if any(p.name == "use_sim_time" for p in changed):
            self._wake.set()

    def problem(self):
        """Say why the planner services are not served now ("" when they are or first start)."""
        return self._trouble

    def close(self, wait=True):
        """
        Stop the child (and restarts): it leaves the graph; SIGKILL after CLOSE_TIMEOUT.

        ``wait`` False (the node's process is ending): the child is told and given
        :data:`EXIT_WAIT`, not waited for: it leaves by itself within its watchdog's
        ``GRACE`` + ``CLEAN_UP`` (``child.ParentWatch``), whatever it is doing.
        """
        with self._lock:
            self._closing.set()
            proc = self._proc
            if proc is not None and proc.poll() is None:
                if self._ready and self._socket is not None:
                    # EOF there (and a blocked send here returns): it destroys its node, exits
                    try:
                        self._socket.shutdown(socket.SHUT_RDWR)
                    except OSError:               # it has just gone
                        pass
                else:
                    proc.terminate()              # still importing: nothing in the graph yet
        self._wake.set()
        if proc is not None and proc.poll() is None:
            try:
                proc.wait(timeout=CLOSE_TIMEOUT if wait else EXIT_WAIT)
            except subprocess.TimeoutExpired:
                if not wait:
                    return                        # its watchdog ends it
                proc.kill()
                proc.wait()
        for thread in self._threads:
            thread.join(timeout=1.0)
        self._version.close()
        self._version_file.close()

    # -- the supervisor thread ----------------------------------------------------------------
    def _supervise(self):
        delay = None
        while not self._closing.is_set():
            started = time.monotonic()
            try:
                code = self._run_child()
            except (OSError, ValueError, subprocess.SubprocessError) as exc:
                code = f"could not start: {exc}"
            if code is None or self._closing.is_set():
                return
            ran = time.monotonic() - started
            delay = BACKOFF[0] if delay is None or ran > STABLE else min(2 * delay, BACKOFF[1])
            self.exits += 1
            why = _exit_text(code)
            self.state = self._trouble = (f"the planner process {why} after {ran:.1f} s; "
                                          f"restarting it in {delay:g} s")
            self._logger.error(f"{self.state} (trajectory services down meanwhile)")
            if self._closing.wait(delay):
                return

    def _run_child(self):
        """Start a child, serve its messages until it exits; its exit code (None: closing)."""
        parent_end, child_end = socket.socketpair()
        fds = (child_end.fileno(), self._version_file.fileno())
        with self._lock:
            if self._closing.is_set():
                parent_end.close()
                child_end.close()
                return None
            try:
                settings = self.settings()
                proc = subprocess.Popen(
                    self._command + ["--fd", str(fds[0]), "--version-fd", str(fds[1]),
                                     "--settings", ",".join(str(int(x)) for x in settings)],
                    pass_fds=fds, env=self._env, stdin=subprocess.DEVNULL,
                    start_new_session=True)
            except BaseException:
                parent_end.close()
                raise
            finally:
                child_end.close()
            # before the child starts a thread: every thread of it inherits the niceness
            try:
                os.setpriority(os.PRIO_PROCESS, proc.pid,
                               min(19, os.getpriority(os.PRIO_PROCESS, 0) + NICE))
            except OSError:
                pass
            conn = Connection(os.dup(parent_end.fileno()))
            self._conn, self._proc, self._socket = conn, proc, parent_end
            self._child_settings = (conn, settings)
            self._ready, self.pid = False, proc.pid
            self.state = f"starting (pid {proc.pid})"
        self._wake.set()                          # the newest robot, to this child
        try:
            self._serve(conn, proc)
        finally:
            with self._lock:
                self._conn, self._socket, self._ready, self.pid = None, None, False, None
                parent_end.close()
            with self._send_lock:
                conn.close()
        return proc.wait()

    def _serve(self, conn, proc):
        """Take the child's messages until its end of the socket closes."""
        while True:
            try:
                message = conn.recv()
            except (EOFError, OSError):
                return
            if message[0] == "ready":
                with self._lock:
                    self._ready = True
                self.state = f"serving (pid {proc.pid})"
                self._trouble = ""
                profile = self._env.get("FASTRTPS_DEFAULT_PROFILES_FILE")
                self._logger.info(f"the trajectory services are served by the planner "
                                  f"process, pid {proc.pid} (nice +{NICE}, {message[1]} numba "
                                  "threads" + (f", Fast DDS profile {profile}" if profile
                                               else "") + ")")
            elif message[0] == "error":
                _, where, text = message
                self._node.callback_failed(f"{where} (planner process)", PlannerError(text))
            elif message[0] == "refused":
                self._node.request_refused(message[1])

    # -- the sender thread ----------------------------------------------------------------------
    def _send_robots(self):
        """Send each child the newest robot, once, and the node's settings when they change."""
        sent = packed = None                      # (conn, version) sent; (version, bytes)
        while True:
            self._wake.wait(SETTINGS_POLL)
            self._wake.clear()
            if self._closing.is_set():
                return
            with self._lock:
                (version, robot), conn = self._latest, self._conn
                has = self._child_settings[1]
            if conn is None:
                continue
            try:
                settings = self.settings()
                if settings != has:
                    self._send(conn, pickle.dumps(("settings", settings)))
                    with self._lock:
                        if self._child_settings[0] is conn:
                            self._child_settings = (conn, settings)
                if robot is None or sent == (conn, version):
                    continue
                if packed is None or packed[0] != version:
                    packed = (version, pickle.dumps(("robot", version, PlannerRobot(robot)),
                                                    pickle.HIGHEST_PROTOCOL))
                self._send(conn, packed[1])
                sent = (conn, version)
            except OSError:                       # the child went: its successor gets it
                pass
            except Exception as exc:
                self._node.callback_failed("planner process robot", exc)

    def _send(self, conn, data):
        with self._send_lock:
            if conn.closed:
                raise OSError("the planner process's socket is closed")
            conn.send_bytes(data)                 # blocks while the child computes


def _exit_text(code):
    """Say how a child ended: its exit status or signal, or why it did not start."""
    if isinstance(code, str):
        return code
    if code < 0:
        try:
            return f"was killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"was killed by signal {-code}"
    return f"exited with status {code}"


def _child_environment():
    """
    Return the child's environment: the node's, with this rbd_ros first on PYTHONPATH.

    And the large-messages profile, unless the node's environment configures Fast DDS
    itself or runs another RMW.
    """
    root = os.path.dirname(package_folder())
    paths = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([root] + [p for p in paths
                                                                if p != root]))
    use_large_messages_profile(env)
    return env
