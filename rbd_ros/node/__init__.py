"""The ROS 2 node: thin glue between messages and the dynamics core (no maths here)."""

EXECUTORS = ("events", "single_threaded")


def check_executor(kind):
    """Return the ``executor`` parameter's value, or raise ValueError naming the choices."""
    if kind not in EXECUTORS:
        raise ValueError(f"executor must be one of {EXECUTORS}, got {kind!r}")
    return kind


def make_executor(kind, logger=None):
    """
    Return an rclpy executor of the given ``kind``.

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


def spin_node(factory, label, args=None):
    """
    Run one node until Ctrl-C or SIGTERM (both a clean stop, exit 0).

    A bad parameter or URDF (ValueError, OSError) is said plainly and exits 1. The console
    scripts' main(). The node's ``executor`` parameter, when it has one, picks the executor
    (default: events).
    """
    import sys

    import rclpy
    from rclpy.executors import ExternalShutdownException

    rclpy.init(args=args)
    node = None
    try:
        node = factory()
        kind = node.get_parameter("executor").value if node.has_parameter("executor") \
            else "events"
        executor = make_executor(kind, node.get_logger())
        executor.add_node(node)
        # spin_once in a loop, not spin(): while EventsExecutor.spin() runs (rclpy 7.1.6)
        # no other Python thread of the process runs, and the node loads robot
        # descriptions on a thread of its own
        while rclpy.ok():
            executor.spin_once(timeout_sec=0.1)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    except (ValueError, OSError, RuntimeError) as exc:
        print(f"rbd_ros {label}: {exc}", file=sys.stderr)
        raise SystemExit(1)
    finally:
        if node is not None:
            node.destroy_node()
        if rclpy.ok():
            rclpy.shutdown()
