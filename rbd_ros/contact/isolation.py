"""
Collision detection and isolation from the observer's r, and the thresholds and gains it takes.

:func:`isolate` flags a collision where |r| exceeds its thresholds and names the link: the
contact is on the links the most distal such joint moves (the survey's isolation rule), the
isolated link being that joint's child. :class:`CollisionState` is the rule of ~/collision
that the node and the replay share: on a change of the state (in collision, isolated link,
observing). The observer cannot observe (``observing`` false) once its last
:data:`BLIND_AFTER` samples all gave no estimate: skipped (a stamp not after the newest),
refused (efforts unknown or non-finite), resetting (an overflow) or restarting.
"""
from collections import namedtuple

import numpy as np

from .. import _checks
from .._jit import f64_1d, f64_1d_ro, i64_1d, i64_1d_ro, int64, kernel
from ..algorithms.entries import first_entry

# N·m: collision_thresholds below it are refused. Far below any effort sensor's resolution
# (~1e-3 N·m), and with it r / threshold stays finite for every r the observer keeps (it
# resets where |r| would exceed samples.R_LIMIT, 1e150 N·m)
MIN_THRESHOLD = 1e-6
# samples: the observer cannot observe once this many in a row gave no estimate of r (stamps
# quantized to 10 ms at 1 kHz skip 9 in a row and still observe)
BLIND_AFTER = 50
# why a sample gave no estimate (``CollisionState.reason``; the node's and the replay's)
EFFORTS_UNKNOWN = "the joint efforts are unknown (NaN, inf or absent)"
STAMP_SKIPPED = "its stamp is not after the newest one (repeated, late or quantized)"
OVERFLOWED = "its state would overflow (reset)"
REFUSED = "the sample was refused (non-finite or too large)"
RESTARTING = "it is restarting (its first samples, after a stamp gap, a reset or an overflow)"


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


