"""
Identification as map-reduce: the least-squares problem reduced to sufficient statistics.

Both fits of :mod:`rbd_ros.identification` only need the stacked regressor Y (rows: samples ×
joints; columns: the 10·nb inertial parameters, linear parametrization seed
``linear-parametrization-regressors.txt`` l. 233-250, plus the joint friction / armature
columns of :mod:`rbd_ros.joint_friction`) and torques τ through YᵀY, Yᵀτ and τᵀτ. Forming
YᵀY squares the condition number of Y (the identifiable combinations of a 7-dof arm spread
over 1e6 in singular value: YᵀY would keep 4 digits of the smallest), so the statistics
are kept in the equivalent square-root form (:class:`Statistics`): the triangular factor R
of Y = Q R (YᵀY = RᵀR), c = Qᵀτ (Yᵀτ = Rᵀc) and the residual sum of squares outside the
range of Y, ‖τ - Q c‖² (τᵀτ = ‖c‖² + that). Two sets merge by one QR of [R₁; R₂] (p × p
each: the "TSQR" reduction), so the reduce step costs O(p³) whatever the number of
messages, a map task holds one chunk of samples at a time, and the fits below see R and c
only: the same answer as the fit on the concatenated data, to rounding.
"""
from dataclasses import dataclass

import numpy as np

from . import joint_friction
from .batch import joint_torque_regressor_batch
from .identification import (IdentificationResult, _base, _column_scales, _nearest_consistent,
                             is_physically_consistent, log_cholesky_from_theta,
                             theta_from_log_cholesky, theta_jacobian)

CHUNK = 2048          # samples per regressor block: bounds a map task's memory


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


def regressor(model, q, v, a, kinds=(), eps=joint_friction.EPSILON):
    """Return the stacked regressor of N samples: inertial, then the ``kinds`` columns."""
    Y = joint_torque_regressor_batch(model, np.ascontiguousarray(q, np.float64),
                                     np.ascontiguousarray(v, np.float64),
                                     np.ascontiguousarray(a, np.float64))
    if not kinds:
        return Y
    return np.hstack([Y, joint_friction.regressor(kinds, v, a, eps)])


def statistics(model, q, v, a, tau, kinds=(), eps=joint_friction.EPSILON, chunk=CHUNK,
               per_joint=False):
    """
    Return the :class:`Statistics` of N samples, ``chunk`` at a time (bounded memory).

    q (N, nq), v, a, tau (N, nv), fixed base; ``kinds``: extra columns
    (``joint_friction.kinds``); ``per_joint``: a :class:`PerJoint` instead (for
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
    start = start or joint_friction.JointParameters(tuple(model.joint_names))
    return np.r_[model.inertial_parameters().ravel(), start.vector(kinds)], start.epsilon


def _result(model, stats, kinds, eps, x, x0, extra):
    """Return the IdentificationResult of the parameters x = [θ, extras]."""
    p = 10 * model.nbodies
    theta = x[:p].reshape(model.nbodies, 10)
    consistent, reason = is_physically_consistent(theta)
    Rs = stats.R * _column_scales(stats.R)
    extra["joint_parameters"] = joint_friction.JointParameters.from_vector(
        model.joint_names, kinds, x[p:], eps)
    extra["kinds"] = tuple(kinds)
    return IdentificationResult(
        theta=theta, model=model.with_inertial_parameters(theta),
        rms_before=np.sqrt(stats.sum_of_squares(x0) / stats.rows),
        rms_after=np.sqrt(stats.sum_of_squares(x) / stats.rows),
        rank=_base(Rs, _rtol(stats))[1].size, consistent=consistent, reason=reason, extra=extra)


def _rtol(stats):
    """Return the rank threshold of ``identification._base`` for the stacked Y's shape."""
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
    D = _column_scales(stats.R)     # R and Y have the same column norms
    U, s, Vr = _base(stats.R * D, _rtol(stats) if rtol is None else rtol)
    if prior_weight == 0:
        delta = D * (Vr @ ((U.T @ r0) / s))
    else:
        n, w = stats.rows, float(prior_weight)
        delta = np.linalg.solve(stats.gram / n + w * np.eye(len(x0)), stats.R.T @ r0 / n)
    return _result(model, stats, kinds, eps, x0 + delta, x0,
                   {"base": Vr, "column_scales": D, "singular_values": s})


def consistent(model, stats, kinds=(), prior_weight=1e-4, start=None, max_iter=200,
               method="trf"):
    """
    ``identification.identify_physically_consistent`` on statistics (plus ``kinds``).

    The bodies through log-Cholesky parameters φ (every φ a body: J(θ(φ)) ≻ 0, seed l.
    573-592 and 678), the joint parameters directly, armature and friction bounded below by
    0 (physical: a rotor has inertia, friction takes energy), offsets free; the prior (weight
    w) pulls φ toward the start's and the joint parameters toward the start's (0 without
    ``start``). The residual is R x - c (‖Y x - τ‖² up to the constant ``rss``).
    """
    from scipy.optimize import least_squares as solve

    if prior_weight < 0:
        raise ValueError("prior_weight must be >= 0")
    if stats.rows == 0:
        raise ValueError("no samples")
    nb, p = model.nbodies, 10 * model.nbodies
    x0, eps = _start(model, kinds, start)
    theta0 = x0[:p].reshape(nb, 10)
    if not is_physically_consistent(theta0)[0]:
        theta0 = _nearest_consistent(theta0)
    z0 = np.r_[log_cholesky_from_theta(theta0).ravel(), x0[p:]]
    nv = model.nv
    lower = np.r_[np.full(p, -np.inf), np.concatenate(
        [np.full(nv, 0.0 if k in joint_friction.NONNEGATIVE else -np.inf) for k in kinds]
        if kinds else [np.zeros(0)])]
    z0[p:] = np.maximum(z0[p:], lower[p:])
    R, c = stats.R, stats.c
    sn, sw = 1.0 / np.sqrt(stats.rows), np.sqrt(prior_weight)
    eye = sw * np.eye(len(z0))

    def residual(z):
        x = np.r_[theta_from_log_cholesky(z[:p].reshape(nb, 10)).ravel(), z[p:]]
        r = sn * (R @ x - c)
        return np.concatenate([r, sw * (z - z0)]) if prior_weight > 0 else r

    def jacobian(z):
        Jb = theta_jacobian(z[:p].reshape(nb, 10))
        RJ = np.einsum("rik,ikl->ril", R[:, :p].reshape(len(R), nb, 10), Jb).reshape(len(R), p)
        J = sn * np.hstack([RJ, R[:, p:]])
        return np.vstack([J, eye]) if prior_weight > 0 else J

    options = dict(x_scale="jac") if method != "lm" else {}
    if np.isfinite(lower).any():
        options["bounds"] = (lower, np.full(len(z0), np.inf))
    sol = solve(residual, z0, jac=jacobian, method=method, max_nfev=max_iter, **options)
    phi = sol.x[:p].reshape(nb, 10)
    x = np.r_[theta_from_log_cholesky(phi).ravel(), sol.x[p:]]
    return _result(model, stats, kinds, eps, x, x0, {"phi": phi, "optimizer": sol})


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
