"""
``rbd_replay --live``: play the bag into a dynamics_node over ROS 2, record its answers.

A dynamics_node is started (a subprocess of this Python: ``python -m
rbd_ros.node.dynamics_node``) in a private namespace ``/rbd_replay_<pid>`` with the URDF, the
replay's tick-rule parameters (max_joint_age scaled by ``--rate``, unknown_velocity) and the
requested outputs. The joint_states (and odometry) messages are published, byte for byte as
recorded, at the recorded rate (``--rate`` times faster). With the estimated acceleration the
node gets ``acceleration_topic: replay_acceleration``, and before each joint_states message it
will answer the offline estimate is published there (the node computes τ = RNEA(q, v, a) at
the commanded a); with ``--acceleration zero`` it has no acceleration_topic (a = 0). The
player waits (lock step, up to ``timeout`` s) for every expected answer (the outputs
``rbd_ros.outputs.computation`` publishes for the message), matched by header stamp. The
answers are written to the output bag (at the log time of the message they answer) and
compared with the offline results: agreement means |live - offline| <= tolerance * max(1,
max |offline|) per message; messages the node did not answer, and answers nobody expected,
are counted. The node handles its subscriptions in creation order, so when a joint_states
message overtakes the acceleration before it (a loaded machine), the node answers at the
previous acceleration: the player checks each torques answer and then sends the
acceleration and the joint_states once more (counted as "resent"; the report's comparison
uses the final answers).

ROS_AUTOMATIC_DISCOVERY_RANGE defaults to LOCALHOST (set it, or ROS_DOMAIN_ID, to choose).
"""
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import numpy as np

import rbd_ros
from .. import outputs as table
from . import bag_io
from .bag_io import ReplayError
from .errors import excerpt
from .staging import GUARD


class LiveResult:
    """The node's answers by joint_states index, and the comparison with offline."""

    def __init__(self, answers, expected, unexpected, tolerance):
        self.answers = answers            # (m, output) -> raw bytes
        self.expected = expected          # (m, output) expected by the offline replay
        self.unexpected = unexpected      # [(m, output, raw)] not expected
        self.tolerance = tolerance
        self.max_diff = 0.0
        self.disagreeing = 0
        self.compared = 0
        self.resent = 0
        self.non_finite = 0

    def compare(self, m, name, offline):
        """
        Return the raw answers to write for message m / output name, comparing them.

        Raw answers to write for message m / output name, comparing with offline
        arrays (tuple, or None when offline does not answer). An answer with a NaN or inf
        is counted (``non_finite``: the node published it) and not written.
        """
        output = table.BY_NAME[name]
        raws = [raw for mm, n, raw in self.unexpected if mm == m and n == name]
        raw = self.answers.get((m, name))
        if raw is not None:
            raws.insert(0, raw)
        write = []
        for r in raws:
            msg = bag_io.typestore().deserialize_cdr(r, output.msgtype)
            live = [np.asarray(getattr(msg, f), np.float64) for f in output.fields]
            if r is raw and offline is not None:
                self._compare(live, offline)
            if all(np.isfinite(x).all() for x in live):
                write.append(r)
            else:
                self.non_finite += 1
        return write

    def _compare(self, live, offline):
        for x, y in zip(live, offline):
            y = np.asarray(y).ravel()
            diff = np.abs(x - y).max() / max(1.0, np.abs(y).max()) if x.shape == y.shape \
                else np.inf
            self.max_diff = max(self.max_diff, float(diff))
            if not diff <= self.tolerance:
                self.disagreeing += 1
                break
        self.compared += 1

    def summary(self):
        """Return the report's ``live`` section."""
        answered = sum(1 for key in self.expected if key in self.answers)
        return {"expected": len(self.expected), "answered": answered,
                "unanswered": len(self.expected) - answered,
                "unexpected": len(self.unexpected), "compared": self.compared,
                "disagreeing": self.disagreeing, "max_diff": self.max_diff,
                "tolerance": self.tolerance, "resent": self.resent,
                "non_finite": self.non_finite,
                "agree": self.disagreeing == 0 and not self.unexpected}


