"""
The library's boundary under hostile or careless input (issue 12, library side).

Huge finite inputs give a ValueError naming their magnitude, never a silent NaN; complex
input is refused; ``integrate`` validates; batch calls from several threads on one model
give the serial results; a Model's arrays cannot be made writable again. The node publishes
the core's results without a check of its own: every call of a node's tick refuses what it
cannot compute finitely, on a model with coupled mimic joints too.
"""

import numpy as np
import pytest

import rbd_ros
from helpers import get_robot, run_threads
from mimic_oracle import PAIR, hand_urdf


@pytest.fixture(scope="module")
def quadruped():
    return get_robot("quadruped").model


def huge_state(m):
    q = m.neutral()
    v = np.full(m.nv, 1e154)
    a = np.zeros(m.nv)
    tau = np.full(m.nv, 1e308)
    return q, v, a, tau


@pytest.mark.parametrize("call", [
    lambda m, q, v, a, t: rbd_ros.rnea(m, q, v, a),
    lambda m, q, v, a, t: rbd_ros.aba(m, q, v, t),
    lambda m, q, v, a, t: rbd_ros.nonlinear_effects(m, q, v),
    lambda m, q, v, a, t: rbd_ros.rnea_derivatives(m, q, v, a),
    lambda m, q, v, a, t: rbd_ros.aba_derivatives(m, q, v, t),
    lambda m, q, v, a, t: rbd_ros.compute_all(m, q, v, a=a, tau=t),
    lambda m, q, v, a, t: rbd_ros.inverse_and_forward_dynamics(m, q, v, a=a, tau=t),
    lambda m, q, v, a, t: rbd_ros.joint_torque_regressor(m, q, v, a),
    lambda m, q, v, a, t: rbd_ros.rnea_derivatives_fd(m, q, v, a),
], ids=["rnea", "aba", "nonlinear_effects", "rnea_derivatives", "aba_derivatives",
        "compute_all", "inverse_and_forward_dynamics", "joint_torque_regressor",
        "rnea_derivatives_fd"])
def test_huge_finite_inputs_raise_instead_of_returning_nan(quadruped, call):
    """Velocities 1e154 (v² overflows) and τ = 1e308: finite inputs, non-finite results."""
    with pytest.raises(ValueError, match=r"result is not finite.*largest \|v\| = 1e\+154"):
        call(quadruped, *huge_state(quadruped))


def test_huge_configuration_raises_for_crba_minv_and_the_centroidal_matrix():
    m = get_robot("prismatic").model
    q = np.full(m.nq, 1e200)            # prismatic joints 1e200 m out: m |p|² overflows
    # A_G: its composite inertias overflow, tested as its columns are moved to c
    for function in (rbd_ros.crba, rbd_ros.minv, rbd_ros.minv_cholesky,
                     rbd_ros.centroidal_momentum_matrix):
        with pytest.raises(ValueError, match=r"not finite.*largest \|q\| = 1e\+200"):
            function(m, q)


def test_results_do_not_depend_on_the_base_position(quadruped):
    """
    Check that moving the floating base far away changes nothing, exactly.

    Dynamics are invariant under a translation of the world (uniform gravity, external
    forces in body frames, base velocity in the base frame). The world-frame algorithms run
    in the world translated to the base, so no precision is lost with the distance (before:
    M⁻¹ off by 4e-6 relative at 1e4 m, 3e-2 at 1e6 m, NaN further out).
    """
    rng = np.random.default_rng(1)
    q = quadruped.random_configuration(rng)
    v, a, tau = rng.normal(size=(3, quadruped.nv))
    near = rbd_ros.compute_all(quadruped, q, v, a=a, tau=tau)
    for distance in (1e4, 1e9, 1e200):
        far = q.copy()
        far[:3] = (distance, -distance, 0.5 * distance)
        for field, x, y in zip(near._fields, near,
                               rbd_ros.compute_all(quadruped, far, v, a=a, tau=tau)):
            np.testing.assert_allclose(y, x, rtol=1e-12, atol=1e-12 * np.abs(x).max(),
                                       err_msg=f"{field} at {distance:g} m")
        np.testing.assert_allclose(rbd_ros.rnea(quadruped, far, v, a),
                                   rbd_ros.rnea(quadruped, q, v, a), rtol=1e-12, atol=1e-9)
        Y = rbd_ros.joint_torque_regressor(quadruped, q, v, a)
        np.testing.assert_allclose(rbd_ros.joint_torque_regressor(quadruped, far, v, a), Y,
                                   rtol=1e-12, atol=1e-12 * np.abs(Y).max())


def test_a_huge_quaternion_is_normalized_not_overflowed(quadruped):
    q = quadruped.random_configuration(2)
    big = q.copy()
    big[3:7] *= 1e200
    np.testing.assert_allclose(rbd_ros.crba(quadruped, big), rbd_ros.crba(quadruped, q),
                               rtol=1e-13, atol=1e-13)


