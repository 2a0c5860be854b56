"""
``rbd_replay --model-params`` with output bags: the bags' outputs include the joint parameters.

Oracle: this file's own formulas on Pinocchio, τ = rnea(q, v, a) + Ia a + Fv v + Fc tanh(v/ε)
+ τ0 and q̈ = (crba + diag Ia)⁻¹ (τ_measured - friction - rnea(q, v, 0)), at the recorded q, v
and effort and an acceleration from scipy's Savitzky-Golay filter (the replay's estimate
computed independently), message by message against the written bags; the per-bag reports'
errors against the same torques. The cluster is a real ``LocalCluster`` of 2 workers.
"""
import json
import os
import sys

import numpy as np
import pytest

distributed = pytest.importorskip("distributed")
from scipy.signal import savgol_filter  # noqa: E402

import rbd_ros  # noqa: E402
from rbd_ros.replay import bag_io, cli  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import make_fleet_bags  # noqa: E402

STORE = bag_io.typestore()


def read(path, topics):
    """{topic: {(sec, nanosec): message}} with rosbags' own deserializer."""
    out = {t: {} for t in topics}
    with bag_io.Reader(path) as r:
        for con, _, raw in r.messages():
            if con.topic in out:
                msg = STORE.deserialize_cdr(raw, con.msgtype)
                out[con.topic][(msg.header.stamp.sec, msg.header.stamp.nanosec)] = msg
    return out


def test_output_bags_include_the_model_params(tmp_path, pin):
    written = make_fleet_bags.write_fleet(str(tmp_path / "bags"), bags=2, duration=2.0)
    bags = [str(p) for p in written]
    urdf = rbd_ros.robots.path("rbd_arm7")
    model = rbd_ros.load_model(urdf)
    params = make_fleet_bags.joint_parameters(model)
    params_file = tmp_path / "params.json"
    params_file.write_text(params.to_json())
    out = tmp_path / "fleet"
    assert cli.main(bags + ["-o", str(out), "--workers", "2", "--no-plots", "--no-progress",
                            "--outputs", "torques,accelerations", "--urdf", urdf,
                            "--model-params", str(params_file)]) == 0
    p = {k: params.values[k] for k in ("armature", "viscous", "coulomb", "offset")}
    pm = pin.buildModelFromUrdf(urdf)
    pd = pm.createData()

    def friction(v):
        return p["viscous"] * v + p["coulomb"] * np.tanh(v / params.epsilon) + p["offset"]
    for bag in bags:
        name = os.path.basename(bag)
        inputs = read(bag, ["/joint_states"])["/joint_states"]
        outputs = read(out / "bags" / name, ["/rbd_dynamics/torques",
                                             "/rbd_dynamics/accelerations"])
        stamps = sorted(inputs)
        q, v, e = (np.array([getattr(inputs[s], f) for s in stamps])
                   for f in ("position", "velocity", "effort"))
        a = savgol_filter(v, 11, 3, deriv=1, delta=0.01, axis=0, mode="interp")
        torques, accelerations = outputs.values()
        assert len(torques) == len(stamps) and len(accelerations) == len(stamps)
        predicted = []
        for k, s in enumerate(stamps):
            tau = pin.rnea(pm, pd, q[k], v[k], a[k]) + p["armature"] * a[k] + friction(v[k])
            predicted.append(tau)
            np.testing.assert_allclose(torques[s].effort, tau, rtol=1e-7, atol=1e-7)
            M = pin.crba(pm, pd, q[k])
            M = np.triu(M) + np.triu(M, 1).T + np.diag(p["armature"])
            bias = pin.rnea(pm, pd, q[k], v[k], np.zeros(model.nv))
            np.testing.assert_allclose(accelerations[s].data,
                                       np.linalg.solve(M, e[k] - friction(v[k]) - bias),
                                       rtol=1e-7, atol=1e-7)
        rms = np.sqrt(np.mean((np.array(predicted) - e) ** 2, axis=0))
        with open(out / "reports" / name / "report.json") as f:
            joints = json.load(f)["joints"]
        np.testing.assert_allclose([j["rms"] for j in joints], rms, rtol=1e-6)
