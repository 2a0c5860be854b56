"""
From recorded joint_states (and odometry) to the node's ticks and the states they compute.

Merging (what the node does, ``rbd_ros/node/joint_cache.py``): joint_states messages may be
partial (one publisher per arm, ...); every message updates the joints it names, and the
node decides one tick per message from the latest value of every joint. The replay does the
same, message by message in the bag's log-time order, with the node's tick rule
(``rbd_ros.outputs.TickRule``) and parameters, and counts the messages the node would not
answer by the rule's reasons (``rbd_ros.outputs.REASONS``): malformed, no model joint,
incomplete, stale, no base state, stale base, velocity unknown, acceleration unavailable.
The node's clock is the log time: a joint's age is the log time since the message that last
updated it, the base's since the last valid odometry.

Acceleration: ``acceleration="zero"`` is the node without an acceleration_topic (a = 0).
``"estimate"`` (the default) plays the commanded acceleration: the velocity of each joint is
differentiated with a Savitzky–Golay filter: at each sample, a polynomial of degree ``order``
is fitted by least squares to the ``window`` samples centred on it (the first / last
``window`` samples near the ends, as ``scipy.signal.savgol_filter(..., mode="interp")``), in
the samples' own time stamps, and its slope there is the acceleration. With uniform sampling
this is exactly the classic Savitzky–Golay derivative filter; with jitter or gaps it stays a
correct local fit. Each joint uses only the messages that carry it with a finite velocity
(the others have no estimate: "acceleration unavailable", or 0 where ``unknown_velocity`` is
"zero" sets that velocity to 0); the base acceleration is the same filter on the odometry
twist (base frame, as the node reads it). Times are the header stamps, or the log times when
stamps are zero or not increasing (the report says which).
"""
import numpy as np

from ..formats import cdr
from .. import outputs
from ..formats.cdr import JointStateDecoder
from ..description.mimic_coupling import MIMIC_TOLERANCE
from .bag_io import ReplayError, deserialize_joint_state, deserialize_odometry
from .errors import shorten

ACCELERATIONS = ("estimate", "zero")


