"""
One measured run of the dynamics node for ``bench_node.py``, from a tree of ``node_trees``.

A run starts a receiver process (``node_receiver.receiver``, through ``bench_node.py
--receiver``) and a ``dynamics_node`` process of one source tree (PYTHONPATH and
NUMBA_CACHE_DIR set to the tree's), publishes odometry and joint states at the given rate from
the bench process, and returns what it measured (:func:`run_once`): the node's tree, or the
floor's in its place.
"""
import array
import gc
import os
import signal
import subprocess
import sys
import tempfile
import time

import numpy as np

import node_graph
from node_trees import NODE_NAME
from proc_cpu import cpu_by_thread, cpu_seconds, cpu_ticks, loadavg

HERE = os.path.dirname(os.path.abspath(__file__))
STATES = 1000                     # distinct states, cycled


def percentiles_ms(x):
    if not len(x):
        return None, None, None
    x = np.asarray(x) * 1e-6
    return float(np.percentile(x, 50)), float(np.percentile(x, 99)), float(x.max())


def make_states(urdf, n, rate):
    """
    Make n consecutive states of a smooth joint trajectory, and base poses and twists.

    The states (q, v, τ = RNEA of its acceleration with the base held) are ready-to-assign
    float64[] fields.
    """
    import rbd_ros
    from rbd_ros.tools.trajectory_source import SineTrajectory
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


def start_processes(args, tree, outputs):
    """Start the receiver, then the node of ``tree``; return (receiver, node, log, path)."""
    received_path = os.path.join(tempfile.mkdtemp(prefix="bench_node_"), "received.npy")
    recv = subprocess.Popen([sys.executable, os.path.join(HERE, "bench_node.py"), "--receiver",
                             received_path, "--receiver-outputs", ",".join(outputs)],
                            stdout=subprocess.PIPE, text=True, start_new_session=True)
    node, log = start_node(args, tree, outputs)
    return recv, node, log, received_path


def start_node(args, tree, outputs):
    """Start the node of ``tree`` with every output in ``outputs``; return (process, log)."""
    log = tempfile.NamedTemporaryFile("w+", prefix="bench_node_", suffix=".log", delete=False)
    node = subprocess.Popen(command_line(args, tree, outputs), stdout=log,
                            stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=tree.env(),
                            cwd=tempfile.gettempdir(), start_new_session=True)
    return node, log


def command_line(args, tree, outputs):
    """Return the command that runs ``tree``'s node (or the floor) with ``outputs`` on."""
    floating = not getattr(args, "fixed_base", False)
    if getattr(tree, "floor", False):
        cmd = [sys.executable, os.path.join(HERE, "node_floor.py"), "--urdf", args.urdf_path,
               "--executor", args.executor, "--outputs", ",".join(outputs)]
        cmd += ["--floating-base"] if floating else []
        frame = getattr(args, "contact_frame", "")
        cmd += ["--contact-frame", frame] if frame else []
        cmd += ["--core"] if tree.core else ["--pinocchio"] if tree.pinocchio else []
        return cmd
    # the node module itself, not the console script: an older tree has no rbd_ros_entry
    cmd = [sys.executable, "-m", "rbd_ros.node.dynamics_node", "--ros-args",
           "-r", f"__node:={NODE_NAME}", "-p", f"floating_base:={str(floating).lower()}",
           "-p", "mimic_joints:=independent", "-p", f"executor:={args.executor}"]
    from node_command import COMMAND, node_parameters
    if COMMAND in outputs:
        cmd += node_parameters(args.command_joints)
    values = output_parameters([k for k in outputs if k != COMMAND], args.contact_frame,
                               args.end_effector)
    for name, value in values.items():
        text = str(value).lower() if isinstance(value, bool) else value
        cmd += ["-p", f"{name}:={text}"]
    return cmd


def output_parameters(outputs, contact_frame, end_effector):
    """
    Return {parameter: value}: the node's parameters that turn ``outputs`` on, the others off.

    Each output is switched by its table's parameter (``Output.parameter``): a publish_
    flag, the end effector's frame (``end_effector``), the centroidal momentum's the centre
    of mass's flag; the contact wrench by the observer's frame (``contact_frame``). The
    outputs on by default and not in ``outputs`` are turned off.
    """
    from rbd_ros.outputs import BY_NAME, NAMES, OBSERVER_BY_NAME
    values = {BY_NAME[k].parameter: False for k in NAMES
              if BY_NAME[k].parameter.startswith("publish_")}
    for k in outputs:
        if k == "contact_wrench":
            values["contact_frame"] = contact_frame
        elif k == "end_effector":
            values["end_effector_frame"] = end_effector
        else:
            values[{**BY_NAME, **OBSERVER_BY_NAME}[k].parameter] = True
    return values


def start_hammer(args):
    """
    Start the planner client of ``--hammer``: trajectory_torques requests back to back.

    A process of its own (its request building and DDS work must not slow the bench's
    publisher); it prints its count and round trips when stopped. None without --hammer.
    """
    if not getattr(args, "hammer", 0):
        return None
    return subprocess.Popen([sys.executable, os.path.join(HERE, "bench_node.py"),
                             "--hammer-client", str(args.hammer), "--robot", args.robot],
                            stdout=subprocess.PIPE, text=True, start_new_session=True)


