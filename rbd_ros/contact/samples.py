"""
The samples the momentum observer steps: whose stamp is used, which overflow, N at a time.

:class:`rbd_ros.contact.observer.MomentumObserver` steps one sample (``step``) or N
(``run``, ``run_with_wrench``: :func:`run` here), admitted by the same rule
(:func:`admitted` for one, :func:`_admit` for N): a sample whose stamp is not after the
newest one is skipped (STAMP_NOT_AFTER), unless it is more than ``max_gap`` before it (a
clock set back: it restarts the observer); where ``|r|`` would exceed R_LIMIT or not be
finite the observer is reset (OVERFLOW). So the numbers are the same one at a time (the
node) or all at once (the replay).
"""
import numpy as np
from scipy.linalg.blas import dasum

from .. import _checks
from ..algorithms.momentum_observer import R_LIMIT, stamp_admitted
from .wrench import wrench_refusal

# the statuses of samples that the glue around the kernel skips (the kernel's are > 0)
STAMP_NOT_AFTER = -1      # a stamp not after the newest one given: skipped, state unchanged
OVERFLOW = -2             # a sample whose |r| would exceed R_LIMIT: the observer reset
# a one-sample step's inputs, by the position a kernel status names (``_checks.input_error``)
INPUT_NAMES = ("q", "v", "tau", "fext", "t")


class SampleSkipped(ValueError):
    """
    A sample the observer did not step: ``status`` says why (STAMP_NOT_AFTER, OVERFLOW).

    STAMP_NOT_AFTER leaves the state as it was; OVERFLOW has reset it (the next sample
    restarts the observer).
    """

    def __init__(self, message, status):
        super().__init__(message)
        self.status = status


def run(observer, t, q, v, tau, fext=None):
    """
    Step ``observer`` over N samples: :meth:`MomentumObserver.run_with_wrench` (its docs).

    A sample the kernel refuses is found by stepping, and then the samples are stepped again
    from the start with its stamp left unused, so the samples stepped and their stamps are
    those that :meth:`MomentumObserver.step` one at a time would have used.
    """
    t = _checks.matrix(t, "t", 1)
    n = t.shape[0]
    pairs = ((q, "q"), (v, "v"), (tau, "tau"))
    q, v, tau = (_checks.matrix(x, name) for x, name in pairs)
    for x, name in ((q, "q"), (v, "v"), (tau, "tau")):
        if x.shape[0] != n:
            raise ValueError(f"{name} has {x.shape[0]} samples, t has {n}")
    fext = np.zeros((n, 0, 6)) if fext is None else _checks.matrix(fext, "fext", 3)
    if fext.shape[0] != n:
        raise ValueError(f"fext has {fext.shape[0]} samples, t has {n}")
    check_widths(observer.model, q, v, tau, fext)
    r = np.empty((n, observer.model.nv))
    restarted, status = np.zeros(n, np.int64), np.zeros(n, np.int64)
    w = np.zeros((n if observer.frame else 0, 6))
    rank = np.full(len(w), -1, np.int64)
    before = (observer.state.copy(), observer.newest)
    refused = np.zeros(n, bool)       # samples whose inputs the kernel refuses: their
    while True:                       # stamps are not used; found by stepping
        _step_admitted(observer, t, q, v, tau, fext, r, restarted, status, w, rank, refused)
        found = (status > 0) & ~refused
        if not found.any():
            break
        refused |= found              # again from the start, those stamps not used
        observer.state[:], observer.newest = before
    hold(r, status, before[0][3 + 3 * observer.model.nv:3 + 4 * observer.model.nv])
    observer.tracking = tracking(restarted, status, before[0][0])
    return r, restarted.astype(bool), status, w, rank


def _step_admitted(observer, t, q, v, tau, fext, r, restarted, status, w, rank, refused):
    """Step the samples :func:`_admit` admits (``refused``: not their stamps), in place."""
    n = len(t)
    rows = np.flatnonzero(_admit(observer, t, refused))
    status[:], restarted[:], rank[:], w[:] = STAMP_NOT_AFTER, 0, -1, 0.0
    while len(rows):                  # again after a sample that overflows: reset
        part = (slice(None) if len(rows) == n else rows)
        out = (r[part], restarted[part], status[part], w[part] if len(w) else w,
               rank[part] if len(w) else rank)
        observer.kernel.step_rows(t[part], q[part], v[part], tau[part], fext[part], *out)
        if not isinstance(part, slice):
            r[part], restarted[part], status[part] = out[:3]
            if len(w):
                w[part], rank[part] = out[3:]
        size = np.abs(out[0]).max(axis=1)
        if len(w):
            size = np.maximum(size, np.abs(out[3]).max(axis=1))
        bad = np.flatnonzero((out[2] == 0) & ~(size <= R_LIMIT))
        if not len(bad):
            return
        k = rows[bad[0]]
        status[k], r[k], restarted[k] = OVERFLOW, 0.0, 0
        if len(w):
            rank[k], w[k] = -1, 0.0
        observer.state[:] = 0.0
        rows = rows[bad[0] + 1:]


def admitted(observer, t):
    """Whether ``observer`` steps a sample at ``t`` (:func:`_admit`'s rule for one sample)."""
    return stamp_admitted(t, observer.newest, observer.settings[1])


