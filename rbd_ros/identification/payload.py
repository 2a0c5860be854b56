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
from . import differentiation
from .least_squares import column_scales, is_physically_consistent
from .statistics import Statistics, strictly_inside

CHUNK_BYTES = 16 << 20       # the regressor of one chunk of samples: bounds the memory
QR_ROWS = 512                # rows per block of the chunk's QR (in cache)
CHECK_ORDER = 5              # the degree of the check fit of the accelerations (uncertainty)
NAMES = ("mass", "com_x", "com_y", "com_z", "ixx", "ixy", "ixz", "iyy", "iyz", "izz")


@dataclass
class PayloadEstimate:
    """ok, message, values (NAMES order: centroidal inertia), stds, θ (link frame), σ, samples."""

    ok: bool
    message: str
    values: np.ndarray
    stds: np.ndarray
    theta: np.ndarray
    sigma: float
    samples: int = 0

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
    if joint_torques is not None:
        tau = tau - joint_torques
    body, T = link_map(model, link)
    step = chunk_samples(model)
    chunks = ((q[k:k + step], v[k:k + step], a[k:k + step], tau[k:k + step], None)
              for k in range(0, len(tau), step))
    return _fit(link, _accumulate(model, body, T, chunks), max_relative_std)


def estimate_from_stamps(model, link, t, q, v, tau, joint_torques=None,
                         max_relative_std=0.10):
    """
    Estimate the payload on ``link`` from N samples stamped t (N,), q, v and tau.

    The accelerations are the derivatives of v on the real stamps, with the gap rule of
    :mod:`.differentiation` (no fit across a hole; runs too short to differentiate are left
    out, and the message says how many samples and holes). ``joint_torques``: None, or a
    function (v, a) -> the joint friction / armature torques (n, nv) the robot adds.
    The regressor is built a chunk of :func:`chunk_samples` samples at a time: the memory
    does not grow with N.
    """
    t = np.asarray(t, np.float64)
    q, v, tau = (np.ascontiguousarray(np.atleast_2d(x), np.float64) for x in (q, v, tau))
    if not (len(t) == len(q) == len(v) == len(tau)) or tau.shape != v.shape:
        raise ValueError(f"t (N,), q (N, {model.nq}), v and tau (N, {model.nv}) must have "
                         "as many samples")
    body, T = link_map(model, link)
    runs, holes = differentiation.runs(t)
    used = sum(stop - start for start, stop in runs)
    if used == 0:
        return PayloadEstimate(False, f"no run of {differentiation.WINDOW} samples without a "
                               f"hole in the stamps ({holes} holes in {len(t)} samples)",
                               *_NO_ESTIMATE)
    step = chunk_samples(model)

    def chunks():
        for start, stop in runs:
            for first in range(start, stop, step):
                last = min(first + step, stop)
                vs = v[first:last]
                a, a_check = (differentiation.derivative(t, v, start, stop, first, last,
                                                         order=order)
                              for order in (differentiation.ORDER, CHECK_ORDER))
                known = check = tau[first:last]
                if joint_torques is not None:
                    known = known - joint_torques(vs, a)
                    check = check - joint_torques(vs, a_check)
                yield q[first:last], vs, a, known, (a_check, check)
    est = _fit(link, _accumulate(model, body, T, chunks()), max_relative_std)
    if holes:
        est.message += (f" ({holes} holes in the stamps: {used} of {len(t)} samples used, "
                        "no derivative across a hole)")
    return est


_NO_ESTIMATE = (np.full(10, np.nan), np.full(10, np.nan), np.full(10, np.nan), np.nan)


