"""
Identification as map-reduce: the least-squares problem reduced to sufficient statistics.

Both fits of :mod:`rbd_ros.identification` only need the stacked regressor Y (rows: samples ×
joints; columns: the 10·nb inertial parameters, linear parametrization seed
``linear-parametrization-regressors.txt`` l. 233-250, plus the joint friction / armature
columns of :mod:`rbd_ros.actuation.joint_parameters`) and torques τ through YᵀY, Yᵀτ and τᵀτ.
Forming YᵀY squares the condition number of Y (the identifiable combinations of a 7-dof arm
spread over 1e6 in singular value: YᵀY would keep 4 digits of the smallest), so the statistics
are kept in the equivalent square-root form (:class:`Statistics`): the triangular factor R
of Y = Q R (YᵀY = RᵀR), c = Qᵀτ (Yᵀτ = Rᵀc) and the residual sum of squares outside the
range of Y, ‖τ - Q c‖² (τᵀτ = ‖c‖² + that). Two sets merge by one QR of [R₁; R₂] (p × p
each: the "TSQR" reduction), so the reduce step costs O(p³) whatever the number of
messages, a map task holds one chunk of samples at a time, and the fits below see R and c
only: the same answer as the fit on the concatenated data, to rounding.
"""
from dataclasses import dataclass

import numpy as np

from ..actuation import joint_parameters
from ..batch import joint_torque_regressor_batch
from .least_squares import (IdentificationResult, column_scales, is_physically_consistent,
                            log_cholesky_from_theta, nearest_consistent, theta_from_log_cholesky,
                            theta_jacobian, truncated_svd)

CHUNK = 2048          # samples per regressor block: bounds a map task's memory
# (N·m)² per unit of log-Cholesky φ²: keeps a body whose best fit lies on the boundary
# J ⪰ 0 at a finite φ, far below any torque noise (10⁻⁵ N·m RMS per unit of φ)
REGULARIZATION = 1e-10
# the fit starts at the least-squares bodies with J's eigenvalues lifted to this fraction of
# the largest: inside the physical set, where the log-Cholesky steps are well scaled (a
# start on the boundary, φ near -∞, converges slowly)
START_LIFT = 0.3


