"""
Excitation trajectories for identification: periodic finite Fourier series (Swevers et al.).

Swevers, Ganseman, Bilgin, De Schutter, Van Brussel 1997: each joint follows

    q_j(t) = q0_j + Σ_{l=1..L} a_jl / (ω l) sin(ω l t) - b_jl / (ω l) cos(ω l t)

(period 2π/ω, bandwidth L ω), so v and q̇ are exact sums of sines too and the data is
periodic (averaging over periods). The trajectory starts at rest, v(0) = Σ_l a_jl = 0 and
q̈(0) = ω Σ_l l b_jl = 0: a_j1 and b_j1 are set by the others. The coefficients minimize
the condition number of the identification matrix (the stacked regressor W of the samples
with the asked joint parameter columns, its columns scaled to unit norm and restricted to
its numerical rank: the identifiable combinations) and, given a joint parameter file, the
relative stds its magnitudes imply, with SciPy's L-BFGS-B (numerical gradient) on a cost that
penalizes leaving the limits; the result is then scaled about q0
until every sample respects the position, velocity and effort limits (effort: RNEA of the
core plus the joint parameters, at every sample).
"""
from dataclasses import dataclass

import numpy as np

from ..actuation import joint_parameters
from ..batch import rnea_batch
from .least_squares import column_scales
from .statistics import regressor

HARMONICS = 5
PERIOD = 10.0
OPTIMIZATION_SAMPLES = 80
SPREAD_POWER = 6         # p-mean of the relative stds: near their largest, yet smooth


@dataclass(frozen=True)
class Fourier:
    """A finite Fourier series per joint: q0 (nv,), a, b (nv, L), ω (rad/s)."""

    q0: np.ndarray
    a: np.ndarray
    b: np.ndarray
    omega: float

    def evaluate(self, t):
        """Return q, v, q̈ (each (N, nv)) at the times t (N,)."""
        t = np.asarray(t, np.float64)
        wl = self.omega * np.arange(1, self.a.shape[1] + 1)       # (L,)
        s, c = np.sin(t[:, None] * wl), np.cos(t[:, None] * wl)   # (N, L)
        q = self.q0 + s @ (self.a / wl).T - c @ (self.b / wl).T
        v = c @ self.a.T + s @ self.b.T
        acc = -s @ (self.a * wl).T + c @ (self.b * wl).T
        return q, v, acc

    def scaled(self, alpha):
        """Return the series with every coefficient times ``alpha`` (about q0)."""
        return Fourier(self.q0, alpha * self.a, alpha * self.b, self.omega)


def from_free(q0, free, omega, nv, harmonics):
    """Build the series from the coefficients of harmonics 2..L (a then b): at rest at t=0."""
    free = np.asarray(free, np.float64).reshape(2, nv, harmonics - 1)
    l_ = np.arange(2, harmonics + 1)
    a = np.hstack([-free[0].sum(axis=1, keepdims=True), free[0]])
    b = np.hstack([-(free[1] * l_).sum(axis=1, keepdims=True), free[1]])
    return Fourier(np.asarray(q0, np.float64), a, b, float(omega))


@dataclass
class Limits:
    """Position, velocity and effort limits (inf: none) and the known joint parameters."""

    lower: np.ndarray
    upper: np.ndarray
    velocity: np.ndarray
    effort: np.ndarray
    joints: object = None          # joint_parameters.JointParameters, or None

    @classmethod
    def of(cls, model, joints=None, margin=0.95):
        """Return the model's limits (unlimited position: ±π about 0), shrunk by ``margin``."""
        lo = np.where(np.isfinite(model.lower), model.lower, -np.pi)
        hi = np.where(np.isfinite(model.upper), model.upper, np.pi)
        mid, half = 0.5 * (lo + hi), 0.5 * (hi - lo) * margin
        return cls(mid - half, mid + half, np.asarray(model.velocity_limit) * margin,
                   np.asarray(model.effort_limit) * margin, joints)

    def torques(self, model, q, v, acc):
        """Return the torque the trajectory needs: RNEA plus the joint parameters."""
        tau = rnea_batch(model, q, v, acc)
        return tau + self.joints.torques(v, acc) if self.joints is not None else tau

    def violation(self, model, q, v, acc):
        """Return the largest relative excess over a limit (<= 0: every sample within)."""
        tau = self.torques(model, q, v, acc)
        half = 0.5 * (self.upper - self.lower)
        mid = 0.5 * (self.upper + self.lower)
        parts = [np.abs(q - mid) / half - 1, np.abs(v) / self.velocity - 1,
                 np.abs(tau) / self.effort - 1]
        return max(float(np.max(p)) for p in parts)


def condition(model, kinds, q, v, acc, rank=None, eps=joint_parameters.EPSILON):
    """Return (condition number of the identifiable part of W D, its rank)."""
    W = regressor(model, q, v, acc, kinds, eps)
    s = np.linalg.svd(W * column_scales(W), compute_uv=False)
    if rank is None:
        rank = _rank(W, s)
    return float(s[0] / s[rank - 1]) if s[rank - 1] > 0 else np.inf, rank


def _rank(W, s):
    return int(np.sum(s > max(W.shape) * np.finfo(np.float64).eps * 10 * s[0]))