def _node_command(ns, node_name, params_file):
    return [sys.executable, "-m", "rbd_ros.node.dynamics_node", "--ros-args",
            "-r", f"__ns:={ns}", "-r", f"__node:={node_name}", "--params-file", params_file]


def _params(urdf, outputs, *, floating_base, mimic, max_joint_age, unknown_velocity,
            commanded):
    import yaml
    p = {"robot_description": urdf, "floating_base": bool(floating_base),
         "mimic_joints": mimic, "joint_states_topic": "joint_states",
         "odometry_topic": "odom", "acceleration_topic": "replay_acceleration" if commanded
         else "", "max_joint_age": float(max_joint_age), "unknown_velocity": unknown_velocity,
         "diagnostics_period": 0.0}
    for o in table.OUTPUTS:
        if o.parameter == "publish_" + o.name:    # not end_effector_frame (a link): off
            p[o.parameter] = o.name in outputs
    return yaml.safe_dump({"/**": {"ros__parameters": p}})


def _expected(t, outputs):
    """{(m, output): True} of what the node publishes for joint_states message m."""
    plans = {known: table.computation(outputs, known).outputs for known in (True, False)}
    return {(int(m), o.name): True for k, m in enumerate(t.index)
            for o in plans[bool(t.effort_known[k])]}


def play(reader, model, urdf, t, cons, js_ids, outputs, *, odom_topic, rate, floating_base,
         mimic, max_joint_age, unknown_velocity, acceleration, node_name, timeout=2.0,
         tolerance=1e-9, startup_timeout=60.0, log_path=None):
    """
    Play the bag's joint_states (and odometry) into a dynamics_node; a LiveResult.

    The node runs in a session of its own (a terminal's Ctrl-C reaches only rbd_replay, which
    stops it: SIGINT, then SIGKILL after 10 s), its output goes to ``log_path`` (else a
    temporary file, removed), and ROS 2 installs no signal handlers: SIGINT/SIGTERM stop the
    replay through ``staging.GUARD``, and the node is stopped on the way out.
    """
    os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    try:
        import rclpy
        from rclpy.signals import SignalHandlerOptions
    except ImportError as exc:
        raise ReplayError(f"--live needs ROS 2 (rclpy) and rbd_ros_interfaces: {exc}") from exc
    if rate <= 0:
        raise ReplayError("--rate must be > 0")
    domain = os.environ.get("ROS_DOMAIN_ID", "0").strip() or "0"
    if not domain.isdigit() or int(domain) > 232:      # Fast DDS would exit(1) the process
        raise ReplayError(f"ROS_DOMAIN_ID must be an integer from 0 to 232, got "
                          f"{excerpt(domain, 20)}")
    ns = f"/rbd_replay_{os.getpid()}"
    commanded = acceleration == "estimate"
    scratch, proc = tempfile.mkdtemp(prefix="rbd_replay_live_"), None
    try:
        params_file = os.path.join(scratch, "params.yaml")
        with open(params_file, "w") as f:
            f.write(_params(urdf, outputs, floating_base=floating_base, mimic=mimic,
                            max_joint_age=max_joint_age / rate if max_joint_age > 0 else 0.0,
                            unknown_velocity=unknown_velocity, commanded=commanded))
        log_path = str(log_path or os.path.join(scratch, "node.log"))
        os.makedirs(os.path.dirname(os.path.abspath(log_path)), exist_ok=True)
        with GUARD.holding(), open(log_path, "wb") as log:
            proc = subprocess.Popen(_node_command(ns, node_name, params_file),
                                    env=dict(os.environ), stdin=subprocess.DEVNULL,
                                    stdout=log, stderr=subprocess.STDOUT,
                                    start_new_session=True)
        rclpy.init(signal_handler_options=SignalHandlerOptions.NO)
        try:
            player = _Player(ns, node_name, model, t, outputs, commanded, floating_base,
                             timeout, tolerance)
            try:
                player.wait_for_node(proc, startup_timeout, log_path)
                player.play(reader, cons, js_ids, rate)
            finally:
                with GUARD.holding(raise_pending=False):
                    player.node.destroy_node()
        finally:
            with GUARD.holding(raise_pending=False):
                rclpy.try_shutdown()
    finally:
        with GUARD.holding(raise_pending=False):
            if proc is not None:
                _stop(proc)
            shutil.rmtree(scratch, ignore_errors=True)
    result = LiveResult(player.answers, player.expected, player.unexpected, tolerance)
    result.resent = player.resent
    return result