@dataclass
class Statistics:
    """
    Sufficient statistics of a linear least-squares problem ‖Y x - τ‖².

    ``R`` (p, p) upper triangular with RᵀR = YᵀY, ``c`` (p,) with Rᵀc = Yᵀτ, ``rss`` the
    squared residual outside range(Y), ``tt`` = τᵀτ per joint (nv,), ``samples`` (messages)
    and ``rows`` (samples × joints).
    """

    R: np.ndarray
    c: np.ndarray
    rss: float
    tt: np.ndarray
    samples: int
    rows: int

    @classmethod
    def empty(cls, p, nv):
        """No data: the neutral element of :meth:`merge`."""
        return cls(np.zeros((p, p)), np.zeros(p), 0.0, np.zeros(nv), 0, 0)

    @classmethod
    def from_regressor(cls, Y, tau, nv):
        """Return the statistics of the rows Y (m, p) and torques τ (m,) (m = samples · nv)."""
        p = Y.shape[1]
        Q, R = np.linalg.qr(Y)
        c = Q.T @ tau
        k = R.shape[0]
        if k < p:                                          # fewer rows than columns
            R, c = np.vstack([R, np.zeros((p - k, p))]), np.r_[c, np.zeros(p - k)]
        r = tau - Q @ c[:k]
        return cls(R, c, float(r @ r), (tau.reshape(-1, nv) ** 2).sum(axis=0),
                   len(tau) // nv, len(tau))

    def merge(self, other):
        """Return the statistics of both data sets together (order-independent to rounding)."""
        if other.rows == 0:
            return self
        if self.rows == 0:
            return other
        Q, R = np.linalg.qr(np.vstack([self.R, other.R]))
        stacked = np.r_[self.c, other.c]
        c = Q.T @ stacked
        r = stacked - Q @ c
        return Statistics(R, c, self.rss + other.rss + float(r @ r), self.tt + other.tt,
                          self.samples + other.samples, self.rows + other.rows)

    @property
    def gram(self):
        """YᵀY."""
        return self.R.T @ self.R

    @property
    def moment(self):
        """Yᵀτ."""
        return self.R.T @ self.c

    def sum_of_squares(self, x):
        """‖Y x - τ‖² from the statistics."""
        r = self.R @ x - self.c
        return float(r @ r) + self.rss


@dataclass
class PerJoint:
    """
    The :class:`Statistics` of each joint's rows apart, for per-joint weighting.

    ``joints``: one :class:`Statistics` per joint (its rows Y_j, torques τ_j). They merge
    joint by joint; :meth:`scaled` stacks them with a weight per joint, :meth:`total`
    unweighted (the :class:`Statistics` of all rows).
    """

    joints: list

    @classmethod
    def empty(cls, p, nv):
        """No data: the neutral element of :meth:`merge`."""
        return cls([Statistics.empty(p, 1) for _ in range(nv)])

    def merge(self, other):
        """Return the statistics of both data sets together, joint by joint."""
        return PerJoint([a.merge(b) for a, b in zip(self.joints, other.joints, strict=True)])

    @property
    def rows(self):
        return sum(s.rows for s in self.joints)

    @property
    def samples(self):
        return self.joints[0].samples

    @property
    def R(self):
        return self.joints[0].R

    def scaled(self, weights):
        """Return the :class:`Statistics` of the rows of joint j times ``weights[j]``."""
        nv = len(self.joints)
        out = Statistics.empty(self.R.shape[1], nv)
        for j, (s, w) in enumerate(zip(self.joints, weights)):
            tt = np.zeros(nv)
            tt[j] = w * w * s.tt[0]
            out = out.merge(Statistics(w * s.R, w * s.c, w * w * s.rss, tt, s.samples,
                                       s.rows))
        out.samples = self.samples
        return out

    def total(self):
        """Return the unweighted :class:`Statistics` of every row."""
        return self.scaled(np.ones(len(self.joints)))

    def sigma(self, x):
        """Return each joint's residual RMS at the parameters x: √(‖Y_j x - τ_j‖² / n_j)."""
        return np.array([np.sqrt(s.sum_of_squares(x) / max(s.rows, 1)) for s in self.joints])


def regressor(model, q, v, a, kinds=(), eps=joint_parameters.EPSILON):
    """Return the stacked regressor of N samples: inertial, then the ``kinds`` columns."""
    Y = joint_torque_regressor_batch(model, np.ascontiguousarray(q, np.float64),
                                     np.ascontiguousarray(v, np.float64),
                                     np.ascontiguousarray(a, np.float64))
    if not kinds:
        return Y
    return np.hstack([Y, joint_parameters.regressor(kinds, v, a, eps)])


def statistics(model, q, v, a, tau, kinds=(), eps=joint_parameters.EPSILON, chunk=CHUNK,
               per_joint=False):
    """
    Return the :class:`Statistics` of N samples, ``chunk`` at a time (bounded memory).

    q (N, nq), v, a, tau (N, nv), fixed base; ``kinds``: extra columns
    (``joint_parameters.kinds``); ``per_joint``: a :class:`PerJoint` instead (for
    :func:`weighted`).
    """
    if model.floating_base:
        raise ValueError("identification needs a fixed base (the base wrench is not measured)")
    tau = np.asarray(tau, np.float64)
    if not np.all(np.isfinite(tau)):
        raise ValueError("tau contains NaN or inf")
    nv = model.nv
    p = 10 * model.nbodies + len(kinds) * nv
    out = PerJoint.empty(p, nv) if per_joint else Statistics.empty(p, nv)
    for lo in range(0, len(tau), chunk):
        s = slice(lo, lo + chunk)
        Y = regressor(model, q[s], v[s], a[s], kinds, eps)
        if per_joint:                              # rows sample-major: joint j's are j::nv
            part = PerJoint([Statistics.from_regressor(Y[j::nv], tau[s][:, j], 1)
                             for j in range(nv)])
        else:
            part = Statistics.from_regressor(Y, tau[s].reshape(-1), nv)
        out = out.merge(part)
    return out


def _start(model, kinds, start):
    """x₀ = [θ₀, extras₀] and the joint parameters' names (``start``: JointParameters)."""
    start = start or joint_parameters.JointParameters(tuple(model.joint_names))
    return np.r_[model.inertial_parameters().ravel(), start.vector(kinds)], start.epsilon


def _result(model, stats, kinds, eps, x, x0, extra):
    """Return the IdentificationResult of the parameters x = [θ, extras]."""
    p = 10 * model.nbodies
    theta = x[:p].reshape(model.nbodies, 10)
    consistent, reason = is_physically_consistent(theta)
    Rs = stats.R * column_scales(stats.R)
    extra["joint_parameters"] = joint_parameters.JointParameters.from_vector(
        model.joint_names, kinds, x[p:], eps)
    extra["kinds"] = tuple(kinds)
    extra["statistics"] = stats           # what the fit minimized: for its uncertainty
    return IdentificationResult(
        theta=theta, model=model.with_inertial_parameters(theta),
        rms_before=np.sqrt(stats.sum_of_squares(x0) / stats.rows),
        rms_after=np.sqrt(stats.sum_of_squares(x) / stats.rows),
        rank=truncated_svd(Rs, rank_tolerance(stats))[1].size, consistent=consistent,
        reason=reason, extra=extra)


def rank_tolerance(stats):
    """Return the rank threshold of ``identification.truncated_svd`` for the stacked Y's shape."""
    return max(stats.rows, stats.R.shape[1]) * np.finfo(np.float64).eps * 10


def least_squares(model, stats, kinds=(), prior_weight=0.0, start=None, rtol=None):
    """
    ``identification.identify_least_squares`` on statistics (plus the ``kinds`` columns).

    With ``prior_weight`` 0 the identifiable combinations only (SVD of R D: R D and Y D have
    the same singular values and right vectors); else ridge toward the start.
    """
    if prior_weight < 0:
        raise ValueError("prior_weight must be >= 0")
    if stats.rows == 0:
        raise ValueError("no samples")
    x0, eps = _start(model, kinds, start)
    r0 = stats.c - stats.R @ x0                     # Qᵀ (τ - Y x₀)
    D = column_scales(stats.R)     # R and Y have the same column norms
    U, s, Vr = truncated_svd(stats.R * D, rank_tolerance(stats) if rtol is None else rtol)
    if prior_weight == 0:
        delta = D * (Vr @ ((U.T @ r0) / s))
    else:
        n, w = stats.rows, float(prior_weight)
        delta = np.linalg.solve(stats.gram / n + w * np.eye(len(x0)), stats.R.T @ r0 / n)
    return _result(model, stats, kinds, eps, x0 + delta, x0,
                   {"base": Vr, "column_scales": D, "singular_values": s})


def _lower_bounds(model, kinds):
    """Lower bounds of the joint parameters: 0 for armature and friction, offsets free."""
    nv = model.nv
    return np.concatenate([np.full(nv, 0.0 if k in joint_parameters.NONNEGATIVE else -np.inf)
                           for k in kinds]) if kinds else np.zeros(0)


def consistent(model, stats, kinds=(), prior_weight=1e-4, start=None, max_iter=200,
               method="trf", formulation="convex"):
    """
    Physically consistent fit on statistics (plus ``kinds``) that reaches the data.

    First the least-squares fit (identifiable combinations only, the rest at the start's
    values): when it is physically consistent (every body J(θ) ≻ 0, armature and friction
    >= 0) it is the answer, so its residual is the least-squares one exactly and the start
    acts only on what the data do not determine. Otherwise the bodies through log-Cholesky
    parameters φ (every φ a body: seed l. 573-592 and 678), the joint parameters directly
    (armature and friction bounded below by 0), started at the least-squares solution made
    consistent, minimizing ‖Y x - τ‖²/n + w ‖V_nᵀ D⁻¹ (x - x₀)‖² /n + ε ‖φ - φ₀‖²: the prior
    (w = ``prior_weight``) acts on the null space V_n of the column-scaled regressor Y D
    only (what the data do not determine), ε = :data:`REGULARIZATION` keeps bodies whose
    optimum lies on the boundary J ⪰ 0 at a finite φ. The residual is R x - c.
    The convex formulation (the default, ``convex``) first looks for another null-space
    part that makes the least-squares estimate physical (``convex.complete``: then the fit
    has least squares' identifiable combinations exactly, ``least_squares_realizable``), and
    only where there is none fits on the pseudo-inertia LMIs.
    """
    if prior_weight < 0:
        raise ValueError("prior_weight must be >= 0")
    if stats.rows == 0:
        raise ValueError("no samples")
    p = 10 * model.nbodies
    x0, eps = _start(model, kinds, start)
    lsq = least_squares(model, stats, kinds, start=start)
    x_ls = np.r_[lsq.theta.ravel(), lsq.extra["joint_parameters"].vector(kinds)]
    lower = np.r_[np.full(p, -np.inf), _lower_bounds(model, kinds)]
    if lsq.consistent and np.all(x_ls[p:] >= lower[p:]):
        return _result(model, stats, kinds, eps, x_ls, x0,
                       {"phi": log_cholesky_from_theta(lsq.theta), "optimizer": None,
                        "least_squares_consistent": True, "least_squares_realizable": True})
    D = column_scales(stats.R)
    _, s, Vt = np.linalg.svd(stats.R * D)
    r = int(np.sum(s > rank_tolerance(stats) * s[0])) if s.size and s[0] > 0 else 0
    null_space = (Vt[r:], D)                # V_nᵀ and the column scales D
    if formulation == "convex":
        return _convex_fit(model, stats, kinds, eps, x_ls, x0, lower, null_space,
                           prior_weight)
    if formulation != "log-cholesky":
        raise ValueError(f"unknown formulation {formulation!r}: convex or log-cholesky")
    return _log_cholesky_fit(model, stats, kinds, eps, lsq, x_ls, x0, lower, null_space,
                             prior_weight, method, max_iter)


def _convex_fit(model, stats, kinds, eps, x_ls, x0, lower, null_space, prior_weight):
    """:func:`consistent`'s convex formulation: least squares completed, else the LMI fit."""
    from . import convex as identification_convex
    nb, p = model.nbodies, 10 * model.nbodies
    Vn, D = null_space
    x = identification_convex.complete(nb, x_ls, Vn, D, lower, x0)
    if x is not None:                       # least squares is realizable: keep its β̂
        return _result(model, stats, kinds, eps, x, x0,
                       {"optimizer": None, "least_squares_consistent": False,
                        "least_squares_realizable": True})
    x, solver, status = identification_convex.fit(nb, stats, x0, lower, Vn, D, prior_weight)
    x[p:] = np.maximum(x[p:], lower[p:])                # the solver's tolerance
    x[:p] = strictly_inside(x[:p].reshape(nb, 10)).ravel()
    return _result(model, stats, kinds, eps, x, x0,
                   {"optimizer": None, "solver": solver, "status": status,
                    "least_squares_consistent": False, "least_squares_realizable": False})


def _log_cholesky_fit(model, stats, kinds, eps, lsq, x_ls, x0, lower, null_space,
                      prior_weight, method, max_iter):
    """:func:`consistent`'s log-Cholesky formulation: a bounded nonlinear least squares."""
    from scipy.optimize import least_squares as solve

    nb, p = model.nbodies, 10 * model.nbodies
    R, c = stats.R, stats.c
    theta0 = x0[:p].reshape(nb, 10)
    if not is_physically_consistent(theta0)[0]:
        theta0 = nearest_consistent(theta0)
    phi0 = log_cholesky_from_theta(theta0).ravel()
    z0 = np.r_[log_cholesky_from_theta(nearest_consistent(lsq.theta, START_LIFT)).ravel(),
               np.maximum(x_ls[p:], lower[p:])]
    Vn, D = null_space
    null = Vn / D                                       # V_nᵀ D⁻¹
    sn = 1.0 / np.sqrt(stats.rows)
    sw, se = np.sqrt(prior_weight) * sn, np.sqrt(REGULARIZATION)
    # the null-space prior is scaled like the data rows (D⁻¹: column norms of Y, times 1/√n)

    def point(z):
        return np.r_[theta_from_log_cholesky(z[:p].reshape(nb, 10)).ravel(), z[p:]]

    def residual(z):
        x = point(z)
        return np.concatenate([sn * (R @ x - c), sw * (null @ (x - x0)), se * (z[:p] - phi0)])

    def jacobian(z):
        Jb = theta_jacobian(z[:p].reshape(nb, 10))
        dx = np.zeros((len(z), len(z)))
        dx[:p, :p] = _block_diagonal(Jb)
        dx[p:, p:] = np.eye(len(z) - p)
        reg = np.hstack([se * np.eye(p), np.zeros((p, len(z) - p))])
        return np.vstack([sn * (R @ dx), sw * (null @ dx), reg])

    options = dict(x_scale="jac")
    if np.isfinite(lower).any():
        options["bounds"] = (lower, np.full(len(z0), np.inf))
    sol = solve(residual, z0, jac=jacobian, method=method, max_nfev=max_iter, **options)
    x = point(sol.x)
    x[:p] = strictly_inside(x[:p].reshape(nb, 10)).ravel()
    return _result(model, stats, kinds, eps, x, x0,
                   {"phi": sol.x[:p].reshape(nb, 10), "optimizer": sol,
                    "least_squares_consistent": False})


def strictly_inside(theta):
    """
    Return θ with every body strictly physical as ``is_physically_consistent`` checks it.

    A best fit on the boundary J ⪰ 0 (a rod, a planar body) reaches it up to rounding,
    where the strict checks may fail: J's eigenvalues are then lifted by the smallest of
    1e-12 ... 1e-6 of its largest that passes (a change far below any torque noise).
    """
    for eps in (0.0, 1e-12, 1e-10, 1e-8, 1e-6):
        lifted = nearest_consistent(theta, eps) if eps else theta
        if is_physically_consistent(lifted)[0]:
            return lifted
    return lifted


def _block_diagonal(blocks):
    """Return the block-diagonal matrix of ``blocks`` (nb, 10, 10)."""
    nb = len(blocks)
    out = np.zeros((10 * nb, 10 * nb))
    for i, b in enumerate(blocks):
        out[10 * i:10 * i + 10, 10 * i:10 * i + 10] = b
    return out


METHODS = {"least-squares": least_squares, "consistent": consistent}
WEIGHTINGS = ("none", "per-joint")


def weighted(model, stats, method="least-squares", kinds=(), **options):
    """
    Weighted least squares with a weight per joint, from :class:`PerJoint` statistics.

    Joints whose torque sensors differ in noise (or whose model error differs) get rows
    weighted by 1/σ_j, σ_j the residual RMS of joint j after a first, unweighted
    :func:`least_squares` fit (the usual two-step choice of robot identification: an
    estimate of each joint's noise, then the fit that gives each joint's rows equal
    variance). Both passes use the same statistics: map-reduce as the unweighted fit.
    ``method`` (``METHODS``) and ``options`` are those of the second fit. The weights are
    σ/σ_j, σ the RMS of the σ_j (the weighted residual keeps the unweighted one's size); a
    σ_j of 0 (data a fit explains exactly) is raised to 1e-9 of the largest, and every
    weight is 1 when all are 0. The result's RMS errors are unweighted;
    ``extra["joint_sigma"]`` holds the σ_j and ``extra["joint_weights"]`` the weights.
    """
    total = stats.total()
    first = least_squares(model, total, kinds, start=options.get("start"))
    x1 = np.r_[first.theta.ravel(), first.extra["joint_parameters"].vector(kinds)]
    sigma = stats.sigma(x1)
    top = sigma.max()
    # w_j = σ / σ_j, σ the overall residual RMS: each joint's weighted residual is then σ,
    # so the whole weighted residual keeps the unweighted one's size (and a prior its weight)
    overall = np.sqrt(np.mean(sigma ** 2))
    weights = overall / np.maximum(sigma, 1e-9 * top) if top > 0 else np.ones(len(sigma))
    res = METHODS[method](model, stats.scaled(weights), kinds, **options)
    x0, _ = _start(model, kinds, options.get("start"))
    x = np.r_[res.theta.ravel(), res.extra["joint_parameters"].vector(kinds)]
    res.rms_before = np.sqrt(total.sum_of_squares(x0) / total.rows)
    res.rms_after = np.sqrt(total.sum_of_squares(x) / total.rows)
    res.extra["joint_sigma"], res.extra["joint_weights"] = sigma, weights
    return res
