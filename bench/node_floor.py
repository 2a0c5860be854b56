"""
The dynamics node's messaging floor, for ``bench_node.py --floor``: a bare rclpy node.

It takes what the node takes and publishes what the node publishes, with nothing in between:
the node's executor (its ``executor`` parameter, :func:`rbd_ros.node.make_executor`),
joint_states and odometry subscribed serialized with the node's QoS, a publisher per output
as the node's (``OutputTopics``: depth 10, the node's name, so the same topics), each output
serialized as the node serializes it (its pre-serialized encoders, the contact wrench's at
``--contact-frame`` too), through the Fast DDS profile of the node's process
(``rbd_ros.node.fastdds_profile``), stamped with the input's stamp and filled with the input's
positions (copied, no dynamics). Once a second it publishes on /diagnostics how many
joint_states it answered, under the node's name, which bench_node waits on.

    python bench/node_floor.py --urdf PATH [--floating-base] --executor events \
        --outputs torques,accelerations,...,external_torques,contact_wrench \
        --contact-frame arm_right_7_link
"""
import argparse
import gc
import signal
import sys

import numpy as np

NODE_NAME = "rbd_dynamics"


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--urdf", required=True, help="the robot's URDF (message sizes only)")
    ap.add_argument("--floating-base", action="store_true")
    ap.add_argument("--executor", default="events")
    ap.add_argument("--outputs", required=True, help="comma-separated output names")
    ap.add_argument("--contact-frame", default="contact",
                    help="the contact wrench's frame_id (the node's contact_frame)")
    return ap.parse_args(argv)


class Floor:
    """The relay: joint_states in, the node's output messages out, values copied."""

    def __init__(self, node, model, outputs, contact_frame):
        from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
        from rbd_ros import outputs as table
        from rbd_ros.formats import cdr
        from rbd_ros.node import conversions
        self.decoder = cdr.JointStateDecoder()
        self.steps, self.values = [], {}
        known = {**table.BY_NAME, "external_torques": table.OBSERVER_BY_NAME["external_torques"],
                 "contact_wrench": table.CONTACT_WRENCH}
        for name in outputs:
            if name not in known:                # collision, effort_command: not relayed
                raise SystemExit(f"node_floor: no relay of the output {name!r}: of "
                                 f"{', '.join(known)}")
            o = known[name]
            publisher = node.create_publisher(conversions.message_class(o.msgtype), o.topic, 10)
            if name == "contact_wrench":         # as the node publishes it: bytes, its frame
                encoder, sizes = conversions.WrenchEncoder(contact_frame), (6,)
            else:
                encoder, sizes = conversions.output_encoder(o, model), table.array_sizes(o, model)
            arrays = tuple(self.values.setdefault(n, np.zeros(n)) for n in sizes)
            self.steps.append((publisher.publish, encoder.encode, arrays))
        self.answered = 0
        self.diagnostics = node.create_publisher(DiagnosticArray, "/diagnostics", 10)
        self.status = (DiagnosticArray, DiagnosticStatus, KeyValue)
        node.create_timer(1.0, self.publish_diagnostics)

    def on_joint_states(self, raw):
        decoded = self.decoder.decode(raw)
        if decoded is None:
            return
        _, stamp, position, _, _ = decoded
        n = len(position)
        for values in self.values.values():
            values[:n] = position[:len(values)]
        for send, encode, arrays in self.steps:
            send(encode(stamp, *arrays))
        self.answered += 1

    def publish_diagnostics(self):
        array_type, status_type, key_value = self.status
        status = status_type(name=f"{NODE_NAME}: floor", values=[
            key_value(key="published", value=str(self.answered)),
            key_value(key="joint_states", value=str(self.answered))])
        self.diagnostics.publish(array_type(status=[status]))


def main(argv=None):
    args = parse_args(argv)
    stop = []
    signal.signal(signal.SIGINT, lambda *_: stop.append(1))
    import rclpy
    from nav_msgs.msg import Odometry
    from rclpy.qos import qos_profile_sensor_data
    from rclpy.signals import SignalHandlerOptions
    from sensor_msgs.msg import JointState

    import rbd_ros
    from rbd_ros.node import make_executor
    from rbd_ros.node.dynamics_node import STATE_QOS

    from rbd_ros.node.fastdds_profile import use_large_messages_profile
    model = rbd_ros.load_model(args.urdf, floating_base=args.floating_base,
                               mimic="independent")
    use_large_messages_profile()             # the node's Fast DDS profile, as its process has
    rclpy.init(signal_handler_options=SignalHandlerOptions.NO)
    node = rclpy.create_node(NODE_NAME)
    floor = Floor(node, model, [n for n in args.outputs.split(",") if n], args.contact_frame)
    node.create_subscription(JointState, "joint_states", floor.on_joint_states, STATE_QOS,
                             raw=True)
    if args.floating_base:                   # taken, as the node takes it
        node.create_subscription(Odometry, "odom", lambda raw: None, qos_profile_sensor_data,
                                 raw=True)
    executor = make_executor(args.executor)
    executor.add_node(node)
    gc.freeze()                              # as the node does, once its robot is loaded
    try:
        while rclpy.ok() and not stop:
            executor.spin_once(timeout_sec=0.1)
    finally:
        node.destroy_node()
        if rclpy.ok():
            rclpy.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
