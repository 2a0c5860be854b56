"""
rbd_demo: the dynamics node on a moving robot, with a live report and correctness check.

    rbd_demo [--duration 10] [--rate 200] [--robot rbd_arm7|rbd_quadruped|FILE.urdf] [--all-outputs]

1. starts ``dynamics_node`` (the console script of this virtualenv) as a subprocess, reading
   the URDF from the ``robot_description`` topic;
2. runs a :class:`~rbd_ros.tools.trajectory_source.TrajectorySource` in this process: it
   publishes the URDF and joint states (position, velocity, effort = RNEA of the trajectory's
   acceleration) along a smooth trajectory;
3. subscribes to the node's outputs and prints, once per second: message rates in and out,
   a few joint torques (``~/torques``), the largest |q̈ − q̈_traj| between the node's
   ``~/accelerations`` (ABA at the published effort) and the trajectory's acceleration at the
   same stamp (it must be round-off: a live correctness check), and the node's tick latency
   (from ``/diagnostics``).

The run lasts ``--duration`` seconds from the node's first output (or until Ctrl-C); the node
is then stopped cleanly. Exit status: 0 when outputs came in and the check held, 1 otherwise.
ROS_AUTOMATIC_DISCOVERY_RANGE defaults to LOCALHOST; ROS_DOMAIN_ID is taken as set.
"""
import argparse
import os
import shutil
import signal
import subprocess
import sys
import threading
import time

import numpy as np

from .. import outputs as table

NODE_NAME = "rbd_dynamics"
ACC_TOLERANCE = 1e-6          # rad/s²: ABA∘RNEA round trip is ~1e-12 on the bundled robots


def parse_args(argv=None):
    ap = argparse.ArgumentParser(prog="rbd_demo", description=__doc__.split("\n\n")[0])
    ap.add_argument("--duration", type=float, default=10.0,
                    help="seconds to run after the node's first output (default 10)")
    ap.add_argument("--rate", type=float, default=200.0,
                    help="joint_states messages per second (default 200)")
    ap.add_argument("--robot", default="rbd_arm7",
                    help="a bundled robot (rbd_arm7, rbd_quadruped) or a URDF file path")
    ap.add_argument("--all-outputs", action="store_true",
                    help="also publish " + ", ".join(o.topic for o in table.OUTPUTS
                                                     if o.default is False))
    ap.add_argument("--startup-timeout", type=float, default=600.0,
                    help="seconds to wait for the node's first output (default 600: a first "
                         "run compiles the kernels)")
    args = ap.parse_args(argv)
    if args.duration <= 0 or args.rate <= 0:
        ap.error("--duration and --rate must be > 0")
    return args


def resolve_robot(robot):
    """Return the URDF path of a bundled robot's name or a URDF path."""
    import rbd_ros
    if robot in rbd_ros.robots.names():
        return rbd_ros.robots.path(robot)
    if os.path.isfile(robot):
        return os.path.abspath(robot)
    raise SystemExit(f"rbd_demo: --robot {robot!r} is neither a bundled robot "
                     f"({', '.join(rbd_ros.robots.names())}) nor a URDF file")


def node_command():
    """Return the dynamics_node console script next to this interpreter (same virtualenv)."""
    exe = os.path.join(os.path.dirname(sys.executable), "dynamics_node")
    if os.access(exe, os.X_OK):
        return [exe]
    exe = shutil.which("dynamics_node")
    if exe:
        return [exe]
    return [sys.executable, "-m", "rbd_ros.node.dynamics_node"]


def _die_with_parent():
    """In the child: get SIGTERM when the demo dies (even by SIGKILL). Linux only."""
    try:
        import ctypes
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except Exception:
        pass


class NodeProcess:
    """The dynamics node as a subprocess; its log lines are echoed with a prefix."""

    def __init__(self, params):
        cmd = node_command() + ["--ros-args", "-r", f"__node:={NODE_NAME}"]
        for name, value in params.items():
            cmd += ["-p", f"{name}:={value}"]
        env = dict(os.environ, PYTHONUNBUFFERED="1", RCUTILS_COLORIZED_OUTPUT="0")
        # its own session: a Ctrl-C reaches the demo only, which then stops the node cleanly
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL, env=env, text=True, bufsize=1,
                                     start_new_session=True, preexec_fn=_die_with_parent)
        self.stopping = False
        self._echo = threading.Thread(target=self._pump, daemon=True)
        self._echo.start()

    def _pump(self):
        for line in self.proc.stdout:
            line = line.rstrip()
            if self.stopping and line.startswith("rbd_ros dynamics_node:"):
                continue          # its exit line after our SIGINT (rclpy's external shutdown)
            if line:
                print(f"  node| {line}", flush=True)

    def alive(self):
        return self.proc.poll() is None

    def stop(self, timeout=5.0):
        """SIGINT (rclpy shuts down), then SIGTERM, then SIGKILL. Returns the exit status."""
        self.stopping = True
        for sig, wait in ((signal.SIGINT, timeout), (signal.SIGTERM, 2.0),
                          (signal.SIGKILL, 2.0)):
            if self.proc.poll() is not None:
                break
            try:
                self.proc.send_signal(sig)
                self.proc.wait(wait)
            except subprocess.TimeoutExpired:
                continue
            except ProcessLookupError:
                break
        self._echo.join(1.0)
        return self.proc.poll()


