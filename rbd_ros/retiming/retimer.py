"""
Time-optimal retiming of a joint path under the robot's velocity, acceleration and torque limits.

    r = rbd_ros.retime(model, waypoints, velocity_scale=0.8, effort_scale=0.9)
    r.t, r.q, r.v, r.a, r.tau        # (K,), (K, nq), (K, nv) ...: every sample; r.duration

The path is a cubic spline through the waypoints (toppra's ``SplineInterpolator``, not-a-knot
ends) over the normalized chord length s ∈ [0, 1]; the timing s(t) is TOPP-RA's (Pham & Pham,
"A New Approach to Time-Optimal Path Parameterization Based on Reachability Analysis", IEEE
T-RO 2018; the ``toppra`` package, seidel solver), rest to rest, on a grid of s.

**Torque as toppra needs it.** Along q = p(s), q̇ = p' ṡ, q̈ = p' s̈ + p'' ṡ², and RNEA is
M(q) q̈ + C(q, q̇) q̇ + g(q), quadratic in q̇, so τ = a(s) s̈ + b(s) ṡ² + c(s) with

    c = RNEA(p, 0, 0),   a = RNEA(p, 0, p') - c = M p',
    b = RNEA(p, p', p'') - c = M p'' + C(p, p') p'

computed in ONE ``rnea_batch`` call over the 3 (N+1) states of the grid (toppra's own
``JointTorqueConstraint`` calls the inverse dynamics 3 (N+1) times from Python:
``bench/bench_retime.py`` measures both). The joint parameters (``rbd_ros.actuation``):
armature Ia is exact in that form (a += Ia p', b += Ia p''), the offset τ0 adds to c.
Friction is not of that form: f_j = Fc_j tanh(v_j/ε) + Fv_j v_j with v_j = p'_j ṡ has the sign
of p'_j and a magnitude between 0 (ṡ = 0) and Fc_j + Fv_j |p'_j| ṡ_max(s), where ṡ_max(s) is
the velocity limits' bound on ṡ at s. The rule taken (conservative): the torque limit is
imposed at both ends of that interval (two rows per joint, c and c + sign(p'_j) (Fc_j +
Fv_j |p'_j| ṡ_max)), so it holds for every friction value in between, that is at every ṡ.
Viscous friction therefore needs velocity limits on the joints that have it.

**Samples.** toppra's answer is ṡ at the grid points with s̈ constant between them (the
interpolation discretization: each interval's s̈ satisfies the constraints at both of its
ends). With ``sample_period`` None the samples are the grid points (s̈ of the interval that
starts there, of the last interval at the end); else every ``sample_period`` s and the end.
Between grid points the constraints are not imposed by TOPP-RA: every sample is checked
(one more batch call) and, where one exceeds a limit, the whole timing is slowed uniformly
by the factor k that brings it back (v/k, a/k², the rigid dynamic torque /k²; recorded in
``time_scale``), so every answered sample is within the limits.
"""
import operator
import time
from collections import namedtuple

import numpy as np

from .. import _checks
from ..actuation.dynamics import Actuation
from ..batch import rnea_batch
from ..actuation.joint_parameters import JointParameters
from .retimed import KINDS, Retimed  # noqa: F401  (KINDS: Retimed.binding's names)

DEFAULT_GRID = 500
MAX_GRID = 100_000
# below these TOPP-RA's tolerances (toppra.constants SMALL, TINY) swallow the limit itself:
# an acceleration limit of 1e-10 gave "no timing"; 1e-300, a velocity scale of 1e-300 too
MIN_SCALE = 1e-6               # velocity_scale, effort_scale: a millionth of the URDF's
MIN_ACCELERATION = 1e-3        # rad/s² (m/s²)
MAX_VELOCITY_SUBSTEPS = 32
MAX_VELOCITY_ROWS = 1_000_000  # grid points x velocity_substeps
BINDS = 0.99           # a limit "binds" at a sample where |x| reaches this fraction of it
_MARGIN = 1e-9         # a sample at (1 + _MARGIN) x its limit counts as within it
_MAX_REPAIRS = 30


