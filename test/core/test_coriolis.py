"""
The Coriolis matrix against Pinocchio, finite differences of CRBA and RNEA.

Pinocchio's computeCoriolisMatrix, Ṁ = C + Cᵀ (central differences of CRBA along v) and
C v = nonlinear_effects - g, on the named robots, the corpus and mimic robots (coupled:
C_r = Gᵀ C G).
"""
import numpy as np
import pytest

import rbd_ros
from helpers import SEEDS, assert_close
from corpus_cases import BROKEN_MIMIC, LOADED, MASSLESS, coupled_model, pinocchio_robot

TOL = 1e-10


def _pin_coriolis(robot, q, v):
    pin = robot.pin
    Cp = pin.computeCoriolisMatrix(robot.pm, robot.pd, robot.q_to_pin(q), robot.v_to_pin(v))
    return robot.matrix_from_pin(np.array(Cp))


@pytest.mark.pinocchio
@pytest.mark.parametrize("seed", SEEDS)
def test_equals_pinocchio(robot, seed):
    q, v = robot.random_state(seed)[:2]
    C = rbd_ros.coriolis_matrix(robot.model, q, v)
    assert C.shape == (robot.model.nv, robot.model.nv)
    assert_close(C, _pin_coriolis(robot, q, v), TOL, f"coriolis {robot.name} seed {seed}")


@pytest.mark.parametrize("seed", SEEDS[:3])
def test_times_v_is_the_velocity_product_torques(robot, seed):
    m = robot.model
    q, v = robot.random_state(seed)[:2]
    ref = rbd_ros.nonlinear_effects(m, q, v) - rbd_ros.gravity_torques(m, q)
    assert_close(rbd_ros.coriolis_matrix(m, q, v) @ v, ref, 1e-10, f"C v {robot.name}")


def _mdot_fd(m, q, v, eps=1e-6):
    """dM/dt along v: central differences of CRBA at q ⊕ ±eps v."""
    plus = rbd_ros.crba(m, rbd_ros.integrate(m, q, eps * v))
    minus = rbd_ros.crba(m, rbd_ros.integrate(m, q, -eps * v))
    return (plus - minus) / (2 * eps)


@pytest.mark.parametrize("seed", SEEDS[:3])
def test_mdot_equals_c_plus_c_transpose(robot, seed):
    m = robot.model
    q, v = robot.random_state(seed)[:2]
    C = rbd_ros.coriolis_matrix(m, q, v)
    assert_close(C + C.T, _mdot_fd(m, q, v), 1e-8, f"Mdot {robot.name}")


def test_batch_data_and_out_equal_single_calls(robot):
    m = robot.model
    states = [robot.random_state(seed)[:2] for seed in SEEDS]
    q = np.array([s[0] for s in states])
    v = np.array([s[1] for s in states])
    batch = rbd_ros.coriolis_matrix_batch(m, q, v)
    out = np.empty_like(batch)
    assert rbd_ros.coriolis_matrix_batch(m, q, v, out=out) is out
    data = rbd_ros.Data(m)
    for k in range(len(SEEDS)):
        single = rbd_ros.coriolis_matrix(m, q[k], v[k])
        np.testing.assert_array_equal(batch[k], single)
        np.testing.assert_array_equal(out[k], single)
        np.testing.assert_array_equal(rbd_ros.coriolis_matrix(m, q[k], v[k], data=data), single)
        C = np.empty((m.nv, m.nv))
        assert rbd_ros.coriolis_matrix(m, list(q[k]), v[k], out=C) is C
        np.testing.assert_array_equal(C, single)


def test_refuses_bad_inputs(robot):
    m = robot.model
    q, v = robot.random_state(0)[:2]
    with pytest.raises(ValueError, match="v"):
        rbd_ros.coriolis_matrix(m, q, v[:-1])
    bad = v.copy()
    bad[0] = np.nan
    with pytest.raises(ValueError, match="v"):
        rbd_ros.coriolis_matrix(m, q, bad)
    with pytest.raises(ValueError, match="out"):
        rbd_ros.coriolis_matrix(m, q, v, out=np.empty((m.nv, m.nv + 1)))
    with pytest.raises(ValueError, match="sample 1"):
        rbd_ros.coriolis_matrix_batch(m, np.array([q, q]), np.array([v, bad]))


@pytest.mark.pinocchio
@pytest.mark.parametrize("floating", [False, True], ids=["fixed", "floating"])
def test_corpus_equals_pinocchio(pin, floating):
    """Every corpus robot both load: C equals Pinocchio's, Ṁ = C + Cᵀ."""
    compared = 0
    for name in LOADED + MASSLESS + BROKEN_MIMIC:     # Pinocchio loads every one of them
        robot = pinocchio_robot(name, floating)
        m = robot.model
        if m.nv == 0:
            continue
        q, v = robot.random_state(0)[:2]
        C = rbd_ros.coriolis_matrix(m, q, v)
        assert_close(C, _pin_coriolis(robot, q, v), TOL, f"coriolis {name}")
        # a joint with huge limits (iris's rotors) draws angles ~1e15 rad, where a step of
        # 1e-6 rad is below float spacing: differentiate at an angle of a turn or less
        base = m.nq_base
        q[base:] = np.where(np.abs(q[base:]) > 1e3, np.remainder(q[base:], 2 * np.pi), q[base:])
        C = rbd_ros.coriolis_matrix(m, q, v)
        scale = max(1.0, np.max(np.abs(rbd_ros.crba(m, q))))
        err = np.max(np.abs(C + C.T - _mdot_fd(m, q, v))) / scale
        assert err < 1e-7, f"Mdot {name}: {err:.2e}"
        compared += 1
    assert compared >= 20, compared


@pytest.mark.parametrize("floating", [False, True], ids=["fixed", "floating"])
def test_coupled_mimic_is_g_transpose_c_g(floating):
    """C_r = Gᵀ C(f(q), G v) G, against the independent model of the same URDF."""
    m, independent = coupled_model(floating)
    G = m.coupling.G
    rng = np.random.default_rng(3)
    for _ in range(3):
        q = m.random_configuration(rng)
        v = rng.normal(size=m.nv)
        qf = m.coupling.expand(q)
        ref = G.T @ rbd_ros.coriolis_matrix(independent, qf, G @ v) @ G
        assert_close(rbd_ros.coriolis_matrix(m, q, v), ref, 1e-12, "coupled coriolis")
        C = rbd_ros.coriolis_matrix(m, q, v)
        assert_close(C @ v, rbd_ros.nonlinear_effects(m, q, v)
                     - rbd_ros.gravity_torques(m, q), 1e-10, "coupled C v")
        batch = rbd_ros.coriolis_matrix_batch(m, q[None], v[None])
        np.testing.assert_array_equal(batch[0], C)
