"""
The planner services' process: ``~/trajectory_torques``, ``~/trajectory_forward`` and more.

Started by the dynamics node (``process``, which documents the arrangement) as
``python -m rbd_ros.node.planner.child``, never by hand. It runs an rclpy context and node
of its own (``child_node``), answers with the handlers of ``trajectories`` on the newest
robot the node sent (``no robot model yet`` before the first), and reports its unexpected
exceptions to the node, which counts and logs them. Its node takes the node's
``use_sim_time`` and log levels (``--settings`` at its start, then each change the node
sends), and logs each answer at debug level. It leaves (its node destroyed, so nothing
lingers in the graph) when the node closes the socket or its process ends, when the node's
pid is no longer its parent, or on SIGINT or SIGTERM.

Whatever its main thread is doing (importing, warming up the kernels of a large model,
computing a request, waiting in its executor): a watchdog thread (:class:`ParentWatch`)
notices each of these within :data:`WATCH_POLL` without reading the socket (a hang-up of its
peer, ``POLLRDHUP``; a stop signal by the byte the interpreter writes for it,
``signal.set_wakeup_fd``), tells the main loop, and ends the process itself (``os._exit``)
if the main thread has not left within :data:`GRACE`. While idle the main loop sleeps in its
executor (up to :data:`IDLE_POLL`) until a request, or until the watchdog wakes it (an rclpy
guard condition): for a robot or settings the node sent (the socket readable: one wake until
the loop has read it) or to leave, not spinning to read the socket (doc/benchmarks.md: what
that cost an idle process).
"""
import argparse
import mmap
import os
import select
import signal
import sys
import threading
from multiprocessing.connection import Connection

from .process import SERVICES, VERSION

# s: the longest idle sleep (the watchdog wakes it before for the socket or to leave); a
# stop signal's Python handler runs when the main thread is out of the executor's wait
IDLE_POLL = 0.5
WATCH_POLL = 0.1           # s: between the watchdog's checks of the parent and the socket
GRACE = 0.5                # s: the main thread's time to notice, once the parent is gone
CLEAN_UP = 1.0             # s: then its time to destroy its node (so it leaves the graph)
HANG_UP = getattr(select, "POLLRDHUP", 0) | select.POLLHUP    # the socket's peer is gone


class ParentWatch:
    """
    A thread that notices the node is gone (or a stop signal) whatever the main thread does.

    ``gone`` is set when the parent's pid is no longer this process's parent, the socket's
    peer hung up (the node closed it, or its process ended), a stop signal came (a byte on
    ``signal_fd``, the interpreter's wakeup fd) or ``stopped()`` returns true; the process
    then exits (status 0) unless the main thread says it is :meth:`leaving` within
    :data:`GRACE` and :meth:`done` within :data:`CLEAN_UP` more. It wakes the main loop
    (``wake``, given by :meth:`wake_with`) when the socket becomes readable, once until the
    loop says it has read it (:meth:`taken`), and when ``gone`` is set.
    """

    def __init__(self, parent, fd, stopped, signal_fd=None):
        self.gone = threading.Event()
        self._leaving = threading.Event()
        self._done = threading.Event()
        self._taken = threading.Event()       # the main loop read the socket since its wake
        self._wake = None                     # what wakes the main loop (a guard condition)
        self._wake_failed = False
        self._lock = threading.Lock()
        self._parent, self._stopped = parent, stopped
        self._fd, self._signal_fd, self._pending = fd, signal_fd, False
        self._poller = select.poll()
        self._poller.register(fd, HANG_UP | select.POLLIN)
        if signal_fd is not None:
            self._poller.register(signal_fd, select.POLLIN)
        threading.Thread(target=self._run, daemon=True, name="rbd_parent_watch").start()

    def wake_with(self, wake):
        """Call ``wake()`` (thread-safe) to wake the main loop: for the socket, or to leave."""
        with self._lock:
            self._wake = wake
        self._wake_main()                     # what came before it is read now

    def taken(self):
        """Say that the main loop has read the socket: the watchdog may wake it again."""
        self._taken.set()

    def leaving(self):
        """Say that the main thread is out of its loop, cleaning up."""
        self._leaving.set()

    def done(self):
        """Say that the main thread has cleaned up: the watchdog leaves the exit to it."""
        self._leaving.set()
        self._done.set()

    def _wake_main(self):
        with self._lock:
            wake = self._wake
        if wake is None:
            return
        try:
            wake()
        except Exception as exc:              # the watchdog must live on
            if not (self.gone.is_set() or self._leaving.is_set() or self._wake_failed):
                # not the node destroyed as it leaves: the loop reads every IDLE_POLL
                self._wake_failed = True
                print(f"rbd_ros planner process: cannot wake its main loop ({exc!r}); it "
                      f"reads the node's socket every {IDLE_POLL:g} s", file=sys.stderr)

    def _leave(self):
        """Whether to leave; wakes the main loop for a readable socket first."""
        if self._pending and self._taken.is_set():      # read: watch for the next robot
            self._pending = False
            self._poller.modify(self._fd, HANG_UP | select.POLLIN)
        if os.getppid() != self._parent or self._stopped():
            return True
        events = dict(self._poller.poll(1000 * WATCH_POLL))
        if self._signal_fd in events:                 # a stop signal: its handler runs when
            return True                               # the main thread is out of its wait
        socket_events = events.get(self._fd, 0)
        if socket_events & (HANG_UP | select.POLLERR | select.POLLNVAL):
            return True
        if socket_events & select.POLLIN:             # a robot or settings to take
            self._pending = True                      # until read: the hang-up only
            self._poller.modify(self._fd, HANG_UP)
            self._taken.clear()
            self._wake_main()
        return False

    def _run(self):
        while not self._done.is_set():
            if self._leave():
                break
        else:
            return
        self.gone.set()
        self._wake_main()
        if not (self._leaving.wait(GRACE) and self._done.wait(CLEAN_UP)):
            os._exit(0)                       # the main thread is busy: leave without it


def signal_pipe():
    """
    Return the read end of a pipe the interpreter writes a byte to at each stop signal.

    ``signal.set_wakeup_fd``: the byte is written by the C-level handler at once, while the
    Python handler waits for the main thread to leave the executor's wait.
    """
    read, write = os.pipe()
    os.set_blocking(read, False)
    os.set_blocking(write, False)
    signal.set_wakeup_fd(write, warn_on_full_buffer=False)
    return read


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
    watch = ParentWatch(args.parent, args.fd, lambda: bool(stop), signal_pipe())
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
        from .child_node import PlannerNode      # rclpy imported late: signals first
        node = PlannerNode(args, conn, shared, watch.gone)
        executor = SingleThreadedExecutor()
        executor.add_node(node)
        watch.wake_with(node.create_guard_condition(lambda: None).trigger)
        conn.send(("ready", threads))
        while not stop and not node.parent_gone and rclpy.ok():
            executor.spin_once(timeout_sec=IDLE_POLL)
            node.take_robots()
            watch.taken()
    except (EOFError, OSError):               # the node went while this one started
        pass
    finally:
        watch.leaving()
        if node is not None:
            node.destroy_node()
        if rclpy.ok():
            rclpy.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
