"""
Measured wrenches (``wrench_topics``) with real rclpy publishers, against Pinocchio.

~/torques and ~/accelerations with WrenchStamped inputs in a link's frame (a fixed-joint
link: arm7's ``tool``) and in the world frame, against pin.rnea / pin.aba with the forces
moved to their joints by Pinocchio (``pinocchio_oracles.pin_fext``); the tick waits for every
input and skips while one is stale; malformed wrenches (NaN, a wrong frame) are refused and
counted; bad parameters and unknown links are refused with a clear reason.
"""
import time

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from geometry_msgs.msg import WrenchStamped  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402

from helpers import assert_close  # noqa: E402
from node_helpers import RELIABLE, joint_state, new_stamp, wait_for  # noqa: E402
from oracle import Robot  # noqa: E402
from rbd_ros.node.dynamics_node import DynamicsNode  # noqa: E402
from rbd_ros.node.wrenches import parse_wrench_topics  # noqa: E402
from pinocchio_oracles import pin_fext  # noqa: E402


INPUTS = ["ft_tool:tool", "contact_world:link4"]


def wrench_msg(frame, values):
    msg = WrenchStamped()
    msg.header.frame_id = frame
    msg.header.stamp = new_stamp()
    f, t = msg.wrench.force, msg.wrench.torque
    f.x, f.y, f.z, t.x, t.y, t.z = (float(x) for x in values)
    return msg


class Wrenches:
    """The tester's WrenchStamped publishers, one per input of ``INPUTS``."""

    def __init__(self, h, inputs=INPUTS):
        self.h = h
        self.pubs = {}
        for entry in inputs:
            topic = entry.split(":")[0]
            self.pubs[topic] = h.tester.create_publisher(WrenchStamped, topic, RELIABLE)
        wait_for(lambda: all(p.get_subscription_count() > 0 for p in self.pubs.values()),
                 what="discovery of the wrench inputs")

    def send(self, topic, msg, counter="received"):
        """
        Publish ``msg`` on ``topic`` until the node has counted it (``counter``).

        Return how many times it was published: on a loaded machine a copy published while
        the node was still taking the previous one is counted too, so the node may count
        up to that many.
        """
        node = self.h.node
        before = node.wrench_inputs()[topic].counts[counter]
        deadline = time.monotonic() + 10.0
        published = 0
        while node.wrench_inputs()[topic].counts[counter] == before:
            assert time.monotonic() < deadline, f"the node never took the wrench on {topic}"
            self.pubs[topic].publish(msg)
            published += 1
            time.sleep(0.02)
        return published


@pytest.mark.pinocchio
def test_wrenches_enter_torques_and_accelerations(harness, pin):
    robot = Robot("arm7")
    m = robot.model
    h = harness(dict(robot_description=robot.xml, wrench_topics=INPUTS,
                     diagnostics_period=0.2))
    w = Wrenches(h)
    q, v, _, tau, _ = robot.random_state(3)
    names = list(m.joint_names)
    # no wrench yet: nothing is published, the reason is counted
    stamp = new_stamp()
    h.send_joint_states(joint_state(names, q, v, tau, stamp=stamp))
    wait_for(lambda: h.node.skips().counts.get("no wrench", 0) > 0, what="a 'no wrench' skip")
    assert h.no_output(stamp)
    rng = np.random.default_rng(0)
    tool, world = rng.normal(scale=5.0, size=6), rng.normal(scale=5.0, size=6)
    w.send("ft_tool", wrench_msg("tool", tool))
    w.send("contact_world", wrench_msg("world", world))
    stamp = new_stamp()
    msg = joint_state(names, q, v, tau, stamp=stamp)
    found = h.exchange(lambda: h.joint_states.publish(msg), stamp,
                       topics=("torques", "accelerations"))
    qp, vp = robot.q_to_pin(q), robot.v_to_pin(v)
    fp = pin_fext(robot, qp, [("tool", "link", tool), ("link4", "world", world)])
    expected = pin.rnea(robot.pm, robot.pd, qp, vp, np.zeros(m.nv), fp)
    assert_close(np.array(found["torques"].effort), robot.v_from_pin(expected), 1e-9,
                 "torques with wrenches")
    expected = pin.aba(robot.pm, robot.pd, qp, vp, robot.v_to_pin(tau), fp)
    assert_close(np.array(found["accelerations"].data), robot.v_from_pin(expected), 1e-9,
                 "accelerations with wrenches")
    without = pin.rnea(robot.pm, robot.pd, qp, vp, np.zeros(m.nv))
    assert not np.allclose(found["torques"].effort, robot.v_from_pin(without))
    # malformed wrenches are refused and counted; the last valid one stays in use
    refused = h.node.stats()["wrenches_refused"]
    sent = w.send("ft_tool", wrench_msg("tool", [np.nan, 0, 0, 0, 0, 0]), "refused")
    other_frame = wrench_msg("some_other_frame", np.ones(6))
    deadline = time.monotonic() + 10.0
    while "some_other_frame" not in h.node.wrench_inputs()["ft_tool"].last_refusal:
        assert time.monotonic() < deadline, "the wrench in another frame was never refused"
        w.pubs["ft_tool"].publish(other_frame)
        sent += 1
        time.sleep(0.02)
    # every copy the node took is counted once (on a loaded machine, more than one of each)
    assert refused + 2 <= h.node.stats()["wrenches_refused"] <= refused + sent
    stamp = new_stamp()
    msg = joint_state(names, q, v, tau, stamp=stamp)
    found = h.exchange(lambda: h.joint_states.publish(msg), stamp)
    expected = pin.rnea(robot.pm, robot.pd, qp, vp, np.zeros(m.nv), fp)
    assert_close(np.array(found["torques"].effort), robot.v_from_pin(expected), 1e-9,
                 "torques after refused wrenches")
    # /diagnostics shows each input

    def diagnosed():
        refusals = h.node.wrench_inputs()["ft_tool"].counts["refused"]  # 2 or more (see send)
        for d in reversed(h.messages("diagnostics")):
            for s in d.status:
                values = {kv.key: kv.value for kv in s.values}
                key = "wrench ft_tool (tool)"
                if key in values and f"refused {refusals}," in values[key]:
                    return values
        return None
    values = wait_for(diagnosed, what="the wrench inputs in /diagnostics")
    assert "some_other_frame" in values["wrench ft_tool (tool)"]
    assert "received" in values["wrench contact_world (link4)"]


