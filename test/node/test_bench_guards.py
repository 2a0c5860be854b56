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


def _running(pid):
    """Whether process ``pid`` runs: exists and is not a zombie (exited, its parent gone)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


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


def _children(pid):
    """Return the pids of process ``pid``'s children (/proc/<pid>/task/*/children)."""
    found = []
    for task in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{task}/children") as f:
            found += [int(child) for child in f.read().split()]
    return found


@pytest.mark.parametrize("command", [
    ["bench_node.py", *BENCH_ARGS],
    # --delay past the test: perf is never started, only the bench it wraps
    ["node_perf.py", "--delay", "600", "--", *BENCH_ARGS]], ids=["bench_node", "node_perf"])
def test_a_bench_killed_by_sigterm_stops_the_node_it_started(command):
    """
    The bench on arm7, SIGTERM once its node runs: the bench exits, and so does the node.

    node_perf runs bench_node as its child: killed, it stops that bench, which stops the node.
    """
    bench = subprocess.Popen([sys.executable, os.path.join(BENCH, command[0]), *command[1:]],
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    node_pid, lines, started = None, [], []
    try:
        for line in bench.stdout:
            lines.append(line)
            if ": node pid " in line:
                node_pid = int(line.split(": node pid ")[1].split()[0])
            if node_pid and "measuring" in line:
                break
        assert node_pid, "".join(lines)
        started = [pid for pid in _children(bench.pid) if pid != node_pid]
        bench.send_signal(signal.SIGTERM)
        bench.wait(90)
        assert "interrupted" in bench.stdout.read()
        deadline = time.monotonic() + 15
        while any(map(_running, [node_pid, *started])) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not any(map(_running, [node_pid, *started])), "".join(lines)
    finally:
        if bench.poll() is None:
            bench.kill()
        for pid in [node_pid, *started]:
            if pid and _running(pid):
                os.kill(pid, signal.SIGKILL)