def test_aba_derivatives_names_the_result_not_tau(quadruped):
    """Before, an overflow inside q̈ was reported as "tau contains NaN or inf"."""
    q, v, a, tau = huge_state(quadruped)
    with pytest.raises(ValueError) as info:
        rbd_ros.aba_derivatives(quadruped, q, np.zeros(quadruped.nv), tau)
    assert "result is not finite" in str(info.value) and "tau contains" not in str(info.value)


def test_batch_names_the_sample_with_a_non_finite_result(quadruped):
    m = quadruped
    Q = np.array([m.neutral()] * 4)
    V = np.zeros((4, m.nv))
    V[2] = 1e154
    with pytest.raises(ValueError, match=r"rnea_batch: sample 2: the result is not finite"):
        rbd_ros.rnea_batch(m, Q, V, np.zeros((4, m.nv)))


@pytest.mark.parametrize("bad", [np.zeros(7, complex) + 1j, [1j] * 7, np.ones(7) + 0j])
def test_complex_input_is_refused(bad):
    m = get_robot("arm7").model
    with pytest.raises(ValueError, match="q must be real numbers"):
        rbd_ros.rnea(m, bad, np.zeros(7), np.zeros(7))
    with pytest.raises(ValueError, match="q must be real numbers"):
        rbd_ros.rnea_batch(m, np.array([bad] * 2), np.zeros((2, 7)), np.zeros((2, 7)))


def test_long_unconvertible_input_gives_a_short_message():
    m = get_robot("arm7").model
    with pytest.raises(ValueError) as info:
        rbd_ros.rnea(m, ["x" * 100_000] * 7, np.zeros(7), np.zeros(7))
    assert len(str(info.value)) < 300


@pytest.mark.parametrize("q_fix, dv, match", [
    (lambda q: q.__setitem__(3, np.nan), None, "q contains NaN"),
    (lambda q: q.__setitem__(slice(3, 7), 0.0), None, "zero base quaternion"),
    (None, np.zeros(5), "dv has the wrong size"),
    (None, np.full(18, np.inf), "dv contains NaN"),
    (None, [1j] * 18, "dv must be real"),
])
def test_integrate_validates(quadruped, q_fix, dv, match):
    q = quadruped.neutral()
    if q_fix:
        q_fix(q)
    with pytest.raises(ValueError, match=match):
        rbd_ros.integrate(quadruped, q, np.zeros(quadruped.nv) if dv is None else dv)


@pytest.mark.parametrize("eps, match", [
    (0.0, "eps must be finite and > 0, got 0.0"), (-1e-6, "eps must be finite and > 0"),
    (float("nan"), "eps must be finite and > 0, got nan"), ("x" * 10_000, "eps must be a number"),
    (None, "eps must be a number"),
])
@pytest.mark.parametrize("function", [rbd_ros.rnea_derivatives_fd, rbd_ros.aba_derivatives_fd])
def test_finite_differences_refuse_a_step_that_is_no_step(quadruped, function, eps, match):
    """A step of 0, < 0, NaN or no number is refused before any call (0 would divide by 0)."""
    zeros = np.zeros(quadruped.nv)
    with pytest.raises(ValueError, match=match) as info:
        function(quadruped, quadruped.neutral(), zeros, zeros, eps=eps)
    assert len(str(info.value)) < 200
    coupled = rbd_ros.load_model(hand_urdf(PAIR))              # the coupled route too
    assert coupled.coupling is not None
    zeros = np.zeros(coupled.nv)
    with pytest.raises(ValueError, match=match):
        function(coupled, coupled.neutral(), zeros, zeros, eps=eps)


def test_integrate_of_a_rotation_and_back(quadruped):
    """
    Check that integrating δ then -δ comes back for a base rotation and joint steps.

    q ⊕ δ ⊕ (-δ) = q for a pure base rotation (exp(δ) exp(-δ) = 1), and the quaternion
    stays normalized; a 1-dof joint adds.
    """
    q = quadruped.random_configuration(0)
    dv = np.zeros(quadruped.nv)
    dv[3:6] = (0.3, -0.2, 0.5)
    dv[6:] = np.linspace(-1, 1, quadruped.nv - 6)
    there = rbd_ros.integrate(quadruped, q, dv)
    back = rbd_ros.integrate(quadruped, there, -dv)
    np.testing.assert_allclose(np.linalg.norm(there[3:7]), 1.0, atol=1e-15)
    np.testing.assert_allclose(back, q, atol=1e-12)
    np.testing.assert_allclose(there[7:], q[7:] + dv[6:], atol=1e-15)


