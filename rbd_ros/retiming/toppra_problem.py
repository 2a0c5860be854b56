"""
The TOPP-RA side of ``rbd_ros.retime``: the limits as toppra constraints, and its solve.

Imported when a retiming runs (toppra imports matplotlib.pyplot: half a second that the
dynamics node's start does not pay). The constraints are given to toppra as arrays already
evaluated on the whole grid (:class:`CanonicalConstraint`), so its
``compute_constraint_params`` costs no call per grid point: the torque coefficients come
from one ``rnea_batch`` call (``retiming.path_dynamics``).
"""
import numpy as np
from toppra.constants import MAX_TRIES, SMALL, TINY
from toppra.constraint import (DiscretizationType, LinearConstraint,
                               canlinear_colloc_to_interpolate)
from toppra.solverwrapper.cy_seidel_solverwrapper import seidelWrapper

JVEL_MAXSD = 1e8       # toppra's cap on ṡ from a velocity limit (toppra.constants)


class CanonicalConstraint(LinearConstraint):
    """
    F (a u + b x + c) <= g, u = s̈, x = ṡ² (toppra's canonical form), F and g the same everywhere.

    ``a``, ``b``, ``c`` (N, m) on the grid. ``interpolate``: toppra's interpolation
    discretization, where an interval's (u, x) satisfies the rows at both of its ends
    (``canlinear_colloc_to_interpolate``); else the rows of grid point i bind stage i only.
    """

    def __init__(self, a, b, c, F, g, interpolate=True):
        super().__init__()
        self.identical = True
        self.discretization_type = (DiscretizationType.Interpolation if interpolate
                                    else DiscretizationType.Collocation)
        self._params = (a, b, c, F, g)

    def compute_constraint_params(self, path, gridpoints, *args, **kwargs):
        """Return toppra's (a, b, c, F, g, ubound, xbound) on ``gridpoints``."""
        if self.discretization_type == DiscretizationType.Collocation:
            return (*self._params, None, None)
        return canlinear_colloc_to_interpolate(*self._params, None, None, gridpoints,
                                               identical=True)


def box(a, b, c, limit):
    """Return the :class:`CanonicalConstraint` |a u + b x + c| <= limit (m,), row by row."""
    m = len(limit)
    return CanonicalConstraint(a, b, c, np.vstack([np.eye(m), -np.eye(m)]),
                               np.concatenate([limit, limit]))


def velocity_rows(path, grid_s, velocity, substeps=1):
    """
    Return the velocity limits as the :class:`CanonicalConstraint` x(s) <= B(s) on each interval.

    B(s) = min_j (v_j / |p'_j(s)|)². On interval i, s̈ = u is constant and x = ṡ² is linear
    in s: x(s_i + θ Δ_i) = x_i + 2 θ Δ_i u. The rows take θ = k / ``substeps``, k = 0 ..
    substeps - 1, divided by B there (so that F = I and g = 1 everywhere). ``substeps`` 1:
    at the grid points only, as toppra's ``JointVelocityConstraint``; more: between them
    too, where B is resolved by the sub-steps (slower than toppra's answer by what its grid
    misses, and nothing left for ``retime``'s uniform slow-down to repair).
    """
    theta = np.arange(substeps) / substeps
    delta = np.append(np.diff(grid_s), 0.0)           # the last point: its own row only
    fine = np.minimum(grid_s[:, None] + theta * delta[:, None], grid_s[-1])
    bound = np.minimum(sd_bound(path(fine.ravel(), 1), velocity), JVEL_MAXSD) ** 2
    inverse = 1.0 / bound.reshape(fine.shape)
    return CanonicalConstraint(2.0 * theta * delta[:, None] * inverse, inverse,
                               np.zeros_like(inverse), np.eye(substeps), np.ones(substeps),
                               interpolate=False)


def sd_bound(ps, velocity):
    """Return the velocity limits' bound on ṡ (N,) along p' (N, nv) (inf where none)."""
    speed = np.abs(ps)
    with np.errstate(divide="ignore"):
        return np.min(np.where(speed > 0, velocity / speed, np.inf), axis=1)