class Monitor:
    """Subscribes to the node's outputs; counts per topic, checks q̈, keeps the diagnostics."""

    def __init__(self, node, source, outputs):
        from diagnostic_msgs.msg import DiagnosticArray
        from ..node.conversions import message_class
        self.source = source
        self.outputs = outputs
        self.counts = {k: 0 for k in outputs}
        self.window = {k: 0 for k in outputs}
        self.first_output = None
        self.torques = None                         # last ~/torques efforts (np array)
        self.acc_err_window = 0.0
        self.acc_err_max = 0.0
        self.acc_checked = 0
        self.diag = {}                              # latest key -> value of the node's status
        self.diag_prev_js = None
        self.node_js_rate = None
        self._acc_index = None
        for k in outputs:
            node.create_subscription(message_class(table.BY_NAME[k].msgtype),
                                     f"/{NODE_NAME}/{k}",
                                     lambda msg, k=k: self._on_output(k, msg), 50)
        node.create_subscription(DiagnosticArray, "/diagnostics", self._on_diagnostics, 10)

    def _on_output(self, topic, msg):
        self.counts[topic] += 1
        self.window[topic] += 1
        if self.first_output is None:
            self.first_output = time.monotonic()
        if topic == "torques":
            self.torques = np.frombuffer(msg.effort, np.float64).copy()
        elif topic == "accelerations":
            if self._acc_index is None:
                index = {n: i for i, n in enumerate(msg.names)}
                self._acc_index = np.array([index[n] for n in self.source.joint_names])
            qdd = np.frombuffer(msg.data, np.float64)[self._acc_index]
            _, _, a = self.source.trajectory(self.source.time_of(msg.header.stamp))
            err = float(np.abs(qdd - a).max())
            self.acc_err_window = max(self.acc_err_window, err)
            self.acc_err_max = max(self.acc_err_max, err)
            self.acc_checked += 1

    def _on_diagnostics(self, msg):
        for status in msg.status:
            if status.name.startswith(NODE_NAME + ":"):
                values = {kv.key: kv.value for kv in status.values}
                values["_message"] = status.message
                stamp = time.monotonic()
                js = int(values.get("joint_states", 0))
                if self.diag_prev_js is not None and stamp > self.diag_prev_js[0]:
                    self.node_js_rate = (js - self.diag_prev_js[1]) / (stamp - self.diag_prev_js[0])
                self.diag_prev_js = (stamp, js)
                self.diag = values

    def take_window(self):
        counts, err = dict(self.window), self.acc_err_window
        self.window = {k: 0 for k in self.outputs}
        self.acc_err_window = 0.0
        return counts, err


def _header(outputs, shown):
    cols = ["  t[s]", "  js→", " node←"]
    cols += [f"{table.BY_NAME[k].symbol + '←':>6}" for k in outputs]
    cols += [f"{'τ ' + n[:9]:>11}" for n in shown]
    cols += ["  max|q̈−q̈_traj|", "  tick p50/p99 [µs]"]
    return " ".join(cols)


def _row(t, dt, sent, mon, counts, err, shown_idx):
    cols = [f"{t:6.1f}", f"{sent / dt:5.0f}",
            f"{mon.node_js_rate:6.0f}" if mon.node_js_rate is not None else f"{'-':>6}"]
    cols += [f"{counts[k] / dt:6.0f}" for k in mon.outputs]
    if mon.torques is not None:
        cols += [f"{mon.torques[i]:+11.3f}" for i in shown_idx]
    else:
        cols += [f"{'-':>11}" for _ in shown_idx]
    cols.append(f"{err:16.2e}" if counts.get("accelerations") else f"{'-':>16}")
    p50, p99 = mon.diag.get("tick latency p50 [us]"), mon.diag.get("tick latency p99 [us]")
    cols.append(f"{p50:>9}/{p99:<9}" if p50 else f"{'-':>19}")
    return " ".join(cols)


