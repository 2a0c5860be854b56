"""
``bench/node_graph.py``: a bench_node run keeps to itself, and leaves nothing behind.

Real rclpy and real processes on this process's own domain: a participant left on the
run's topics is found (once discovered) and stops the bench before a run; a bench killed
by SIGTERM mid-run stops the node it started, and so does ``node_perf.py`` killed around
one; a signal during the processes' stopping waits for it to finish.
"""
import os
import signal
import subprocess
import sys
import threading
import time

import pytest

import rclpy
from rclpy.context import Context
from rclpy.signals import SignalHandlerOptions
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

BENCH = os.path.join(os.path.dirname(__file__), "..", "..", "bench")
sys.path.insert(0, BENCH)
import node_graph  # noqa: E402
import proc_cpu  # noqa: E402
from node_trees import NODE_NAME  # noqa: E402


def _context():
    context = Context()
    rclpy.init(context=context, signal_handler_options=SignalHandlerOptions.NO)
    return context


def _until(condition, timeout=10.0):
    """Poll ``condition`` until it is true (DDS discovery takes a moment); return its value."""
    deadline = time.monotonic() + timeout
    while not (value := condition()) and time.monotonic() < deadline:
        time.sleep(0.05)
    return value


def test_a_participant_left_on_the_runs_topics_stops_the_bench_until_it_leaves():
    """
    A participant on the run's topics stops the bench, even before discovery; then it may run.

    Another participant (its own Context) subscribing to joint_states and publishing the
    node's torques, made before the bench's node: refused once discovered, even where the
    bench's first look finds nothing (``trusted_after``); the run goes on once it has left.
    """
    leftover_context = _context()
    bench_context = _context()
    try:
        leftover = rclpy.create_node("leftover_relay", context=leftover_context)
        leftover.create_subscription(JointState, "joint_states", lambda m: None, 10)
        leftover.create_publisher(Float64MultiArray, f"/{NODE_NAME}/torques", 10)
        bench = rclpy.create_node("rbd_bench_node", context=bench_context)
        bench.create_publisher(JointState, "joint_states", 10)
        with pytest.raises(RuntimeError, match=f"ROS_DOMAIN_ID {os.environ['ROS_DOMAIN_ID']}"):
            node_graph.wait_for_a_clear_graph(       # found if discovered within 4 s
                bench, ["torques"], timeout=2.0,
                trusted_after=time.monotonic() + node_graph.DISCOVERY_S)
        expected = ["1 other subscriber(s) of joint_states",
                    f"another publisher of /{NODE_NAME}/torques"]
        assert _until(lambda: node_graph.others_on_the_graph(bench, ["torques"]) == expected)
        assert node_graph.others_on_the_graph(bench, ["accelerations"]) == expected[:1]
        # as the run's node, it would be the one expected subscriber and publisher
        assert node_graph.others_on_the_graph(bench, ["torques"], node_running=True) == []
        leftover.create_subscription(JointState, "joint_states", lambda m: None, 10)
        assert _until(lambda: node_graph.others_on_the_graph(bench, [], node_running=True))
        with pytest.raises(RuntimeError, match="beside the node during the run"):
            node_graph.refuse_company(bench, ["torques"])
        leftover.destroy_node()
        rclpy.shutdown(context=leftover_context)
        node_graph.wait_for_a_clear_graph(bench, ["torques"], timeout=node_graph.LEAVE_S)
        assert node_graph.others_on_the_graph(bench, ["torques"]) == []
        bench.destroy_node()
    finally:
        for context in (leftover_context, bench_context):
            if context.ok():
                rclpy.shutdown(context=context)


def test_a_signal_while_the_processes_stop_waits_for_them():
    before = signal.getsignal(signal.SIGTERM)
    done = []
    try:
        node_graph.stop_children_on_sigterm()
        with pytest.raises(KeyboardInterrupt):
            with node_graph.signals_held():
                os.kill(os.getpid(), signal.SIGTERM)
                time.sleep(0.2)                     # not interrupted: the signal is held
                done.append(True)
        assert done == [True]
    finally:
        signal.signal(signal.SIGTERM, before)


BENCH_ARGS = ["--robot", "arm7", "--outputs", "torques", "--duration", "60"]
# node_perf's perf, on PATH: notes its pid (exec keeps it), records nothing, waits to be stopped
FAKE_PERF = '#!/bin/sh\necho $$ >> "$FAKE_PERF_PIDS"\nexec sleep 600\n'


def _read_lines(stream, lines):
    for line in stream:
        lines.append(line)


@pytest.mark.parametrize("script", ["bench_node.py", "node_perf.py"])
def test_a_bench_killed_by_sigterm_stops_the_node_it_started(script, tmp_path):
    """
    The bench on arm7, SIGTERM once its node runs: the bench exits, and so does the node.

    node_perf runs bench_node as its child and perf on the node: killed, it stops both, and
    bench_node stops the node.
    """
    perf_pids = tmp_path / "perf_pids"
    (tmp_path / "perf").write_text(FAKE_PERF)
    (tmp_path / "perf").chmod(0o755)
    env = {**os.environ, "PATH": f"{tmp_path}{os.pathsep}{os.environ['PATH']}",
           "FAKE_PERF_PIDS": str(perf_pids)}
    extra = ["--delay", "0", "--seconds", "600", "--"] if script == "node_perf.py" else []
    bench = subprocess.Popen([sys.executable, os.path.join(BENCH, script), *extra,
                              *BENCH_ARGS], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             text=True, env=env)
    lines, started, node_pid = [], [], None
    threading.Thread(target=_read_lines, args=(bench.stdout, lines), daemon=True).start()

    def output():
        return "".join(lines)
    try:
        assert _until(lambda: "measuring" in output(), 120), output()
        node_pid = int(output().split(": node pid ")[1].split()[0])
        if script == "node_perf.py":            # its perf on the node, started
            assert _until(lambda: perf_pids.exists() and perf_pids.read_text().strip(), 30)
        # its children and theirs (node_perf's bench_node starts the receiver), the node apart
        children = proc_cpu.children(bench.pid)
        started = [pid for pid in children + [grandchild for child in children
                                              for grandchild in proc_cpu.children(child)]
                   if pid != node_pid]
        bench.send_signal(signal.SIGTERM)
        bench.wait(90)
        said = "node_perf: interrupted" if script == "node_perf.py" else "interrupted"
        assert _until(lambda: said in output(), 10), output()
        perf = [int(p) for p in perf_pids.read_text().split()] if perf_pids.exists() else []
        left = [node_pid, *started, *perf]
        assert _until(lambda: not any(map(proc_cpu.running, left)), 15), (left, output())
    finally:
        if bench.poll() is None:
            bench.kill()
        perf = [int(p) for p in perf_pids.read_text().split()] if perf_pids.exists() else []
        for pid in [node_pid, *started, *perf]:
            if pid and proc_cpu.running(pid):
                os.kill(pid, signal.SIGKILL)
