"""
θ from sampled states and torques by linear least squares; the result of an identification.

The parametrizations of θ are in :mod:`rbd_ros.identification.parametrization` (imported
here, where the other modules of the package take them from).
"""
from dataclasses import dataclass

import numpy as np

from ..batch import joint_torque_regressor_batch
from .parametrization import (is_physically_consistent, log_cholesky_from_theta,
                              pseudo_inertia, theta_from_log_cholesky,
                              theta_from_pseudo_inertia, theta_jacobian)

__all__ = ["IdentificationResult", "identify_least_squares",
           "is_physically_consistent", "log_cholesky_from_theta", "pseudo_inertia",
           "theta_from_log_cholesky", "theta_from_pseudo_inertia", "theta_jacobian"]

# -- identification ------------------------------------------------------------------------


@dataclass
class IdentificationResult:
    """
    What an identification returns (:func:`identify_least_squares`, ...).

    Parameters
    ----------
    theta : ndarray, shape (nbodies, 10)
        The identified inertial parameters, in the order of
        :meth:`rbd_ros.Model.inertial_parameters`.
    model : Model
        A new model carrying them (``Model.with_inertial_parameters``).
    rms_before : float
        RMS torque error over the samples with the starting model's θ (N·m).
    rms_after : float
        RMS torque error with the identified θ (N·m).
    rank : int
        The number of identifiable parameter combinations found in the data (the size of
        the base: what the samples determine; the rest of θ keeps the start's values).
    consistent : bool
        ``is_physically_consistent(theta)[0]``.
    reason : str or None
        ``is_physically_consistent(theta)[1]``: why θ is not physical, else None.
    extra : dict
        Method-specific details (each method's docstring names them).

    """

    theta: np.ndarray
    model: object
    rms_before: float
    rms_after: float
    rank: int
    consistent: bool
    reason: object
    extra: dict


def stacked_samples(model, q, v, a, tau):
    """Stacked regressor and torques of the samples (leading dimension N)."""
    q = np.atleast_2d(np.asarray(q, np.float64))
    v = np.atleast_2d(np.asarray(v, np.float64))
    a = np.atleast_2d(np.asarray(a, np.float64))
    tau = np.atleast_2d(np.asarray(tau, np.float64))
    if tau.shape != v.shape:
        raise ValueError(f"tau must have shape (N, {model.nv}) like v, got {tau.shape}")
    Y = joint_torque_regressor_batch(model, np.ascontiguousarray(q), np.ascontiguousarray(v),
                                     np.ascontiguousarray(a))
    b = tau.reshape(-1)
    if not np.all(np.isfinite(b)):
        raise ValueError("tau contains NaN or inf")
    if len(b) == 0:
        raise ValueError("no samples")
    return Y, b


def rms_of(r):
    return float(np.sqrt(np.mean(r * r)))


def column_scales(Y):
    """
    Return 1 / column norm, and 1 for a column that is zero up to rounding.

    This makes the SVD's rank decision insensitive to the units of θ (kg, kg·m, kg·m²) and
    to the sizes of the bodies. A column is zero up to rounding where its norm is below
    1e-9 of the largest: a parameter that acts on no joint (the mass of a body on a vertical
    axis through its origin) gives rounding noise, about 1e-16 of the other columns, which
    scaled to unit norm would pass the rank test and be fitted to the noise.
    """
    norms = np.linalg.norm(Y, axis=0)
    nonzero = norms > 1e-9 * norms.max(initial=0.0)
    return np.where(nonzero, 1.0 / np.where(nonzero, norms, 1.0), 1.0)


def truncated_svd(Ys, rtol):
    """(U_r, s_r, V_r) of the SVD of Ys truncated to its numerical rank."""
    U, s, Vt = np.linalg.svd(Ys, full_matrices=False)
    if s.size == 0 or s[0] == 0:
        return U[:, :0], s[:0], Vt[:0].T
    if rtol is None:
        rtol = max(Ys.shape) * np.finfo(np.float64).eps * 10
    r = int(np.sum(s > rtol * s[0]))
    return U[:, :r], s[:r], Vt[:r].T


def identify_least_squares(model, q, v, a, tau, prior_weight=0.0, rtol=None):
    """
    Return the least-squares inertial parameters of N sampled states and torques.

    With ``prior_weight == 0`` only the identifiable combinations of θ (the row space of the
    stacked regressor Y, found by an SVD of Y with its columns normalized; ``rtol`` is the
    relative singular value threshold) are fitted; the others keep the model's current
    values: θ = θ₀ + Y⁺ (τ - Y θ₀), the fitted torques being the projection of τ on the
    range of Y. With ``prior_weight = w > 0`` the cost is
    mean((Y θ - τ)²) + w ‖θ - θ₀‖² (ridge regression toward the model's θ₀).
    The result need not be physically consistent (see ``result.consistent``).

    Parameters
    ----------
    model : Model
        The robot; its θ₀ is the start and the prior.
    q : array_like, shape (N, nq)
        Configurations (rad or m).
    v : array_like, shape (N, nv)
        Velocities (rad/s or m/s).
    a : array_like, shape (N, nv)
        Accelerations (rad/s² or m/s²).
    tau : array_like, shape (N, nv)
        Measured joint torques (N·m or N).
    prior_weight : float, optional
        w >= 0 above (default 0: the identifiable combinations only).
    rtol : float, optional
        The relative singular value below which a combination is not identifiable; None:
        the default for the data's size.

    Returns
    -------
    IdentificationResult
        ``extra``: ``base`` (the identifiable directions, rank × 10·nbodies),
        ``column_scales`` and ``singular_values``.

    Raises
    ------
    ValueError
        If ``prior_weight`` < 0, the shapes disagree, ``tau`` has NaN or inf, or N is 0.

    """
    if prior_weight < 0:
        raise ValueError("prior_weight must be >= 0")
    Y, b = stacked_samples(model, q, v, a, tau)
    theta0 = model.inertial_parameters().ravel()
    r0 = b - Y @ theta0
    D = column_scales(Y)
    Ys = Y * D
    U, s, Vr = truncated_svd(Ys, rtol)
    if prior_weight == 0:
        delta = D * (Vr @ ((U.T @ r0) / s))
    else:
        n = len(b)
        w = float(prior_weight)
        # minimize |Y δ - r0|²/n + w |δ|²  ->  (YᵀY/n + w) δ = Yᵀ r0 / n
        A = Y.T @ Y / n + w * np.eye(Y.shape[1])
        delta = np.linalg.solve(A, Y.T @ r0 / n)
    theta = (theta0 + delta).reshape(model.nbodies, 10)
    consistent, reason = is_physically_consistent(theta)
    return IdentificationResult(
        theta=theta, model=model.with_inertial_parameters(theta),
        rms_before=rms_of(r0), rms_after=rms_of(b - Y @ theta.ravel()), rank=len(s),
        consistent=consistent, reason=reason,
        extra={"base": Vr, "column_scales": D, "singular_values": s})


def nearest_consistent(theta, eps=1e-9):
    """
    Return θ made physically consistent (for a starting point only).

    The eigenvalues of J are lifted to at least eps · max(1, largest eigenvalue).
    """
    J = pseudo_inertia(theta)
    w, Q = np.linalg.eigh(J)
    floor = eps * np.maximum(1.0, np.max(np.abs(w), axis=-1, keepdims=True))
    w = np.maximum(w, floor)
    return theta_from_pseudo_inertia((Q * w[..., None, :]) @ np.swapaxes(Q, -1, -2))
