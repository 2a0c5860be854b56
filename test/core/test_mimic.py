"""
Mimic joints, coupled: every public algorithm on the reduced system.

Oracles: Pinocchio's own mimic model (``buildModelFromUrdf(..., mimic=True)``, RNEA and CRBA:
what it supports), the reduced system built from Pinocchio's model without coupling and G
read from the XML (``mimic_oracle.ReducedOracle``: every function), identities
(ABA(RNEA(a)) = a, M M⁻¹ = I, batch = single state, Y θ = τ for any θ) and central finite
differences of the coupled functions themselves.
"""
import functools
from types import SimpleNamespace

import numpy as np
import pytest

import rbd_ros
from helpers import assert_close, available, missing, robot_path
from mimic_oracle import HAND, PAIR, ReducedOracle, hand_urdf, pinocchio_mimic_rnea_crba

# name -> (URDF source (None: panda from example-robot-data), floating base)
CASES = {
    "panda": (None, False),
    "panda_floating": (None, True),
    "hand": (lambda: hand_urdf(HAND), False),
    "hand_floating": (lambda: hand_urdf(HAND, seed=1), True),
    "pair": (lambda: hand_urdf(PAIR, seed=2, name="pair"), False),
}
SEEDS = (0, 1, 2)
TOL = 1e-10            # relative, as the core's other Pinocchio tests
DERIVATIVE_TOL = 1e-9


def _xml(name):
    source, _ = CASES[name]
    if source is not None:
        return source()
    if not available("panda"):
        missing("example-robot-data")
    with open(robot_path("panda"), encoding="utf-8") as f:
        return f.read()


@functools.lru_cache(maxsize=None)
def _model(name):
    return rbd_ros.load_model(_xml(name), floating_base=CASES[name][1])


@functools.lru_cache(maxsize=None)
def _oracle(name):
    m = _model(name)
    return ReducedOracle(_xml(name), CASES[name][1], m.joint_names, m.body_names)


def _state(model, seed):
    rng = np.random.default_rng(seed)
    return SimpleNamespace(q=model.random_configuration(rng), v=rng.normal(size=model.nv),
                           a=rng.normal(size=model.nv), tau=rng.normal(scale=5, size=model.nv),
                           fext=rng.normal(size=(model.nbodies, 6)))


def test_the_hand_couples_what_its_urdf_says():
    """Followers leave the dofs; the fixed joint's tag is ignored; the chain is resolved."""
    m = _model("hand")
    assert m.joint_names == ("j1", "j2", "j3", "j5")
    assert m.nq == m.nv == 4 and m.nv_full == 9 and m.nbodies == 9
    followers = dict(m.coupling.followers)
    assert followers["j7"] == ("j5", pytest.approx(2.0 * 0.05), pytest.approx(2.0 * -0.01 + 0.3))
    assert followers["j4"] == ("j5", -0.7, 0.1) and followers["j10"] == ("j3", -1.0, 0.02)
    assert "w9" not in followers


@pytest.mark.parametrize("name", ["panda", "pair"])
@pytest.mark.parametrize("seed", SEEDS)
def test_rnea_and_crba_equal_pinocchios_mimic_model(name, seed, pin):
    """Pinocchio 3.4+ builds a mimic model (no dof for followers): its RNEA and CRBA."""
    import tempfile
    m = _model(name)
    with tempfile.NamedTemporaryFile("w", suffix=".urdf") as f:
        f.write(_xml(name))
        f.flush()
        pm = pin.buildModelFromUrdf(f.name, mimic=True)
    s = _state(m, seed)
    tau, M = pinocchio_mimic_rnea_crba(pin, pm, m, s.q, s.v, s.a)
    assert_close(rbd_ros.rnea(m, s.q, s.v, s.a), tau, TOL, f"{name} rnea")
    assert_close(rbd_ros.crba(m, s.q), M, TOL, f"{name} crba")


