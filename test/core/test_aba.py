"""Forward dynamics (ABA) against Pinocchio, RNEA and CRBA."""
import numpy as np
import pytest

import rbd_ros
from helpers import SEEDS, assert_close

TOL = 1e-10


@pytest.mark.pinocchio
@pytest.mark.parametrize("seed", SEEDS)
def test_aba_matches_pinocchio(robot, seed):
    q, v, _, tau, _ = robot.random_state(seed)
    qdd = rbd_ros.aba(robot.model, q, v, tau)
    ref = robot.pin.aba(robot.pm, robot.pd, robot.q_to_pin(q), robot.v_to_pin(v),
                        robot.v_to_pin(tau))
    assert qdd.shape == (robot.model.nv,)
    assert_close(qdd, robot.v_from_pin(ref), TOL, f"aba {robot.name} seed {seed}")


@pytest.mark.pinocchio
@pytest.mark.parametrize("seed", SEEDS)
def test_aba_with_external_forces_matches_pinocchio(robot, seed):
    q, v, _, tau, fext = robot.random_state(seed)
    qdd = rbd_ros.aba(robot.model, q, v, tau, fext)
    ref = robot.pin.aba(robot.pm, robot.pd, robot.q_to_pin(q), robot.v_to_pin(v),
                        robot.v_to_pin(tau), robot.fext_to_pin(fext))
    assert_close(qdd, robot.v_from_pin(ref), TOL, f"aba+fext {robot.name} seed {seed}")
    assert np.max(np.abs(qdd - rbd_ros.aba(robot.model, q, v, tau))) > 1e-6


@pytest.mark.parametrize("seed", SEEDS)
def test_aba_inverts_rnea(robot, seed):
    m = robot.model
    q, v, a, _, fext = robot.random_state(seed)
    tau = rbd_ros.rnea(m, q, v, a)
    assert_close(rbd_ros.aba(m, q, v, tau), a, 1e-9, f"aba(rnea(a)) {robot.name}")
    tau_f = rbd_ros.rnea(m, q, v, a, fext)
    assert_close(rbd_ros.aba(m, q, v, tau_f, fext), a, 1e-9, f"with fext {robot.name}")


@pytest.mark.parametrize("seed", SEEDS)
def test_rnea_inverts_aba(robot, seed):
    m = robot.model
    q, v, _, tau, _ = robot.random_state(seed)
    qdd = rbd_ros.aba(m, q, v, tau)
    assert_close(rbd_ros.rnea(m, q, v, qdd), tau, 1e-9, f"rnea(aba(tau)) {robot.name}")


@pytest.mark.parametrize("seed", SEEDS[:3])
def test_aba_equals_mass_matrix_solve(robot, seed):
    """q̈ = M⁻¹ (τ - h): ABA agrees with CRBA + nonlinear effects."""
    m = robot.model
    q, v, _, tau, _ = robot.random_state(seed)
    M = rbd_ros.crba(m, q)
    h = rbd_ros.nonlinear_effects(m, q, v)
    expected = np.linalg.solve(M, tau - h)
    assert_close(rbd_ros.aba(m, q, v, tau), expected, 1e-8, f"aba vs M^-1 {robot.name}")


def test_aba_free_fall(floating_robot):
    """
    With no torque, no velocity and no contact, every body falls.

    The base acceleration in the world equals gravity and the joints stay at rest
    (τ = h(q, 0) cancels gravity).
    """
    m = floating_robot.model
    q = floating_robot.random_state(8)[0]
    zero = np.zeros(m.nv)
    # τ that holds the joints against gravity while the base is free: joints see no gravity
    # load in free fall, so τ = 0 gives joint accelerations 0 and base accel = g.
    qdd = rbd_ros.aba(m, q, zero, zero)
    quat = q[3:7] / np.linalg.norm(q[3:7])
    x, y, z, w = quat
    R = np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                  [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                  [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])
    assert_close(R @ qdd[:3], m.gravity, 1e-10, "base linear acceleration (world)")
    assert_close(qdd[3:], np.zeros(m.nv - 3), 1e-10, "angular and joint accelerations")
