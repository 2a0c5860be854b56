"""Body and joint torque regressors: against RNEA, Pinocchio and f = I a + v ×* (I v)."""
import numpy as np
import pytest

import rbd_ros
from helpers import SEEDS, assert_close, get_robot
from rbd_ros.model import inertia as rin

TOL = 1e-10
REGRESSOR_ROBOTS = ("arm7", "branched", "prismatic", "quadruped", "panda", "talos",
                    "branched_planar")


def force_cross(v):
    """Return the 6×6 matrix of v ×* (linear-first)."""
    def hat(x):
        return np.array([[0, -x[2], x[1]], [x[2], 0, -x[0]], [-x[1], x[0], 0]])
    out = np.zeros((6, 6))
    out[:3, :3] = hat(v[3:])
    out[3:, 3:] = hat(v[3:])
    out[3:, :3] = hat(v[:3])
    return out


@pytest.mark.parametrize("seed", SEEDS)
def test_body_regressor_matches_newton_euler(seed):
    rng = np.random.default_rng(seed)
    v, a = rng.normal(size=6), rng.normal(size=6)
    Y = rbd_ros.body_regressor(v, a)
    assert Y.shape == (6, 10)
    for _ in range(3):
        compact = rin.compact(rng.uniform(0.1, 3), rng.normal(size=3),
                              np.diag(rng.uniform(0.1, 1, 3)))
        inertia = rin.to_matrix(compact)
        f = inertia @ a + force_cross(v) @ inertia @ v
        assert_close(Y @ rin.to_theta(compact), f, 1e-13, "body regressor")
    # each column is the force of the unit parameter (linearity, also for unphysical θ)
    for k in range(10):
        e = np.zeros(10)
        e[k] = 1.0
        inertia = spatial_matrix(e)
        assert_close(Y[:, k], inertia @ a + force_cross(v) @ inertia @ v, 1e-13, f"column {k}")


def spatial_matrix(theta):
    """[[m 1, -[h]], [[h], I_o]] straight from θ (any θ, physical or not)."""
    m, hx, hy, hz, ixx, ixy, iyy, ixz, iyz, izz = theta
    h = np.array([[0, -hz, hy], [hz, 0, -hx], [-hy, hx, 0]])
    out = np.zeros((6, 6))
    out[:3, :3] = m * np.eye(3)
    out[:3, 3:] = -h
    out[3:, :3] = h
    out[3:, 3:] = [[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]]
    return out


def test_spatial_matrix_agrees_with_inertia_module():
    rng = np.random.default_rng(0)
    compact = rin.compact(1.3, rng.normal(size=3), np.diag([0.2, 0.3, 0.4]))
    np.testing.assert_allclose(spatial_matrix(rin.to_theta(compact)), rin.to_matrix(compact),
                               atol=1e-14)


def test_body_regressor_rejects_bad_sizes():
    with pytest.raises(ValueError, match="v"):
        rbd_ros.body_regressor(np.zeros(5), np.zeros(6))
    with pytest.raises(ValueError, match="a_g"):
        rbd_ros.body_regressor(np.zeros(6), np.zeros(7))


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("name", REGRESSOR_ROBOTS)
def test_regressor_times_theta_is_rnea(name, seed):
    robot = get_robot(name)
    m = robot.model
    q, v, a, _, _ = robot.random_state(seed)
    Y = rbd_ros.joint_torque_regressor(m, q, v, a)
    assert Y.shape == (m.nv, 10 * m.nbodies)
    assert_close(Y @ m.inertial_parameters().ravel(), rbd_ros.rnea(m, q, v, a), TOL,
                 f"Y θ vs rnea {name} seed {seed}")


@pytest.mark.parametrize("name", REGRESSOR_ROBOTS)
def test_regressor_is_linear_in_theta_for_any_theta(name):
    """Y θ' == rnea of a model carrying θ' (θ' random, not even physical)."""
    robot = get_robot(name)
    m = robot.model
    rng = np.random.default_rng(7)
    theta = m.inertial_parameters() * (1 + 0.3 * rng.normal(size=(m.nbodies, 10)))
    other = m.with_inertial_parameters(theta)
    q, v, a, _, _ = robot.random_state(3)
    Y = rbd_ros.joint_torque_regressor(m, q, v, a)
    assert_close(Y @ theta.ravel(), rbd_ros.rnea(other, q, v, a), 1e-9, f"θ' {name}")


def test_dynamic_parameter_order_matches_pinocchio(pin):
    ref = pin.Inertia(2.0, np.array([0.1, -0.2, 0.3]),
                      np.array([[0.5, 0.01, 0.02], [0.01, 0.6, 0.03], [0.02, 0.03, 0.7]]))
    compact = rin.compact(2.0, [0.1, -0.2, 0.3], ref.inertia)
    np.testing.assert_allclose(rin.to_theta(compact), ref.toDynamicParameters(), atol=1e-14)


