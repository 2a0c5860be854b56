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
  * the node's CPU use (utime + stime of /proc/<pid>/stat over the measured window),
  * the node's own tick latency (compute + publish, from /diagnostics).

Goals: no drops at 1 kHz, p99 < 2 ms. A benchmark, not a test: run it on a quiet machine.

    python bench/bench_node.py [--duration 30] [--rate 1000] [--qos reliable|best_effort]
                               [--executor events|single_threaded]
"""
import argparse
import array
import os
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, os.pardir, "test"))

from oracle import ROBOTS  # noqa: E402  (also puts the checkout on sys.path)
from rbd_ros.node import EXECUTORS  # noqa: E402  (no ROS import at module level)
from rbd_ros.outputs import NAMES as OUTPUTS  # noqa: E402  (every output; no ROS)

NODE_NAME = "rbd_dynamics"
STATES = 1000                     # distinct states, cycled
GOAL_P99_MS = 2.0


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
                    help="seconds of publishing after the first output before measuring (3)")
    ap.add_argument("--receiver", metavar="OUT", help=argparse.SUPPRESS)
    ap.add_argument("--startup-timeout", type=float, default=900.0,
                    help="seconds to wait for the first output (a cold numba cache compiles)")
    return ap.parse_args()


def cpu_seconds(pid):
    """Return utime + stime of a process, in seconds (/proc/<pid>/stat fields 14 and 15)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def loadavg():
    with open("/proc/loadavg") as f:
        return f.read().split()[0]


def stamp_ns_of(raw):
    """
    Return the header stamp of a serialized message whose first field is std_msgs/Header.

    CDR: 4-byte encapsulation, then int32 sec, uint32 nanosec, little endian.
    """
    sec, nanosec = struct.unpack_from("<iI", raw, 4)
    return sec * 1_000_000_000 + nanosec


def make_states(urdf, n, rate):
    """
    Make n consecutive states of a smooth joint trajectory, and base poses and twists.

    The states (q, v, τ = RNEA of its acceleration with the base held) are ready-to-assign
    float64[] fields.
    """
    import rbd_ros
    from rbd_ros.node.trajectory_source import SineTrajectory
    fixed = rbd_ros.load_model(urdf, floating_base=False, mimic="independent")
    traj = SineTrajectory(fixed, frequency=0.5, amplitude=0.3, seed=1)
    states = []
    for k in range(n):
        t = k / rate
        q, v, a = traj(t)
        tau = rbd_ros.rnea(fixed, q, v, a)
        base = (0.02 * np.sin(2 * np.pi * t), 0.0, 1.0 + 0.01 * np.cos(2 * np.pi * t),
                0.0, 0.0, 0.0, 1.0, 0.1 * np.cos(2 * np.pi * t), 0.0, 0.0, 0.0, 0.0, 0.05)
        states.append((array.array("d", q), array.array("d", v), array.array("d", tau), base))
    return list(fixed.joint_names), states


def receiver(out_path):
    """
    Run ``--receiver OUT``: take every output message, and on SIGINT save them to OUT.

    A process of its own that takes every output message (serialized, no deserialization)
    in a bare wait-set loop, and on SIGINT saves (topic, stamp, receipt time) to OUT (.npy).
    perf_counter is CLOCK_MONOTONIC: comparable across processes.
    """
    import rclpy
    from rclpy.impl.implementation_singleton import rclpy_implementation as _rclpy
    from rclpy.qos import HistoryPolicy, QoSProfile, ReliabilityPolicy
    from rclpy.signals import SignalHandlerOptions
    from rbd_ros.node.conversions import message_class
    from rbd_ros.outputs import BY_NAME

    stop = []
    signal.signal(signal.SIGINT, lambda *a: stop.append(1))
    rclpy.init(signal_handler_options=SignalHandlerOptions.NO)
    node = rclpy.create_node("rbd_bench_receiver")
    qos = QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE,
                     history=HistoryPolicy.KEEP_LAST)
    types = {k: message_class(BY_NAME[k].msgtype) for k in OUTPUTS}
    subs = [(i, types[k], node.create_subscription(types[k], f"/{NODE_NAME}/{k}", lambda m: None,
                                                   qos, raw=True).handle)
            for i, k in enumerate(OUTPUTS)]
    log = np.zeros((4_000_000, 3), np.int64)      # topic, stamp ns, receipt ns
    n = 0
    clock = time.perf_counter_ns
    wait_set = _rclpy.WaitSet(len(subs), 0, 0, 0, 0, 0, node.context.handle)
    print("ready", flush=True)
    while not stop:
        wait_set.clear_entities()
        for _, _, handle in subs:
            wait_set.add_subscription(handle)
        wait_set.wait(50_000_000)
        for i, msg_type, handle in subs:
            while n < len(log):
                taken = handle.take_message(msg_type, True)
                if taken is None:
                    break
                log[n] = i, stamp_ns_of(taken[0]), clock()
                n += 1
    np.save(out_path, log[:n])
    node.destroy_node()
    rclpy.shutdown()


