"""
The rbd_ros dynamics node: joint states in, dynamics out, on topics and services.

Thin glue around the core (``rbd_ros``): messages become arrays (``conversions``,
``joint_cache``), the tick rule of ``rbd_ros.outputs`` (shared with the replay tool) decides
each tick, one core call computes every enabled output, arrays become messages (``robot``).
``config/dynamics.yaml`` documents every parameter (``parameters``); ``services`` answers
requests for the caller's own state.

Topics (relative names resolve in the node's namespace; ``~/`` is the node's own):
  in   robot_description  std_msgs/String (reliable, transient local, depth 1), unless the
                          ``robot_description`` parameter holds the URDF
       joint_states       sensor_msgs/JointState (best effort: matches reliable and
                          best-effort publishers), merged by joint name
       odom               nav_msgs/Odometry, floating base only: base pose and twist
       commanded accelerations (rbd_ros_interfaces/JointVector), when ``acceleration_topic``
  out  ~/<output>         one topic per output of ``rbd_ros.outputs.OUTPUTS``: ~/torques
                          (sensor_msgs/JointState, τ = ID(q, v, a)), ~/accelerations (q̈ =
                          FD(q, v, measured effort)), ~/inverse_inertia (M⁻¹(q)),
                          ~/rnea_derivatives, ~/aba_derivatives
       /diagnostics       diagnostic_msgs/DiagnosticArray: tick latency, counts
Services (rbd_ros_interfaces/srv): ~/inverse_dynamics, ~/forward_dynamics, ~/inverse_inertia,
  ~/inverse_dynamics_derivatives, ~/forward_dynamics_derivatives.

Every output is stamped with the stamp of the joint_states message it was computed from.
A tick that cannot be computed correctly (joints missing or stale, unknown velocities, a
core error) publishes nothing and says why (throttled); the node keeps running.
"""
import threading
import time
from collections import deque

import numpy as np
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from rclpy.node import Node
from rclpy.qos import (DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy,
                       qos_profile_sensor_data)
from sensor_msgs.msg import JointState
from std_msgs.msg import String

import rbd_ros
from . import conversions, parameters, spin_node
from .. import cdr, outputs
from ..cdr import JointStateDecoder
from .parameters import PARAMETERS  # noqa: F401  (the node's parameters, as before)
from .robot import Robot, publish
from .services import create_services

try:
    from rbd_ros_interfaces import msg as rbd_msg
    from rbd_ros_interfaces import srv as rbd_srv
except ImportError:          # the node still publishes ~/torques without its own interfaces
    rbd_msg = rbd_srv = None

try:
    from nav_msgs.msg import Odometry
except ImportError:
    Odometry = None

DESCRIPTION_QOS = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                             durability=DurabilityPolicy.TRANSIENT_LOCAL,
                             history=HistoryPolicy.KEEP_LAST)
# best effort receives from reliable and best-effort publishers alike
STATE_QOS = QoSProfile(depth=10, reliability=ReliabilityPolicy.BEST_EFFORT,
                       history=HistoryPolicy.KEEP_LAST)
# what the node logs and counts in /diagnostics when it publishes nothing, by reason
SKIP_TEXTS = {**outputs.REASONS, **outputs.ODOMETRY_REASONS,
              "no robot model": "no robot model yet (waiting for robot_description)",
              "bad command": "commanded acceleration must name every degree of freedom once "
                             "({count}): {names}...",
              "bad command values": "commanded acceleration with NaN/inf ignored"}


