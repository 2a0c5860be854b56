"""
Contact awareness: external torques, collision detection and isolation, the contact wrench.

The external torques come from the generalized-momentum observer (De Luca & Mattone 2003;
Haddadin, De Luca, Albu-Schäffer, "Robot Collisions: A Survey on Detection, Isolation, and
Identification", T-RO 2017): from q, v and the measured efforts τ_m only,

    r = K [p − p(0) − ∫ (τ_m + Cᵀ v − g + τ_w − f(v) + r) ds],   p = (M + D) v,

so that ṙ = K (τ_ext − r) (``algorithms/momentum_observer.py``: the kernel, the derivation
and the discretization). :class:`MomentumObserver` steps it sample by sample (the node),
:func:`observe` over whole arrays (the replay): both run that one kernel, the same numbers.
On a floating base (its pose and twist in q, v) r covers every dof: the base rows are the
external wrench on the base coordinates.

:func:`isolate` flags a collision where |r| exceeds its thresholds and names the link: the
contact is on the links the most distal such joint moves (the survey's isolation rule), the
isolated link being that joint's child. :func:`contact_wrench` gives the wrench at a link's
frame that explains r, F̂ = (J_linkᵀ)⁺ r; :class:`MomentumObserver` given a ``frame`` computes
it in the same compiled call as r (the node's tick: one call).
"""
from collections import namedtuple

import numpy as np

from .. import _checks
from ..actuation.dynamics import Actuation
from ..algorithms.contact_wrench import RANK_SCALE, RCOND, contact_wrench_kernel
from ..algorithms.frame_jacobian import frame_jacobian
from ..algorithms.momentum_observer import momentum_observer_kernel
from ..actuation.joint_parameters import JointParameters
from ..model import Data
from ..model.model import link_table

_NAMES = ("q", "v", "tau", "fext", "t")
_NO_COUPLING = np.frombuffer(np.zeros((0, 3)).tobytes()).reshape(0, 3)   # read-only, empty


def _joint_table(model, joint_parameters):
    """Return ((4, nv) armature, viscous, Coulomb, offset; ε) of the dofs (zeros: none)."""
    if joint_parameters is None:
        return np.zeros((4, model.nv)), 0.01
    act = joint_parameters
    if isinstance(act, JointParameters):
        act = Actuation(act, model.nv_base)
    if not isinstance(act, Actuation) or act.armature.shape != (model.nv,):
        raise ValueError("joint_parameters must be rbd_ros.actuation.dynamics.Actuation or "
                         "joint_friction.JointParameters of this model's joints")
    return (np.array([act.armature, act.viscous, act.coulomb, act.offset], np.float64),
            float(act.epsilon))


def per_dof(model, value, name, low=0.0):
    """Return ``value`` (one number, or one per dof) as nv floats > ``low``; ValueError else."""
    try:
        x = np.array(value, np.float64).reshape(-1)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number or {model.nv} numbers") from None
    if x.size == 1:
        x = np.full(model.nv, x[0])
    if x.size != model.nv:
        raise ValueError(f"{name} must be one number or one per dof ({model.nv}), got "
                         f"{x.size}")
    if not np.all(np.isfinite(x)) or np.any(x <= low):
        raise ValueError(f"{name} must be finite and > {low:g}, got {_checks.excerpt(x)}")
    return x


