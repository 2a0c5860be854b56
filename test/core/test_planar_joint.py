"""
A URDF ``planar`` joint: a mobile base, against Pinocchio (``JointModelPlanar``).

The kind is one module (``rbd_ros.model.joints.planar``): q = [x, y, cos θ, sin θ], v in the
body frame. Every algorithm runs on ``branched_planar`` (``oracle.ROBOTS``) in the tests of
each algorithm; here what only this kind has: M⁻¹ through its three dofs, the unit (cos θ,
sin θ) normalized or refused, the loader's rules, and the node's and replay's refusal.
"""
import os
import re

import numpy as np
import pytest

import rbd_ros
from helpers import assert_close, get_robot
from oracle import URDF_DIR, Robot
from random_chain import random_chain
from rbd_ros import outputs
from rbd_ros.description.urdf_reader import URDFError
from rbd_ros.model.joints import BY_NAME

PATH = os.path.join(URDF_DIR, "branched_planar.urdf")
PLANAR = BY_NAME["planar"].code


def _text():
    with open(PATH, encoding="utf-8") as f:
        return f.read()


@pytest.fixture(scope="module")
def robot():
    return get_robot("branched_planar")


def test_loads_as_a_planar_base(robot):
    m = robot.model
    assert m.joint_type[0] == PLANAR and m.floating_base
    movable = len(re.findall(r'type="(?:revolute|continuous|prismatic)"', _text()))
    assert (m.nq_base, m.nv_base) == (4, 3) and (m.nq, m.nv) == (4 + movable, 3 + movable)
    np.testing.assert_array_equal(m.neutral()[:4], [0.0, 0.0, 1.0, 0.0])


@pytest.mark.pinocchio
def test_pinocchio_reads_the_same_joint(robot):
    pm = robot.pm
    assert pm.joints[1].shortname() == "JointModelPlanar"
    assert (pm.nq, pm.nv) == (robot.model.nq, robot.model.nv)
    np.testing.assert_allclose(robot.q_to_pin(robot.model.neutral()),
                               robot.pin.neutral(pm))


@pytest.mark.pinocchio
@pytest.mark.parametrize("seed", range(4))
def test_minv_matches_pinocchio(robot, seed):
    m, pin = robot.model, robot.pin
    q = m.random_configuration(seed)
    ref = pin.computeMinverse(robot.pm, robot.pd, robot.q_to_pin(q))
    ref = robot.matrix_from_pin(np.triu(ref) + np.triu(ref, 1).T)
    assert_close(rbd_ros.minv(m, q), ref, 1e-9, "minv")
    assert_close(rbd_ros.minv(m, q) @ rbd_ros.crba(m, q), np.eye(m.nv), 1e-9, "M⁻¹ M")


def test_a_scaled_direction_is_the_same_configuration(robot):
    """(cos θ, sin θ) is normalized, as a free flyer's quaternion is (a sensor's rounding)."""
    m = robot.model
    q, v, a, tau, _ = robot.random_state(5)
    scaled = np.array(q)
    scaled[2:4] *= 1.7
    for f, args in ((rbd_ros.rnea, (v, a)), (rbd_ros.aba, (v, tau)), (rbd_ros.minv, ())):
        assert_close(f(m, scaled, *args), f(m, q, *args), 1e-11, f.__name__)   # rounding


def test_a_zero_direction_is_refused(robot):
    q = robot.model.neutral()
    q[2:4] = 0.0
    with pytest.raises(ValueError, match=r"rnea: q has a zero base direction .*q\[2:4\]"):
        rbd_ros.rnea(robot.model, q, np.zeros(robot.model.nv), np.zeros(robot.model.nv))


@pytest.mark.parametrize("change, message", [
    (lambda t: t.replace('<axis xyz="0 0 1"/>\n  </joint>', '<axis xyz="1 0 0"/>\n  </joint>', 1),
     "axis"),
    (lambda t: t.replace('<axis xyz="0 0 1"/>\n  </joint>', '<axis xyz="0 0 -1"/>\n  </joint>',
                         1), "axis"),
    (lambda t: t.replace('type="planar"', 'type="fixed"').replace(
        'type="revolute"', 'type="planar"', 1), "only the root link"),
])
def test_a_planar_joint_the_model_cannot_have_is_refused(change, message):
    with pytest.raises(URDFError, match=message):
        rbd_ros.load_model(change(_text()), allow_massless=True)


