"""
Model.with_payload: a rigid payload merged into a body, against Pinocchio.

Pinocchio has the payload added to its body inertia (a pin.Inertia sum).
"""
import numpy as np
import pytest

import rbd_ros
from helpers import assert_close, random_payload
from oracle import Robot


@pytest.mark.pinocchio
@pytest.mark.parametrize("name", ["arm7", "quadruped", "panda"])
def test_payload_matches_pinocchio(pin, name):
    robot = Robot(name)                    # our own copy: its Pinocchio model is changed here
    m = robot.model
    mass, com, rot = random_payload(1)
    for body in (m.nbodies - 1, m.nbodies // 2):
        link = m.body_names[body]
        m = m.with_payload(link, rbd_ros.model.inertia.compact(mass, com, rot))
        jid = robot.body_joint[body]
        robot.pm.inertias[jid] = robot.pm.inertias[jid] + pin.Inertia(mass, com, rot)
    assert m is not robot.model and m.nbodies == robot.model.nbodies
    pm, pd = robot.pm, robot.pm.createData()
    for seed in range(3):
        q, v, a, tau, _ = robot.random_state(seed)
        qp, vp = robot.q_to_pin(q), robot.v_to_pin(v)
        assert_close(rbd_ros.rnea(m, q, v, a),
                     robot.v_from_pin(pin.rnea(pm, pd, qp, vp, robot.v_to_pin(a))), 1e-10,
                     "rnea")
        assert_close(rbd_ros.aba(m, q, v, tau),
                     robot.v_from_pin(pin.aba(pm, pd, qp, vp, robot.v_to_pin(tau))), 1e-9,
                     "aba")
        M = pin.crba(pm, pd, qp)
        M = np.triu(M) + np.triu(M, 1).T
        assert_close(rbd_ros.crba(m, q), robot.matrix_from_pin(M), 1e-10, "crba")
    # the original model is unchanged (immutable): its torques differ from the loaded one's
    q, v, a, _, _ = robot.random_state(9)
    assert not np.allclose(rbd_ros.rnea(robot.model, q, v, a), rbd_ros.rnea(m, q, v, a))


def test_payload_refusals():
    m = rbd_ros.load_model(rbd_ros.robots.path("rbd_arm7"))
    good = rbd_ros.model.inertia.compact(1.0, np.zeros(3), np.eye(3) * 0.01)
    link = m.body_names[-1]
    for args, words in (((("no_such_link", good)), "no link"),
                        ((link, good[:5]), "10 numbers"),
                        ((link, rbd_ros.model.inertia.compact(-1.0, np.zeros(3), np.eye(3))),
                         "negative mass"),
                        ((link, rbd_ros.model.inertia.compact(1.0, np.zeros(3), -np.eye(3))),
                         "positive semi-definite"),
                        ((link, np.full(10, np.nan)), "non-finite")):
        with pytest.raises(ValueError, match=words):
            m.with_payload(*args)