class MomentumObserver:
    """
    The momentum observer of one model, stepped one sample at a time.

    ``gain``: K (1/s), one number or one per dof; ``joint_parameters``: an
    :class:`~rbd_ros.actuation.dynamics.Actuation` (or ``JointParameters``) whose armature,
    friction and offsets the robot has (None: none); ``max_gap`` (s): a sample more than that after
    the last one restarts it (so does a stamp not after the last one). :meth:`step` returns
    r; :attr:`restarted` says whether that sample (re)started it (then r = 0). ``frame``: a
    link (``model.link_frames``) whose contact wrench (:func:`contact_wrench`) each step
    computes too, in the same compiled call: :attr:`wrench` and :attr:`wrench_refusal`
    (None when it was had); :meth:`set_frame` changes it.

    Times are float seconds; :meth:`seconds` turns ROS stamps (sec, nanosec) into them,
    relative to the first stamp it saw since the start or :meth:`reset`: an absolute stamp
    (~1.7e9 s) has a float spacing of 2.4e-7 s, which would change r by ~3e-4 N·m at 1 kHz.
    """

    def __init__(self, model, gain, joint_parameters=None, max_gap=np.inf, frame=None):
        self.model = model
        self.joint, eps = _joint_table(model, joint_parameters)
        if not max_gap > 0:
            raise ValueError(f"max_gap must be > 0 s, got {max_gap!r}")
        self.settings = np.empty(2 + model.nv)
        self.settings[0], self.settings[1] = eps, max_gap
        self.set_gain(gain)
        data = Data(model)          # its own workspace: no call races it
        nvf = model.nv_full
        self._scratch = (model.packed, _coupling_table(model), data.body, data.full_q,
                         np.zeros((4, nvf)))
        self.state = np.zeros(3 + 5 * model.nv)
        self._v = np.zeros(5 * model.nv)
        self._jacobian = (np.zeros((6, model.nv)), np.zeros((model.nv + 2, 7)))
        self._one = (np.empty((1, model.nv)), np.zeros(1, np.int64), np.zeros(1, np.int64),
                     np.zeros((1, 6)), np.zeros(1, np.int64))
        self._no_fext = np.zeros((1, 0, 6))
        self._inputs = (np.empty(1), np.empty((1, model.nq)), np.empty((1, model.nv)),
                        np.empty((1, model.nv)))
        self.restarted = False
        self.origin = None            # the stamp (sec, nanosec) that :meth:`seconds` counts from
        self.wrench, self.wrench_refusal = None, None
        self.set_frame(frame)

    def set_frame(self, frame):
        """Set the link whose contact wrench each step computes (None or "": none)."""
        if not frame:
            self.frame, self._frame = None, (-1, np.zeros(12))
            return
        bodies, placements = link_table(self.model, [frame])
        self.frame, self._frame = frame, (int(bodies[0]), placements[0])

    @property
    def gain(self):
        return self.settings[2:].copy()

    def set_gain(self, gain):
        """Set K (1/s): one number or one per dof, finite and > 0. The state is kept."""
        self.settings[2:] = per_dof(self.model, gain, "gain")

    def reset(self):
        """Forget the state: the next sample restarts the observer."""
        self.state[:] = 0.0
        self.origin = None

    def seconds(self, sec, nanosec):
        """
        Return the stamps (sec, nanosec: integers or integer arrays) as float seconds.

        Relative to the first stamp seen since the start or :meth:`reset` (it becomes the
        origin): the difference is taken in integer nanoseconds, then converted once, so
        the same stamps give the same floats one at a time (the node) or all at once (the
        replay), and shifting every stamp by a constant changes nothing.
        """
        if type(sec) is int and type(nanosec) is int and self.origin is not None:
            # one stamp (the node's tick): int64 arithmetic, one conversion, as below
            elapsed = (sec - self.origin[0]) * 1_000_000_000 + (nanosec - self.origin[1])
            if -2 ** 63 <= elapsed < 2 ** 63:
                return np.float64(float(elapsed) * 1e-9)
        sec, nanosec = np.asarray(sec, np.int64), np.asarray(nanosec, np.int64)
        if self.origin is None:
            if sec.size == 0:
                return np.zeros(sec.shape)
            self.origin = (int(sec.reshape(-1)[0]), int(nanosec.reshape(-1)[0]))
        elapsed = (sec - self.origin[0]) * 1_000_000_000 + (nanosec - self.origin[1])
        return elapsed.astype(np.float64) * 1e-9

    def step(self, t, q, v, tau, fext=None):
        """
        Return r (nv) after the sample at time ``t`` (s); ``fext``: measured wrenches.

        A bad sample raises ValueError naming the argument; the state is then unchanged.
        """
        r, restarted, status, w, rank = self._one
        fext = self._no_fext if fext is None else _checks.matrix(fext, "fext", 2)[None]
        inputs = self._inputs
        if _fits(q, inputs[1]) and _fits(v, inputs[2]) and _fits(tau, inputs[3]) and \
                isinstance(t, (float, int, np.floating)) and not isinstance(t, bool):
            inputs[0][0], inputs[1][0], inputs[2][0], inputs[3][0] = t, q, v, tau  # no copy made
            arrays = inputs
        else:                        # anything else: converted (and named when it cannot be)
            arrays = (_checks.matrix([t], "t", 1), _row(q, "q"), _row(v, "v"),
                      _row(tau, "tau"))
        self._run(*arrays, fext, r, restarted, status, w, rank)
        if status[0]:
            values = tuple(x[0] for x in arrays[1:]) + (fext[0], arrays[0])
            raise _checks.input_error("MomentumObserver.step", status[0], self.model, _NAMES,
                                      values)
        self.restarted = bool(restarted[0])
        if self.frame is not None:
            self.wrench_refusal = wrench_refusal(self.frame, int(rank[0]))
            self.wrench = None if self.wrench_refusal else w[0].copy()
        return r[0].copy()

    def run(self, t, q, v, tau, fext=None):
        """Step over N samples: return (r (N, nv), restarted (N,) bool, status (N,) int)."""
        return self.run_with_wrench(t, q, v, tau, fext)[:3]

    def run_with_wrench(self, t, q, v, tau, fext=None):
        """
        Step over N samples: :meth:`run`'s (r, restarted, status), then wrench, rank.

        wrench (N, 6) at the ``frame`` (zeros where none), rank (N,) its rank status
        (:func:`wrench_refusal`; -1: the sample refused); (0, 6) and (0,) without a frame.
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
        r = np.empty((n, self.model.nv))
        restarted, status = np.zeros(n, np.int64), np.zeros(n, np.int64)
        w = np.zeros((n if self.frame else 0, 6))
        rank = np.full(len(w), -1, np.int64)
        if n:
            self._run(t, q, v, tau, fext, r, restarted, status, w, rank)
        return r, restarted.astype(bool), status, w, rank

    def _run(self, t, q, v, tau, fext, r, restarted, status, w, rank):
        nq, nv = self.model.nq, self.model.nv
        if q.shape[1] != nq or v.shape[1] != nv or tau.shape[1] != nv:
            bad = next(k for k, (x, n) in enumerate(((q, nq), (v, nv), (tau, nv)))
                       if x.shape[1] != n)
            status[:] = (bad + 1) * 4 + 1
            r[:] = self.state[3 + 3 * nv:3 + 4 * nv]
            rank[:] = -1
            return
        if fext.shape[1] not in (0, self.model.nbodies) or fext.shape[2] != 6:
            status[:] = 4 * 4 + 1
            r[:] = self.state[3 + 3 * nv:3 + 4 * nv]
            rank[:] = -1
            return
        if self.frame is None:
            w, rank = w[:0], rank[:0]
        if momentum_observer_kernel(*self._scratch, self.joint, self.settings, self.state,
                                    self._v, t, q, v, tau, fext, *self._frame,
                                    *self._jacobian, r, w, rank, restarted, status) < 0:
            raise ValueError(f"the contact frame {self.frame!r} does not fit the model")


def _fits(x, row):
    """Whether ``x`` is a float64 vector of ``row``'s length (copied without conversion)."""
    return isinstance(x, np.ndarray) and x.dtype == np.float64 and x.shape == row.shape[1:]


