"""The rbd_ros dynamics node: joint states in, dynamics out, on topics and services.

Thin glue around the core (``rbd_ros``): messages become arrays (``conversions``,
``joint_cache``), one core call per tick computes every enabled output, arrays become
messages. ``config/dynamics.yaml`` documents every parameter.

Topics (relative names resolve in the node's namespace; ``~/`` is the node's own):
  in   robot_description  std_msgs/String (reliable, transient local, depth 1), unless the
                          ``robot_description`` parameter holds the URDF
       joint_states       sensor_msgs/JointState (best effort: matches reliable and
                          best-effort publishers), merged by joint name
       odom               nav_msgs/Odometry, floating base only: base pose and twist
       commanded accelerations (rbd_ros_interfaces/JointVector), when ``acceleration_topic``
  out  ~/torques          sensor_msgs/JointState, effort = τ = ID(q, v, a)
       ~/accelerations    rbd_ros_interfaces/JointVector, q̈ = FD(q, v, measured effort)
       ~/inverse_inertia  rbd_ros_interfaces/JointMatrix, M⁻¹(q)
       ~/rnea_derivatives, ~/aba_derivatives   rbd_ros_interfaces/DynamicsDerivatives
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
from . import check_executor, conversions, spin_node
from ..cdr import JointStateDecoder
from .joint_cache import JointCache

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

PARAMETERS = {
    # name: (default, description) -- config/dynamics.yaml documents each one
    "robot_description": ("", "URDF XML; empty: subscribe to robot_description_topic"),
    "robot_description_topic": ("robot_description", "std_msgs/String topic with the URDF"),
    "floating_base": (False, "the root link is a free-flyer; its state comes from odometry"),
    "odometry_topic": ("odom", "nav_msgs/Odometry of the base (floating_base only)"),
    "mimic_joints": ("error", "'error': reject URDF mimic joints; 'independent': own dof"),
    "joint_states_topic": ("joint_states", "sensor_msgs/JointState input"),
    "acceleration_topic": ("", "JointVector of commanded accelerations; empty: a = 0"),
    "rate_hz": (0.0, "0: compute on every joint_states message; > 0: at this rate"),
    "max_joint_age": (0.5, "s; a joint not updated for longer is stale (0: never)"),
    "unknown_velocity": ("skip", "NaN/absent velocity: 'skip' the tick or use 'zero'"),
    "gravity": ([0.0, 0.0, -9.81], "world-frame gravity, m/s²"),
    "publish_torques": (True, "~/torques: RNEA at the commanded (or zero) acceleration"),
    "publish_accelerations": (True, "~/accelerations: ABA at the measured effort"),
    "publish_inverse_inertia": (False, "~/inverse_inertia: M⁻¹"),
    "publish_rnea_derivatives": (False, "~/rnea_derivatives: ∂τ/∂q, ∂τ/∂v"),
    "publish_aba_derivatives": (False, "~/aba_derivatives: ∂q̈/∂q, ∂q̈/∂v"),
    "diagnostics_period": (1.0, "s between /diagnostics messages (0: none)"),
    "executor": ("events", "'events': rclpy's EventsExecutor (less CPU per message); "
                 "'single_threaded': rclpy's default executor"),
}


class _Robot:
    """What one robot description gives the node: swapped as a whole, never edited."""

    def __init__(self, model, xml):
        self.model = model
        self.xml = xml
        self.cache = JointCache(model.joint_names)
        self.dof_names = list(conversions.dof_names(model))
        self.joint_names = list(model.joint_names)
        base_q, base_v = (7, 6) if model.floating_base else (0, 0)
        self.q = np.zeros(model.nq)               # assembled each tick (views into these)
        self.v = np.zeros(model.nv)
        self.tau = np.zeros(model.nv)             # the base is not actuated: its τ stays 0
        self.a = np.zeros(model.nv)
        self.joint_q = self.q[base_q:]            # the joints' part of q, v and τ
        self.joint_v = self.v[base_v:]
        self.joint_tau = self.tau[base_v:]
        self.base_known = not model.floating_base
        self.base_received = -np.inf               # time.monotonic() of the last odometry
        self.commanded = None                     # True once commanded accelerations came
        # output messages, serialized once: a tick patches in the stamp and the numbers
        # (converting the name lists each time would cost more than the dynamics)
        nv, nj = model.nv, len(self.joint_names)
        encoder = conversions.OutputEncoder
        self.encoders = {"torques": encoder(JointState(name=self.joint_names), ("effort",),
                                            (nj,))}
        if rbd_msg is not None:
            names = self.dof_names
            self.encoders.update(
                accelerations=encoder(rbd_msg.JointVector(names=names), ("data",), (nv,)),
                inverse_inertia=encoder(rbd_msg.JointMatrix(names=names, rows=nv, cols=nv),
                                        ("data",), (nv * nv,)),
                **{k: encoder(rbd_msg.DynamicsDerivatives(names=names, size=nv),
                              ("d_dq", "d_dv"), (nv * nv, nv * nv))
                   for k in ("rnea_derivatives", "aba_derivatives")})


class DynamicsNode(Node):
    """The node; ``main()`` runs it. Tests create it in-process with parameter overrides."""

    def __init__(self, node_name="rbd_dynamics", **kwargs):
        super().__init__(node_name, **kwargs)
        for name, (default, description) in PARAMETERS.items():
            self.declare_parameter(name, default)
        p = {name: self.get_parameter(name).value for name in PARAMETERS}
        self.params = p
        self.outputs = {k: bool(p["publish_" + k]) for k in
                        ("torques", "accelerations", "inverse_inertia", "rnea_derivatives",
                         "aba_derivatives")}
        if rbd_msg is None:
            custom = [k for k in self.outputs if k != "torques" and self.outputs[k]]
            self.get_logger().warning(
                "rbd_ros_interfaces is not installed: services are off, and so are the "
                f"outputs {custom} (only ~/torques and /diagnostics are published). Build it "
                "with scripts/build_interfaces.py or colcon (see README).")
            for k in custom:
                self.outputs[k] = False
        if p["unknown_velocity"] not in ("skip", "zero"):
            raise ValueError("unknown_velocity must be 'skip' or 'zero'")
        check_executor(p["executor"])          # spin_node uses it; a typo fails here, early
        self._robot = None                        # a _Robot, replaced atomically
        self._loading = threading.Lock()
        self._pending_lock = threading.Lock()
        self._pending_description = None
        self._loader = None
        self._stats = {"ticks": 0, "published": 0, "skipped": 0, "bad_messages": 0,
                       "joint_states": 0}
        self._skip_reasons = {}
        self._warned = {}                          # text -> time.monotonic() last logged
        self._latency = deque(maxlen=5000)        # seconds, compute + publish, per tick
        self._last_computed_update = -1

        self._pub = {}
        self._pub["torques"] = self.create_publisher(JointState, "~/torques", 10)
        if rbd_msg is not None:
            self._pub["accelerations"] = self.create_publisher(rbd_msg.JointVector,
                                                               "~/accelerations", 10)
            self._pub["inverse_inertia"] = self.create_publisher(rbd_msg.JointMatrix,
                                                                 "~/inverse_inertia", 10)
            for k in ("rnea_derivatives", "aba_derivatives"):
                self._pub[k] = self.create_publisher(rbd_msg.DynamicsDerivatives, "~/" + k, 10)
            self._create_services()
        self._diag_pub = self.create_publisher(DiagnosticArray, "/diagnostics", 10)

        # the 1 kHz inputs arrive serialized (raw=True) and are decoded by rbd_ros.cdr
        self._joint_state_decoder = JointStateDecoder()
        self.create_subscription(JointState, p["joint_states_topic"], self._on_joint_states,
                                 STATE_QOS, raw=True)
        if p["floating_base"]:
            if Odometry is None:
                raise RuntimeError("floating_base needs nav_msgs (pip: ros-jazzy-nav-msgs)")
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

        if p["robot_description"]:
            self._load_description(p["robot_description"], "the robot_description parameter")
        else:
            self.create_subscription(String, p["robot_description_topic"],
                                     self._on_description, DESCRIPTION_QOS)
            self.get_logger().info(f"waiting for the URDF on {p['robot_description_topic']}")

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
            robot = _Robot(model, xml)
            slow = {k: e.fallback_reason for k, e in robot.encoders.items() if e.template is None}
            if slow:
                self.get_logger().warning(f"outputs {sorted(slow)} are published as messages, "
                                          f"not pre-serialized (slower): {slow}")
            if current is not None and current.model.floating_base and model.floating_base:
                robot.q[:7] = current.q[:7]
                robot.v[:6] = current.v[:6]
                robot.base_known = current.base_known
                robot.base_received = current.base_received
            self._robot = robot                   # the swap: one reference assignment
            self.get_logger().info(
                f"model {model.name!r} from {source}: {model.nbodies} bodies, nq={model.nq}, "
                f"nv={model.nv}, {'floating' if model.floating_base else 'fixed'} base")

    # -- inputs -----------------------------------------------------------------------------
    def _on_joint_states(self, raw):
        self._stats["joint_states"] += 1
        robot = self._robot
        if robot is None:
            self._skip("no robot model yet (waiting for robot_description)")
            return
        try:
            names, stamp, position, velocity, effort = conversions.decode_joint_state(
                self._joint_state_decoder, raw)
            unknown, merged = robot.cache.merge(names, position, velocity, effort, stamp,
                                                time.monotonic())
        except ValueError as exc:
            self._stats["bad_messages"] += 1
            self._skip(f"malformed joint_states ignored: {exc}")
            return
        if unknown:
            self._warn(f"joint_states names joints the model does not have: "
                       f"{list(unknown)[:10]} (ignored)", 10.0)
        if not merged:
            return          # none of the model's joints: nothing new to compute or stamp
        if self.params["rate_hz"] <= 0:
            self._tick(robot)

    def _on_odometry(self, raw):
        robot = self._robot
        if robot is None:
            return
        try:
            arr = conversions.decode_odometry(raw)
        except ValueError as exc:
            self._stats["bad_messages"] += 1
            self._skip(f"malformed odometry ignored: {exc}")
            return
        if not np.all(np.isfinite(arr)) or np.dot(arr[3:7], arr[3:7]) < 1e-12:
            self._skip("odometry with NaN/inf or a zero quaternion ignored")
            return
        robot.q[:7] = arr[:7]
        robot.v[:6] = arr[7:]                     # Odometry's twist is in the child (base) frame
        robot.base_known = True
        robot.base_received = time.monotonic()

    def _on_commanded_acceleration(self, msg):
        robot = self._robot
        if robot is None:
            return
        names = list(msg.names)
        data = conversions.vector(msg.data)
        if len(names) != len(data) or sorted(names) != sorted(robot.dof_names):
            self._skip(f"commanded acceleration must name every degree of freedom once "
                       f"({len(robot.dof_names)}): {robot.dof_names[:6]}...")
            robot.commanded = None
            return
        index = {n: k for k, n in enumerate(names)}
        a = data[[index[n] for n in robot.dof_names]]
        if not np.all(np.isfinite(a)):
            self._skip("commanded acceleration with NaN/inf ignored")
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
        self._last_computed_update = robot.cache.updates
        cache = robot.cache
        if not cache.complete():
            missing = cache.missing()
            self._skip(f"waiting for joint states of {len(missing)} joints: {missing[:8]}")
            return
        stale = cache.stale(self.params["max_joint_age"], time.monotonic())
        if stale:
            self._skip(f"joint states older than {self.params['max_joint_age']} s: {stale[:8]}")
            return
        if not robot.base_known:
            self._skip(f"waiting for the base state on {self.params['odometry_topic']}")
            return
        max_age = self.params["max_joint_age"]
        if (robot.model.floating_base and max_age > 0
                and time.monotonic() - robot.base_received > max_age):
            self._skip(f"base odometry older than {max_age} s")
            return
        if self.params["acceleration_topic"] and not robot.commanded:
            self._skip(f"waiting for commanded accelerations on "
                       f"{self.params['acceleration_topic']}")
            return
        robot.joint_q[:] = cache.position
        velocity = cache.velocity
        if np.isnan(velocity).any():
            if self.params["unknown_velocity"] == "skip":
                self._skip("joint velocities unknown (NaN or absent): tick skipped; set "
                           "unknown_velocity: zero to treat them as zero")
                return
            velocity = np.nan_to_num(velocity, nan=0.0)
        robot.joint_v[:] = velocity
        effort_known = bool(np.isfinite(cache.effort).all())
        robot.joint_tau[:] = cache.effort if effort_known else 0.0
        if not effort_known and (self.outputs["accelerations"]
                                 or self.outputs["aba_derivatives"]):
            self._warn("joint efforts unknown (NaN, inf or absent): forward dynamics outputs "
                       "are not published", 5.0)
        model = robot.model
        try:
            result = self._compute(model, robot, effort_known)
        except ValueError as exc:
            self._skip(f"dynamics refused the state: {exc}")
            return
        self._publish(robot, result, cache.stamp, effort_known)
        self._stats["published"] += 1
        self._latency.append(time.perf_counter() - t0)

    def _compute(self, model, robot, effort_known):
        """One core call for every enabled output."""
        out = self.outputs
        if out["inverse_inertia"] or out["rnea_derivatives"] or out["aba_derivatives"]:
            d = rbd_ros.compute_all(model, robot.q, robot.v, a=robot.a, tau=robot.tau)
            return {"tau": d.tau, "qdd": d.qdd, "Minv": d.Minv, "dtau_dq": d.dtau_dq,
                    "dtau_dv": d.dtau_dv, "dqdd_dq": d.dqdd_dq, "dqdd_dv": d.dqdd_dv}
        if out["accelerations"] and effort_known:
            tau, qdd = rbd_ros.inverse_and_forward_dynamics(model, robot.q, robot.v, a=robot.a,
                                                            tau=robot.tau)
            return {"tau": tau, "qdd": qdd}
        return {"tau": rbd_ros.rnea(model, robot.q, robot.v, robot.a)}

    def _publish(self, robot, r, stamp, effort_known):
        """``stamp``: (sec, nanosec) of the joint_states message the tick computed from."""
        out = self.outputs
        enc = robot.encoders
        pub = self._pub
        if out["torques"]:
            nbase = 6 if robot.model.floating_base else 0
            pub["torques"].publish(enc["torques"].encode(stamp, r["tau"][nbase:]))
        if rbd_msg is None:
            return
        if out["accelerations"] and effort_known:
            pub["accelerations"].publish(enc["accelerations"].encode(stamp, r["qdd"]))
        if out["inverse_inertia"]:
            pub["inverse_inertia"].publish(enc["inverse_inertia"].encode(stamp, r["Minv"]))
        for key, d_dq, d_dv, known in (("rnea_derivatives", "dtau_dq", "dtau_dv", True),
                                       ("aba_derivatives", "dqdd_dq", "dqdd_dv", effort_known)):
            if out[key] and known:
                pub[key].publish(enc[key].encode(stamp, r[d_dq], r[d_dv]))

    def _skip(self, reason):
        self._stats["skipped"] += 1
        reasons = self._skip_reasons
        if reason not in reasons and len(reasons) >= 32:    # bounded: texts carry details
            reason_key = "other reasons"
        else:
            reason_key = reason
        reasons[reason_key] = reasons.get(reason_key, 0) + 1
        self._warn(reason, 2.0)

    def _warn(self, text, period):
        """Log ``text`` at most once per ``period`` seconds. Throttled here, not by rclpy:
        its ``throttle_duration_sec`` inspects the caller's source file on every call (~0.2 ms,
        measured), which a tick skipped at 1 kHz cannot afford."""
        now = time.monotonic()
        last = self._warned.get(text)
        if last is None or now - last >= period:
            if len(self._warned) >= 256:
                self._warned.clear()
            self._warned[text] = now
            self.get_logger().warning(text)

    # -- services ---------------------------------------------------------------------------
    def _create_services(self):
        for name, srv_type, handler in (
                ("inverse_dynamics", rbd_srv.InverseDynamics, self._srv_inverse_dynamics),
                ("forward_dynamics", rbd_srv.ForwardDynamics, self._srv_forward_dynamics),
                ("inverse_inertia", rbd_srv.InverseInertia, self._srv_inverse_inertia),
                ("inverse_dynamics_derivatives", rbd_srv.InverseDynamicsDerivatives,
                 self._srv_id_derivatives),
                ("forward_dynamics_derivatives", rbd_srv.ForwardDynamicsDerivatives,
                 self._srv_fd_derivatives)):
            self.create_service(srv_type, "~/" + name, _guarded(self, name, handler))

    def _srv_inverse_dynamics(self, robot, req, resp):
        q, v, a, order = _request_state(robot, req, ("v", "a"))
        tau = rbd_ros.rnea(robot.model, q, v, a)
        resp.tau, resp.base_tau = _split(robot, tau, order)

    def _srv_forward_dynamics(self, robot, req, resp):
        q, v, tau, order = _request_state(robot, req, ("v", "tau"))
        qdd = rbd_ros.aba(robot.model, q, v, tau)
        resp.qdd, resp.base_qdd = _split(robot, qdd, order)

    def _srv_inverse_inertia(self, robot, req, resp):
        q, order = _request_state(robot, req, ())
        Minv = rbd_ros.minv(robot.model, q)
        names, idx = _request_dofs(robot, req, order)
        conversions.fill_joint_matrix(resp.minv, resp.minv.header, names, Minv[np.ix_(idx, idx)])

    def _srv_id_derivatives(self, robot, req, resp):
        q, v, a, order = _request_state(robot, req, ("v", "a"))
        dq, dv, _ = rbd_ros.rnea_derivatives(robot.model, q, v, a)
        names, idx = _request_dofs(robot, req, order)
        conversions.fill_derivatives(resp.derivatives, resp.derivatives.header, names,
                                     dq[np.ix_(idx, idx)], dv[np.ix_(idx, idx)])

    def _srv_fd_derivatives(self, robot, req, resp):
        q, v, tau, order = _request_state(robot, req, ("v", "tau"))
        dq, dv, _ = rbd_ros.aba_derivatives(robot.model, q, v, tau)
        names, idx = _request_dofs(robot, req, order)
        conversions.fill_derivatives(resp.derivatives, resp.derivatives.header, names,
                                     dq[np.ix_(idx, idx)], dv[np.ix_(idx, idx)])

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

    def latency_stats(self):
        """(count, p50, p99, max) of recent tick latencies in µs (for tools and tests)."""
        lat = np.array(self._latency) * 1e6
        if not len(lat):
            return 0, float("nan"), float("nan"), float("nan")
        return len(lat), np.percentile(lat, 50), np.percentile(lat, 99), lat.max()


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


class RequestError(ValueError):
    pass


def _request_state(robot, req, fields):
    """(q, *fields, order) in model order from a service request, or RequestError."""
    model = robot.model
    names = list(req.joint_names)
    if len(set(names)) != len(names):
        raise RequestError("joint_names has duplicates")
    unknown = sorted(set(names) - set(robot.joint_names))
    missing = sorted(set(robot.joint_names) - set(names))
    if unknown or missing:
        raise RequestError(f"joint_names must name each joint of the model once; unknown: "
                           f"{unknown[:8]}, missing: {missing[:8]}")
    index = {n: k for k, n in enumerate(names)}
    order = np.array([index[n] for n in robot.joint_names], np.intp)  # model joint -> request
    nj = len(names)
    out = []
    for field in ("q",) + tuple(fields):
        values = conversions.vector(getattr(req, field))
        if len(values) != nj:
            raise RequestError(f"{field} has {len(values)} values for {nj} joint_names")
        base = conversions.vector(getattr(req, "base_" + field))
        nbase = (7 if field == "q" else 6) if model.floating_base else 0
        if len(base) != nbase:
            raise RequestError(f"base_{field} must have {nbase} values for this "
                               f"{'floating' if nbase else 'fixed'}-base model, got {len(base)}")
        bad = np.flatnonzero(~np.isfinite(values))
        if len(bad):
            raise RequestError(f"{field} of {names[bad[0]]!r} is NaN or inf ({values[bad[0]]})")
        if not np.all(np.isfinite(base)):
            raise RequestError(f"base_{field} contains NaN or inf")
        out.append(np.concatenate([base, values[order]]))
    return (*out, order)


def _request_dofs(robot, req, order):
    """(names, indices) of the v entries in the request's joint order (base first)."""
    nbase = 6 if robot.model.floating_base else 0
    inverse = np.empty_like(order)
    inverse[order] = np.arange(len(order))              # request joint k -> model joint
    idx = np.concatenate([np.arange(nbase), nbase + inverse]).astype(np.intp)
    return [robot.dof_names[i] for i in idx], idx


def _split(robot, x, order):
    """A v-sized result as (joints in request order, base part)."""
    nbase = 6 if robot.model.floating_base else 0
    inverse = np.empty_like(order)
    inverse[order] = np.arange(len(order))
    return conversions.doubles(x[nbase:][inverse]), conversions.doubles(x[:nbase])


def _guarded(node, name, handler):
    """A service callback that answers success=false with the reason instead of failing."""
    def callback(req, resp):
        robot = node._robot
        if robot is None:
            resp.success, resp.message = False, "no robot model yet"
            return resp
        try:
            handler(robot, req, resp)
            resp.success, resp.message = True, ""
        except ValueError as exc:              # RequestError and the core's input errors
            resp.success, resp.message = False, f"{name}: {exc}"
        return resp
    return callback


def main(args=None):
    spin_node(DynamicsNode, "dynamics_node", args)


if __name__ == "__main__":
    main()
