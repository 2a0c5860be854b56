"""
Accelerations from sampled velocities: a local polynomial fit on the samples' own stamps.

Savitzky-Golay differentiation with one step for all samples (the median) is exact only
when the samples are evenly spaced: across a hole in the stamps (lost messages, a paused
publisher) it divides a velocity change over the hole by the time of a few steps, and an
estimate built on it is biased while its standard deviation does not say so. Here each
sample's derivative is that of the polynomial of degree :data:`ORDER` fitted by least
squares to the :data:`WINDOW` samples around it, at their real times (the same estimator
as Savitzky-Golay on even stamps, and exact for polynomials of that degree on any stamps).

The gap rule: a step between consecutive stamps longer than :data:`GAP_FACTOR` times the
median step is a hole. No fit reaches across one: the samples are cut into runs at the holes,
a sample near a run's end takes the window of :data:`WINDOW` samples inside its run (as
Savitzky-Golay's ``mode="interp"``), and a run shorter than :data:`WINDOW` samples is
dropped (its samples have no derivative).
"""
import numpy as np

WINDOW = 11          # samples per local fit
ORDER = 3            # degree of the local polynomial
GAP_FACTOR = 3.0     # a step over this many median steps is a hole


def runs(t, gap_factor=GAP_FACTOR, window=WINDOW):
    """
    Return (runs, holes): the runs [start, stop) of ``window`` samples or more, the holes.

    ``t`` (N,): increasing stamps. ``holes``: how many steps are longer than ``gap_factor``
    median steps. A run shorter than ``window`` is left out.
    """
    t = np.asarray(t, np.float64)
    if len(t) < 2:
        return [], 0
    dt = np.diff(t)
    if not (np.all(np.isfinite(dt)) and np.all(dt > 0)):
        raise ValueError("the stamps must be finite and increasing")
    cuts = np.flatnonzero(dt > gap_factor * np.median(dt)) + 1
    bounds = np.r_[0, cuts, len(t)]
    return ([(int(a), int(b)) for a, b in zip(bounds[:-1], bounds[1:]) if b - a >= window],
            len(cuts))


def derivative(t, v, start, stop, first, last, window=WINDOW, order=ORDER):
    """
    Return dv/dt (last - first, ...) of the samples first .. last - 1 of the run [start, stop).

    ``t`` (N,), ``v`` (N, ...): the run's samples are ``t[start:stop]``; each sample's window
    is the ``window`` samples of the run centred on it, shifted inside the run at its ends.
    """
    half = window // 2
    rows = np.arange(first, last)
    lo = np.clip(rows - half, start, stop - window)
    idx = lo[:, None] + np.arange(window)                      # (n, window)
    scale = (t[stop - 1] - t[start]) / (stop - start - 1)      # the run's mean step
    s = (t[idx] - t[rows, None]) / scale                       # about the sample, in steps
    V = s[:, :, None] ** np.arange(order + 1)                  # (n, window, order + 1)
    gram = np.einsum("nwi,nwj->nij", V, V)
    # the fit's linear coefficient as weights of the window's samples: row 1 of (VᵀV)⁻¹Vᵀ
    unit = np.zeros((len(rows), order + 1, 1))
    unit[:, 1] = 1.0
    weights = np.einsum("nwi,ni->nw", V, np.linalg.solve(gram, unit)[..., 0]) / scale
    return np.einsum("nw,nw...->n...", weights, v[idx])