def _row(x, name):
    return _checks.matrix(x, name, 1)[None]


def _coupling_table(model):
    return _NO_COUPLING if model.coupling is None else model.coupling.table


def observe(model, t, q, v, tau, gain, fext=None, joint_parameters=None, max_gap=np.inf):
    """
    Return (r, restarted, status) of the observer run over N samples from rest.

    t (N,) s; q (N, nq); v, tau (N, nv); fext (N, nbodies, 6) or None. ``r`` (N, nv),
    ``restarted`` (N,) where a sample (re)started it, ``status`` (N,) nonzero for a refused
    sample (``rbd_ros._checks.input_error`` explains it; r then holds the last value).
    The same numbers as :class:`MomentumObserver` stepped sample by sample.
    """
    return MomentumObserver(model, gain, joint_parameters, max_gap).run(t, q, v, tau, fext)


Isolation = namedtuple("Isolation", "in_collision joints link peak_ratio")
Isolation.__doc__ = """
A collision check of one r: ``joints`` the dof indices over threshold, ``link`` the isolated
link (body name; None when none), ``peak_ratio`` max |r| / threshold over every dof.
"""


def dof_bodies(model):
    """Return the body each dof of the model moves first (base dofs: body 0)."""
    dofs = np.diff(np.append(model.idx_v, model.nv_full))    # each body's joint's dofs
    full = np.repeat(np.arange(model.nbodies), dofs)
    if model.coupling is None:
        return full
    base = model.nv_base
    return np.r_[full[:base], full[base + np.asarray(model.coupling.independent_index,
                                                     np.intp)]]


def body_depths(model):
    depth = np.zeros(model.nbodies, np.int64)
    for i in range(model.nbodies):
        if model.parent[i] >= 0:
            depth[i] = depth[model.parent[i]] + 1
    return depth