def _compare(name, seed, ours, theirs, tol, what):
    m = _model(name)
    s = _state(m, seed)
    got, ref = ours(m, s), theirs(_oracle(name), s)
    if isinstance(ref, tuple):
        for k, (x, y) in enumerate(zip(got, ref)):
            assert_close(x, y, tol, f"{name} {what}[{k}]")
    else:
        assert_close(got, ref, tol, f"{name} {what}")


ORACLE_CHECKS = {
    "rnea": (lambda m, s: rbd_ros.rnea(m, s.q, s.v, s.a, s.fext),
             lambda o, s: o.rnea(s.q, s.v, s.a, s.fext), TOL),
    "nonlinear_effects": (lambda m, s: rbd_ros.nonlinear_effects(m, s.q, s.v),
                          lambda o, s: o.rnea(s.q, s.v, 0 * s.v), TOL),
    "gravity_torques": (lambda m, s: rbd_ros.gravity_torques(m, s.q),
                        lambda o, s: o.rnea(s.q, 0 * s.v, 0 * s.v), TOL),
    "crba": (lambda m, s: rbd_ros.crba(m, s.q), lambda o, s: o.crba(s.q), TOL),
    "aba": (lambda m, s: rbd_ros.aba(m, s.q, s.v, s.tau, s.fext),
            lambda o, s: o.aba(s.q, s.v, s.tau, s.fext), TOL),
    "minv": (lambda m, s: rbd_ros.minv(m, s.q), lambda o, s: o.minv(s.q), TOL),
    "minv_cholesky": (lambda m, s: rbd_ros.minv_cholesky(m, s.q), lambda o, s: o.minv(s.q),
                      TOL),
    "rnea_derivatives": (lambda m, s: rbd_ros.rnea_derivatives(m, s.q, s.v, s.a, s.fext),
                         lambda o, s: o.rnea_derivatives(s.q, s.v, s.a, s.fext),
                         DERIVATIVE_TOL),
    "aba_derivatives": (lambda m, s: rbd_ros.aba_derivatives(m, s.q, s.v, s.tau, s.fext),
                        lambda o, s: o.aba_derivatives(s.q, s.v, s.tau, s.fext),
                        DERIVATIVE_TOL),
    "compute_all": (lambda m, s: tuple(rbd_ros.compute_all(m, s.q, s.v, a=s.a, tau=s.tau,
                                                           fext=s.fext)),
                    lambda o, s: (o.rnea(s.q, s.v, s.a, s.fext), o.aba(s.q, s.v, s.tau, s.fext),
                                  o.minv(s.q), *o.rnea_derivatives(s.q, s.v, s.a, s.fext)[:2],
                                  *o.aba_derivatives(s.q, s.v, s.tau, s.fext)[:2]),
                    DERIVATIVE_TOL),
    "inverse_and_forward_dynamics": (
        lambda m, s: rbd_ros.inverse_and_forward_dynamics(m, s.q, s.v, a=s.a, tau=s.tau,
                                                          fext=s.fext),
        lambda o, s: (o.rnea(s.q, s.v, s.a, s.fext), o.aba(s.q, s.v, s.tau, s.fext)), TOL),
}


@pytest.mark.parametrize("function", sorted(ORACLE_CHECKS))
@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("seed", SEEDS)
def test_equals_the_reduced_system_of_pinocchio(function, name, seed, pin):
    ours, theirs, tol = ORACLE_CHECKS[function]
    _compare(name, seed, ours, theirs, tol, function)


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("seed", SEEDS)
def test_identities(name, seed):
    """ABA(RNEA(a)) = a, M M⁻¹ = I (both inverses), compute_all's τ and q̈ agree."""
    m = _model(name)
    s = _state(m, seed)
    tau = rbd_ros.rnea(m, s.q, s.v, s.a, s.fext)
    assert_close(rbd_ros.aba(m, s.q, s.v, tau, s.fext), s.a, 1e-9, "aba(rnea(a))")
    M = rbd_ros.crba(m, s.q)
    for inverse in (rbd_ros.minv, rbd_ros.minv_cholesky):
        assert_close(M @ inverse(m, s.q), np.eye(m.nv), 1e-9, inverse.__name__)
    d = rbd_ros.compute_all(m, s.q, s.v, a=s.a, tau=tau, fext=s.fext)
    assert_close(d.qdd, s.a, 1e-9, "compute_all qdd")
    assert_close(d.tau, tau, 1e-12, "compute_all tau")