def stop(process, timeout=30):
    if process.poll() is None:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


class Publisher:
    """The bench's inputs: joint states and odometry at a rate, and the node's /diagnostics."""

    def __init__(self, bench, js_pub, odom_pub, joint_names, states):
        from nav_msgs.msg import Odometry
        from sensor_msgs.msg import JointState
        self.node, self.js_pub, self.odom_pub, self.states = bench, js_pub, odom_pub, states
        self.created = time.monotonic()  # node_graph: what it sees is believed a moment later
        self.js = JointState()
        self.js.name = joint_names
        self.odom = Odometry()
        self.odom.header.frame_id, self.odom.child_frame_id = "odom", "base_link"
        self.ros_clock = bench.get_clock()
        self.published = []             # (stamp ns, publish perf_counter ns) per joint_states
        self.record = True              # False: a soak keeps no per-message record
        self.diagnostics = []           # (perf_counter ns, {key: value}) of the node's status

    def on_diagnostics(self, msg):
        for st in msg.status:
            if st.name.startswith(NODE_NAME + ":"):
                self.diagnostics.append((time.perf_counter_ns(),
                                         {kv.key: kv.value for kv in st.values}))

    def publish(self, k):
        q, v, tau, base = self.states[k % STATES]
        stamp = self.ros_clock.now()
        msg_stamp = stamp.to_msg()
        p, o = self.odom.pose.pose, self.odom.twist.twist
        (p.position.x, p.position.y, p.position.z, p.orientation.x, p.orientation.y,
         p.orientation.z, p.orientation.w, o.linear.x, o.linear.y, o.linear.z,
         o.angular.x, o.angular.y, o.angular.z) = base
        self.odom.header.stamp = msg_stamp
        self.odom_pub.publish(self.odom)
        self.js.header.stamp = msg_stamp
        self.js.position, self.js.velocity, self.js.effort = q, v, tau
        t = time.perf_counter_ns()
        self.js_pub.publish(self.js)
        if self.record:
            self.published.append((stamp.nanoseconds, t))

    def outputs_seen(self):
        # the node's first output, from its counters on /diagnostics
        return any(int(d.get("published", 0)) > 0 for _, d in self.diagnostics)

    def planner_starting(self):
        # the node's planner process still starting (its imports, its robot, its DDS
        # discovery: ~2 s of CPU at nice +10), by the newest /diagnostics; a node without
        # one, or one that does not say, is not waited for
        newest = self.diagnostics[-1][1] if self.diagnostics else {}
        return newest.get("planner", "").startswith("starting")


def paced(args, source, node, log_name):
    """
    Publish at ``args.rate``, yielding (messages published, late cycles) after each one.

    A cycle that fell behind by more than a period restarts the schedule (no burst) and is
    counted late; a node that exited ends the run with its log's tail.
    """
    clock = time.perf_counter_ns
    period_ns = int(round(1e9 / args.rate))
    gc.freeze()               # as the node does: no full collection of the imports mid-run
    next_t, k, late = clock(), 0, 0
    while True:
        now = clock()
        if now < next_t:
            time.sleep((next_t - now) * 1e-9)
            continue
        if now - next_t > period_ns:
            late += 1
            next_t = now
        source.publish(k)
        k += 1
        next_t += period_ns
        if node.poll() is not None:
            raise RuntimeError(f"dynamics_node exited with status {node.returncode}: "
                               + open(log_name).read()[-2000:])
        yield k, late


def publish_and_measure(args, source, node, recv, log_name):
    """
    Publish until the node answers, its planner process serving, then warm up and measure.

    The window: (first, last) index into ``source.published``, wall seconds, the CPU
    seconds of the node and its planner process (by ``proc_cpu.cpu_by_thread``), of the
    bench and of the receiver, steal and total CPU ticks, perf_counter ns at its ends, late
    cycles, the load average at its start.
    """
    clock = time.perf_counter_ns
    t_start = time.monotonic()
    first, w, late0 = None, {}, 0
    for k, late in paced(args, source, node, log_name):
        if first is None:
            if source.outputs_seen() and not source.planner_starting():
                first = time.monotonic()
                print(f"  first outputs, and the planner process (if any) serving, after "
                      f"{first - t_start:.1f} s; warming up {args.warmup:g} s, then measuring "
                      f"{args.duration:g} s", flush=True)
                if getattr(source, "enable_command", None) is not None:
                    source.enable_command()             # bench_node --outputs effort_command
            elif time.monotonic() - t_start > args.startup_timeout:
                raise RuntimeError("no output from the node, or its planner process still "
                                   "starting: " + open(log_name).read()[-2000:])
        elif not w and time.monotonic() - first >= args.warmup:
            late0 = late
            w = dict(lo=len(source.published), threads0=cpu_by_thread(node.pid),
                     wall0=time.monotonic(), self0=cpu_seconds(os.getpid()),
                     recv0=cpu_seconds(recv.pid), t0=clock(), ticks0=cpu_ticks(),
                     load0=loadavg())
        elif w and time.monotonic() >= w["wall0"] + args.duration:
            w.update(hi=len(source.published), threads1=cpu_by_thread(node.pid),
                     wall1=time.monotonic(), self1=cpu_seconds(os.getpid()),
                     recv1=cpu_seconds(recv.pid), t1=clock(), ticks1=cpu_ticks(),
                     late=late - late0)
            return w


