"""
The dynamics node's outputs and its tick rule, in one place and without ROS.

The node (``rbd_ros/node``), the replay tool (``rbd_ros/replay``, offline and ``--live``),
the demo and the bag writer take from here, so that for the same messages and parameters the
node and the replay make the same decisions and compute the same numbers:

* ``OUTPUTS``: each output topic (``~/<name>``): its message type, the float64[] fields that
  carry the numbers and the core results that fill them, whether it needs the measured
  effort, its ``publish_<name>`` parameter and default;
* the core results (``RESULTS``) of one state (:func:`compute`: the node, one core call per
  tick, the cheapest that gives every result needed) and of many (:func:`compute_batch`: the
  replay, the core's batch API);
* the tick rule (:class:`TickRule`): from a merged joint state, compute, or skip and say why
  (``REASONS``: the keys the replay reports and the texts the node logs and counts in
  /diagnostics); and what makes a joint_states or odometry message unusable.

Nothing here imports ROS: the offline replay runs without it.
"""
import math
from typing import NamedTuple

import numpy as np
from scipy.linalg import blas as _blas

from .. import batch
from ..algorithms.compute_all import compute_all, inverse_and_forward_dynamics
from ..algorithms.rnea import rnea

BASE_DOF_NAMES = ("base_vx", "base_vy", "base_vz", "base_wx", "base_wy", "base_wz")
JOINT_STATE = "sensor_msgs/msg/JointState"
JOINT_VECTOR = "rbd_ros_interfaces/msg/JointVector"
JOINT_MATRIX = "rbd_ros_interfaces/msg/JointMatrix"
DERIVATIVES = "rbd_ros_interfaces/msg/DynamicsDerivatives"


def dof_names(model):
    """One name per entry of v: the base's six (floating base), then the joints."""
    return (BASE_DOF_NAMES if model.floating_base else ()) + tuple(model.joint_names)


class Output(NamedTuple):
    """One output topic, ``~/<name>``, enabled by the parameter ``publish_<name>``."""

    name: str
    msgtype: str              # ROS 2 message type, "package/msg/Name"
    fields: tuple             # the float64[] fields that vary, in order ...
    results: tuple            # ... and the core result (RESULTS) that fills each one
    needs_effort: bool        # forward dynamics: only for messages with every effort known
    default: bool             # published unless the parameter says otherwise
    symbol: str               # a short label (the demo's columns)
    description: str          # of the parameter

    @property
    def parameter(self):
        return "publish_" + self.name

    @property
    def topic(self):
        return "~/" + self.name


OUTPUTS = (
    Output("torques", JOINT_STATE, ("effort",), ("joint_tau",), False, True, "τ",
           "~/torques: RNEA at the commanded (or zero) acceleration"),
    Output("accelerations", JOINT_VECTOR, ("data",), ("qdd",), True, True, "q̈",
           "~/accelerations: ABA at the measured effort"),
    Output("inverse_inertia", JOINT_MATRIX, ("data",), ("Minv",), False, False, "M⁻¹",
           "~/inverse_inertia: M⁻¹"),
    Output("rnea_derivatives", DERIVATIVES, ("d_dq", "d_dv"), ("dtau_dq", "dtau_dv"), False,
           False, "∂τ", "~/rnea_derivatives: ∂τ/∂q, ∂τ/∂v"),
    Output("aba_derivatives", DERIVATIVES, ("d_dq", "d_dv"), ("dqdd_dq", "dqdd_dv"), True,
           False, "∂q̈", "~/aba_derivatives: ∂q̈/∂q, ∂q̈/∂v"),
)
BY_NAME = {o.name: o for o in OUTPUTS}
NAMES = tuple(BY_NAME)
DEFAULTS = tuple(o.name for o in OUTPUTS if o.default)

# The momentum observer's outputs (``rbd_ros.contact``): stateful, so not in the per-state
# computation above: r depends on every sample before it. The node steps one observer per
# robot (``rbd_ros.node.contact``); ~/collision is published on a change of state only and
# ~/contact_wrench for the ``contact_frame`` parameter (no publish_ switch of its own).
COLLISION = "rbd_ros_interfaces/msg/Collision"
WRENCH_STAMPED = "geometry_msgs/msg/WrenchStamped"
OBSERVER_OUTPUTS = (
    Output("external_torques", JOINT_STATE, ("effort",), ("external_tau",), True, False,
           "τ_ext", "~/external_torques: the momentum observer's external torques r (needs "
           "the measured efforts)"),
    Output("collision", COLLISION, (), (), True, False, "⚠",
           "~/collision: on every change of the collision state (r against "
           "collision_thresholds)"),
)
OBSERVER_BY_NAME = {o.name: o for o in OBSERVER_OUTPUTS}
DEFAULT_OBSERVER_GAIN = 50.0          # 1/s: settled in 0.1 s, noise filtered above ~8 Hz
DEFAULT_COLLISION_THRESHOLD = 10.0    # N·m
CONTACT_WRENCH = Output("contact_wrench", WRENCH_STAMPED, (), (), True, False, "F̂",
                        "~/contact_wrench: the wrench at contact_frame explaining r")

# The core results an output can carry; q, v, a, τ in model order (a floating base's first),
# τ_measured the joints' measured efforts (the base's τ is 0: it is not actuated).
RESULTS = {
    "tau": "ID(q, v, a), every dof",
    "joint_tau": "ID(q, v, a), the joints only (without a floating base's six dofs)",
    "qdd": "FD(q, v, τ_measured)",
    "Minv": "M(q)⁻¹, nv × nv",
    "dtau_dq": "∂ID/∂q at (q, v, a)", "dtau_dv": "∂ID/∂v at (q, v, a)",
    "dqdd_dq": "∂FD/∂q at (q, v, τ_measured)", "dqdd_dv": "∂FD/∂v at (q, v, τ_measured)",
}
# one tick's core call, the cheapest that gives the results needed: (name, its results)
CALLS = (("rnea", ("tau", "joint_tau")),
         ("inverse_and_forward_dynamics", ("tau", "joint_tau", "qdd")),
         ("compute_all", tuple(RESULTS)))


def check_outputs(names):
    """Return ``names`` in table order; ValueError for a name that is not an output."""
    bad = sorted(set(names) - set(NAMES))
    if bad:
        raise ValueError(f"unknown outputs {bad}; choose from {', '.join(NAMES)}")
    return tuple(n for n in NAMES if n in set(names))


def message_fields(output, model):
    """Return the fields of ``output``'s messages that ``model`` fixes: names and sizes."""
    nv = model.nv
    if output.msgtype == JOINT_STATE:
        return {"name": list(model.joint_names)}
    fields = {"names": list(dof_names(model))}
    if output.msgtype == JOINT_MATRIX:
        fields.update(rows=nv, cols=nv)
    elif output.msgtype == DERIVATIVES:
        fields["size"] = nv
    return fields


def array_sizes(output, model):
    """Return the number of values of each of ``output.fields`` for ``model``."""
    nv, nj = model.nv, len(model.joint_names)
    sizes = {"tau": nv, "joint_tau": nj, "external_tau": nj, "qdd": nv}
    return tuple(sizes.get(r, nv * nv) for r in output.results)


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
    needed = {r for o in published for r in o.results}
    call = next(name for name, results in CALLS if needed <= set(results))
    return Computation(call, published)


def compute(call, model, q, v, a, tau, fext=None):
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
    """
    nb = model.nv_base
    if call == "compute_all":
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
        if o.name not in enabled:
            continue
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