def stamp_skipped(stamp, newest):
    """Return the SampleSkipped of a sample at ``stamp``, not after ``newest``."""
    return SampleSkipped(f"the stamp ({stamp:.9g} s) is not after the newest one the observer "
                         f"was given ({newest:.9g} s): a repeated, late or quantized stamp",
                         STAMP_NOT_AFTER)


def refusal(observer, arrays, fext):
    """
    Return the ValueError of the one sample ``observer``'s kernel refused (its status).

    ``arrays``: the sample's (t, q, v, tau) rows of one, ``fext`` its (1, ·, 6) wrenches.
    """
    values = tuple(x[0] for x in arrays[1:]) + (fext[0], arrays[0])
    return _checks.input_error("MomentumObserver.step", observer.kernel.one[2][0],
                               observer.model, INPUT_NAMES, values)


def overflow_reset(observer, tau):
    """Reset ``observer``'s state; return the SampleSkipped that says so (efforts ``tau``)."""
    observer.state[:] = 0.0
    return SampleSkipped(overflow_text(tau), OVERFLOW)


def take_wrench(observer, refused):
    """
    Keep the one sample's contact wrench in ``observer.wrench``, or why it was ``refused``.

    A copy: the kernel's row is the next sample's.
    """
    observer.wrench_refusal = refused
    observer.wrench = None if refused else observer.kernel.rows[1].copy()


def wrench_refused(observer):
    """Say why the one sample's contact wrench was not had, from its rank status, or None."""
    return wrench_refusal(observer.frame, int(observer.kernel.one[4][0]))


def _admit(observer, t, refused):
    """
    Return which samples at the times ``t`` are stepped; keep the newest stamp used.

    A finite stamp not after the newest before it is not, unless it is more than
    max_gap before it (a clock set back: it becomes the newest). Non-finite stamps and
    the ``refused`` samples are (the kernel refuses them), and their stamps are not used.
    """
    keep = np.ones(len(t), bool)
    newest, gap, start = observer.newest, observer.settings[1], 0
    while start < len(t):
        part = t[start:]
        used = np.isfinite(part) & ~refused[start:]
        times = np.where(used, part, -np.inf)
        newest_before = np.maximum.accumulate(np.r_[newest, times[:-1]])
        with np.errstate(invalid="ignore"):
            back = np.flatnonzero(used & (part < newest_before - gap))
            stop = back[0] if len(back) else len(part)
            keep[start:start + stop] = ~used[:stop] | (part[:stop] > newest_before[:stop])
        if stop == len(part):
            newest = max(newest, times.max())
            break
        newest, start = part[stop], start + stop + 1
    observer.newest = newest
    return keep


def check_widths(model, q, v, tau, fext):
    """
    Refuse rows that are not the model's size, naming the array.

    A whole call's mistake, not a sample's: refused per sample (a status for each), every r
    would be held at its last value, zeros from rest, which reads as "no contact".
    """
    for x, name, size in ((q, "q", model.nq), (v, "v", model.nv), (tau, "tau", model.nv)):
        if x.shape[1] != size:
            raise ValueError(f"{name} must have {size} columns (the model's), got {x.shape[1]}")
    if fext.shape[1] not in (0, model.nbodies) or fext.shape[2] != 6:
        raise ValueError(f"fext must be N x {model.nbodies} x 6 (a wrench per body), got "
                         f"{' x '.join(map(str, fext.shape))}")


def bounded(r, wrench):
    """
    Whether every |r_j| (and the contact wrench's) stays within R_LIMIT (NaN does not).

    ``momentum_observer.within_limit``'s rule. The BLAS sum of |x| first: Σ|x_j| ≤ R_LIMIT
    bounds every |x_j| by R_LIMIT (one call where numpy's min and max are two, each dearer);
    only a sum above it (or not finite) is looked at entry by entry, as the batch path
    (``_step_admitted``) tests every sample.
    """
    for x in (r,) if wrench is None else (r, wrench):
        if not dasum(x) <= R_LIMIT and not (-R_LIMIT <= x.min() and x.max() <= R_LIMIT):
            return False
    return True


def overflow_text(tau):
    """Say that the observer overflowed and was reset, at the efforts ``tau``."""
    return (f"the observer's state would overflow (|r| beyond {R_LIMIT:g} N·m; efforts up to "
            f"{float(np.max(np.abs(tau), initial=0.0)):.3g}): reset, it restarts at the "
            "next sample")


def hold(r, status, before):
    """Give the samples skipped for their stamps the r of the sample before (``before``)."""
    skipped = np.flatnonzero(status == STAMP_NOT_AFTER)
    if not len(skipped):
        return
    last = np.maximum.accumulate(np.where(status != STAMP_NOT_AFTER, np.arange(len(r)), -1))
    source = last[skipped]
    r[skipped] = np.where(source[:, None] >= 0, r[np.maximum(source, 0)], before)


def tracking(restarted, status, started):
    """
    Return where r is an estimate: from the third sample stepped after a (re)start on.

    ``started``: the kernel's stage before the samples (0: none; 1, 1.5: one, two; 2).
    """
    estimate = np.zeros(len(status), bool)
    rows = np.flatnonzero(status == 0)
    k = np.arange(len(rows))
    last = np.maximum.accumulate(np.where(restarted[rows] != 0, k, -1))
    before = {0.0: 0, 1.0: 1, 1.5: 2}.get(float(started), 3)
    count = np.where(last >= 0, k - last + 1, before + k + 1)
    estimate[rows] = count >= 3
    return estimate
