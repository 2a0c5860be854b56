"""``rbd_replay --live``: play the bag into a dynamics_node over ROS 2, record its answers.

A dynamics_node is started (a subprocess of this Python: ``python -m
rbd_ros.node.dynamics_node``) in a private namespace ``/rbd_replay_<pid>`` with the URDF,
``acceleration_topic: replay_acceleration`` and the requested outputs. The joint_states
(and odometry) messages are published, byte for byte as recorded, at the recorded rate
(``--rate`` times faster); before each joint_states message the node will answer, the
offline acceleration estimate is published on ``replay_acceleration`` (the node computes
τ = RNEA(q, v, a) at the commanded a), and the player waits (lock step, up to
``timeout`` s) for every expected answer, matched by header stamp. The answers are written to
the output bag (at the log time of the message they answer) and compared with the offline
results: agreement means |live - offline| <= tolerance * max(1, max |offline|) per message;
messages the node did not answer, and answers nobody expected, are counted. The node
handles its subscriptions in creation order, so when a joint_states message overtakes the
acceleration before it (a loaded machine), the node answers at the previous acceleration:
the player checks each torques answer and then sends the acceleration and the joint_states
once more (counted as "resent"; the report's comparison uses the final answers).

ROS_AUTOMATIC_DISCOVERY_RANGE defaults to LOCALHOST (set it, or ROS_DOMAIN_ID, to choose).
"""
import os
import signal
import subprocess
import sys
import tempfile
import time

import numpy as np

import rbd_ros
from ..node.conversions import dof_names
from . import bag_io
from .bag_io import ReplayError

_SHAPES = {"torques": ("effort",), "accelerations": ("data",), "inverse_inertia": ("data",),
           "rnea_derivatives": ("d_dq", "d_dv"), "aba_derivatives": ("d_dq", "d_dv")}


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

    def compare(self, m, name, offline):
        """Raw answers to write for message m / output name, comparing with offline
        arrays (tuple, or None when offline does not answer)."""
        raws = [raw for mm, n, raw in self.unexpected if mm == m and n == name]
        raw = self.answers.get((m, name))
        if raw is None:
            return raws
        if offline is not None:
            msg = bag_io.typestore().deserialize_cdr(raw, bag_io.OUTPUT_TYPES[name])
            live = [np.asarray(getattr(msg, f), np.float64) for f in _SHAPES[name]]
            for x, y in zip(live, offline):
                y = np.asarray(y).ravel()
                diff = np.abs(x - y).max() / max(1.0, np.abs(y).max()) if x.shape == y.shape \
                    else np.inf
                self.max_diff = max(self.max_diff, float(diff))
                if not diff <= self.tolerance:
                    self.disagreeing += 1
                    break
            self.compared += 1
        return [raw] + raws

    def summary(self):
        answered = sum(1 for key in self.expected if key in self.answers)
        return {"expected": len(self.expected), "answered": answered,
                "unanswered": len(self.expected) - answered,
                "unexpected": len(self.unexpected), "compared": self.compared,
                "disagreeing": self.disagreeing, "max_diff": self.max_diff,
                "tolerance": self.tolerance,
                "resent": getattr(self, "resent", 0),
                "agree": self.disagreeing == 0 and not self.unexpected}


def _node_command(ns, node_name, params_file):
    return [sys.executable, "-m", "rbd_ros.node.dynamics_node", "--ros-args",
            "-r", f"__ns:={ns}", "-r", f"__node:={node_name}", "--params-file", params_file]


def _params(urdf, outputs, floating_base, mimic, max_joint_age):
    import yaml
    p = {"robot_description": urdf, "floating_base": bool(floating_base),
         "mimic_joints": mimic, "joint_states_topic": "joint_states",
         "odometry_topic": "odom", "acceleration_topic": "replay_acceleration",
         "max_joint_age": float(max_joint_age), "unknown_velocity": "skip",
         "diagnostics_period": 0.0}
    for k in bag_io.OUTPUT_TYPES:
        p["publish_" + k] = k in outputs
    return yaml.safe_dump({"/**": {"ros__parameters": p}})