def retime(model, waypoints, velocity_scale=1.0, acceleration_limits=None, effort_scale=1.0,
           joint_parameters=None, grid=DEFAULT_GRID, sample_period=None, velocity_substeps=1,
           max_samples=None):
    """
    Return the time-optimal trajectory through ``waypoints``, within the robot's limits.

    The path is a cubic spline through the waypoints; its timing is TOPP-RA's, rest to rest,
    then checked at every sample (the module docstring says how, and how friction is
    bounded).

    Parameters
    ----------
    model : Model
        A fixed-base model; its velocity and effort limits are the URDF's.
    waypoints : array_like, shape (M, nq)
        At least two configurations (rad or m), within the joint limits, no two consecutive
        ones equal.
    velocity_scale : float, optional
        The URDF's velocity limits are multiplied by it, in [``MIN_SCALE``, 1] (infinite or
        zero limits are not limits).
    acceleration_limits : array_like, shape (nv,), optional
        rad/s² (m/s²), at least ``MIN_ACCELERATION`` (inf: none); None: no limit.
    effort_scale : float, optional
        The URDF's effort limits are multiplied by it, in [``MIN_SCALE``, 1].
    joint_parameters : JointParameters or Actuation, optional
        Armature, friction and offset per joint (``rbd_ros.actuation``), included in τ;
        None: the rigid body alone.
    grid : int or array_like, optional
        The number of grid points in s (default 500, at most ``MAX_GRID``), or the grid
        itself (increasing, 0 to 1).
    sample_period : float, optional
        Seconds between samples; None: the grid points.
    velocity_substeps : int, optional
        Where the velocity limits bind TOPP-RA in each grid interval (1: at its start, as
        toppra's own constraint; ``toppra_problem.velocity_rows``): 1 to
        ``MAX_VELOCITY_SUBSTEPS``, at most ``MAX_VELOCITY_ROWS`` grid points × it.
    max_samples : int, optional
        The most samples that may answer (None: ``MAX_SAMPLES``).

    Returns
    -------
    Retimed
        Every sample's time, q, v, a, τ and binding limit, and the duration (s).

    Raises
    ------
    ValueError
        Saying why, for: fewer than two waypoints, NaN, two equal consecutive waypoints, a
        waypoint (or the spline between them) outside the joint limits, a floating base, a
        path where standing still breaks an effort limit (which joint, where), one TOPP-RA
        cannot time; a scale outside [``MIN_SCALE``, 1], an acceleration limit below
        ``MIN_ACCELERATION``, ``velocity_substeps`` outside its range.

    """
    clock = [time.perf_counter()]
    substeps = check_substeps(velocity_substeps)
    act = _actuation(model, joint_parameters)
    limits = _limits(model, velocity_scale, effort_scale, acceleration_limits)
    path, grid_s = _path(model, waypoints, grid)
    if len(grid_s) * substeps > MAX_VELOCITY_ROWS:
        raise ValueError(f"{len(grid_s)} grid points x {substeps} velocity_substeps: at most "
                         f"{MAX_VELOCITY_ROWS}")
    p, ps, pss = path(grid_s), path(grid_s, 1), path(grid_s, 2)
    _check_joint_limits(model, p, grid_s, path)
    a_coef, b_coef, c_coef = path_dynamics(model, p, ps, pss, act)
    _check_static(model, c_coef, limits.effort, grid_s, path)
    clock.append(time.perf_counter())
    from . import toppra_problem     # imports toppra (and matplotlib): here, not at start
    friction = toppra_problem.friction_bound(act, ps, limits.velocity)
    try:
        sd = toppra_problem.solve(path, grid_s, ps, pss, a_coef, b_coef, c_coef, friction,
                                  limits, substeps)
    except toppra_problem.NoTiming as exc:
        raise ValueError(f"{exc} (stuck {_where(path, grid_s[exc.stage])})") from None
    clock.append(time.perf_counter())
    out = _samples(model, path, grid_s, sd, sample_period, act, limits,
                   MAX_SAMPLES if max_samples is None else int(max_samples))
    clock.append(time.perf_counter())
    return out._replace(timings=dict(zip(("dynamics", "toppra", "samples"),
                                         np.diff(clock))))


