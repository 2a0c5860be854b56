#!/usr/bin/env python3
"""
End-to-end benchmark of the dynamics node: drops, latency and CPU at a robot driver's rate.

Starts ``dynamics_node`` as a subprocess on talos (example-robot-data; floating base, mimic
joints independent, every output on), publishes odometry and joint states at --rate (1 kHz)
for --duration (30 s) from this process, records the receipt time of every output message and
prints a table:

  * messages in and out per topic, and the drops (published joint_states without an output),
  * latency from publishing a joint_states message to receiving each output computed from it
    (matched by header stamp): p50, p99, max. It includes both DDS hops and this process's
    executor, so it is an upper bound of what a subscriber in C++ would see,
  * the node's CPU use (utime + stime of /proc/<pid>/stat, its planner process's included,
    over the measured window: it starts --warmup s after the node's first output and its
    planner process serving, so that process's start, ~2 s of CPU at nice +10 that ran into
    the window on a busy machine, is not counted per message),
  * the node's own tick latency (compute + publish, from /diagnostics), the input messages
    it counted lost (its ``messages_lost``), and the CPU steal time of the machine over the
    window (/proc/stat: the host taking CPU from this VM makes every figure worse).

``--before REV`` runs, in the same run, the node of an older revision too (extracted with
``git archive`` into ~/.cache/rbd_ros/bench_node/, its own NUMBA_CACHE_DIR beside it: the
first run compiles its kernels, minutes), alternating with this tree's node for --rounds
rounds (which goes first alternates), and prints one table with both: the cost of a change
to the node (e.g. issue 12's guards: ``--before 0bee040``, the last revision without them).

``--hammer N`` adds a planner: a process that calls the node's ``~/trajectory_torques`` with
an N-point trajectory of the robot (bench_services' request) back to back during the whole
run; the table then says how the ticks fare beside it (issue 16: a planner request must not
hold the 1 kHz topic path for longer than one tick), and each run's line how many requests
were answered and their median round trip. With ``--before REV`` the same load on both
nodes (e.g. ``--before c599144``: the planner services on the executor's thread).

Goals: no drops at 1 kHz, p99 < 2 ms. A benchmark, not a test: run it on a quiet machine.

``--outputs A,B,...`` names the outputs the node publishes (default: every dynamics output,
``all``); the others are turned off (``publish_<name>:=false``). ``end_effector`` is on at
``--end-effector``'s link (talos's ``arm_right_7_link``), the centroidal momentum with the
centre of mass, as the node switches them. ``effort_command`` is the
node's ~/effort_command (gravity mode, every joint, enabled once the node computes; matched
to its joint_states by its values: ``node_command``). The observer's outputs
``external_torques`` and ``contact_wrench`` (at ``--observer``'s LINK) may be named too.

``--observer LINK`` runs this tree's node twice per round, without and with the momentum
observer (``rbd_ros.contact``; the efforts published are the states' torques), and prints
both side by side: the observer's cost per tick. Without it the node publishes ``--outputs``
less the observer's; with it, ``--outputs`` (default with --observer: the issue 23 goal,
``torques,external_torques,contact_wrench``; an ``--outputs`` without an observer output
gets ``external_torques`` and ``contact_wrench`` added). Goal then: p99 < 1 ms.

    python bench/bench_node.py --duration 10 --observer arm_right_7_link \
        --outputs torques,external_torques,contact_wrench

``--soak SECONDS`` (e.g. 3600) runs this tree's node once for that long and reports it per
``--window`` (60 s): resident memory, CPU, outputs missing and latency per window, and the
fitted drift of memory and latency per hour (``node_soak.py``).

``--floor`` runs, in each round beside the node's runs, its messaging floor (``node_floor.py``):
a bare rclpy node with the node's executor that takes the same joint_states and odometry and
publishes the same messages (types, sizes, the node's serialization; the input's positions
copied, no dynamics) to the same receiver; the table then puts each node run beside it: CPU
per answered message, latency p50/p99, outputs missing (issue 35's goals: CPU <= 1.3x the
floor's, p99 within 0.2 ms of it, none missing), judged on each run against the floor's run
of the same round (the median over ``--rounds``). ``--floor-core`` adds a second reference
run per round, the floor making the core calls of the node's tick too (``node_floor.py
--core``: the dynamics and the observer's step through the core's public API, none of the
node's glue): the node against it is the node's own per-message work, it against the floor
what the core's calls cost in the node's setting. ``--floor-pinocchio`` adds a third, the
floor making Pinocchio's calls for the same outputs (``node_floor.py --pinocchio``): what the
reference library's dynamics cost in that setting, the same way. ``--fixed-base`` runs the
robot on a fixed base (the independent harness's talos, nv 32):

    python bench/bench_node.py --fixed-base --floor --observer arm_right_7_link \
        --outputs torques,accelerations,inverse_inertia,rnea_derivatives,aba_derivatives

    python bench/bench_node.py [--duration 30] [--rate 1000] [--qos reliable|best_effort]
                               [--executor events|single_threaded] [--before REV --rounds 3]
                               [--hammer 1000] [--soak 3600 --window 60]
                               [--observer arm_right_7_link] [--outputs torques,...]
                               [--floor] [--floor-core] [--floor-pinocchio]
                               [--fixed-base] [--end-effector LINK]
"""
import argparse
import collections
import os
import sys
import threading

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, os.pardir, "test"))

