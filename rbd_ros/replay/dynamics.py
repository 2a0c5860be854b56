"""
The outputs of the answered messages, in batches, and the messages whose dynamics are refused.

The node computes a tick's outputs with one core call and, when the core refuses the state
(a ValueError: an overflow to inf/NaN from finite but huge inputs, e.g. velocities of 1e154 or
efforts of 1e308), publishes nothing for it and counts it as "refused"
(``rbd_ros.outputs.REASONS``). The replay does the same with the batch API: a batch whose
call raises is split in halves until the refused states stand alone, and every result is
also checked with numpy (a core that returns NaN/inf instead of raising), so a message any of
whose outputs is not finite is refused whole: nothing of it is written, and the report counts
it as skipped, reason "refused".
"""
import re
import time

import numpy as np

from ..actuation import dynamics as actuation
from .. import outputs as table
from ..outputs import whole_body
from . import bag_io
from .errors import ReplayError, shorten

REFUSED = "refused"
NOT_FINITE = "a result is not finite (NaN or inf): the inputs are too large"


def templates(model, outputs, frame=""):
    """
    {name: cdr.Template} of the outputs ``outputs`` (names) for ``model``.

    A whole-body output's is a ``bag_io.MessageTemplate`` (``frame``: ~/end_effector's link).
    """
    return {k: bag_io.MessageTemplate(table.BY_NAME[k], model, frame) if k in whole_body.NAMES
            else bag_io.output_template(table.BY_NAME[k], model) for k in outputs}


def joint_model(model, urdf_text, params_text=None, urdf_dynamics=False):
    """
    Return the joint parameters of ``--model-params`` / ``--urdf-dynamics`` for ``model``.

    ``rbd_ros.actuation.dynamics.load`` (None: neither); ReplayError naming the option when they do
    not fit the model.
    """
    try:
        return actuation.load(model, urdf_text, params_text, urdf_dynamics)
    except ValueError as exc:
        option = "--model-params" if params_text else "--urdf-dynamics"
        raise ReplayError(f"{option}: {shorten(exc, 200)}") from None


def compute_finite(model, outputs, q, v, a, tau, effort_known, joints=None):
    """
    Compute ``rbd_ros.outputs.compute_batch`` of N states, without the refused ones.

    With ``joints`` (``joint_model``) the outputs include the joint parameters
    (``rbd_ros.actuation.dynamics.compute_batch``, the node's computation).

    Returns (results, refused, error): results as ``compute_batch``'s ({name: (rows,
    arrays)}, rows indices into the N states) for the states whose every result is finite;
    ``refused`` (N,) bool; ``error`` the reason of the first refused state (None: none).
    """
    n = len(q)
    try:
        results = actuation.compute_batch(joints, model, outputs, q, v, a, tau, effort_known)
    except ValueError as exc:
        if n <= 1:                                 # "rnea_batch: sample 0: ..."
            return {}, np.ones(n, bool), re.sub(r"sample \d+: ", "", str(exc), count=1)
        h = n // 2
        parts = [compute_finite(model, outputs, *(x[s] for x in (q, v, a, tau, effort_known)),
                                joints=joints) for s in (slice(0, h), slice(h, n))]
        return (_concatenate(parts[0][0], parts[1][0], h), np.r_[parts[0][1], parts[1][1]],
                parts[0][2] or parts[1][2])
    refused = np.zeros(n, bool)
    for rows, arrays in results.values():
        for x in arrays:
            refused[rows[~np.isfinite(x.reshape(len(x), -1)).all(axis=1)]] = True
    if not refused.any():
        return results, refused, None
    return _without(results, refused), refused, NOT_FINITE


def _concatenate(first, second, offset):
    """Join the results of two consecutive runs of states (the second's rows from offset)."""
    out = {}
    for name in first.keys() | second.keys():
        parts = ([first[name]] if name in first else []) + \
            ([(second[name][0] + offset, second[name][1])] if name in second else [])
        out[name] = (np.concatenate([rows for rows, _ in parts]),
                     tuple(np.concatenate(xs) for xs in zip(*(arrays for _, arrays in parts))))
    return out


def _without(results, refused):
    """``results`` without the states ``refused`` (bool per state)."""
    out = {}
    for name, (rows, arrays) in results.items():
        keep = ~refused[rows]
        out[name] = (rows[keep], tuple(x[keep] for x in arrays))
    return out


