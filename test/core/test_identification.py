"""Pseudo-inertia, log-Cholesky parametrization and inertial parameter identification."""
import numpy as np
import pytest

import rbd_ros
from helpers import (EXAMPLE_ROBOT_DATA_ROBOTS, ROBOT_NAMES, assert_close,
                     example_robot_data_robots, get_robot)
from identification_oracles import expected_prediction_rms, regressor
from rbd_ros import identification as idn
from rbd_ros.model import inertia as rin


def robot_thetas():
    """
    Return (name, θ) of the robot set.

    Without example-robot-data its robots are left out (in CI that fails the test).
    """
    have = example_robot_data_robots()
    return [(name, get_robot(name).model.inertial_parameters()) for name in ROBOT_NAMES
            if name not in EXAMPLE_ROBOT_DATA_ROBOTS or name in have]


def random_phi(rng, n):
    return rng.normal(scale=0.7, size=(n, 10))


# -- pseudo-inertia ------------------------------------------------------------------------

def test_pseudo_inertia_is_the_second_moment_of_point_masses():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(6, 3))
    w = rng.uniform(0.1, 2, 6)
    theta = np.zeros(10)
    J_ref = np.zeros((4, 4))
    for xi, wi in zip(x, w):
        qh = np.append(xi, 1.0)
        J_ref += wi * np.outer(qh, qh)
        Io = xi @ xi * np.eye(3) - np.outer(xi, xi)
        theta += wi * np.array([1, *xi, Io[0, 0], Io[0, 1], Io[1, 1], Io[0, 2], Io[1, 2],
                                Io[2, 2]])
    np.testing.assert_allclose(idn.pseudo_inertia(theta), J_ref, atol=1e-13)
    np.testing.assert_allclose(idn.theta_from_pseudo_inertia(J_ref), theta, atol=1e-13)


def test_theta_pseudo_inertia_round_trip():
    rng = np.random.default_rng(1)
    theta = rng.normal(size=(5, 10))          # any θ, physical or not
    np.testing.assert_allclose(idn.theta_from_pseudo_inertia(idn.pseudo_inertia(theta)), theta,
                               atol=1e-14)
    for name, th in robot_thetas():
        np.testing.assert_allclose(idn.theta_from_pseudo_inertia(idn.pseudo_inertia(th)), th,
                                   atol=1e-14, err_msg=name)


def test_robot_bodies_are_physically_consistent():
    """J ≻ 0 for every body with a mass in the robot set; a massless link is flagged."""
    for name, th in robot_thetas():
        for i, t in enumerate(th):
            ok, reason = idn.is_physically_consistent(t)
            if t[0] > 0:
                assert ok, f"{name} body {i}: {reason}"
                np.linalg.cholesky(idn.pseudo_inertia(t))      # J ≻ 0 exactly
                assert np.linalg.eigvalsh(idn.pseudo_inertia(t))[0] > 0
                assert rin.physical_violation(rin.from_theta(t)) is None
            else:
                assert not ok and "mass" in reason, (name, i, reason)


def test_violations_are_detected():
    th = get_robot("arm7").model.inertial_parameters()[2]
    assert idn.is_physically_consistent(th) == (True, None)
    neg = th.copy()
    neg[0] = -1.0
    ok, reason = idn.is_physically_consistent(neg)
    assert not ok and "mass" in reason
    # a point mass at the origin with a rod-like inertia violating I1 + I2 > I3
    bad = rin.to_theta(rin.compact(2.0, [0.1, 0.0, 0.2], np.diag([0.1, 0.1, 0.3])))
    ok, reason = idn.is_physically_consistent(bad)
    assert not ok and "triangle" in reason, reason
    assert np.linalg.eigvalsh(idn.pseudo_inertia(bad))[0] < 0
    # a negative centroidal moment
    neg_moment = rin.to_theta(rin.compact(1.0, [0.0, 0.0, 0.0], np.diag([-0.1, 0.3, 0.3])))
    assert not idn.is_physically_consistent(neg_moment)[0]
    # stacks name the first bad body
    stack = np.array([th, th, bad])
    ok, reason = idn.is_physically_consistent(stack)
    assert not ok and reason.startswith("body 2")
    assert idn.is_physically_consistent(np.array([th, th])) == (True, None)
    nan = th.copy()
    nan[4] = np.nan
    assert not idn.is_physically_consistent(nan)[0]


# -- log-Cholesky --------------------------------------------------------------------------