from oracle import ROBOTS  # noqa: E402  (first: it puts the checkout on sys.path)
import node_graph  # noqa: E402
import node_run  # noqa: E402
from node_command import COMMAND, enabler, state_keys  # noqa: E402
import node_soak  # noqa: E402
from node_report import print_run, print_table  # noqa: E402
import node_receiver  # noqa: E402
from node_run import STATES  # noqa: E402
from node_trees import (FLOOR_CORE, FLOOR_PINOCCHIO, FloorTree, NODE_NAME,  # noqa: E402
                        SourceTree)
from rbd_ros.node import EXECUTORS  # noqa: E402  (no ROS import at module level)
from rbd_ros.outputs import NAMES as OUTPUTS  # noqa: E402  (every output; no ROS)

OBSERVER_OUTPUTS = ("external_torques", "contact_wrench")
OBSERVER_GOAL = ("torques",) + OBSERVER_OUTPUTS


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--duration", type=float, default=30.0, help="measured seconds (30)")
    ap.add_argument("--rate", type=float, default=1000.0, help="joint_states + odom per s (1000)")
    ap.add_argument("--qos", choices=("reliable", "best_effort"), default="reliable",
                    help="QoS of the published inputs (the node subscribes best effort)")
    ap.add_argument("--executor", choices=EXECUTORS, default="events",
                    help="the node's executor parameter (events)")
    ap.add_argument("--robot", default="talos", help="a floating-base robot of test/oracle.py")
    ap.add_argument("--warmup", type=float, default=3.0,
                    help="seconds of publishing after the first output (and the planner "
                    "process serving) before measuring (3)")
    ap.add_argument("--before", metavar="REV",
                    help="also run the node of this revision, alternating with this tree's")
    ap.add_argument("--rounds", type=int, default=None,
                    help="runs of each node (default 1; 3 with --before)")
    ap.add_argument("--hammer", type=int, default=0, metavar="N",
                    help="also call ~/trajectory_torques with N points, back to back (0: no)")
    ap.add_argument("--soak", type=float, default=0.0, metavar="SECONDS",
                    help="one long run of this tree's node, reported per --window: memory "
                         "and latency drift (e.g. 3600)")
    ap.add_argument("--window", type=float, default=60.0,
                    help="seconds per row of --soak (60)")
    ap.add_argument("--observer", metavar="LINK", default="",
                    help="also run with the observer's outputs, contact wrench at LINK")
    ap.add_argument("--end-effector", metavar="LINK", default="arm_right_7_link",
                    help="the ~/end_effector output's link, when it is among the outputs "
                    "(talos's right wrist: arm_right_7_link)")
    ap.add_argument("--outputs", default=None, type=_outputs,
                    help="comma-separated outputs the node publishes (default: all the "
                    "dynamics outputs; with --observer: " + ",".join(OBSERVER_GOAL) + ")")
    ap.add_argument("--floor", action="store_true",
                    help="also run the messaging floor (node_floor.py) in the node's place")
    ap.add_argument("--floor-core", action="store_true",
                    help="with --floor, also the floor making the node's core calls (a fixed "
                    "base)")
    ap.add_argument("--floor-pinocchio", action="store_true",
                    help="with --floor, also the floor making Pinocchio's calls for the same "
                    "outputs (a fixed base)")
    ap.add_argument("--fixed-base", action="store_true",
                    help="run the robot with a fixed base (no odometry used)")
    ap.add_argument("--receiver", metavar="OUT", help=argparse.SUPPRESS)
    ap.add_argument("--receiver-outputs", help=argparse.SUPPRESS)
    ap.add_argument("--soak-receiver", metavar="OUT", help=argparse.SUPPRESS)
    ap.add_argument("--hammer-client", type=int, metavar="N", help=argparse.SUPPRESS)
    ap.add_argument("--startup-timeout", type=float, default=900.0,
                    help="seconds to wait for the first output (a cold numba cache compiles)")
    return ap.parse_args()