@pytest.mark.pinocchio
def test_stale_wrench_skips_the_tick(harness, pin):
    robot = Robot("arm7")
    m = robot.model
    names = list(m.joint_names)
    h = harness(dict(robot_description=robot.xml, wrench_topics=INPUTS[:1],
                     max_joint_age=0.3))
    w = Wrenches(h, INPUTS[:1])
    q, v, _, tau, _ = robot.random_state(1)
    qp, vp = robot.q_to_pin(q), robot.v_to_pin(v)

    def torques_with(tool):
        expected = pin.rnea(robot.pm, robot.pd, qp, vp, np.zeros(m.nv),
                            pin_fext(robot, qp, [("tool", "link", tool)]))
        return robot.v_from_pin(expected)
    first, second = np.ones(6), np.array([3.0, -2.0, 0.5, 0.1, -0.4, 0.2])
    w.send("ft_tool", wrench_msg("tool", first))
    stamp = new_stamp()
    msg = joint_state(names, q, v, tau, stamp=stamp)
    found = h.exchange(lambda: h.joint_states.publish(msg), stamp)     # fresh: published
    assert_close(np.array(found["torques"].effort), torques_with(first), 1e-9, "fresh wrench")
    wait_for(lambda: time.monotonic() - max(w.received for w in h.node.wrench_inputs().values())
             > 0.3 + 0.05, what="the wrench to go stale")    # the node's clock of its latest
    stale = new_stamp()
    skips = h.node.skips().counts.get("stale wrench", 0)
    h.joint_states.publish(joint_state(names, q, v, tau, stamp=stale))   # once (reliable)
    wait_for(lambda: h.node.skips().counts.get("stale wrench", 0) > skips, what="a stale skip")
    assert "ft_tool" in h.node.skips().last
    # a fresh wrench: published again, with its value
    w.send("ft_tool", wrench_msg("tool", second))
    stamp = new_stamp()
    msg = joint_state(names, q, v, tau, stamp=stamp)
    found = h.exchange(lambda: h.joint_states.publish(msg), stamp)
    assert_close(np.array(found["torques"].effort), torques_with(second), 1e-9, "new wrench")
    # outputs arrive in order: had the stale message been published, it would be here by now
    assert h.no_output(stale)


@pytest.mark.parametrize("entries, words", [
    (["no_colon"], "TOPIC:LINK"),
    (["/a:tool", "/a:link4"], "twice"),
    (["/bad topic:tool"], "not a valid ROS name"),
    ([":tool"], "TOPIC:LINK"),
    (["/a:"], "TOPIC:LINK"),
])
def test_bad_wrench_topics_are_refused(entries, words):
    with pytest.raises(ValueError, match=words):
        parse_wrench_topics(entries)


def test_bad_wrench_topics_parameter_stops_the_node_at_start():
    import rclpy
    from rclpy.context import Context
    ctx = Context()
    rclpy.init(context=ctx)
    try:
        with pytest.raises(ValueError, match="TOPIC:LINK"):
            DynamicsNode(context=ctx, namespace="/rbd_wrench_bad_param",
                         parameter_overrides=[Parameter("wrench_topics",
                                                        value=["no_colon"])])
    finally:
        rclpy.shutdown(context=ctx)


def test_unknown_wrench_link_rejects_the_description(harness):
    robot = Robot("arm7")
    h = harness(dict(robot_description=robot.xml, wrench_topics=["/ft:no_such_link"]))
    assert h.node.current_robot() is None
    why = h.node.waiting_for_model()          # "the last robot description was rejected: ..."
    assert "no_such_link" in why and "wrench_topics" in why


def test_wrench_cdr_decoder_matches_rclpy():
    from rclpy.serialization import serialize_message
    from rbd_ros.formats import cdr
    for frame in ("", "tool", "a_much_longer_frame_name_x"):
        msg = wrench_msg(frame, [1.5, -2, 3, 4e-3, -5e9, 6])
        raw = serialize_message(msg)
        stamp, frame_id, values = cdr.decode_wrench_stamped(raw)
        assert stamp == (msg.header.stamp.sec, msg.header.stamp.nanosec)
        assert frame_id == frame
        assert values.tolist() == [1.5, -2, 3, 4e-3, -5e9, 6]
        for cut in (3, 10, len(raw) - 1):
            with pytest.raises(ValueError):
                cdr.decode_wrench_stamped(raw[:cut]) if cut > 4 else \
                    cdr.decode_wrench_stamped(b"\0\1\0\0" + raw[4:cut])