def test_log_cholesky_theta_round_trips():
    rng = np.random.default_rng(2)
    phi = random_phi(rng, 20)
    theta = idn.theta_from_log_cholesky(phi)
    assert idn.is_physically_consistent(theta)[0]           # every φ is a body
    np.testing.assert_allclose(idn.log_cholesky_from_theta(theta), phi, atol=1e-10)
    for name, th in robot_thetas():
        th = th[th[:, 0] > 0]
        back = idn.theta_from_log_cholesky(idn.log_cholesky_from_theta(th))
        np.testing.assert_allclose(back, th, rtol=1e-10, atol=1e-14, err_msg=name)
    # single body and the meaning of α and t: m = e^{2α}, c = t
    one = idn.log_cholesky_from_theta(theta[0])
    assert one.shape == (10,)
    np.testing.assert_allclose(np.exp(2 * phi[:, 0]), theta[:, 0], rtol=1e-14)
    np.testing.assert_allclose(phi[:, 7:], theta[:, 1:4] / theta[:, :1], rtol=1e-12)


def test_log_cholesky_rejects_unphysical():
    bad = rin.to_theta(rin.compact(2.0, [0.1, 0.0, 0.2], np.diag([0.1, 0.1, 0.3])))
    with pytest.raises(ValueError, match="triangle"):
        idn.log_cholesky_from_theta(bad)


@pytest.mark.parametrize("seed", range(4))
def test_theta_jacobian_matches_central_differences(seed):
    rng = np.random.default_rng(seed)
    phi = random_phi(rng, 3)
    J = idn.theta_jacobian(phi)
    assert J.shape == (3, 10, 10)
    h = 1e-6
    for k in range(10):
        e = np.zeros(10)
        e[k] = h
        fd = (idn.theta_from_log_cholesky(phi + e) - idn.theta_from_log_cholesky(phi - e)) / (2 * h)
        assert_close(J[..., k], fd, 1e-6, f"∂θ/∂φ column {k}")
    # nonsingular (a diffeomorphism): det = 32 e^{20α} e^{2 d1} e^{3 d2} e^{4 d3}
    det = 32 * np.exp(20 * phi[:, 0] + 2 * phi[:, 1] + 3 * phi[:, 2] + 4 * phi[:, 3])
    np.testing.assert_allclose(np.linalg.det(J), det, rtol=1e-8)


# -- identification ------------------------------------------------------------------------

def samples(model, n, rng):
    q = np.array([model.random_configuration(rng) for _ in range(n)])
    return q, rng.normal(size=(n, model.nv)), rng.normal(size=(n, model.nv))


def perturbed(model, rng, scale=0.1):
    """Return a physically consistent model near ``model`` (log-Cholesky coordinates perturbed)."""
    phi = idn.log_cholesky_from_theta(model.inertial_parameters())
    return model.with_inertial_parameters(
        idn.theta_from_log_cholesky(phi + scale * rng.normal(size=phi.shape)))


def identifiable_basis(model, seed=99, n=200):
    """
    Return an orthonormal basis (rows) of the identifiable combinations of θ.

    The row space of the regressor on many random states: what torques can ever show.
    """
    _, s, vt = np.linalg.svd(regressor(model, *samples(model, n, np.random.default_rng(seed))),
                             full_matrices=False)
    return vt[:int(np.sum(s > 1e-9 * s[0]))]


