"""
Analytical derivatives of inverse and forward dynamics (RSS 2018 seed, Algorithms 2-3).

Checked against Pinocchio's computeRNEADerivatives / computeABADerivatives, against central
finite differences, and against structural identities (M, M⁻¹, Eq. 24, the zero of Fig. 3).
"""
import numpy as np
import pytest

import rbd_ros
from helpers import assert_close, get_robot
from rbd_ros.algorithms.calls import (aba_derivatives, aba_derivatives_fd, integrate, minv,
                                      rnea_derivatives, rnea_derivatives_fd)

ROBOTS = ("pendulum", "arm7", "branched", "prismatic", "quadruped", "talos", "branched_planar")
SEEDS = (0, 1, 2)
PIN_TOL = 1e-9
FD_TOL = 1e-5


@pytest.fixture(params=ROBOTS)
def robot(request):
    return get_robot(request.param)


def _symmetric_from_upper(A):
    """Pinocchio fills only the upper triangle of M and M⁻¹ in its derivative routines."""
    A = np.asarray(A, np.float64)
    return np.triu(A) + np.triu(A, 1).T


def _pin_rnea_derivatives(robot, q, v, a, fext=None):
    pin, pm, pd = robot.pin, robot.pm, robot.pd
    args = [pm, pd, robot.q_to_pin(q), robot.v_to_pin(v), robot.v_to_pin(a)]
    if fext is not None:
        args.append(robot.fext_to_pin(fext))
    pin.computeRNEADerivatives(*args)
    return (robot.matrix_from_pin(pd.dtau_dq), robot.matrix_from_pin(pd.dtau_dv),
            robot.matrix_from_pin(_symmetric_from_upper(pd.M)))


def _pin_aba_derivatives(robot, q, v, tau, fext=None):
    pin, pm, pd = robot.pin, robot.pm, robot.pd
    args = [pm, pd, robot.q_to_pin(q), robot.v_to_pin(v), robot.v_to_pin(tau)]
    if fext is not None:
        args.append(robot.fext_to_pin(fext))
    pin.computeABADerivatives(*args)
    return (robot.matrix_from_pin(pd.ddq_dq), robot.matrix_from_pin(pd.ddq_dv),
            robot.matrix_from_pin(_symmetric_from_upper(pd.Minv)))


NAMES_ID = ("dtau_dq", "dtau_dv", "M")
NAMES_FD = ("dqdd_dq", "dqdd_dv", "Minv")


def _compare(ours, ref, tol, names, what):
    for x, y, name in zip(ours, ref, names):
        assert x.shape == y.shape
        assert_close(x, y, tol, f"{name} {what}")


# -- against Pinocchio ---------------------------------------------------------------------
@pytest.mark.pinocchio
@pytest.mark.parametrize("with_fext", (False, True))
@pytest.mark.parametrize("seed", SEEDS)
def test_rnea_derivatives_match_pinocchio(robot, seed, with_fext):
    q, v, a, _, fext = robot.random_state(seed)
    fext = fext if with_fext else None
    ours = rnea_derivatives(robot.model, q, v, a, fext)
    ref = _pin_rnea_derivatives(robot, q, v, a, fext)
    _compare(ours, ref, PIN_TOL, NAMES_ID, f"{robot.name} seed {seed} fext={with_fext}")


@pytest.mark.pinocchio
@pytest.mark.parametrize("with_fext", (False, True))
@pytest.mark.parametrize("seed", SEEDS)
def test_aba_derivatives_match_pinocchio(robot, seed, with_fext):
    q, v, _, tau, fext = robot.random_state(seed)
    fext = fext if with_fext else None
    ours = aba_derivatives(robot.model, q, v, tau, fext)
    ref = _pin_aba_derivatives(robot, q, v, tau, fext)
    _compare(ours, ref, PIN_TOL, NAMES_FD, f"{robot.name} seed {seed} fext={with_fext}")