def run(args):
    """Run the demo; return the exit status."""
    os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    urdf_path = resolve_robot(args.robot)
    outputs = table.NAMES if args.all_outputs else table.DEFAULTS
    # the publish_<name> switches (end_effector_frame names a link: the demo leaves it off)
    params = {o.parameter: "true" if o.name in outputs else "false" for o in table.OUTPUTS
              if o.parameter == "publish_" + o.name}
    params.update(robot_description_topic="robot_description", floating_base="false",
                  mimic_joints="independent")

    # the node first: it boots (imports, numba cache) while this process sets up
    node_proc = NodeProcess(params)
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.parameter import Parameter
    from rclpy.signals import SignalHandlerOptions
    from .trajectory_source import TrajectorySource

    def on_term(signum, frame):
        raise KeyboardInterrupt
    signal.signal(signal.SIGTERM, on_term)

    rclpy.init(signal_handler_options=SignalHandlerOptions.NO)   # Ctrl-C: KeyboardInterrupt
    executor = SingleThreadedExecutor()
    source = monitor_node = monitor = None
    try:
        source = TrajectorySource(parameter_overrides=[
            Parameter("urdf_file", value=urdf_path),
            Parameter("mimic_joints", value="independent"),
            Parameter("rate_hz", value=float(args.rate)),
            Parameter("publish_description", value=True)])
        monitor_node = rclpy.create_node("rbd_demo_monitor")
        monitor = Monitor(monitor_node, source, outputs)
        executor.add_node(source)
        executor.add_node(monitor_node)
        env_domain = os.environ.get("ROS_DOMAIN_ID", "0")
        print(f"rbd_demo: {source.model.name!r} ({len(source.joint_names)} joints, "
              f"{urdf_path}); dynamics_node pid {node_proc.proc.pid}; joint_states at "
              f"{args.rate:g} Hz; ROS_DOMAIN_ID={env_domain}; {args.duration:g} s after the "
              f"first output (Ctrl-C stops)", flush=True)
        _spin(executor, node_proc, monitor, source, outputs, args)
    except KeyboardInterrupt:
        print("\nrbd_demo: interrupted", flush=True)
    finally:
        rc = node_proc.stop()
        executor.shutdown()
        for n in (source, monitor_node):
            if n is not None:
                n.destroy_node()
        if rclpy.ok():
            rclpy.shutdown()
    if monitor is None:
        return 1
    return _verdict(monitor, source, rc)


def _alive(node_proc):
    """Tell whether the node still runs (and say so when it does not)."""
    if node_proc.alive():
        return True
    print(f"rbd_demo: dynamics_node exited with status {node_proc.proc.returncode}",
          file=sys.stderr)
    return False


def _wait_first_output(executor, node_proc, monitor, start, timeout):
    """Spin until the node's first output; False when it exits or ``timeout`` s pass."""
    next_note = start + 15.0
    while monitor.first_output is None:
        executor.spin_once(timeout_sec=0.01)
        now = time.monotonic()
        if not _alive(node_proc):
            return False
        if now - start > timeout:
            print(f"rbd_demo: no output from the node within {timeout:g} s", file=sys.stderr)
            return False
        if now >= next_note:
            print(f"waiting for the node's first output ({now - start:.0f} s; the first run "
                  f"after an install or a source change compiles the kernels, which takes "
                  f"minutes)", flush=True)
            next_note += 15.0
    return True


def _spin(executor, node_proc, monitor, source, outputs, args):
    """Spin for ``--duration`` s after the node's first output, printing a row a second."""
    start = time.monotonic()
    if not _wait_first_output(executor, node_proc, monitor, start, args.startup_timeout):
        return
    names = source.joint_names
    shown_idx = list(range(min(3, len(names))))
    first = monitor.first_output
    end, next_report = first + args.duration, first + 1.0
    last_report, last_sent = first, source.published
    print(f"first output after {first - start:.1f} s (node start, URDF, warm-up)")
    print("per second: js→ joint_states sent, node← joint_states the node got "
          "(/diagnostics), τ← q̈← … outputs received; τ: ~/torques [N·m]; "
          "q̈ check: ~/accelerations vs the trajectory [rad/s²]; tick: the "
          "node's compute + publish time")
    print(_header(outputs, [names[i] for i in shown_idx]), flush=True)
    while True:
        executor.spin_once(timeout_sec=0.01)
        now = time.monotonic()
        if not _alive(node_proc):
            return
        if now >= next_report:
            dt = now - last_report
            counts, err = monitor.take_window()
            print(_row(now - first, dt, source.published - last_sent, monitor, counts, err,
                       shown_idx), flush=True)
            last_report, last_sent = now, source.published
            next_report += 1.0
        if now >= end:
            return


def _verdict(monitor, source, rc):
    """Print the summary; 0 when outputs came in and the acceleration check held, else 1."""
    total = sum(monitor.counts.values())
    received = ", ".join(f"{k} {v}" for k, v in monitor.counts.items())
    print(f"summary: joint_states sent {source.published}; received {received}; "
          f"q̈ checked on {monitor.acc_checked} messages, max |q̈−q̈_traj| = "
          f"{monitor.acc_err_max:.2e} rad/s² (tolerance {ACC_TOLERANCE:g}); "
          f"node exit status {rc}")
    if total == 0:
        print("rbd_demo: FAILED: nothing received from the node", file=sys.stderr)
        return 1
    if monitor.acc_checked == 0:
        print("rbd_demo: FAILED: no ~/accelerations received: the check did not run",
              file=sys.stderr)
        return 1
    if monitor.acc_err_max > ACC_TOLERANCE:
        print("rbd_demo: FAILED: ~/accelerations differs from the trajectory's acceleration",
              file=sys.stderr)
        return 1
    print("rbd_demo: OK")
    return 0


def main(argv=None):
    sys.exit(run(parse_args(argv)))


if __name__ == "__main__":
    main()
