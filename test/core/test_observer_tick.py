"""
The node's observer tick in one compiled call (``MomentumObserver.step_isolating``).

It must give, sample for sample, what the two calls it replaces give: ``step_bound`` then
``ObserverOutcomes.stepped`` (r bit for bit, the flags, the wrench or its refusal, the
collision state, the counts, the newest stamp) and raise the same exceptions with the same
texts, the state then left as they leave it. The samples are a simulated contact on arm7
(``contact_sim``: Pinocchio's ABA integrated, an independent oracle of the r they give), with
the hostile ones the node meets put in.
"""
import numpy as np
import pytest

from rbd_ros.contact import detection as contact
from rbd_ros.contact import observer_rule
from rbd_ros.contact.isolation import CollisionState
from rbd_ros.contact.tick_kernel import SIZES_DIFFER, observer_tick_kernel
from contact_sim import K, ON, simulated_contact
from oracle import Robot

THRESHOLD = 2.0          # N·m: the contact on link7 crosses it on some dofs, not on others


def _pair(model, frame="link7", max_gap=0.05):
    """Return an observer bound to arrays of its own, and the outcomes its ticks go to."""
    observer = contact.MomentumObserver(model, K, max_gap=max_gap, frame=frame)
    arrays = np.empty(model.nq), np.empty(model.nv), np.empty(model.nv)
    observer.bind(*arrays)
    return observer, observer_rule.ObserverOutcomes(model, THRESHOLD), arrays


def _two_calls(observer, outcomes, t):
    r = observer.step_bound(t)
    return r, outcomes.stepped(r, observer.tracking)


def _one_call(observer, outcomes, t):
    r, n = observer.step_isolating(t, outcomes.collision)
    return r, outcomes.isolated(n, observer.tracking)


def _tick(pair, step, t, q, v, tau):
    """Step one sample; return (r copy, changed) or (exception type, text)."""
    observer, outcomes, arrays = pair
    for array, value in zip(arrays, (q, v, tau)):
        array[:] = value
    try:
        r, changed = step(observer, outcomes, t)
    except (contact.SampleSkipped, ValueError) as exc:
        code = getattr(exc, "status", observer_rule.REFUSED_CODE)
        outcomes.unobserved(code)
        return type(exc), str(exc)
    return r.copy(), changed


def _observable(pair):
    observer, outcomes, _ = pair
    wrench = None if observer.wrench is None else observer.wrench.tolist()
    return (observer.state.tolist(), observer.newest, observer.restarted, observer.tracking,
            wrench, observer.wrench_refusal, outcomes.collision.state,
            outcomes.collision.isolation, outcomes.collision.reason, dict(outcomes.counts))


def _samples(run):
    """Return the run's samples to 0.4 s into the contact, the node's hostile ones put in."""
    end = int(np.searchsorted(run.t, ON + 0.4))
    events = [(run.t[k], run.q[k], run.v[k], run.tau[k]) for k in range(end)]
    at = end // 2
    t, q, v, tau = events[at]
    nan_tau, huge_tau = tau.copy(), np.full_like(tau, 1e200)
    nan_tau[3] = np.nan
    hostile = [(t, q, v, tau),                        # the same stamp again: skipped
               (t - 1e-4, q, v, tau),                 # late: skipped
               (t + 1e-4, q, v, nan_tau),             # refused (tau), state unchanged
               (np.inf, q, v, tau),                   # refused (t)
               (t - 1.0, q, v, tau)]                  # a clock set back past max_gap: restart
    # three samples on from there (the third an estimate again), then one that overflows
    hostile += [(t - 1.0 + j * 1e-3, *events[at + j][1:]) for j in (1, 2, 3)]
    hostile.append((t - 1.0 + 4e-3, q, v, huge_tau))
    return events[:at + 1] + hostile + [(t + 1.0 + e[0], *e[1:]) for e in events[at + 4:]]


def test_one_compiled_tick_gives_what_the_two_calls_give():
    robot, run, _ = simulated_contact("arm7", "link7", (6.0, 0.0, 8.0))
    m = robot.model
    two, one = _pair(m), _pair(m)
    seen, restarts = set(), 0
    for k, sample in enumerate(_samples(run)):
        if k == 400:                    # new thresholds and a frame without a 6-d wrench
            for observer, outcomes, _ in (two, one):
                outcomes.collision.thresholds = np.linspace(1.0, 4.0, m.nv)
                observer.set_frame("link4")
        expected, got = _tick(two, _two_calls, *sample), _tick(one, _one_call, *sample)
        if isinstance(expected[0], np.ndarray):
            np.testing.assert_array_equal(got[0], expected[0])
            assert got[1] == expected[1]
            seen.add("changed" if got[1] else "stepped")
            restarts += one[0].restarted
        else:
            assert got == expected
            seen.add(expected[1][:40])
        assert _observable(one) == _observable(two), k
    assert seen == {"changed", "stepped", "the stamp (0.35 s) is not after the newe",
                    "the stamp (0.3499 s) is not after the ne",
                    "MomentumObserver.step: tau contains NaN ",
                    "MomentumObserver.step: t contains NaN or",
                    "the observer's state would overflow (|r|"}
    assert restarts == 3              # the first sample, the clock set back, the jump after
    counts = one[1].counts
    assert counts["stamp_not_after"] == 2 and counts["overflow_resets"] == 1
    assert counts["refused"] == 2
    assert one[1].collision.state[0]                  # in collision at the end
    assert one[0].wrench is None and "6 independent directions" in one[0].wrench_refusal


def test_isolation_arrays_of_another_size_are_refused_before_any_step():
    robot, run, _ = simulated_contact("arm7", "link7", (6.0, 0.0, 8.0))
    observer, outcomes, arrays = _pair(robot.model)
    for array, value in zip(arrays, (run.q[0], run.v[0], run.tau[0])):
        array[:] = value
    observer.step_isolating(run.t[0], outcomes.collision)
    state, newest = observer.state.copy(), observer.newest
    other = CollisionState(Robot("ur5").model, 1.0)           # 6 dofs against arm7's 7
    with pytest.raises(ValueError, match="not the model's sizes"):
        observer.step_isolating(run.t[1], other)
    np.testing.assert_array_equal(observer.state, state)
    assert observer.newest == newest
    arguments = list(observer.kernel.isolating_arguments(outcomes.collision.kernel_arrays))
    t_two = np.full(2, run.t[1])                          # two samples' stamps: one is read
    assert observer_tick_kernel(*arguments[:9], t_two, *arguments[10:]) == SIZES_DIFFER
    np.testing.assert_array_equal(observer.state, state)


def test_step_isolating_needs_bind():
    robot = Robot("arm7")
    observer = contact.MomentumObserver(robot.model, K)
    with pytest.raises(RuntimeError, match="before bind"):
        observer.step_isolating(0.0, CollisionState(robot.model, 1.0))
