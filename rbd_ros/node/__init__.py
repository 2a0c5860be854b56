"""The ROS 2 node: thin glue between messages and the dynamics core (no maths here)."""


def spin_node(factory, label, args=None):
    """Run one node until Ctrl-C or SIGTERM (both a clean stop, exit 0); a bad parameter or
    URDF (ValueError, OSError) is said plainly and exits 1. The console scripts' main()."""
    import sys

    import rclpy
    from rclpy.executors import ExternalShutdownException

    rclpy.init(args=args)
    node = None
    try:
        node = factory()
        rclpy.spin(node)
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
