"""
The physically consistent fit from sampled states and torques (the public entry).

It reduces the samples to :class:`~rbd_ros.identification.statistics.Statistics` and fits
them with :func:`~rbd_ros.identification.statistics.consistent`.
"""
import numpy as np

from .least_squares import _rms, _samples, theta_from_log_cholesky
from .statistics import Statistics, consistent


def identify_physically_consistent(model, q, v, a, tau, prior_weight=1e-4, phi0=None,
                                   method="trf", max_iter=200):
    """
    Physically consistent θ from N samples (q (N, nq), v, a, tau (N, nv)).

    ``identification_stats.consistent`` on the samples' statistics: the least-squares fit
    when it is physical (its residual exactly), else the log-Cholesky fit φ (every φ a
    body) with ``scipy.optimize.least_squares`` (``method`` "trf", "lm" or "dogbox", at
    most ``max_iter`` evaluations) minimizing the residual plus ``prior_weight`` times the
    squared distance to the start on the combinations the data do not determine only.
    The start is the model's θ₀ (or the bodies of ``phi0``; a θ₀ that is not physical, a
    massless link, is lifted to a nearby consistent one); ``rms_before`` is the model's.

    ``extra`` holds ``phi``, scipy's ``optimizer`` result (None when least squares was
    physical already) and ``statistics``.
    """
    Y, b = _samples(model, q, v, a, tau)
    start = model if phi0 is None else model.with_inertial_parameters(
        theta_from_log_cholesky(np.asarray(phi0, np.float64).reshape(model.nbodies, 10)))
    stats = Statistics.from_regressor(Y, b, model.nv)     # a floating base's rows too
    res = consistent(start, stats, prior_weight=prior_weight, max_iter=max_iter,
                     method=method)
    res.model = model.with_inertial_parameters(res.theta)
    res.rms_before = _rms(b - Y @ model.inertial_parameters().ravel())
    res.rms_after = _rms(b - Y @ res.theta.ravel())
    return res