def _outputs(text):
    """Parse --outputs: "all" or comma-separated names of the node's outputs."""
    if text == "all":
        return OUTPUTS
    names = tuple(dict.fromkeys(n.strip() for n in text.split(",") if n.strip()))
    bad = [n for n in names if n not in OUTPUTS + OBSERVER_OUTPUTS + (COMMAND,)]
    if bad or not names:
        raise argparse.ArgumentTypeError(
            f"unknown output(s) {', '.join(bad)[:80]!r}: of {', '.join(OUTPUTS + OBSERVER_OUTPUTS)}"
            if bad else "no output named")
    return names


def configurations(args, trees):
    """Return the runs of a round: (label, tree, outputs) each."""
    outputs = args.outputs
    if not args.observer:
        if outputs is None:
            return [(t.label, t, args.every_output) for t in trees]
        if any(k in OBSERVER_OUTPUTS for k in outputs):
            raise SystemExit("--outputs external_torques / contact_wrench need --observer LINK")
        return [(t.label, t, outputs) for t in trees]
    outputs = OBSERVER_GOAL if outputs is None else outputs
    if not any(k in OBSERVER_OUTPUTS for k in outputs):
        outputs = outputs + OBSERVER_OUTPUTS
    without = tuple(k for k in outputs if k not in OBSERVER_OUTPUTS)
    if not without:
        raise SystemExit("--outputs: name a dynamics output too (torques)")
    return [("no observer", trees[0], without), ("observer", trees[0], outputs)]


def hammer(points, robot):
    """Run the --hammer client: trajectory_torques of ``points`` points until SIGINT."""
    import signal
    import time

    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from rbd_ros_interfaces import srv

    from bench_services import requests
    from oracle import load_quietly
    path, floating = ROBOTS[robot]
    request = requests(load_quietly(path, floating, mimic="independent"), points)[0]
    stopped = []
    signal.signal(signal.SIGINT, lambda *_: stopped.append(1))
    rclpy.init(signal_handler_options=rclpy.signals.SignalHandlerOptions.NO)
    node = rclpy.create_node("rbd_bench_hammer")
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    client = node.create_client(srv.TrajectoryTorques, f"/{NODE_NAME}/trajectory_torques")
    times, failed, reasons = [], 0, collections.Counter()
    while not stopped:
        if not client.service_is_ready():
            executor.spin_once(timeout_sec=0.1)
            continue
        t0 = time.perf_counter()
        future = client.call_async(request)
        while not stopped and not future.done():
            executor.spin_once(timeout_sec=0.05)
        if future.done():
            times.append(time.perf_counter() - t0)
            if not future.result().success:
                failed += 1
                reasons[future.result().message[:60]] += 1
    why = ", ".join(f"{n} {r!r}" for r, n in reasons.most_common(2))
    print(f"{len(times)} trajectory_torques requests of {points} points answered "
          f"({failed} failed{': ' + why if failed else ''}), round trip median "
          f"{np.median(times) * 1e3 if times else 0:.1f} ms, max "
          f"{max(times, default=0) * 1e3:.1f} ms", flush=True)
    node.destroy_node()
    rclpy.shutdown()
    return 0