Limits = namedtuple("Limits", "velocity effort acceleration")


def _limits(model, velocity_scale, effort_scale, acceleration_limits):
    """Return the scaled limits (nv,) each, inf where there is none; ValueError."""
    out = []
    for name, scale, base in (("velocity_scale", velocity_scale, model.velocity_limit),
                              ("effort_scale", effort_scale, model.effort_limit)):
        scale = check_scale(name, scale)
        base = np.asarray(base, np.float64)
        out.append(np.where(np.isfinite(base) & (base > 0), base * scale, np.inf))
    if acceleration_limits is None:
        acc = np.full(model.nv, np.inf)
    else:
        acc = check_accelerations(acceleration_limits, model.nv)
    if not (np.isfinite(out[0]).any() or np.isfinite(out[1]).any() or np.isfinite(acc).any()):
        raise ValueError("no velocity, effort or acceleration limit: the time-optimal timing "
                         "is instantaneous")
    return Limits(out[0], out[1], acc)


def check_scale(name, scale):
    """Return ``scale`` as a float; ValueError unless it is in [``MIN_SCALE``, 1]."""
    scale = _checks.number(scale, name)
    if not MIN_SCALE <= scale <= 1.0:         # NaN too
        raise ValueError(f"{name} must be in [{MIN_SCALE:g}, 1] (a fraction of the URDF's "
                         f"limits), got {scale!r}")
    return scale


def check_accelerations(limits, nv):
    """Return ``limits`` (nv,) floats; ValueError unless each is >= ``MIN_ACCELERATION``."""
    try:
        acc = np.asarray(limits, np.float64).reshape(-1)
    except (TypeError, ValueError):
        raise ValueError(f"acceleration_limits must be {nv} numbers") from None
    if acc.shape != (nv,) or not (acc >= MIN_ACCELERATION).all():     # NaN too
        raise ValueError(f"acceleration_limits must be {nv} numbers >= {MIN_ACCELERATION:g} "
                         "(rad/s² or m/s²; inf: none)")
    return acc


def check_substeps(substeps):
    """Return ``substeps`` as an int; ValueError unless an integer 1 to the maximum."""
    try:
        if isinstance(substeps, bool):
            raise TypeError
        n = operator.index(substeps)
    except TypeError:
        raise ValueError(f"velocity_substeps must be an integer, got {substeps!r}") from None
    if not 1 <= n <= MAX_VELOCITY_SUBSTEPS:
        raise ValueError(f"velocity_substeps must be 1 to {MAX_VELOCITY_SUBSTEPS}, got {n}")
    return n


def _actuation(model, joint_parameters):
    if model.floating_base:
        raise ValueError("retime: a floating-base model has no joint path to retime")
    if joint_parameters is None or isinstance(joint_parameters, Actuation):
        return joint_parameters
    if isinstance(joint_parameters, JointParameters):
        if tuple(joint_parameters.joints) != tuple(model.joint_names):
            raise ValueError("joint_parameters are for other joints than the model's")
        return Actuation(joint_parameters, 0)
    raise ValueError("joint_parameters must be a JointParameters or an Actuation")