def analyse(w, source, received, outputs):
    """Return the figures of one measured window ``w`` (see :func:`publish_and_measure`)."""
    if getattr(source, "command_keys", None) is not None and "effort_command" in outputs:
        from node_command import stamps_of_commands
        stamps_of_commands(received, outputs.index("effort_command"), source.published,
                           source.command_keys, STATES)
    window = source.published[w["lo"]:w["hi"]]
    sent = {stamp: t for stamp, t in window}
    elapsed = w["wall1"] - w["wall0"]
    topics, all_lat, missing_total = {}, [], 0
    for i, k in enumerate(outputs):
        lat, seen = [], set()
        for stamp, t in received[received[:, 0] == i, 1:].tolist():
            t0 = sent.get(stamp)
            if t0 is not None and stamp not in seen:
                seen.add(stamp)
                lat.append(t - t0)
        missing = len(window) - len(seen)
        missing_total += missing
        all_lat += lat
        topics[k] = (len(seen), missing, *percentiles_ms(lat))
    # each /diagnostics message covers the second before it: those inside the window
    in_window = [d for t, d in source.diagnostics
                 if w["t0"] + 900_000_000 <= t <= w["t1"] + 100_000_000]
    ticks = {key: [float(d[key]) for d in in_window if key in d]
             for key in ("tick latency p50 [us]", "tick latency p99 [us]")}
    steal = w["ticks1"][0] - w["ticks0"][0]
    total = w["ticks1"][1] - w["ticks0"][1]
    last = source.diagnostics[-1][1] if source.diagnostics else {}
    p50, p99, mx = percentiles_ms(all_lat)
    # CPU per answered message: a node that answers fewer (a loaded machine) uses less
    answered = max(1, min((n for n, *_ in topics.values()), default=1))
    cpu = sum(w["threads1"]) - sum(w["threads0"])         # the node and its planner process
    return dict(
        n_in=len(window), elapsed=elapsed, rate=len(window) / elapsed, late=w["late"],
        dropped=missing_total, topics=topics, lat_p50=p50, lat_p99=p99, lat_max=mx,
        node_cpu=cpu / elapsed * 100,
        cpu_per_answer=cpu * 1e6 / answered,
        cpu_by_thread=[(b - a) * 1e6 / answered for a, b in zip(w["threads0"], w["threads1"])],
        bench_cpu=(w["self1"] - w["self0"]) / elapsed * 100,
        recv_cpu=(w["recv1"] - w["recv0"]) / elapsed * 100,
        tick_p50=float(np.median(ticks["tick latency p50 [us]"]))
        if ticks["tick latency p50 [us]"] else None,
        tick_p99=max(ticks["tick latency p99 [us]"], default=None),
        steal=100.0 * steal / total if total else 0.0, load=w["load0"],
        lost=last.get("messages_lost", "-"),
        counters={k: last.get(k) for k in ("joint_states", "ticks", "published", "skipped")})


def run_once(args, tree, source, outputs):
    """Run the node of ``tree`` once at ``args.rate``; return :func:`analyse`'s figures."""
    source.published.clear()
    source.diagnostics.clear()
    node_graph.wait_for_a_clear_graph(source.node, outputs,
                                      trusted_after=source.created + node_graph.DISCOVERY_S)
    recv = node = hammer = None
    try:
        recv, node, log, received_path = start_processes(args, tree, outputs)
        hammer = start_hammer(args)
        if recv.stdout.readline().strip() != "ready":
            raise RuntimeError("the receiver process did not start")
        print(f"{tree.label}: node pid {node.pid} (log {log.name}), PYTHONPATH={tree.path}",
              flush=True)
        w = publish_and_measure(args, source, node, recv, log.name)
        node_graph.refuse_company(source.node, outputs)  # discovered by now, if it was there
        time.sleep(1.0)                                  # stragglers
        stop(recv)
        received = np.load(received_path)
        if hammer is not None:
            stop(hammer)
            hammered = hammer.stdout.read().strip().splitlines()[-1:]
    finally:
        with node_graph.signals_held():           # a second Ctrl-C or SIGTERM waits for this
            for process, timeout in ((hammer, 30), (recv, 30), (node, 10)):
                if process is not None:
                    stop(process, timeout)
            if recv is not None:
                subprocess.run(["rm", "-rf", os.path.dirname(received_path)])
    figures = analyse(w, source, received, outputs)
    if hammer is not None:
        figures["hammer"] = hammered[0] if hammered else "no report"
    return figures
