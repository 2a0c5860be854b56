"""The ROS 2 node: thin glue between messages and the dynamics core (no maths here)."""

EXECUTORS = ("events", "single_threaded")


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


def spin_node(factory, label, args=None, stop=None):
    """
    Run one node until Ctrl-C or SIGTERM: the console scripts' main().

    Ctrl-C (SIGINT) and SIGTERM are a clean stop (exit 0, no traceback) at any time, start-up
    included; a bad parameter or URDF (ValueError, OSError) is said plainly and exits 1.
    ``stop``: the list the process's signal handler records signals in, when
    ``rbd_ros_entry`` installed it before the package was imported; otherwise one is
    installed here. The node's ``executor`` parameter, when it has one, picks the executor
    (default: events).
    """
    import sys

    import rbd_ros_entry
    if stop is None:
        stop = rbd_ros_entry.stop_on_signals()
    node, shutdown = None, KeyboardInterrupt
    try:
        import rclpy
        from rclpy.executors import ExternalShutdownException as shutdown
        rclpy.init(args=args)
        node = factory()
        kind = node.get_parameter("executor").value if node.has_parameter("executor") \
            else "events"
        executor = make_executor(kind, node.get_logger())
        executor.add_node(node)
        # spin_once in a loop, not spin(): while EventsExecutor.spin() runs (rclpy 7.1.6)
        # no other Python thread of the process runs, and the node loads robot
        # descriptions on a thread of its own
        while rclpy.ok() and not stop:
            executor.spin_once(timeout_sec=0.1)
    except KeyboardInterrupt:
        pass
    except Exception as exc:
        # a stop during start-up can make what it interrupted fail (the context it shut
        # down, a half-loaded kernel): that is the stop, not an error
        if not stop and not isinstance(exc, shutdown):
            if not isinstance(exc, (ValueError, OSError, RuntimeError)):
                raise
            from .reporting import one_line
            print(one_line(f"rbd_ros {label}: {exc}", 2000), file=sys.stderr)
            raise SystemExit(1)
    finally:
        _close(node)


def _close(node):
    """Destroy ``node`` and shut rclpy down, quietly when a signal interrupts it."""
    try:
        import rclpy
        if node is not None:
            node.destroy_node()
        if rclpy.ok():
            rclpy.shutdown()
    except (KeyboardInterrupt, Exception):    # stopping anyway: nothing left to report
        pass
