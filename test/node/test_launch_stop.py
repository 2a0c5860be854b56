"""
Ctrl-C on ``ros2 launch`` while joint_states flow at 1 kHz: a clean stop, 20 times in a row.

Issue 13: SIGINT to the launch's process group aborted the node under load (a
KeyboardInterrupt raised inside a callback crossed rclpy's C++ code: "terminate called after
throwing an instance of 'pybind11::error_already_set'", exit code -6, 6 of 6 stops), and the
aborted node lingered in the graph. Each round here launches the node, waits until its
outputs flow under 1 kHz input, sends SIGINT to the process group as a terminal does, and
checks exit 0, no traceback or abort, and the node gone from the graph at once. SIGTERM to
the node process itself (what a supervisor sends) is checked the same way. Bounded: each
round waits at most 90 s for the start and 30 s for the stop.
"""
import os
import random
import threading
import time

import pytest

from sensor_msgs.msg import JointState  # noqa: E402

import ros_cli  # noqa: E402
from node_helpers import BEST_EFFORT, Probe, wait_for  # noqa: E402
from node_cases import ARM7, core_model, message, random_state  # noqa: E402

ROUNDS = 20
RATE_HZ = 1000.0


class Load:
    """joint_states at ~1 kHz into ``namespace`` from a thread, until ``close``."""

    def __init__(self, probe, namespace, model):
        self.publisher = probe.node.create_publisher(JointState, f"{namespace}/joint_states",
                                                     BEST_EFFORT)
        self.outputs = probe.subscribe(JointState, f"{namespace}/rbd_dynamics/torques",
                                       BEST_EFFORT)
        q, v, tau = random_state(model, 600)
        self.msg = message(model, q, v, tau, seed=600)
        self.running = True
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        next_time = time.monotonic()
        while self.running:
            self.publisher.publish(self.msg)
            next_time += 1.0 / RATE_HZ
            time.sleep(max(0.0, next_time - time.monotonic()))

    def close(self):
        self.running = False
        self.thread.join(timeout=5.0)


def one_round(probe, command, env, log, namespace, model, signal_group):
    """Start ``command``, load it, stop it under load; return (status, log text)."""
    proc = ros_cli.start(command, log, env)
    load = Load(probe, namespace, model)
    try:
        wait_for(lambda: proc.poll() is None and len(load.outputs) >= 200
                 or proc.poll() is not None, timeout=90.0, what="outputs under load")
        assert proc.poll() is None, ros_cli.read(log)[-3000:]
        time.sleep(random.uniform(0.0, 0.03))          # anywhere in the stream
        status = signal_group(proc)
    finally:
        load.close()
        ros_cli.kill(proc)
    topic = f"{namespace}/rbd_dynamics/torques"
    # gone from the graph at once (an aborted node lingered ~20 s)
    wait_for(lambda: probe.node.count_publishers(topic) == 0, timeout=5.0,
             what="the stopped node to leave the graph")
    return status, ros_cli.read(log)


def test_ctrl_c_on_ros2_launch_under_load_20_times(tmp_path):
    ros2 = ros_cli.require_ros2()
    env = ros_cli.environment(os.environ["ROS_DOMAIN_ID"])
    model = core_model(ARM7)
    base = f"/rbd_stop_{os.getpid()}"
    probe = Probe(base)
    try:
        for k in range(ROUNDS):
            ns = f"{base}_{k}"
            log = tmp_path / f"launch_{k}.log"
            status, text = one_round(
                probe, [ros2, "launch", "rbd_ros", "dynamics.launch.py", f"urdf_file:={ARM7}",
                        f"namespace:={ns}"], env, log, ns, model, ros_cli.stop)
            ros_cli.assert_clean_stop(status, text)
            assert "process has finished cleanly" in text, f"round {k}:\n{text[-3000:]}"
    finally:
        probe.close()


def test_sigterm_to_the_node_under_load(tmp_path):
    """SIGTERM (a supervisor's stop) to the node process under 1 kHz input: exit 0."""
    import signal
    import sys

    import yaml
    env = ros_cli.environment(os.environ["ROS_DOMAIN_ID"])
    model = core_model(ARM7)
    ns = f"/rbd_sigterm_{os.getpid()}"
    params = tmp_path / "params.yaml"
    with open(ARM7) as f:
        params.write_text(yaml.safe_dump({"/**": {"ros__parameters": {
            "robot_description": f.read()}}}))
    command = [sys.executable, "-c", "import sys, rbd_ros_entry; "
               "sys.exit(rbd_ros_entry.dynamics_node())", "--ros-args", "-r", f"__ns:={ns}",
               "--params-file", str(params)]
    env["PYTHONPATH"] = os.pathsep.join(p for p in [ros_cli.ROOT, env.get("PYTHONPATH")] if p)

    def terminate(proc):
        proc.send_signal(signal.SIGTERM)
        return proc.wait(timeout=30.0)
    probe = Probe(ns)
    try:
        for k in range(3):
            status, text = one_round(probe, command, env, tmp_path / f"node_{k}.log", ns,
                                     model, terminate)
            ros_cli.assert_clean_stop(status, text)
    finally:
        probe.close()


HALF_BUILT_LLVM_OBJECT = (
    "import signal, rbd_ros_entry\n"
    "from llvmlite.binding import ffi\n"
    "rbd_ros_entry.stop_on_signals()\n"
    "{stop}"
    # what a SIGINT inside the constructor of one of llvmlite's objects leaves (numba was
    # compiling): its __del__ then fails in llvmlite's own code
    "half_built = ffi.ObjectRef.__new__(ffi.ObjectRef)\n"
    "del half_built\n")


@pytest.mark.parametrize("stopped", [True, False])
def test_an_interrupted_compile_leaves_no_traceback(stopped):
    # CI saw "Exception ignored in: ObjectRef.__del__ ... AttributeError: _as_parameter_" after
    # a Ctrl-C during the first start's compile; without a stop it is a real error, and shown
    import subprocess
    import sys
    stop = "rbd_ros_entry._stop.append(signal.SIGINT)\n" if stopped else ""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        p for p in [ros_cli.ROOT, os.environ.get("PYTHONPATH")] if p))
    done = subprocess.run([sys.executable, "-c", HALF_BUILT_LLVM_OBJECT.format(stop=stop)],
                          env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    if stopped:
        assert done.stderr == "", done.stderr[-2000:]
    else:
        assert "_as_parameter_" in done.stderr, done.stderr[-2000:]
