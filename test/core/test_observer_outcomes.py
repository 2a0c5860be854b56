"""
The observer's tick rule (``rbd_ros.contact.ticks``), which the node and the replay share.

The node steps the observer one sample at a time and turns what it raises into a tick's
outcome; the replay runs it over the whole bag and reads each sample's status. Fed the same
ticks of a simulated contact (Pinocchio, ``contact_sim``) spoiled by repeated stamps, ticks
without efforts, a non-finite position and an overflowing effort, both ways give the same
~/collision changes, the same message fields at each and the same counts; the counts are
those the spoiling implies, and BLIND_AFTER ticks without r make it stop observing.
"""
import numpy as np
import pytest

from rbd_ros.contact import detection as contact
from rbd_ros.contact import ticks
from rbd_ros.contact.isolation import BLIND_AFTER, EFFORTS_UNKNOWN, STAMP_SKIPPED
from contact_sim import K, simulated_contact

pytestmark = pytest.mark.pinocchio

N = 600
REPEATED = range(100, 110)          # stamps repeating the one before them
UNKNOWN = range(200, 205)           # no measured efforts
NON_FINITE = (300,)                 # a NaN position: refused
OVERFLOWING = (400,)                # an effort of 1e200 N·m: the observer resets


def spoiled_run():
    robot, run, _ = simulated_contact("arm7", "link7", (6.0, 0.0, 8.0))
    t, q, v, tau = (x[:N].copy() for x in (run.t, run.q, run.v, run.tau))
    for k in REPEATED:
        t[k] = t[k - 1]
    known = np.ones(N, bool)
    known[list(UNKNOWN)] = False
    q[list(NON_FINITE), 0] = np.nan
    tau[list(OVERFLOWING), 0] = 1e200
    return robot.model, t, q, v, tau, known


def settings(model):
    return ticks.ObserverSettings(K, 0.5, "link7", 0.0)


def node_way(model, t, q, v, tau, known):
    """Each tick as the node's ObserverTicks.observe: step, or the code of what it raised."""
    observer = ticks.new_observer(model, None, settings(model))
    outcomes = ticks.ObserverOutcomes(model, settings(model).collision_thresholds)
    seen = []
    for k in range(N):
        if not known[k]:
            changed = outcomes.unobserved(ticks.EFFORTS_UNKNOWN_CODE)
        else:
            try:
                r = observer.step(t[k], q[k], v[k], tau[k])
            except contact.SampleSkipped as exc:
                changed = outcomes.unobserved(exc.status)
            except ValueError:
                changed = outcomes.unobserved(ticks.REFUSED_CODE)
            else:
                changed = outcomes.stepped(r, observer.tracking)
        seen.append((changed, outcomes.collision.message_fields(list(model.joint_names))))
    return seen, outcomes.counts


def replay_way(model, t, q, v, tau, known):
    """Feed the ticks as the replay's Observed.feed does: one run, then the rule."""
    observer = ticks.new_observer(model, None, settings(model))
    outcomes = ticks.ObserverOutcomes(model, settings(model).collision_thresholds)
    rows = np.flatnonzero(known)
    r, _, status, _, _ = observer.run_with_wrench(t[rows], q[rows], v[rows], tau[rows])
    code = np.full(N, ticks.EFFORTS_UNKNOWN_CODE)
    code[rows] = status
    estimate = dict(zip(rows.tolist(), zip(r, observer.tracking)))
    seen = []
    for k in range(N):
        changed = outcomes.outcome(int(code[k]), *estimate.get(k, ()) if code[k] == 0 else ())
        seen.append((changed, outcomes.collision.message_fields(list(model.joint_names))))
    return seen, outcomes.counts


def test_the_node_and_the_replay_ways_give_the_same_messages_and_counts():
    run = spoiled_run()
    node, node_counts = node_way(*run)
    replay, replay_counts = replay_way(*run)
    assert [c for c, _ in node] == [c for c, _ in replay]
    for k, ((changed, a), (_, b)) in enumerate(zip(node, replay)):
        assert a == b, k              # the same kernel's numbers: equal, not close
    assert node_counts == replay_counts
    assert node_counts["samples"] == N
    assert node_counts["stamp_not_after"] == len(REPEATED)
    assert node_counts["efforts_unknown"] == len(UNKNOWN)
    assert node_counts["refused"] == len(NON_FINITE)
    assert node_counts["overflow_resets"] == len(OVERFLOWING)
    assert node_counts["blind"] == 0
    # the contact (ON..OFF of the simulation) is seen: ~/collision changed at least twice
    assert sum(c for c, _ in node) >= 2 and any(f["in_collision"] for c, f in node if c)


def test_blind_after_so_many_ticks_without_r_and_the_reason_is_the_last():
    m = spoiled_run()[0]
    outcomes = ticks.ObserverOutcomes(m, 0.5)
    r = np.zeros(m.nv)
    assert not outcomes.stepped(r, True)
    for k in range(BLIND_AFTER - 1):
        assert not outcomes.unobserved(ticks.EFFORTS_UNKNOWN_CODE), k
    assert outcomes.collision.observing
    assert outcomes.unobserved(contact.STAMP_NOT_AFTER)        # the 50th: it cannot observe
    fields = outcomes.collision.message_fields(list(m.joint_names))
    assert not fields["observing"] and fields["reason"] == STAMP_SKIPPED
    assert outcomes.counts["blind"] == 1
    assert not outcomes.unobserved(ticks.EFFORTS_UNKNOWN_CODE)
    assert outcomes.collision.reason == EFFORTS_UNKNOWN and outcomes.counts["blind"] == 2
    assert outcomes.stepped(r, True)                            # an estimate: observing again
    assert outcomes.counts == {"samples": BLIND_AFTER + 3, "tracked": 2, "blind": 2,
                               "efforts_unknown": BLIND_AFTER, "stamp_not_after": 1,
                               "overflow_resets": 0, "refused": 0}


@pytest.mark.parametrize("name, value, words", [
    ("observer_gain", 0.0, "observer_gain must be finite and > 0"),
    ("collision_thresholds", [1.0, 2.0], "collision_thresholds must be one number or one per"),
    ("contact_frame", "no_such_link", "contact_frame 'no_such_link' is not a link"),
])
def test_a_setting_that_does_not_fit_is_refused_by_its_name(name, value, words):
    m = spoiled_run()[0]
    good = dict(observer_gain=K, collision_thresholds=0.5, contact_frame="link7")
    assert ticks.settings_problem(m, name, good[name]) is None
    assert words in ticks.settings_problem(m, name, value)
    with pytest.raises(ValueError, match=words):
        ticks.new_observer(m, None, ticks.ObserverSettings(**dict(good, **{name: value})))
    with pytest.raises(AttributeError):         # frozen: options are not run state
        ticks.ObserverSettings(**good).observer_gain = 1.0
