"""
Identification oracles the core and replay tests share: least squares written out by hand.

Each is the textbook formula on the stacked regressor (``numpy.linalg.pinv``), independent
of ``rbd_ros.identification``'s solvers: the prediction error a calibrated least-squares fit
must show, and a two-pass weighted least squares.
"""
import numpy as np

import rbd_ros


def regressor(model, q, v, a):
    """Return the stacked joint torque regressor Y (N·nv, 10·nbodies): τ = Y θ."""
    return rbd_ros.joint_torque_regressor_batch(model, q, v, a).reshape(-1, 10 * model.nbodies)


def expected_prediction_rms(model, fit_states, new_states, noise):
    """
    Return the rms error on ``new_states``' torques of a least-squares θ fit to ``fit_states``.

    With torque noise of deviation ``noise``: σ √mean diag(Y₂ (YᵀY)⁺ Y₂ᵀ) (the truth's
    identifiable part is all torques show, so a calibrated fit errs by that much).
    """
    Y, Y2 = regressor(model, *fit_states), regressor(model, *new_states)
    covariance = np.linalg.pinv(Y.T @ Y, rcond=1e-10)
    return noise * np.sqrt(np.mean(np.einsum("ij,jk,ik->i", Y2, covariance, Y2)))


def pinv_fit(Y, b, x0):
    """
    Return the oracle fit x₀ + D (Y D)⁺ (b - Y x₀), D the inverse column norms of Y.

    A column zero up to rounding (below 1e-9 of the largest) is left unscaled.
    """
    norms = np.linalg.norm(Y, axis=0)
    D = 1 / np.where(norms > 1e-9 * norms.max(), norms, 1.0)
    return x0 + D * (np.linalg.pinv(Y * D, rtol=max(Y.shape) * np.finfo(float).eps * 10)
                     @ (b - Y @ x0))


def weighted_oracle(Y, tau, x0):
    """
    Two-pass weighted least squares on the stacked rows, by hand.

    An unweighted fit; σ_j the RMS residual of joint j; the fit again with joint j's rows
    (and torques) times σ / σ_j, σ the RMS of the σ_j. Returns (x, σ).
    """
    n, nv = tau.shape
    x1 = pinv_fit(Y, tau.ravel(), x0)
    sigma = np.sqrt((((Y @ x1).reshape(n, nv) - tau) ** 2).mean(axis=0))
    w = np.tile(np.sqrt(np.mean(sigma ** 2)) / sigma, n)
    return pinv_fit(Y * w[:, None], tau.ravel() * w, x0), sigma