@pytest.mark.pinocchio
def test_a_planar_origin_places_the_plane_as_pinocchio_does(tmp_path):
    """The joint's <origin> is the plane's frame (a base on the floor at wheel height)."""
    text = _text().replace('<child link="base"/>', '<child link="base"/>\n    '
                           '<origin xyz="0.1 -0.2 0.3" rpy="0.2 -0.1 0.3"/>', 1)
    path = tmp_path / "raised.urdf"
    path.write_text(text, encoding="utf-8")
    raised = Robot("raised", str(path), floating=False)
    m, pin, pm, pd = raised.model, raised.pin, raised.pm, raised.pd
    for seed in range(3):
        q, v, a, tau, _ = raised.random_state(seed)
        qp, vp = raised.q_to_pin(q), raised.v_to_pin(v)
        assert_close(rbd_ros.rnea(m, q, v, a), raised.v_from_pin(
            pin.rnea(pm, pd, qp, vp, raised.v_to_pin(a))), 1e-10, "rnea")
        assert_close(rbd_ros.aba(m, q, v, tau), raised.v_from_pin(
            pin.aba(pm, pd, qp, vp, raised.v_to_pin(tau))), 1e-10, "aba")
    assert not np.array_equal(m.packed, rbd_ros.load_model(PATH).packed)


def test_no_axis_is_the_xy_plane():
    """Read a planar joint without <axis> (URDF's default) in the x-y plane, as Pinocchio does."""
    text = _text().replace('\n    <axis xyz="0 0 1"/>\n  </joint>', '\n  </joint>', 1)
    assert text != _text()
    model = rbd_ros.load_model(text)
    np.testing.assert_array_equal(model.packed, rbd_ros.load_model(PATH).packed)


def test_floating_base_on_a_planar_joint_is_refused():
    with pytest.raises(URDFError, match="already floats"):
        rbd_ros.load_model(PATH, floating_base=True)


def test_the_rows_of_v_are_named_by_the_base_s_motions(robot):
    names = outputs.dof_names(robot.model)
    assert names[:4] == ("base_vx", "base_vy", "base_wz", robot.model.joint_names[0])
    assert len(names) == robot.model.nv
    free = get_robot("quadruped").model
    assert outputs.dof_names(free)[:6] == outputs.BASE_DOF_NAMES


def test_the_node_and_the_replay_refuse_a_planar_base(robot):
    """Their base state is a free flyer's, from odometry: a planar base is refused by name."""
    from rbd_ros.replay import ReplayError
    from rbd_ros.replay.fleet_tasks import cached_model
    with pytest.raises(ValueError, match="3-dof base .*planar"):
        outputs.check_base(robot.model)
    with pytest.raises(ReplayError, match="cannot load the URDF: .*3-dof base"):
        cached_model(_text(), False, "error")         # the fleet's workers
    free = get_robot("quadruped").model
    assert outputs.check_base(free) is free
    fixed = get_robot("arm7").model
    assert outputs.check_base(fixed) is fixed


def _below_the_root(pin, monkeypatch):
    """
    Return a revolute root, a planar joint below it, and two revolute joints below that.

    Built twice from the same numbers (``random_chain``): an rbd_ros ``Model`` from its arrays
    (the root-only rule lifted: the kernels' multi-dof path below the root, which no URDF
    reaches yet, the model lacking per-joint names for it) and a Pinocchio model.
    """
    from rbd_ros.model import model_tables
    from rbd_ros.model.joints import REVOLUTE
    monkeypatch.setattr(model_tables, "ROOT_ONLY", np.zeros_like(model_tables.ROOT_ONLY))
    joints = [(REVOLUTE, (0.0, 0.0, 1.0), pin.JointModelRZ()),
              (PLANAR, (0.0, 0.0, 0.0), pin.JointModelPlanar()),
              (REVOLUTE, (1.0, 0.0, 0.0), pin.JointModelRX()),
              (REVOLUTE, (0.0, 1.0, 0.0), pin.JointModelRY())]
    model, pm = random_chain(pin, [-1, 0, 1, 1], joints,
                             ["j0", "plane_x", "plane_y", "plane_theta", "j2", "j3"])
    assert (model.nq, model.nv, model.floating_base) == (pm.nq, pm.nv, False) == (7, 6, False)
    return model, pm


