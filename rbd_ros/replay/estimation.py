"""From recorded joint_states (and odometry) to the states the dynamics are computed at.

Merging (what the node does, ``rbd_ros/node/joint_cache.py``): joint_states messages may be
partial (one publisher per arm, ...); every message updates the joints it names, and the
node computes one tick per message from the latest value of every joint. The replay does
the same, message by message in the bag's log-time order, and skips (and counts) the
messages the node would not answer:

  malformed       array lengths that do not match the names, duplicate names, a NaN/inf
                  position: nothing is merged (the node's "malformed joint_states")
  incomplete      some joint of the model has not been received yet
  stale           some joint was last updated more than ``max_joint_age`` s (log time) ago
  no base state   floating base: no valid odometry logged before the message
  velocity unknown  a joint's latest velocity is NaN or absent
  acceleration unavailable  the differentiator had too few samples of a joint

Acceleration: the velocity of each joint is differentiated with a Savitzky–Golay filter:
at each sample, a polynomial of degree ``order`` is fitted by least squares to the
``window`` samples centred on it (the first / last ``window`` samples near the ends, as
``scipy.signal.savgol_filter(..., mode="interp")``), in the samples' own time stamps, and
its slope there is the acceleration. With uniform sampling this is exactly the classic
Savitzky–Golay derivative filter; with jitter or gaps it stays a correct local fit. Each
joint uses only the messages that carry it (with a finite velocity); the base acceleration
is the same filter on the odometry twist (base frame, as the node reads it). Times are the
header stamps, or the log times when stamps are zero or not increasing (the report says
which).
"""
import numpy as np

from ..cdr import JointStateDecoder
from .bag_io import ReplayError, decode_odometry_many, deserialize_joint_state

REASONS = ("malformed", "incomplete", "stale", "no base state", "velocity unknown",
           "acceleration unavailable")


def savgol_derivative(t, y, window=11, order=3):
    """dy/dt at every sample time t (N,) of y (N, k) by local least-squares polynomials.

    Returns (N, k); all NaN when there are fewer than order + 1 samples (a shorter window
    is used when N < window). t must be strictly increasing.
    """
    t = np.asarray(t, np.float64)
    y = np.asarray(y, np.float64)
    n = len(t)
    out = np.full(y.shape, np.nan)
    window = min(int(window), n if n % 2 else n - 1)
    if window < order + 1 or n == 0:
        return out
    h = window // 2
    d = np.diff(t)
    if n > 2 * window and np.ptp(d) <= 1e-6 * d.mean():   # uniform: one filter, slid along
        mid = savgol_derivative(t[:window], np.eye(window), window, order)   # (W, W) weights
        out[h:n - h] = np.einsum("nkw,w->nk", np.lib.stride_tricks.sliding_window_view(
            y, window, axis=0), mid[h]) * ((t[window - 1] - t[0]) / (window - 1) / d.mean())
        ends = np.r_[0:h, n - h:n]
        out[ends] = _general(t, y, window, order, ends)
        return out
    return _general(t, y, window, order, np.arange(n))


def _general(t, y, window, order, rows):
    """The local fits of the samples ``rows`` (the windows of every sample: see above)."""
    n, h = len(t), window // 2
    start = np.clip(rows - h, 0, n - window)
    idx = start[:, None] + np.arange(window)                      # (N, W)
    dt = t[idx] - t[rows, None]
    scale = np.maximum(np.abs(dt).max(axis=1, keepdims=True), 1e-300)
    s = dt / scale                                                 # in [-1, 1]
    A = s[..., None] ** np.arange(order + 1)                       # (N, W, p+1)
    AtA = np.einsum("nwi,nwj->nij", A, A)
    Aty = np.einsum("nwi,nwk->nik", A, y[idx])
    coef = np.linalg.solve(AtA, Aty)                              # (N, p+1, k)
    return coef[:, 1, :] / scale


def _forward_fill_index(present):
    """idx[m, j]: the last m' <= m with present[m', j], or -1."""
    m = np.arange(present.shape[0])[:, None]
    return np.maximum.accumulate(np.where(present, m, -1), axis=0)


class Ticks:
    """The messages the node would answer and the states they give (model order)."""


