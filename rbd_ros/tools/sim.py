r"""
``rbd_sim``: the robot of a URDF simulated by MuJoCo, on ROS 2 topics, to try the node on.

Each step of the loop (``--rate`` per second) publishes ``/joint_states`` (position, velocity,
and effort: the torque applied at each joint), then applies the newest command of
``--command-topic`` (``std_msgs/Float64MultiArray``, one value per ``--joints`` entry: what
an ``effort_controllers/JointGroupEffortController`` takes; held until the next one, as
that controller does) for ``--substeps`` physics steps. A command of the wrong size or with a
value that is not finite is refused and counted; the torques are bounded by the URDF's effort
limits. The physics is ``tools.mujoco_robot``'s (the URDF's inertials and joint damping;
meshes it cannot find are dropped with a note).

Clocks (``--clock``): ``realtime`` steps at ``--rate`` against the wall clock; ``lockstep``
waits after each joint_states message for a command (at most ``--lockstep-timeout`` s, then
steps with the command it holds): the loop with the node in it, as fast as the two answer
each other, whatever the machine's load; ``free`` steps as fast as it can.

``--brake`` holds the robot at its start (``--initial-positions``) until the first command;
``--pd-sine AMPLITUDE,PERIOD`` adds a PD loop in the simulation (``--kp``, ``--kd``) tracking
q0 + A (1 - cos(2π t / T)) on every joint (a sinusoid from rest), and publishes that
reference's accelerations (``rbd_ros_interfaces/JointVector``, every joint) on
``--reference-topic`` before each joint_states message: the node's ``acceleration_topic`` for
``command_mode:=inverse_dynamics``.
``--duration`` (simulated s) ends the run; ``--report FILE`` writes what happened (JSON:
steps, commands applied and refused, start and end positions, largest deviation from the
start, RMS tracking error).

    rbd_sim rbd_ros/robots/rbd_arm7.urdf --initial-positions 0,0.5,0,-1.5,0,1.5,0 --brake \\
        --publish-description
"""
import argparse
import json
import math
import os
import threading
import time

import numpy as np

from .mujoco_robot import MujocoRobot

CLOCKS = ("realtime", "lockstep", "free")


def parse_args(argv=None):
    """Parse rbd_sim's command line (``--ros-args`` and what follows are rclpy's)."""
    ap = argparse.ArgumentParser(prog="rbd_sim", description=__doc__.split("\n\n")[0])
    ap.add_argument("urdf", nargs="?", default="", help="URDF file (default: rbd_arm7)")
    ap.add_argument("--rate", type=float, default=1000.0,
                    help="loop steps per simulated second: joint_states out, command in")
    ap.add_argument("--substeps", type=int, default=1, help="physics steps per loop step")
    ap.add_argument("--joints", default="", help="comma-separated command order "
                    "(default: every movable joint in the URDF's order)")
    ap.add_argument("--initial-positions", default="", help="comma-separated, in --joints "
                    "order (default: 0, or the nearest limit)")
    ap.add_argument("--command-topic", default="/effort_controller/commands")
    ap.add_argument("--joint-states-topic", default="joint_states")
    ap.add_argument("--clock", choices=CLOCKS, default="realtime")
    ap.add_argument("--lockstep-timeout", type=float, default=1.0,
                    help="s a lockstep step waits for a command")
    ap.add_argument("--brake", action="store_true",
                    help="hold the start configuration until the first command")
    ap.add_argument("--duration", type=float, default=0.0,
                    help="simulated seconds, then exit (0: until Ctrl-C)")
    ap.add_argument("--pd-sine", default="", metavar="AMPLITUDE,PERIOD",
                    help="a PD loop in the simulation tracking q0 + A (1 - cos(2 pi t / T))")
    ap.add_argument("--kp", type=float, default=100.0, help="N·m/rad of --pd-sine")
    ap.add_argument("--kd", type=float, default=10.0, help="N·m·s/rad of --pd-sine")
    ap.add_argument("--reference-topic", default="commanded_acceleration",
                    help="JointVector of the --pd-sine reference accelerations")
    ap.add_argument("--publish-description", action="store_true",
                    help="publish the URDF on robot_description (latched)")
    ap.add_argument("--contacts", action="store_true", help="keep MuJoCo's contacts")
    ap.add_argument("--report", default="", help="write the run's summary here (JSON)")
    args = ap.parse_args(argv)
    problems = []
    if not (math.isfinite(args.rate) and 0 < args.rate <= 100_000):
        problems.append("--rate must be in (0, 100000]")
    if not 1 <= args.substeps <= 1000:
        problems.append("--substeps must be in [1, 1000]")
    if not (math.isfinite(args.lockstep_timeout) and 0 < args.lockstep_timeout <= 60):
        problems.append("--lockstep-timeout must be in (0, 60] s")
    if not (math.isfinite(args.duration) and args.duration >= 0):
        problems.append("--duration must be >= 0")
    if problems:
        ap.error("; ".join(problems))
    return args


