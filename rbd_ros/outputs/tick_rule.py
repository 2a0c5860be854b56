"""
The tick rule (:class:`TickRule`): from a merged joint state, compute, or skip and say why.

``REASONS`` are the keys the replay reports and the texts the node logs and counts in
/diagnostics; the checks here also say what makes a joint_states or odometry message unusable.
"""
import math

import numpy as np
from scipy.linalg import blas as _blas


# -- the tick rule -----------------------------------------------------------------------------
UNKNOWN_VELOCITY = ("skip", "zero")     # the node's unknown_velocity choices, default first
DEFAULT_MAX_JOINT_AGE = 0.5             # s, the node's max_joint_age default
# Why nothing is published for a joint_states message, in the order the rule checks: the key
# (the replay's report) and the text the node logs and counts ({...}: details it fills in).
REASONS = {
    "malformed": "malformed joint_states ignored: {error}",
    # not a tick: a message without any joint of the model (a gripper on a shared topic, an
    # empty message) changes nothing, so the node computes, publishes and counts nothing
    "no model joint": None,
    "incomplete": "waiting for joint states of {count} joints: {names}",
    "stale": "joint states older than {max_joint_age} s: {names}",
    "no base state": "waiting for the base state on {odometry_topic}",
    "stale base": "base odometry older than {max_joint_age} s",
    "velocity unknown": "joint velocities unknown (NaN, inf or absent): tick skipped; set "
                        "unknown_velocity: zero to treat them as zero",
    "acceleration unavailable": "waiting for commanded accelerations on {acceleration_topic}",
    "no wrench": "waiting for measured wrenches on {topics}",
    "stale wrench": "measured wrenches older than {max_joint_age} s: {topics}",
    "refused": "dynamics refused the state: {error}",
}
REASON_KEYS = tuple(REASONS)
# odometry the node ignores (the base state stays as it was); not a tick of its own
ODOMETRY_REASONS = {"malformed odometry": "malformed odometry ignored: {error}",
                    "invalid odometry": "odometry with NaN/inf or a zero quaternion ignored"}


def duplicate_names(names):
    """Return the names a joint_states message lists more than once (sorted)."""
    if len(set(names)) == len(names):
        return []
    return sorted({n for n in names if names.count(n) > 1})


def size_error(count, sizes):
    """
    Say why a joint_states message's arrays do not fit its names, or return None.

    ``sizes``: of position, velocity and effort; ``count``: the number of names. Each has 0
    or ``count`` values, and names need positions. Such a message is malformed, and so is
    one with a NaN/inf position of a model joint.
    """
    for label, size in zip(("position", "velocity", "effort"), sizes):
        if size not in (0, count):
            return f"joint_states has {count} names but {size} {label} values"
    if count and sizes[0] == 0:
        return "joint_states has no position array"
    return None


def valid_odometry(values):
    """
    Tell whether odometry values can be the base state.

    ``values``: [x y z qx qy qz qw vx vy vz wx wy wz], or (K, 13) of them. Usable: finite,
    with a nonzero quaternion (normalized where it is used).
    """
    quat = values[..., 3:7]
    return np.isfinite(values).all(axis=-1) & ((quat * quat).sum(axis=-1) >= 1e-12)


def finite_vector(x):
    """
    Tell whether the vector ``x`` (1-D float64) is all finite: a node tick's cheap check.

    One BLAS sum of absolute values (NaN and inf survive it) answers when it is finite,
    ~0.2 µs against ~1.5 µs for ``np.isfinite(x).all()``; otherwise (a NaN or inf, or a
    sum that overflows) numpy decides.
    """
    return _sum_finite(x) or bool(np.isfinite(x).all())


def _sum_finite(x):
    """Tell whether the BLAS sum of |x| is finite (then so is every x; if not, ask numpy)."""
    return not x.size or math.isfinite(_blas.dasum(x))


def effort_known(effort):
    """Whether every joint's measured effort is known (finite); per message for (M, nj)."""
    if effort.ndim == 1:
        return finite_vector(effort)
    return np.isfinite(effort).all(axis=-1)


def zero_unknown(x):
    """
    Set the NaN/inf entries of ``x`` to 0, in place, and return ``x``.

    What unknown velocities become under unknown_velocity "zero".
    """
    finite = np.isfinite(x)
    if not finite.all():
        x[~finite] = 0.0
    return x


