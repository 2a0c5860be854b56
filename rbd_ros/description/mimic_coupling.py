"""
Mimic joints, coupled: which joint follows which, and the public calls on the reduced system.

A :class:`Coupling` is built once per model (``load_model(..., mimic="coupled")``, the
default) from the tree's joint names and the URDF's mimic tags. It holds the constant
coupling matrix G, the table the compiled steps read (``algorithms/mimic.py``) and, as
methods, the coupled form of every public call: ``rbd_ros.rnea(model, ...)`` and the others
route to ``model.coupling.rnea(model, ...)`` when the model has one, which runs one kernel
of ``algorithms/coupled.py``. The math, and why ABA and M⁻¹ run on the reduced system
rather than through their recursions, is in those two modules.
"""
import types

import numpy as np

from .. import _checks
from ..algorithms import coupled as _k
from ..algorithms.coriolis import coupled_coriolis_kernel
from ..algorithms.compute_all import Dynamics

# rad or m: how far a follower's published position may be from its leader's coupling before
# the node and the replay say so. joint_state_publisher computes followers from their leaders
# (agreement to round-off); a driver that measures each finger may differ by more.
MIMIC_TOLERANCE = 1e-3


class Coupling:
    """
    The mimic joints of a tree: q_m = multiplier · q_leader + offset.

    ``joint_names``: the tree's movable joints in q order (followers included); ``base``:
    (nq_base, nv_base), the entries of q and v of the root's base joint (a free flyer, a
    planar joint) before them, (0, 0) on a fixed base; ``followers``:
    {follower: (leader, multiplier, offset)}. A follower of a follower is resolved to the
    independent joint at the end of its chain (multipliers multiply, offsets compose); a
    cycle or a leader that is not one of ``joint_names`` is a ValueError.

    Attributes: ``joint_names``, ``base``, ``floating_base``, ``followers`` (resolved, read-only
    mapping), ``independent`` (the names of the model's joints) and ``independent_index``
    (their places in ``joint_names``), ``nq_full``, ``nv_full``, ``nq``, ``nv``, ``G``
    (nv_full × nv, read-only) and ``table`` (``algorithms/mimic.py``).
    """

    def __init__(self, joint_names, base, followers):
        joint_names = tuple(joint_names)
        resolved = _resolve(joint_names, dict(followers))
        independent_index = tuple(k for k, n in enumerate(joint_names) if n not in resolved)
        place = {joint_names[k]: r for r, k in enumerate(independent_index)}
        base_q, base_v = (int(n) for n in base)
        nq_full, nv_full = base_q + len(joint_names), base_v + len(joint_names)
        nq, nv = base_q + len(place), base_v + len(place)
        table = np.zeros((1 + nq_full + nv_full, 3))
        table[0, :2] = nq, nv
        q_rows, v_rows = table[1:1 + nq_full], table[1 + nq_full:]
        q_rows[:base_q, 0], q_rows[:base_q, 1] = np.arange(base_q), 1.0
        v_rows[:base_v, 0], v_rows[:base_v, 1] = np.arange(base_v), 1.0
        for k, name in enumerate(joint_names):
            leader, multiplier, offset = resolved.get(name, (name, 1.0, 0.0))
            q_rows[base_q + k] = base_q + place[leader], multiplier, offset
            v_rows[base_v + k] = base_v + place[leader], multiplier, 0.0
        G = np.zeros((nv_full, nv))
        G[np.arange(nv_full), v_rows[:, 0].astype(np.intp)] = v_rows[:, 1]
        self.joint_names, self.base = joint_names, (base_q, base_v)
        self.floating_base = base_v > 0
        self.followers = types.MappingProxyType(resolved)
        self.independent = tuple(joint_names[k] for k in independent_index)
        self.independent_index = independent_index
        self.nq_full, self.nv_full, self.nq, self.nv = nq_full, nv_full, nq, nv
        self.G = _frozen(G)
        self.table = _frozen(table)

    def __reduce__(self):
        """Pickle what it is made from (its followers resolved: resolving them is exact)."""
        return Coupling, (self.joint_names, self.base, dict(self.followers))

    def __repr__(self):
        pairs = ", ".join(f"{f} = {m:g}·{lead} + {o:g}"
                          for f, (lead, m, o) in self.followers.items())
        return f"<rbd_ros.Coupling {pairs}>"

    def expand(self, q):
        """Return the full configuration (every joint of the tree) of the model's q."""
        q = np.asarray(q, np.float64)
        rows = self.table[1:1 + self.nq_full]
        return rows[:, 1] * q[rows[:, 0].astype(np.intp)] + rows[:, 2]

    # -- the public calls on the reduced system (rbd_ros.rnea & co. route here) -----------
    # Each writes its results into the arrays the public call made or took (``out=``).
    def rnea(self, model, q, v, a, fext, data, tau):
        data = _checks.workspace(model, data)
        _call("rnea", _k.coupled_rnea_kernel, model, _STATE, (q, v, a, _fext(fext, data)),
              _scratch(model, data, "full_q", "full_v"), (tau,))
        return tau

    def crba(self, model, q, data, M):
        data = _checks.workspace(model, data)
        _call("crba", _k.coupled_crba_kernel, model, ("q",), (q,),
              _scratch(model, data, "full_q", "full_matrices"), (M,))
        return M

    def aba(self, model, q, v, tau, fext, data, qdd):
        data = _checks.workspace(model, data)
        _call("aba", _k.coupled_aba_kernel, model, _FORWARD, (q, v, tau, _fext(fext, data)),
              _scratch(model, data, *_FORWARD_SCRATCH), (qdd,))
        return qdd

    def minv(self, model, q, data, Minv, function="minv"):
        data = _checks.workspace(model, data)
        _call(function, _k.coupled_minv_kernel, model, ("q",), (q,),
              _scratch(model, data, "full_q", "full_matrices", "reduced_matrices"), (Minv,))
        return Minv

    def coriolis_matrix(self, model, q, v, data, C):
        data = _checks.workspace(model, data)
        _call("coriolis_matrix", coupled_coriolis_kernel, model, ("q", "v"), (q, v),
              _scratch(model, data, "dof", "body_matrix", "full_q", "full_v", "full_matrices"),
              (C,))
        return C

    def rnea_derivatives(self, model, q, v, a, fext, data, out):
        return _derivatives("rnea_derivatives", _k.coupled_rnea_derivatives_kernel, _STATE,
                            ("full_q", "full_v", "full_matrices"), model, (q, v, a, fext), data,
                            out)

    def aba_derivatives(self, model, q, v, tau, fext, data, out):
        return _derivatives("aba_derivatives", _k.coupled_aba_derivatives_kernel, _FORWARD,
                            _FORWARD_SCRATCH, model, (q, v, tau, fext), data, out)

    def compute_all(self, model, q, v, a, tau, fext, data, out):
        data = _checks.workspace(model, data)
        nv = model.nv
        a = data.zeros_v if a is None else a
        _call("compute_all", _k.coupled_compute_all_kernel, model, _BOTH,
              (q, v, a, tau, _fext(fext, data)),
              _scratch(model, data, "dof", "body_matrix", *_FORWARD_SCRATCH), (out,))
        return Dynamics(out[5 * nv], out[5 * nv + 1], out[0:nv], out[nv:2 * nv],
                        out[2 * nv:3 * nv], out[3 * nv:4 * nv], out[4 * nv:5 * nv])

    def inverse_and_forward_dynamics(self, model, q, v, a, tau, fext, data, tau_id, qdd):
        data = _checks.workspace(model, data)
        _call("inverse_and_forward_dynamics", _k.coupled_inverse_and_forward_kernel, model,
              _BOTH, (q, v, a, tau, _fext(fext, data)),
              _scratch(model, data, "full_q", "full_v", "full_matrices", "reduced_matrices"),
              (tau_id, qdd))
        return tau_id, qdd

    def joint_torque_regressor(self, model, q, v, a, data, Y):
        data = _checks.workspace(model, data)
        _call("joint_torque_regressor", _k.coupled_regressor_kernel, model, _STATE[:3],
              (q, v, a), _scratch(model, data, "regressor_block", "full_q", "full_v",
                                  "full_regressor"), (Y,))
        return Y

    def integrate(self, model, q, dv, out=None):
        out = np.empty(model.nq) if out is None else out
        _call("integrate", _k.coupled_integrate_kernel, model, ("q", "dv"), (q, dv),
              (model.packed, self.table), (out,))
        return out

    def finite_differences(self, function, name, model, q, v, u, fext, eps, central, data,
                           out):
        """
        Write the finite-difference Jacobians of ``function`` (rnea or aba) in q, v, u into ``out``.

        On the reduced system, central (or forward) differences of the coupled calls, steps
        along the model's tangent space (:meth:`integrate`); a test and benchmark baseline.
        """
        def f(q, v, u):
            return function(model, q, v, u, fext, data=data)
        names = ("q", "v", "a" if name.startswith("rnea") else "tau")
        q, v, u = (_checks.vector(x, n) for x, n in zip((q, v, u), names))
        f0 = f(q, v, u)                               # checks the inputs
        nv = model.nv
        lo = -eps if central else 0.0
        for k in range(nv):
            step = np.zeros(nv)
            values = []
            for h in (eps, lo):
                step[k] = h
                if h == 0.0:
                    values.append((f0, f0, f0))
                    continue
                values.append((f(self.integrate(model, q, step), v, u), f(q, v + step, u),
                               f(q, v, u + step)))
            for d in range(3):
                out[d][:, k] = (values[0][d] - values[1][d]) / (eps - lo)
        return out