def percentiles_ms(x):
    if not len(x):
        return "-", "-", "-"
    x = np.asarray(x) * 1e-6
    return f"{np.percentile(x, 50):.3f}", f"{np.percentile(x, 99):.3f}", f"{x.max():.3f}"


def main():
    args = parse_args()
    os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    if args.receiver:
        return receiver(args.receiver)
    urdf_path, floating = ROBOTS[args.robot]
    if urdf_path is None:
        raise SystemExit("example-robot-data is not installed (pip install example-robot-data)")
    if not floating:
        raise SystemExit(f"{args.robot} is a fixed-base robot; this bench drives a floating base")
    with open(urdf_path, encoding="utf-8") as f:
        urdf = f.read()

    # the receiver, then the node: they boot while this process prepares the states
    received_path = os.path.join(tempfile.mkdtemp(prefix="bench_node_"), "received.npy")
    recv = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--receiver",
                             received_path], stdout=subprocess.PIPE, text=True,
                            start_new_session=True)
    log = tempfile.NamedTemporaryFile("w+", prefix="bench_node_", suffix=".log", delete=False)
    cmd = [os.path.join(os.path.dirname(sys.executable), "dynamics_node"), "--ros-args",
           "-r", f"__node:={NODE_NAME}", "-p", "floating_base:=true",
           "-p", "mimic_joints:=independent", "-p", f"executor:={args.executor}"]
    for k in OUTPUTS:
        cmd += ["-p", f"publish_{k}:=true"]
    node = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                            env=dict(os.environ, PYTHONUNBUFFERED="1"), start_new_session=True)

    import rclpy
    from diagnostic_msgs.msg import DiagnosticArray
    from nav_msgs.msg import Odometry
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.qos import (DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy)
    from rclpy.signals import SignalHandlerOptions
    from sensor_msgs.msg import JointState
    from std_msgs.msg import String

    joint_names, states = make_states(urdf, STATES, args.rate)

    rclpy.init(signal_handler_options=SignalHandlerOptions.NO)
    bench = rclpy.create_node("rbd_bench_node")
    reliability = (ReliabilityPolicy.RELIABLE if args.qos == "reliable"
                   else ReliabilityPolicy.BEST_EFFORT)
    input_qos = QoSProfile(depth=10, reliability=reliability, history=HistoryPolicy.KEEP_LAST)
    desc_qos = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                          durability=DurabilityPolicy.TRANSIENT_LOCAL,
                          history=HistoryPolicy.KEEP_LAST)
    desc_pub = bench.create_publisher(String, "robot_description", desc_qos)
    js_pub = bench.create_publisher(JointState, "joint_states", input_qos)
    odom_pub = bench.create_publisher(Odometry, "odom", input_qos)
    desc_pub.publish(String(data=urdf))

    clock = time.perf_counter_ns
    diagnostics = []                # (perf_counter ns, {key: value}) of the node's status

    def on_diag(msg):
        for st in msg.status:
            if st.name.startswith(NODE_NAME + ":"):
                diagnostics.append((clock(), {kv.key: kv.value for kv in st.values}))
    bench.create_subscription(DiagnosticArray, "/diagnostics", on_diag, 10)

    executor = SingleThreadedExecutor()
    executor.add_node(bench)
    spinner = threading.Thread(target=executor.spin, daemon=True)
    spinner.start()

    period_ns = int(round(1e9 / args.rate))
    published = []                  # (stamp ns, publish perf_counter ns) per joint_states
    js = JointState()
    js.name = joint_names
    odom = Odometry()
    odom.header.frame_id, odom.child_frame_id = "odom", "base_link"
    ros_clock = bench.get_clock()
    late = 0
    phase = {"measure_from": None, "measure_to": None}

    def publish(k):
        q, v, tau, base = states[k % STATES]
        stamp = ros_clock.now()
        msg_stamp = stamp.to_msg()
        p, o = odom.pose.pose, odom.twist.twist
        (p.position.x, p.position.y, p.position.z, p.orientation.x, p.orientation.y,
         p.orientation.z, p.orientation.w, o.linear.x, o.linear.y, o.linear.z,
         o.angular.x, o.angular.y, o.angular.z) = base
        odom.header.stamp = msg_stamp
        odom_pub.publish(odom)
        js.header.stamp = msg_stamp
        js.position, js.velocity, js.effort = q, v, tau
        t = clock()
        js_pub.publish(js)
        published.append((stamp.nanoseconds, t))

    def outputs_seen():
        # the node's first output, from its counters on /diagnostics
        return any(int(d.get("published", 0)) > 0 for _, d in diagnostics)

    status = 0
    try:
        if recv.stdout.readline().strip() != "ready":
            raise RuntimeError("the receiver process did not start")
        print(f"bench_node: {args.robot} ({len(joint_names)} joints, floating base) from "
              f"{urdf_path}; node pid {node.pid} (log {log.name}); inputs {args.qos} at "
              f"{args.rate:g} Hz; node executor {args.executor}; "
              f"ROS_DOMAIN_ID={os.environ.get('ROS_DOMAIN_ID', '0')}",
              flush=True)
        t_start = time.monotonic()
        next_t = clock()
        k = 0
        first = None
        measure_end = None
        while True:
            now = clock()
            if now < next_t:
                time.sleep((next_t - now) * 1e-9)
                continue
            if now - next_t > period_ns:        # fell behind by more than a period: no burst
                late += 1
                next_t = now
            publish(k)
            k += 1
            next_t += period_ns
            if node.poll() is not None:
                raise RuntimeError(f"dynamics_node exited with status {node.returncode}")
            if first is None:
                if outputs_seen():
                    first = time.monotonic()
                    print(f"first outputs after {first - t_start:.1f} s; warming up "
                          f"{args.warmup:g} s, then measuring {args.duration:g} s", flush=True)
                elif time.monotonic() - t_start > args.startup_timeout:
                    raise RuntimeError("no output from the node: " + open(log.name).read()[-2000:])
            elif phase["measure_from"] is None and time.monotonic() - first >= args.warmup:
                phase["measure_from"] = len(published)
                late = 0
                cpu0, wall0 = cpu_seconds(node.pid), time.monotonic()
                self0 = cpu_seconds(os.getpid())
                recv0 = cpu_seconds(recv.pid)
                t_meas0 = clock()
                load0 = loadavg()
                measure_end = wall0 + args.duration
            elif measure_end is not None and time.monotonic() >= measure_end:
                phase["measure_to"] = len(published)
                cpu1, wall1 = cpu_seconds(node.pid), time.monotonic()
                self1 = cpu_seconds(os.getpid())
                recv1 = cpu_seconds(recv.pid)
                t_meas1 = clock()
                break
        time.sleep(1.0)                                  # stragglers
        recv.send_signal(signal.SIGINT)
        recv.wait(30)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        status = 1
    except RuntimeError as exc:
        print(f"bench_node: {exc}", file=sys.stderr)
        status = 1
    finally:
        executor.shutdown(timeout_sec=1.0)
        if recv.poll() is None:
            recv.send_signal(signal.SIGINT)
            recv.wait(30)
        if node.poll() is None:
            node.send_signal(signal.SIGINT)
            try:
                node.wait(5)
            except subprocess.TimeoutExpired:
                node.kill()
        bench.destroy_node()
        if rclpy.ok():
            rclpy.shutdown()
    if status or phase["measure_to"] is None:
        return status or 1

    lo, hi = phase["measure_from"], phase["measure_to"]
    window = published[lo:hi]
    sent = {stamp: t for stamp, t in window}
    n_in = len(window)
    elapsed = wall1 - wall0
    rows = []
    worst_p99, total_missing = 0.0, 0
    received = np.load(received_path)
    shutil.rmtree(os.path.dirname(received_path), ignore_errors=True)
    for i, k in enumerate(OUTPUTS):
        lat = []
        seen = set()
        for stamp, t in received[received[:, 0] == i, 1:].tolist():
            t0 = sent.get(stamp)
            if t0 is not None and stamp not in seen:
                seen.add(stamp)
                lat.append(t - t0)
        missing = n_in - len(seen)
        total_missing += missing
        p50, p99, mx = percentiles_ms(lat)
        if lat:
            worst_p99 = max(worst_p99, float(p99))
        rows.append((f"~/{k}", len(seen), missing, p50, p99, mx))

    # each /diagnostics message covers the second before it: those inside the window
    in_window = [d for t, d in diagnostics if t_meas0 + 900_000_000 <= t <= t_meas1 + 100_000_000]
    tick_p50, tick_p99, tick_max = (
        [float(d[key]) for d in in_window if key in d]
        for key in ("tick latency p50 [us]", "tick latency p99 [us]", "tick latency max [us]"))
    last = diagnostics[-1][1] if diagnostics else {}

    print()
    print(f"{args.robot}: nq={len(joint_names) + 7}, nv={len(joint_names) + 6}; "
          f"{elapsed:.1f} s measured; load average {load0} -> {loadavg()} "
          f"on {os.cpu_count()} CPUs (shared machine)")
    print(f"{'topic':<22} {'messages':>9} {'dropped':>8} {'lat p50 [ms]':>13} "
          f"{'lat p99 [ms]':>13} {'lat max [ms]':>13}")
    print(f"{'joint_states (in)':<22} {n_in:>9} {'':>8}   published at {n_in / elapsed:.1f} Hz "
          f"({late} late cycles)")
    print(f"{'odom (in)':<22} {n_in:>9}")
    for name, n, missing, p50, p99, mx in rows:
        print(f"{name:<22} {n:>9} {missing:>8} {p50:>13} {p99:>13} {mx:>13}")
    node_cpu = (cpu1 - cpu0) / elapsed * 100
    print(f"node CPU: {node_cpu:.0f} % of one core ({cpu1 - cpu0:.1f} s over {elapsed:.1f} s); "
          f"bench publisher: {(self1 - self0) / elapsed * 100:.0f} %, receiver: "
          f"{(recv1 - recv0) / elapsed * 100:.0f} %")
    if tick_p50:
        print(f"node tick (compute + publish, /diagnostics): p50 {np.median(tick_p50):.0f} µs, "
              f"p99 {max(tick_p99):.0f} µs (worst 1 s window), max {max(tick_max):.0f} µs")
    diag_in = [(t, d) for t, d in diagnostics if t_meas0 <= t <= t_meas1 + 100_000_000]
    if len(diag_in) >= 2:
        (ta, da), (tb, db) = diag_in[0], diag_in[-1]
        got = int(db["joint_states"]) - int(da["joint_states"])
        print(f"node received {got / ((tb - ta) * 1e-9):.1f} joint_states/s over "
              f"{(tb - ta) * 1e-9:.1f} s of the window (its /diagnostics counters), "
              f"published at {n_in / elapsed:.1f} Hz")
    if last:
        counts = {k: last.get(k) for k in ("joint_states", "ticks", "published", "skipped")}
        print(f"node counters (whole run): {counts}")
    ok_drops, ok_lat = total_missing == 0, worst_p99 < GOAL_P99_MS
    print(f"goals: no drops at {args.rate:g} Hz: {'met' if ok_drops else 'NOT met'} "
          f"({total_missing} missing outputs); p99 < {GOAL_P99_MS:g} ms: "
          f"{'met' if ok_lat else 'NOT met'} (worst p99 {worst_p99:.3f} ms)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
