"""
The frame Jacobian and the contact wrench's least squares, against Pinocchio and identities.

J (``rbd_ros.algorithms.frame_jacobian``) against Pinocchio's computeFrameJacobian /
getFrameJacobian (LOCAL) on the named robots (floating bases included) and every corpus robot
both load; Jᵀ w against the measured-wrench path (g − RNEA(q, 0, 0, fext of w)); J_r = J G on
a coupled mimic robot; the contact wrench against numpy's least squares.
"""
import numpy as np
import pytest

import rbd_ros
from helpers import SEEDS, assert_close
from rbd_ros.contact import detection as contact, measured_wrenches as wrench
from rbd_ros.algorithms.calls import frame_jacobian
from corpus_cases import coupled_model, movable_pinocchio_robots

TOL = 1e-10


def _links(model, count=4):
    """Return a few links of the model: its last ones (the distal) and its first moving one."""
    links = [k for k, (body, _, _) in model.link_frames.items() if body >= 0]
    return links[-count:] + links[:1]


def _pin_jacobian(robot, q, link):
    pin = robot.pin
    pm, pd = robot.pm, robot.pd
    frame = pm.getFrameId(link, pin.BODY)          # the link's frame (a joint may share its name)
    J = pin.computeFrameJacobian(pm, pd, robot.q_to_pin(q), frame, pin.LOCAL)
    pin.computeJointJacobians(pm, pd, robot.q_to_pin(q))
    pin.updateFramePlacements(pm, pd)
    assert_close(pin.getFrameJacobian(pm, pd, frame, pin.LOCAL), J, 1e-12,
                 f"pinocchio's two calls at {link}")
    return np.asarray(J).reshape(6, -1)[:, robot.perm_v]


@pytest.mark.pinocchio
@pytest.mark.parametrize("seed", SEEDS[:3])
def test_equals_pinocchio(robot, seed):
    m = robot.model
    q = robot.random_state(seed)[0]
    for link in _links(m):
        assert robot.pm.existFrame(link, robot.pin.BODY), link
        J = frame_jacobian(m, q, link)
        assert J.shape == (6, m.nv)
        assert_close(J, _pin_jacobian(robot, q, link), TOL, f"J {robot.name} {link}")


@pytest.mark.pinocchio
@pytest.mark.parametrize("floating", [False, True], ids=["fixed", "floating"])
def test_corpus_equals_pinocchio(pin, floating):
    """Every corpus robot both load: J of its distal links equals Pinocchio's."""
    compared = 0
    for name, robot in movable_pinocchio_robots(floating):
        m = robot.model
        q = robot.random_state(0)[0]
        for link in _links(m, 2):
            if not robot.pm.existFrame(link, pin.BODY):
                continue
            assert_close(frame_jacobian(m, q, link), _pin_jacobian(robot, q, link), TOL,
                         f"J {name} {link}")
            compared += 1
    assert compared >= 40, compared


def test_transpose_is_the_measured_wrench_path(robot):
    """Jᵀ w = g − RNEA(q, 0, 0, fext(w on the link)): the torques a wrench there takes."""
    m = robot.model
    q = robot.random_state(1)[0]
    zeros = np.zeros(m.nv)
    g = rbd_ros.rnea(m, q, zeros, zeros)
    w = np.array([1.0, -2.0, 0.5, 0.3, 0.7, -0.4])
    for link in _links(m, 2):
        ref = g - rbd_ros.rnea(m, q, zeros, zeros, wrench.fext(m, q, [(link, "link", w)]))
        assert_close(frame_jacobian(m, q, link).T @ w, ref, 1e-10, f"Jᵀ w {link}")


def test_coupled_mimic_is_j_g():
    for floating in (False, True):
        m, independent = coupled_model(floating)
        rng = np.random.default_rng(5)
        q = m.random_configuration(rng)
        for link in _links(m, 3):
            ref = frame_jacobian(independent, m.coupling.expand(q), link) @ m.coupling.G
            assert_close(frame_jacobian(m, q, link), ref, 1e-12, f"J_r {link}")


def test_out_data_and_refusals(robot):
    m = robot.model
    q = robot.random_state(2)[0]
    link = _links(m, 1)[0]
    J = frame_jacobian(m, q, link)
    out = np.empty((6, m.nv))
    assert frame_jacobian(m, list(q), link, out=out, data=rbd_ros.Data(m)) is out
    np.testing.assert_array_equal(out, J)
    with pytest.raises(ValueError, match="out"):
        frame_jacobian(m, q, link, out=np.empty((6, m.nv + 1)))
    with pytest.raises(ValueError, match="no link"):
        frame_jacobian(m, q, "no_such_link")
    bad = q.copy()
    bad[-1] = np.inf
    with pytest.raises(ValueError, match="q"):
        frame_jacobian(m, bad, link)
    with pytest.raises(ValueError, match="q"):
        frame_jacobian(m, q[:-1], link)


@pytest.mark.parametrize("name", ["arm7", "talos", "hyq"])
def test_contact_wrench_is_the_least_squares(name):
    """F̂ = (Jᵀ)⁺ r: numpy's lstsq on Jᵀ, and the exact wrench back from r = Jᵀ F."""
    from helpers import get_robot
    robot = get_robot(name)
    m = robot.model
    rng = np.random.default_rng(6)
    q = robot.random_state(3)[0]
    link = _links(m, 1)[0]
    J = frame_jacobian(m, q, link)
    F = rng.normal(size=6)
    np.testing.assert_allclose(contact.contact_wrench(m, q, J.T @ F, link), F, atol=1e-9)
    r = rng.normal(size=m.nv)
    ref = np.linalg.lstsq(J.T, r, rcond=None)[0]
    np.testing.assert_allclose(contact.contact_wrench(m, q, r, link), ref, atol=1e-9)
    # the observer computes the same wrench in its own call
    observer = contact.MomentumObserver(m, 50.0, frame=link)
    t = np.arange(3) * 1e-3
    qs, vs = np.array([q] * 3), np.zeros((3, m.nv))
    taus = rng.normal(size=(3, m.nv))
    rs, _, status, ws, ranks = observer.run_with_wrench(t, qs, vs, taus)
    assert (status == 0).all() and (ranks == 6).all()
    for k in range(3):
        np.testing.assert_array_equal(ws[k], contact.contact_wrench(m, q, rs[k], link))