def friction_bound(act, ps, velocity):
    """
    Return the friction torque (N, nv) at the largest ṡ the velocity limits allow, or None.

    Fc tanh(v/ε) + Fv v with v = p' ṡ has the sign of p' and at most that magnitude
    (``retiming`` module docstring). ValueError where viscous friction meets no velocity bound.
    """
    if act is None or not (act.coulomb.any() or act.viscous.any()):
        return None
    speed = np.abs(ps)
    sd_max = sd_bound(ps, velocity)
    viscous = act.viscous * speed
    needs = (viscous > 0) & ~np.isfinite(sd_max)[:, None]
    if needs.any():
        raise ValueError("viscous friction is bounded through the velocity limits: a joint "
                         "with viscous friction moves where no joint has a velocity limit")
    reach = np.where(np.isfinite(sd_max), sd_max, 0.0)[:, None]
    return np.sign(ps) * (act.coulomb + viscous * reach)


def solve(path, grid_s, ps, pss, a, b, c, friction, limits, substeps=1):
    """
    Return ṡ (N,) at the grid points, rest to rest: TOPP-RA (seidel) under the limits.

    ``limits``: ``retiming.Limits``; ``friction``: :func:`friction_bound` or None;
    ``substeps``: :func:`velocity_rows`'s. :class:`NoTiming` when TOPP-RA finds no timing.
    """
    blocks = []                     # (a, b, c, limit) column blocks of the canonical rows
    effort = np.isfinite(limits.effort)
    if effort.any():
        blocks.append((a[:, effort], b[:, effort], c[:, effort], limits.effort[effort]))
        if friction is not None:
            blocks.append((a[:, effort], b[:, effort], c[:, effort] + friction[:, effort],
                           limits.effort[effort]))
    acc = np.isfinite(limits.acceleration)
    if acc.any():
        blocks.append((ps[:, acc], pss[:, acc], np.zeros((len(ps), int(acc.sum()))),
                       limits.acceleration[acc]))
    constraints = []
    if blocks:
        constraints.append(box(*(np.hstack(x) for x in zip(*blocks))))
    if np.isfinite(limits.velocity).any():
        constraints.append(velocity_rows(path, grid_s, limits.velocity, substeps))
    solver = seidelWrapper(constraints, path, grid_s, solve_lp1d=True)
    return reachability(solver, np.diff(grid_s))


def reachability(solver, deltas):
    """
    Return ṡ (N+1,) rest to rest: TOPP-RA's two passes over toppra's stage-wise LP ``solver``.

    The passes of toppra's ``ReachabilityAlgorithm.compute_parameterization`` (T-RO 2018,
    Alg. 1: controllable sets backward, then the greedy forward pass), with its numerical
    safeguards (x_{i+1} shrunk by TINY or 0.01 %, a failed stage retried with x_i 0.1 %
    lower), written as a plain loop: toppra's own runs 20-25 ms of Python around 1,500
    LPs of 2 µs each on a 500-point grid (``bench/bench_retime.py``). ValueError naming the
    stage where no timing exists.
    """
    n = len(deltas)
    solve = solver.solve_stagewise_optim
    nan = np.nan
    up = np.zeros(solver.get_no_vars())
    up[0], up[1] = 1e-9, -1.0
    down = -up
    K = np.zeros((n + 1, 2))
    for i in range(n - 1, -1, -1):
        lo, hi = K[i + 1]
        x_hi = solve(i, None, up, nan, nan, lo, hi)[1]
        x_lo = solve(i, None, down, nan, nan, lo, hi)[1]
        if not (x_hi == x_hi and x_lo == x_lo):           # NaN: no controllable state
            raise NoTiming(i)
        K[i, 0], K[i, 1] = max(x_lo, 0.0), x_hi
    if K[0, 0] > SMALL:
        raise NoTiming(0)
    xs = np.zeros(n + 1)
    forward = np.zeros(solver.get_no_vars())
    forward[1] = -1.0
    i = tries = 0
    while i < n:
        forward[0] = -2.0 * deltas[i]
        u = solve(i, None, forward, xs[i], xs[i], K[i + 1, 0], K[i + 1, 1])[0]
        if u != u:
            if tries == MAX_TRIES:
                raise NoTiming(i)
            xs[i] = max(xs[i] - TINY, 0.999 * xs[i])
            tries += 1
            continue
        tries = 0
        x_next = xs[i] + 2.0 * deltas[i] * u
        x_next = max(x_next - TINY, 0.9999 * x_next)
        xs[i + 1] = min(K[i + 1, 1], max(K[i + 1, 0], x_next))
        i += 1
    return np.sqrt(np.maximum(xs, 0.0))


class NoTiming(ValueError):
    """TOPP-RA found no timing: ``stage``, the grid interval where it failed."""

    def __init__(self, stage):
        super().__init__("TOPP-RA found no timing of this path within the limits: friction "
                         "or gravity leaves no torque to move on it")
        self.stage = stage
