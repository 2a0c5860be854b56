"""
Payload estimation (issue 24): a payload simulated by Pinocchio on the arm's flange.

The "real" arm is Pinocchio's model of rbd_arm7 with a 1.5 kg object on the tool link (its
centre of mass 4 cm off the flange axis), plus rotor inertia and viscous friction; the
estimate knows the URDF and the joint parameters, never the payload
(``pinocchio_oracles.simulate_payload_arm``).
"""
import os
import sys

import numpy as np
import pytest

import rbd_ros
from rbd_ros.identification import payload as pid
from pinocchio_oracles import (PAYLOAD_COM as COM, PAYLOAD_MASS as MASS,
                               simulate_payload_arm as simulate)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "scripts"))

import make_example_bag  # noqa: E402


@pytest.fixture(scope="module")
def arm():
    return rbd_ros.load_model(rbd_ros.robots.path("rbd_arm7"))


def test_payload_on_the_flange_from_20_s_of_noisy_data(arm, pin):
    q, v, a, tau, params = simulate(pin, arm)
    est = pid.estimate(arm, "tool", q, v, a, tau, params.torques(v, a))
    assert est.ok, est.message
    assert est.values[0] == pytest.approx(MASS, rel=0.02)
    assert np.linalg.norm(est.values[1:4] - COM) < 5e-3
    # the stds mean something: the truth within 3 of them
    assert abs(est.values[0] - MASS) < 3 * est.stds[0]
    assert np.all(np.abs(est.values[1:4] - COM) < 3 * est.stds[1:4] + 1e-4)
    assert est.sigma == pytest.approx(0.05, rel=0.1)
    assert rbd_ros.identification.is_physically_consistent(est.theta)[0]
    # installed as ~/set_payload does, the model predicts the measured torques
    loaded = arm.with_payload("tool", est.compact())
    err = rbd_ros.rnea_batch(loaded, q, v, a) + params.torques(v, a) - tau
    assert np.sqrt(np.mean(err ** 2)) < 1.1 * 0.05


def test_payload_refused_when_not_excited(arm, pin):
    q, v, a, tau, params = simulate(pin, arm, seconds=0.3, seed=4)
    est = pid.estimate(arm, "tool", q, v, a, tau, params.torques(v, a), max_relative_std=1e-3)
    assert not est.ok and "excite the payload enough" in est.message and est.stds[0] > 1.5e-3
    still = np.repeat(q[:1], 50, axis=0)           # at rest: only gravity, rank-deficient
    zeros = np.zeros_like(still)
    est = pid.estimate(arm, "tool", still, zeros, zeros, np.zeros_like(still))
    assert not est.ok and "not separable" in est.message
    with pytest.raises(ValueError, match="no link"):
        pid.estimate(arm, "nope", q, v, a, tau)


@pytest.mark.parametrize("hole", [False, True])
def test_replay_identify_payload(arm, pin, tmp_path, capsys, hole):
    """
    rbd_replay BAG --identify-payload tool --model-params FILE: the report's payload.

    With a 300 ms hole in the bag's stamps too: the truth within 3 stated std (the replay's
    accelerations are local polynomials on the real stamps, ``savgol_derivative``).
    """
    import json

    from rbd_ros.replay.cli import main
    pytest.importorskip("rosbags")
    q, v, a, tau, params = simulate(pin, arm)
    t = np.arange(len(q)) / 100.0
    if hole:
        keep = (t < 8.0) | (t >= 8.3)
        q, v, tau, t = q[keep], v[keep], tau[keep], t[keep]
    with open(rbd_ros.robots.path("rbd_arm7")) as f:
        urdf = f.read()
    bag = str(tmp_path / "payload_bag")
    make_example_bag.write_bag(bag, urdf, arm.joint_names, t, q, v, tau)
    (tmp_path / "joints.json").write_text(params.to_json())
    rc = main([bag, "-o", str(tmp_path / "out"), "--report-dir", str(tmp_path / "rep"),
               "--no-plots", "--no-progress", "--identify-payload", "tool",
               "--model-params", str(tmp_path / "joints.json")])
    assert rc == 0
    assert "payload on tool" in capsys.readouterr().out
    sec = json.loads((tmp_path / "rep" / "report.json").read_text())["payload"]
    assert sec["ok"], sec["message"]
    assert sec["values"]["mass"] == pytest.approx(MASS, rel=0.02)
    com = np.array([sec["values"][k] for k in ("com_x", "com_y", "com_z")])
    assert np.linalg.norm(com - COM) < 5e-3
    assert all(sec["stds"][k] > 0 for k in pid.NAMES)
    assert abs(sec["values"]["mass"] - MASS) < 3 * sec["stds"]["mass"]
    for k, x in zip(("com_x", "com_y", "com_z"), COM):
        assert abs(sec["values"][k] - x) < 3 * sec["stds"][k], (k, sec["values"][k])
    rc = main([bag, "-o", str(tmp_path / "out2"), "--no-plots", "--no-progress",
               "--identify-payload", "nope"])
    assert rc == 2 and "no link" in capsys.readouterr().err


def test_payload_estimate_in_bounded_memory(arm):
    """30,000 samples: the regressor is built a chunk at a time (118 MB whole, before)."""
    import tracemalloc

    rng = np.random.default_rng(7)
    n = 30_000
    t = np.arange(n) / 1000.0
    q, v, a = make_example_bag.trajectory(arm, t, 5)
    loaded = arm.with_payload("tool", rbd_ros.model.inertia.compact(
        1.0, np.array([0.01, 0.02, 0.03]), np.diag([2e-3, 3e-3, 4e-3])))
    tau = rbd_ros.rnea_batch(loaded, q, v, a) + rng.normal(0, 0.01, (n, arm.nv))
    tracemalloc.start()
    try:
        est = pid.estimate(arm, "tool", q, v, a, tau)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert est.ok and est.values[0] == pytest.approx(1.0, rel=1e-2)
    assert peak < 48 << 20, f"{peak / 2 ** 20:.0f} MB"