class TickState:
    """
    A merged joint state, of one tick or of every message of a recording.

    Of one tick: arrays (nj,) and numbers; of a recording: arrays (M, nj) and (M,).

    ``position``, ``velocity``: model joint order, NaN where unknown (a NaN position: never
    received); ``joint_age``: seconds since the update of the joint updated longest ago;
    ``base_age``: seconds since the last valid odometry (inf: none yet; floating base only);
    ``acceleration_known``: the commanded acceleration is there (when one is expected);
    ``wrench_age``: seconds since the measured-wrench input updated longest ago delivered
    (inf: one never did; with measured wrenches only).
    """

    __slots__ = ("position", "velocity", "joint_age", "base_age", "acceleration_known",
                 "wrench_age")

    def __init__(self, position, velocity, joint_age=0.0, base_age=math.inf,
                 acceleration_known=True, wrench_age=0.0):
        self.position = position
        self.velocity = velocity
        self.joint_age = joint_age
        self.base_age = base_age
        self.acceleration_known = acceleration_known
        self.wrench_age = wrench_age


def _incomplete(s):
    if s.position.ndim == 1 and _sum_finite(s.position):
        return False                       # the usual tick: no NaN, answered in ~0.2 µs
    return np.isnan(s.position).any(axis=-1)


def _no_base(s):
    return s.base_age == math.inf


def _velocity_unknown(s):
    if s.velocity.ndim == 1:
        return not finite_vector(s.velocity)
    return ~np.isfinite(s.velocity).all(axis=-1)


def _acceleration_unavailable(s):
    return np.logical_not(s.acceleration_known)


def _no_wrench(s):
    return s.wrench_age == math.inf


class TickRule:
    """
    Whether a tick computes, from its :class:`TickState`, under the node's parameters.

    Checks in order; the first that fails is the reason (``REASONS``) nothing is published:
    every joint received ("incomplete"); none older than ``max_joint_age`` ("stale"; 0:
    never stale); on a floating base a valid odometry received ("no base state"), within
    ``max_joint_age`` ("stale base"); every velocity known, unless ``unknown_velocity`` is
    "zero" ("velocity unknown"); with ``commanded_acceleration`` (the node's
    acceleration_topic, the replay's estimate) an acceleration there ("acceleration
    unavailable"); with ``wrenches`` (the node's wrench_topics) every measured wrench
    received ("no wrench") and none older than ``max_joint_age`` ("stale wrench"). A tick
    that passes runs ``computation(enabled, effort_known(effort))`` at
    the unknown velocities set to 0 ("zero") and an unknown effort as 0.

    :meth:`reason` decides one tick, :meth:`reasons` every message of a recording at once,
    both with the same checks.
    """

    def __init__(self, *, floating_base, max_joint_age=DEFAULT_MAX_JOINT_AGE,
                 unknown_velocity=UNKNOWN_VELOCITY[0], commanded_acceleration=False,
                 wrenches=False):
        if unknown_velocity not in UNKNOWN_VELOCITY:
            raise ValueError(f"unknown_velocity must be 'skip' or 'zero', got "
                             f"{unknown_velocity!r}")
        self.max_joint_age = float(max_joint_age)
        self.zero_unknown_velocity = unknown_velocity == "zero"
        aged = self.max_joint_age > 0
        checks = [("incomplete", _incomplete)]
        if aged:
            checks.append(("stale", self._stale))
        if floating_base:
            checks.append(("no base state", _no_base))
            if aged:
                checks.append(("stale base", self._stale_base))
        if not self.zero_unknown_velocity:
            checks.append(("velocity unknown", _velocity_unknown))
        if commanded_acceleration:
            checks.append(("acceleration unavailable", _acceleration_unavailable))
        if wrenches:
            checks.append(("no wrench", _no_wrench))
            if aged:
                checks.append(("stale wrench", self._stale_wrench))
        self.checks = tuple(checks)

    def _stale(self, s):
        return s.joint_age > self.max_joint_age

    def _stale_base(self, s):
        return s.base_age > self.max_joint_age

    def _stale_wrench(self, s):
        return s.wrench_age > self.max_joint_age

    def reason(self, state):
        """One tick: the key of the first failing check, or None: compute."""
        for key, fails in self.checks:
            if fails(state):
                return key
        return None

    def reasons(self, state, codes):
        """
        Decide every message of a recording at once.

        ``codes`` (M,): indices into ``REASON_KEYS`` of the reasons found before the rule
        (malformed, no model joint), -1 elsewhere; where -1, the first failing check's index
        is set, in place; -1 left: compute. Returns ``codes``.
        """
        for key, fails in self.checks:
            codes[(codes < 0) & fails(state)] = REASON_KEYS.index(key)
        return codes
