"""
/diagnostics tells the truth of its last period (rbd_ros/node/health.py): no ROS here.

OK only while outputs of the current model are published; WARN while ticks are skipped
(with the dominant reason), inputs are stale or name no joint of the model, or the last
description was rejected while an older model runs on; ERROR when no model is loaded because
the description was rejected. ``test_node_diagnostics.py`` checks what the node publishes.
"""
import pytest

from rbd_ros.node.health import ERROR, LOST, OK, WARN, Health, LostMessages


class Periods:
    """A Health on a clock that a test advances one second per period."""

    def __init__(self):
        self.t = 0.0
        self.stats = dict(published=0, skipped=0, joint_states=0, no_model_joint=0,
                          **{LOST: 0})
        self.health = Health(lambda: self.t)

    def __call__(self, skips=None, model="arm", rejected="", outputs=True, **counts):
        """Add ``counts`` to the counters over one second; return the period's status."""
        self.t += 1.0
        for k, n in counts.items():
            self.stats[k] += n
        return self.health.assess(dict(self.stats), dict(skips or {}), model, rejected,
                                  outputs)


@pytest.fixture
def period():
    return Periods()


def test_ok_only_while_outputs_flow(period):
    level, message = period(joint_states=100, published=100)
    assert level == OK and "100 ticks published" in message
    level, message = period()                              # nothing since: stale input
    assert level == WARN and "no joint_states in the last 1.0 s" in message
    level, message = period(joint_states=50, no_model_joint=50)
    assert level == WARN and "name no joint of model 'arm'" in message


def test_skips_warn_with_the_dominant_reason(period):
    level, message = period({"stale": 30, "incomplete": 2}, joint_states=40, published=8,
                            skipped=32)
    assert level == WARN and "32 messages or ticks skipped" in message
    assert "mostly 'stale' (30)" in message
    level, _ = period({"stale": 30, "incomplete": 2}, joint_states=10, published=10)
    assert level == OK                                     # counted per period


def test_rejected_description(period):
    level, message = period(model=None, rejected="bad XML")
    assert level == ERROR and "rejected: bad XML" in message
    level, message = period(model=None)
    assert level == WARN and "waiting for robot_description" in message
    level, message = period(rejected="negative mass", joint_states=5, published=5)
    assert level == WARN and "running model 'arm'" in message and "negative mass" in message
    level, message = period(outputs=False)
    assert level == OK and "services only" in message


def test_lost_messages_warn_in_their_period(period):
    level, message = period(joint_states=990, published=990, **{LOST: 10})
    assert level == WARN and message.startswith("10 input messages lost in the last 1.0 s")
    assert "990 ticks published" in message            # what else happened, still said
    level, _ = period(joint_states=1000, published=1000)
    assert level == OK                                     # counted per period
    level, message = period({"stale": 3}, joint_states=10, published=7, skipped=3,
                            **{LOST: 2})
    assert level == WARN and "mostly 'stale' (3)" in message
    assert message.endswith("2 input messages lost in the last 1.0 s before the node")
    level, message = period(model=None, rejected="bad XML", **{LOST: 1})
    assert level == ERROR and "bad XML" in message and "1 input messages lost" in message


def test_lost_messages_keep_the_rmw_totals_per_topic():
    lost = LostMessages()
    assert lost.value() == 0
    assert lost.update("joint_states", 3) == 3
    assert lost.update("odom", 2) == 2
    assert lost.update("joint_states", 3) == 0          # an event repeated: nothing new
    assert lost.update("joint_states", 7) == 4
    assert lost.update("joint_states", 5) == 0          # never backwards
    assert lost.value() == 9
    lost.unsupported["odom"] = "message lost event is not supported"
    value = lost.value()
    assert isinstance(value, str) and value.startswith("not available (odom: ")
