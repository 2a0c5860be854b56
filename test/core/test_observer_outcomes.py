"""
The observer's tick rule (``rbd_ros.contact.observer_rule``) on outcomes given by hand.

Each outcome is counted under its own name and, without r, makes ~/collision give the reason
the manual names for it (``rbd_ros.contact.isolation``'s texts); an r that is not an estimate
(a restart) is counted as a sample, not as tracked; BLIND_AFTER ticks without r in a row make
the observer unable to observe, the next estimate able again. The settings are refused by
name. The node's and the replay's drivers of the rule are compared with each other in
``test/replay/test_observer_rule.py``.
"""
import numpy as np
import pytest

from rbd_ros.contact import detection, observer_rule
from rbd_ros.contact.isolation import (BLIND_AFTER, EFFORTS_UNKNOWN, OVERFLOWED, REFUSED,
                                       STAMP_SKIPPED)
from helpers import get_robot

ZEROS = {"samples": 0, "tracked": 0, "blind": 0, "efforts_unknown": 0, "stamp_not_after": 0,
         "overflow_resets": 0, "refused": 0}


@pytest.fixture(scope="module")
def arm7():
    return get_robot("arm7").model


@pytest.mark.parametrize("code, key, reason", [
    (observer_rule.EFFORTS_UNKNOWN_CODE, "efforts_unknown", EFFORTS_UNKNOWN),
    (detection.STAMP_NOT_AFTER, "stamp_not_after", STAMP_SKIPPED),
    (detection.OVERFLOW, "overflow_resets", OVERFLOWED),
    (observer_rule.REFUSED_CODE, "refused", REFUSED),
    (5, "refused", REFUSED),                       # a status of the core's input checks
])
def test_each_tick_without_r_is_counted_and_named(arm7, code, key, reason):
    outcomes = observer_rule.ObserverOutcomes(arm7, 0.5)
    for k in range(BLIND_AFTER - 1):
        assert not outcomes.outcome(code), k                   # still observing: no change
    assert outcomes.collision.observing
    assert outcomes.outcome(code)                              # the last one: it cannot
    fields = outcomes.collision.message_fields([f"d{j}" for j in range(arm7.nv)])
    assert not fields["observing"] and fields["reason"] == reason
    assert outcomes.counts == dict(ZEROS, samples=BLIND_AFTER, blind=1, **{key: BLIND_AFTER})


def test_a_restart_is_a_sample_not_tracked_and_an_estimate_observes_again(arm7):
    outcomes = observer_rule.ObserverOutcomes(arm7, 0.5)
    r = np.zeros(arm7.nv)
    for _ in range(BLIND_AFTER):
        outcomes.unobserved(detection.STAMP_NOT_AFTER)
    assert not outcomes.collision.observing
    assert not outcomes.stepped(r, False)       # a restart's sample: still blind, no change
    assert outcomes.collision.reason == STAMP_SKIPPED          # the restart keeps the reason
    assert outcomes.stepped(r, True)                           # an estimate: observing again
    assert outcomes.collision.observing and outcomes.collision.reason == ""
    assert outcomes.counts == dict(ZEROS, samples=BLIND_AFTER + 2, tracked=1,
                                   blind=2, stamp_not_after=BLIND_AFTER)   # the 50th, the restart


def test_an_r_over_its_threshold_is_a_collision_on_the_right_link(arm7):
    outcomes = observer_rule.ObserverOutcomes(arm7, 0.5)
    r = np.zeros(arm7.nv)
    assert not outcomes.stepped(r, True)
    r[3] = 2.0                                   # dof 3 over 0.5: link of the 4th joint's child
    assert outcomes.stepped(r, True)
    assert outcomes.collision.state[:2] == (True, arm7.body_names[3])
    assert outcomes.collision.isolation.peak_ratio == pytest.approx(4.0)
    assert not outcomes.stepped(r * 1.1, True)   # the same state: no message
    assert outcomes.counts == dict(ZEROS, samples=3, tracked=3)


@pytest.mark.parametrize("name, value, words", [
    ("observer_gain", 0.0, "observer_gain must be finite and > 0"),
    ("collision_thresholds", [1.0, 2.0], "collision_thresholds must be one number or one per"),
    ("contact_frame", "no_such_link", "contact_frame 'no_such_link' is not a link"),
])
def test_a_setting_that_does_not_fit_is_refused_by_its_name(arm7, name, value, words):
    good = dict(observer_gain=50.0, collision_thresholds=0.5, contact_frame="link7")
    assert observer_rule.settings_problem(arm7, name, good[name]) is None
    assert words in observer_rule.settings_problem(arm7, name, value)
    with pytest.raises(ValueError, match=words):
        observer_rule.new_observer(arm7, None,
                                   observer_rule.ObserverSettings(**dict(good, **{name: value})))
    with pytest.raises(AttributeError):         # frozen: options are not run state
        observer_rule.ObserverSettings(**good).observer_gain = 1.0
