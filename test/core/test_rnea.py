"""Inverse dynamics (RNEA), nonlinear effects and gravity torques against Pinocchio."""
import numpy as np
import pytest

import rbd_ros
from helpers import SEEDS, assert_close, get_robot

TOL = 1e-10


@pytest.mark.pinocchio
@pytest.mark.parametrize("seed", SEEDS)
def test_rnea_matches_pinocchio(robot, seed):
    q, v, a, _, _ = robot.random_state(seed)
    tau = rbd_ros.rnea(robot.model, q, v, a)
    ref = robot.pin.rnea(robot.pm, robot.pd, robot.q_to_pin(q), robot.v_to_pin(v),
                         robot.v_to_pin(a))
    assert tau.shape == (robot.model.nv,)
    assert_close(tau, robot.v_from_pin(ref), TOL, f"rnea {robot.name} seed {seed}")


@pytest.mark.pinocchio
@pytest.mark.parametrize("seed", SEEDS)
def test_rnea_with_external_forces_matches_pinocchio(robot, seed):
    q, v, a, _, fext = robot.random_state(seed)
    tau = rbd_ros.rnea(robot.model, q, v, a, fext)
    ref = robot.pin.rnea(robot.pm, robot.pd, robot.q_to_pin(q), robot.v_to_pin(v),
                         robot.v_to_pin(a), robot.fext_to_pin(fext))
    assert_close(tau, robot.v_from_pin(ref), TOL, f"rnea+fext {robot.name} seed {seed}")
    # the forces must actually matter (guards against fext being silently ignored)
    assert np.max(np.abs(tau - rbd_ros.rnea(robot.model, q, v, a))) > 1e-6


@pytest.mark.parametrize("seed", SEEDS[:2])
def test_rnea_zero_fext_equals_no_fext(robot, seed):
    q, v, a, _, _ = robot.random_state(seed)
    m = robot.model
    np.testing.assert_array_equal(rbd_ros.rnea(m, q, v, a, np.zeros((m.nbodies, 6))),
                                  rbd_ros.rnea(m, q, v, a))


@pytest.mark.pinocchio
@pytest.mark.parametrize("seed", SEEDS)
def test_nonlinear_effects_matches_pinocchio(robot, seed):
    q, v, _, _, _ = robot.random_state(seed)
    nle = rbd_ros.nonlinear_effects(robot.model, q, v)
    ref = robot.pin.nonLinearEffects(robot.pm, robot.pd, robot.q_to_pin(q), robot.v_to_pin(v))
    assert_close(nle, robot.v_from_pin(ref), TOL, f"nle {robot.name} seed {seed}")


@pytest.mark.pinocchio
@pytest.mark.parametrize("seed", SEEDS)
def test_gravity_torques_matches_pinocchio(robot, seed):
    q, _, _, _, _ = robot.random_state(seed)
    g = rbd_ros.gravity_torques(robot.model, q)
    ref = robot.pin.computeGeneralizedGravity(robot.pm, robot.pd, robot.q_to_pin(q))
    assert_close(g, robot.v_from_pin(ref), TOL, f"gravity {robot.name} seed {seed}")
    assert np.max(np.abs(ref)) > 0   # the comparison is not trivially 0 == 0


@pytest.mark.parametrize("name", ["arm7", "prismatic", "quadruped"])
def test_gravity_kernel_is_rnea_at_rest(name):
    """
    Check the dedicated gravity kernel against the full RNEA at q̇ = q̈ = 0.

    Prismatic joints, a floating base far from the origin, a changed gravity and a workspace
    passed as ``data=`` too: the same torques up to rounding.
    """
    robot = get_robot(name)
    m = robot.model
    for model in (m, m.with_gravity((1.5, -2.0, 3.0))):
        zeros = np.zeros(model.nv)
        data = rbd_ros.Data(model)
        for seed in SEEDS[:4]:
            q = robot.random_state(seed)[0]
            if name == "quadruped":
                q[:3] = (1e6, -2e6, 3e6)
            ref = rbd_ros.rnea(model, q, zeros, zeros)
            assert np.max(np.abs(ref)) > 0
            assert_close(rbd_ros.gravity_torques(model, q), ref, 1e-12, f"{name} seed {seed}")
            assert_close(rbd_ros.gravity_torques(model, q, data=data), ref, 1e-12,
                         f"{name} seed {seed}, data=")


@pytest.mark.pinocchio
@pytest.mark.parametrize("gravity", [(0.0, 0.0, 0.0), (1.5, -2.0, 3.0), (0.0, -9.81, 0.0)])
def test_changed_gravity_matches_pinocchio(robot, gravity):
    m = robot.model.with_gravity(gravity)
    saved_pin = robot.pm.gravity.linear.copy()
    try:
        robot.pm.gravity.linear = np.array(gravity)
        np.testing.assert_array_equal(m.gravity, gravity)
        q, v, a, _, _ = robot.random_state(7)
        qp = robot.q_to_pin(q)
        assert_close(rbd_ros.rnea(m, q, v, a),
                     robot.v_from_pin(robot.pin.rnea(robot.pm, robot.pd, qp,
                                                     robot.v_to_pin(v), robot.v_to_pin(a))),
                     TOL, f"rnea, gravity {gravity}")
        assert_close(rbd_ros.gravity_torques(m, q),
                     robot.v_from_pin(robot.pin.computeGeneralizedGravity(robot.pm, robot.pd, qp)),
                     TOL, f"gravity torques, gravity {gravity}")
        if gravity == (0.0, 0.0, 0.0):
            np.testing.assert_allclose(rbd_ros.gravity_torques(m, q), 0.0, atol=1e-15)
    finally:
        robot.pm.gravity.linear = saved_pin
    np.testing.assert_array_equal(robot.model.gravity, [0.0, 0.0, -9.81])