@pytest.mark.parametrize("name", ("arm7", "prismatic", "quadruped", "panda", "talos"))
def test_least_squares_recovers_the_identifiable_part(name):
    nominal = get_robot(name).model
    rng = np.random.default_rng(11)
    true = perturbed(nominal, rng)
    n = max(30, 4 * 10 * nominal.nbodies // nominal.nv)
    q, v, a = samples(nominal, n, rng)
    tau = rbd_ros.rnea_batch(true, q, v, a)
    res = idn.identify_least_squares(nominal, q, v, a, tau)
    assert res.theta.shape == (nominal.nbodies, 10)
    assert res.rms_before > 1e-3
    Y = rbd_ros.joint_torque_regressor_batch(nominal, q, v, a)
    assert_close(Y @ res.theta.ravel(), tau.ravel(), 1e-8, "Y θ̂ vs τ")
    assert res.rms_after < 1e-8 * max(1.0, np.sqrt(np.mean(tau ** 2)))
    assert 0 < res.rank < 10 * nominal.nbodies     # some combinations are not identifiable
    # the identified model predicts the true torques on fresh states
    q2, v2, a2 = samples(nominal, 10, rng)
    assert_close(rbd_ros.rnea_batch(res.model, q2, v2, a2), rbd_ros.rnea_batch(true, q2, v2, a2),
                 1e-7, "identified model on fresh states")
    # and it is a new model; the nominal one is untouched
    assert res.model is not nominal
    assert not np.allclose(nominal.inertial_parameters(), res.theta)


def test_least_squares_with_prior():
    nominal = get_robot("arm7").model
    rng = np.random.default_rng(12)
    true = perturbed(nominal, rng)
    q, v, a = samples(nominal, 40, rng)
    tau = rbd_ros.rnea_batch(true, q, v, a) + 0.05 * rng.normal(size=(40, nominal.nv))
    plain = idn.identify_least_squares(nominal, q, v, a, tau)
    weak = idn.identify_least_squares(nominal, q, v, a, tau, prior_weight=1e-8)
    strong = idn.identify_least_squares(nominal, q, v, a, tau, prior_weight=1e3)
    assert weak.rms_after < 1.01 * plain.rms_after
    assert plain.rms_after <= weak.rms_after + 1e-12 <= strong.rms_after + 1e-12
    # a strong prior keeps θ at the model's
    assert np.max(np.abs(strong.theta - nominal.inertial_parameters())) < \
        0.05 * np.max(np.abs(plain.theta - nominal.inertial_parameters()))
    with pytest.raises(ValueError):
        idn.identify_least_squares(nominal, q, v, a, tau, prior_weight=-1)


# not ("quadruped", "trf"): trf stops at the default 200 evaluations there (status 0) with 6
# times the error the noise allows on fresh states (0.16 N m for 0.027); it converges at 475
@pytest.mark.parametrize("name,method", [("arm7", "trf"), ("arm7", "lm"), ("quadruped", "lm"),
                                         ("panda", "trf"), ("panda", "lm")])
def test_physically_consistent_fit_on_noisy_data(name, method):
    nominal = get_robot(name).model
    rng = np.random.default_rng(13)
    true = perturbed(nominal, rng, 0.2)
    n = max(40, 4 * 10 * nominal.nbodies // nominal.nv)
    q, v, a = samples(nominal, n, rng)
    clean = rbd_ros.rnea_batch(true, q, v, a)
    noise = 0.05
    tau = clean + noise * rng.normal(size=clean.shape)
    res = idn.identify_physically_consistent(nominal, q, v, a, tau, prior_weight=1e-4,
                                             method=method)
    assert res.consistent, res.reason
    assert idn.is_physically_consistent(res.theta)[0]
    assert res.rms_after < 0.25 * res.rms_before, (res.rms_before, res.rms_after)
    assert res.rms_after < 3 * noise
    assert_close(res.model.inertial_parameters(), res.theta, 1e-10, "model carries θ")
    # on fresh states, the truth's torques to within what the noise allows (calibrated)
    q2, v2, a2 = samples(nominal, 10, rng)
    ref = rbd_ros.rnea_batch(true, q2, v2, a2)
    err_fit = np.sqrt(np.mean((rbd_ros.rnea_batch(res.model, q2, v2, a2) - ref) ** 2))
    err_prior = np.sqrt(np.mean((rbd_ros.rnea_batch(nominal, q2, v2, a2) - ref) ** 2))
    expected = expected_prediction_rms(nominal, (q, v, a), (q2, v2, a2), noise)
    assert err_fit < 2.0 * expected < 0.2 * err_prior, (err_fit, expected, err_prior)


def test_physically_consistent_fit_from_a_massless_link():
    """Branched has a massless link: the start is lifted into the physical set."""
    nominal = get_robot("branched").model
    assert not idn.is_physically_consistent(nominal.inertial_parameters())[0]
    rng = np.random.default_rng(14)
    q, v, a = samples(nominal, 40, rng)
    theta = nominal.inertial_parameters()
    theta[:, 0] *= 1.3
    theta[:, 4:] *= 1.3
    true = nominal.with_inertial_parameters(theta)
    tau = rbd_ros.rnea_batch(true, q, v, a)
    # noise-free, the prior's bias only: ~6e-6 relative at w = 1e-8, ~1.5e-7 at 1e-10
    res = idn.identify_physically_consistent(nominal, q, v, a, tau, prior_weight=1e-10,
                                             method="lm")
    assert res.consistent, res.reason
    assert_identifiable_part_recovered(nominal, true, res.theta, rng, 1e-6)


def assert_identifiable_part_recovered(nominal, true, theta, rng, tol):
    """θ's identifiable combinations and torques on fresh states are the truth's (``tol``)."""
    basis = identifiable_basis(nominal)
    assert_close(basis @ theta.ravel(), basis @ true.inertial_parameters().ravel(), 3 * tol,
                 "identifiable combinations of θ")
    q2, v2, a2 = samples(nominal, 20, rng)
    assert_close(rbd_ros.rnea_batch(nominal.with_inertial_parameters(theta), q2, v2, a2),
                 rbd_ros.rnea_batch(true, q2, v2, a2), tol, "torques on fresh states")


@pytest.mark.parametrize("name", ("arm7", "panda"))
def test_physically_consistent_fit_is_exact_on_noise_free_data(name):
    nominal = get_robot(name).model
    rng = np.random.default_rng(15)
    true = perturbed(nominal, rng, 0.2)
    q, v, a = samples(nominal, max(40, 4 * 10 * nominal.nbodies // nominal.nv), rng)
    res = idn.identify_physically_consistent(nominal, q, v, a, rbd_ros.rnea_batch(true, q, v, a),
                                             prior_weight=1e-10, method="lm")
    assert res.consistent, res.reason
    assert_identifiable_part_recovered(nominal, true, res.theta, rng, 1e-6)