def relative_stds(model, kinds, q, v, acc, prior, rank, eps=joint_parameters.EPSILON):
    """
    Return (condition number of W D, the relative std of every joint parameter column).

    The std of column k per unit of noise, σ_k / σ = D_k ‖S_r⁻¹ V_rᵀ e_k‖ (the covariance
    (WᵀW)⁻¹ on the ``rank`` identifiable combinations), divided by the prior magnitude
    ``prior`` (one per joint parameter column, ``kinds`` order); nan where the prior is 0
    or the column is not identifiable (e_k outside the row space: only a combination is).
    Unlike the condition number of the column-scaled W, it grows when a column's signal is
    small against the noise (a light distal joint moved little).
    """
    W = regressor(model, q, v, acc, kinds, eps)
    D = column_scales(W)
    _, s, vt = np.linalg.svd(W * D, full_matrices=False)
    extra = slice(10 * model.nbodies, W.shape[1])
    std = D[extra] * np.linalg.norm(vt[:rank, extra] / s[:rank, None], axis=0)
    in_row_space = np.sum(vt[:rank, extra] ** 2, axis=0) > 1 - 1e-6
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = np.where((prior != 0) & in_row_space, std / np.abs(prior), np.nan)
    return (float(s[0] / s[rank - 1]) if s[rank - 1] > 0 else np.inf), rel


def _prior(limits, kinds):
    """
    Return the prior magnitude of each joint parameter column (0: not a target), or None.

    From the joint parameter file; offsets are no target: their column is 1 whatever the
    motion, so their std (σ / √N) does not depend on the design.
    """
    if limits.joints is None or not kinds:
        return None
    prior = limits.joints.vector(kinds).reshape(len(kinds), -1)
    prior[[k == "offset" for k in kinds]] = 0.0
    return prior.ravel()


def fit_to_limits(model, series, limits, t):
    """Return ``series`` scaled by the largest α <= 1 (bisection) keeping every sample within."""
    if limits.violation(model, *series.evaluate(t)) <= 0:
        return series
    lo, hi = 0.0, 1.0
    for _ in range(40):
        mid = 0.5 * (lo + hi)
        if limits.violation(model, *series.scaled(mid).evaluate(t)) <= 0:
            lo = mid
        else:
            hi = mid
    return series.scaled(lo)


def random_series(model, limits, rng, harmonics=HARMONICS, period=PERIOD, t=None):
    """Return a random series of the same bandwidth, scaled into the limits (the baseline)."""
    nv = model.nv
    q0 = 0.5 * (limits.lower + limits.upper)
    free = rng.normal(size=2 * nv * (harmonics - 1))
    series = from_free(q0, free, 2 * np.pi / period, nv, harmonics)
    t = np.linspace(0, period, 4 * OPTIMIZATION_SAMPLES, endpoint=False) if t is None else t
    return fit_to_limits(model, series.scaled(10.0), limits, t)


def design(model, kinds, limits, harmonics=HARMONICS, period=PERIOD, seed=0, max_iter=60):
    """
    Return (optimized series, its condition number, scipy's result).

    Starts from the best of a few random series scaled into the limits; minimizes
    log cond(W D) + log M₆(relative stds of the joint parameters) + 100 · max(0, violation)²
    over the free coefficients with L-BFGS-B (M₆: the power mean of order 6, near the
    worst relative std but smooth). The relative-std term (only with a joint
    parameter file: its values are the magnitudes) is what the condition number of the
    column-scaled W cannot see: a column excited well in shape but small against the noise
    (the viscous friction of a light distal joint moved slowly).
    """
    from scipy.optimize import minimize
    from threadpoolctl import threadpool_limits

    nv = model.nv
    omega = 2 * np.pi / period
    q0 = 0.5 * (limits.lower + limits.upper)
    t = np.linspace(0, period, OPTIMIZATION_SAMPLES, endpoint=False)
    rng = np.random.default_rng(seed)
    starts = [random_series(model, limits, rng, harmonics, period, t) for _ in range(4)]
    _, rank = condition(model, kinds, *starts[0].evaluate(t))
    prior = _prior(limits, kinds)
    if prior is not None:            # targets: columns with a prior the data can identify
        _, rel = relative_stds(model, kinds, *starts[0].evaluate(t), prior, rank)
        prior = np.where(np.isfinite(rel), prior, 0.0)
        target = prior != 0

    def free_of(series):
        return np.r_[series.a[:, 1:].ravel(), series.b[:, 1:].ravel()]

    def cost(x):
        series = from_free(q0, x, omega, nv, harmonics)
        q, v, acc = series.evaluate(t)
        excess = max(limits.violation(model, q, v, acc), 0.0)
        if prior is None:
            c, _ = condition(model, kinds, q, v, acc, rank)
            spread = 0.0
        else:
            c, rel = relative_stds(model, kinds, q, v, acc, prior, rank)
            spread = np.log(np.mean(rel[target] ** SPREAD_POWER)) / SPREAD_POWER
        return np.log(c) + spread + 100.0 * excess ** 2 if np.isfinite(c + spread) else 1e6

    # one BLAS thread: each cost alternates numba's threads (the batch RNEA) with BLAS calls
    # (the SVD), and OpenBLAS's threads, spinning after each call, took the cores from numba's
    # (rbd_excite on rbd_arm7, 2 cores, --max-iter 20: 13.1 s with 2 BLAS threads, 3.6 s)
    with threadpool_limits(limits=1, user_api="blas"):
        x0 = min((free_of(s) for s in starts), key=cost)
        res = minimize(cost, x0, method="L-BFGS-B", options={"maxiter": max_iter})
    fine = np.linspace(0, period, 10 * OPTIMIZATION_SAMPLES, endpoint=False)
    best = fit_to_limits(model, from_free(q0, res.x, omega, nv, harmonics), limits, fine)
    return best, condition(model, kinds, *best.evaluate(t), rank)[0], res