def _path(model, waypoints, grid):
    """Return (spline, grid in s); ValueError for bad waypoints or grid."""
    from toppra import SplineInterpolator
    try:
        w = np.array(waypoints, np.float64)
    except (TypeError, ValueError):
        raise ValueError("waypoints must be an (M, nq) array of numbers") from None
    if w.ndim != 2 or w.shape[1] != model.nq:
        raise ValueError(f"waypoints must have shape (M, {model.nq}), got {w.shape}")
    if len(w) < 2:
        raise ValueError(f"at least two waypoints are needed, got {len(w)}")
    bad = np.argwhere(~np.isfinite(w))
    if len(bad):
        k, j = bad[0]
        raise ValueError(f"waypoint {k}, joint {model.joint_names[j]!r} is NaN or inf")
    for k, row in enumerate(w):
        out = np.flatnonzero((row < model.lower) | (row > model.upper))
        if len(out):
            j = out[0]
            raise ValueError(f"waypoint {k}: joint {model.joint_names[j]!r} at {row[j]:.6g} is "
                             f"outside its limits [{model.lower[j]:.6g}, {model.upper[j]:.6g}]")
    step = np.linalg.norm(np.diff(w, axis=0), axis=1)
    same = np.flatnonzero(step <= 1e-12)
    if len(same):
        raise ValueError(f"waypoints {same[0]} and {same[0] + 1} are the same configuration")
    ss = np.concatenate([[0.0], np.cumsum(step)])
    ss /= ss[-1]
    if np.ndim(grid) == 0:
        n = int(grid)
        if not 2 <= n <= MAX_GRID:
            raise ValueError(f"grid must be 2 to {MAX_GRID} points, got {grid!r}")
        grid_s = np.linspace(0.0, 1.0, n)
    else:
        grid_s = np.asarray(grid, np.float64)
        if (grid_s.ndim != 1 or not 2 <= len(grid_s) <= MAX_GRID or grid_s[0] != 0.0
                or grid_s[-1] != 1.0 or not (np.diff(grid_s) > 0).all()):
            raise ValueError("grid must increase from 0 to 1")
    return SplineInterpolator(ss, w), grid_s


def _where(path, s):
    """Say where s is on the path: between which waypoints."""
    k = int(np.clip(np.searchsorted(path.ss_waypoints, s, side="right") - 1, 0,
                    len(path.ss_waypoints) - 2))
    return f"waypoint {k}" if s == path.ss_waypoints[k] else f"between waypoints {k} and {k + 1}"


def _check_joint_limits(model, p, grid_s, path):
    tol = 1e-9 * np.maximum(1.0, np.abs(np.where(np.isfinite(model.upper), model.upper, 0)))
    out = np.argwhere((p < model.lower - tol) | (p > model.upper + tol))
    if len(out):
        i, j = out[0]
        raise ValueError(f"the spline through the waypoints leaves joint "
                         f"{model.joint_names[j]!r}'s limits {_where(path, grid_s[i])} "
                         f"({p[i, j]:.6g}): add waypoints there")


def path_dynamics(model, p, ps, pss, act=None):
    """
    Return (a, b, c) (N, nv): τ = a s̈ + b ṡ² + c along q = p(s), friction left out.

    One ``rnea_batch`` call over the 3N states (p, 0, 0), (p, 0, p'), (p, p', p''); with
    ``act`` its armature and offset added (friction: the module docstring).
    """
    n, nv = len(p), model.nv
    zero = np.zeros((n, nv))
    tau = rnea_batch(model, np.concatenate([p, p, p]), np.concatenate([zero, zero, ps]),
                     np.concatenate([zero, ps, pss]))
    c = tau[:n].copy()
    a = tau[n:2 * n] - c
    b = tau[2 * n:] - c
    if act is not None:
        a += act.armature * ps
        b += act.armature * pss
        c += act.offset
    return a, b, c


def _check_static(model, c, effort, grid_s, path):
    over = np.argwhere(np.abs(c) > effort)
    if len(over):
        i, j = over[0]
        raise ValueError(f"infeasible path: standing still {_where(path, grid_s[i])}, joint "
                         f"{model.joint_names[j]!r} needs {c[i, j]:.6g} (gravity and offset) "
                         f"beyond its effort limit {effort[j]:.6g}")