def isolate(model, r, thresholds):
    """
    Return the :class:`Isolation` of r against ``thresholds`` (one per dof, or one number).

    Over threshold: |r_j| > threshold_j. The isolated link is the child of the most distal
    dof over threshold (deepest in the tree; ties: the last in v order): a contact torques
    only the joints that support the touched link, so the deepest torqued joint moves it.
    """
    th = per_dof(model, thresholds, "thresholds")
    ratio = np.abs(np.asarray(r, np.float64)) / th
    over = np.flatnonzero(ratio > 1.0)
    peak = float(ratio.max()) if ratio.size else 0.0
    if over.size == 0:
        return Isolation(False, (), None, peak)
    bodies = dof_bodies(model)[over]
    depth = body_depths(model)[bodies]
    distal = bodies[np.flatnonzero(depth == depth.max())[-1]]
    return Isolation(True, tuple(int(j) for j in over), model.body_names[distal], peak)


class CollisionState:
    """
    The collision state of a stream of r, changed by :meth:`update`: the rule of ~/collision.

    The state is (in collision, isolated link): as r rises, a joint nearer the base may cross
    its threshold before the one that isolates the contact, so a new link is a change too.
    The node's ``ContactMonitor`` and the replay share it, so they publish the same messages.
    """

    def __init__(self, model, thresholds):
        self.model = model
        self.thresholds = per_dof(model, thresholds, "collision_thresholds")
        self.state = (False, None)
        self.isolation = None

    def update(self, r):
        """Check r against the thresholds; return whether the state changed."""
        if self.state[0] is False and not (np.abs(r) > self.thresholds).any():
            return False          # the usual sample: ~2 µs, where isolate takes ~30 µs
        self.isolation = isolate(self.model, r, self.thresholds)
        state = (self.isolation.in_collision, self.isolation.link)
        changed = state != self.state
        self.state = state
        return changed


def frame_problem(model, link):
    """Say why the contact wrench at ``link`` (contact_frame) cannot be had, or None."""
    if not link:
        return None
    if link not in model.link_frames:
        names = list(model.link_frames)
        return (f"contact_frame {link[:60]!r} is not a link of the model (its links: "
                f"{', '.join(names[:8])}{', ...' if len(names) > 8 else ''})")
    try:
        contact_wrench(model, model.neutral(), np.zeros(model.nv), link)
    except ValueError as exc:
        return f"contact_frame: {exc}"
    return None


def link_jacobian_transpose(model, q, link):
    """Return Jᵀ (nv × 6) of ``link``'s frame at q: τ = Jᵀ [f; n] for a wrench at its origin."""
    return frame_jacobian(model, q, link).T


def wrench_refusal(link, rank):
    """Say why the contact wrench at ``link`` was not had, from its rank status, or None."""
    rank6, rank3 = rank % RANK_SCALE, rank // RANK_SCALE
    if rank < 0:
        return "the observer refused the sample"
    if rank6 == 6 or rank3 == 3:
        return None
    if rank < RANK_SCALE:
        return (f"the contact wrench at {link!r} needs 6 independent directions, its chain "
                f"gives {rank6} (fewer than 6 dof, or a singular pose): estimate the force "
                "only (force_only, contact at the frame's origin)")
    return (f"the contact force at {link!r} needs 3 independent directions, its chain gives "
            f"{rank3}")


def contact_wrench(model, q, r, link, force_only=False, rcond=RCOND):
    """
    Return F̂ = [f; n] (6) at ``link``'s frame origin in its axes: (J_linkᵀ)⁺ r, least squares.

    It needs six independent directions of the link's motion (six dof in its chain): with
    fewer, a ValueError says so, unless ``force_only``: the contact is then taken as a pure
    force at the frame's origin (n = 0), f = (J_vᵀ)⁺ r, which needs three. One compiled
    call (``algorithms/contact_wrench.py``: the frame's Jacobian, a pivoted QR).
    """
    bodies, placements = link_table(model, [link])
    q = _checks.matrix(q, "q", 1)
    r = _checks.matrix(r, "r", 1)
    if r.shape != (model.nv,):
        raise ValueError(f"r must have {model.nv} entries, got {r.shape[0]}")
    data = model.data
    out, rank = np.zeros(6), np.zeros(1, np.int64)
    status = contact_wrench_kernel(model.packed, _coupling_table(model), data.body,
                                   data.full_q, q, int(bodies[0]), placements[0], r,
                                   int(bool(force_only)), float(rcond), np.zeros((6, model.nv)),
                                   np.zeros((model.nv + 2, 7)), out, rank)
    if status:
        raise _checks.input_error("contact_wrench", status, model, ("q", "r"), (q, r))
    why = wrench_refusal(link, int(rank[0]))
    if why:
        raise ValueError(why)
    return out
