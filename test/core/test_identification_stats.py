"""
Identification from sufficient statistics (issue 15) and joint friction / armature.

Oracles: the stacked regressor of the concatenated samples (its Gram matrix, a pseudo-inverse
fit computed here with numpy), ``identification.identify_physically_consistent`` on the
concatenated samples, and the joint parameters a simulation was made with.
"""
import numpy as np
import pytest

import rbd_ros
from rbd_ros import identification as idn
from rbd_ros.identification import statistics as ist
from rbd_ros.actuation import joint_parameters as jf
from identification_oracles import weighted_oracle

KINDS = ("armature", "viscous", "coulomb", "offset")


@pytest.fixture(scope="module")
def arm():
    return rbd_ros.load_model(rbd_ros.robots.path("rbd_arm7"))


def truth(model):
    rng = np.random.default_rng(3)
    nv = model.nv
    params = jf.JointParameters(tuple(model.joint_names), {
        "armature": rng.uniform(0.02, 0.3, nv), "viscous": rng.uniform(0.1, 0.8, nv),
        "coulomb": rng.uniform(0.1, 0.6, nv), "offset": rng.uniform(-0.05, 0.05, nv)})
    inertia = model.with_inertial_parameters(
        model.inertial_parameters() * (1 + rng.uniform(-0.2, 0.2, (model.nbodies, 1))))
    return inertia, params


def samples(model, n, seed, noise=0.0):
    rng = np.random.default_rng(seed)
    inertia, params = truth(model)
    q = np.array([model.random_configuration(rng) for _ in range(n)])
    v, a = rng.normal(0, 1.0, (n, model.nv)), rng.normal(0, 3.0, (n, model.nv))
    tau = rbd_ros.rnea_batch(inertia, q, v, a) + params.torques(v, a)
    return q, v, a, tau + rng.normal(0, noise, tau.shape) if noise else tau


def chunks(model, data, sizes, kinds=KINDS, per_joint=False):
    """Statistics of consecutive chunks of the samples, reduced pairwise in a tree."""
    parts, lo = [], 0
    for size in sizes:
        parts.append(ist.statistics(model, *(x[lo:lo + size] for x in data), kinds, chunk=97,
                                    per_joint=per_joint))
        lo += size
    while len(parts) > 1:
        parts = [parts[k].merge(parts[k + 1]) if k + 1 < len(parts) else parts[k]
                 for k in range(0, len(parts), 2)]
    return parts[0]


def test_statistics_are_those_of_the_concatenated_regressor(arm):
    data = samples(arm, 400, 0)
    stats = chunks(arm, data, [1, 150, 49, 200])
    Y = np.hstack([rbd_ros.joint_torque_regressor_batch(arm, *data[:3]),
                   jf.regressor(KINDS, data[1], data[2])])
    b = data[3].ravel()
    scale = np.abs(Y.T @ Y).max()
    np.testing.assert_allclose(stats.gram, Y.T @ Y, rtol=0, atol=1e-12 * scale)
    np.testing.assert_allclose(stats.moment, Y.T @ b, rtol=0,
                               atol=1e-12 * np.abs(Y.T @ b).max())
    x = np.random.default_rng(1).normal(size=Y.shape[1])
    np.testing.assert_allclose(stats.sum_of_squares(x), np.sum((Y @ x - b) ** 2), rtol=1e-10)
    np.testing.assert_allclose(stats.tt, (data[3] ** 2).sum(axis=0), rtol=1e-13)
    assert (stats.samples, stats.rows) == (400, 400 * arm.nv)


def test_least_squares_from_statistics_equals_concatenated_fit(arm):
    data = samples(arm, 300, 1, noise=0.05)
    stats = chunks(arm, data, [100, 100, 100])
    res = ist.least_squares(arm, stats, KINDS)
    # the oracle: θ₀ + D (Y D)⁺ (τ - Y x₀), the pseudo-inverse at the same relative cut-off
    Y = np.hstack([rbd_ros.joint_torque_regressor_batch(arm, *data[:3]),
                   jf.regressor(KINDS, data[1], data[2])])
    x0 = np.r_[arm.inertial_parameters().ravel(), np.zeros(len(KINDS) * arm.nv)]
    norms = np.linalg.norm(Y, axis=0)
    # a parameter no torque depends on (its column zero up to rounding) is kept
    D = 1 / np.where(norms > 1e-9 * norms.max(), norms, 1.0)
    x = x0 + D * (np.linalg.pinv(Y * D, rtol=max(Y.shape) * np.finfo(float).eps * 10)
                  @ (data[3].ravel() - Y @ x0))
    got = np.r_[res.theta.ravel(), res.extra["joint_parameters"].vector(KINDS)]
    np.testing.assert_allclose(got, x, rtol=1e-9, atol=1e-9 * np.abs(x).max())
    plain = idn.identify_least_squares(arm, *data)
    inertial = ist.least_squares(arm, chunks(arm, data, [150, 150], ()))
    np.testing.assert_allclose(inertial.theta, plain.theta, rtol=1e-9,
                               atol=1e-9 * np.abs(plain.theta).max())
    assert np.isclose(inertial.rms_after, plain.rms_after, rtol=1e-9)


