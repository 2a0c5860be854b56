"""
The physically consistent fit from sampled states and torques (the public entry).

It reduces the samples to :class:`~rbd_ros.identification.statistics.Statistics` and fits
them with :func:`~rbd_ros.identification.statistics.consistent`.
"""
import numpy as np

from .least_squares import rms_of, stacked_samples, theta_from_log_cholesky
from .statistics import Statistics, consistent


def identify_physically_consistent(model, q, v, a, tau, prior_weight=1e-4, phi0=None,
                                   method="trf", max_iter=200):
    """
    Return physically consistent inertial parameters of N sampled states and torques.

    The samples are reduced to their statistics and fitted by
    ``rbd_ros.identification.statistics.consistent`` in its convex formulation: first the
    least-squares fit (the identifiable combinations, the rest at the start's values); when
    every body of it is physical it is the answer (its residual is the least-squares one
    exactly). Otherwise another choice of what the data do not determine that makes it
    physical (then the fitted torques are still least squares'); only where there is none,
    the least-squares fit under the constraints J(θ) ⪰ 0 of every body (a semidefinite
    program, cvxpy) and, with ``prior_weight`` > 0, of the fits as good the one nearest the
    start on the combinations the data do not determine.

    Parameters
    ----------
    model : Model
        The robot; its θ₀ is the start (``rms_before`` is its error).
    q : array_like, shape (N, nq)
        Configurations (rad or m).
    v : array_like, shape (N, nv)
        Velocities (rad/s or m/s).
    a : array_like, shape (N, nv)
        Accelerations (rad/s² or m/s²).
    tau : array_like, shape (N, nv)
        Measured joint torques (N·m or N).
    prior_weight : float, optional
        >= 0; above 0 the start decides the undetermined combinations of the constrained
        fit (its value matters only there).
    phi0 : array_like, shape (nbodies, 10), optional
        Another start, as log-Cholesky parameters (:func:`theta_from_log_cholesky`); None:
        the model's θ₀.
    method : str, optional
        Unused by the convex formulation (kept for callers of the former log-Cholesky fit).
    max_iter : int, optional
        Unused by the convex formulation, as ``method``.

    Returns
    -------
    IdentificationResult
        ``extra``: ``optimizer`` (None), ``least_squares_consistent``,
        ``least_squares_realizable`` (whether the least-squares torques were kept), ``phi``
        (only when least squares was physical already), ``solver`` and ``status`` (when the
        constrained fit ran), ``joint_parameters``, ``kinds`` and ``statistics``.

    Raises
    ------
    ValueError
        If ``prior_weight`` < 0, the shapes disagree, ``tau`` has NaN or inf, N is 0, or no
        solver succeeds on the constrained fit.

    """
    Y, b = stacked_samples(model, q, v, a, tau)
    start = model if phi0 is None else model.with_inertial_parameters(
        theta_from_log_cholesky(np.asarray(phi0, np.float64).reshape(model.nbodies, 10)))
    stats = Statistics.from_regressor(Y, b, model.nv)     # a floating base's rows too
    res = consistent(start, stats, prior_weight=prior_weight, max_iter=max_iter,
                     method=method)
    res.model = model.with_inertial_parameters(res.theta)
    res.rms_before = rms_of(b - Y @ model.inertial_parameters().ravel())
    res.rms_after = rms_of(b - Y @ res.theta.ravel())
    return res
