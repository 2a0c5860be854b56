"""
The dynamics node process against hostile input and Ctrl-C (issue 12): as users run it.

The node in a process of its own (EventsExecutor, the console script's entry), real rclpy
over loopback: garbage bytes do not end it, and Ctrl-C at any moment of start-up is a clean
stop. The in-process cases are in ``test_node_hostile.py``.
"""
import os
import signal
import subprocess
import sys
import time

import pytest  # noqa: E402

from sensor_msgs.msg import JointState  # noqa: E402

from node_helpers import RELIABLE, SERVICES, probing, same_stamp, wait_for  # noqa: E402
from node_cases import (ARM7, GARBAGE, QUADRUPED, _run_node_process,  # noqa: E402
                        assert_matches_core, call_inverse_dynamics, core_model, message,
                        random_state, xml)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_garbage_joint_states_in_the_node_process(tmp_path):
    """The process (EventsExecutor) survives garbage and still publishes correct torques."""
    model = core_model(ARM7)
    ns, proc, log = _run_node_process(tmp_path, {"robot_description": xml(ARM7),
                                                 "diagnostics_period": 0.0})
    with probing(ns, proc) as probe:
        tester = probe.node
        got = probe.subscribe(JointState, f"{ns}/rbd_dynamics/torques")
        pub = tester.create_publisher(JointState, f"{ns}/joint_states", RELIABLE)
        client = tester.create_client(SERVICES["inverse_dynamics"],
                                      f"{ns}/rbd_dynamics/inverse_dynamics")

        def answered(msg):
            def check():
                assert proc.poll() is None, open(log.name).read()
                pub.publish(msg)
                time.sleep(0.05)
                return any(same_stamp(m.header.stamp, msg.header.stamp) for m in got)
            return check
        q, v, tau = random_state(model, 5)
        wait_for(answered(message(model, q, v, tau, seed=5)), timeout=60.0,
                 what="~/torques from the node process")
        for _ in range(3):
            for raw in GARBAGE:
                pub.publish(raw)
        wait_for(lambda: proc.poll() is not None
                 or "malformed joint_states" in open(log.name).read(),
                 what="the node to log the garbage")
        assert proc.poll() is None, f"the node exited:\n{open(log.name).read()[-2000:]}"
        q, v, tau = random_state(model, 6)
        msg = message(model, q, v, tau, seed=6)
        wait_for(answered(msg), what="~/torques after the garbage")
        out = next(m for m in got if same_stamp(m.header.stamp, msg.header.stamp))
        assert_matches_core(None, model, {"torques": out}, q, v, tau)
        assert client.wait_for_service(timeout_sec=30.0)
        call_inverse_dynamics(client, model, q, v)
        assert proc.poll() is None
    assert "Traceback" not in open(log.name).read()


# -- 6: SIGINT during start-up -----------------------------------------------------------------
def console_script_command():
    """Return the command of the dynamics_node console script, as setup.py declares it."""
    import re
    with open(os.path.join(ROOT, "setup.py"), encoding="utf-8") as f:
        module, function = re.search(r'"dynamics_node = ([\w.]+):(\w+)"', f.read()).groups()
    return [sys.executable, "-c", f"import sys; from {module} import {function}; "
            f"sys.exit({function}())"]


def wait_for_imports(proc, timeout=30.0):
    """
    Wait until ``proc`` has loaded numpy: it runs the entry, whose stop handler is installed.

    A signal before that lands in Python's own start-up (site, the venv's .pth files): the
    interpreter's default handler, nothing of ours; on a loaded machine that takes seconds.
    """
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            with open(f"/proc/{proc.pid}/maps", encoding="utf-8", errors="replace") as f:
                if "numpy" in f.read():
                    return
        except OSError:
            return                                   # no /proc: the delays alone
        time.sleep(0.005)


@pytest.mark.parametrize("delay", [0.0, 0.3, 0.7, 1.3])
def test_sigint_during_startup_is_a_clean_stop(tmp_path, delay):
    """Ctrl-C at any moment of start-up (imports, description, warm-up): exit 0, no traceback."""
    import yaml
    params = tmp_path / "params.yaml"
    params.write_text(yaml.safe_dump({"/**": {"ros__parameters": {
        "robot_description": xml(QUADRUPED), "floating_base": True}}}))
    log = open(tmp_path / "node.log", "w+")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [ROOT] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
    proc = subprocess.Popen(console_script_command() + [
        "--ros-args", "-r", f"__ns:=/rbd_sigint_{os.getpid()}_{tmp_path.name}",
        "--params-file", str(params)], stdout=log, stderr=subprocess.STDOUT, env=env,
        cwd=str(tmp_path))
    try:
        wait_for_imports(proc)
        time.sleep(delay)
        proc.send_signal(signal.SIGINT)
        rc = proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    text = open(log.name).read()
    assert rc == 0 and "Traceback" not in text and "KeyboardInterrupt" not in text, \
        f"exit {rc}:\n{text[-3000:]}"
