"""
A joint-state source for trying the dynamics node without a robot.

``TrajectorySource`` publishes sensor_msgs/JointState on ``joint_states`` at ``rate_hz`` along a
smooth trajectory of a robot: each joint follows a sum of sines about the middle of its limits,
inside them (±π for an unlimited joint) and below its velocity limit. Every message carries

  position q(t), velocity v(t) = q̇(t), and effort τ = RNEA(q, v, a(t)),

the torque that produces the trajectory's acceleration a(t) = q̈(t), plus optional Gaussian
noise on each field. Forward dynamics at the published effort therefore gives back a(t): the
dynamics node's ``~/accelerations`` can be checked live against :meth:`state_at` (``rbd_demo``
does). A floating-base URDF is driven with its base held fixed (the efforts are those of the
fixed-base tree; no odometry is published).

Optionally (``publish_description``) it publishes the URDF on ``robot_description`` as
robot_state_publisher does (std_msgs/String, reliable, transient local, depth 1).

    joint_trajectory_source --ros-args -p urdf_file:=/path/robot.urdf -p publish_description:=true
"""
import os

import numpy as np
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from std_msgs.msg import String

import rbd_ros
from ..node import conversions, spin_node
from ..formats.text_files import read_text
from ..description.size_limits import DEFAULT_LIMITS

DESCRIPTION_QOS = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                             durability=DurabilityPolicy.TRANSIENT_LOCAL,
                             history=HistoryPolicy.KEEP_LAST)

PARAMETERS = {
    # name: (default, description)
    "urdf_file": ("", "URDF file path; empty: the bundled rbd_arm7"),
    "mimic_joints": ("coupled", "URDF mimic joints: 'coupled' to their leaders (the model's "
                     "dofs: the independent joints); 'independent': own dof; 'error': reject"),
    "rate_hz": (200.0, "joint_states messages per second"),
    "joint_states_topic": ("joint_states", "sensor_msgs/JointState output"),
    "publish_description": (False, "also publish the URDF (reliable, transient local)"),
    "robot_description_topic": ("robot_description", "std_msgs/String topic for the URDF"),
    "frequency": (0.2, "Hz, frequency of the slowest sine"),
    "harmonics": (3, "sines per joint"),
    "amplitude": (0.8, "fraction (0..1] of each joint's half range the motion may use"),
    "seed": (0, "seed of the sines' frequencies, weights and phases"),
    "position_noise": (0.0, "rad (m): standard deviation of noise added to position"),
    "velocity_noise": (0.0, "rad/s (m/s): standard deviation of noise added to velocity"),
    "effort_noise": (0.0, "N·m (N): standard deviation of noise added to effort"),
}

UNLIMITED_HALF_RANGE = np.pi


class SineTrajectory:
    """q(t) = c + Σ_k A_k sin(ω_k t + φ_k) per joint, within [lower, upper] and |q̇| ≤ v_max."""

    def __init__(self, model, frequency=0.2, harmonics=3, amplitude=0.8, seed=0):
        if frequency <= 0 or harmonics < 1 or not 0 < amplitude <= 1:
            raise ValueError("need frequency > 0, harmonics >= 1 and 0 < amplitude <= 1")
        rng = np.random.default_rng(seed)
        n = len(model.joint_names)
        lower, upper = np.asarray(model.lower, float), np.asarray(model.upper, float)
        finite = np.isfinite(lower) & np.isfinite(upper)
        self.center = np.where(finite, 0.5 * (lower + upper), 0.0)
        half = np.where(finite, 0.5 * (upper - lower), UNLIMITED_HALF_RANGE)
        k = np.arange(harmonics)
        # frequencies: the base one, then incommensurate multiples, each slightly per joint
        spread = rng.uniform(0.8, 1.25, (n, harmonics))
        self.omega = 2 * np.pi * frequency * (1 + 1.618 * k)[None, :] * spread
        weights = rng.uniform(0.5, 1.0, (n, harmonics)) / (1 + k)[None, :]
        weights /= weights.sum(axis=1, keepdims=True)            # Σ_k |A_k| = amplitude·half
        self.amp = amplitude * half[:, None] * weights
        vmax = np.asarray(model.velocity_limit, float)
        peak_v = (self.amp * self.omega).sum(axis=1)
        scale = np.where(np.isfinite(vmax) & (peak_v > 0),
                         np.minimum(1.0, 0.9 * vmax / np.maximum(peak_v, 1e-300)), 1.0)
        self.amp *= scale[:, None]
        self.phase = rng.uniform(0, 2 * np.pi, (n, harmonics))

    def __call__(self, t):
        """(q, v, a) at time t (seconds), arrays of one value per joint."""
        arg = self.omega * t + self.phase
        s, c = np.sin(arg), np.cos(arg)
        q = self.center + (self.amp * s).sum(axis=1)
        v = (self.amp * self.omega * c).sum(axis=1)
        a = -(self.amp * self.omega ** 2 * s).sum(axis=1)
        return q, v, a


