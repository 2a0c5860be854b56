"""
Eq. 24's products limb by limb (``rbd_ros.algorithms.limb_blocks``), against Pinocchio.

With a fixed base whose world link has several moving children (talos held at its pelvis:
two legs and the torso with its arms and head; ``branched``: two arms on one base), ∂FD/∂q
and ∂FD/∂q̇ = -M⁻¹ ∂ID/∂u are multiplied one limb's block at a time, and the entries between
limbs are set to zero. That rests on M having no entry between limbs: checked on Pinocchio's
M. The results must be Pinocchio's, and the whole product that numpy takes of the separate
calls' M⁻¹ and ∂ID/∂u; a floating base (one limb, the whole product) is checked the same way.
"""
import numpy as np
import pytest

import rbd_ros
from helpers import assert_close, get_robot

PIN_TOL = 1e-9
PRODUCT_TOL = 1e-12


def limb_of_dofs(model):
    """Return, per dof, the body that hangs from the world above it (its limb)."""
    limb = np.empty(model.nv, int)
    for body in range(model.nbodies):
        root = body
        while model.parent[root] >= 0:
            root = model.parent[root]
        start = model.idx_v[body]
        end = model.idx_v[body + 1] if body + 1 < model.nbodies else model.nv
        limb[start:end] = root
    return limb


@pytest.mark.parametrize("name, limbs", [("talos_fixed", 3), ("branched", 2), ("talos", 1)])
def test_the_limbs_do_not_couple_in_pinocchio_s_mass_matrix(name, limbs, pin):
    robot = get_robot(name)
    limb = limb_of_dofs(robot.model)
    assert len(set(limb)) == limbs
    q = robot.random_state(3)[0]
    M = robot.matrix_from_pin(np.array(pin.crba(robot.pm, robot.pd, robot.q_to_pin(q))))
    M = np.triu(M) + np.triu(M, 1).T
    between = limb[:, None] != limb[None, :]
    assert np.count_nonzero(M[between]) == 0
    assert np.count_nonzero(M[~between]) > 0


@pytest.mark.parametrize("name", ["talos_fixed", "branched", "talos"])
@pytest.mark.parametrize("with_fext", [False, True])
def test_forward_dynamics_derivatives_by_limbs_are_pinocchio_s(name, with_fext, pin):
    robot = get_robot(name)
    m = robot.model
    q, v, _, tau, fext = robot.random_state(4)
    fext = fext if with_fext else None
    extra = [] if fext is None else [robot.fext_to_pin(fext)]
    pin.computeABADerivatives(robot.pm, robot.pd, robot.q_to_pin(q), robot.v_to_pin(v),
                              robot.v_to_pin(tau), *extra)
    want = {"dqdd_dq": robot.matrix_from_pin(robot.pd.ddq_dq),
            "dqdd_dv": robot.matrix_from_pin(robot.pd.ddq_dv)}
    every = rbd_ros.compute_all(m, q, v, tau=tau, fext=fext)
    alone = dict(zip(("dqdd_dq", "dqdd_dv"), rbd_ros.aba_derivatives(m, q, v, tau, fext)))
    for field, expected in want.items():
        assert_close(getattr(every, field), expected, PIN_TOL, f"compute_all {field} {name}")
        assert_close(alone[field], expected, PIN_TOL, f"aba_derivatives {field} {name}")


@pytest.mark.parametrize("name", ["talos_fixed", "branched", "talos"])
def test_the_products_by_limbs_are_the_whole_products(name):
    robot = get_robot(name)
    m = robot.model
    q, v, _, tau, fext = robot.random_state(5)
    every = rbd_ros.compute_all(m, q, v, tau=tau, fext=fext)
    dtau_dq, dtau_dv, _ = rbd_ros.rnea_derivatives(m, q, v, every.qdd, fext)
    Minv = rbd_ros.minv(m, q)
    limb = limb_of_dofs(m)
    between = limb[:, None] != limb[None, :]
    for got, dtau in ((every.dqdd_dq, dtau_dq), (every.dqdd_dv, dtau_dv)):
        assert_close(got, -Minv @ dtau, PRODUCT_TOL, name)
        assert np.count_nonzero(got[between]) == 0
