"""
The node's observer tick in one compiled call (``rbd_ros.contact.observer_tick.step``).

It must give, sample for sample, what the two calls it replaces give: ``step_bound`` then
``ObserverOutcomes.stepped`` (r bit for bit, the flags, the wrench or its refusal, the
collision state, the counts, the newest stamp) and raise the same exceptions with the same
texts, the state then left as they leave it. The two-call path is the one checked against
Pinocchio and a simulated contact in ``test_contact.py``; here both run over such a contact on
arm7 (``contact_sim``), with the hostile samples the node meets put in, for each setting the
node has (a contact frame or none, a max_gap or none).
"""
import numpy as np
import pytest

from rbd_ros.contact import detection as contact
from rbd_ros.contact import observer_rule, observer_tick
from rbd_ros.contact.isolation import CollisionState
from contact_sim import K, ON, simulated_contact
from oracle import Robot

THRESHOLD = 2.0          # N·m: the contact on link7 crosses it on some dofs, not on others
CHANGE_AT = 400          # the sample before which the thresholds (and frame) change
# what a sample without r is, by the start of its exception's text
KINDS = {"skipped": "the stamp (", "refused tau": "MomentumObserver.step: tau contains NaN",
         "refused t": "MomentumObserver.step: t contains NaN",
         "overflow": "the observer's state would overflow"}


def _pair(model, frame, max_gap):
    """Return an observer bound to arrays of its own, after a run and a reset, as the node's."""
    observer = contact.MomentumObserver(model, K, max_gap=max_gap, frame=frame)
    zeros = np.zeros((1, model.nv))
    observer.run(np.zeros(1), model.neutral()[None], zeros, zeros)
    observer.reset()
    arrays = np.empty(model.nq), np.empty(model.nv), np.empty(model.nv)
    observer.bind(*arrays)
    return observer, observer_rule.ObserverOutcomes(model, THRESHOLD), arrays


def _two_calls(observer, outcomes, t):
    r = observer.step_bound(t)
    return r, outcomes.stepped(r, observer.tracking)


def _tick(pair, step, t, q, v, tau):
    """Step one sample; return (r copy, changed) or (exception type, text)."""
    observer, outcomes, arrays = pair
    for array, value in zip(arrays, (q, v, tau)):
        array[:] = value
    try:
        r, changed = step(observer, t, outcomes) if step is observer_tick.step \
            else step(observer, outcomes, t)
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
               (t - 1.0, q, v, tau)]                  # a clock set back past max_gap
    # three samples on from there (the third an estimate again), then one that overflows
    hostile += [(t - 1.0 + j * 1e-3, *events[at + j][1:]) for j in (1, 2, 3)]
    hostile.append((t - 1.0 + 4e-3, q, v, huge_tau))
    return events[:at + 1] + hostile + [(t + 1.0 + e[0], *e[1:]) for e in events[at + 4:]]


@pytest.mark.parametrize("frame, max_gap", [("link7", 0.05), (None, np.inf)])
def test_one_compiled_tick_gives_what_the_two_calls_give(frame, max_gap):
    robot, run, _ = simulated_contact("arm7", "link7", (6.0, 0.0, 8.0))
    m = robot.model
    two, one = _pair(m, frame, max_gap), _pair(m, frame, max_gap)
    thresholds = np.linspace(1.0, 4.0, m.nv)
    seen, restarts, peaks = set(), 0, 0
    for k, sample in enumerate(_samples(run)):
        if k == CHANGE_AT:              # new thresholds, and a frame without a 6-d wrench
            for observer, outcomes, _ in (two, one):
                outcomes.collision.thresholds = thresholds
                if frame:
                    observer.set_frame("link4")
        expected, got = _tick(two, _two_calls, *sample), _tick(one, observer_tick.step, *sample)
        if isinstance(expected[0], np.ndarray):
            np.testing.assert_array_equal(got[0], expected[0])
            assert got[1] == expected[1]
            seen.add("changed" if got[1] else "stepped")
            restarts += one[0].restarted
            isolation = one[1].collision.isolation
            if k > CHANGE_AT and isolation.in_collision:   # the new thresholds, not 2.0
                assert isolation.peak_ratio == np.max(np.abs(got[0]) / thresholds)
                peaks += 1
        else:
            assert got == expected
            seen.add(next(kind for kind, start in KINDS.items()
                          if expected[1].startswith(start)))
        assert _observable(one) == _observable(two), k
    # without a max_gap the clock set back is skipped, its samples after it too, the one
    # that would overflow among them; with one it restarts (as does the sample after the
    # overflow, and the first)
    gap = np.isfinite(max_gap)
    assert seen == {"changed", "stepped", "skipped", "refused tau", "refused t"} | (
        {"overflow"} if gap else set())
    assert restarts == (3 if gap else 1) and peaks > 0
    counts = one[1].counts
    assert counts["stamp_not_after"] == (2 if gap else 7)
    assert counts["overflow_resets"] == (1 if gap else 0)
    assert counts["refused"] == 2 and one[1].collision.state[0]      # in collision at the end
    if frame:
        assert one[0].wrench is None and "6 independent directions" in one[0].wrench_refusal
    else:
        assert one[0].wrench is None and one[0].wrench_refusal is None


