"""
The planner services' process: ``~/trajectory_torques``, ``~/trajectory_forward`` and more.

Started by the dynamics node (``planner_process``, which documents the arrangement) as
``python -m rbd_ros.node.planner_child``, never by hand. It runs an rclpy context and node
of its own, answers with the handlers of ``trajectories`` on the newest robot the node sent
(``no robot model yet`` before the first), and reports its unexpected exceptions to the
node, which counts and logs them. Its node takes the node's ``use_sim_time`` and log levels
(``--settings`` at its start, then each change the node sends), and logs each answer at
debug level. It leaves (its node destroyed, so nothing lingers in the
graph) when the node closes the socket or its process ends, when the node's pid is no longer
its parent, or on SIGINT or SIGTERM.

Whatever its main thread is doing (importing, warming up the kernels of a large model,
computing a request): a watchdog thread (:class:`ParentWatch`) notices each of these within
:data:`WATCH_POLL` without reading the socket (a hang-up of its peer, ``POLLRDHUP``), tells
the main loop, and ends the process itself (``os._exit``) if the main thread has not left
within :data:`GRACE`.
"""
import argparse
import gc
import mmap
import os
import pickle
import select
import signal
import sys
import threading
import time
from multiprocessing.connection import Connection

from .planner_process import SERVICES, VERSION

CATCH_UP_TIMEOUT = 5.0     # s: the longest a request waits for the robot the node swapped in
IDLE_POLL = 0.05           # s: between checks of the socket and the parent while idle
WATCH_POLL = 0.1           # s: between the watchdog's checks of the parent and the socket
GRACE = 0.5                # s: the main thread's time to notice, once the parent is gone
CLEAN_UP = 1.0             # s: then its time to destroy its node (so it leaves the graph)


class ParentWatch:
    """
    A thread that notices the node is gone (or a stop signal) whatever the main thread does.

    ``gone`` is set when the parent's pid is no longer this process's parent, the socket's
    peer hung up (the node closed it, or its process ended) or ``stopped()`` returns true;
    the process then exits (status 0) unless the main thread says it is :meth:`leaving`
    within :data:`GRACE` and :meth:`done` within :data:`CLEAN_UP` more.
    """

    def __init__(self, parent, fd, stopped):
        self.gone = threading.Event()
        self._leaving = threading.Event()
        self._done = threading.Event()
        self._parent, self._stopped = parent, stopped
        self._poller = select.poll()
        self._poller.register(fd, getattr(select, "POLLRDHUP", 0) | select.POLLHUP)
        threading.Thread(target=self._run, daemon=True, name="rbd_parent_watch").start()

    def leaving(self):
        """Say that the main thread is out of its loop, cleaning up."""
        self._leaving.set()

    def done(self):
        """Say that the main thread has cleaned up: the watchdog leaves the exit to it."""
        self._leaving.set()
        self._done.set()

    def _leave(self):
        return (os.getppid() != self._parent or self._stopped()
                or bool(self._poller.poll(1000 * WATCH_POLL)))

    def _run(self):
        while not self._done.is_set():
            if self._leave():
                break
        else:
            return
        self.gone.set()
        if not (self._leaving.wait(GRACE) and self._done.wait(CLEAN_UP)):
            os._exit(0)                       # the main thread is busy: leave without it


