"""
~/estimate_payload with real DDS: a payload simulated by Pinocchio, estimated by the node.

The test publishes 20 s of joint states of the arm carrying a 1.5 kg object on ``tool`` (its
centre of mass 4 cm off the flange axis; efforts by Pinocchio plus the joint parameters the
node is given, noise 0.05 N·m), asks for the payload with ``apply: true``, and checks the
estimate and that ~/torques then include it.
"""
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from builtin_interfaces.msg import Time  # noqa: E402
from rbd_ros_interfaces.srv import EstimatePayload  # noqa: E402

import rbd_ros  # noqa: E402
from node_helpers import call_service, joint_state, new_stamp  # noqa: E402
from pinocchio_oracles import (PAYLOAD_COM as COM, PAYLOAD_MASS as MASS,  # noqa: E402
                               simulate_payload_arm as simulate)

pytestmark = pytest.mark.pinocchio


def estimate(h, link, window, apply):
    client = h.tester.create_client(EstimatePayload, f"{h.namespace}/rbd_dynamics/"
                                    "estimate_payload")
    return call_service(client, EstimatePayload.Request(link=link, window=window, apply=apply),
                        "the estimate_payload response", 60.0)


def test_estimate_payload_service_applies_it(harness, pin, tmp_path):
    arm = rbd_ros.load_model(rbd_ros.robots.path("rbd_arm7"))
    q, v, _, tau, params = simulate(pin, arm, seconds=20.0, rate=50.0)
    path = tmp_path / "joints.json"
    path.write_text(params.to_json())
    with open(rbd_ros.robots.path("rbd_arm7")) as f:
        h = harness(dict(robot_description=f.read(), joint_parameters_file=str(path)))
    names = list(arm.joint_names)
    resp = estimate(h, "tool", 25.0, True)         # nothing kept yet: refused
    assert not resp.ok and "too few" in resp.message
    for k in range(len(q)):
        stamp = Time(sec=5000 + k // 50, nanosec=(k % 50) * 20_000_000)
        h.send_joint_states(joint_state(names, q[k], v[k], tau[k], stamp=stamp))
    resp = estimate(h, "tool", 1e-3, False)        # a 1 ms window: too few samples
    assert not resp.ok and "too few" in resp.message
    resp = estimate(h, "no_link", 25.0, False)
    assert not resp.ok and "no link" in resp.message
    for bad in (float("nan"), -1.0, float("inf")):
        resp = estimate(h, "tool", bad, True)
        assert not resp.ok and "window must be" in resp.message and len(resp.message) < 300
    assert h.node.current_robot().payloads == {}
    resp = estimate(h, "tool", 25.0, True)
    assert resp.ok, resp.message
    assert resp.samples >= 0.95 * len(q)
    values, stds = np.array(resp.parameters), np.array(resp.stds)
    assert values[0] == pytest.approx(MASS, rel=0.02)
    assert np.linalg.norm(values[1:4] - COM) < 5e-3
    assert np.all(stds > 0) and stds[0] < 0.02 * MASS
    assert list(h.node.current_robot().payloads) == ["tool"]
    # ~/torques now include it: the core's model with that payload (and the joint terms)
    from rbd_ros.model import inertia
    rot = np.array([[values[4], values[5], values[6]], [values[5], values[7], values[8]],
                    [values[6], values[8], values[9]]])
    loaded = arm.with_payload("tool", inertia.compact(values[0], values[1:4], rot))
    qs, vs = q[7], v[7]
    stamp = new_stamp()
    msg = joint_state(names, qs, vs, stamp=stamp)
    out = h.exchange(lambda: h.joint_states.publish(msg), stamp)["torques"]
    zero = np.zeros(arm.nv)
    want = rbd_ros.rnea(loaded, qs, vs, zero) + params.torques(vs[None], zero[None])[0]
    np.testing.assert_allclose(out.effort, want, atol=1e-9)
    unloaded = rbd_ros.rnea(arm, qs, vs, zero) + params.torques(vs[None], zero[None])[0]
    assert np.max(np.abs(np.array(out.effort) - unloaded)) > 0.5      # the payload's weight
