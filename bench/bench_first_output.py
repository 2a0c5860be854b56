#!/usr/bin/env python3
"""
Time from starting ``dynamics_node`` to its first output, with a warm kernel cache.

What a user waits for after ``ros2 run`` or ``ros2 launch``: the bench publishes joint states
(and, for a floating base, odometry) at 100 Hz from before the node starts, spawns the node
(the ``dynamics_node`` console entry, ``rbd_ros_entry.py``, as ros2 run starts it) with the
robot's URDF as its ``robot_description`` parameter in a parameters file (the launch file's
way) and the default outputs, and times the first ``~/torques`` message received, from the
spawn, on the monotonic clock. Each start is a fresh process on the caller's
NUMBA_CACHE_DIR (warm it first: ``python -m rbd_ros.tools.warm_cache``); the node is stopped with
SIGINT between starts. ``bench_cold_start.py`` times the parts before ROS (import, URDF,
kernel warm-up) without the node.

Beside it, ``matched``: when the bench's joint_states publisher first matched the node's
subscription (DDS discovery, which the node does not control). With
ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST (Fast DDS unicast discovery) some starts match only
1-2 s after the node's model is ready; with SUBNET, ROS's default, within ~0.5 s. The range
is the caller's, ROS's default when unset (``--range`` sets it for the bench and the node).

Goals (issue 14): first output <= 3 s on talos, <= 1.5 s on a 7-dof arm.

    python bench/bench_first_output.py [--robots arm7,talos] [--starts 5]
"""
import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, os.pardir, "test"))

from oracle import ROBOTS, available  # noqa: E402  (also puts the checkout on sys.path)
from node_graph import stop_children_on_sigterm  # noqa: E402

GOALS = {"talos": 3.0, "arm7": 1.5}


def parameters_file(urdf, floating):
    """Write the node's parameters (the URDF as robot_description) to a temporary YAML file."""
    import yaml
    params = {"/**": {"ros__parameters": {
        "robot_description": urdf, "floating_base": floating, "mimic_joints": "independent"}}}
    f = tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False, encoding="utf-8")
    with f:
        yaml.safe_dump(params, f)
    return f.name


def start_node(params):
    entry = os.path.join(HERE, os.pardir, "rbd_ros_entry.py")
    code = (f"import sys; sys.path.insert(0, {os.path.dirname(entry)!r}); "
            "import rbd_ros_entry; sys.exit(rbd_ros_entry.dynamics_node())")
    log = tempfile.NamedTemporaryFile("w+", prefix="bench_first_", suffix=".log", delete=False)
    node = subprocess.Popen([sys.executable, "-c", code, "--ros-args", "-r",
                             "__node:=rbd_first", "--params-file", params],
                            stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                            start_new_session=True)
    return node, log


def one_start(bench, executor, params, publish, timeout):
    """Return the seconds from spawning the node to its first ~/torques, and its log."""
    from sensor_msgs.msg import JointState
    first = []
    sub = bench.create_subscription(JointState, "/rbd_first/torques",
                                    lambda m: first or first.append(time.monotonic()), 10)
    timer = bench.create_timer(0.01, publish)
    t0, wall0 = time.monotonic(), time.time()
    node, log = start_node(params)
    try:
        matched = None
        while not first and time.monotonic() - t0 < timeout and node.poll() is None:
            executor.spin_once(timeout_sec=0.005)
            if matched is None and publish.publisher.get_subscription_count():
                matched = time.monotonic() - t0
    finally:
        node.send_signal(signal.SIGINT)
        try:
            node.wait(20)
        except subprocess.TimeoutExpired:
            node.kill()
            node.wait()
        bench.destroy_timer(timer)
        bench.destroy_subscription(sub)
    log.seek(0)
    text = log.read()
    if not first:
        raise SystemExit(f"no output within {timeout} s: {text[-1500:]}")
    return first[0] - t0, (first[0] - t0 if matched is None else matched), log_since(text, wall0)