def play(reader, model, urdf, t, cons, js_ids, outputs, *, topic, odom_topic, rate,
         floating_base, mimic, max_joint_age, node_name, timeout=2.0, tolerance=1e-9,
         startup_timeout=60.0):
    os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    try:
        import rclpy
        import rclpy.duration
        from rclpy.qos import QoSProfile, ReliabilityPolicy
        from rbd_ros_interfaces.msg import JointVector
        from sensor_msgs.msg import JointState
        from nav_msgs.msg import Odometry
    except ImportError as exc:
        raise ReplayError(f"--live needs ROS 2 (rclpy) and rbd_ros_interfaces: {exc}") from exc
    if rate <= 0:
        raise ReplayError("--rate must be > 0")
    ns = f"/rbd_replay_{os.getpid()}"
    tick_of = {int(m): k for k, m in enumerate(t.index)}
    expected = {}
    for m, k in tick_of.items():
        for name in outputs:
            if name in ("accelerations", "aba_derivatives") and not t.effort_known[k]:
                continue
            expected[(m, name)] = True
    names = list(dof_names(model))
    with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
        f.write(_params(urdf, outputs, floating_base, mimic,
                        max_joint_age / rate if max_joint_age > 0 else 0.0))
        params_file = f.name
    proc = subprocess.Popen(_node_command(ns, node_name, params_file), env=dict(os.environ))
    rclpy.init()
    node = rclpy.create_node("rbd_replay_player", namespace=ns)
    answers, unexpected = {}, []
    state = {"m": -1, "stamp": None}
    try:
        reliable = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE)
        pub_js = node.create_publisher(JointState, "joint_states", reliable)
        pub_odom = node.create_publisher(Odometry, "odom", reliable)
        pub_acc = node.create_publisher(JointVector, "replay_acceleration", reliable)
        from rbd_ros_interfaces.msg import DynamicsDerivatives, JointMatrix
        classes = {"torques": JointState, "accelerations": JointVector,
                   "inverse_inertia": JointMatrix, "rnea_derivatives": DynamicsDerivatives,
                   "aba_derivatives": DynamicsDerivatives}

        def on_answer(name):
            def callback(raw):
                stamp = bytes(raw[4:12])
                if state["stamp"] == stamp and (state["m"], name) in expected:
                    answers[(state["m"], name)] = bytes(raw)
                else:
                    unexpected.append((state["m"], name, bytes(raw)))
            return callback
        subs = [node.create_subscription(classes[k], f"{ns}/{node_name}/{k}", on_answer(k),
                                         reliable, raw=True) for k in outputs]
        deadline = time.monotonic() + startup_timeout
        while (pub_js.get_subscription_count() < 1 or pub_acc.get_subscription_count() < 1
               or any(s.get_publisher_count() < 1 for s in subs)
               or (floating_base and pub_odom.get_subscription_count() < 1)):
            if proc.poll() is not None:
                raise ReplayError(f"dynamics_node exited with code {proc.returncode}")
            if time.monotonic() > deadline:
                raise ReplayError("dynamics_node did not come up within "
                                  f"{startup_timeout:.0f} s")
            rclpy.spin_once(node, timeout_sec=0.05)
        tau = rbd_ros.rnea_batch(model, t.q, t.v, t.a)[:, 6 if model.floating_base else 0:]
        resent = 0
        for _ in range(50):                               # let matching settle
            rclpy.spin_once(node, timeout_sec=0.01)
        acc_msg = JointVector()
        acc_msg.names = names
        t0_wall, t0_log, m = None, None, -1
        for con, stamp, raw in reader.messages(connections=cons):
            if t0_wall is None:
                t0_wall, t0_log = time.monotonic(), stamp
            due = t0_wall + (stamp - t0_log) * 1e-9 / rate
            while time.monotonic() < due:
                rclpy.spin_once(node, timeout_sec=max(0.0, min(0.01, due - time.monotonic())))
            if con.id not in js_ids:
                pub_odom.publish(raw)
                continue
            m += 1
            state["m"], state["stamp"] = m, bytes(raw[4:12])
            k = tick_of.get(m)
            if k is not None:
                acc_msg.header.stamp.sec = int(t.sec[k])
                acc_msg.header.stamp.nanosec = int(t.nanosec[k])
                acc_msg.data = t.a[k].tolist()
            want = [key for key in ((m, n) for n in outputs) if key in expected]
            for attempt in range(2):
                if k is not None:
                    pub_acc.publish(acc_msg)
                    pub_acc.wait_for_all_acked(rclpy.duration.Duration(seconds=0.5))
                    _spin_for(rclpy, node, 0.002)
                pub_js.publish(raw)
                end = time.monotonic() + (timeout if want else 0.0)
                while time.monotonic() < end and not all(key in answers for key in want):
                    rclpy.spin_once(node, timeout_sec=0.005)
                # the node took the joint_states before the acceleration: send both again
                if k is None or (m, "torques") not in answers or _close(
                        answers[(m, "torques")], tau[k], tolerance):
                    break
                resent += 1
                for key in want:
                    answers.pop(key, None)
        _spin_for(rclpy, node, 0.1)
    finally:
        node.destroy_node()
        rclpy.try_shutdown()
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
        os.unlink(params_file)
    result = LiveResult(answers, expected, unexpected, tolerance)
    result.resent = resent
    return result


def _close(raw, tau, tolerance):
    effort = bag_io.typestore().deserialize_cdr(raw, bag_io.JOINT_STATE).effort
    return effort.shape == tau.shape and \
        np.abs(effort - tau).max() <= tolerance * max(1.0, np.abs(tau).max())


def _spin_for(rclpy, node, seconds):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        rclpy.spin_once(node, timeout_sec=max(0.0, end - time.monotonic()))
