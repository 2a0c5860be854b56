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
       ~/effort_command   std_msgs/Float64MultiArray for an effort controller, off until
                          ~/enable_command (``effort_command``, doc/driving.md)
Services (rbd_ros_interfaces/srv): ``services``, ``trajectories`` (served by a child process,
``planner.process``, or a thread), ``set_payload``, ``estimate_payload``; doc/node.md lists them.

Every output is stamped with the stamp of the joint_states message it was computed from
(one that is zero, invalid or far in the future: with the node's clock instead, counted).
A tick that cannot be computed correctly (joints missing or stale, unknown velocities, a
core error, a result that is not finite) publishes nothing and says why (throttled); the
node keeps running. Every callback has a boundary: an unexpected exception is logged
(throttled, bounded) and counted in /diagnostics, never the end of the node.
"""
import functools
import gc
import time

from rclpy.node import Node
from rclpy.qos import (DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy,
                       qos_profile_sensor_data)
from sensor_msgs.msg import JointState
from std_msgs.msg import String

from . import conversions, parameters, spin_node
from ..actuation import dynamics as actuation
from .. import outputs
from ..formats.cdr import JointStateDecoder
from ..description.mimic_coupling import MIMIC_TOLERANCE
from .parameters import PARAMETERS  # noqa: F401  (the node's parameters, as before)
from .contact import ObserverTicks, create_reset_service
from .counters import Counters
from .description import DescriptionLoader, joint_model
from .diagnostics import DiagnosticsReport
from .health import LOST, PLANNER_EXITS
from .auxiliary_inputs import AuxiliaryInputs
from .lost_messages import LostMessageCounter
from .output_topics import OutputTopics, missing_interfaces_text
from .parameter_updates import OUTPUT_PARAMETERS, ParameterUpdates, Timers
from .reporting import guard_services, guarded, names_excerpt, one_line
from .robot import RobotSwap, publish
from ..outputs import whole_body
from .skips import SKIP_TEXTS, Skips
from .services import create_services
from .set_payload import create_payload_service
from .estimate_payload import PayloadSamples, create_estimate_payload_service
from .planner.process import PlannerProcess
from .planner.worker import PlannerWorker
from .trajectories import create_trajectory_services
from .wrenches import WrenchInputs
from .effort_command import EffortCommand

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
# best effort receives from reliable and best-effort publishers alike; depth 50: at 1 kHz a
# 12 ms stall of the node overflowed a queue of 10 and lost 38 outputs (issue 35), 50 holds a
# 50 ms stall, and a node that falls behind for good answers at most 50 ms late
STATE_QOS = QoSProfile(depth=50, reliability=ReliabilityPolicy.BEST_EFFORT,
                       history=HistoryPolicy.KEEP_LAST)
# the counters of /diagnostics (``_counters``), in order; "<input> rate [Hz]" for the inputs
STATS = ("ticks", "published", "skipped", "bad_messages", "joint_states", "odometry",
         "no_model_joint", "stamps_replaced", "callback_errors", "descriptions_rejected",
         "wrenches_refused", "requests_refused", PLANNER_EXITS, LOST, "observer_resets")


class DynamicsNode(Node):
    """
    The node; ``main()`` runs it. Tests create it in-process with parameter overrides.

    One rclpy node holding its collaborators, each given what it needs: the parameters
    (``parameter_updates``), the output topics, the robot swap (``robot``), the robot
    descriptions (``description``), the skips (``skips``), the lost-message count
    (``lost_messages``), the observer (``contact``), /diagnostics (``diagnostics``). The node
    turns messages into arrays, schedules the ticks and wires the callbacks.
    """

    def __init__(self, node_name="rbd_dynamics", **kwargs):
        super().__init__(node_name, **kwargs)
        # rclpy's own services of the node (parameters, type description) get the boundary
        guard_services(self.services, self.callback_failed)
        self._counters = Counters(STATS)
        self._robot = None                        # a Robot, replaced atomically
        self._planner = self._planner_process = None
        self._parameter_updates = ParameterUpdates(
            self, self.current_robot, self._apply_parameters, self.callback_failed)  # ValueError
        p = self.params = self._parameter_updates.values
        self._joint_text = self._parameter_updates.joint_text
        self._rule = parameters.tick_rule(p)
        self._interfaces = rbd_msg is not None
        if rbd_msg is None:
            self.get_logger().warning(missing_interfaces_text(p))
        self._wire(p)
        self._create_topics(p)
        if p["robot_description"]:
            self._descriptions.load(p["robot_description"], "the robot_description parameter")
        else:
            self.create_subscription(String, p["robot_description_topic"],
                                     self._guarded(self._descriptions.on_description),
                                     DESCRIPTION_QOS)
            self.get_logger().info(f"waiting for the URDF on {p['robot_description_topic']}")
        if rbd_srv is not None and p["planner_process"]:
            # last: a node that fails to start leaves no child; it starts in the background
            self._planner_process = PlannerProcess(self)
            if self._robot is not None:
                self._planner_process.robot_changed(self._robot)

    def _wire(self, p):
        """Create the collaborators, each given what it uses."""
        logger = self.get_logger()
        self._wrenches = WrenchInputs(p["wrench_topics"], p["world_frame"])
        self._skips = Skips(logger, self._counters, p, self._wrenches)
        self._losses = LostMessageCounter(self, self._counters, self._skips.warn, self._guarded)
        self._on_message_lost = self._losses.on_message_lost
        self._timer_set = Timers(self, self._guarded)
        self._live_timers = self._timer_set.timers
        self._topics = OutputTopics(self, self._interfaces)
        self._pub = self._topics.publishers
        self._robots = RobotSwap(self.current_robot, self._set_robot, self._topics, p,
                                 functools.partial(joint_model, joint_text=self._joint_text,
                                                   params=p))
        self._descriptions = DescriptionLoader(p, logger, self._counters, self._skips.log_line,
                                               self.callback_failed, self._wrenches,
                                               self._robots)
        self._loading = self._descriptions.loading
        self._inputs = AuxiliaryInputs(self.current_robot, self._counters, self._skips)
        self._observer = ObserverTicks(p, self._skips, logger, self._pub)
        self._payload_samples = PayloadSamples() if rbd_srv is not None else None
        self._diagnostics = DiagnosticsReport(self, self._counters, self._skips, self._losses,
                                              self._wrenches)
        self._window = self._diagnostics.window
        self._latency = self._diagnostics.latency
        self._last_computed_update = -1
        self._command = EffortCommand(self, p, self._guarded)   # ~/effort_command

    def current_robot(self):
        """Return the robot the node computes with (None before a model)."""
        return self._robot

    def stats(self):
        """Return the /diagnostics counters now (``STATS``: name -> count, read-only)."""
        return self._counters.snapshot()

    def skips(self):
        """Return copies of the skips so far (``skips.SkipRecord``: counts, reasons, last)."""
        return self._skips.record()

    def wrench_inputs(self):
        """Return copies of the wrench inputs' state (``wrenches.WrenchRecord`` by topic)."""
        return self._wrenches.record()

    def planner_status(self):
        """Return the planner process's ``PlannerStatus`` (None: the planner is a thread)."""
        return None if self._planner_process is None else self._planner_process.status()

    @property
    def outputs(self):
        """Output name -> whether it is published (``output_topics.OutputTopics``)."""
        return self._topics.switches

    def waiting_for_model(self):
        """Say why there is no model yet: waiting, or the last description's rejection."""
        return self._descriptions.waiting_for_model()

    def _create_topics(self, p):
        self._set_outputs()                       # only the enabled outputs are advertised
        if rbd_srv is not None:
            create_services(self, rbd_srv)
            if not p["planner_process"]:          # else started last, in __init__
                self._planner = PlannerWorker(self.get_logger())
                create_trajectory_services(self, rbd_srv, self._planner)
            create_payload_service(self, rbd_srv, self._robots)
            self._payload_worker = create_estimate_payload_service(
                self, rbd_srv, self._robots, self._payload_samples)
        create_reset_service(self)
        # the 1 kHz inputs arrive serialized (raw=True) and are decoded by rbd_ros.formats.cdr
        self._joint_state_decoder = JointStateDecoder()
        subscribe = self._losses.subscribe
        subscribe(JointState, p["joint_states_topic"], self._guarded(self._on_joint_states),
                  STATE_QOS, raw=True)
        if p["floating_base"]:
            if Odometry is None:
                raise RuntimeError("floating_base needs nav_msgs (pip: ros-jazzy-nav-msgs)")
            subscribe(Odometry, p["odometry_topic"], self._guarded(self._inputs.on_odometry),
                      qos_profile_sensor_data, raw=True)
        if p["acceleration_topic"]:
            if rbd_msg is None:
                raise RuntimeError("acceleration_topic needs rbd_ros_interfaces")
            subscribe(rbd_msg.JointVector, p["acceleration_topic"],
                      self._guarded(self._inputs.on_commanded_acceleration), STATE_QOS)
        self._wrenches.subscribe(self, STATE_QOS, self._guarded)
        self._set_timers({"rate_hz", "diagnostics_period"})

    # set by spin_node when the process ends with the node: its planner child is not waited
    # for (it leaves by itself, within a second and a half), so Ctrl-C ends the node at once
    process_ending = False

    def destroy_node(self):
        """Stop the planner services' process or worker thread, then destroy the node."""
        if getattr(self, "_planner", None) is not None:
            self._planner.close()
        if getattr(self, "_payload_worker", None) is not None:
            self._payload_worker.close()           # ~/estimate_payload's thread
        if getattr(self, "_planner_process", None) is not None:
            self._planner_process.close(wait=not self.process_ending)
        return super().destroy_node()

    def _set_robot(self, robot):
        """Swap in ``robot`` (one reference assignment); the planner process gets it too."""
        if self._planner_process is not None:
            # first: a request that sees the new robot in this process (its tests do) must
            # find the version bumped, so that the child waits for the robot being sent
            self._planner_process.robot_changed(robot)
        self._observer.attach(robot, self._topics.observing)
        self._command.robot_changed(robot)
        if self._payload_samples is not None:
            self._payload_samples.prepare(robot.cache.joint_names)
        self._robot = robot
        if gc.get_freeze_count() == 0:
            # once, at the first model: the ~130,000 objects of the imports (rclpy, numba,
            # the URDF parser) are never garbage, and a full collection that scanned them
            # stopped the ticks for 40-80 ms (gc.callbacks in the node, talos at 1 kHz)
            gc.freeze()

    # -- parameters set while the node runs (``parameter_updates``) -------------------------
    def _apply_parameters(self, changed):
        """Apply accepted new values ({name: value}, already in ``params``)."""
        names, p = set(changed), self.params
        if names & {"max_joint_age", "unknown_velocity"}:
            self._rule = parameters.tick_rule(p)
        self._set_timers(names)
        robot = self._robot
        if robot is not None and robot.contact is not None:
            for name in names & {"observer_gain", "collision_thresholds", "max_joint_age"}:
                robot.contact.set(name, changed[name])        # the state is kept
        if names & (OUTPUT_PARAMETERS | {"contact_frame"}):
            self._set_outputs()               # a new robot: its observer restarts
        elif names & {"gravity", "urdf_joint_dynamics"}:
            self._robots.rebuild()
        if changed.get("robot_description"):
            self._descriptions.submit(changed["robot_description"],
                                      "the robot_description parameter")
        self.get_logger().info(f"parameters set: {sorted(names)}")

    def _set_timers(self, names):
        """Make the timers of the parameters ``names`` again (none at a rate of 0)."""
        if "rate_hz" in names:
            self._timer_set.set("rate", self.params["rate_hz"], self._on_timer)
        if "diagnostics_period" in names:
            period = self.params["diagnostics_period"]
            self._timer_set.set("diagnostics", 1.0 / period if period > 0 else 0.0,
                                self._publish_diagnostics)

    def _set_outputs(self):
        """Advertise the enabled outputs, rebuild the robot, then drop the unused topics."""
        self._topics.advertise(self.params)
        self._robots.rebuild()
        self._topics.drop_unused()

    # -- the boundary of every callback -----------------------------------------------------
    def _guarded(self, callback):
        """Return ``callback`` behind the boundary (``reporting.guarded``)."""
        return guarded(callback, self.callback_failed)

    def callback_failed(self, where, exc):
        """Count and log (throttled, bounded) an exception out of the callback ``where``."""
        if not self.context.ok():
            return                                # shutting down: publishers may be gone
        self._counters.add("callback_errors")
        self._skips.skip("callback error", where=where,
                         error=f"{type(exc).__name__}: {one_line(exc, 200)}")

    def request_refused(self, service):
        """Count a service request answered with a refusal (``service``: its name)."""
        self._counters.add("requests_refused")

    def observer_reset(self):
        """Count a ~/reset_observer request answered with the reset."""
        self._counters.add("observer_resets")

    # -- inputs -----------------------------------------------------------------------------
    def _on_joint_states(self, raw):
        self._counters.add("joint_states")
        robot = self._robot
        if robot is None:
            self._skips.skip("no robot model", why=self.waiting_for_model())
            return
        try:
            now = time.monotonic()
            unknown = robot.cache.merge_serialized(raw, now)   # the usual message: one call
            merged = unknown is not None
            if not merged:
                decoder = self._joint_state_decoder
                names, stamp, position, velocity, effort = conversions.decode_joint_state(
                    decoder, raw)
                unknown, merged = robot.cache.merge(names, position, velocity, effort, stamp,
                                                    now)
                if merged:
                    robot.cache.learn(names, decoder.names_bytes)
        except ValueError as exc:
            self._counters.add("bad_messages")
            self._skips.skip("malformed", error=one_line(exc, 300))
            self._command.withhold(f"not finite or malformed joint_states: {one_line(exc, 100)}")
            return
        if unknown:
            self._skips.warn(f"joint_states names joints the model does not have: "
                             f"{names_excerpt(unknown)} (ignored)", 10.0, key="unknown joints")
        if robot.cache.disagreement:
            self._skips.warn(f"joint_states positions of mimic joints disagree with their "
                             f"leaders by more than {MIMIC_TOLERANCE:g}: "
                             f"{robot.cache.disagreement}; the leaders' positions are used",
                             10.0, key="mimic disagreement")
        if not merged:
            self._counters.add("no_model_joint")
            return          # nothing new to compute or stamp
        if self._payload_samples is not None:
            self._payload_samples.record(robot.cache, robot.cache.stamp)   # its samples
        if self.params["rate_hz"] <= 0:
            self._tick(robot)

    def wrench_refused(self, topic, exc):
        """Count and log (throttled) a measured wrench refused (``wrenches``)."""
        self._counters.add("wrenches_refused")
        self._skips.warn(one_line(SKIP_TEXTS["bad wrench"].format(
            topic=topic, error=one_line(exc, 200))), 2.0, key="bad wrench")

    def _on_timer(self):
        robot = self._robot
        if robot is not None and robot.cache.updates != self._last_computed_update:
            self._tick(robot)                     # only when new joint states came in

    # -- one tick ---------------------------------------------------------------------------
    def _tick(self, robot):
        t0 = time.perf_counter()
        self._counters.add("ticks")
        cache = robot.cache
        self._last_computed_update = cache.updates
        now = time.monotonic()
        state = robot.state                       # views of the cache: set the ages only
        state.joint_age = now - cache.oldest_received
        state.base_age = now - robot.base_received
        state.acceleration_known = robot.commanded is True
        wrenches = self._wrenches
        if wrenches:
            state.wrench_age = wrenches.age(now)
        reason = self._rule.reason(state)
        if reason is not None:
            self._skips.tick(robot, reason, now)
            self._command.withhold(reason)
            return
        robot.joint_q[:] = cache.position
        robot.joint_v[:] = cache.velocity
        if self._rule.zero_unknown_velocity:
            outputs.zero_unknown(robot.joint_v)
        self._command.tick(robot, now)            # first: the controller waits for it
        effort_known = bool(outputs.effort_known(cache.effort))
        robot.joint_tau[:] = cache.effort if effort_known else 0.0
        if not effort_known and self._topics.forward_enabled:
            self._skips.warn("joint efforts unknown (NaN, inf or absent): forward dynamics "
                             "outputs are not published", 5.0)
        call, steps, buffer = robot.plans[effort_known]
        try:
            # no finiteness check here: the core raises ValueError for every result that is
            # not finite, and publish() sends the core's arrays as they are (NOT_FINITE in
            # outputs.compute's docstring)
            fext = wrenches.fext(robot.model, robot.q) if wrenches else None
            results = actuation.compute(robot.joints, call, robot.model, robot.q, robot.v,
                                        robot.a, robot.tau, fext, buffer)
            if robot.whole_body:                  # ~/end_effector, ~/center_of_mass, ...
                results.update(whole_body.compute(robot.whole_body, robot.model, robot.q,
                                                  robot.v, robot.frame))
        except ValueError as exc:
            self._skips.skip("refused", error=one_line(exc, 300))
            return
        stamp = cache.stamp
        if not 0 < stamp[0] < time.time() + conversions.MAX_STAMP_AHEAD or stamp[1] >= 10**9:
            stamp = self._replace_stamp(stamp)
        observed, failure = (), None
        if robot.contact is not None:
            try:
                observed = self._observer.observe(robot, effort_known, stamp, fext)
            except Exception as exc:              # a defect in the observer: the dynamics
                failure = exc                     # outputs go out, then the boundary counts it
        try:
            publish(steps, results, stamp, observed)
            self._counters.add("published")
            self._latency.append(time.perf_counter() - t0)
        finally:
            if failure is not None:               # a failed publish is its __context__
                raise failure

    def _replace_stamp(self, stamp):
        """Return the stamp of outputs computed from an input stamped ``stamp``."""
        problem = conversions.stamp_problem(stamp, time.time())
        if problem is None:
            return stamp                          # e.g. (0, 5): the first second of sim time
        self._counters.add("stamps_replaced")
        self._skips.warn(f"joint_states stamp {stamp[0]} s {stamp[1]} ns is {problem}: outputs "
                         "are stamped with the node's clock instead", 10.0, key="stamp")
        return self.get_clock().now().seconds_nanoseconds()

    def _publish_diagnostics(self):
        self._diagnostics.publish(self._robot, self._planner_process, self._planner,
                                  self._descriptions.rejected, bool(self._topics.enabled))


# -- helpers ---------------------------------------------------------------------------------
def main(args=None, stop=None):
    """Run the node until Ctrl-C or SIGTERM (``stop``: see ``spin_node``)."""
    spin_node(DynamicsNode, "dynamics_node", args, stop)


if __name__ == "__main__":
    main()