def checked_arguments(args):
    """Refuse arguments that do not go together; set the robot's; return its URDF's text."""
    if args.soak and (args.before or args.hammer):
        raise SystemExit("--soak runs this tree's node alone: no --before, no --hammer")
    if args.observer and (args.before or args.soak):
        raise SystemExit("--observer compares this tree's node with itself: no --before, "
                         "no --soak")
    urdf_path, floating = ROBOTS[args.robot]
    if urdf_path is None:
        raise SystemExit("example-robot-data is not installed (pip install example-robot-data)")
    args.fixed_base = args.fixed_base or not floating
    for flag in ("floor_core", "floor_pinocchio"):
        if getattr(args, flag) and not (args.floor and args.fixed_base):
            raise SystemExit(f"--{flag.replace('_', '-')} needs --floor and a fixed base "
                             "(--fixed-base)")
    args.urdf_path = urdf_path
    args.every_output = robot_outputs(args)
    if args.outputs is OUTPUTS:          # "all": every output this robot has
        args.outputs = None
    for k in args.outputs or ():
        if k in OUTPUTS and k not in args.every_output:
            raise SystemExit(f"--outputs {k}: " + (
                "the node publishes it on a floating base only" if k == "centroidal_momentum"
                else f"--end-effector {args.end_effector!r} is not a link of {args.robot}"))
    with open(urdf_path, encoding="utf-8") as f:
        return f.read()


def robot_outputs(args):
    """Every output of the table the node publishes for this robot (its default run's)."""
    import rbd_ros
    every = list(OUTPUTS)
    if args.fixed_base:                  # the node's: on a floating base only
        every.remove("centroidal_momentum")
    model = rbd_ros.load_model(args.urdf_path, floating_base=not args.fixed_base,
                               mimic="independent")
    if args.end_effector not in model.link_frames:
        print(f"bench_node: {args.end_effector!r} is not a link of {args.robot}: no "
              "~/end_effector (--end-effector LINK)", flush=True)
        every.remove("end_effector")
    return tuple(every)


def all_configurations(args, trees):
    """Return [(label, tree, outputs)]: the nodes' runs of a round, then the references'."""
    configs = configurations(args, trees)
    relayed = configs[-1][2]             # the floor publishes the most outputs asked for
    if args.floor:
        configs.append(("floor", FloorTree(trees[-1]), relayed))
    if args.floor_core:                  # ... and makes the core calls of the node's tick
        configs.append((FLOOR_CORE, FloorTree(trees[-1], core=True), relayed))
    if args.floor_pinocchio:             # ... or Pinocchio's calls for the same outputs
        configs.append((FLOOR_PINOCCHIO, FloorTree(trees[-1], pinocchio=True), relayed))
    return configs