def test_default_gravity():
    m = rbd_ros.load_model(rbd_ros_path("pendulum"))
    np.testing.assert_array_equal(m.gravity, [0.0, 0.0, -9.81])


def test_gravity_is_linear_in_g(robot):
    """τ_g(q) is linear in the gravity vector; the velocity terms do not depend on it."""
    m = robot.model
    q, v, _, _, _ = robot.random_state(11)
    g1 = rbd_ros.gravity_torques(m, q)
    nle1 = rbd_ros.nonlinear_effects(m, q, v)
    m2 = m.with_gravity((0.0, 0.0, -19.62))
    g2 = rbd_ros.gravity_torques(m2, q)
    nle2 = rbd_ros.nonlinear_effects(m2, q, v)
    assert_close(g2, 2 * g1, 1e-12, "gravity doubles")
    assert_close(nle2 - g2, nle1 - g1, 1e-12, "Coriolis part independent of gravity")


@pytest.mark.parametrize("seed", SEEDS[:3])
def test_nonnormalized_quaternion_is_normalized(floating_robot, seed):
    robot = floating_robot
    m = robot.model
    q, v, a, tau, fext = robot.random_state(seed)
    q_scaled = q.copy()
    q_scaled[3:7] *= 3.7
    assert_close(rbd_ros.rnea(m, q_scaled, v, a, fext), rbd_ros.rnea(m, q, v, a, fext), 1e-12,
                 "rnea")
    assert_close(rbd_ros.crba(m, q_scaled), rbd_ros.crba(m, q), 1e-12, "crba")
    assert_close(rbd_ros.aba(m, q_scaled, v, tau, fext), rbd_ros.aba(m, q, v, tau, fext), 1e-12,
                 "aba")


@pytest.mark.pinocchio
@pytest.mark.parametrize("seed", SEEDS[:3])
def test_nonnormalized_quaternion_matches_pinocchio(floating_robot, seed):
    """A scaled base quaternion gives Pinocchio's RNEA at the normalized one."""
    robot = floating_robot
    m = robot.model
    q, v, a, _, _ = robot.random_state(seed)
    q_scaled = q.copy()
    q_scaled[3:7] *= 3.7
    ref = robot.pin.rnea(robot.pm, robot.pd, robot.q_to_pin(q), robot.v_to_pin(v),
                         robot.v_to_pin(a))
    assert_close(rbd_ros.rnea(m, q_scaled, v, a), robot.v_from_pin(ref), TOL, "rnea vs pin")
    q_small = q.copy()
    q_small[3:7] *= 1e-3
    assert_close(rbd_ros.rnea(m, q_small, v, a), robot.v_from_pin(ref), TOL, "small quaternion")


def test_quaternion_sign_does_not_matter(floating_robot):
    m = floating_robot.model
    q, v, a, _, _ = floating_robot.random_state(3)
    q_neg = q.copy()
    q_neg[3:7] *= -1
    assert_close(rbd_ros.rnea(m, q_neg, v, a), rbd_ros.rnea(m, q, v, a), 1e-12, "-quaternion")


def test_pendulum_by_hand():
    """Independent oracle: a single revolute pendulum, τ = I_o q̈ + m g (c × ...) by hand."""
    m = rbd_ros.load_model(rbd_ros_path("pendulum"))
    # pole: mass 1, COM (0.01, 0, -0.5) in the joint frame, axis y, I_c yy = 0.0834
    mass, c, Iyy = 1.0, np.array([0.01, 0.0, -0.5]), 0.0834
    I_o = Iyy + mass * (c[0] ** 2 + c[2] ** 2)
    for q, qd, qdd in [(0.0, 0.0, 0.0), (0.3, 0.0, 0.0), (-1.1, 2.0, 0.5), (2.5, -1.0, -3.0)]:
        # gravity torque about y: τ = -(r × m g)_y with r the COM rotated by q about y
        r = np.array([c[0] * np.cos(q) + c[2] * np.sin(q), 0.0,
                      -c[0] * np.sin(q) + c[2] * np.cos(q)])
        grav = np.array([0.0, 0.0, -9.81])
        tau_g = -np.cross(r, mass * grav)[1]
        expected = I_o * qdd + tau_g            # no Coriolis torque about a fixed axis
        tau = rbd_ros.rnea(m, [q], [qd], [qdd])
        assert tau[0] == pytest.approx(expected, rel=1e-12, abs=1e-12)


def rbd_ros_path(name):
    from helpers import ROBOTS
    return ROBOTS[name][0]