@pytest.mark.parametrize("name", ["hand", "hand_floating", "panda"])
def test_derivatives_equal_finite_differences(name):
    m = _model(name)
    s = _state(m, 0)
    ours = rbd_ros.rnea_derivatives(m, s.q, s.v, s.a, s.fext)
    fd = rbd_ros.rnea_derivatives_fd(m, s.q, s.v, s.a, s.fext)
    for x, y, what in zip(ours, fd, ("dtau_dq", "dtau_dv", "M")):
        assert_close(x, y, 1e-5, f"{name} {what}")
    ours = rbd_ros.aba_derivatives(m, s.q, s.v, s.tau, s.fext)
    fd = rbd_ros.aba_derivatives_fd(m, s.q, s.v, s.tau, s.fext)
    for x, y, what in zip(ours, fd, ("dqdd_dq", "dqdd_dv", "Minv")):
        assert_close(x, y, 1e-5, f"{name} {what}")


@pytest.mark.parametrize("name", sorted(CASES))
def test_regressor_is_linear_in_any_inertias(name):
    """Y_r θ = τ_r for the model's θ and for other θ (``with_inertial_parameters``)."""
    m = _model(name)
    s = _state(m, 1)
    Y = rbd_ros.joint_torque_regressor(m, s.q, s.v, s.a)
    assert Y.shape == (m.nv, 10 * m.nbodies)
    assert_close(Y @ m.inertial_parameters().ravel(), rbd_ros.rnea(m, s.q, s.v, s.a), 1e-10,
                 "Y theta")
    theta = m.inertial_parameters() * np.random.default_rng(3).uniform(0.5, 2.0, (m.nbodies, 1))
    other = m.with_inertial_parameters(theta)
    assert other.coupling is m.coupling and other.joint_names == m.joint_names
    assert_close(Y @ theta.ravel(), rbd_ros.rnea(other, s.q, s.v, s.a), 1e-10, "Y theta'")


@pytest.mark.parametrize("name", ["hand", "hand_floating"])
def test_batch_equals_single_states(name):
    m = _model(name)
    states = [_state(m, k) for k in range(5)]
    Q, V, A, T = (np.array([getattr(s, f) for s in states]) for f in ("q", "v", "a", "tau"))
    F = np.array([s.fext for s in states])
    checks = [(rbd_ros.rnea_batch(m, Q, V, A, F), rbd_ros.rnea, (Q, V, A, F)),
              (rbd_ros.aba_batch(m, Q, V, T, F), rbd_ros.aba, (Q, V, T, F)),
              (rbd_ros.minv_batch(m, Q), rbd_ros.minv, (Q,)),
              (rbd_ros.joint_torque_regressor_batch(m, Q, V, A).reshape(5, m.nv, -1),
               rbd_ros.joint_torque_regressor, (Q, V, A))]
    for batch, single, args in checks:
        for k in range(5):
            assert np.array_equal(batch[k], single(m, *(x[k] for x in args))), single.__name__
    for batch, single, args in ((rbd_ros.rnea_derivatives_batch(m, Q, V, A, F),
                                 rbd_ros.rnea_derivatives, (Q, V, A, F)),
                                (rbd_ros.aba_derivatives_batch(m, Q, V, T, F),
                                 rbd_ros.aba_derivatives, (Q, V, T, F))):
        for k in range(5):
            for x, y in zip(batch, single(m, *(x[k] for x in args))):
                assert np.array_equal(x[k], y), single.__name__