class Batches:
    """
    The outputs of the answered messages, computed ``batch_size`` ticks at a time.

    Per joint_states message, {output: bytes} (``encode``) or {output: arrays}, with the
    joint parameters ``joints`` (``joint_model``) when given; ``tau`` the
    torques of every tick (NaN where refused), ``refused`` (ticks,) bool and ``refusal``
    (joint_states index, reason) of the first refused message, or None.
    """

    def __init__(self, model, t, outputs, batch_size, timing, encode, joints=None, frame=""):
        self.model, self.t, self.outputs, self.joints = model, t, outputs, joints
        self.batch_size, self.timing, self.encode = batch_size, timing, encode
        self.frame = frame
        self.whole_body = tuple(n for n in outputs if n in whole_body.NAMES)
        self.templates = templates(model, outputs, frame) if encode else None
        self.tick_of = np.full(t.messages, -1)
        self.tick_of[t.index] = np.arange(len(t.index))
        self.tau = np.full((len(t.index), len(model.joint_names)), np.nan)
        self.refused = np.zeros(len(t.index), bool)
        self.refusal = None
        self.lo = self.hi = 0
        self.chunk = {}
        timing.setdefault("dynamics", 0.0)
        timing.setdefault("encode", 0.0)

    def items(self, m):
        """{output: bytes or arrays} of joint_states message ``m`` ({} when not answered)."""
        k = self.tick_of[m]
        if k < 0:
            return {}
        if k >= self.hi:
            self._compute(k)
        return {name: item for name, rows in self.chunk.items()
                if (item := rows.get(k - self.lo)) is not None}

    def run(self):
        """Compute every batch (for ``refused``, without keeping the outputs)."""
        while self.hi < len(self.t.index):
            self._compute(self.hi)
        self.chunk = {}

    def _whole_body(self, span, arrays, refused):
        """
        Add the whole-body outputs' arrays of the states not ``refused`` (updated) in ``span``.

        ``whole_body.compute`` state by state, as the node's ticks; return the first
        refusal's reason (None: none).
        """
        t, error, rows, results = self.t, None, [], []
        for k in np.flatnonzero(~refused):
            s = span.start + k
            try:
                results.append(whole_body.compute(self.whole_body, self.model, t.q[s], t.v[s],
                                                  self.frame))
                rows.append(k)
            except ValueError as exc:
                refused[k] = True
                error = error or str(exc)
        if error is not None:                    # a refused state publishes none of its outputs
            keep = ~refused
            for name, (r, values) in list(arrays.items()):
                arrays[name] = (r[keep[r]], tuple(x[keep[r]] for x in values))
        rows = np.asarray(rows, np.int64)
        for name in self.whole_body:
            names = table.BY_NAME[name].results
            values = tuple(np.array([result[key] for result in results]).reshape(len(rows), -1)
                           for key in names)
            keep = ~refused[rows] if len(rows) else np.zeros(0, bool)
            arrays[name] = (rows[keep], tuple(x[keep] for x in values))
        return error

    def _compute(self, lo):
        t = self.t
        self.lo, self.hi = lo, min(lo + self.batch_size, len(t.index))
        c0 = time.perf_counter()
        span = slice(self.lo, self.hi)
        arrays, refused, error = compute_finite(self.model, self.outputs, t.q[span], t.v[span],
                                                t.a[span], t.tau_in[span],
                                                t.effort_known[span], self.joints)
        if self.whole_body:
            error = self._whole_body(span, arrays, refused) or error
        c1 = time.perf_counter()
        if error is not None:
            self.refused[span] = refused
            if self.refusal is None:
                first = self.lo + int(np.flatnonzero(refused)[0])
                self.refusal = (int(t.index[first]), shorten(error, 300))
        if "torques" in arrays:                    # not when every state is refused
            rows, (tau,) = arrays["torques"]
            self.tau[self.lo + rows] = tau
        self.chunk = {}
        for name, (rows, values) in arrays.items():
            if self.encode:
                k = self.lo + rows
                encoded = self.templates[name].encode(t.sec[k], t.nanosec[k], *values)
                self.chunk[name] = dict(zip(rows.tolist(), encoded))
            else:
                self.chunk[name] = {r: tuple(x[i] for x in values)
                                    for i, r in enumerate(rows.tolist())}
        self.timing["dynamics"] += c1 - c0
        self.timing["encode"] += time.perf_counter() - c1
