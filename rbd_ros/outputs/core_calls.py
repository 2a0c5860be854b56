"""
The core results of the outputs: one state's cheapest core call (node), many states' (replay).

:func:`compute` runs one of ``CALLS`` per tick; :func:`compute_batch` runs the core's batch
API over N states.
"""
import functools
from typing import NamedTuple

import numpy as np

from .. import _checks, batch
from ..algorithms.calls import compute_all, inverse_and_forward_dynamics, rnea
from ..algorithms.compute_all import compute_all_kernel
from ..algorithms.entries import kernel_arguments
from .table import CALLS, OUTPUTS, WHOLE_BODY_RESULTS


class Computation(NamedTuple):
    """One tick's work: the core call (a name of ``CALLS``) and the outputs it publishes."""

    call: str
    outputs: tuple


def computation(enabled, effort_known):
    """
    Return the :class:`Computation` of a tick with the outputs ``enabled`` (names).

    The outputs that need the effort are left out when it is unknown; the call is the
    cheapest of ``CALLS`` that gives their results (rnea alone for torques,
    inverse_and_forward_dynamics with accelerations, compute_all once a matrix is needed).
    """
    published = tuple(o for o in OUTPUTS if o.name in enabled
                      and (effort_known or not o.needs_effort))
    needed = {r for o in published for r in o.results} - set(WHOLE_BODY_RESULTS)
    call = next(name for name, results in CALLS if needed <= set(results))
    return Computation(call, published)


class ResultBuffer:
    """
    The preallocated results of ``compute_all`` at one state of ``model``, reused per call.

    A caller that computes every tick (the node) gives it to ``outputs.compute``: the call
    writes into ``block`` (``compute_all``'s ``out=``, (5 nv + 2) x nv: 41 KB on talos)
    instead of allocating it, and the results are ``views`` of it, made once. Each call
    overwrites them. Not for a model with coupled mimic joints (its reduced system's
    results are not views of one block): ``outputs.result_buffer`` gives None there.
    """

    def __init__(self, model):
        nv, nb = model.nv, model.nv_base
        self.model = model
        self.block = block = np.empty((5 * nv + 2, nv))
        tau = block[5 * nv]
        self.views = {"tau": tau, "joint_tau": tau[nb:], "qdd": block[5 * nv + 1],
                      "Minv": block[0:nv], "dtau_dq": block[nv:2 * nv],
                      "dtau_dv": block[2 * nv:3 * nv], "dqdd_dq": block[3 * nv:4 * nv],
                      "dqdd_dv": block[4 * nv:5 * nv]}
        self.bound = None             # :meth:`bind`'s (q, v, a, tau, prepared call)

    def bind(self, q, v, a, tau):
        """
        Prepare ``compute``'s call at exactly these arrays, read in place at each call.

        q, v, a, tau: float64 C vectors of nq, nv, nv and nv that stay the caller's (the
        node's ``Robot`` arrays), or ValueError. A ``compute`` of them without fext then calls
        the kernel through its entry point with the arguments gathered here (in
        ``model.data``, as ``compute_all`` without ``data=``): the wrapper's tests of types
        ran once, here (the output block is the buffer's own); the kernel still checks sizes
        and values at every call, and a refused call goes through ``compute_all`` again,
        which raises its ValueError. Why: a tick follows the node's sleep, its caches cold,
        and there each Python step of the wrapper costs several times its hot time
        (``bench/core_paced.py``'s evicted way; figures in doc/benchmarks.md).
        """
        model, data = self.model, self.model.data
        for name, x, size in zip(("q", "v", "a", "tau"), (q, v, a, tau),
                                 (model.nq, model.nv, model.nv, model.nv)):
            _checks.bound_vector(x, name, size)
        arguments = kernel_arguments("compute_all", model, data, q=q, v=v, a=a, tau=tau,
                                     fext=data.no_fext, out=self.block)
        self.bound = (q, v, a, tau, functools.partial(compute_all_kernel.entry_point(),
                                                      *arguments))


def result_buffer(call, model):
    """
    Return a :class:`rbd_ros.outputs.ResultBuffer` for ``call`` at ``model``.

    None for a call other than ``compute_all`` and for a model with coupled mimic joints.
    """
    if call != "compute_all" or model.coupling is not None:
        return None
    return ResultBuffer(model)