@pytest.mark.parametrize("name", ["hand", "hand_floating"])
def test_batch_out_equals_fresh(name):
    """out= through the coupled kernel: the fresh call's results, in the caller's arrays."""
    m = _model(name)
    states = [_state(m, k) for k in range(4)]
    Q, V, A = (np.array([getattr(s, f) for s in states]) for f in ("q", "v", "a"))
    nv = m.nv

    def three():
        return tuple(np.empty((4, nv, nv)) for _ in range(3))
    for batch, out in ((rbd_ros.rnea_batch, np.empty((4, nv))),
                       (rbd_ros.aba_batch, np.empty((4, nv))),
                       (rbd_ros.joint_torque_regressor_batch, np.empty((4 * nv, 10 * m.nbodies))),
                       (rbd_ros.rnea_derivatives_batch, three()),
                       (rbd_ros.aba_derivatives_batch, three())):
        ref = batch(m, Q, V, A)
        got = batch(m, Q, V, A, out=out)
        for x, y, o in (zip(got, ref, out) if isinstance(out, tuple) else [(got, ref, out)]):
            assert x is o and np.array_equal(x, y), batch.__name__
    out = np.empty((4, nv, nv))
    assert rbd_ros.minv_batch(m, Q, out=out) is out
    assert np.array_equal(out, rbd_ros.minv_batch(m, Q))


@pytest.mark.parametrize("name", ["hand", "hand_floating"])
def test_integrate_and_random_configuration(name):
    """The reduced q: the base moves as in the tree, independent joints add; limits kept."""
    m = _model(name)
    full = rbd_ros.load_model(_xml(name), floating_base=CASES[name][1], mimic="independent")
    q = m.random_configuration(4)
    dv = np.random.default_rng(5).normal(size=m.nv)
    out = rbd_ros.integrate(m, q, dv)
    base_q, base_v = m.nq_base, m.nv_base
    assert_close(out[base_q:], q[base_q:] + dv[base_v:], 1e-15, "joints")
    if m.floating_base:
        qf = full.neutral()
        qf[:7] = q[:7]
        dvf = np.zeros(full.nv)
        dvf[:6] = dv[:6]
        assert_close(out[:7], rbd_ros.integrate(full, qf, dvf)[:7], 1e-15, "base")
    assert np.all((q[base_q:] >= m.lower) & (q[base_q:] <= m.upper))
    independent = [full.joint_names.index(n) for n in m.joint_names]
    assert np.array_equal(m.lower, full.lower[independent])


def test_inputs_are_the_reduced_ones():
    m = _model("hand")
    s = _state(m, 0)
    with pytest.raises(ValueError, match=r"q has the wrong size.*model.nq = 4"):
        rbd_ros.rnea(m, np.zeros(m.nq_full), s.v, s.a)
    with pytest.raises(ValueError, match="v contains NaN or inf at index 2"):
        rbd_ros.aba(m, s.q, np.where(np.arange(m.nv) == 2, np.nan, s.v), s.tau)
    with pytest.raises(ValueError, match="tau has the wrong size"):
        rbd_ros.compute_all(m, s.q, s.v, tau=np.zeros(m.nv_full))
    with pytest.raises(ValueError, match="the result is not finite"):
        rbd_ros.rnea(m, s.q, s.v * 1e160, s.a)
    independent = rbd_ros.load_model(_xml("hand"), mimic="independent")
    with pytest.raises(ValueError, match="data must be"):
        rbd_ros.rnea(m, s.q, s.v, s.a, data=rbd_ros.Data(independent))
    tau = rbd_ros.rnea(m, list(s.q), list(s.v), list(s.a), data=rbd_ros.Data(m))
    assert_close(tau, rbd_ros.rnea(m, s.q, s.v, s.a), 0.0, "lists")
    g = m.with_gravity([0, 0, -1.62])
    assert g.coupling is m.coupling
    assert_close(rbd_ros.gravity_torques(g, s.q), rbd_ros.gravity_torques(m, s.q) * 1.62 / 9.81,
                 1e-12, "moon")