def collision_thresholds(model, value, name="collision_thresholds"):
    """Return collision thresholds (one, or one per dof) as nv floats ≥ MIN_THRESHOLD."""
    x = per_dof(model, value, name)
    if np.any(x < MIN_THRESHOLD):
        raise ValueError(f"{name} must be at least {MIN_THRESHOLD:g} N·m (far below any "
                         f"effort sensor's resolution), got {_checks.excerpt(x)}")
    return x


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
    Detect a collision in r and name the link it is on (isolation).

    Over threshold: ``|r_j| > threshold_j``. The isolated link is the child of the most distal
    dof over threshold (deepest in the tree; ties: the last in v order): a contact torques
    only the joints that support the touched link, so the deepest torqued joint moves it.

    Parameters
    ----------
    model : Model
        The robot.
    r : array_like, shape (nv,)
        The observer's external torque estimate (N·m or N).
    thresholds : float or array_like, shape (nv,)
        N·m (N), at least ``MIN_THRESHOLD``: one number or one per dof.

    Returns
    -------
    Isolation
        ``(in_collision, joints, link, peak_ratio)``: whether any dof is over its threshold,
        those dofs (indices in v), the isolated link's body name (None without collision)
        and the largest ``|r_j| / threshold_j``.

    Raises
    ------
    ValueError
        For an r of another size than nv, and for thresholds that are not finite, below
        ``MIN_THRESHOLD`` or of another size.

    """
    th = collision_thresholds(model, thresholds, "thresholds")
    bodies = dof_bodies(model)
    over, peak = np.empty(model.nv + 1, np.int64), np.empty(1)
    return isolation(model, isolation_kernel(_r_vector(model, r), th, body_depths(model)[bodies],
                                             over, peak), over, peak, bodies)


def _r_vector(model, r):
    """Return ``r`` as nv contiguous float64 (any shape of nv numbers); ValueError else."""
    x = np.ascontiguousarray(r, np.float64).reshape(-1)
    if x.size != model.nv:
        raise ValueError(f"r must have {model.nv} entries (one per dof), got {x.size}")
    return x


@kernel(int64(f64_1d_ro, f64_1d_ro, i64_1d_ro, i64_1d, f64_1d))
def isolation_kernel(r, thresholds, depths, over, peak):
    """
    Find the dofs where |r_j| > threshold_j; return their number n (-1: sizes that differ).

    Writes them in v order to ``over[1:n + 1]``, the most distal of them (the deepest
    ``depths`` entry; ties: the last in v order) to ``over[0]`` (-1 without any) and the
    largest |r_j| / threshold_j to ``peak[0]`` (NaN where one is NaN, as numpy's max).
    One pass without temporaries: the node isolates at every tick it is in collision.
    """
    nv = r.shape[0]
    if thresholds.shape[0] != nv or depths.shape[0] != nv or over.shape[0] < nv + 1 \
            or peak.shape[0] < 1:
        return -1
    n, distal, top = 0, -1, 0.0
    for j in range(nv):
        ratio = abs(r[j]) / thresholds[j]
        if ratio != ratio or ratio > top:     # a NaN sticks: nothing is > NaN
            top = ratio
        if ratio > 1.0:
            n += 1
            over[n] = j
            if distal < 0 or depths[j] >= depths[distal]:
                distal = j
    over[0] = distal
    peak[0] = top
    return n


_isolation_entry = first_entry(isolation_kernel, globals(), "_isolation_entry")


def isolation(model, n, over, peak, bodies):
    """
    Return the :class:`Isolation` :func:`isolation_kernel` found (its ``n``, ``over``, ``peak``).

    ``bodies``: :func:`dof_bodies`, kept by a :class:`CollisionState` with the depths.
    """
    if n < 0:                     # the thresholds and depths are the model's: r's size
        raise ValueError(f"r must have {model.nv} entries (one per dof)")
    if n == 0:
        return Isolation(False, (), None, float(peak[0]))
    return Isolation(True, tuple(over[1:n + 1].tolist()), model.body_names[bodies[over[0]]],
                     float(peak[0]))


NO_ISOLATION = Isolation(False, (), None, 0.0)


class CollisionState:
    """
    The collision state of a stream of r, changed by :meth:`update`: the rule of ~/collision.

    The state is (in collision, isolated link, observing): as r rises, a joint nearer the base
    may cross its threshold before the one that isolates the contact, so a new link is a
    change too; so is the observer becoming unable to observe, or able again (``observing``:
    fewer than :data:`BLIND_AFTER` samples in a row without an estimate; ``reason`` says why
    the last one gave none). While it cannot, the isolation is that of its last estimate.
    The node's ``ContactMonitor`` and the replay share it, so they publish the same messages.
    ``kernel_arrays``: ``isolation_kernel``'s arrays but r (thresholds, depths, over, peak),
    for a kernel that isolates r in its own call (``observer_tick``), whose result goes to
    :meth:`isolated`; a new tuple whenever the thresholds are set.
    """

    def __init__(self, model, thresholds):
        self.model = model
        self.dof_bodies = dof_bodies(model)
        # the types isolation_kernel declares: :meth:`update` calls it by its entry point
        self._depths = np.ascontiguousarray(body_depths(model)[self.dof_bodies], np.int64)
        self._over, self._peak = np.empty(model.nv + 1, np.int64), np.empty(1)
        self.thresholds = thresholds
        self.state = (False, None, True)
        self.isolation = NO_ISOLATION
        self.unobserved_run = 0          # samples in a row without an estimate
        self.reason = ""

    @property
    def observing(self):
        return self.state[2]

    @property
    def thresholds(self):
        """The collision thresholds, N·m (nv floats); set: ``collision_thresholds``' check."""
        return self._thresholds

    @thresholds.setter
    def thresholds(self, value):
        # :meth:`update` hands them to isolation_kernel's entry point, which tests no type:
        # collision_thresholds makes a new float64 C vector of nv; read-only, so that no
        # edit in place skips its check
        thresholds = collision_thresholds(self.model, value)
        thresholds.flags.writeable = False
        self._thresholds = thresholds
        # a new tuple: a caller that keeps it (ObserverKernel.isolating_arguments) sees the change
        self.kernel_arrays = (thresholds, self._depths, self._over, self._peak)

    @property
    def dof_depths(self):
        """The depth in the tree of the body each dof moves first (int64, nv)."""
        return self._depths

    def update(self, r, tracking=True, reason=RESTARTING):
        """
        Check r against the thresholds; return whether the state changed.

        ``tracking``: whether r is an estimate (False: a sample of a restart, ``reason``).
        """
        observing = self._count(tracking, reason)
        if r.__class__ is not np.ndarray or r.dtype != np.float64 or r.ndim != 1 \
                or not r.flags.c_contiguous:
            r = _r_vector(self.model, r)
        # through the entry point (r tested above, the rest made here): every tick calls it,
        # and the dispatcher types five arrays first: several µs a tick with cold caches
        n = _isolation_entry(r, *self.kernel_arrays)
        return self._isolated(n, observing)

    def isolated(self, n, tracking=True, reason=RESTARTING):
        """
        Take what ``isolation_kernel`` found for r, called by another kernel; as :meth:`update`.

        ``n``: its return, for the arrays of ``kernel_arrays`` (``over`` and ``peak``
        hold the rest). Returns whether the state changed.
        """
        return self._isolated(n, self._count(tracking, reason))

    def _isolated(self, n, observing):
        if n == 0 and self.state == (False, None, observing):
            return False                  # the usual sample: the last isolation is kept
        self.isolation = isolation(self.model, n, self._over, self._peak, self.dof_bodies)
        state = (self.isolation.in_collision, self.isolation.link, observing)
        changed = state != self.state
        self.state = state
        return changed

    def message_fields(self, dof_names):
        """
        Return the fields of ~/collision (rbd_ros_interfaces/Collision) but its header.

        The node's message and the replay's are filled from this one dict, so they say the
        same: the last isolation (``dof_names``: one name per entry of v) and whether the
        observer can observe, with why not (200 characters at most).
        """
        iso = self.isolation
        return {"in_collision": bool(iso.in_collision),
                "joints": [dof_names[j] for j in iso.joints],
                "isolated_link": iso.link or "", "peak_ratio": float(iso.peak_ratio),
                "observing": bool(self.observing),
                "reason": "" if self.observing else self.reason[:200]}

    def unobserved(self, reason):
        """Count a sample without r (skipped, refused: ``reason``); return whether it changed."""
        observing = self._count(False, reason)
        changed = observing != self.state[2]
        self.state = self.state[:2] + (observing,)
        return changed

    def _count(self, tracking, reason):
        if tracking:
            self.unobserved_run = 0
            self.reason = ""
        else:             # a restart's samples keep the reason of what restarted it
            self.unobserved_run += 1
            if reason != RESTARTING or not self.reason:
                self.reason = reason
        return self.unobserved_run < BLIND_AFTER
