"""The ROS 2 node: thin glue between messages and the dynamics core (no maths here)."""

import contextlib
import os
import threading
import time

EXECUTORS = ("events", "single_threaded")


COMPILE_NOTICE_S = 3.0    # loading kernels from the cache takes well under that: compiling


def kernels_report(started):
    """
    Say how the kernels used since ``started`` (time.time()) were loaded: compiled or cached.

    Compiled when kernels were written to the cache (numba writes each one as it compiles it).
    """
    from .._jit import version_cache_dir
    seconds = time.time() - started
    written = 0
    for folder, _, files in os.walk(version_cache_dir()):
        for name in files:
            try:
                written += os.path.getmtime(os.path.join(folder, name)) >= started
            except OSError:       # another process replacing it
                pass
    if written:
        return (f"compiled the dynamics kernels in {seconds:.1f} s ({written} cache files "
                f"written to {version_cache_dir()}: later starts load them; `rbd_warm_cache` "
                "compiles them all ahead)")
    return f"dynamics kernels loaded from the cache in {seconds:.1f} s"


@contextlib.contextmanager
def compile_notice(log, what, report=False):
    """
    Log that the kernels compile when the block runs longer than ``COMPILE_NOTICE_S``.

    Kernels compile at their first call (``rbd_ros._jit``): after an install or an update,
    the first robot description's warm-up compiles for a minute or more, and a silent node
    looks hung. Says when it began, and how it ended (always, with ``report``).
    """
    started, done = time.time(), threading.Event()

    def notice():
        if not done.wait(COMPILE_NOTICE_S):
            log.info(f"compiling the dynamics kernels {what} (the first start after an "
                     "install or an update of rbd_ros; later starts load them in a second)")
    threading.Thread(target=notice, daemon=True).start()
    try:
        yield
    finally:
        done.set()
    if report or time.time() - started >= COMPILE_NOTICE_S:
        log.info(kernels_report(started))


def check_executor(kind):
    """Return the ``executor`` parameter's value ``kind``; ValueError naming the choices."""
    if kind not in EXECUTORS:
        raise ValueError(f"executor must be one of {EXECUTORS}, got {kind!r}")
    return kind


def make_executor(kind, logger=None):
    """
    Return an rclpy executor of the ``kind`` of the ``executor`` parameter.

    ``"events"`` is rclpy's EventsExecutor (``rclpy.experimental``, C++),
    ``"single_threaded"`` the default one. At 1 kHz of joint_states the default executor's
    Python bookkeeping (a wait set rebuilt per message) takes more CPU than the dynamics;
    an rclpy without EventsExecutor gets the default one.
    """
    from rclpy.executors import SingleThreadedExecutor
    if check_executor(kind) == "events":
        try:
            from rclpy.experimental import EventsExecutor
        except ImportError:
            if logger is not None:
                logger.warning("rclpy.experimental.EventsExecutor is not available in this "
                               "rclpy: using the single-threaded executor")
        else:
            return EventsExecutor()
    return SingleThreadedExecutor()


FAST_DDS_MAX_DOMAIN_ID = 232   # its default ports, 7400 + 250 × domain + offsets, pass 65535 above


def domain_id_problem(environ):
    """
    Return why ``ROS_DOMAIN_ID`` cannot work with Fast DDS's default ports, or None.

    Fast DDS alone says "Calculated port number is too high" and never names the variable;
    another middleware (``RMW_IMPLEMENTATION``) or a value rcl refuses itself is left be.
    """
    rmw = environ.get("RMW_IMPLEMENTATION", "").strip()
    value = environ.get("ROS_DOMAIN_ID", "").strip()
    if (rmw and not rmw.startswith("rmw_fastrtps")) or not value.isdigit():
        return None
    if int(value) <= FAST_DDS_MAX_DOMAIN_ID:
        return None
    return (f"ROS_DOMAIN_ID={value} is above {FAST_DDS_MAX_DOMAIN_ID}, the highest domain "
            f"Fast DDS's default ports allow (7400 + 250 x domain must stay below 65536): "
            f"choose 0-101 or 215-232, e.g. export ROS_DOMAIN_ID=42")


def spin_node(factory, label, args=None, stop=None):
    """
    Run one node until Ctrl-C or SIGTERM: the console scripts' main().

    Ctrl-C (SIGINT) and SIGTERM are a clean stop (exit 0, no traceback) at any time, start-up
    included; a bad parameter or URDF (ValueError, OSError, rclpy's ParameterException) is
    said plainly and exits 1.
    ``stop``: the list the process's signal handler records signals in, when
    ``rbd_ros_entry`` installed it before the package was imported; otherwise one is
    installed here. The node's ``executor`` parameter, when it has one, picks the executor
    (default: events).
    Once the executor spins, a signal is only recorded (the loop polls it), and once the
    node is closed the process ignores further ones: it is on its way out.
    """
    import sys

    import rbd_ros_entry
    if stop is None:
        stop = rbd_ros_entry.stop_on_signals()
    node, shutdown, refused = None, KeyboardInterrupt, (ValueError, OSError, RuntimeError)
    try:
        import rclpy
        from rclpy.executors import ExternalShutdownException as shutdown
        from rclpy.exceptions import ParameterException   # a value out of range, a type
        refused += (ParameterException,)
        if domain_id_problem(os.environ):
            raise ValueError(domain_id_problem(os.environ))
        # an 8 MB shared-memory segment, not 512 kB: a slow local subscriber must not make
        # a publish wait, and the node with it (fastdds_profile)
        from .fastdds_profile import use_large_messages_profile
        use_large_messages_profile()
        rclpy.init(args=args)
        node = factory()
        kind = node.get_parameter("executor").value if node.has_parameter("executor") \
            else "events"
        executor = make_executor(kind, node.get_logger())
        executor.add_node(node)
        # spin_once in a loop, not spin(): while EventsExecutor.spin() runs (rclpy 7.1.6)
        # no other Python thread of the process runs, and the node loads robot
        # descriptions on a thread of its own. From here a signal is only recorded in
        # ``stop`` (rbd_ros_entry.spinning): raised in a callback, it would abort.
        rbd_ros_entry.spinning()
        while rclpy.ok() and not stop:
            executor.spin_once(timeout_sec=0.1)
    except KeyboardInterrupt:
        pass
    except Exception as exc:
        # a stop during start-up can make what it interrupted fail (the context it shut
        # down, a half-loaded kernel): that is the stop, not an error
        if not stop and not isinstance(exc, shutdown):
            if not isinstance(exc, refused):
                raise
            from .reporting import one_line
            print(one_line(f"rbd_ros {label}: {exc}", 2000), file=sys.stderr)
            raise SystemExit(1)
    finally:
        _close(node)
        rbd_ros_entry.ignore_stop_signals()      # stopping: a later signal must not kill it


def _close(node):
    """Destroy ``node`` and shut rclpy down, quietly when a signal interrupts it."""
    try:
        import rclpy
        if node is not None:
            node.process_ending = True            # what it started may end on its own
            node.destroy_node()
        if rclpy.ok():
            rclpy.shutdown()
    except (KeyboardInterrupt, Exception):    # stopping anyway: nothing left to report
        pass
