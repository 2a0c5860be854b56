"""
A URDF ``floating`` joint: the free flyer read from the description, against Pinocchio.

Pinocchio's URDF parser loads a ``floating`` joint as a free flyer (JointModelFreeFlyer);
rbd_ros reads it where its model can have one, as the root link's only joint
(``load_model``'s docstring). Every algorithm is checked against Pinocchio on a robot hung
from a massless world link by such a joint, and the model is the one ``floating_base=True``
builds from the same robot without the world link.
"""
import os
import re

import numpy as np
import pytest

import rbd_ros
from helpers import SEEDS, assert_close
from oracle import URDF_DIR, Robot
from rbd_ros.description.urdf_reader import URDFError

PATH = os.path.join(URDF_DIR, "floating_joint.urdf")
TOL = 1e-10


@pytest.fixture(scope="module")
def robot():
    return Robot("floating_joint", PATH, floating=False)


def _text():
    with open(PATH, encoding="utf-8") as f:
        return f.read()


def _without_world(text):
    """Return the same robot rooted at its base: no world link, no floating joint."""
    text = re.sub(r'\s*<link name="world"/>', "", text)
    return re.sub(r'\s*<joint name="base_free" type="floating">.*?</joint>', "", text, flags=re.S)


def test_the_floating_joint_is_the_free_flyer_of_floating_base():
    model = rbd_ros.load_model(PATH)
    same = rbd_ros.load_model(_without_world(_text()), floating_base=True)
    assert model.floating_base and (model.nq, model.nv) == (same.nq, same.nv)
    assert model.joint_names == same.joint_names
    assert np.array_equal(model.packed, same.packed)
    assert model.link_frames["world"][0] == -1
    np.testing.assert_array_equal(model.neutral(), same.neutral())


@pytest.mark.pinocchio
def test_pinocchio_reads_the_same_free_flyer(robot):
    pin, pm = robot.pin, robot.pm
    assert pm.joints[1].shortname() == "JointModelFreeFlyer"
    continuous = _text().count('type="continuous"')                  # Pinocchio: cos, sin
    assert continuous and (pm.nq, pm.nv) == (robot.model.nq + continuous, robot.model.nv)
    np.testing.assert_allclose(robot.q_to_pin(robot.model.neutral()), pin.neutral(pm))


@pytest.mark.pinocchio
@pytest.mark.parametrize("seed", SEEDS)
def test_rnea_crba_aba_minv_match_pinocchio(robot, seed):
    m, pin, pm, pd = robot.model, robot.pin, robot.pm, robot.pd
    q, v, a, tau, fext = robot.random_state(seed)
    qp, vp, ap, tp = robot.q_to_pin(q), robot.v_to_pin(v), robot.v_to_pin(a), robot.v_to_pin(tau)
    fp = robot.fext_to_pin(fext)
    assert_close(rbd_ros.rnea(m, q, v, a, fext), robot.v_from_pin(pin.rnea(pm, pd, qp, vp, ap, fp)),
                 TOL, "rnea")
    M = robot.matrix_from_pin(pin.crba(pm, pd, qp))
    assert_close(rbd_ros.crba(m, q), np.triu(M) + np.triu(M, 1).T, TOL, "crba")
    assert_close(rbd_ros.aba(m, q, v, tau, fext),
                 robot.v_from_pin(pin.aba(pm, pd, qp, vp, tp, fp)), TOL, "aba")
    Minv = robot.matrix_from_pin(pin.computeMinverse(pm, pd, qp))
    assert_close(rbd_ros.minv(m, q), np.triu(Minv) + np.triu(Minv, 1).T, 1e-9, "minv")


@pytest.mark.pinocchio
@pytest.mark.parametrize("seed", SEEDS[:3])
def test_derivatives_match_pinocchio(robot, seed):
    m, pin, pm, pd = robot.model, robot.pin, robot.pm, robot.pd
    q, v, a, tau, _ = robot.random_state(seed)
    qp, vp = robot.q_to_pin(q), robot.v_to_pin(v)
    ours = rbd_ros.rnea_derivatives(m, q, v, a)
    pin.computeRNEADerivatives(pm, pd, qp, vp, robot.v_to_pin(a))
    for got, ref, what in zip(ours, (pd.dtau_dq, pd.dtau_dv), ("dtau_dq", "dtau_dv")):
        assert_close(got, robot.matrix_from_pin(ref), 1e-9, what)
    ours = rbd_ros.aba_derivatives(m, q, v, tau)
    pin.computeABADerivatives(pm, pd, qp, vp, robot.v_to_pin(tau))
    for got, ref, what in zip(ours, (pd.ddq_dq, pd.ddq_dv), ("ddq_dq", "ddq_dv")):
        assert_close(got, robot.matrix_from_pin(ref), 1e-8, what)


@pytest.mark.parametrize("change, message", [
    (lambda t: t.replace('<link name="world"/>', '<link name="world"/>\n  <joint name="extra" '
                         'type="fixed"><parent link="world"/><child link="ghost"/></joint>\n'
                         '  <link name="ghost"/>'), "only joint"),
    (lambda t: t.replace('<child link="base"/>', '<child link="base"/>\n    <origin xyz="0 0 1"/>',
                         1), "identity"),
    (lambda t: t.replace('type="floating"', 'type="revolute"').replace(
        'type="continuous"', 'type="floating"', 1), "only the root link"),
])
def test_a_floating_joint_where_the_model_cannot_have_it_is_refused(change, message):
    with pytest.raises(URDFError, match=message):
        rbd_ros.load_model(change(_text()), allow_massless=True)


def test_floating_base_on_a_floating_joint_is_refused():
    with pytest.raises(URDFError, match="already floats"):
        rbd_ros.load_model(PATH, floating_base=True)
