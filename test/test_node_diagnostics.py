"""
The node's /diagnostics level and message, in the situations of issue 13.

No model (WARN), a rejected first description (ERROR, with the reason), outputs flowing (OK),
then a swap to a model whose joints the joint_states do not name: the node publishes
nothing and says so (WARN), where it said OK before. ``test_node_health.py`` covers every
rule of ``rbd_ros.node.health`` without ROS.
"""
import os
import random

os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
os.environ.setdefault("ROS_DOMAIN_ID", str(random.randint(101, 200)))

import pytest  # noqa: E402

pytest.importorskip("rclpy")
pytest.importorskip("rbd_ros_interfaces")
pytest.importorskip("nav_msgs")

from std_msgs.msg import String  # noqa: E402

from rbd_ros.node.health import ERROR, OK, WARN  # noqa: E402
from node_helpers import wait_for  # noqa: E402
from test_node import (ARM7, BRANCHED, MALFORMED, core_model, good_exchange,  # noqa: E402
                       harness, message, random_state, xml)

__all__ = ["harness"]                   # the fixture, imported for the tests below


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
    wait_for(lambda: h.node._robot.model.name == branched.name, what="the swap")
    seen = len(statuses(h))

    def warned():
        q, v, tau = random_state(arm, next(seeds))     # the old model's joints
        h.joint_states.publish(message(arm, q, v, tau))
        return any(level == WARN and "name no joint of model" in m
                   for level, m in statuses(h)[seen:])
    wait_for(warned, what="WARN: joint_states name no joint of the new model")
    assert all(level != OK for level, _ in statuses(h)[seen + 1:])
