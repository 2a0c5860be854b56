"""Joint-space inertia matrix (CRBA) against Pinocchio and against RNEA."""
import numpy as np
import pytest

import rbd_ros
from helpers import SEEDS, assert_close

TOL = 1e-10


def pin_mass_matrix(robot, q):
    Mp = np.array(robot.pin.crba(robot.pm, robot.pd, robot.q_to_pin(q)))
    Mp = np.triu(Mp) + np.triu(Mp, 1).T     # Pinocchio fills only the upper triangle
    return robot.matrix_from_pin(Mp)


@pytest.mark.pinocchio
@pytest.mark.parametrize("seed", SEEDS)
def test_crba_matches_pinocchio(robot, seed):
    q = robot.random_state(seed)[0]
    M = rbd_ros.crba(robot.model, q)
    assert M.shape == (robot.model.nv, robot.model.nv)
    assert_close(M, pin_mass_matrix(robot, q), TOL, f"crba {robot.name} seed {seed}")


@pytest.mark.parametrize("seed", SEEDS)
def test_crba_symmetric_positive_definite(robot, seed):
    q = robot.random_state(seed)[0]
    M = rbd_ros.crba(robot.model, q)
    assert np.all(np.isfinite(M))
    assert np.max(np.abs(M - M.T)) <= 1e-12 * max(1.0, np.max(np.abs(M)))
    np.linalg.cholesky(0.5 * (M + M.T))      # raises LinAlgError if not positive definite
    assert np.all(np.diag(M) > 0)


@pytest.mark.parametrize("seed", SEEDS)
def test_crba_columns_equal_rnea_differences(robot, seed):
    """M[:, k] = ID(q, 0, e_k) - ID(q, 0, 0): an oracle independent of the CRBA code."""
    m = robot.model
    q = robot.random_state(seed)[0]
    M = rbd_ros.crba(m, q)
    zero = np.zeros(m.nv)
    bias = rbd_ros.rnea(m, q, zero, zero)
    cols = np.empty((m.nv, m.nv))
    for k in range(m.nv):
        e = np.zeros(m.nv)
        e[k] = 1.0
        cols[:, k] = rbd_ros.rnea(m, q, zero, e) - bias
    assert_close(M, cols, 1e-10, f"crba vs rnea columns {robot.name}")


@pytest.mark.parametrize("seed", SEEDS[:2])
def test_crba_does_not_depend_on_gravity(robot, seed):
    m = robot.model
    q = robot.random_state(seed)[0]
    M1 = rbd_ros.crba(m, q)
    M2 = rbd_ros.crba(m.with_gravity((3.0, -1.0, 20.0)), q)
    np.testing.assert_array_equal(M1, M2)


@pytest.mark.pinocchio
def test_crba_kinetic_energy_matches_pinocchio(robot):
    """½ vᵀ M v equals Pinocchio's kinetic energy (a scalar check of the whole matrix)."""
    q, v, _, _, _ = robot.random_state(21)
    M = rbd_ros.crba(robot.model, q)
    ke = robot.pin.computeKineticEnergy(robot.pm, robot.pd, robot.q_to_pin(q),
                                        robot.v_to_pin(v))
    assert 0.5 * v @ M @ v == pytest.approx(ke, rel=1e-10, abs=1e-12)
    assert ke > 0


@pytest.mark.pinocchio
def test_floating_base_mass_block_is_total_mass(floating_robot):
    """The linear block of a floating base's M is m_total · 1 (v_lin in the base frame)."""
    m = floating_robot.model
    q = floating_robot.random_state(5)[0]
    M = rbd_ros.crba(m, q)
    total = sum(floating_robot.pm.inertias[j].mass for j in range(floating_robot.pm.njoints))
    assert total > 0
    assert_close(M[:3, :3], total * np.eye(3), 1e-12, "M[:3, :3]")
