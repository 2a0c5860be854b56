"""
Payload estimation: the ten inertial parameters of an object on one link, all else known.

With the robot known (the URDF, the joint parameters), the torque the model misses is the
payload's: τ - RNEA(q, v, a) - τ_joints = Y_b(q, v, a) T θ_p, with Y_b the column block of
the link's body in the joint torque regressor (linear parametrization seed,
``linear-parametrization-regressors.txt`` l. 233-250) and T the linear map of θ from the
link's frame to the body's (fixed placement). θ_p is fitted by least squares; when that is
not a body, by the convex fit with its pseudo-inertia J(θ_p) ⪰ 0
(``identification_convex``). Its covariance σ² (AᵀA)⁻¹ (σ² the residual variance) gives
the standard deviation of the mass, the centre of mass and the centroidal inertia
(linearized at the estimate). The estimate is refused when the data do not excite the
payload: the payload's columns rank-deficient, or the mass's relative std above the
threshold.
"""
from dataclasses import dataclass

import numpy as np

from ..batch import joint_torque_regressor_batch, rnea_batch
from .least_squares import _column_scales, is_physically_consistent
from .statistics import Statistics, _strictly_inside

NAMES = ("mass", "com_x", "com_y", "com_z", "ixx", "ixy", "ixz", "iyy", "iyz", "izz")


@dataclass
class PayloadEstimate:
    """ok, message, values (NAMES order: centroidal inertia), stds, θ (link frame), σ."""

    ok: bool
    message: str
    values: np.ndarray
    stds: np.ndarray
    theta: np.ndarray
    sigma: float

    def compact(self):
        """Return the 10 compact numbers (``rbd_ros.model.inertia.compact``) in the link frame."""
        from ..model.inertia import compact
        m, c = self.values[0], self.values[1:4]
        ixx, ixy, ixz, iyy, iyz, izz = self.values[4:]
        return compact(m, c, np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]]))


def _skew(x):
    return np.array([[0, -x[2], x[1]], [x[2], 0, -x[0]], [-x[1], x[0], 0]])


def _move_theta(theta, R, p):
    """θ of a body given in a child frame, in the parent frame (x_parent = R x_child + p)."""
    m, h = theta[0], theta[1:4]
    rot = np.array([[theta[4], theta[5], theta[7]], [theta[5], theta[6], theta[8]],
                    [theta[7], theta[8], theta[9]]])
    Rh, P = R @ h, _skew(p)
    # a point mass m at x has I_o = -m [x]ײ; x -> R x + p
    out_rot = R @ rot @ R.T - (_skew(Rh) @ P + P @ _skew(Rh)) - m * P @ P
    return np.r_[m, Rh + m * p, out_rot[0, 0], out_rot[0, 1], out_rot[1, 1], out_rot[0, 2],
                 out_rot[1, 2], out_rot[2, 2]]


def link_map(model, link):
    """Return (body index, T (10, 10)): θ in ``link``'s frame to θ in its body's frame."""
    if link not in model.link_frames:
        raise ValueError(f"no link {link[:60]!r} in the model")
    body, R, p = model.link_frames[link]
    if body < 0:
        raise ValueError(f"link {link[:60]!r} is welded to the world: no payload on it moves")
    R, p = np.asarray(R, np.float64), np.asarray(p, np.float64)
    return body, np.column_stack([_move_theta(e, R, p) for e in np.eye(10)])


def _centroidal(theta):
    """Return the reported numbers of θ (about the link origin): m, c, centroidal inertia."""
    m = theta[0]
    c = theta[1:4] / m
    rot = np.array([[theta[4], theta[5], theta[7]], [theta[5], theta[6], theta[8]],
                    [theta[7], theta[8], theta[9]]]) - m * (c @ c * np.eye(3) - np.outer(c, c))
    return np.r_[m, c, rot[0, 0], rot[0, 1], rot[0, 2], rot[1, 1], rot[1, 2], rot[2, 2]]


def estimate(model, link, q, v, a, tau, joint_torques=None, max_relative_std=0.10):
    """
    Estimate the payload on ``link`` from N samples q (N, nq), v, a, tau (N, nv).

    ``joint_torques``: the joint friction / armature torques (N, nv) the robot adds (known),
    or None. Returns a :class:`PayloadEstimate`; ``ok`` False with the reason when the data
    cannot determine it. ValueError for inputs that are not samples of the model.
    """
    q, v, a, tau = (np.ascontiguousarray(np.atleast_2d(x), np.float64) for x in (q, v, a, tau))
    if len(tau) == 0 or tau.shape != v.shape:
        raise ValueError(f"tau must have shape (N, {model.nv}) like v, N > 0")
    body, T = link_map(model, link)
    nan = np.full(10, np.nan)
    residual = tau - rnea_batch(model, q, v, a)
    if joint_torques is not None:
        residual = residual - joint_torques
    A = joint_torque_regressor_batch(model, q, v, a)[:, 10 * body:10 * body + 10] @ T
    b = residual.reshape(-1)
    if not (np.all(np.isfinite(A)) and np.all(np.isfinite(b))):
        raise ValueError("the samples give NaN or inf")
    D = _column_scales(A)
    s = np.linalg.svd(A * D, compute_uv=False)
    if len(b) <= 10 or s[-1] <= 1e-8 * s[0]:
        return PayloadEstimate(False, "the samples do not excite the payload: its 10 "
                               "parameters are not separable (rank "
                               f"{int(np.sum(s > 1e-8 * s[0]))} of 10)", nan, nan, nan, np.nan)
    theta = D * np.linalg.lstsq(A * D, b, rcond=None)[0]
    if not is_physically_consistent(theta)[0]:
        from . import convex as identification_convex
        stats = Statistics.from_regressor(A, b, model.nv)
        theta, _, _ = identification_convex.fit(1, stats, np.zeros(10), np.full(10, -np.inf),
                                                np.zeros((0, 10)), D, 0.0)
        theta = _strictly_inside(theta[None])[0]
    r = A @ theta - b
    sigma = float(np.sqrt(r @ r / (len(b) - 10)))
    cov = sigma ** 2 * (D[:, None] * np.linalg.inv((A * D).T @ (A * D)) * D[None, :])
    values = _centroidal(theta)
    G = np.empty((10, 10))                     # ∂values/∂θ, central differences
    for k in range(10):
        h = 1e-7 * max(abs(theta[k]), 1e-3)
        e = np.zeros(10)
        e[k] = h
        G[:, k] = (_centroidal(theta + e) - _centroidal(theta - e)) / (2 * h)
    stds = np.sqrt(np.maximum(np.diag(G @ cov @ G.T), 0.0))
    rel = stds[0] / abs(values[0]) if values[0] != 0 else np.inf
    if not rel <= max_relative_std:
        return PayloadEstimate(False, f"the samples do not excite the payload enough: the "
                               f"mass's relative std {100 * rel:.3g} % is above "
                               f"{100 * max_relative_std:.3g} %", values, stds, theta, sigma)
    return PayloadEstimate(True, f"payload on {link}: {values[0]:.4g} ± {stds[0]:.2g} kg",
                           values, stds, theta, sigma)