def _stop(proc):
    """Stop the node: SIGINT, then SIGKILL if it has not exited within 10 s."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def _tail(path, limit=300):
    """Quote the last ``limit`` characters of a log file (for an error message)."""
    try:
        with open(path, "rb") as f:
            f.seek(max(0, os.path.getsize(path) - limit))
            return repr(f.read().decode("utf-8", "replace").strip()[-limit:])
    except OSError:
        return "(no log)"


class _Player:
    """The player's node: publishers of the inputs, subscriptions to the node's outputs."""

    def __init__(self, ns, node_name, model, t, outputs, commanded, floating_base, timeout,
                 tolerance):
        import rclpy
        import rclpy.duration
        from rclpy.qos import QoSProfile, ReliabilityPolicy
        from ..node.conversions import message_class
        try:
            JointVector = message_class(table.JOINT_VECTOR)
            classes = {o.name: message_class(o.msgtype) for o in table.OUTPUTS}
            JointState, Odometry = (message_class(table.JOINT_STATE),
                                    message_class(bag_io.ODOMETRY))
        except ImportError as exc:
            raise ReplayError(f"--live needs rbd_ros_interfaces and nav_msgs: {exc}") from exc
        self.rclpy, self.t, self.outputs = rclpy, t, outputs
        self.model, self.service = model, f"{ns}/{node_name}/inverse_dynamics"
        self.timeout, self.tolerance = timeout, tolerance
        self.commanded, self.floating_base = commanded, floating_base
        self.node = node = rclpy.create_node("rbd_replay_player", namespace=ns)
        self.ack = rclpy.duration.Duration(seconds=0.5)
        reliable = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE)
        self.pub_js = node.create_publisher(JointState, "joint_states", reliable)
        self.pub_odom = node.create_publisher(Odometry, "odom", reliable)
        self.pub_acc = node.create_publisher(JointVector, "replay_acceleration", reliable)
        self.acc_msg = JointVector()
        self.acc_msg.names = list(table.dof_names(model))
        self.tick_of = {int(m): k for k, m in enumerate(t.index)}
        self.expected = _expected(t, outputs)
        self.answers, self.unexpected = {}, []
        self.state = {"m": -1, "stamp": None}
        self.resent = 0
        self.tau = rbd_ros.rnea_batch(model, t.q, t.v, t.a)[:, model.nv_base:]
        self.subs = [node.create_subscription(classes[k], f"{ns}/{node_name}/{k}",
                                              self._on_answer(k), reliable, raw=True)
                     for k in outputs]

    def _on_answer(self, name):
        def callback(raw):
            state = self.state
            if state["stamp"] == bytes(raw[4:12]) and (state["m"], name) in self.expected:
                self.answers[(state["m"], name)] = bytes(raw)
            else:
                self.unexpected.append((state["m"], name, bytes(raw)))
        return callback

    def wait_for_node(self, proc, startup_timeout, log_path):
        """
        Wait until the node's endpoints match the player's.

        ReplayError if it never does, with the end of the node's log.
        """
        deadline = time.monotonic() + startup_timeout
        while (self.pub_js.get_subscription_count() < 1
               or (self.commanded and self.pub_acc.get_subscription_count() < 1)
               or any(s.get_publisher_count() < 1 for s in self.subs)
               or (self.floating_base and self.pub_odom.get_subscription_count() < 1)):
            if proc.poll() is not None:
                raise ReplayError(f"dynamics_node exited with code {proc.returncode}; its "
                                  f"log ends: {_tail(log_path)}")
            if time.monotonic() > deadline:
                raise ReplayError("dynamics_node did not come up within "
                                  f"{startup_timeout:.0f} s; its log ends: {_tail(log_path)}")
            self.rclpy.spin_once(self.node, timeout_sec=0.05)
        self.wait_for_model(proc, deadline, log_path)
        self.spin_for(0.5)                                # let matching settle

    def wait_for_model(self, proc, deadline, log_path):
        """
        Wait until the node has loaded the robot: its ~/inverse_dynamics answers.

        It loads the description on a thread of its own after its topics are up: a first
        message sent before was skipped ("no robot model yet") and never answered (on a
        loaded machine, one message in two runs of the live test).
        """
        from rbd_ros_interfaces.srv import InverseDynamics
        model = self.model
        client = self.node.create_client(InverseDynamics, self.service)
        q, zeros = model.neutral(), np.zeros(model.nv)
        nq, nv = model.nq_base, model.nv_base
        request = InverseDynamics.Request(
            joint_names=list(model.joint_names), q=q[nq:].tolist(), base_q=q[:nq].tolist(),
            v=zeros[nv:].tolist(), base_v=zeros[:nv].tolist(), a=zeros[nv:].tolist(),
            base_a=zeros[:nv].tolist())
        while True:
            if client.service_is_ready():
                future = client.call_async(request)
                end = min(deadline, time.monotonic() + 1.0)
                while not future.done() and time.monotonic() < end:
                    self.rclpy.spin_once(self.node, timeout_sec=0.05)
                if future.done() and future.result().success:
                    break
                if not future.done():
                    client.remove_pending_request(future)
            if proc.poll() is not None or time.monotonic() > deadline:
                raise ReplayError("dynamics_node did not load the robot; its log ends: "
                                  f"{_tail(log_path)}")
            self.rclpy.spin_once(self.node, timeout_sec=0.05)
        self.node.destroy_client(client)

    def play(self, reader, cons, js_ids, rate):
        """Publish the messages of ``cons`` at the recorded rate times ``rate``."""
        t0_wall, t0_log, m = None, None, -1
        for con, stamp, raw in reader.messages(connections=cons):
            if t0_wall is None:
                t0_wall, t0_log = time.monotonic(), stamp
            due = t0_wall + (stamp - t0_log) * 1e-9 / rate
            while time.monotonic() < due:
                self.rclpy.spin_once(self.node,
                                     timeout_sec=max(0.0, min(0.01, due - time.monotonic())))
            if con.id not in js_ids:
                self.pub_odom.publish(raw)
                continue
            m += 1
            self.joint_states(m, raw)
        self.spin_for(0.1)

    def joint_states(self, m, raw):
        """
        Publish joint_states message ``m`` and wait for its answers.

        Publish joint_states message ``m`` (after its commanded acceleration) and wait for
        its answers; when the node took it before the acceleration, send both again.
        """
        self.state["m"], self.state["stamp"] = m, bytes(raw[4:12])
        k = self.tick_of.get(m)
        t = self.t
        commanded = self.commanded and k is not None
        if commanded:
            self.acc_msg.header.stamp.sec = int(t.sec[k])
            self.acc_msg.header.stamp.nanosec = int(t.nanosec[k])
            self.acc_msg.data = t.a[k].tolist()
        want = [key for key in ((m, n) for n in self.outputs) if key in self.expected]
        for _ in range(2):
            if commanded:
                self.pub_acc.publish(self.acc_msg)
                self.pub_acc.wait_for_all_acked(self.ack)
                self.spin_for(0.002)
            self.pub_js.publish(raw)
            end = time.monotonic() + (self.timeout if want else 0.0)
            while time.monotonic() < end and not all(key in self.answers for key in want):
                self.rclpy.spin_once(self.node, timeout_sec=0.005)
            if not commanded or (m, "torques") not in self.answers or _close(
                    self.answers[(m, "torques")], self.tau[k], self.tolerance):
                return
            self.resent += 1
            for key in want:
                self.answers.pop(key, None)

    def spin_for(self, seconds):
        """Spin the player's node for ``seconds``."""
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            self.rclpy.spin_once(self.node, timeout_sec=max(0.0, end - time.monotonic()))


def _close(raw, tau, tolerance):
    effort = bag_io.typestore().deserialize_cdr(raw, bag_io.JOINT_STATE).effort
    return effort.shape == tau.shape and \
        np.abs(effort - tau).max() <= tolerance * max(1.0, np.abs(tau).max())