def load_urdf(urdf_file):
    """(path, xml) of a URDF file, or of the bundled rbd_arm7 when ``urdf_file`` is empty."""
    path = urdf_file or rbd_ros.robots.path()
    try:
        return path, read_text(path, DEFAULT_LIMITS.max_bytes)
    except ValueError as exc:
        raise ValueError(f"urdf_file {path[:120]!r}: {exc}") from None


class TrajectorySource(Node):
    """The joint-state source; ``main()`` runs it, ``rbd_demo`` creates it in-process."""

    def __init__(self, node_name="joint_trajectory_source", **kwargs):
        super().__init__(node_name, **kwargs)
        for name, (default, _description) in PARAMETERS.items():
            self.declare_parameter(name, default)
        p = {name: self.get_parameter(name).value for name in PARAMETERS}
        self.params = p
        if p["rate_hz"] <= 0:
            raise ValueError("rate_hz must be > 0")
        self.urdf_path, self.urdf = load_urdf(p["urdf_file"])
        # the joints' efforts of the tree with its base held fixed (a floating base too)
        self.model = rbd_ros.load_model(self.urdf, floating_base=False, mimic=p["mimic_joints"])
        if self.model.floating_base:      # a URDF floating or planar root joint
            raise ValueError(f"{p['urdf_file']}: its root joint is a base (floating or planar): "
                             "the source moves the joints of a fixed-base tree only")
        self.joint_names = list(self.model.joint_names)
        self.trajectory = SineTrajectory(self.model, p["frequency"], p["harmonics"],
                                         p["amplitude"], p["seed"])
        self._noise = np.array([p["position_noise"], p["velocity_noise"], p["effort_noise"]],
                               float)
        if (self._noise < 0).any():
            raise ValueError("noise standard deviations must be >= 0")
        self._rng = np.random.default_rng(p["seed"] + 1)
        self.published = 0
        self.t0_ns = self.get_clock().now().nanoseconds

        self._pub = self.create_publisher(JointState, p["joint_states_topic"], 10)
        if p["publish_description"]:
            self._description_pub = self.create_publisher(
                String, p["robot_description_topic"], DESCRIPTION_QOS)
            self._description_pub.publish(String(data=self.urdf))
        self.create_timer(1.0 / p["rate_hz"], self.publish_once)
        self.get_logger().info(
            f"{self.model.name!r} ({len(self.joint_names)} joints from {self.urdf_path}): "
            f"joint_states on {self._pub.topic_name} at {p['rate_hz']:g} Hz"
            + (f", URDF on {p['robot_description_topic']}" if p["publish_description"] else ""))

    def time_of(self, stamp):
        """Trajectory time (s) of a header stamp (builtin_interfaces/Time) or of nanoseconds."""
        ns = stamp if isinstance(stamp, int) else stamp.sec * 1_000_000_000 + stamp.nanosec
        return (ns - self.t0_ns) * 1e-9

    def state_at(self, stamp):
        """(q, v, a, τ) without noise at a stamp this source published (or any time)."""
        q, v, a = self.trajectory(self.time_of(stamp))
        return q, v, a, rbd_ros.rnea(self.model, q, v, a)

    def publish_once(self):
        now = self.get_clock().now()
        q, v, a, tau = self.state_at(now.nanoseconds)
        if self._noise.any():
            n = len(q)
            noise = self._rng.standard_normal((3, n)) * self._noise[:, None]
            q, v, tau = q + noise[0], v + noise[1], tau + noise[2]
        msg = JointState()
        msg.header.stamp = now.to_msg()
        msg.name = self.joint_names
        msg.position = conversions.doubles(q)
        msg.velocity = conversions.doubles(v)
        msg.effort = conversions.doubles(tau)
        self._pub.publish(msg)
        self.published += 1


def main(args=None):
    os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    spin_node(TrajectorySource, "joint_trajectory_source", args)


if __name__ == "__main__":
    main()
