"""
Every script of examples/ runs as a user runs it, and its output is checked against an oracle.

Each runs as a subprocess with a timeout. ``python_api.py``'s gravity torques and
``planner_client.py``'s torques are compared with Pinocchio's (the oracle layer);
``replay_bag.py``'s report with the bag's own numbers; ``gravity_launch.py``'s torques (from
the node that ``ros2 launch`` started) with Pinocchio's gravity; ``fleet_dask.py``'s message
counts with the simulated bags' lengths and its identified RMS error with the URDF's and the
simulated noise. The README's Python example must be
the one of ``examples/python_api.py`` (the README shows it, this test runs it).
"""
import os
import re
import subprocess
import sys

import numpy as np
import pytest

from helpers import require_module

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLES = os.path.join(ROOT, "examples")
ARM7 = os.path.join(ROOT, "rbd_ros", "robots", "rbd_arm7.urdf")


def run(script, *args, timeout=240, env=None):
    result = subprocess.run([sys.executable, os.path.join(EXAMPLES, script), *args], cwd=ROOT,
                            capture_output=True, text=True, timeout=timeout, env=env)
    assert result.returncode == 0, f"{script} failed:\n{result.stdout}{result.stderr}"
    return result.stdout


def numbers(text):
    return np.array([float(x) for x in re.findall(r"-?\d+\.\d+(?:e-?\d+)?", text)])


def pinocchio_arm7():
    pin = require_module("pinocchio", "pinocchio")
    model = pin.buildModelFromUrdf(ARM7)
    return pin, model, model.createData()


def test_every_example_is_tested_and_in_the_manual():
    with open(os.path.join(ROOT, "doc", "examples.md"), encoding="utf-8") as f:
        manual = f.read()
    with open(__file__, encoding="utf-8") as f:
        tests = f.read()
    for name in os.listdir(EXAMPLES):
        if name.endswith(".py"):
            assert f"../examples/{name}" in manual, f"{name} is not on doc/examples.md"
            assert f'"{name}"' in tests, f"{name} is not run here"


def test_readme_python_example_is_examples_python_api():
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        block = re.search(r"```python\n(.*?)```", f.read(), flags=re.S).group(1)
    with open(os.path.join(EXAMPLES, "python_api.py"), encoding="utf-8") as f:
        assert block in f.read()


@pytest.mark.pinocchio
def test_python_api_example():
    out = run("python_api.py", ARM7)
    assert "ABA(RNEA(a)) == a: True" in out
    assert "M symmetric positive definite: True" in out
    import rbd_ros
    pin, model, data = pinocchio_arm7()
    q = rbd_ros.load_model(ARM7).random_configuration(0)
    line = next(s for s in out.splitlines() if s.startswith("gravity torques"))
    expected = pin.computeGeneralizedGravity(model, data, q)
    assert np.allclose(numbers(line.split(":", 1)[1]), expected, atol=1e-3)


@pytest.mark.pinocchio
def test_planner_client_example():
    require_module("rclpy", "rclpy")
    require_module("rbd_ros_interfaces", "rbd_ros_interfaces (./dev.sh setup builds it)")
    out = run("planner_client.py", timeout=300)
    assert "trajectory_torques: True" in out and "retime_trajectory: True" in out
    # held at g(q0) from rest (the first answer's torques), the rollout stays put: FD(ID) = id
    assert "trajectory_forward: True" in out, out
    assert float(re.search(r"max \|q\(1 s\) - q\(0\)\| = (\S+) rad", out).group(1)) < 1e-6
    pin, model, data = pinocchio_arm7()
    line = next(s for s in out.splitlines() if "tau at point 0" in s)
    q0 = np.array([0, 0.3, 0, -1.5, 0, 1.8, 0.0])
    expected = pin.rnea(model, data, q0, np.zeros(7), np.zeros(7))
    assert np.allclose(numbers(line.split(":", 1)[1]), expected, atol=1e-3)
    duration = float(re.search(r"duration (\S+) s", out).group(1))
    assert 0 < duration < 60


def test_replay_bag_example(tmp_path):
    out = run("replay_bag.py", os.path.join(ROOT, "data", "example_arm7"), str(tmp_path),
              timeout=400)
    assert "1000 of 1000 messages answered" in out
    before, after = numbers(re.search(r"RMS torque error.*", out).group(0))
    # the bag's efforts come from inertias 20 % off the URDF's, plus 0.05 N m of noise
    assert after < before and 0.04 < after < 0.1
    assert os.path.exists(tmp_path / "bag_report" / "identified.urdf")


@pytest.mark.pinocchio
def test_gravity_launch_example():
    from ros_cli import environment, require_ros2
    require_ros2()
    require_module("rbd_ros_interfaces", "rbd_ros_interfaces (./dev.sh setup builds it)")
    env = environment(int(os.environ.get("ROS_DOMAIN_ID", "0")))
    out = run("gravity_launch.py", ARM7, "--q", "0.4", timeout=180, env=env)
    assert "ros2 launch stopped, exit status 0" in out     # Ctrl-C stopped it cleanly
    pin, model, data = pinocchio_arm7()
    expected = pin.computeGeneralizedGravity(model, data, np.full(model.nq, 0.4))
    lines = [s for s in out.splitlines() if s.strip().startswith("joint")]
    assert [s.split(":")[0].strip() for s in lines] == [f"joint{i}" for i in range(1, 8)]
    assert np.allclose(numbers("".join(s.split(":")[1] for s in lines)), expected, atol=1e-3)


