"""
The node's observer driver and the replay's follow one rule (``rbd_ros.contact.observer_rule``).

The node (``rbd_ros.node.contact``: ``ObserverTicks.observe`` stepping a ``ContactMonitor``
one tick at a time) and the replay (``rbd_ros.replay.observing.Observed``: one run of the
observer over the ticks, then the rule tick by tick) are fed the same ticks of a contact
simulated by Pinocchio (``contact_sim``: a force on link7 from ON to OFF), spoiled by repeated
stamps, ticks without efforts, a NaN position and an overflowing effort. The ~/collision
messages the replay writes are at the ticks where the node's collision state changes, and
say what the node's state says there; the counts agree, and are those the spoiling implies;
the collision starts just after ON and ends just after OFF.
"""
from types import SimpleNamespace

import numpy as np
import pytest

from rbd_ros import outputs
from rbd_ros.contact import observer_rule
from rbd_ros.node.contact import ContactMonitor, ObserverTicks
from rbd_ros.node.counters import Counters
from rbd_ros.node.skips import Skips
from rbd_ros.replay import bag_io
from rbd_ros.replay.observing import Observed
from contact_sim import K, OFF, ON, simulated_contact

pytestmark = pytest.mark.pinocchio

REPEATED = range(100, 110)          # stamps repeating the one before them
UNKNOWN = range(200, 205)           # no measured efforts
NON_FINITE = (250,)                 # a NaN position: refused
OVERFLOWING = (1050,)               # an effort of 1e200 N·m (after the contact): a reset
THRESHOLD = 0.5                     # N·m
FRAME = "link7"


def spoiled_ticks():
    """Return (model, ticks): the run's ticks as the replay holds them, spoiled."""
    robot, run, _ = simulated_contact("arm7", FRAME, (6.0, 0.0, 8.0))
    n = len(run.t)
    q, v, tau = run.q.copy(), run.v.copy(), run.tau.copy()
    nanoseconds = np.round(run.t * 1e9).astype(np.int64) + 1_700_000_000 * 10**9
    for k in REPEATED:
        nanoseconds[k] = nanoseconds[k - 1]
    known = np.ones(n, bool)
    known[list(UNKNOWN)] = False
    q[list(NON_FINITE), 0] = np.nan
    tau[list(OVERFLOWING), 0] = 1e200
    ticks = SimpleNamespace(sec=nanoseconds // 10**9, nanosec=nanoseconds % 10**9, q=q, v=v,
                            tau_in=tau, effort_known=known, index=np.arange(n), time=run.t)
    return robot.model, ticks


def node_states(model, t):
    """Run the node's driver over the ticks; return its collision fields after each, counts."""
    params = {"observer_gain": K, "collision_thresholds": THRESHOLD, "contact_frame": FRAME,
              "max_joint_age": 0.0, "publish_external_torques": False}
    import rclpy.logging
    skips = Skips(rclpy.logging.get_logger("test_observer_rule"), Counters(["skipped"]), params,
                  None)
    driver = ObserverTicks(params, skips, skips.logger, {})
    robot = SimpleNamespace(contact=ContactMonitor(model, None, params))
    names = outputs.dof_names(model)
    states = []
    for k in range(len(t.sec)):
        robot.q, robot.v, robot.tau = t.q[k], t.v[k], t.tau_in[k]
        driver.observe(robot, bool(t.effort_known[k]), (int(t.sec[k]), int(t.nanosec[k])), None)
        states.append(robot.contact.collision.message_fields(names))
    return states, robot.contact.counts


def replay_messages(model, t):
    """Run the replay's driver over the ticks; return {tick: ~/collision fields}, counts."""
    observed = Observed(model, t, None, observer_rule.ObserverSettings(K, THRESHOLD, FRAME),
                        ("external_torques", "collision", "contact_wrench"))
    observed.feed(np.zeros(len(t.sec), bool), len(t.sec))
    store = bag_io.typestore()
    messages = {}
    for tick, written in observed.by_message.items():
        if "collision" in written:
            msg = store.deserialize_cdr(written["collision"], outputs.COLLISION)
            stamp = (msg.header.stamp.sec, msg.header.stamp.nanosec)
            assert stamp == (t.sec[tick], t.nanosec[tick])
            messages[tick] = {"in_collision": msg.in_collision, "joints": list(msg.joints),
                              "isolated_link": msg.isolated_link,
                              "peak_ratio": msg.peak_ratio, "observing": msg.observing,
                              "reason": msg.reason}
    return messages, observed.outcomes.counts


def test_the_node_and_the_replay_drivers_give_the_same_collision_messages_and_counts():
    model, t = spoiled_ticks()
    states, node_counts = node_states(model, t)
    messages, replay_counts = replay_messages(model, t)
    key = ("in_collision", "isolated_link", "observing")      # what a change is a change of
    state = [(False, "", True)] + [tuple(s[x] for x in key) for s in states]
    changes = [k for k in range(len(states)) if state[k + 1] != state[k]]
    assert sorted(messages) == changes
    for k in changes:
        assert messages[k] == states[k], k
    assert node_counts == replay_counts
    n = len(t.sec)
    assert node_counts["samples"] == n
    assert node_counts["stamp_not_after"] == len(REPEATED)
    assert node_counts["efforts_unknown"] == len(UNKNOWN)
    assert node_counts["refused"] == len(NON_FINITE)
    assert node_counts["overflow_resets"] == len(OVERFLOWING)
    assert node_counts["blind"] == 0
    starts = [t.time[k] for k in changes if states[k]["in_collision"]
              and (k == 0 or not states[k - 1]["in_collision"])]
    ends = [t.time[k] for k in changes if not states[k]["in_collision"]
            and k and states[k - 1]["in_collision"]]
    assert ON <= starts[0] < ON + 0.05 and OFF <= ends[-1] < OFF + 0.1, (starts, ends)
    assert observer_rule.STEPPED == 0        # the replay hands the observer's status on