def test_consistent_from_statistics_equals_concatenated_fit(arm):
    data = samples(arm, 200, 2, noise=0.05)
    plain = idn.identify_physically_consistent(arm, *data, prior_weight=1e-4, max_iter=30)
    mine = ist.consistent(arm, chunks(arm, data, [60, 70, 70], ()), prior_weight=1e-4,
                          max_iter=30)
    # both are fits on statistics (reduced in one chunk or in three), solved by an
    # interior-point method: equal to its tolerance in the residual and in the fitted torques
    assert mine.consistent and plain.consistent
    assert np.isclose(mine.rms_after, plain.rms_after, rtol=1e-6)
    Y = rbd_ros.joint_torque_regressor_batch(arm, *data[:3])
    np.testing.assert_allclose(Y @ mine.theta.ravel(), Y @ plain.theta.ravel(),
                               atol=1e-4 * np.abs(data[3]).max())


def identifiable(res, p_extra):
    """Return which joint-parameter coordinates lie in the identifiable subspace."""
    base, D = res.extra["base"], res.extra["column_scales"]
    n = base.shape[0]
    out = []
    for k in range(n - p_extra, n):
        e = np.zeros(n)
        e[k] = 1 / D[k]                       # the coordinate in the scaled variables
        out.append(np.linalg.norm(e - base @ (base.T @ e)) < 1e-6 * np.linalg.norm(e))
    return np.array(out)


def test_recovers_friction_and_armature_noise_free(arm):
    data = samples(arm, 600, 4)
    res = ist.least_squares(arm, chunks(arm, data, [200, 200, 200]), KINDS)
    _, true = truth(arm)
    got = res.extra["joint_parameters"].vector(KINDS)
    want = true.vector(KINDS)
    seen = identifiable(res, len(want))
    # the first joint's rotor turns with the first body about the same fixed axis: Ia₁ and
    # that body's inertia about the axis only appear summed (not identifiable apart)
    assert seen.sum() >= len(want) - 1
    np.testing.assert_allclose(got[seen], want[seen], rtol=1e-6)
    assert res.rms_after < 1e-8


def frictionless_noisy_statistics(arm):
    """Statistics (with KINDS) of 200 noisy samples of the true arm, which has no friction."""
    inertia, _ = truth(arm)
    rng = np.random.default_rng(5)
    q = np.array([arm.random_configuration(rng) for _ in range(200)])
    v, a = rng.normal(0, 1.0, (200, arm.nv)), rng.normal(0, 3.0, (200, arm.nv))
    tau = rbd_ros.rnea_batch(inertia, q, v, a) + rng.normal(0, 0.5, (200, arm.nv))
    return ist.statistics(arm, q, v, a, tau, KINDS)


def test_consistent_fit_keeps_friction_and_armature_nonnegative(arm):
    """Data without friction: least squares finds some negative values, the fit does not."""
    stats = frictionless_noisy_statistics(arm)
    free = ist.least_squares(arm, stats, KINDS).extra["joint_parameters"]
    assert min(free.values[k].min() for k in jf.NONNEGATIVE) < 0
    fit = ist.consistent(arm, stats, KINDS, max_iter=50)
    params = fit.extra["joint_parameters"]
    assert all(params.values[k].min() >= 0 for k in jf.NONNEGATIVE) and fit.consistent


def test_the_log_cholesky_formulation_is_consistent_and_fits_as_the_convex_one(arm):
    """Data without friction, least squares unphysical: both formulations' fits, compared."""
    stats = frictionless_noisy_statistics(arm)
    ls = ist.least_squares(arm, stats, KINDS)
    convex = ist.consistent(arm, stats, KINDS, max_iter=50)
    fit = ist.consistent(arm, stats, KINDS, max_iter=200, formulation="log-cholesky")
    params = fit.extra["joint_parameters"]
    assert fit.consistent and all(params.values[k].min() >= 0 for k in jf.NONNEGATIVE)
    assert fit.extra["optimizer"] is not None and not fit.extra["least_squares_consistent"]
    # no fit with the constraints beats least squares; this one comes within a few per cent
    # of it, as the convex fit does (the noise alone is 0.5 N·m rms)
    assert ls.rms_after <= fit.rms_after <= 1.05 * max(ls.rms_after, convex.rms_after)
    with pytest.raises(ValueError, match="unknown formulation"):
        ist.consistent(arm, stats, KINDS, formulation="cholesky")