def decode(raws, joint_names):
    """joint_states CDR bytes -> dict of (M, nj) arrays P, V, E (NaN: not in the message),
    present (M, nj), stamp (M,) seconds, sec / nanosec (M,), malformed (M,) and the names
    the model does not know."""
    nj, M = len(joint_names), len(raws)
    index = {name: k for k, name in enumerate(joint_names)}
    P, V, E = (np.full((M, nj), np.nan) for _ in range(3))
    present = np.zeros((M, nj), bool)
    sec = np.zeros(M, np.int64)
    nsec = np.zeros(M, np.int64)
    malformed = np.zeros(M, bool)
    maps, groups, unknown, seen = {}, {}, set(), set()
    dec = JointStateDecoder()

    def mapping(names):
        cached = maps.get(names)
        if cached is None:
            if len(set(names)) != len(names):
                cached = None, None
            else:
                pairs = [(index[n], k) for k, n in enumerate(names) if n in index]
                unknown.update(n for n in names if n not in index)
                cached = (np.array([p[0] for p in pairs], np.intp),
                          np.array([p[1] for p in pairs], np.intp))
            maps[names] = cached
        return cached

    for m, raw in enumerate(raws):
        try:
            lay = dec.layout(raw)
        except ValueError:                     # truncated bytes
            malformed[m] = True
            continue
        if lay is None:                        # big-endian CDR: rosbags' deserializer
            names, stamp, arrays = deserialize_joint_state(raw)
            sec[m], nsec[m] = stamp
            ours, theirs = mapping(names)
            if ours is None or any(a.size not in (0, len(names)) for a in arrays) \
                    or (names and arrays[0].size == 0):
                malformed[m] = True
                continue
            for dst, a in zip((P, V, E), arrays):
                if a.size:
                    dst[m, ours] = a[theirs]
            present[m, ours] = True
            continue
        names, (sec[m], nsec[m]), arrays = lay
        n = len(names)
        ours, theirs = mapping(names)
        if ours is None or any(c not in (0, n) for _, c in arrays) or (n and arrays[0][1] == 0):
            malformed[m] = True
            continue
        seen.add(names)
        groups.setdefault((names, len(raw), tuple(arrays)), []).append(m)
    for (names, length, arrays), ms in groups.items():
        ours, theirs = maps[names]
        ms = np.array(ms)
        buf = np.frombuffer(b"".join(raws[m] for m in ms), np.uint8).reshape(len(ms), length)
        for dst, (off, count) in zip((P, V, E), arrays):
            if count:
                vals = np.ascontiguousarray(buf[:, off:off + 8 * count]).view("<f8")
                dst[ms[:, None], ours] = vals[:, theirs]
        present[ms[:, None], ours] = True
    bad_pos = (present & ~np.isfinite(P)).any(axis=1)
    present[bad_pos] = False
    malformed |= bad_pos
    return {"P": P, "V": V, "E": E, "present": present, "sec": sec, "nanosec": nsec,
            "stamp": sec * 10**9 + nsec, "malformed": malformed, "unknown": sorted(unknown)}


def _times(stamp, log, masks):
    """Header stamps when usable for every series (positive, strictly increasing), else log
    times; (times, source)."""
    for t, source in ((stamp, "header stamps"), (log, "log times")):
        if source == "header stamps" and not np.all(stamp > 0):
            continue
        t = (t - t.min()) * 1e-9 if len(t) else t.astype(float)  # exact int ns differences
        if all(np.all(np.diff(t[mask]) > 0) for mask in masks):
            return t, source
    raise ReplayError("joint_states (or odometry) samples of one joint share a time stamp "
                      "and a log time: cannot differentiate the velocity")


def _differentiate(times, V, valid, window, order):
    """Per-column derivative of V over the rows where valid, grouped by identical masks."""
    A = np.full(V.shape, np.nan)
    for key in {valid[:, j].tobytes() for j in range(V.shape[1])}:
        cols = [j for j in range(V.shape[1]) if valid[:, j].tobytes() == key]
        rows = np.flatnonzero(valid[:, cols[0]])
        A[np.ix_(rows, cols)] = savgol_derivative(times[rows], V[np.ix_(rows, cols)],
                                                  window, order)
    return A


