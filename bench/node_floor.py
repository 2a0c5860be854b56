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

With ``--core`` (``bench_node --floor-core``; a fixed base) it also makes, per message, the
core calls a tick of the node makes for these outputs, through the core's public API and
none of the node's glue: the dynamics (``rbd_ros.outputs.compute`` into a result buffer, the
call the node picks) at the message's positions, velocities and efforts, and with the
observer's outputs the momentum observer's step at its stamp (``MomentumObserver``, bound as
the node binds it) and the collision check (``ObserverOutcomes``), at the node's default
gain and threshold. Its messages still carry the copied positions. The node against it is
what the node's own per-message work costs over the core's; it against the floor, what the
core's calls cost in the node's setting.

With ``--pinocchio`` (``bench_node --floor-pinocchio``; a fixed base) it makes Pinocchio's
calls for the same outputs instead (:class:`PinocchioCalls`): what the dynamics would cost
in the node's setting, between two waits for a message, computed by the reference library.

    python bench/node_floor.py --urdf PATH [--floating-base] --executor events \
        --outputs torques,accelerations,...,external_torques,contact_wrench \
        --contact-frame arm_right_7_link [--core | --pinocchio]
"""
import argparse
import gc
import signal
import sys

import numpy as np

from node_trees import NODE_NAME


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--urdf", required=True, help="the robot's URDF (message sizes only)")
    ap.add_argument("--floating-base", action="store_true")
    ap.add_argument("--executor", default="events")
    ap.add_argument("--outputs", required=True, help="comma-separated output names")
    ap.add_argument("--contact-frame", default="contact",
                    help="the contact wrench's frame_id (the node's contact_frame)")
    calls = ap.add_mutually_exclusive_group()
    calls.add_argument("--core", action="store_true",
                       help="also make the node's core calls per message (a fixed base)")
    calls.add_argument("--pinocchio", action="store_true",
                       help="also make Pinocchio's calls for the same outputs (a fixed base)")
    args = ap.parse_args(argv)
    for flag in ("core", "pinocchio"):
        if getattr(args, flag) and args.floating_base:
            ap.error(f"--{flag} relays a fixed-base robot only (its state is the message's "
                     "arrays)")
    return args


class CoreCalls:
    """
    The core calls of the node's tick for ``outputs`` at ``model``, without the node's glue.

    ``run(stamp, position, velocity, effort)`` makes them at one message's state (arrays in
    the model's joint order, as bench_node publishes them); ``contact_frame``: the observer's
    link, used when an observer output is among ``outputs``.
    """

    def __init__(self, model, outputs, contact_frame):
        from rbd_ros import outputs as table
        from rbd_ros.contact import observer_rule, observer_tick
        nv = model.nv
        if model.nq != nv or len(model.joint_names) != nv:
            raise SystemExit("node_floor --core: a model whose joints each have one position "
                             "and one velocity only (a message's arrays are its state)")
        self.model = model
        self.q, self.v, self.tau, self.a = (np.zeros(nv) for _ in range(4))
        call = table.computation(set(outputs), True).call
        buffer = table.result_buffer(call, model)
        if buffer is not None:                # as the node's Robot: its arrays read in place
            buffer.bind(self.q, self.v, self.a, self.tau)
        self.compute = (table.compute, call, buffer)
        self.observer = self.outcomes = None
        if any(name in table.OBSERVER_BY_NAME or name == "contact_wrench" for name in outputs):
            frame = contact_frame if "contact_wrench" in outputs else ""
            settings = observer_rule.ObserverSettings(
                table.DEFAULT_OBSERVER_GAIN, table.DEFAULT_COLLISION_THRESHOLD, frame,
                table.DEFAULT_MAX_JOINT_AGE)
            self.observer = observer_rule.new_observer(model, None, settings)
            self.observer.bind(self.q, self.v, self.tau)
            self.observer_tick = observer_tick.step
            self.outcomes = observer_rule.ObserverOutcomes(model,
                                                           table.DEFAULT_COLLISION_THRESHOLD)
        self.run((1, 0), model.neutral(), self.a, self.a)     # load the kernels now, as the
        if self.observer is not None:                        # node does before its first tick
            self.observer.reset()

    def run(self, stamp, position, velocity, effort):
        """Make the calls at one message's state, stamped ``stamp`` (sec, nanosec)."""
        self.set_state(position, velocity, effort)
        self.dynamics()
        if self.observer is not None:
            self.observer_step(stamp)

    def set_state(self, position, velocity, effort):
        """Copy one message's state into the arrays the calls read (the observer's bound)."""
        self.q[:], self.v[:], self.tau[:] = position, velocity, effort

    def dynamics(self):
        """Compute the outputs' dynamics at the state set (into the buffer)."""
        compute, call, buffer = self.compute
        compute(call, self.model, self.q, self.v, self.a, self.tau, None, buffer)

    def observer_step(self, stamp):
        """Step the observer at that state, stamped ``stamp``; check for a collision."""
        observer = self.observer                 # as the node's ContactMonitor.step
        self.observer_tick(observer, observer.seconds(*stamp), self.outcomes)