@pytest.mark.pinocchio
@pytest.mark.parametrize("seed", SEEDS[:3])
@pytest.mark.parametrize("name", REGRESSOR_ROBOTS)
def test_regressor_matches_pinocchio(name, seed):
    robot = get_robot(name)
    m = robot.model
    q, v, a, _, _ = robot.random_state(seed)
    Y = rbd_ros.joint_torque_regressor(m, q, v, a)
    ref = robot.pin.computeJointTorqueRegressor(robot.pm, robot.pd, robot.q_to_pin(q),
                                                robot.v_to_pin(v), robot.v_to_pin(a))
    assert ref.shape == (robot.pm.nv, 10 * (robot.pm.njoints - 1))
    cols = np.concatenate([10 * (j - 1) + np.arange(10) for j in robot.body_joint])
    assert_close(Y, ref[robot.perm_v][:, cols], TOL, f"regressor {name} seed {seed}")


@pytest.mark.parametrize("name", ("arm7", "quadruped", "talos"))
def test_batch_equals_loop(name):
    robot = get_robot(name)
    m = robot.model
    states = [robot.random_state(s) for s in range(9)]
    q = np.array([s[0] for s in states])
    v = np.array([s[1] for s in states])
    a = np.array([s[2] for s in states])
    Yb = rbd_ros.joint_torque_regressor_batch(m, q, v, a)
    assert Yb.shape == (9 * m.nv, 10 * m.nbodies)
    for k in range(9):
        np.testing.assert_array_equal(Yb[k * m.nv:(k + 1) * m.nv],
                                      rbd_ros.joint_torque_regressor(m, q[k], v[k], a[k]))
    # one state and zero states
    np.testing.assert_array_equal(rbd_ros.joint_torque_regressor_batch(m, q[:1], v[:1], a[:1]),
                                  rbd_ros.joint_torque_regressor(m, q[0], v[0], a[0]))
    assert rbd_ros.joint_torque_regressor_batch(m, q[:0], v[:0], a[:0]).shape == \
        (0, 10 * m.nbodies)


def test_regressor_input_checks():
    m = get_robot("arm7").model
    q, v, a, _, _ = get_robot("arm7").random_state(0)
    with pytest.raises(ValueError, match="q has the wrong size"):
        rbd_ros.joint_torque_regressor(m, q[:-1], v, a)
    bad = a.copy()
    bad[2] = np.nan
    with pytest.raises(ValueError, match="a contains NaN"):
        rbd_ros.joint_torque_regressor(m, q, v, bad)
    # lists and ints are converted
    Y = rbd_ros.joint_torque_regressor(m, list(q), list(v), [0] * m.nv)
    np.testing.assert_array_equal(Y, rbd_ros.joint_torque_regressor(m, q, v, np.zeros(m.nv)))
    Q = np.tile(q, (4, 1))
    V = np.tile(v, (4, 1))
    A = np.tile(a, (4, 1))
    A[2, 1] = np.inf
    with pytest.raises(ValueError, match="sample 2: a contains NaN or inf"):
        rbd_ros.joint_torque_regressor_batch(m, Q, V, A)
    with pytest.raises(ValueError, match="v has 3 states but q has 4"):
        rbd_ros.joint_torque_regressor_batch(m, Q, V[:3], A)


def test_floating_base_zero_quaternion_rejected():
    robot = get_robot("quadruped")
    q, v, a, _, _ = robot.random_state(0)
    q[3:7] = 0
    with pytest.raises(ValueError, match="quaternion"):
        rbd_ros.joint_torque_regressor(robot.model, q, v, a)


def test_with_inertial_parameters_keeps_the_rest():
    m = get_robot("panda").model.with_gravity((0.0, 1.0, -9.0))
    theta = m.inertial_parameters() * 1.5
    other = m.with_inertial_parameters(theta)
    assert other is not m
    np.testing.assert_allclose(other.inertial_parameters(), theta, rtol=1e-12, atol=1e-15)
    np.testing.assert_array_equal(other.gravity, m.gravity)
    np.testing.assert_array_equal(other.placement, m.placement)
    np.testing.assert_array_equal(other.lower, m.lower)
    np.testing.assert_array_equal(other.effort_limit, m.effort_limit)
    assert other.name == m.name and other.joint_names == m.joint_names
    assert other.body_names == m.body_names
    # the original is untouched
    assert not np.allclose(m.inertial_parameters(), theta)
    with pytest.raises(ValueError, match="shape"):
        m.with_inertial_parameters(np.zeros((m.nbodies, 9)))
