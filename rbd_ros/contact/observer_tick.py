"""
The node's observer tick in one compiled call: admit the stamp, step, bound r, isolate.

A tick of the node steps the momentum observer over one sample (``momentum_observer_kernel``)
and checks its r against the collision thresholds (``isolation_kernel``). Between those two
compiled calls ran the Python of the rules around them: the stamp admitted once, r and the
contact wrench bounded, the flags read back (``samples``), the isolation's arguments tested.
Each is cheap with warm caches, but the node's ticks come 1 ms apart with DDS's work between
them, so each tick found those Python objects out of the caches, one miss after another
(doc/benchmarks.md, "The node against its messaging floor"). :func:`observer_tick_kernel`
makes the same rules' decisions (``momentum_observer``'s ``stamp_admitted`` and
``within_limit``) in one call and returns one code; :func:`step` turns that code into the
results and exceptions of ``MomentumObserver.step_bound`` followed by
``ObserverOutcomes.stepped``.
"""
from .._jit import (f64_1d, f64_1d_ro, f64_2d, f64_2d_ro, f64_3d, helper, i64_1d, i64_1d_ro,
                    int64, kernel)
from ..algorithms.contact_wrench import wrench_solved
from ..algorithms.entries import first_entry
from ..algorithms.momentum_observer import (S_STARTED, momentum_observer_kernel,
                                            stamp_admitted, within_limit)
from . import samples
from .isolation import CollisionState, isolation_kernel

# a tick's code below 0: why it gave no r (the sample's status says which input was refused)
(TICK_FRAME_MISFIT, TICK_STAMP_SKIPPED, TICK_REFUSED, TICK_OVERFLOW,
 TICK_SIZES_DIFFER) = -1, -2, -3, -4, -5
# a stepped tick's code: these flags, and the isolation's number of dofs over their threshold
# shifted by N_SHIFT
RESTARTED, TRACKING, WRENCH_SOLVED = 1, 2, 4
N_SHIFT = 3


@helper
def sizes_fit(joint, epsilon_gain_gap, t, q, v, tau, fext, r, wrench, wrench_rank, restarted,
              status, thresholds, depths, over, peak, newest):
    """
    Whether the arrays hold one sample each, its results one row, the isolation r's size.

    Tested before anything is written: ``momentum_observer_kernel`` tests each sample's
    rows, not their number, and ``isolation_kernel`` would refuse its sizes only after the
    step.
    """
    nv = joint.shape[1]
    one = (t.shape[0] == 1 and q.shape[0] == 1 and v.shape[0] == 1 and tau.shape[0] == 1
           and fext.shape[0] == 1 and r.shape[0] == 1 and r.shape[1] == nv
           and restarted.shape[0] == 1 and status.shape[0] == 1 and newest.shape[0] == 1
           and epsilon_gain_gap.shape[0] >= 2)
    isolating = (thresholds.shape[0] == nv and depths.shape[0] == nv
                 and over.shape[0] >= nv + 1 and peak.shape[0] >= 1)
    return (one and isolating and wrench.shape[0] == wrench_rank.shape[0]
            and wrench.shape[0] <= 1)


@kernel(int64(f64_2d_ro, f64_2d_ro, f64_2d, f64_1d, f64_2d, f64_2d, f64_1d, f64_1d, f64_1d,
              f64_1d, f64_2d, f64_2d, f64_2d, f64_3d, int64, f64_1d, f64_2d, f64_2d, f64_2d,
              f64_2d, i64_1d, i64_1d, i64_1d, f64_1d_ro, i64_1d_ro, i64_1d, f64_1d, f64_1d))