def test_a_link_welded_to_the_world_has_its_wrench_refused_at_every_step():
    """A frame on body -1 (fixed base): refused from its own rank, not a frame before's."""
    robot, run, _ = simulated_contact("arm7", "link7", (6.0, 0.0, 8.0))
    m = robot.model
    assert m.link_frames["base_link"][0] == -1
    two, one = _pair(m, "link7", 0.05), _pair(m, "link7", 0.05)
    k = int(np.searchsorted(run.t, ON + 0.2))
    for j in range(k + 3):
        if j == k:
            two[0].set_frame("base_link")
            one[0].set_frame("base_link")
        sample = (run.t[j], run.q[j], run.v[j], run.tau[j])
        np.testing.assert_array_equal(_tick(one, observer_tick.step, *sample)[0],
                                      _tick(two, _two_calls, *sample)[0])
        assert _observable(one) == _observable(two)
        if j < k:
            assert one[0].wrench_refusal is None and one[0].wrench is not None
    for observer, _, _ in (one, two):
        assert observer.wrench is None and "its chain gives 0" in observer.wrench_refusal


def test_isolation_arrays_of_another_size_are_refused_before_any_step():
    robot, run, _ = simulated_contact("arm7", "link7", (6.0, 0.0, 8.0))
    observer, outcomes, arrays = _pair(robot.model, "link7", np.inf)
    for array, value in zip(arrays, (run.q[0], run.v[0], run.tau[0])):
        array[:] = value
    observer_tick.step(observer, run.t[0], outcomes)
    state, newest = observer.state.copy(), observer.newest
    other = observer_rule.ObserverOutcomes(Robot("ur5").model, 1.0)   # 6 dofs, arm7 has 7
    with pytest.raises(ValueError, match="not the model's sizes"):
        observer_tick.step(observer, run.t[1], other)
    np.testing.assert_array_equal(observer.state, state)
    assert observer.newest == newest and other.counts["samples"] == 0
    arguments = list(observer.kernel.isolating_arguments(outcomes.collision.kernel_arrays))
    t_two = np.full(2, run.t[1])                          # two samples' stamps: one is read
    newest_two = np.full(2, newest)
    for at, bad in ((9, t_two), (27, newest_two)):
        given = arguments[:at] + [bad] + arguments[at + 1:]
        assert observer_tick.observer_tick_kernel(*given) == observer_tick.TICK_SIZES_DIFFER
    np.testing.assert_array_equal(observer.state, state)


def test_the_tick_needs_a_bound_observer_and_a_collision_state():
    robot = Robot("arm7")
    observer = contact.MomentumObserver(robot.model, K)
    outcomes = observer_rule.ObserverOutcomes(robot.model, 1.0)
    with pytest.raises(RuntimeError, match="before the observer's bind"):
        observer_tick.step(observer, 0.0, outcomes)
    observer.bind(np.zeros(robot.model.nq), np.zeros(robot.model.nv), np.zeros(robot.model.nv))
    outcomes.collision = type("Duck", (), {"kernel_arrays": outcomes.collision.kernel_arrays})()
    with pytest.raises(ValueError, match="CollisionState"):
        observer_tick.step(observer, 0.0, outcomes)
    assert isinstance(observer_rule.ObserverOutcomes(robot.model, 1.0).collision,
                      CollisionState)


def test_a_frame_that_does_not_fit_the_model_is_refused_by_both_paths_alike():
    """
    The kernel's frame test (TICK_FRAME_MISFIT): a frame row past the model's bodies.

    ``set_frame`` takes the model's own links only, so the row is put in the kernel's
    arrays directly, as a defect elsewhere could leave it; both paths raise the same
    ValueError and leave the same state.
    """
    robot, run, _ = simulated_contact("arm7", "link7", (6.0, 0.0, 8.0))
    m = robot.model
    two, one = _pair(m, "link7", 0.05), _pair(m, "link7", 0.05)
    for k in range(3):
        sample = (run.t[k], run.q[k], run.v[k], run.tau[k])
        _tick(two, _two_calls, *sample)
        _tick(one, observer_tick.step, *sample)
    for observer, _, _ in (two, one):
        observer.kernel.frame = (m.nbodies + 3, observer.kernel.frame[1])
        observer.kernel.prepare()
    sample = (run.t[3], run.q[3], run.v[3], run.tau[3])
    expected, got = _tick(two, _two_calls, *sample), _tick(one, observer_tick.step, *sample)
    assert got == expected == (ValueError, "the contact frame 'link7' does not fit the model")
    assert _observable(one) == _observable(two)
