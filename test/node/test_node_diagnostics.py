"""
The node's /diagnostics level and message, in the situations of issue 13.

No model (WARN), a rejected first description (ERROR, with the reason), outputs flowing (OK),
then a swap to a model whose joints the joint_states do not name: the node publishes
nothing and says so (WARN), where it said OK before. ``test_node_health.py`` covers every
rule of ``rbd_ros.node.health`` without ROS.
"""
from std_msgs.msg import String  # noqa: E402

from rclpy.event_handler import QoSSubscriptionEventType  # noqa: E402

from rbd_ros.node.health import ERROR, LOST, OK, WARN  # noqa: E402
from node_helpers import wait_for  # noqa: E402
from node_cases import (ARM7, BRANCHED, MALFORMED, QUADRUPED, core_model,  # noqa: E402
                        diagnostics_values, good_exchange, message, random_state, xml)


def statuses(h):
    """Return (level, message) of each /diagnostics status of the node received so far."""
    return [(s.level[0] if isinstance(s.level, bytes) else s.level, s.message)
            for arr in h.messages("diagnostics") for s in arr.status
            if s.name.endswith("rbd_dynamics: dynamics")]


def test_diagnostics_follow_the_model_and_its_outputs(harness):
    h = harness(dict(diagnostics_period=0.2))
    wait_for(lambda: (WARN, "no robot model yet (waiting for robot_description)")
             in statuses(h), what="WARN without a model")
    h.description.publish(String(data=xml(MALFORMED)))
    wait_for(lambda: any(level == ERROR and "rejected" in m for level, m in statuses(h)),
             what="ERROR for the rejected description")
    arm = core_model(ARM7)
    h.description.publish(String(data=xml(ARM7)))
    seeds = iter(range(400, 600))

    def ok():
        good_exchange(h, arm, next(seeds))
        return statuses(h)[-1][0] == OK
    wait_for(ok, timeout=30.0, what="OK while outputs flow")
    branched = core_model(BRANCHED)
    h.description.publish(String(data=xml(BRANCHED)))
    wait_for(lambda: h.node.current_robot().model.name == branched.name, what="the swap")
    seen = len(statuses(h))

    def warned():
        q, v, tau = random_state(arm, next(seeds))     # the old model's joints
        h.joint_states.publish(message(arm, q, v, tau))
        return any(level == WARN and "name no joint of model" in m
                   for level, m in statuses(h)[seen:])
    wait_for(warned, what="WARN: joint_states name no joint of the new model")
    assert all(level != OK for level, _ in statuses(h)[seen + 1:])


def test_messages_lost_before_the_node_are_counted(harness):
    """
    The best-effort inputs carry rclpy's message-lost event; what it reports shows.

    A real loss on loopback cannot be caused on demand (Fast DDS reports gaps in a
    publisher's sequence numbers, dropped by a full transport buffer): the RMW's report is
    fed to the node's handler directly, the hookup and /diagnostics are the real ones.
    """
    h = harness(dict(diagnostics_period=0.2, floating_base=True,
                     robot_description=xml(QUADRUPED)))
    lost_event = QoSSubscriptionEventType.RCL_SUBSCRIPTION_MESSAGE_LOST
    hooked = {s.topic_name.rsplit("/", 1)[-1] for s in h.node.subscriptions
              if any(e.event_type == lost_event for e in s.event_handlers)}
    assert hooked == {"joint_states", "odom"}
    wait_for(lambda: diagnostics_values(h).get(LOST) == "0",
             what="a count of 0 lost messages (the RMW supports the event)")
    h.node._on_message_lost("joint_states", 4)
    h.node._on_message_lost("odom", 1)
    h.node._on_message_lost("joint_states", 4)             # the same total again
    wait_for(lambda: diagnostics_values(h).get(LOST) == "5", what="5 lost messages")
    assert any(level == WARN and "5 input messages lost" in m for level, m in statuses(h))
    h.wait_log("4 joint_states messages lost before reaching the node")