def parse_args(argv):
    """Return the command line's arguments (``planner_process`` writes it)."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    for name in ("name", "namespace") + SERVICES:
        ap.add_argument(f"--{name}", required=True)
    for name in ("domain", "parent", "fd", "version-fd"):
        ap.add_argument(f"--{name}", type=int, required=True)
    ap.add_argument("--settings", required=True, type=lambda text: tuple(
        int(x) for x in text.split(",")), help="use_sim_time,default level,node level")
    return ap.parse_args(argv)


def main(argv=None):
    """Serve the planner services until told to stop; the exit status."""
    stop = []
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda signum, frame: stop.append(signum))
    args = parse_args(sys.argv[1:] if argv is None else argv)
    watch = ParentWatch(args.parent, args.fd, lambda: bool(stop))
    try:
        return _serve(args, watch, stop)
    finally:
        watch.done()


def _serve(args, watch, stop):
    """Import, start the node and serve until the node or a signal says stop."""
    conn = Connection(args.fd)
    shared = mmap.mmap(args.version_fd, VERSION.size, access=mmap.ACCESS_READ)

    import numba
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.signals import SignalHandlerOptions
    threads = max(1, min(numba.config.NUMBA_NUM_THREADS, (os.cpu_count() or 1) - 1))
    numba.set_num_threads(threads)           # the ticks keep a core
    rclpy.init(args=[], domain_id=args.domain,
               signal_handler_options=SignalHandlerOptions.NO)
    node = None
    try:
        node = _planner_node(args, conn, shared, watch.gone)
        executor = SingleThreadedExecutor()
        executor.add_node(node)
        conn.send(("ready", threads))
        while not stop and not node.parent_gone and rclpy.ok():
            executor.spin_once(timeout_sec=IDLE_POLL)
            node.take_robots()
    except (EOFError, OSError):               # the node went while this one started
        pass
    finally:
        watch.leaving()
        if node is not None:
            node.destroy_node()
        if rclpy.ok():
            rclpy.shutdown()
    return 0


def _planner_node(args, conn, shared, gone):
    """Return the child's node, its services created (rclpy imported late: signals first)."""
    import rclpy.logging
    from rclpy.node import Node
    from rclpy.parameter import Parameter

    from rbd_ros_interfaces import srv as rbd_srv
    from .reporting import one_line
    from .services import _guarded
    from .retime_service import retime_trajectory
    from .trajectories import trajectory_forward, trajectory_torques

    class PlannerNode(Node):
        """The services; ``_robot``: the newest robot received (a ``PlannerRobot``)."""

        def __init__(self):
            super().__init__(args.name, namespace=args.namespace, parameter_overrides=[
                Parameter("use_sim_time", value=bool(args.settings[0]))])
            self.take_settings(args.settings)
            self._robot = None
            self._version = 0
            for name, srv_type, handler in (
                    ("trajectory_torques", rbd_srv.TrajectoryTorques, trajectory_torques),
                    ("trajectory_forward", rbd_srv.TrajectoryForward, trajectory_forward),
                    ("retime_trajectory", rbd_srv.RetimeTrajectory, retime_trajectory)):
                self.create_service(srv_type, getattr(args, name),
                                    self._current(name, _guarded(self, name, handler)))

        @property
        def parent_gone(self):
            """Whether the node is gone (or a signal came): ``ParentWatch.gone``."""
            return gone.is_set()

        def callback_failed(self, where, exc):
            """Report an unexpected exception to the node (which counts and logs it)."""
            try:
                conn.send(("error", where, one_line(f"{type(exc).__name__}: {exc}", 300)))
            except OSError:
                pass

        def _current(self, name, callback):
            def serve(req, resp):
                try:
                    current = self.catch_up()
                except Exception as exc:      # a robot that does not unpickle: the node's bug
                    self.callback_failed("planner robot", exc)
                    current = False
                if not current:
                    resp.success = False
                    resp.message = ("the planner process has not received the node's current "
                                    "robot model yet: try again")
                    return resp
                started = time.perf_counter()
                resp = callback(req, resp)
                self.get_logger().debug(
                    f"{name}: {len(req.trajectory.points)} points answered in "
                    f"{1e3 * (time.perf_counter() - started):.2f} ms (success {resp.success})")
                return resp
            return serve

        def take_settings(self, settings):
            """Take the node's ``use_sim_time`` and log levels (default, the node's logger)."""
            use_sim_time, default_level, level = settings
            rclpy.logging.set_logger_level("", default_level)
            self.get_logger().set_level(level)
            if self.get_parameter("use_sim_time").value != bool(use_sim_time):
                self.set_parameters([Parameter("use_sim_time", value=bool(use_sim_time))])

        def catch_up(self):
            """Take robots until the node's current one; whether it came in time."""
            wanted = VERSION.unpack_from(shared, 0)[0]
            deadline = time.monotonic() + CATCH_UP_TIMEOUT
            while self._version < wanted and not self.parent_gone:
                self.take_robots(max(0.0, deadline - time.monotonic()))
                if time.monotonic() >= deadline:
                    break
            return self._version >= wanted

        def take_robots(self, timeout=0.0):
            """Take the robots and settings sent (waiting up to ``timeout`` s for the first)."""
            try:
                while conn.poll(timeout):
                    message = pickle.loads(conn.recv_bytes())
                    timeout = 0.0
                    if message[0] == "settings":
                        self.take_settings(message[1])
                        continue
                    _, version, robot = message
                    if version > self._version:
                        if self._robot is None:
                            _warm_up(robot.model)
                            # as the node (its _set_robot): the imports' ~130,000 objects
                            # out of the collector's reach; a full collection, which each
                            # 1,000-point request's objects bring about, scanned them all
                            gc.freeze()
                        self._robot, self._version = robot, version
            except (EOFError, OSError):
                gone.set()

    return PlannerNode()


def _warm_up(model):
    """
    Load the services' kernels (from numba's cache) before the first request needs them.

    Only a head start: a failure here is the request's to report, if it fails again there.
    """
    import numpy as np

    import rbd_ros
    from rbd_ros.batch import rollout
    q = model.neutral()[None, :]
    z = np.zeros((1, model.nv))
    data = rbd_ros.Data(model)
    try:
        rbd_ros.rnea_batch(model, q, z, z, data=data)
        rbd_ros.rnea_derivatives_batch(model, q, z, z, data=data)
        rbd_ros.aba_batch(model, q, z, z, data=data)
        rbd_ros.aba_derivatives_batch(model, q, z, z, data=data)
        rollout.rollout(model, q[0], z[0], z, 0.001, rollout.EULER, True, data=data)
    except ValueError:
        pass
    try:                   # toppra's import (matplotlib's pyplot with it): a second or more
        from rbd_ros.retiming import toppra_problem as retiming_toppra  # noqa: F401
    except ImportError:    # the request will say so
        pass


if __name__ == "__main__":
    sys.exit(main())