class PinocchioCalls:
    """
    Pinocchio's calls for the same outputs, where :class:`CoreCalls` makes the core's.

    What a node on Pinocchio's Python bindings would compute per message, by the cheapest
    route the bindings offer (each result in a ``Data``): q̈, M⁻¹ and ∂q̈ from
    ``computeABADerivatives`` when ∂q̈ is asked (else ``aba`` and ``computeMinverse``); ∂τ,
    and τ at a = 0 with them, from ``computeRNEADerivatives`` (``rnea`` alone when ∂τ is not
    asked). With an observer output, the momentum observer's terms from that same RNEA
    derivatives pass (computed for them when ∂τ is not asked): p = M v, Cᵀ v = ½ (∂τ/∂v)ᵀ v
    and g = τ − ½ (∂τ/∂v) v (C the Christoffel one, so Ṁ = C + Cᵀ); then, in numpy, r = K (p −
    p₀ − ∫ (u + r)) (∫u by the trapezoid rule, ∫r by the rectangle rule; a restart after
    ``DEFAULT_MAX_JOINT_AGE``, as the core's), the collision check and the contact wrench
    (``getFrameJacobian`` LOCAL on the pass's placements, then ``numpy.linalg.lstsq``). ``run``
    takes what :meth:`CoreCalls.run` takes; ``step_names``: the calls ``run`` makes, in order.
    """

    def __init__(self, urdf_path, model, outputs, contact_frame):
        import pinocchio as pin
        from rbd_ros import outputs as table
        from rbd_ros.algorithms.contact_wrench import RCOND
        self.pin, self.rcond = pin, RCOND
        self.pm = pin.buildModelFromUrdf(urdf_path)
        # the observer's own RNEA derivatives (when ∂τ is not an output) in a Data of theirs
        self.pd, self.observer_data = self.pm.createData(), self.pm.createData()
        names = list(model.joint_names)
        if self.pm.nq != self.pm.nv or self.pm.nv != len(names):
            raise SystemExit("node_floor --pinocchio: a model whose joints each have one "
                             "position and one velocity only")
        order = np.array([self.pm.joints[self.pm.getJointId(n)].idx_q for n in names])
        self.order = None if np.array_equal(order, np.arange(len(names))) else order
        nv = self.pm.nv
        self.q, self.v, self.tau, self.zero = (np.zeros(nv) for _ in range(4))
        wanted = set(outputs)
        self.observer = None
        if wanted & {"external_torques", "contact_wrench"}:
            frame = None
            if "contact_wrench" in wanted:
                if not self.pm.existFrame(contact_frame, pin.BODY):
                    raise SystemExit(f"node_floor --pinocchio: no link {contact_frame!r}")
                frame = self.pm.getFrameId(contact_frame, pin.BODY)
            self.observer = {"gain": table.DEFAULT_OBSERVER_GAIN, "frame": frame,
                             "threshold": table.DEFAULT_COLLISION_THRESHOLD,
                             "max_gap": table.DEFAULT_MAX_JOINT_AGE, "origin": None,
                             "t": None, "p0": np.zeros(nv), "integral": np.zeros(nv),
                             "u": np.zeros(nv), "r": np.zeros(nv), "wrench": np.zeros(6),
                             "collision": False}
        self.derivatives = "rnea_derivatives" in wanted
        self.steps = self.dynamics_steps(wanted)
        self.step_names = [name for name, _ in self.steps]
        self.run((1, 0), model.neutral(), self.zero, self.zero)
        if self.observer is not None:
            self.observer["t"] = self.observer["origin"] = None    # the warm-up forgotten

    def dynamics_steps(self, wanted):
        """Return [(name, call of no argument)]: the calls the dynamics outputs ``wanted`` need."""
        pin, pm, pd, q, v, tau, zero = (self.pin, self.pm, self.pd, self.q, self.v,
                                        self.tau, self.zero)
        steps = []
        if "aba_derivatives" in wanted:
            steps.append(("computeABADerivatives",
                          lambda: pin.computeABADerivatives(pm, pd, q, v, tau)))
        else:
            if "accelerations" in wanted:
                steps.append(("aba", lambda: pin.aba(pm, pd, q, v, tau)))
            if "inverse_inertia" in wanted:
                steps.append(("computeMinverse", lambda: pin.computeMinverse(pm, pd, q)))
        if self.derivatives:                 # last: its τ (a = 0) is the one sent
            steps.append(("computeRNEADerivatives",
                          lambda: pin.computeRNEADerivatives(pm, pd, q, v, zero)))
        elif "torques" in wanted:
            steps.append(("rnea", lambda: pin.rnea(pm, pd, q, v, zero)))
        if self.observer is not None and not self.derivatives:
            od = self.observer_data
            steps.append(("computeRNEADerivatives (observer)",
                          lambda: pin.computeRNEADerivatives(pm, od, q, v, zero)))
        return steps

    def run(self, stamp, position, velocity, effort):
        """Make the calls at one message's state, stamped ``stamp`` (sec, nanosec)."""
        if self.order is None:
            self.q[:], self.v[:], self.tau[:] = position, velocity, effort
        else:
            order = self.order
            self.q[order], self.v[order], self.tau[order] = position, velocity, effort
        for _, step in self.steps:
            step()
        if self.observer is not None:
            self.observe(stamp[0] * 1_000_000_000 + stamp[1])

    def observe(self, stamp_ns):
        """Step the observer to the state in ``q``, ``v``, ``tau`` stamped ``stamp_ns``."""
        o, v = self.observer, self.v
        data = self.pd if self.derivatives else self.observer_data
        if o["origin"] is None:
            o["origin"] = stamp_ns
        t = (stamp_ns - o["origin"]) * 1e-9           # exact to 1 ns: relative to the first
        half_dv = 0.5 * data.dtau_dv
        p = data.M @ v
        u = self.tau + half_dv.T @ v - (data.tau - half_dv @ v)
        if o["t"] is None or not 0.0 < t - o["t"] <= o["max_gap"]:
            o["p0"][:], o["integral"][:], o["r"][:] = p, 0.0, 0.0
        else:
            h = t - o["t"]
            o["integral"] += 0.5 * h * (u + o["u"]) + h * o["r"]
            o["r"][:] = o["gain"] * (p - o["p0"] - o["integral"])
        o["t"] = t
        o["u"][:] = u
        o["collision"] = bool((np.abs(o["r"]) > o["threshold"]).any())
        if o["frame"] is not None:
            J = self.pin.getFrameJacobian(self.pm, data, o["frame"], self.pin.LOCAL)
            o["wrench"][:] = np.linalg.lstsq(J.T, o["r"], rcond=self.rcond)[0]


class Floor:
    """The relay: joint_states in, the node's output messages out, values copied."""

    def __init__(self, node, model, outputs, contact_frame, core=None):
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
        self.core = core
        self.answered = 0
        self.diagnostics = node.create_publisher(DiagnosticArray, "/diagnostics", 10)
        self.status = (DiagnosticArray, DiagnosticStatus, KeyValue)
        node.create_timer(1.0, self.publish_diagnostics)

    def on_joint_states(self, raw):
        decoded = self.decoder.decode(raw)
        if decoded is None:
            return
        _, stamp, position, velocity, effort = decoded
        if self.core is not None:
            self.core.run(stamp, position, velocity, effort)
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
    outputs = [n for n in args.outputs.split(",") if n]
    core = (CoreCalls(model, outputs, args.contact_frame) if args.core else
            PinocchioCalls(args.urdf, model, outputs, args.contact_frame) if args.pinocchio
            else None)
    floor = Floor(node, model, outputs, args.contact_frame, core)
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
