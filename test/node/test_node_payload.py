"""
~/set_payload with real rclpy clients, against Pinocchio.

Outputs and services use the payload from the next tick on; Pinocchio has the payload added to
its body inertia.
"""
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from helpers import assert_close, random_payload  # noqa: E402
from node_helpers import SERVICES, joint_state, new_stamp  # noqa: E402
from node_cases import set_payload  # noqa: E402
from oracle import Robot  # noqa: E402


pytestmark = pytest.mark.pinocchio


def test_set_payload(harness, pin):
    robot = Robot("arm7")
    h = harness(dict(robot_description=robot.xml))
    m = robot.model
    names = list(m.joint_names)
    q, v, a, _, _ = robot.random_state(4)

    def torques_now():
        """~/torques and ~/inverse_dynamics at (q, v, 0) and (q, v, a)."""
        stamp = new_stamp()
        msg = joint_state(names, q, v, stamp=stamp)
        out = h.exchange(lambda: h.joint_states.publish(msg), stamp)["torques"]
        req = SERVICES["inverse_dynamics"].Request(joint_names=names, q=q.tolist(),
                                                   v=v.tolist(), a=a.tolist())
        resp = h.call("inverse_dynamics", req)
        assert resp.success, resp.message
        return np.array(out.effort), np.array(resp.tau)

    def pin_torques():
        pm = robot.pm
        pd = pm.createData()
        qp, vp = robot.q_to_pin(q), robot.v_to_pin(v)
        return (robot.v_from_pin(pin.rnea(pm, pd, qp, vp, np.zeros(pm.nv))),
                robot.v_from_pin(pin.rnea(pm, pd, qp, vp, robot.v_to_pin(a))))

    before = pin_torques()
    for got, ref in zip(torques_now(), before):
        assert_close(got, ref, 1e-9, "without payload")
    body = m.nbodies - 1
    mass, com, rot = random_payload(2)
    resp = set_payload(h, m.body_names[body], mass, com, rot)
    assert resp.success, resp.message
    assert list(resp.links) == [m.body_names[body]] and resp.masses[0] == pytest.approx(mass)
    jid = robot.body_joint[body]
    original = robot.pm.inertias[jid].copy()
    robot.pm.inertias[jid] = original + pin.Inertia(mass, com, rot)
    loaded = pin_torques()
    for got, ref in zip(torques_now(), loaded):
        assert_close(got, ref, 1e-9, "with payload")
    assert not np.allclose(loaded[1], before[1])
    # a gravity change keeps the payload
    assert h.set_parameters(gravity=[0.0, 0.0, -9.81])[0].successful
    for got, ref in zip(torques_now(), loaded):
        assert_close(got, ref, 1e-9, "with payload, after a parameter change")
    # mass 0 clears it
    resp = set_payload(h, m.body_names[body], 0.0)
    assert resp.success and list(resp.links) == []
    robot.pm.inertias[jid] = original
    for got, ref in zip(torques_now(), before):
        assert_close(got, ref, 1e-9, "cleared")


def test_bad_payloads(harness):
    robot = Robot("arm7")
    h = harness(dict(robot_description=robot.xml))
    link = robot.model.body_names[-1]
    for args, words in (((("no_such_link", 1.0)), ("no link", "no_such_link")),
                        ((link, -1.0), ("mass",)),
                        ((link, float("nan")), ("NaN",)),
                        ((link, 1.0, (0, 0, 0), -np.eye(3)), ("positive semi-definite",))):
        resp = set_payload(h, *args)
        assert not resp.success, args
        assert len(resp.message) < 400
        for word in words:
            assert word in resp.message, resp.message
    assert h.node.current_robot().payloads == {}


def test_payload_on_fixed_joint_link(harness, pin):
    """A payload on arm7's ``tool`` (welded to link7): Pinocchio with it on the frame's joint."""
    robot = Robot("arm7")
    m = robot.model
    assert "tool" in m.link_frames and "tool" not in m.body_names
    h = harness(dict(robot_description=robot.xml))
    mass, com, rot = random_payload(3)
    resp = set_payload(h, "tool", mass, com, rot)
    assert resp.success, resp.message
    assert list(resp.links) == ["tool"]
    frame = robot.pm.frames[robot.pm.getFrameId("tool", pin.BODY)]
    jid = frame.parentJoint
    robot.pm.inertias[jid] = robot.pm.inertias[jid] + frame.placement.act(
        pin.Inertia(mass, com, rot))
    q, v, a, _, _ = robot.random_state(5)
    req = SERVICES["inverse_dynamics"].Request(joint_names=list(m.joint_names), q=list(q),
                                               v=list(v), a=list(a))
    got = h.call("inverse_dynamics", req)
    assert got.success, got.message
    pd = robot.pm.createData()
    expected = pin.rnea(robot.pm, pd, robot.q_to_pin(q), robot.v_to_pin(v), robot.v_to_pin(a))
    assert_close(np.array(got.tau), robot.v_from_pin(expected), 1e-9, "tool payload")


def test_payload_that_overflows_the_dynamics_is_refused(harness):
    """A finite payload whose dynamics are not (1e308 kg): refused, counted, outputs go on."""
    robot = Robot("arm7")
    h = harness(dict(robot_description=robot.xml))
    m = robot.model
    names, link = list(m.joint_names), m.body_names[-1]
    root = "base_link"                      # welded to the world: a payload there moves nothing
    assert root in m.link_frames and m.link_frames[root][0] < 0
    for args, word in (((link, 1e308), "finite"),
                       ((link, 1e200, (1e100, 0.0, 0.0)), "finite"),
                       ((root, 2.0), "world")):
        before = h.node.stats()["requests_refused"]
        resp = set_payload(h, *args)
        assert not resp.success and word in resp.message and len(resp.message) < 400, \
            resp.message
        assert h.node.stats()["requests_refused"] == before + 1
    assert h.node.current_robot().payloads == {}
    q, v, _, _, _ = robot.random_state(6)
    stamp = new_stamp()
    msg = joint_state(names, q, v, stamp=stamp)
    out = h.exchange(lambda: h.joint_states.publish(msg), stamp)["torques"]
    assert np.all(np.isfinite(out.effort))