def savgol_derivative(t, y, window=11, order=3):
    """
    dy/dt at every sample time t (N,) of y (N, k) by local least-squares polynomials.

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
    """Fit the local polynomials of the samples ``rows`` (their windows: see above)."""
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


def decode(raws, joint_names, followers=None):
    """
    Decode joint_states CDR bytes into per-message arrays in model joint order.

    joint_states CDR bytes -> dict of (M, nj) arrays P, V, E (NaN: not in the message),
    present (M, nj), stamp (M,) seconds, sec / nanosec (M,), malformed (M,), the names
    the model does not know, and ``mimic``: how the messages' mimic followers agree with
    their leaders (:func:`_mimic_agreement`). ``followers``: the model's coupled joints,
    {follower: (leader, multiplier, offset)} (``model.coupling.followers``); they are not
    unknown, and never fill a leader's value (as in the node).
    """
    followers = dict(followers or {})
    nj, M = len(joint_names), len(raws)
    # a follower gets a column after the model's joints: decoded as they are, then split off
    index = {name: k for k, name in enumerate(tuple(joint_names) + tuple(followers))}
    P, V, E = (np.full((M, len(index)), np.nan) for _ in range(3))
    present = np.zeros((M, len(index)), bool)
    sec = np.zeros(M, np.int64)
    nsec = np.zeros(M, np.int64)
    malformed = np.zeros(M, bool)
    maps, groups, unknown = {}, {}, set()
    dec = JointStateDecoder()

    def mapping(names):
        cached = maps.get(names)
        if cached is None:
            if outputs.duplicate_names(names):
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
            names, (sec[m], nsec[m]), arrays = deserialize_joint_state(raw)
            malformed[m] = not _merge_row(m, len(names), mapping(names), arrays, (P, V, E),
                                          present)
            continue
        names, (sec[m], nsec[m]), arrays = lay
        n = len(names)
        ours, theirs = mapping(names)
        if ours is None or outputs.size_error(n, [c for _, c in arrays]):
            malformed[m] = True
            continue
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
    mimic = _mimic_agreement(P, joint_names, followers)
    P, V, E, present = P[:, :nj], V[:, :nj], E[:, :nj], present[:, :nj]
    bad_pos = (present & ~np.isfinite(P)).any(axis=1)
    present[bad_pos] = False
    malformed |= bad_pos
    return {"P": P, "V": V, "E": E, "present": present, "sec": sec, "nanosec": nsec,
            "stamp": sec * 10**9 + nsec, "malformed": malformed, "unknown": sorted(unknown),
            "mimic": mimic}


def _mimic_agreement(P, joint_names, followers):
    """
    How the followers' recorded positions agree with their leaders' (the node's check).

    ``P``: positions, the model's joints then the followers (NaN: not in the message).
    Compared within a message; a message without the leader, or a non-finite value,
    compares as agreeing. Returns {"tolerance", "messages" (how many disagree), "max":
    {follower: largest |q_follower - (multiplier · q_leader + offset)|}} (followers seen).
    """
    nj = len(joint_names)
    where = {name: k for k, name in enumerate(joint_names)}
    worst, off_any = {}, np.zeros(len(P), bool)
    for c, (name, (leader, multiplier, offset)) in enumerate(followers.items(), nj):
        gap = np.abs(P[:, c] - (multiplier * P[:, where[leader]] + offset))
        seen = np.isfinite(gap)
        if seen.any():
            worst[name] = float(gap[seen].max())
            off_any[seen] |= gap[seen] > MIMIC_TOLERANCE
    return {"tolerance": MIMIC_TOLERANCE, "messages": int(off_any.sum()), "max": worst}


def _merge_row(m, count, mapping, arrays, dst, present):
    """Put one deserialized message's arrays in row ``m``; False when it is malformed."""
    ours, theirs = mapping
    if ours is None or outputs.size_error(count, [a.size for a in arrays]):
        return False
    for out, a in zip(dst, arrays):
        if a.size:
            out[m, ours] = a[theirs]
    present[m, ours] = True
    return True


def _times(stamp, log, masks, required=True):
    """
    Choose the sample times: header stamps when usable, else log times.

    Header stamps when usable for every series (positive, strictly increasing), else log
    times; (times, source). Neither usable: ReplayError when ``required`` (the velocity is
    differentiated), else the log times.
    """
    for t, source in ((stamp, "header stamps"), (log, "log times")):
        if source == "header stamps" and not np.all(stamp > 0):
            continue
        t = (t - t.min()) * 1e-9 if len(t) else t.astype(float)  # exact int ns differences
        if all(np.all(np.diff(t[mask]) > 0) for mask in masks) or not required \
                and source == "log times":
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


class Ticks:
    """
    The node's ticks over a recording: what it answers, at which state, what it skips.

    Per answered message (``index``: its joint_states index): ``q``, ``v``, ``a`` (model
    order, base first), ``effort`` (measured, joints; NaN: unknown), ``effort_known``,
    ``tau_in`` (every dof: the measured effort, 0 where unknown and for the base), ``sec``,
    ``nanosec`` (header stamp), ``time`` (s). Per message: ``codes`` (index into
    ``rbd_ros.outputs.REASON_KEYS``, -1: answered). And ``messages``, ``skipped`` (reason:
    count), ``unknown_names``, ``mimic`` (followers' agreement, see :func:`decode`),
    ``odometry_ignored``, ``time_source``.
    """

    def reason(self, m):
        """Return the reason joint_states message ``m`` is skipped, or None (answered)."""
        code = int(self.codes[m])
        return None if code < 0 else outputs.REASON_KEYS[code]

    PER_TICK = ("index", "q", "v", "a", "effort", "effort_known", "tau_in", "sec", "nanosec",
                "time")

    def without(self, drop, reason):
        """
        Return these ticks without the answered ticks ``drop``, skipped for ``reason``.

        ``drop``: bool per answered tick; ``reason`` a key of ``rbd_ros.outputs.REASONS``
        (the replay's "refused": the dynamics of the message are not finite).
        """
        drop = np.asarray(drop, bool)
        if not drop.any():
            return self
        t = Ticks()
        t.__dict__.update(self.__dict__)
        t.codes = self.codes.copy()
        t.codes[self.index[drop]] = outputs.REASON_KEYS.index(reason)
        for name in self.PER_TICK:
            setattr(t, name, getattr(self, name)[~drop])
        t.skipped = _count(t.codes)
        return t


def _count(codes):
    """{reason: number of messages} of the skip codes, in the rule's order."""
    return {key: int((codes == k).sum()) for k, key in enumerate(outputs.REASON_KEYS)
            if (codes == k).any()}


def ticks(model, js_raws, js_log, odom_raws=(), odom_log=(), odom_before=(), *, window=11,
          order=3, max_joint_age=0.5, unknown_velocity="skip", acceleration="estimate"):
    """
    Decide and assemble the node's ticks over a recording.

    The node's ticks (:class:`Ticks`) over a recording, under the node's tick rule with
    these parameters (``odom_before[k]``: how many joint_states messages precede odometry
    message k in the bag).
    """
    if acceleration not in ACCELERATIONS:
        raise ReplayError(f"acceleration must be one of {ACCELERATIONS}, got {acceleration!r}")
    try:
        rule = outputs.TickRule(floating_base=model.floating_base, max_joint_age=max_joint_age,
                                unknown_velocity=unknown_velocity,
                                commanded_acceleration=acceleration == "estimate")
    except ValueError as exc:
        raise ReplayError(str(exc)) from None
    joint_names = tuple(model.joint_names)
    d = decode(js_raws, joint_names,
               model.coupling.followers if model.coupling is not None else None)
    present, M = d["present"], len(js_raws)
    _check_joints(joint_names, present, d["unknown"])
    log = np.asarray(js_log, np.int64)
    estimate = acceleration == "estimate"
    times, source = _times(d["stamp"], log, [present[:, j] for j in range(len(joint_names))],
                           required=estimate)
    idx = _forward_fill_index(present)
    safe = np.maximum(idx, 0)
    cols = np.arange(len(joint_names))
    q, v, e = (X[safe, cols] for X in (d["P"], d["V"], d["E"]))
    q[idx < 0] = np.nan                                   # never received
    if estimate:
        valid_v = present & np.isfinite(d["V"])
        a = _differentiate(times, d["V"], valid_v, window, order)[safe, cols]
    else:
        a = np.zeros_like(q)
    base = _base(model, odom_raws, odom_log, odom_before, log, window, order, estimate)
    if rule.zero_unknown_velocity:                         # v = 0 and no slope to estimate
        unknown = ~np.isfinite(v)
        v[unknown] = 0.0
        a[unknown] = 0.0
    codes = np.full(M, -1)
    codes[d["malformed"]] = outputs.REASON_KEYS.index("malformed")
    codes[(codes < 0) & ~present.any(axis=1)] = outputs.REASON_KEYS.index("no model joint")
    acceleration_known = np.isfinite(a).all(axis=1) & np.isfinite(base["a"]).all(axis=1)
    state = outputs.TickState(q, v, (log - log[safe].min(axis=1)) * 1e-9, base["age"],
                              acceleration_known)
    rule.reasons(state, codes)
    return _answered(model, codes, d, times, q, v, a, e, base,
                     source + (f"; odometry: {base['source']}" if model.floating_base else ""))


def _check_joints(joint_names, present, unknown):
    """Raise ReplayError when joints of the URDF never appear in the joint_states."""
    never = [joint_names[j] for j in np.flatnonzero(~present.any(axis=0))]
    if len(present) and len(never) == len(joint_names):
        raise ReplayError(f"no joint of the URDF ({shorten(list(joint_names)[:8], 200)}...) "
                          f"appears in the joint_states; they name {shorten(unknown[:8], 200)}: "
                          "wrong URDF or topic?")
    if len(present) and never:
        raise ReplayError(f"{len(never)} joints of the URDF never appear in the joint_states: "
                          f"{shorten(never[:8], 200)} (the bag's joints do not match the URDF)")


def _answered(model, codes, d, times, q, v, a, e, base, source):
    """Return the :class:`Ticks` of the messages with ``codes`` -1 (and the others' counts)."""
    t = Ticks()
    ok = np.flatnonzero(codes < 0)
    t.index = ok
    t.codes = codes
    t.q = np.ascontiguousarray(np.hstack([base["q"][ok], q[ok]]))
    t.v = np.ascontiguousarray(np.hstack([base["v"][ok], v[ok]]))
    t.a = np.ascontiguousarray(np.hstack([base["a"][ok], a[ok]]))
    t.effort = e[ok]                                   # measured, joints only (NaN: unknown)
    t.effort_known = outputs.effort_known(t.effort)
    t.tau_in = np.zeros_like(t.v)
    t.tau_in[:, model.nv_base:] = np.where(t.effort_known[:, None], t.effort, 0.0)
    t.sec, t.nanosec = d["sec"][ok], d["nanosec"][ok]
    t.time = times[ok]
    t.messages = len(codes)
    t.skipped = _count(codes)
    t.unknown_names = d["unknown"]
    t.mimic = d["mimic"]
    t.odometry_ignored = base["ignored"]
    t.time_source = source
    return t


def _base(model, odom_raws, odom_log, odom_before, log, window, order, estimate):
    """
    Return the base state at every joint_states message.

    The base state at every joint_states message from the latest valid odometry read
    before it: {"q" (M, 7), "v" (M, 6), "a" (M, 6), "age" (M,) s since that odometry (inf:
    none), "ignored": invalid odometry messages, "source": their times} ((M, 0) arrays and
    no ages on a fixed base).
    """
    M = len(log)
    if not model.floating_base:
        return {"q": np.zeros((M, 0)), "v": np.zeros((M, 0)), "a": np.zeros((M, 0)),
                "age": np.full(M, np.inf), "ignored": 0, "source": "none"}
    stamps, X = cdr.decode_odometry_many(odom_raws, deserialize_odometry)
    valid = outputs.valid_odometry(X)
    olog = np.asarray(odom_log, np.int64)[valid]
    before = np.asarray(odom_before, np.int64)[valid]
    X, stamp = X[valid], stamps[valid, 0] * 10**9 + stamps[valid, 1]
    k = np.searchsorted(before, np.arange(M), side="right") - 1
    none = k < 0
    k = np.maximum(k, 0)
    out = {"ignored": int((~valid).sum()), "source": "none"}
    if not len(X):
        out.update(q=np.zeros((M, 7)), v=np.zeros((M, 6)), a=np.zeros((M, 6)),
                   age=np.full(M, np.inf))
        return out
    acc = np.zeros((len(X), 6))
    ot, out["source"] = _times(stamp, olog, [np.ones(len(X), bool)], required=estimate)
    if estimate:
        acc = savgol_derivative(ot, X[:, 7:], window, order)
    out.update(q=X[k, :7], v=X[k, 7:], a=acc[k],
               age=np.where(none, np.inf, (log - olog[k]) * 1e-9))
    return out