def _floats(text, what, count):
    try:
        values = [float(x) for x in text.split(",")] if text else []
    except ValueError:
        raise ValueError(f"{what}: comma-separated numbers, got {text[:80]!r}") from None
    if count is not None and len(values) != count:
        raise ValueError(f"{what}: {count} values, got {len(values)}")
    if not all(math.isfinite(x) for x in values):
        raise ValueError(f"{what}: finite numbers, got {text[:80]!r}")
    return np.array(values)


class SineReference:
    """q_d(t) = q0 + A (1 - cos(2π t / T)) on every joint (from rest at q0), v_d and a_d."""

    def __init__(self, q0, text):
        self.q0 = np.array(q0, float)
        self.amplitude, self.period = _floats(text, "--pd-sine", 2)
        if self.period <= 0:
            raise ValueError("--pd-sine: the period must be > 0")
        self.w = 2 * math.pi / self.period

    def at(self, t):
        s, c = math.sin(self.w * t), math.cos(self.w * t)
        a = self.amplitude
        return (self.q0 + a * (1.0 - c), np.full(len(self.q0), a * self.w * s),
                np.full(len(self.q0), a * self.w * self.w * c))


class Simulation:
    """
    The loop: the robot, its command, its clock; ROS only through ``publish`` callables.

    ``send_state(q, v, tau)``: publishes joint_states; ``send_reference(a)``: the reference
    accelerations (or None). :meth:`take_command` is the command subscription's callback.
    ``log(text)``: where notes go; ``trace``: keep (time, q) of every step in ``trace``.
    """

    def __init__(self, args, text, folder, log, trace=False):
        self.args, self.log = args, log
        self.trace = [] if trace else None       # (time, q) after each step, when asked
        self.dt = 1.0 / (args.rate * args.substeps)
        self.robot = r = MujocoRobot(text, folder, self.dt, args.contacts)
        for note in r.notes:
            log(note)
        names = [n for n in args.joints.split(",") if n] or list(r.joint_names)
        unknown = sorted(set(names) - set(r.joint_names))
        if unknown or len(set(names)) != len(names):
            raise ValueError(f"--joints: unknown {unknown[:6]} or duplicated names; the "
                             f"URDF's: {r.joint_names[:12]}")
        self.names = names
        self.index = np.array([r.joint_names.index(n) for n in names], np.intp)
        q0 = np.zeros(len(r.joint_names))
        lower, upper = r.m.jnt_range[[r.m.joint(n).id for n in r.joint_names]].T
        limited = r.m.jnt_limited[[r.m.joint(n).id for n in r.joint_names]].astype(bool)
        q0 = np.where(limited, np.clip(q0, lower, upper), q0)
        if args.initial_positions:
            q0[self.index] = _floats(args.initial_positions, "--initial-positions", len(names))
        r.set_state(q0)
        self.q0 = q0
        self.reference = SineReference(q0, args.pd_sine) if args.pd_sine else None
        self.command = np.zeros(len(r.joint_names))     # held until the next one
        self.lock = threading.Lock()
        self.new_command = threading.Event()
        self.counts = {"steps": 0, "commands": 0, "refused": 0}
        self.max_deviation = np.zeros(len(q0))
        self.squared_error, self.samples = 0.0, 0
        self.stop = threading.Event()
        self.done = threading.Event()

    def take_command(self, msg):
        """Take a Float64MultiArray in --joints order: held from the next step, or refuse it."""
        data = np.asarray(msg.data, np.float64)
        if data.shape != (len(self.names),) or not np.isfinite(data).all():
            self.counts["refused"] += 1
            self.log(f"command refused: {len(data)} values for {len(self.names)} joints"
                     if data.shape != (len(self.names),) else "command refused: not finite")
            return
        with self.lock:
            self.command[self.index] = data
            self.counts["commands"] += 1
        self.new_command.set()

    def run(self, send_state, send_reference):
        """Step until --duration (simulated) or :meth:`stop`; then set ``done``."""
        args, r = self.args, self.robot
        period = 1.0 / args.rate
        next_wall = time.monotonic()
        try:
            while not self.stop.is_set():
                if args.duration and r.time >= args.duration - 1e-9:
                    break
                if self.reference is not None:
                    send_reference(self.reference.at(r.time)[2])
                self.new_command.clear()
                send_state(r.positions(), r.velocities(), r.applied.copy())
                if args.clock == "lockstep":
                    self.new_command.wait(args.lockstep_timeout)
                elif args.clock == "realtime":
                    next_wall += period
                    self.stop.wait(max(0.0, next_wall - time.monotonic()))
                if args.brake and self.counts["commands"] == 0:
                    continue                      # braked: time does not run
                self._step()
        finally:
            self.done.set()

    def _step(self):
        r = self.robot
        with self.lock:
            command = self.command.copy()
        for _ in range(self.args.substeps):
            tau = command
            if self.reference is not None:
                qd, vd, _ = self.reference.at(r.time)
                tau = command + self.args.kp * (qd - r.positions()) + \
                    self.args.kd * (vd - r.velocities())
            r.step(tau)
        q = r.positions()
        np.maximum(self.max_deviation, np.abs(q - self.q0), out=self.max_deviation)
        if self.trace is not None:
            self.trace.append((r.time, q))
        if self.reference is not None:
            self.squared_error += float(np.sum((self.reference.at(r.time)[0] - q) ** 2))
            self.samples += len(q)
        self.counts["steps"] += 1

    def report(self):
        """Return what happened: counts, positions, deviations, tracking error (joint order)."""
        q = self.robot.positions()
        return {"joints": list(self.robot.joint_names), "time": self.robot.time,
                **self.counts, "initial": self.q0.tolist(), "final": q.tolist(),
                "final_deviation": np.abs(q - self.q0).tolist(),
                "max_deviation": self.max_deviation.tolist(),
                "rms_tracking_error": (math.sqrt(self.squared_error / self.samples)
                                       if self.samples else None)}