def compute(call, model, q, v, a, tau, fext=None, buffer=None):
    """
    Run one core ``call`` at one state and return its results.

    The results are a dict (see ``RESULTS``); ``tau`` is the measured effort of every dof;
    ``fext`` (nbodies, 6) or None: the measured wrenches on the bodies
    (``rbd_ros.contact.measured_wrenches``),
    acting on every result.
    Raises the core's ValueError, also for any result that is not finite, so every value
    returned is finite (NOT_FINITE): each kernel checks what it returns (``rnea``: τ;
    ``inverse_and_forward_dynamics``: τ, then q̈; ``compute_all``: its whole output block,
    τ and q̈ included). One result is covered without a check of its own: the reduced τ of
    a model with coupled mimic joints in ``inverse_and_forward_dynamics`` (Gᵀ τ_full: the
    full τ is checked, and a sum of finite terms can still overflow). q̈ is computed from
    it, a + M_r⁻¹ (τ_in − τ), by substitutions that keep a NaN or inf in its own entry
    (one that is not finite minus anything, divided by a positive pivot, is not finite),
    and q̈ is checked: a non-finite τ makes the call raise.
    ``buffer``: a :func:`result_buffer` of ``call`` (or None): the results are its views,
    overwritten by the next call with it.
    """
    nb = model.nv_base
    if call == "compute_all":
        if buffer is not None:      # a fresh dict of the same views: callers add to theirs
            bound = buffer.bound
            if (bound is None or fext is not None or q is not bound[0] or v is not bound[1]
                    or a is not bound[2] or tau is not bound[3] or model is not buffer.model
                    or bound[4]()):               # a status: the checked call raises it
                compute_all(model, q, v, a=a, tau=tau, fext=fext, out=buffer.block)
            return dict(buffer.views)
        d = compute_all(model, q, v, a=a, tau=tau, fext=fext)
        return {"tau": d.tau, "joint_tau": d.tau[nb:], "qdd": d.qdd, "Minv": d.Minv,
                "dtau_dq": d.dtau_dq, "dtau_dv": d.dtau_dv, "dqdd_dq": d.dqdd_dq,
                "dqdd_dv": d.dqdd_dv}
    if call == "inverse_and_forward_dynamics":
        t, qdd = inverse_and_forward_dynamics(model, q, v, a=a, tau=tau, fext=fext)
        return {"tau": t, "joint_tau": t[nb:], "qdd": qdd}
    t = rnea(model, q, v, a, fext)
    return {"tau": t, "joint_tau": t[nb:]}


# result -> (function of rbd_ros.batch, its input after q and v, which of its return values)
_BATCH = {"tau": ("rnea_batch", "a", None), "qdd": ("aba_batch", "tau", None),
          "Minv": ("minv_batch", None, None),
          "dtau_dq": ("rnea_derivatives_batch", "a", 0),
          "dtau_dv": ("rnea_derivatives_batch", "a", 1),
          "dqdd_dq": ("aba_derivatives_batch", "tau", 0),
          "dqdd_dv": ("aba_derivatives_batch", "tau", 1)}


def compute_batch(model, enabled, q, v, a, tau, effort_known):
    """
    Compute the outputs ``enabled`` of N states with the core's batch API.

    q, v, a, tau: (N, ·), effort_known: (N,). Returns {name: (rows, arrays)}, ``rows`` the
    states that publish it (those with a known effort for the outputs that need it; see
    :func:`computation`).
    """
    nb = model.nv_base
    rows = {False: np.arange(len(q)), True: np.flatnonzero(effort_known)}
    select = {False: slice(None), True: rows[True]}
    inputs = {"a": a, "tau": tau}
    done, out = {}, {}
    for o in OUTPUTS:
        if o.name not in enabled or set(o.results) <= set(WHOLE_BODY_RESULTS):
            continue                # the whole-body outputs: whole_body.compute_batch
        s = select[o.needs_effort]
        arrays = []
        for result in o.results:
            function, arg, pick = _BATCH["tau" if result == "joint_tau" else result]
            key = (function, o.needs_effort)
            if key not in done:
                args = (q[s],) if arg is None else (q[s], v[s], inputs[arg][s])
                done[key] = getattr(batch, function)(model, *args)
            value = done[key] if pick is None else done[key][pick]
            arrays.append(value[:, nb:] if result == "joint_tau" else value)
        out[o.name] = (rows[o.needs_effort], tuple(arrays))
    return out