def _samples(model, path, grid_s, sd, sample_period, act, limits, max_samples):
    """Return the :class:`Retimed` samples of the timing ṡ (N,) on the grid (module docstring)."""
    ds = np.diff(grid_s)
    u = (sd[1:] ** 2 - sd[:-1] ** 2) / (2.0 * ds)
    speed = sd[1:] + sd[:-1]
    if not (speed > 0).all():
        raise ValueError("TOPP-RA's timing stops inside the path (ṡ = 0 at two neighbouring "
                         "grid points): no finite duration")
    ts = np.concatenate([[0.0], np.cumsum(2.0 * ds / speed)])
    if sample_period is None:
        t, s, sdot, sdd = ts, grid_s, sd, np.append(u, u[-1])
    else:
        period = float(sample_period)
        if not (np.isfinite(period) and period > 0):
            raise ValueError(f"sample_period must be a positive number of seconds, got "
                             f"{sample_period!r}")
        count = int(np.floor(ts[-1] / period)) + 2
        if count > max_samples:
            raise ValueError(f"{ts[-1]:.6g} s at {period:g} s per sample would be {count} "
                             f"samples: at most {max_samples}")
        t = np.arange(count - 1) * period
        t = np.append(t[t < ts[-1]], ts[-1])
        i = np.clip(np.searchsorted(ts, t, side="right") - 1, 0, len(u) - 1)
        dt = t - ts[i]
        sdd = u[i]
        sdot = np.maximum(sd[i] + sdd * dt, 0.0)
        s = np.clip(grid_s[i] + sd[i] * dt + 0.5 * sdd * dt * dt, grid_s[i], grid_s[i + 1])
        s[-1], sdot[-1] = grid_s[-1], sd[-1]        # the end, exactly (at rest)
    q, qs, qss = path(s), path(s, 1), path(s, 2)
    v = qs * sdot[:, None]
    a = qs * sdd[:, None] + qss * (sdot * sdot)[:, None]
    zero = np.zeros_like(v)
    rigid = rnea_batch(model, np.concatenate([q, q]), np.concatenate([zero, v]),
                       np.concatenate([zero, a]))
    parts = _Parts(rigid[:len(q)], rigid[len(q):] - rigid[:len(q)], v, a, act)
    k = _slow_down(parts, limits)
    v, a, tau = v / k, a / (k * k), parts.tau(k)
    kind, joint, ratio = _binding(v, a, tau, limits)
    return Retimed(t * k, q, v, a, tau, float(t[-1] * k), s, kind, joint, ratio, k, {})


MAX_SAMPLES = 1_000_000


class _Parts:
    """τ of the samples slowed down uniformly by k: v/k, a/k² (the rigid dynamic part /k²)."""

    def __init__(self, static, dynamic, v, a, act):
        self.static, self.dynamic, self.v, self.a, self.act = static, dynamic, v, a, act

    def tau(self, k):
        """Return τ (K, nv) with the joint parameters, at the slow-down ``k``."""
        tau = self.static + self.dynamic / (k * k)
        if self.act is not None:
            tau = tau + self.act.armature * self.a / (k * k) + self.act.friction(self.v / k)
        return tau

    def within(self, k, limits):
        """Tell whether every sample is within every limit at the slow-down ``k``."""
        ok = np.abs(self.tau(k)) <= limits.effort * (1.0 + _MARGIN)
        ok &= np.abs(self.v) / k <= limits.velocity * (1.0 + _MARGIN)
        ok &= np.abs(self.a) / (k * k) <= limits.acceleration * (1.0 + _MARGIN)
        return bool(ok.all())


def _slow_down(parts, limits):
    """
    Return the smallest uniform slow-down k >= 1 (to 1e-9) putting every sample in the limits.

    1.0 when they already are (the grid samples: TOPP-RA's constraints); bisection otherwise.
    ValueError when even standing still at a sample breaks an effort limit.
    """
    if parts.within(1.0, limits):
        return 1.0
    hi = 2.0
    while not parts.within(hi, limits):
        hi *= 2.0
        if hi > 1e6:
            raise ValueError("a sample between grid points breaks an effort limit even at "
                             "rest: refine the grid")
    lo = 1.0
    while hi - lo > 1e-9 * hi:
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if parts.within(mid, limits) else (mid, hi)
    return hi


def _binding(v, a, tau, limits):
    """Return per sample the kind (index in KINDS), joint and |x| / limit of the closest limit."""
    pairs = ((v, limits.velocity), (a, limits.acceleration), (tau, limits.effort))
    ratios = np.stack([np.abs(x) / lim for x, lim in pairs], axis=1)
    flat = ratios.reshape(len(v), -1)
    best = np.argmax(flat, axis=1)
    ratio = flat[np.arange(len(v)), best]
    kind, joint = np.divmod(best, v.shape[1])
    binds = ratio >= BINDS
    return np.where(binds, kind + 1, 0), np.where(binds, joint, -1), ratio