def create_ros_side(node, sim, args, text):
    """Create the publishers and the command subscription of ``sim`` on the rclpy ``node``."""
    from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Float64MultiArray, String
    state_pub = node.create_publisher(JointState, args.joint_states_topic, 10)
    node.create_subscription(Float64MultiArray, args.command_topic, sim.take_command, 10)
    msg = JointState(name=list(sim.robot.joint_names))
    clock = node.get_clock()

    def send_state(q, v, tau):
        msg.header.stamp = clock.now().to_msg()
        msg.position, msg.velocity, msg.effort = q.tolist(), v.tolist(), tau.tolist()
        state_pub.publish(msg)
    send_reference = None
    if sim.reference is not None:
        send_reference = _reference_sender(node, args.reference_topic, sim.robot.joint_names)
    if args.publish_description:
        latched = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                             durability=DurabilityPolicy.TRANSIENT_LOCAL,
                             history=HistoryPolicy.KEEP_LAST)
        node.create_publisher(String, "robot_description", latched).publish(String(data=text))
    return send_state, send_reference


def _reference_sender(node, topic, names):
    """Return a function publishing reference accelerations as a JointVector on ``topic``."""
    from rbd_ros_interfaces.msg import JointVector
    publisher = node.create_publisher(JointVector, topic, 10)
    msg = JointVector(names=list(names))

    def send(a):
        msg.data = a.tolist()
        publisher.publish(msg)
    return send


def read_urdf(path):
    """Return (URDF text, its folder) of ``path`` (empty: the bundled rbd_arm7)."""
    import rbd_ros
    from ..formats.text_files import read_text
    path = path or rbd_ros.robots.path("rbd_arm7")
    return read_text(path, 10 << 20), os.path.dirname(os.path.abspath(path))


def write_report(path, report):
    """Write ``report`` as JSON to ``path`` (a temporary file, then renamed)."""
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(report, f, indent=1)
    os.replace(tmp, path)


def main(argv=None):
    """Run rbd_sim until --duration or Ctrl-C."""
    import sys

    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.node import Node
    from rclpy.utilities import remove_ros_args
    argv = sys.argv if argv is None else argv
    args = parse_args(remove_ros_args(argv)[1:])
    text, folder = read_urdf(args.urdf)
    rclpy.init(args=argv)
    node = Node("rbd_sim")
    try:
        sim = Simulation(args, text, folder, node.get_logger().warning)
    except ValueError as exc:
        node.get_logger().error(str(exc))
        raise SystemExit(2) from None
    send_state, send_reference = create_ros_side(node, sim, args, text)
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    loop = threading.Thread(target=sim.run, args=(send_state, send_reference), daemon=True)
    loop.start()
    try:
        while not sim.done.is_set() and rclpy.ok():
            executor.spin_once(timeout_sec=0.05)
    except KeyboardInterrupt:
        pass
    finally:
        sim.stop.set()
        loop.join(timeout=2.0)
        if args.report:
            write_report(args.report, sim.report())
        executor.shutdown()
        node.destroy_node()
        if rclpy.ok():
            rclpy.shutdown()