class DynamicsNode(Node):
    """The node; ``main()`` runs it. Tests create it in-process with parameter overrides."""

    def __init__(self, node_name="rbd_dynamics", **kwargs):
        super().__init__(node_name, **kwargs)
        for name, (default, description) in PARAMETERS.items():
            self.declare_parameter(name, default)
        p = {name: self.get_parameter(name).value for name in PARAMETERS}
        self.params = p
        self._rule = parameters.tick_rule(p)      # ValueError for a bad value: early
        enabled = parameters.enabled_outputs(p, interfaces=rbd_msg is not None)
        self.outputs = {name: name in enabled for name in outputs.NAMES}
        self._enabled = enabled
        self._fd_enabled = any(outputs.BY_NAME[k].needs_effort for k in enabled)
        if rbd_msg is None:
            custom = sorted(set(parameters.enabled_outputs(p)) - set(enabled))
            self.get_logger().warning(
                "rbd_ros_interfaces is not installed: services are off, and so are the "
                f"outputs {custom} (only ~/torques and /diagnostics are published). Build it "
                "with scripts/build_interfaces.py or colcon (see README).")
        self._robot = None                        # a Robot, replaced atomically
        self._loading = threading.Lock()
        self._pending_lock = threading.Lock()
        self._pending_description = None
        self._loader = None
        self._stats = {"ticks": 0, "published": 0, "skipped": 0, "bad_messages": 0,
                       "joint_states": 0}
        self._skip_reasons = {}                    # text -> count, for /diagnostics
        self._skip_counts = {}                     # SKIP_TEXTS key -> count
        self._warned = {}                          # text -> time.monotonic() last logged
        self._latency = deque(maxlen=5000)        # seconds, compute + publish, per tick
        self._last_computed_update = -1
        self._create_topics(p)
        if p["robot_description"]:
            self._load_description(p["robot_description"], "the robot_description parameter")
        else:
            self.create_subscription(String, p["robot_description_topic"],
                                     self._on_description, DESCRIPTION_QOS)
            self.get_logger().info(f"waiting for the URDF on {p['robot_description_topic']}")

    def _create_topics(self, p):
        available = parameters.available_outputs(interfaces=rbd_msg is not None)
        self._pub = {name: self.create_publisher(
            conversions.message_class(outputs.BY_NAME[name].msgtype),
            outputs.BY_NAME[name].topic, 10) for name in available}
        if rbd_srv is not None:
            create_services(self, rbd_srv)
        self._diag_pub = self.create_publisher(DiagnosticArray, "/diagnostics", 10)
        # the 1 kHz inputs arrive serialized (raw=True) and are decoded by rbd_ros.cdr
        self._joint_state_decoder = JointStateDecoder()
        self.create_subscription(JointState, p["joint_states_topic"], self._on_joint_states,
                                 STATE_QOS, raw=True)
        if p["floating_base"]:
            if Odometry is None:
                raise RuntimeError("floating_base needs nav_msgs (pip: ros-jazzy-nav-msgs)")
            self._odometry_fallback = conversions.odometry_deserializer()
            self.create_subscription(Odometry, p["odometry_topic"], self._on_odometry,
                                     qos_profile_sensor_data, raw=True)
        if p["acceleration_topic"]:
            if rbd_msg is None:
                raise RuntimeError("acceleration_topic needs rbd_ros_interfaces")
            self.create_subscription(rbd_msg.JointVector, p["acceleration_topic"],
                                     self._on_commanded_acceleration, STATE_QOS)
        if p["rate_hz"] > 0:
            self.create_timer(1.0 / p["rate_hz"], self._on_timer)
        if p["diagnostics_period"] > 0:
            self.create_timer(p["diagnostics_period"], self._publish_diagnostics)

    # -- robot description ------------------------------------------------------------------
    def _on_description(self, msg):
        # parsing and warming up take milliseconds: one loader thread does it off the
        # executor thread, so ticks of the current model go on meanwhile; when descriptions
        # come faster than they load, the latest one wins
        with self._pending_lock:
            self._pending_description = msg.data
            if self._loader is None or not self._loader.is_alive():
                self._loader = threading.Thread(target=self._load_pending, daemon=True)
                self._loader.start()

    def _load_pending(self):
        source = f"topic {self.params['robot_description_topic']}"
        while True:
            with self._pending_lock:
                xml, self._pending_description = self._pending_description, None
                if xml is None:
                    self._loader = None
                    return
            self._load_description(xml, source)

    def _load_description(self, xml, source):
        with self._loading:
            current = self._robot
            if current is not None and current.xml == xml:
                return
            try:
                model = rbd_ros.load_model(xml, floating_base=self.params["floating_base"],
                                           mimic=self.params["mimic_joints"])
                model = model.with_gravity(self.params["gravity"])
                _warm_up(model)
            except Exception as exc:   # any failure keeps the previous model running
                kept = f"; keeping model {current.model.name!r}" if current else ""
                self.get_logger().error(f"rejected robot description from {source}: "
                                        f"{exc}{kept}")
                return
            robot = Robot(model, xml, self._enabled, self._pub)
            slow = robot.slow_encoders()
            if slow:
                self.get_logger().warning(f"outputs {sorted(slow)} are published as messages, "
                                          f"not pre-serialized (slower): {slow}")
            if current is not None and current.model.floating_base and model.floating_base:
                robot.keep_base_state(current)
            self._robot = robot                   # the swap: one reference assignment
            self.get_logger().info(
                f"model {model.name!r} from {source}: {model.nbodies} bodies, nq={model.nq}, "
                f"nv={model.nv}, {'floating' if model.floating_base else 'fixed'} base")

    # -- inputs -----------------------------------------------------------------------------
    def _on_joint_states(self, raw):
        self._stats["joint_states"] += 1
        robot = self._robot
        if robot is None:
            self._skip("no robot model")
            return
        try:
            names, stamp, position, velocity, effort = conversions.decode_joint_state(
                self._joint_state_decoder, raw)
            unknown, merged = robot.cache.merge(names, position, velocity, effort, stamp,
                                                time.monotonic())
        except ValueError as exc:
            self._stats["bad_messages"] += 1
            self._skip("malformed", error=exc)
            return
        if unknown:
            self._warn(f"joint_states names joints the model does not have: "
                       f"{list(unknown)[:10]} (ignored)", 10.0)
        if not merged:
            return          # "no model joint": nothing new to compute or stamp
        if self.params["rate_hz"] <= 0:
            self._tick(robot)

    def _on_odometry(self, raw):
        robot = self._robot
        if robot is None:
            return
        try:
            _, values = cdr.decode_odometry(raw, self._odometry_fallback)
        except ValueError as exc:
            self._stats["bad_messages"] += 1
            self._skip("malformed odometry", error=exc)
            return
        if not outputs.valid_odometry(values):
            self._skip("invalid odometry")
            return
        robot.q[:7] = values[:7]
        robot.v[:6] = values[7:]                  # Odometry's twist is in the child (base) frame
        robot.base_received = time.monotonic()

    def _on_commanded_acceleration(self, msg):
        robot = self._robot
        if robot is None:
            return
        names = list(msg.names)
        data = conversions.vector(msg.data)
        if len(names) != len(data) or sorted(names) != sorted(robot.dof_names):
            self._skip("bad command", count=len(robot.dof_names), names=robot.dof_names[:6])
            robot.commanded = None
            return
        index = {n: k for k, n in enumerate(names)}
        a = data[[index[n] for n in robot.dof_names]]
        if not np.all(np.isfinite(a)):
            self._skip("bad command values")
            robot.commanded = None
            return
        robot.a[:] = a
        robot.commanded = True

    def _on_timer(self):
        robot = self._robot
        if robot is not None and robot.cache.updates != self._last_computed_update:
            self._tick(robot)                     # only when new joint states came in

    # -- one tick ---------------------------------------------------------------------------
    def _tick(self, robot):
        t0 = time.perf_counter()
        self._stats["ticks"] += 1
        cache = robot.cache
        self._last_computed_update = cache.updates
        now = time.monotonic()
        state = robot.state                       # views of the cache: set the ages only
        state.joint_age = now - cache.received.min()
        state.base_age = now - robot.base_received
        state.acceleration_known = robot.commanded is True
        reason = self._rule.reason(state)
        if reason is not None:
            self._skip_tick(robot, reason, now)
            return
        robot.joint_q[:] = cache.position
        robot.joint_v[:] = cache.velocity
        if self._rule.zero_unknown_velocity:
            outputs.zero_unknown(robot.joint_v)
        effort_known = bool(outputs.effort_known(cache.effort))
        robot.joint_tau[:] = cache.effort if effort_known else 0.0
        if not effort_known and self._fd_enabled:
            self._warn("joint efforts unknown (NaN, inf or absent): forward dynamics outputs "
                       "are not published", 5.0)
        call, steps = robot.plans[effort_known]
        try:
            results = outputs.compute(call, robot.model, robot.q, robot.v, robot.a, robot.tau)
        except ValueError as exc:
            self._skip("refused", error=exc)
            return
        publish(steps, results, cache.stamp)
        self._stats["published"] += 1
        self._latency.append(time.perf_counter() - t0)

    def _skip_tick(self, robot, reason, now):
        """Count and log why the tick publishes nothing, with the details of its text."""
        p, cache = self.params, robot.cache
        details = {"max_joint_age": p["max_joint_age"], "odometry_topic": p["odometry_topic"],
                   "acceleration_topic": p["acceleration_topic"]}
        if reason == "incomplete":
            missing = cache.missing()
            details.update(count=len(missing), names=missing[:8])
        elif reason == "stale":
            details["names"] = cache.older_than(p["max_joint_age"], now)[:8]
        self._skip(reason, **details)

    def _skip(self, key, **details):
        """
        Count and log a message or tick that publishes nothing.

        Counted by ``key`` of ``SKIP_TEXTS`` and by its text (for /diagnostics); the text
        (``details`` filled in) is logged, throttled.
        """
        text = SKIP_TEXTS[key].format(**details)
        self._stats["skipped"] += 1
        self._skip_counts[key] = self._skip_counts.get(key, 0) + 1
        reasons = self._skip_reasons
        if text not in reasons and len(reasons) >= 32:      # bounded: texts carry details
            text_key = "other reasons"
        else:
            text_key = text
        reasons[text_key] = reasons.get(text_key, 0) + 1
        self._warn(text, 2.0)

    def _warn(self, text, period):
        """
        Log ``text`` at most once per ``period`` seconds.

        Throttled here, not by rclpy: its ``throttle_duration_sec`` inspects the caller's
        source file on every call (~0.2 ms, measured), which a tick skipped at 1 kHz cannot
        afford.
        """
        now = time.monotonic()
        last = self._warned.get(text)
        if last is None or now - last >= period:
            if len(self._warned) >= 256:
                self._warned.clear()
            self._warned[text] = now
            self.get_logger().warning(text)

    # -- diagnostics ------------------------------------------------------------------------
    def _publish_diagnostics(self):
        robot = self._robot
        status = DiagnosticStatus()
        status.name = f"{self.get_name()}: dynamics"
        status.hardware_id = robot.model.name if robot else ""
        lat = np.array(self._latency) * 1e6
        self._latency.clear()
        s = self._stats
        if robot is None:
            status.level, status.message = DiagnosticStatus.WARN, "no robot model"
        elif s["published"] == 0:
            status.level = DiagnosticStatus.WARN
            status.message = "nothing published yet: " + (next(iter(self._skip_reasons), "")
                                                          or "no joint_states")
        else:
            status.level, status.message = DiagnosticStatus.OK, "computing"
        values = {"model": robot.model.name if robot else "", "nv": robot.model.nv if robot
                  else 0, **s}
        if len(lat):
            values.update({"tick latency p50 [us]": f"{np.percentile(lat, 50):.1f}",
                           "tick latency p99 [us]": f"{np.percentile(lat, 99):.1f}",
                           "tick latency max [us]": f"{lat.max():.1f}",
                           "ticks in window": len(lat)})
        for reason, count in list(self._skip_reasons.items())[:5]:
            values[f"skipped: {reason[:60]}"] = count
        status.values = [KeyValue(key=str(k), value=str(v)) for k, v in values.items()]
        msg = DiagnosticArray()
        msg.header.stamp = self.get_clock().now().to_msg()
        msg.status = [status]
        self._diag_pub.publish(msg)


# -- helpers ---------------------------------------------------------------------------------
def _warm_up(model):
    """Run every kernel once so the first tick does not pay numba's cache load."""
    q = model.neutral()
    z = np.zeros(model.nv)
    rbd_ros.compute_all(model, q, z, tau=z)
    rbd_ros.inverse_and_forward_dynamics(model, q, z, a=z, tau=z)
    rbd_ros.rnea(model, q, z, z)
    rbd_ros.aba(model, q, z, z)
    rbd_ros.minv(model, q)
    rbd_ros.rnea_derivatives(model, q, z, z)
    rbd_ros.aba_derivatives(model, q, z, z)


def main(args=None):
    spin_node(DynamicsNode, "dynamics_node", args)


if __name__ == "__main__":
    main()