def test_parameter_file_round_trip_and_hostile(arm):
    _, params = truth(arm)
    back = jf.JointParameters.from_json(params.to_json(), arm.joint_names)
    v, a = np.ones((3, arm.nv)), np.ones((3, arm.nv))
    np.testing.assert_allclose(back.torques(v, a), params.torques(v, a), rtol=1e-15)
    for bad, message in [("{", "not JSON"), ("[]", "format"),
                         ('{"format": "rbd_ros joint parameters 1", "joints": {"x": {}}}',
                          "not in the model"),
                         ('{"format": "rbd_ros joint parameters 1", "epsilon": -1, '
                          '"joints": {}}', "epsilon")]:
        with pytest.raises(ValueError, match=message):
            jf.JointParameters.from_json(bad, arm.joint_names)
    doc = params.to_json().replace('"viscous": ' + repr(float(params.values["viscous"][0])),
                                   '"viscous": -1.0')
    with pytest.raises(ValueError, match="viscous must be"):
        jf.JointParameters.from_json(doc, arm.joint_names)


def test_urdf_dynamics_round_trip(arm):
    _, params = truth(arm)
    with open(rbd_ros.robots.path("rbd_arm7")) as f:
        text = jf.write_urdf_dynamics(f.read(), params)
    back = jf.JointParameters.from_urdf(text, arm.joint_names)
    np.testing.assert_array_equal(back.values["viscous"], params.values["viscous"])
    np.testing.assert_array_equal(back.values["coulomb"], params.values["coulomb"])
    assert rbd_ros.load_model(text).nv == arm.nv


def stacked(model, data, kinds=KINDS):
    return np.hstack([rbd_ros.joint_torque_regressor_batch(model, *data[:3]),
                      jf.regressor(kinds, data[1], data[2])])


def joint_noise(model, n, seed, sigma):
    """Return samples whose joint j has effort noise sigma[j]."""
    q, v, a, tau = samples(model, n, seed)
    return q, v, a, tau + np.random.default_rng(seed + 100).normal(0, 1, tau.shape) * sigma


def test_weighted_fit_from_statistics_equals_concatenated_weighted_fit(arm):
    sigma = np.array([0.01, 0.02, 0.5, 0.01, 1.0, 0.05, 0.01])
    data = joint_noise(arm, 300, 6, sigma)
    res = ist.weighted(arm, chunks(arm, data, [90, 110, 100], per_joint=True), kinds=KINDS)
    x0 = np.r_[arm.inertial_parameters().ravel(), np.zeros(len(KINDS) * arm.nv)]
    x, sig = weighted_oracle(stacked(arm, data), data[3], x0)
    got = np.r_[res.theta.ravel(), res.extra["joint_parameters"].vector(KINDS)]
    np.testing.assert_allclose(got, x, rtol=1e-9, atol=1e-9 * np.abs(x).max())
    np.testing.assert_allclose(res.extra["joint_sigma"], sig, rtol=1e-9)
    plain = ist.least_squares(arm, ist.statistics(arm, *data, KINDS), KINDS)
    total = chunks(arm, data, [150, 150], per_joint=True).total()
    np.testing.assert_allclose(ist.least_squares(arm, total, KINDS).theta, plain.theta,
                               rtol=1e-9, atol=1e-9 * np.abs(plain.theta).max())


def test_per_joint_weighting_recovers_parameters_better(arm):
    """
    Joints 3 and 5 200x noisier than the others: the weighted fit is closer to the truth.

    In the unweighted fit their noise leaks into every parameter the rows share (the
    inertias), and from there into every joint; weighted, the quiet joints' friction and
    armature and their torques on fresh noise-free samples are found 10x better. (A noisy
    joint's own friction is only in its own rows: weighting cannot improve it.)
    """
    sigma = np.array([0.01, 0.01, 2.0, 0.01, 2.0, 0.01, 0.01])
    quiet = sigma < 1
    data = joint_noise(arm, 400, 7, sigma)
    stats = ist.statistics(arm, *data, KINDS, per_joint=True)
    plain = ist.least_squares(arm, stats.total(), KINDS)
    weighted = ist.weighted(arm, stats, "least-squares", KINDS)
    _, true = truth(arm)
    want = true.vector(KINDS).reshape(len(KINDS), arm.nv)
    seen = identifiable(plain, want.size).reshape(want.shape) & quiet
    errors = [np.linalg.norm((r.extra["joint_parameters"].vector(KINDS).reshape(want.shape)
                              - want)[seen]) for r in (plain, weighted)]
    assert errors[1] < 0.1 * errors[0], errors
    # the first pass's residual RMS: near the noise where it dominates the model error
    found = weighted.extra["joint_sigma"]
    np.testing.assert_allclose(found[~quiet], sigma[~quiet], rtol=0.25)
    assert found[quiet].max() < 0.1 * found[~quiet].min()
    clean = samples(arm, 200, 8)
    y = stacked(arm, clean)
    rms = []
    for r in (plain, weighted):
        x = np.r_[r.theta.ravel(), r.extra["joint_parameters"].vector(KINDS)]
        err = (y @ x - clean[3].ravel()).reshape(-1, arm.nv)[:, quiet]
        rms.append(np.sqrt(np.mean(err ** 2)))
    assert rms[1] < 0.1 * rms[0], rms