_STATE = ("q", "v", "a", "fext")
_FORWARD = ("q", "v", "tau", "fext")
_BOTH = ("q", "v", "a", "tau", "fext")
_FORWARD_SCRATCH = ("full_q", "full_v", "full_matrices", "reduced_matrices", "reduced_v")


def _scratch(model, data, *names):
    """Return a coupled kernel's leading arguments: the model, its table, workspace arrays."""
    return (model.packed, model.coupling.table, data.body) + tuple(getattr(data, n)
                                                                   for n in names)


def _derivatives(function, kernel, names, scratch, model, inputs, data, out):
    """Run a derivatives kernel into ``out``: three nv × nv results."""
    data = _checks.workspace(model, data)
    *state, fext = inputs
    _call(function, kernel, model, names, (*state, _fext(fext, data)),
          _scratch(model, data, "dof", "body_matrix", *scratch), out)
    return out


def _fext(fext, data):
    return data.no_fext if fext is None else fext


def _call(function, kernel, model, names, inputs, leading, outputs):
    """
    Run ``kernel(*leading, *inputs, *outputs)``; raise the ValueError of a nonzero status.

    Inputs that are not float64 C arrays make the kernel raise TypeError: they are converted
    once (``rbd_ros._checks``) and the kernel called again.
    """
    try:
        status = kernel(*leading, *inputs, *outputs)
    except (TypeError, ValueError):   # ValueError: numba cannot type an empty list
        inputs = tuple(_checks.matrix(x, n) if n == "fext" else _checks.vector(x, n)
                       for x, n in zip(inputs, names))
        status = kernel(*leading, *inputs, *outputs)
    if status:
        raise _checks.input_error(function, status, model, names, inputs)