# -- against finite differences ------------------------------------------------------------
@pytest.mark.parametrize("with_fext", (False, True))
def test_rnea_derivatives_match_finite_differences(robot, with_fext):
    q, v, a, _, fext = robot.random_state(10)
    fext = fext if with_fext else None
    ours = rnea_derivatives(robot.model, q, v, a, fext)
    ref = rnea_derivatives_fd(robot.model, q, v, a, fext)
    _compare(ours, ref, FD_TOL, NAMES_ID, f"FD {robot.name} fext={with_fext}")


@pytest.mark.parametrize("with_fext", (False, True))
def test_aba_derivatives_match_finite_differences(robot, with_fext):
    q, v, _, tau, fext = robot.random_state(11)
    fext = fext if with_fext else None
    ours = aba_derivatives(robot.model, q, v, tau, fext)
    ref = aba_derivatives_fd(robot.model, q, v, tau, fext)
    _compare(ours, ref, FD_TOL, NAMES_FD, f"FD {robot.name} fext={with_fext}")


@pytest.mark.pinocchio
def test_finite_differences_of_pinocchio_agree_with_ours(robot):
    """
    Check the FD helpers and the tangent convention independently of our kernels.

    Pinocchio's analytical ∂τ/∂q equals our FD of our RNEA.
    """
    q, v, a, _, _ = robot.random_state(12)
    ref = _pin_rnea_derivatives(robot, q, v, a)
    fd = rnea_derivatives_fd(robot.model, q, v, a)
    assert_close(fd[0], ref[0], FD_TOL, f"FD dtau_dq vs pinocchio {robot.name}")


# -- identities ----------------------------------------------------------------------------
@pytest.mark.parametrize("seed", SEEDS)
def test_dtau_da_is_crba_and_minv_is_its_inverse(robot, seed):
    m = robot.model
    q, v, a, tau, _ = robot.random_state(seed)
    _, _, M = rnea_derivatives(m, q, v, a)
    assert np.array_equal(M, M.T)
    assert_close(M, rbd_ros.crba(m, q), 1e-12, f"M vs crba {robot.name}")
    _, _, Minv = aba_derivatives(m, q, v, tau)
    assert_close(Minv, minv(m, q), 1e-12, f"Minv vs minv {robot.name}")
    assert_close(Minv @ M, np.eye(m.nv), 1e-8, f"Minv M {robot.name}")


@pytest.mark.parametrize("seed", SEEDS)
def test_eq24_links_forward_and_inverse_derivatives(robot, seed):
    """Eq. 24 read backwards: ∂ID/∂u = -M ∂FD/∂u at q̈ = FD(q, v, τ)."""
    m = robot.model
    q, v, _, tau, fext = robot.random_state(seed)
    dq, dv, Minv = aba_derivatives(m, q, v, tau, fext)
    qdd = rbd_ros.aba(m, q, v, tau, fext)
    tq, tv, M = rnea_derivatives(m, q, v, qdd, fext)
    assert_close(-M @ dq, tq, 1e-8, f"Eq. 24 q {robot.name}")
    assert_close(-M @ dv, tv, 1e-8, f"Eq. 24 v {robot.name}")


def test_fig3_dtau_dv_is_exactly_zero_without_gravity_and_motion(robot):
    """
    RSS 2018 Fig. 3: with g = 0 and q̇ = q̈ = 0 every term of ∂τ/∂q̇ vanishes exactly.

    ∂τ/∂q̇ = ∂C/∂q̇ q̇ + C is zero at q̇ = 0, and so is ∂τ/∂q (τ ≡ 0 near q).
    """
    m = robot.model
    q, _, _, _, _ = robot.random_state(5)
    zero = np.zeros(m.nv)
    m = m.with_gravity([0.0, 0.0, 0.0])
    dq, dv, M = rnea_derivatives(m, q, zero, zero)
    ddq, ddv, _ = aba_derivatives(m, q, zero, zero)
    assert np.all(dv == 0.0)
    assert np.all(dq == 0.0)
    assert np.all(ddv == 0.0)
    assert np.all(ddq == 0.0)
    assert np.all(np.diag(M) > 0.0)


