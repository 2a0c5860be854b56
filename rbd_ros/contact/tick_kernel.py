"""
The node's observer tick in one compiled call: admit the stamp, step, bound r, isolate.

A tick of the node steps the momentum observer over one sample (``momentum_observer_kernel``)
and checks its r against the collision thresholds (``isolation_kernel``). Between those two
compiled calls ran the Python of the rules around them: the stamp admitted once
(``samples.admitted``), r and the contact wrench bounded (``samples.bounded``), the flags read
back, the isolation called. Each is cheap with warm caches, but the node's ticks come 1 ms
apart, with DDS's work between them: each tick finds that Python's objects out of the caches,
and it cost about as much as the two kernels together (doc/benchmarks.md, "The node against its
messaging floor"). :func:`observer_tick_kernel` makes the same rules' decisions inside one
call and returns one code; its Python caller (``observer.MomentumObserver.step_isolating``)
only turns that code into the same results and the same exceptions as the two calls'.
"""
import math

from .._jit import (f64_1d, f64_1d_ro, f64_2d, f64_2d_ro, f64_3d, helper, i64_1d, i64_1d_ro,
                    int64, kernel)
from ..algorithms.contact_wrench import wrench_solved
from ..algorithms.momentum_observer import S_STARTED, momentum_observer_kernel
from .isolation import isolation_kernel
from .samples import R_LIMIT

# a tick's code below 0: why it gave no r (the sample's status says which input was refused)
FRAME_MISFIT, STAMP_SKIPPED, SAMPLE_REFUSED, OVERFLOWED, SIZES_DIFFER = -1, -2, -3, -4, -5
# a stepped tick's code: these flags, and the isolation's number of dofs over their threshold
# shifted by N_SHIFT
RESTARTED, TRACKING, WRENCH_SOLVED = 1, 2, 4
N_SHIFT = 3


@helper
def within_limit(x):
    """Whether every |x_j| ≤ R_LIMIT (NaN is not): ``samples.bounded``'s rule."""
    for j in range(x.shape[0]):
        if not abs(x[j]) <= R_LIMIT:
            return False
    return True


@helper
def one_sample(t, q, v, tau, fext, r, wrench, wrench_rank, restarted, status, thresholds,
               depths, over, peak):
    """
    Whether the arrays hold one sample each, its results one row, the isolation's r's size.

    Tested before anything is written: ``momentum_observer_kernel`` tests each sample's
    rows, not their number, and ``isolation_kernel`` would refuse its sizes only after the
    step.
    """
    one = (t.shape[0] == 1 and q.shape[0] == 1 and v.shape[0] == 1 and tau.shape[0] == 1
           and fext.shape[0] == 1 and r.shape[0] == 1 and restarted.shape[0] == 1
           and status.shape[0] == 1)
    nv = r.shape[1]
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
    and ``newest`` (1,), the newest stamp stepped. In the order the Python rules test them:

    - STAMP_SKIPPED: a finite stamp not after ``newest[0]``, unless more than max_gap before
      it (``samples.admitted``); nothing is written;
    - FRAME_MISFIT: the contact frame does not fit the model;
    - SAMPLE_REFUSED: the kernel refused the sample (``status[0]`` says why);
    - OVERFLOWED: an |r_j| or contact wrench entry over R_LIMIT, or not finite (``newest``
      is the stamp; the caller resets the state);
    - SIZES_DIFFER, tested first (nothing is written): arrays of other sizes than one
      sample's, or isolation arrays not r's sizes.

    Else RESTARTED, TRACKING (r an estimate) and WRENCH_SOLVED (a contact wrench had) or'ed,
    plus the number of dofs over their threshold shifted by N_SHIFT (``over``, ``peak``:
    ``isolation_kernel``'s).
    """
    if not one_sample(t, q, v, tau, fext, r, wrench, wrench_rank, restarted, status,
                      thresholds, depths, over, peak):
        return SIZES_DIFFER
    stamp = t[0]
    if math.isfinite(stamp) and not (stamp > newest[0]
                                     or stamp < newest[0] - epsilon_gain_gap[1]):
        return STAMP_SKIPPED
    if momentum_observer_kernel(packed, table, ws, qf, VF, joint, epsilon_gain_gap, state,
                                scratch_v, t, q, v, tau, fext, frame_body, frame_placement,
                                J, A, r, wrench, wrench_rank, restarted, status) < 0:
        return FRAME_MISFIT
    if status[0]:
        return SAMPLE_REFUSED
    newest[0] = stamp
    solved = wrench.shape[0] == 1 and wrench_solved(wrench_rank[0])
    if not within_limit(r[0]) or (wrench.shape[0] == 1 and not within_limit(wrench[0])):
        return OVERFLOWED
    n = isolation_kernel(r[0], thresholds, depths, over, peak)
    if n < 0:
        return SIZES_DIFFER
    return ((n << N_SHIFT) | (RESTARTED if restarted[0] else 0)
            | (TRACKING if state[S_STARTED] == 2.0 else 0) | (WRENCH_SOLVED if solved else 0))