def ticks(model, js_raws, js_log, odom_raws=(), odom_log=(), odom_before=(), *, window=11,
          order=3, max_joint_age=0.5):
    """The node's ticks over a recording: which joint_states messages it answers and the
    (q, v, a, measured τ) of each (``Ticks``), the skips per reason and notes."""
    joint_names = tuple(model.joint_names)
    d = decode(js_raws, joint_names)
    present, M = d["present"], len(js_raws)
    log = np.asarray(js_log, np.int64)
    never = [joint_names[j] for j in np.flatnonzero(~present.any(axis=0))]
    if M and len(never) == len(joint_names):
        raise ReplayError(f"no joint of the URDF ({list(joint_names)[:8]}...) appears in the "
                          f"joint_states; they name {d['unknown'][:8]}: wrong URDF or topic?")
    if M and never:
        raise ReplayError(f"{len(never)} joints of the URDF never appear in the joint_states: "
                          f"{never[:8]} (the bag's joints do not match the URDF)")
    valid_v = present & np.isfinite(d["V"])
    times, source = _times(d["stamp"], log, [present[:, j] for j in range(len(joint_names))])
    A = _differentiate(times, d["V"], valid_v, window, order)

    idx = _forward_fill_index(present)
    safe = np.maximum(idx, 0)
    cols = np.arange(len(joint_names))
    q, v, a, e = (X[safe, cols] for X in (d["P"], d["V"], A, d["E"]))
    reason = np.full(M, -1)

    def mark(mask, k):
        reason[(reason < 0) & mask] = k

    mark(d["malformed"], 0)
    mark((idx < 0).any(axis=1), 1)
    if max_joint_age > 0:
        mark((log[:, None] - log[safe] > max_joint_age * 1e9).any(axis=1), 2)

    nb = 7 if model.floating_base else 0
    base_q = np.zeros((M, nb))
    base_v = base_a = np.zeros((M, 6 if nb else 0))
    if model.floating_base:
        base_q, base_v, base_a, no_base, odom_source = _base(odom_raws, odom_log, odom_before, M,
                                                                 window, order)
        mark(no_base, 3)
        source += f"; odometry: {odom_source}"
    mark(~np.isfinite(v).all(axis=1), 4)
    mark(~(np.isfinite(a).all(axis=1) & np.isfinite(base_a).all(axis=1)), 5)

    t = Ticks()
    ok = np.flatnonzero(reason < 0)
    t.index = ok
    t.q = np.ascontiguousarray(np.hstack([base_q[ok], q[ok]]))
    t.v = np.ascontiguousarray(np.hstack([base_v[ok], v[ok]]))
    t.a = np.ascontiguousarray(np.hstack([base_a[ok], a[ok]]))
    t.effort = e[ok]                                   # measured, joints only (NaN: unknown)
    t.effort_known = np.isfinite(t.effort).all(axis=1)
    t.tau_in = np.zeros_like(t.v)
    t.tau_in[:, 6 if model.floating_base else 0:] = np.where(t.effort_known[:, None], t.effort, 0.0)
    t.sec, t.nanosec = d["sec"][ok], d["nanosec"][ok]
    t.time = times[ok]
    t.messages = M
    t.skipped = {REASONS[k]: int((reason == k).sum()) for k in range(len(REASONS))
                 if (reason == k).any()}
    t.unknown_names = d["unknown"]
    t.time_source = source
    return t


def _base(odom_raws, odom_log, odom_before, M, window, order):
    """Base q (7), v (6), a (6) at every joint_states message from the latest valid
    odometry read before it (``odom_before[k]``: how many joint_states messages precede
    odometry message k in the bag); and the mask of messages with none."""
    if not len(odom_raws):
        return (np.zeros((M, 7)), np.zeros((M, 6)), np.zeros((M, 6)), np.ones(M, bool),
                "none")
    stamp, X = decode_odometry_many(odom_raws)
    valid = np.isfinite(X).all(axis=1) & (np.einsum("ij,ij->i", X[:, 3:7], X[:, 3:7]) >= 1e-12)
    olog = np.asarray(odom_log, np.int64)[valid]
    before = np.asarray(odom_before, np.int64)[valid]
    X, stamp = X[valid], stamp[valid]
    ot, source = _times(stamp, olog, [np.ones(len(X), bool)])
    acc = savgol_derivative(ot, X[:, 7:], window, order) if len(X) else np.zeros((0, 6))
    k = np.searchsorted(before, np.arange(M), side="right") - 1
    none = k < 0
    k = np.maximum(k, 0)
    if not len(X):
        return np.zeros((M, 7)), np.zeros((M, 6)), np.zeros((M, 6)), np.ones(M, bool), source
    return X[k, :7], X[k, 7:], acc[k], none, source