def observer_tick_kernel(packed, table, ws, qf, VF, joint, epsilon_gain_gap, state, scratch_v,
                         t, q, v, tau, fext, frame_body, frame_placement, J, A, r, wrench,
                         wrench_rank, restarted, status, thresholds, depths, over, peak,
                         newest):
    """
    Step the observer over one sample and isolate its r; return the tick's code.

    The arguments up to ``status``: ``momentum_observer_kernel``'s, one sample each (rows of
    one); then ``isolation_kernel``'s but r (``thresholds``, ``depths``, ``over``, ``peak``)
    and ``newest`` (1,), the newest stamp stepped. The code, tested in this order:

    - TICK_SIZES_DIFFER: arrays of other sizes than one sample's, or isolation arrays not
      r's sizes; nothing is written;
    - TICK_STAMP_SKIPPED: a stamp ``stamp_admitted`` does not admit; nothing is written;
    - TICK_FRAME_MISFIT: the contact frame does not fit the model;
    - TICK_REFUSED: the kernel refused the sample (``status[0]`` says why);
    - TICK_OVERFLOW: an |r_j| or contact wrench entry over R_LIMIT, or not finite
      (``newest`` is the stamp; the caller resets the state).

    Else RESTARTED, TRACKING (r an estimate) and WRENCH_SOLVED (a contact wrench had) or'ed,
    plus the number of dofs over their threshold shifted by N_SHIFT (``over``, ``peak``:
    ``isolation_kernel``'s, whose size test :func:`sizes_fit` made).
    """
    if not sizes_fit(joint, epsilon_gain_gap, t, q, v, tau, fext, r, wrench, wrench_rank,
                     restarted, status, thresholds, depths, over, peak, newest):
        return TICK_SIZES_DIFFER
    if not stamp_admitted(t[0], newest[0], epsilon_gain_gap[1]):
        return TICK_STAMP_SKIPPED
    if momentum_observer_kernel(packed, table, ws, qf, VF, joint, epsilon_gain_gap, state,
                                scratch_v, t, q, v, tau, fext, frame_body, frame_placement,
                                J, A, r, wrench, wrench_rank, restarted, status) < 0:
        return TICK_FRAME_MISFIT
    if status[0]:
        return TICK_REFUSED
    newest[0] = t[0]
    with_wrench = wrench.shape[0] == 1
    if not within_limit(r[0]) or (with_wrench and not within_limit(wrench[0])):
        return TICK_OVERFLOW
    n = isolation_kernel(r[0], thresholds, depths, over, peak)
    solved = with_wrench and wrench_solved(wrench_rank[0])
    return ((n << N_SHIFT) | (RESTARTED if restarted[0] else 0)
            | (TRACKING if state[S_STARTED] == 2.0 else 0) | (WRENCH_SOLVED if solved else 0))


def step(observer, t, outcomes):
    """
    Step ``observer`` at ``t`` and hand the tick to ``outcomes``, in one compiled call.

    As ``observer.step_bound(t)`` then ``outcomes.stepped(r, observer.tracking)``: the
    same r, flags, wrench, collision state and counts, the same exceptions (and then
    nothing is handed to ``outcomes``: the caller hands the tick to its ``unobserved``).

    Parameters
    ----------
    observer : MomentumObserver
        Bound to its arrays (``bind``); stepped without fext.
    t : float
        The sample's time, s.
    outcomes : ObserverOutcomes
        The collision state and counts of the observer's ticks.

    Returns
    -------
    r : ndarray, shape (nv,)
        A view, overwritten by the next step.
    changed : bool
        Whether the collision state changed.

    Raises
    ------
    RuntimeError, ValueError, SampleSkipped
        As ``step_bound``; ValueError too for a collision state of another size.

    """
    kernel = observer.kernel
    arrays = kernel.bound
    collision = outcomes.collision
    if arrays is None:
        raise RuntimeError("observer_tick.step before the observer's bind")
    if collision.__class__ is not CollisionState:     # its arrays go to the kernel unchecked
        raise ValueError("observer_tick.step needs outcomes whose collision is a "
                         "CollisionState")
    arrays[0][0] = t
    code = _tick_entry(*kernel.isolating_arguments(collision.kernel_arrays))
    if code < 0:
        raise _tick_error(observer, code, arrays)
    observer.restarted = bool(code & RESTARTED)
    observer.tracking = tracking = bool(code & TRACKING)
    if observer.frame is not None:
        samples.take_wrench(observer, None if code & WRENCH_SOLVED
                            else samples.wrench_refused(observer))
    return kernel.rows[0], outcomes.isolated(code >> N_SHIFT, tracking)


def _tick_error(observer, code, arrays):
    """Return the exception of a tick's ``code`` < 0: ``step_bound``'s in the same case."""
    if code == TICK_STAMP_SKIPPED:
        return samples.stamp_skipped(arrays[0][0], observer.newest)
    if code == TICK_REFUSED:
        return samples.refusal(observer, arrays, observer.kernel.no_fext)
    if code == TICK_OVERFLOW:
        return samples.overflow_reset(observer, arrays[3][0])
    if code == TICK_FRAME_MISFIT:
        return observer.kernel.frame_misfit()
    return ValueError("the observer's bound arrays or collision thresholds are not the "
                      "model's sizes")


def warm_up():
    """Load the compiled tick now (from the cache, or compiled), not at the first tick."""
    observer_tick_kernel.entry_point()


_tick_entry = first_entry(observer_tick_kernel, globals(), "_tick_entry")