def _frozen(values):
    values = np.array(values, np.float64)
    values.flags.writeable = False
    return values


def _resolve(joint_names, followers):
    """
    Return {follower: (independent leader, multiplier, offset)} with chains resolved.

    q_a = m_a q_b + o_a and q_b = m_b q_c + o_b give q_a = m_a m_b q_c + (m_a o_b + o_a).
    """
    known = set(joint_names)
    resolved = {}
    for follower in followers:
        if follower not in known:
            raise ValueError(f"mimic joint {follower!r} is not a movable joint of the tree")
        multiplier, offset, chain, joint = 1.0, 0.0, [follower], follower
        while joint in followers:
            leader, m, o = followers[joint]
            if leader not in known:
                raise ValueError(f"joint {joint!r} mimics {leader!r}, which is not a movable "
                                 "joint of the tree")
            multiplier, offset = multiplier * float(m), offset + multiplier * float(o)
            if leader in chain:
                raise ValueError(f"mimic joints form a cycle: {' -> '.join(chain + [leader])}")
            chain.append(leader)
            joint = leader
        if not (np.isfinite(multiplier) and np.isfinite(offset)):
            raise ValueError(f"mimic joint {follower!r}: multiplier {multiplier} or offset "
                             f"{offset} is not finite")
        resolved[follower] = (joint, multiplier, offset)
    return resolved