def start_source(args, urdf, configs):
    """
    Start rclpy and the bench's node: the robot's description, the inputs' publishers.

    Returns (bench node, ``node_run.Publisher``, joint names); the caller spins the node.
    """
    import rclpy
    from diagnostic_msgs.msg import DiagnosticArray
    from nav_msgs.msg import Odometry
    from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
    from rclpy.signals import SignalHandlerOptions
    from sensor_msgs.msg import JointState
    from std_msgs.msg import String

    joint_names, states = node_run.make_states(urdf, STATES, args.rate)
    rclpy.init(signal_handler_options=SignalHandlerOptions.NO)
    bench = rclpy.create_node("rbd_bench_node")
    reliability = (ReliabilityPolicy.RELIABLE if args.qos == "reliable"
                   else ReliabilityPolicy.BEST_EFFORT)
    input_qos = QoSProfile(depth=10, reliability=reliability, history=HistoryPolicy.KEEP_LAST)
    desc_qos = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                          durability=DurabilityPolicy.TRANSIENT_LOCAL,
                          history=HistoryPolicy.KEEP_LAST)
    desc_pub = bench.create_publisher(String, "robot_description", desc_qos)
    source = node_run.Publisher(bench, bench.create_publisher(JointState, "joint_states",
                                                              input_qos),
                                bench.create_publisher(Odometry, "odom", input_qos),
                                joint_names, states)
    desc_pub.publish(String(data=urdf))
    args.command_joints = joint_names
    if any(COMMAND in outputs for _, _, outputs in configs):
        source.enable_command = enabler(bench, NODE_NAME)
        source.command_keys = state_keys(urdf, states)
    bench.create_subscription(DiagnosticArray, "/diagnostics", source.on_diagnostics, 10)
    return bench, source, joint_names


class Spinner:
    """The bench's node spun on a thread of its own until :meth:`stop`."""

    def __init__(self, node):
        from rclpy.executors import SingleThreadedExecutor
        self.node = node
        self.executor = SingleThreadedExecutor()
        self.executor.add_node(node)
        self.spinning = threading.Event()
        self.spinning.set()
        self.thread = threading.Thread(target=self.spin, daemon=True)
        self.thread.start()

    def spin(self):
        while self.spinning.is_set():
            self.executor.spin_once(timeout_sec=0.05)

    def stop(self):
        """Stop spinning, then shut rclpy down (test/node_helpers.SpinThread's order)."""
        import rclpy
        # a daemon thread still inside rclpy's wait when Python exits aborts the process
        self.spinning.clear()
        self.thread.join(timeout=5.0)
        self.executor.shutdown(timeout_sec=5.0)
        self.node.destroy_node()
        if rclpy.ok():
            rclpy.shutdown()


def main():
    args = parse_args()
    os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    if args.receiver:
        return node_receiver.receiver(args.receiver, args.receiver_outputs.split(",")
                                      if args.receiver_outputs else OUTPUTS)
    if args.soak_receiver:
        return node_soak.receiver(args.soak_receiver, OUTPUTS, args.window, args.rate)
    args.contact_frame = args.observer
    if args.hammer_client:
        return hammer(args.hammer_client, args.robot)
    urdf = checked_arguments(args)
    node_graph.stop_children_on_sigterm()
    trees = [SourceTree(args.before), SourceTree()] if args.before else [SourceTree()]
    rounds = args.rounds or (3 if args.before else 1)
    configs = all_configurations(args, trees)
    bench, source, joint_names = start_source(args, urdf, configs)
    spinner = Spinner(bench)
    print(f"bench_node: {args.robot} ({len(joint_names)} joints, "
          f"{'fixed' if args.fixed_base else 'floating'} base) from "
          f"{args.urdf_path}; inputs {args.qos} at {args.rate:g} Hz; node executor "
          f"{args.executor}; node {NODE_NAME}; ROS_DOMAIN_ID="
          f"{os.environ.get('ROS_DOMAIN_ID', '0')}; {rounds} round(s) of "
          f"{', '.join(c[0] for c in configs)}", flush=True)
    runs, status = [], 0
    try:
        if args.soak:
            every = args.every_output
            node_soak.print_soak(args, node_soak.run_soak(args, trees[0], source, every), every)
            rounds = 0
        for k in range(rounds):
            for label, tree, outputs in (configs if k % 2 == 0 else configs[::-1]):
                r = node_run.run_once(args, tree, source, outputs)
                print_run(args, label, r)
                runs.append((label, r))
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        status = 1
    except RuntimeError as exc:
        print(f"bench_node: {exc}", file=sys.stderr)
        status = 1
    finally:
        spinner.stop()
    if runs:
        print_table(args, runs, configs)
    return status


if __name__ == "__main__":
    sys.exit(main())