def test_gravity_only_dtau_dv_is_zero(robot):
    """With gravity but q̇ = 0, ∂τ/∂q̇ = C(q, 0) = 0 still holds exactly."""
    m = robot.model
    q, _, a, _, _ = robot.random_state(6)
    dq, dv, _ = rnea_derivatives(m, q, np.zeros(m.nv), a)
    assert np.all(dv == 0.0)
    assert np.any(dq != 0.0)


def test_repeated_calls_are_identical(robot):
    """No state leaks between calls through the cached scratch arrays."""
    m = robot.model
    q, v, a, tau, fext = robot.random_state(7)
    first = rnea_derivatives(m, q, v, a, fext)
    rbd_ros.aba(m, *robot.random_state(8)[:2], tau)          # scribble on the workspace
    aba_derivatives(m, *robot.random_state(9)[:2], tau)
    for x, y in zip(first, rnea_derivatives(m, q, v, a, fext)):
        assert np.array_equal(x, y)
    first = aba_derivatives(m, q, v, tau, fext)
    rnea_derivatives(m, *robot.random_state(8)[:3])
    for x, y in zip(first, aba_derivatives(m, q, v, tau, fext)):
        assert np.array_equal(x, y)


# -- integrate ----------------------------------------------------------------------------
@pytest.mark.pinocchio
@pytest.mark.parametrize("name", ("quadruped", "talos", "arm7", "branched_planar"))
def test_integrate_matches_pinocchio(name):
    robot = get_robot(name)
    m = robot.model
    rng = np.random.default_rng(3)
    q = m.random_configuration(rng)
    for scale in (1e-9, 0.3, 2.0):
        dv = rng.normal(scale=scale, size=m.nv)
        ours = integrate(m, q, dv)
        ref = robot.pin.integrate(robot.pm, robot.q_to_pin(q), robot.v_to_pin(dv))
        assert_close(robot.q_to_pin(ours), ref, 1e-12, f"integrate {name} scale {scale}")


# -- inputs -------------------------------------------------------------------------------
def test_inputs_are_converted_and_checked():
    m = get_robot("quadruped").model
    q, v, a, tau, fext = get_robot("quadruped").random_state(0)
    ref = rnea_derivatives(m, q, v, a, fext)
    strided = np.repeat(a, 2)[::2]                       # not C-contiguous
    got = rnea_derivatives(m, list(q), list(v), strided, fext.tolist())
    for x, y in zip(ref, got):
        assert np.array_equal(x, y)
    got = aba_derivatives(m, list(q), v[::1], list(tau), fext.tolist())
    for x, y in zip(aba_derivatives(m, q, v, tau, fext), got):
        assert np.array_equal(x, y)
    with pytest.raises(ValueError, match="rnea_derivatives: v has the wrong size"):
        rnea_derivatives(m, q, v[:-1], a)
    bad = a.copy()
    bad[2] = np.nan
    with pytest.raises(ValueError, match="rnea_derivatives: a contains NaN"):
        rnea_derivatives(m, q, v, bad)
    with pytest.raises(ValueError, match="aba_derivatives: fext has the wrong size"):
        aba_derivatives(m, q, v, tau, fext[:-1])
    zq = q.copy()
    zq[3:7] = 0.0
    with pytest.raises(ValueError, match="zero base quaternion"):
        aba_derivatives(m, zq, v, tau)


def test_empty_list_is_a_wrong_size():
    m = get_robot("arm7").model
    q, v, a, tau, _ = get_robot("arm7").random_state(0)
    with pytest.raises(ValueError, match="rnea_derivatives: v has the wrong size"):
        rnea_derivatives(m, q, [], a)
    with pytest.raises(ValueError, match="aba_derivatives: q has the wrong size"):
        aba_derivatives(m, [], v, tau)