def log_since(text, wall0):
    """Return the node's log lines with their time after the spawn (ROS stamps are epoch s)."""
    import re
    lines = []
    for line in text.splitlines():
        stamp = re.search(r"\[(\d{9,}\.\d+)\]", line)
        at = f"{float(stamp.group(1)) - wall0:6.2f} s" if stamp else " " * 8
        lines.append(f"  {at}  {line[:150]}")
    return "\n".join(lines)


def publisher(bench, model, floating):
    """Return a function publishing one joint_states (and odometry) message at a fixed state."""
    from nav_msgs.msg import Odometry
    from sensor_msgs.msg import JointState
    q = model.random_configuration(np.random.default_rng(0))
    js = JointState(name=list(model.joint_names), position=q[7 if floating else 0:].tolist(),
                    velocity=[0.0] * len(model.joint_names),
                    effort=[0.0] * len(model.joint_names))
    js_pub = bench.create_publisher(JointState, "joint_states", 10)
    odom = Odometry()
    odom.pose.pose.orientation.w = 1.0
    odom_pub = bench.create_publisher(Odometry, "odom", 10) if floating else None

    def publish():
        stamp = bench.get_clock().now().to_msg()
        if odom_pub is not None:
            odom.header.stamp = stamp
            odom_pub.publish(odom)
        js.header.stamp = stamp
        js_pub.publish(js)
    publish.publisher = js_pub
    return publish


def main():
    stop_children_on_sigterm()                  # its finally stops the node it started
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--robots", default="arm7,talos")
    ap.add_argument("--starts", type=int, default=5)
    ap.add_argument("--timeout", type=float, default=120.0)
    ap.add_argument("--range", choices=("SUBNET", "LOCALHOST"),
                    help="ROS_AUTOMATIC_DISCOVERY_RANGE (default: the environment's, or ROS's)")
    args = ap.parse_args()
    if args.range:
        os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = args.range
    import rclpy
    from rclpy.executors import SingleThreadedExecutor

    from oracle import load_quietly
    rclpy.init()
    bench = rclpy.create_node("rbd_bench_first_output")
    executor = SingleThreadedExecutor()
    executor.add_node(bench)
    print(f"discovery range: {os.environ.get('ROS_AUTOMATIC_DISCOVERY_RANGE', 'SUBNET (unset)')}")
    print(f"{'robot':<7} {'nv':>3} {'starts':>6} {'first output [s]: min':>22} {'median':>7} "
          f"{'max':>6} {'goal':>5} {'matched: median':>16} {'max':>5}")
    slowest = []
    for robot in [r for r in args.robots.split(",") if available(r)]:
        path, floating = ROBOTS[robot]
        with open(path, encoding="utf-8") as f:
            params = parameters_file(f.read(), floating)
        model = load_quietly(path, floating, mimic="independent")
        publish = publisher(bench, model, floating)
        starts = [one_start(bench, executor, params, publish, args.timeout)
                  for _ in range(args.starts)]
        times = [seconds for seconds, _, _ in starts]
        matched = [seconds for _, seconds, _ in starts]
        goal = GOALS.get(robot)
        print(f"{robot:<7} {model.nv:>3} {len(times):>6} {min(times):>22.2f} "
              f"{np.median(times):>7.2f} {max(times):>6.2f} "
              f"{'-' if goal is None else f'{goal:.1f}':>5} {np.median(matched):>16.2f} "
              f"{max(matched):>5.2f}   each: " + " ".join(f"{t:.2f}" for t in times),
              flush=True)
        slowest.append((max(times), robot, starts[int(np.argmax(times))][2]))
        os.unlink(params)
    for seconds, robot, log in slowest:
        print(f"\nslowest start of {robot} ({seconds:.2f} s), the node's log, time after spawn:\n"
              f"{log}")
    bench.destroy_node()
    rclpy.shutdown()


if __name__ == "__main__":
    main()
