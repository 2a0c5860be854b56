"""
rbd_excite (issue 24): an excitation trajectory checked against Pinocchio.

A finite-Fourier-series excitation within the limits, better conditioned than random ones,
and an identification from its bag simulated by Pinocchio.
"""
import json
import os
import re
import sys

import numpy as np
import pytest

import rbd_ros
from rbd_ros.identification import excitation as ex
from rbd_ros.formats import trajectory_yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "scripts"))

import make_fleet_bags  # noqa: E402

URDF = rbd_ros.robots.path("rbd_arm7")


@pytest.fixture(scope="module")
def designed(tmp_path_factory):
    """Run rbd_excite once: (its directory, stdout, the model, the joint parameters)."""
    import contextlib
    import io

    from rbd_ros.tools.excite import main
    out = tmp_path_factory.mktemp("excite")
    model = rbd_ros.load_model(URDF)
    params = make_fleet_bags.joint_parameters(model)
    (out / "params.json").write_text(params.to_json())
    text = io.StringIO()
    with contextlib.redirect_stdout(text):
        rc = main([URDF, "-o", str(out / "excite.yaml"), "--friction", "--armature",
                   "--model-params", str(out / "params.json"), "--max-iter", "25",
                   "--periods", "6", "--rate", "100"])
    assert rc == 0
    return out, text.getvalue(), model, params


def read_yaml(path):
    import yaml
    doc = yaml.safe_load(open(path))
    pts = doc["points"]
    t = np.array([p["time_from_start"]["sec"] + 1e-9 * p["time_from_start"]["nanosec"]
                  for p in pts])
    return (doc["joint_names"], t, *(np.array([p[k] for p in pts]) for k in
                                     ("positions", "velocities", "accelerations", "effort")))


def test_series_starts_at_rest_and_matches_its_derivatives():
    rng = np.random.default_rng(0)
    s = ex.from_free(np.zeros(3), rng.normal(size=2 * 3 * 4), 2 * np.pi / 5, 3, 5)
    q, v, a = s.evaluate(np.array([0.0, 1.0, 1.0 + 1e-6, 5.0]))
    assert np.abs(v[0]).max() < 1e-12 and np.abs(a[0]).max() < 1e-12
    np.testing.assert_allclose((q[2] - q[1]) / 1e-6, v[1], rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose((v[2] - v[1]) / 1e-6, a[1], rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(q[3], s.evaluate(np.array([0.0]))[0][0], atol=1e-12)  # periodic


@pytest.mark.pinocchio
def test_designed_trajectory_respects_every_limit(designed, pin):
    out, text, model, params = designed
    names, t, q, v, a, effort = read_yaml(out / "excite.yaml")
    assert names == list(model.joint_names) and len(t) == 6000
    retime_input = trajectory_yaml.read(out / "excite.yaml")       # what rbd_retime reads
    assert retime_input.joint_names == names
    np.testing.assert_allclose(retime_input.fields["positions"], q, rtol=0, atol=0)
    assert np.abs(v[0]).max() < 1e-9 and np.abs(a[0]).max() < 1e-9       # at rest
    assert np.all(q >= model.lower) and np.all(q <= model.upper)
    assert np.all(np.abs(v) <= model.velocity_limit)
    pm = pin.buildModelFromUrdf(URDF)
    pd = pm.createData()
    tau = np.array([pin.rnea(pm, pd, *x) for x in zip(q, v, a)]) + params.torques(v, a)
    np.testing.assert_allclose(effort, tau, atol=1e-8)                  # core = Pinocchio
    assert np.all(np.abs(tau) <= model.effort_limit)
    found = re.search(r"condition number ([0-9.e+]+), random .* ([0-9.e+]+) \(median", text)
    designed_cond, random_cond = float(found.group(1)), float(found.group(2))
    assert designed_cond <= random_cond / 3, text


@pytest.mark.pinocchio
def test_identification_from_the_excitation(designed, pin, tmp_path):
    """Efforts of the "real" arm (Pinocchio, σ = 0.05) along it: armatures 2..n, viscous 5 %."""
    from pathlib import Path

    from rbd_ros.replay import bag_io, cli, fleet
    out, _, model, params = designed
    _, t, q, v, a, _ = read_yaml(out / "excite.yaml")
    pm = pin.buildModelFromUrdf(URDF)
    rng = np.random.default_rng(11)
    for i in range(1, pm.njoints):            # the real arm's bodies differ from the URDF's
        s = 1 + rng.uniform(-0.2, 0.2)
        pm.inertias[i] = pin.Inertia(pm.inertias[i].mass * s, pm.inertias[i].lever,
                                     pm.inertias[i].inertia * s)
    pd = pm.createData()
    tau = np.array([pin.rnea(pm, pd, *x) for x in zip(q, v, a)]) + params.torques(v, a)
    tau += rng.normal(0, 0.05, tau.shape)
    bag = str(tmp_path / "excited")
    bag_io.write_joint_states(bag, open(URDF).read(), model.joint_names, t, q, v, tau)
    args = cli.parser().parse_args([bag, "-o", str(tmp_path / "fit"), "--no-bag", "--workers",
                                    "1", "--no-plots", "--identify", "--friction",
                                    "--armature"])
    _, ident, _ = fleet.run(args, [Path(bag)], progress=False)
    found = {q["name"]: q for q in ident["uncertainty"]["quantities"]}
    for j, name in enumerate(model.joint_names):
        for kind in ("viscous", "armature") if j else ("viscous",):
            qty, true = found[f"{name}.{kind}"], params.values[kind][j]
            assert qty["identified"], qty                       # none flagged
            assert abs(qty["value"] - true) <= 3 * qty["std"], qty
            assert qty["value"] == pytest.approx(true, rel=0.05), qty      # issue 24
    written = json.loads((tmp_path / "fit" / "joint_parameters.json").read_text())
    assert written["joints"]["joint2"]["armature_std"] > 0


def test_relative_stds_are_the_covariance_of_the_identifiable_columns():
    """σ_k² = e_kᵀ (WᵀW)⁺ e_k (pseudo-inverse over the rank), against the design's formula."""
    from rbd_ros.actuation import joint_parameters as joint_friction
    from rbd_ros.identification.statistics import regressor
    model = rbd_ros.load_model(URDF)
    params = make_fleet_bags.joint_parameters(model)
    kinds = joint_friction.kinds(True, True)
    limits = ex.Limits.of(model, params)
    t = np.linspace(0, ex.PERIOD, ex.OPTIMIZATION_SAMPLES, endpoint=False)
    q, v, a = ex.random_series(model, limits, np.random.default_rng(3), t=t).evaluate(t)
    cond, rank = ex.condition(model, kinds, q, v, a)
    prior = params.vector(kinds)
    cond2, rel = ex.relative_stds(model, kinds, q, v, a, prior, rank)
    assert cond2 == pytest.approx(cond, rel=1e-9)
    W = regressor(model, q, v, a, kinds)
    u, s, vt = np.linalg.svd(W, full_matrices=False)
    cov = (vt[:rank].T / s[:rank] ** 2) @ vt[:rank]          # (WᵀW)⁺ on the rank
    extra = slice(10 * model.nbodies, W.shape[1])
    identifiable = np.sum(vt[:rank, extra] ** 2, axis=0) > 1 - 1e-6
    assert identifiable.sum() >= 2 * model.nv            # viscous, Coulomb, offsets at least
    np.testing.assert_array_equal(np.isfinite(rel), identifiable)
    want = np.sqrt(np.diag(cov)[extra]) / np.abs(prior)
    np.testing.assert_allclose(rel[identifiable], want[identifiable], rtol=1e-5)