@pytest.mark.pinocchio
@pytest.mark.parametrize("seed", range(3))
def test_a_planar_joint_below_the_root_in_the_kernels(pin, monkeypatch, seed):
    """Check the algorithms through a multi-dof joint with a parent against Pinocchio's."""
    model, pm = _below_the_root(pin, monkeypatch)
    pd = pm.createData()
    rng = np.random.default_rng(seed)
    theta = rng.uniform(-np.pi, np.pi)        # q: j0, the planar joint's x, y, cos θ, sin θ, j2, j3
    q = np.concatenate([rng.uniform(-1, 1, 3), [np.cos(theta), np.sin(theta)],
                        rng.uniform(-1, 1, 2)])
    v, a, tau = (rng.normal(size=pm.nv) for _ in range(3))
    fext = rng.normal(size=(model.nbodies, 6))
    forces = [pin.Force.Zero()] + [pin.Force(f) for f in fext]
    assert_close(rbd_ros.rnea(model, q, v, a, fext), pin.rnea(pm, pd, q, v, a, forces), 1e-10,
                 "rnea")
    assert_close(rbd_ros.aba(model, q, v, tau, fext), pin.aba(pm, pd, q, v, tau, forces), 1e-10,
                 "aba")
    Minv = pin.computeMinverse(pm, pd, q)
    assert_close(rbd_ros.minv(model, q), np.triu(Minv) + np.triu(Minv, 1).T, 1e-10, "minv")
    M = pin.crba(pm, pd, q)
    assert_close(rbd_ros.crba(model, q), np.triu(M) + np.triu(M, 1).T, 1e-10, "crba")
    ours = rbd_ros.rnea_derivatives(model, q, v, a)
    pin.computeRNEADerivatives(pm, pd, q, v, a)
    for got, ref, what in zip(ours, (pd.dtau_dq, pd.dtau_dv), ("dtau_dq", "dtau_dv")):
        assert_close(got, ref, 1e-9, what)
    ours = rbd_ros.aba_derivatives(model, q, v, tau)
    pin.computeABADerivatives(pm, pd, q, v, tau)
    for got, ref, what in zip(ours, (pd.ddq_dq, pd.ddq_dv), ("ddq_dq", "ddq_dv")):
        assert_close(got, ref, 1e-9, what)
    ours = rbd_ros.compute_all(model, q, v, a=a, tau=tau)
    assert_close(ours.qdd, pin.aba(pm, pd, q, v, tau), 1e-10, "compute_all qdd")
    assert_close(ours.Minv, np.triu(Minv) + np.triu(Minv, 1).T, 1e-10, "compute_all Minv")
    assert_close(ours.tau, pin.rnea(pm, pd, q, v, a), 1e-10, "compute_all tau")


def test_mimic_joints_on_a_planar_base_are_the_reduced_system():
    """A coupled model's M and τ are Gᵀ M G and Gᵀ τ of the independent tree (base rows first)."""
    text = _text().replace('<axis xyz="1 0 0"/>\n    <limit lower="-2.0" upper="2.0" effort="20" '
                           'velocity="4"/>\n  </joint>\n  <link name="b3_link">',
                           '<axis xyz="1 0 0"/>\n    <limit lower="-2.0" upper="2.0" effort="20" '
                           'velocity="4"/>\n    <mimic joint="b2" multiplier="-0.5" offset="0.1"/>'
                           '\n  </joint>\n  <link name="b3_link">', 1)
    assert "<mimic" in text
    coupled = rbd_ros.load_model(text)
    full = rbd_ros.load_model(text, mimic="independent")
    c = coupled.coupling
    assert c.base == (4, 3) and (coupled.nq, coupled.nv) == (full.nq - 1, full.nv - 1)
    assert (c.nq_full, c.nv_full) == (full.nq, full.nv)
    rng = np.random.default_rng(4)
    q = coupled.random_configuration(rng)
    v, a = rng.normal(size=coupled.nv), rng.normal(size=coupled.nv)
    qf = c.expand(q)
    np.testing.assert_allclose(qf[:4], q[:4])                 # the base's entries as they are
    G = c.G
    assert_close(rbd_ros.crba(coupled, q), G.T @ rbd_ros.crba(full, qf) @ G, 1e-12, "M_r")
    assert_close(rbd_ros.rnea(coupled, q, v, a), G.T @ rbd_ros.rnea(full, qf, G @ v, G @ a),
                 1e-12, "τ_r")