def test_fleet_dask_example(tmp_path):
    require_module("distributed", "distributed")
    sys.path.insert(0, os.path.join(ROOT, "scripts"))
    import make_example_bag
    import make_fleet_bags
    out = run("fleet_dask.py", str(tmp_path), "--bags", "3", "--duration", "3", timeout=300)
    # the bags' lengths: 3 s times make_fleet_bags' factors at 100 Hz
    for k in range(3):
        n = round(3 * make_fleet_bags.DURATION_FACTORS[k] * 100)
        assert f"arm7_{k}: {n} of {n} messages answered" in out
    before, after = numbers(re.search(r"fleet RMS torque error.*", out).group(0))
    # the data come from inertias, friction and rotors off the URDF's, plus the effort noise:
    # the identified model explains all but about that noise
    noise = make_example_bag.NOISE["effort"]
    assert after < 0.5 * before and 0.8 * noise < after < 2 * noise
    assert os.path.exists(tmp_path / "fleet" / "identified.urdf")


@pytest.mark.pinocchio
def test_operational_space_example():
    """Its effective masses equal 1 / (uᵀ Λ_t⁻¹ u) from Pinocchio's M and J (LWA)."""
    out = run("operational_space.py", ARM7)
    assert "Λ symmetric positive definite: True" in out and "J_c v == ċ: True" in out
    import rbd_ros
    pin, model, data = pinocchio_arm7()
    q = rbd_ros.load_model(ARM7).random_configuration(0)
    frame = model.getFrameId(list(rbd_ros.load_model(ARM7).link_frames)[-1], pin.BODY)
    M = pin.crba(model, data, q)
    M = np.triu(M) + np.triu(M, 1).T
    Jv = pin.computeFrameJacobian(model, data, q, frame, pin.LOCAL_WORLD_ALIGNED)[:3]
    inverse_lambda_t = Jv @ np.linalg.solve(M, Jv.T)
    lines = [s for s in out.splitlines() if s.startswith("effective mass along")]
    assert len(lines) == 3
    for line, u in zip(lines, np.eye(3)):
        assert abs(numbers(line)[0] - 1.0 / (u @ inverse_lambda_t @ u)) < 1e-3, line


@pytest.mark.pinocchio
def test_torque_check_example(tmp_path):
    """Its torques are Pinocchio's RNEA at every point; its verdicts follow from them."""
    saved = tmp_path / "torque_check.npz"
    out = run("torque_check.py", str(saved))
    pin, model, data = pinocchio_arm7()
    arrays = np.load(saved)
    for duration, feasible in (("3", True), ("1", False)):
        q, v, a, tau = (arrays[f"{x}_{duration}"] for x in ("q", "v", "a", "tau"))
        expected = np.array([pin.rnea(model, data, *state) for state in zip(q, v, a)])
        assert np.allclose(tau, expected, atol=1e-8)
        # the verdict from Pinocchio's torques and the URDF's limits, as the example prints it
        within = np.all(np.abs(expected) <= model.effortLimit) and \
            np.all(np.abs(v) <= model.velocityLimit)
        assert within == feasible
        assert f"{float(duration):.1f} s move: feasible {feasible}" in out
    assert "joint1, velocity limit" in out


def test_retime_path_example(tmp_path):
    """Its samples start and end at the waypoints at rest, within the limits, τ = ID(q, v, a)."""
    saved = tmp_path / "retime_path.npz"
    out = run("retime_path.py", str(saved))
    samples = np.load(saved)
    t, q, v, a, tau = (samples[x] for x in ("t", "q", "v", "a", "tau"))
    assert f"{len(t)} samples, duration {t[-1]:.4f} s" in out
    assert np.allclose(q[0], [0, 0.3, 0, -1.5, 0, 1.8, 0], atol=1e-9)
    assert np.allclose(q[-1], [1.2, 0.5, -0.3, -2.0, -0.4, 2.2, -0.5], atol=1e-9)
    assert np.allclose(v[[0, -1]], 0.0, atol=1e-6)
    import rbd_ros
    model = rbd_ros.load_model(ARM7)
    assert np.all(np.abs(v) <= model.velocity_limit * (1 + 1e-6))
    assert np.all(np.abs(tau) <= 0.5 * model.effort_limit * (1 + 1e-6))
    pin = require_module("pinocchio", "pinocchio")
    pmodel = pin.buildModelFromUrdf(ARM7)
    pdata = pmodel.createData()
    expected = np.array([pin.rnea(pmodel, pdata, *state) for state in zip(q, v, a)])
    assert np.allclose(tau, expected, atol=1e-6)
    # the velocities integrate to the positions (trapezoids between samples)
    steps = 0.5 * (v[1:] + v[:-1]) * np.diff(t)[:, None]
    assert np.allclose(np.cumsum(steps, axis=0), q[1:] - q[0], atol=0.01)


def test_payload_estimation_example():
    """The estimate is the simulated payload within a few of its own standard deviations."""
    out = run("payload_estimation.py")
    mass, std = numbers(re.search(r"mass \[kg\]: .*", out).group(0))[:2]
    assert abs(mass - 1.5) < max(4 * std, 1e-3) and std < 0.05
    com = numbers(re.search(r"centre of mass \[m\]: .*", out).group(0))
    assert np.allclose(com[:3], [0.0, 0.0, 0.06], atol=2e-3)
    sigma = numbers(re.search(r"residual torque std.*", out).group(0))[0]
    assert 0.045 < sigma < 0.055          # the simulated noise: nothing else is left