def test_concurrent_batch_calls_on_one_model_equal_the_serial_ones():
    """Before the per-workspace lock, 4 threads gave thousands of wrong results."""
    m = get_robot("arm7").model
    rng = np.random.default_rng(0)
    Q = np.array([m.random_configuration(rng) for _ in range(64)])
    V, A, T = rng.normal(size=(3, 64, m.nv))
    calls = [lambda: rbd_ros.rnea_batch(m, Q, V, A), lambda: rbd_ros.aba_batch(m, Q, V, T),
             lambda: rbd_ros.minv_batch(m, Q), lambda: rbd_ros.aba_derivatives_batch(m, Q, V, T)]

    def flat(out):
        return np.concatenate([np.ravel(x) for x in out]) if isinstance(out, tuple) \
            else np.ravel(out)
    expected = [flat(call()) for call in calls]
    wrong = []

    def work(k):
        compared = 0
        for n in range(30):
            which = (k + n) % len(calls)
            if not np.array_equal(flat(calls[which]()), expected[which]):
                wrong.append(which)
            compared += 1
        return compared
    assert run_threads(work, 4) == [30] * 4                  # every comparison was made
    assert wrong == []


@pytest.mark.parametrize("name", ["packed", "placement", "inertia", "parent", "idx_v",
                                  "dof_parent", "lower", "effort_limit"])
def test_model_arrays_cannot_be_made_writable(name):
    m = get_robot("arm7").model
    arr = getattr(m, name)
    with pytest.raises(ValueError):
        arr.flags.writeable = True
    base = arr
    while isinstance(base, np.ndarray):
        with pytest.raises(ValueError):
            base.flags.writeable = True
        base = base.base
    assert isinstance(base, bytes)
    # and a derived model's too
    g = m.with_gravity((0.0, 0.0, -1.0))
    with pytest.raises(ValueError):
        getattr(g, name).flags.writeable = True


def test_the_core_refuses_every_result_the_node_would_publish_not_finite():
    """
    The node publishes the core's results unchecked: the core must refuse any non-finite one.

    Every tick's call (effort known or not), on a floating base and on a model with coupled
    mimic joints, at inputs of every magnitude up to float64's largest: a ValueError, or
    results that are all finite.
    """
    from rbd_ros import outputs
    from rbd_ros.outputs import whole_body   # a submodule: imported here, not by another test
    models = [rbd_ros.load_model(rbd_ros.robots.path("rbd_quadruped"), floating_base=True),
              rbd_ros.load_model(hand_urdf(PAIR, seed=2, name="pair"))]
    rng = np.random.default_rng(61)
    refused = 0
    for model in models:
        for effort_known in (True, False):
            # the per-tick dynamics outputs (the whole-body ones come from whole_body.compute)
            names = [n for n in outputs.NAMES if n not in whole_body.NAMES]
            work = outputs.computation(names, effort_known)
            keys = tuple(dict.fromkeys(r for o in work.outputs for r in o.results))
            for scale in 10.0 ** np.arange(0, 309, 7):
                q = model.random_configuration(rng)
                v, a, tau = (rng.choice([-1.0, 1.0], model.nv) * scale * rng.uniform(0.5, 1.7)
                             for _ in range(3))
                try:
                    results = outputs.compute(work.call, model, q, v, a, tau)
                except ValueError:
                    refused += 1
                    continue
                for key in keys:
                    assert np.isfinite(results[key]).all(), (model.name, key, scale)
    assert refused > 0            # the largest magnitudes do overflow


def test_a_coupled_torque_that_overflows_only_when_reduced_is_refused():
    """
    τ_r = Gᵀ τ_full: each term finite, their sum not: inverse_and_forward_dynamics refuses.

    The kernel does not check τ_r itself; q̈ = a + M_r⁻¹ (τ_in − τ_r) carries its NaN or
    inf, and q̈ is checked (``rbd_ros.outputs.compute``'s docstring).
    """
    coupled = rbd_ros.load_model(hand_urdf(PAIR, seed=2, name="pair"))
    independent = rbd_ros.load_model(hand_urdf(PAIR, seed=2, name="pair"),
                                     mimic="independent")
    G = coupled.coupling.G
    q, z = coupled.neutral(), np.zeros(coupled.nv)
    full_q = coupled.coupling.expand(q)
    big = np.finfo(float).max
    for scale in big * np.linspace(1e-8, 1.0, 400):
        a = np.full(coupled.nv, scale) * np.sign(G.sum(axis=0) + 0.5)
        with np.errstate(over="ignore", invalid="ignore"):
            tau_full = rbd_ros.rnea(independent, full_q, G @ z, G @ a) \
                if np.isfinite(G @ a).all() else None
        if tau_full is None or not np.isfinite(tau_full).all():
            continue
        with np.errstate(over="ignore", invalid="ignore"):
            reduced = G.T @ tau_full
        if np.isfinite(reduced).all():
            continue
        with pytest.raises(ValueError, match="not finite"):
            rbd_ros.inverse_and_forward_dynamics(coupled, q, z, a=a, tau=z)
        return
    pytest.fail("no acceleration found whose reduced torque alone overflows")
