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
  ~/inverse_dynamics_derivatives, ~/forward_dynamics_derivatives; for whole trajectories
  (``trajectories``) ~/trajectory_torques, ~/trajectory_forward, ~/retime_trajectory
  (``retime_service``), served by a child process
  (``planner_process``; parameter planner_process false: a thread); ~/set_payload
  (``payload``).

Every output is stamped with the stamp of the joint_states message it was computed from
(one that is zero, invalid or far in the future: with the node's clock instead, counted).
A tick that cannot be computed correctly (joints missing or stale, unknown velocities, a
core error, a result that is not finite) publishes nothing and says why (throttled); the
node keeps running. Every callback has a boundary: an unexpected exception is logged
(throttled, bounded) and counted in /diagnostics, never the end of the node.
"""
import gc
import time
from collections import deque

import numpy as np
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from rclpy.node import Node
from rclpy.qos import (DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy,
                       qos_profile_sensor_data)
from sensor_msgs.msg import JointState
from std_msgs.msg import String

from . import conversions, parameters, spin_node
from ..actuation import dynamics as actuation
from ..formats import cdr
from .. import outputs
from ..formats.cdr import JointStateDecoder
from ..description.mimic_coupling import MIMIC_TOLERANCE
from .parameters import PARAMETERS  # noqa: F401  (the node's parameters, as before)
from .description import DescriptionSource
from .contact import ObservingNode, create_reset_service
from .health import LOST, PLANNER_EXITS, WARN, Health
from .live import LiveParameters
from .losses import LostMessageCounting
from .reporting import (Throttle, Window, guarded, guarded_service, latency_values,
                        names_excerpt, one_line)
from .robot import publish
from .skips import SKIP_TEXTS, SkipReporting
from .services import create_services
from .payload import create_payload_service
from .payload_estimation import create_estimate_payload_service, record
from .planner_process import PlannerProcess
from .planner_worker import PlannerWorker
from .trajectories import create_trajectory_services
from .wrenches import WrenchInputs

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
# the counters of /diagnostics (``_stats``), in order; "<input> rate [Hz]" for the inputs
STATS = ("ticks", "published", "skipped", "bad_messages", "joint_states", "odometry",
         "no_model_joint", "stamps_replaced", "callback_errors", "descriptions_rejected",
         "wrenches_refused", PLANNER_EXITS, LOST)
RATES = ("joint_states", "odometry")


class DynamicsNode(LostMessageCounting, LiveParameters, DescriptionSource, SkipReporting,
                   ObservingNode, Node):
    """The node; ``main()`` runs it. Tests create it in-process with parameter overrides."""

    def __init__(self, node_name="rbd_dynamics", **kwargs):
        super().__init__(node_name, **kwargs)
        self._guard_rclpy_services()
        p = self._declare_parameters()           # ValueError for a bad value: early
        self._rule = parameters.tick_rule(p)
        self._joint_text = parameters.joint_parameters_text(p)   # or ValueError: no start
        self._interfaces = rbd_msg is not None
        if rbd_msg is None:
            custom = sorted(set(parameters.enabled_outputs(p))
                            - set(parameters.enabled_outputs(p, interfaces=False)))
            self.get_logger().warning(
                "rbd_ros_interfaces is not installed: services are off, and so are the "
                f"outputs {custom} (only ~/torques and /diagnostics are published). Build it "
                "with scripts/build_interfaces.py or colcon (see README).")
        self._robot = None                        # a Robot, replaced atomically
        self._planner = self._planner_process = None
        self._wrenches = WrenchInputs(p["wrench_topics"], p["world_frame"])
        self._init_description()
        self._stats = dict.fromkeys(STATS, 0)
        self._skip_reasons = {}                    # text -> count (the first 32 texts)
        self._skip_counts = {}                     # SKIP_TEXTS key -> count, for /diagnostics
        self._last_skip = ""
        self._rejected = ""                        # why the last description was rejected
        self._health = Health()
        self._init_lost_messages()
        self._throttle = Throttle()
        self._window = Window()
        self._latency = deque(maxlen=5000)        # seconds, compute + publish, per tick
        self._last_computed_update = -1
        self._create_topics(p)
        if p["robot_description"]:
            self._load_description(p["robot_description"], "the robot_description parameter")
        else:
            self.create_subscription(String, p["robot_description_topic"],
                                     self._guarded(self._on_description), DESCRIPTION_QOS)
            self.get_logger().info(f"waiting for the URDF on {p['robot_description_topic']}")
        if rbd_srv is not None and p["planner_process"]:
            # last: a node that fails to start leaves no child; it starts in the background
            self._planner_process = PlannerProcess(self)
            if self._robot is not None:
                self._planner_process.robot_changed(self._robot)

    def _create_topics(self, p):
        self._set_outputs()                       # only the enabled outputs are advertised
        if rbd_srv is not None:
            create_services(self, rbd_srv)
            if not p["planner_process"]:          # else started last, in __init__
                self._planner = PlannerWorker(self.get_logger())
                create_trajectory_services(self, rbd_srv, self._planner)
            create_payload_service(self, rbd_srv)
            create_estimate_payload_service(self, rbd_srv)
        create_reset_service(self)
        self._diag_pub = self.create_publisher(DiagnosticArray, "/diagnostics", 10)
        # the 1 kHz inputs arrive serialized (raw=True) and are decoded by rbd_ros.formats.cdr
        self._joint_state_decoder = JointStateDecoder()
        self._best_effort_subscription(JointState, p["joint_states_topic"],
                                       self._guarded(self._on_joint_states), STATE_QOS, raw=True)
        if p["floating_base"]:
            if Odometry is None:
                raise RuntimeError("floating_base needs nav_msgs (pip: ros-jazzy-nav-msgs)")
            self._odometry_fallback = conversions.odometry_deserializer()
            self._best_effort_subscription(Odometry, p["odometry_topic"],
                                           self._guarded(self._on_odometry),
                                           qos_profile_sensor_data, raw=True)
        if p["acceleration_topic"]:
            if rbd_msg is None:
                raise RuntimeError("acceleration_topic needs rbd_ros_interfaces")
            self._best_effort_subscription(rbd_msg.JointVector, p["acceleration_topic"],
                                           self._guarded(self._on_commanded_acceleration),
                                           STATE_QOS)
        self._wrenches.subscribe(self, STATE_QOS, self._guarded)
        self._set_timer("rate", p["rate_hz"], self._on_timer)
        if p["diagnostics_period"] > 0:
            self._set_timer("diagnostics", 1.0 / p["diagnostics_period"],
                            self._publish_diagnostics)

    # set by spin_node when the process ends with the node: its planner child is not waited
    # for (it leaves by itself, within a second and a half), so Ctrl-C ends the node at once
    process_ending = False

    def destroy_node(self):
        """Stop the planner services' process or worker thread, then destroy the node."""
        if getattr(self, "_planner", None) is not None:
            self._planner.close()
        if getattr(self, "_planner_process", None) is not None:
            self._planner_process.close(wait=not self.process_ending)
        return super().destroy_node()

    def _set_robot(self, robot):
        """Swap in ``robot`` (one reference assignment); the planner process gets it too."""
        if self._planner_process is not None:
            # first: a request that sees the new robot in this process (its tests do) must
            # find the version bumped, so that the child waits for the robot being sent
            self._planner_process.robot_changed(robot)
        self._attach_observer(robot)
        self._robot = robot
        if gc.get_freeze_count() == 0:
            # once, at the first model: the ~130,000 objects of the imports (rclpy, numba,
            # the URDF parser) are never garbage, and a full collection that scanned them
            # stopped the ticks for 40-80 ms (gc.callbacks in the node, talos at 1 kHz)
            gc.freeze()

    # -- the boundary of every callback -----------------------------------------------------
    def _guarded(self, callback):
        """Return ``callback`` behind the boundary (``reporting.guarded``)."""
        return guarded(callback, self.callback_failed)

    def _guard_rclpy_services(self):
        """
        Give rclpy's own services of the node (parameters, type description) the boundary.

        rclpy's parameter services raise out of their callback for a request with an
        unknown parameter type (ValueError: "99 is not a valid Parameter.Type"), which ends
        the executor's spin: here such a request gets an empty response instead.
        """
        for service in self.services:
            service.callback = guarded_service(service.callback, self.callback_failed,
                                               service.srv_name.rsplit("/", 1)[-1])

    def callback_failed(self, where, exc):
        """Count and log (throttled, bounded) an exception out of the callback ``where``."""
        if not self.context.ok():
            return                                # shutting down: publishers may be gone
        self._stats["callback_errors"] += 1
        self._skip("callback error", where=where,
                   error=f"{type(exc).__name__}: {one_line(exc, 200)}")

    # -- inputs -----------------------------------------------------------------------------
    def _on_joint_states(self, raw):
        self._stats["joint_states"] += 1
        robot = self._robot
        if robot is None:
            self._skip("no robot model", why=self.waiting_for_model())
            return
        try:
            names, stamp, position, velocity, effort = conversions.decode_joint_state(
                self._joint_state_decoder, raw)
            unknown, merged = robot.cache.merge(names, position, velocity, effort, stamp,
                                                time.monotonic())
        except ValueError as exc:
            self._stats["bad_messages"] += 1
            self._skip("malformed", error=one_line(exc, 300))
            return
        if unknown:
            self._warn(f"joint_states names joints the model does not have: "
                       f"{names_excerpt(unknown)} (ignored)", 10.0, key="unknown joints")
        if robot.cache.disagreement:
            self._warn(f"joint_states positions of mimic joints disagree with their leaders "
                       f"by more than {MIMIC_TOLERANCE:g}: {robot.cache.disagreement}; the "
                       "leaders' positions are used", 10.0, key="mimic disagreement")
        if not merged:
            self._stats["no_model_joint"] += 1
            return          # nothing new to compute or stamp
        if getattr(self, "_payload_samples", False) is not False:
            record(self, robot.cache, stamp)          # ~/estimate_payload's samples
        if self.params["rate_hz"] <= 0:
            self._tick(robot)

    def _on_odometry(self, raw):
        self._stats["odometry"] += 1
        robot = self._robot
        if robot is None:
            return
        try:
            _, values = cdr.decode_odometry(raw, self._odometry_fallback)
        except ValueError as exc:
            self._stats["bad_messages"] += 1
            self._skip("malformed odometry", error=one_line(exc, 300))
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

    def wrench_refused(self, topic, exc):
        """Count and log (throttled) a measured wrench refused (``wrenches``)."""
        self._stats["wrenches_refused"] += 1
        self._warn(one_line(SKIP_TEXTS["bad wrench"].format(topic=topic,
                                                            error=one_line(exc, 200))),
                   2.0, key="bad wrench")

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
        wrenches = self._wrenches
        if wrenches:
            state.wrench_age = wrenches.age(now)
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
            # no finiteness check here: the core raises ValueError for every result that is
            # not finite, and publish() sends the core's arrays as they are (NOT_FINITE in
            # outputs.compute's docstring)
            fext = wrenches.fext(robot.model, robot.q) if wrenches else None
            results = actuation.compute(robot.joints, call, robot.model, robot.q, robot.v,
                                        robot.a, robot.tau, fext)
        except ValueError as exc:
            self._skip("refused", error=one_line(exc, 300))
            return
        stamp = cache.stamp
        if not 0 < stamp[0] < time.time() + conversions.MAX_STAMP_AHEAD or stamp[1] >= 10**9:
            stamp = self._replace_stamp(stamp)
        publish(steps, results, stamp)
        if robot.contact is not None:
            self._observe(robot, effort_known, stamp, fext)
        self._stats["published"] += 1
        self._latency.append(time.perf_counter() - t0)

    def _replace_stamp(self, stamp):
        """Return the stamp of outputs computed from an input stamped ``stamp``."""
        problem = conversions.stamp_problem(stamp, time.time())
        if problem is None:
            return stamp                          # e.g. (0, 5): the first second of sim time
        self._stats["stamps_replaced"] += 1
        self._warn(f"joint_states stamp {stamp[0]} s {stamp[1]} ns is {problem}: outputs are "
                   "stamped with the node's clock instead", 10.0, key="stamp")
        return self.get_clock().now().seconds_nanoseconds()

    # -- diagnostics ------------------------------------------------------------------------
    def _publish_diagnostics(self):
        robot = self._robot
        status = DiagnosticStatus()
        status.name = f"{self.get_name()}: dynamics"
        status.hardware_id = robot.model.name if robot else ""
        s = self._stats
        planner = self._planner_process
        if planner is not None:
            s[PLANNER_EXITS] = planner.exits
        level, message = self._health.assess(s, self._skip_counts,
                                             robot.model.name if robot else None,
                                             self._rejected, bool(self._enabled),
                                             planner.problem() if planner else "")
        collision = robot.contact.diagnostic() if robot and robot.contact else ""
        if collision:                             # WARN while in collision
            level, message = max(level, WARN), f"{collision}; {message}"
        status.level, status.message = bytes([level]), one_line(message)
        values = {"model": robot.model.name if robot else "",
                  "nv": robot.model.nv if robot else 0, **s,
                  **self._window.rates(s, RATES), **latency_values(self._latency)}
        self._latency.clear()
        values.update({f"skipped: {key}": n for key, n in self._skip_counts.items()})
        values["last skip reason"] = self._last_skip[:200]
        values[LOST] = self._lost.value()
        values.update(self._wrenches.diagnostics(time.monotonic()))
        values["planner"] = (planner.state if planner is not None else
                             "in the node's process" if self._planner is not None else "off")
        status.values = [KeyValue(key=str(k), value=str(v)) for k, v in values.items()]
        msg = DiagnosticArray()
        msg.header.stamp = self.get_clock().now().to_msg()
        msg.status = [status]
        self._diag_pub.publish(msg)


# -- helpers ---------------------------------------------------------------------------------
def main(args=None, stop=None):
    """Run the node until Ctrl-C or SIGTERM (``stop``: see ``spin_node``)."""
    spin_node(DynamicsNode, "dynamics_node", args, stop)


if __name__ == "__main__":
    main()