def chunk_samples(model):
    """Return how many samples' regressor (every body's columns) fits in CHUNK_BYTES."""
    return max(1, CHUNK_BYTES // (8 * model.nv * 10 * model.nbodies))


def _accumulate(model, body, T, chunks):
    """
    Return the payload's columns' :class:`Statistics` and Σ Aᵀ(b_check - b) over ``chunks``.

    A chunk: (q, v, a, the known torques, check); ``check`` None, or (a_check, its known
    torques): the other acceleration estimate whose effect on θ is the differentiation's
    share of the uncertainty (A is kept: the payload's own share of that effect is second
    order).
    """
    stats, shift = Statistics.empty(10, model.nv), np.zeros(10)
    for q, v, a, known, check in chunks:
        A = joint_torque_regressor_batch(model, q, v, a)[:, 10 * body:10 * body + 10] @ T
        b = (known - rnea_batch(model, q, v, a)).reshape(-1)
        if check is not None:
            b_check = (check[1] - rnea_batch(model, q, v, check[0])).reshape(-1)
            shift += A.T @ (b_check - b)
        if not (np.all(np.isfinite(A)) and np.all(np.isfinite(b))
                and np.all(np.isfinite(shift))):
            raise ValueError("the samples give NaN or inf")
        stats = stats.merge(_chunk_statistics(A, b, model.nv))
    return stats, shift


def _chunk_statistics(A, b, nv):
    """
    Return the :class:`Statistics` of the rows A (m, 10), b (m,).

    The triangular factor F of [A b] = Q F, by blocks of :data:`QR_ROWS` rows (F of the
    rows so far stacked on the next block's; no Q formed): F = [[R, c], [0, ρ]] with
    RᵀR = AᵀA, Rᵀc = Aᵀb and ρ² the residual outside range(A). One QR of 30,000 rows,
    Q formed (``Statistics.from_regressor``) took 20x the time of these blocks.
    """
    rows = np.column_stack([A, b])
    F = np.zeros((0, 11))
    for k in range(0, len(rows), QR_ROWS):
        F = np.linalg.qr(np.vstack([F, rows[k:k + QR_ROWS]]), mode="r")
    F = np.vstack([F, np.zeros((max(0, 11 - F.shape[0]), 11))])
    return Statistics(F[:10, :10], F[:10, 10], float(F[10, 10] ** 2),
                      (b.reshape(-1, nv) ** 2).sum(axis=0), len(b) // nv, len(b))


def _fit(link, accumulated, max_relative_std):
    """
    Return the :class:`PayloadEstimate` of ``_accumulate``'s statistics (θ in the link frame).

    The covariance: σ² (AᵀA)⁻¹ (the residual's variance: the effort noise), plus δθ δθᵀ,
    δθ = (AᵀA)⁻¹ Σ Aᵀ(b_check - b) the change of the fit with the check acceleration (the
    acceleration's differentiation error, which the residual does not show as white noise).
    """
    stats, shift = accumulated
    D = column_scales(stats.R)          # R's column norms are the regressor's
    RD = stats.R * D
    s = np.linalg.svd(RD, compute_uv=False)
    if stats.rows <= 10 or not s[-1] > 1e-8 * s[0]:
        return PayloadEstimate(False, "the samples do not excite the payload: its 10 "
                               "parameters are not separable (rank "
                               f"{int(np.sum(s > 1e-8 * s[0]))} of 10)", *_NO_ESTIMATE,
                               samples=stats.samples)
    theta = D * np.linalg.solve(RD, stats.c)
    if not is_physically_consistent(theta)[0]:
        from . import convex as identification_convex
        theta, _, _ = identification_convex.fit(1, stats, np.zeros(10), np.full(10, -np.inf),
                                                np.zeros((0, 10)), D, 0.0)
        theta = strictly_inside(theta[None])[0]
    sigma = float(np.sqrt(stats.sum_of_squares(theta) / (stats.rows - 10)))
    RDinv = np.linalg.inv(RD)
    inverse = D[:, None] * (RDinv @ RDinv.T) * D[None, :]          # (AᵀA)⁻¹
    change = inverse @ shift
    cov = sigma ** 2 * inverse + np.outer(change, change)
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
                               f"{100 * max_relative_std:.3g} %", values, stds, theta, sigma,
                               stats.samples)
    return PayloadEstimate(True, f"payload on {link}: {values[0]:.4g} ± {stds[0]:.2g} kg",
                           values, stds, theta, sigma, stats.samples)
