"""
θ from sampled states and torques by linear least squares, and the parametrizations of θ.

The package docstring (``rbd_ros.identification``) says what each parametrization is.
"""
from dataclasses import dataclass

import numpy as np

from ..batch import joint_torque_regressor_batch

__all__ = ["IdentificationResult", "identify_least_squares",
           "is_physically_consistent", "log_cholesky_from_theta", "pseudo_inertia",
           "theta_from_log_cholesky", "theta_from_pseudo_inertia", "theta_jacobian"]

# positions in U (before the e^α factor) of φ[1:]; φ[0] = α scales the whole of U
_PHI_ENTRIES = ((0, 0), (1, 1), (2, 2), (0, 1), (1, 2), (0, 2), (0, 3), (1, 3), (2, 3))


def _as_parameters(x, name):
    """Return ``x`` as a float64 array of shape (..., 10), or a ValueError naming it."""
    x = np.asarray(x, np.float64)
    if x.shape[-1:] != (10,):
        raise ValueError(f"{name} must have shape (..., 10), got {x.shape}")
    return x


# -- pseudo-inertia ------------------------------------------------------------------------

def pseudo_inertia(theta):
    """
    Return the 4×4 pseudo-inertia J = [[Σ, h], [hᵀ, m]]; shape (..., 4, 4).

    Σ = ½ tr(I) 1 - I is the second moment of the mass distribution, ∫ x xᵀ ρ dV.
    """
    theta = _as_parameters(theta, "theta")
    J = np.zeros(theta.shape[:-1] + (4, 4))
    ixx, ixy, iyy, ixz, iyz, izz = (theta[..., k] for k in range(4, 10))
    half_trace = 0.5 * (ixx + iyy + izz)
    J[..., 0, 0] = half_trace - ixx
    J[..., 1, 1] = half_trace - iyy
    J[..., 2, 2] = half_trace - izz
    J[..., 0, 1] = J[..., 1, 0] = -ixy
    J[..., 0, 2] = J[..., 2, 0] = -ixz
    J[..., 1, 2] = J[..., 2, 1] = -iyz
    J[..., :3, 3] = theta[..., 1:4]
    J[..., 3, :3] = theta[..., 1:4]
    J[..., 3, 3] = theta[..., 0]
    return J


def theta_from_pseudo_inertia(J):
    """
    Return θ from a (symmetric) pseudo-inertia (..., 4, 4).

    m = J₃₃, h = J[:3, 3], I = tr(Σ) 1 - Σ.
    """
    J = np.asarray(J, np.float64)
    if J.shape[-2:] != (4, 4):
        raise ValueError(f"J must have shape (..., 4, 4), got {J.shape}")
    J = 0.5 * (J + np.swapaxes(J, -1, -2))
    theta = np.empty(J.shape[:-2] + (10,))
    trace = J[..., 0, 0] + J[..., 1, 1] + J[..., 2, 2]
    theta[..., 0] = J[..., 3, 3]
    theta[..., 1:4] = J[..., :3, 3]
    theta[..., 4] = trace - J[..., 0, 0]
    theta[..., 5] = -J[..., 0, 1]
    theta[..., 6] = trace - J[..., 1, 1]
    theta[..., 7] = -J[..., 0, 2]
    theta[..., 8] = -J[..., 1, 2]
    theta[..., 9] = trace - J[..., 2, 2]
    return theta


def _centroidal_moments(theta):
    """Principal moments (ascending) of the rotational inertia about the centre of mass."""
    m = theta[0]
    rot = np.array([[theta[4], theta[5], theta[7]],
                    [theta[5], theta[6], theta[8]],
                    [theta[7], theta[8], theta[9]]])
    if m > 0:
        c = theta[1:4] / m
        rot = rot - m * (np.dot(c, c) * np.eye(3) - np.outer(c, c))
    return np.linalg.eigvalsh(rot)


def _body_violation(theta):
    if not np.all(np.isfinite(theta)):
        return "it contains NaN or inf"
    if theta[0] <= 0:
        return f"non-positive mass {theta[0]:g}"
    moments = _centroidal_moments(theta)
    scale = np.max(np.abs(moments))
    if moments[0] <= 0:
        return (f"the centroidal rotational inertia is not positive definite (principal "
                f"moments {moments[0]:.6g}, {moments[1]:.6g}, {moments[2]:.6g})")
    if moments[0] + moments[1] <= moments[2]:
        return (f"the principal moments {moments[0]:.6g}, {moments[1]:.6g}, {moments[2]:.6g} "
                "violate the triangle inequality I1 + I2 > I3")
    J = pseudo_inertia(theta)
    try:
        np.linalg.cholesky(J)
    except np.linalg.LinAlgError:
        w = np.linalg.eigvalsh(J)
        return (f"the pseudo-inertia is not positive definite (smallest eigenvalue {w[0]:.6g}"
                f", moments scale {scale:.3g})")
    return None


def is_physically_consistent(theta):
    """
    Return ``(consistent, reason)``: whether θ is that of physical bodies, and if not why.

    θ is one body (10,) or a stack (..., 10). Physical: m > 0, strict triangle inequalities
    of the centroidal principal moments (I1 + I2 > I3, which implies I ≻ 0 there) and the
    pseudo-inertia J ≻ 0 (checked by a Cholesky factorization). The reason names the first
    bad body of a stack; it is None when consistent.
    """
    theta = _as_parameters(theta, "theta")
    flat = theta.reshape(-1, 10)
    for k, t in enumerate(flat):
        reason = _body_violation(t)
        if reason is not None:
            if theta.ndim > 1:
                index = np.unravel_index(k, theta.shape[:-1])
                where = index[0] if len(index) == 1 else tuple(int(i) for i in index)
                reason = f"body {where}: {reason}"
            return False, reason
    return True, None


# -- log-Cholesky ----------------------------------------------------------------------------

def _upper_factor(phi):
    """V (..., 4, 4) with U = e^α V."""
    V = np.zeros(phi.shape[:-1] + (4, 4))
    V[..., 0, 0] = np.exp(phi[..., 1])
    V[..., 1, 1] = np.exp(phi[..., 2])
    V[..., 2, 2] = np.exp(phi[..., 3])
    V[..., 0, 1] = phi[..., 4]
    V[..., 1, 2] = phi[..., 5]
    V[..., 0, 2] = phi[..., 6]
    V[..., 0, 3] = phi[..., 7]
    V[..., 1, 3] = phi[..., 8]
    V[..., 2, 3] = phi[..., 9]
    V[..., 3, 3] = 1.0
    return V


def theta_from_log_cholesky(phi):
    """
    Return θ from the log-Cholesky parameters φ = [α, d1, d2, d3, s12, s23, s13, t1, t2, t3].

    θ = θ(J), J = U Uᵀ. Every φ gives a physically consistent θ (m = e^{2α}, c = t).
    """
    phi = _as_parameters(phi, "phi")
    V = _upper_factor(phi)
    J = np.exp(2.0 * phi[..., 0])[..., None, None] * (V @ np.swapaxes(V, -1, -2))
    return theta_from_pseudo_inertia(J)


def log_cholesky_from_theta(theta):
    """
    Return φ from a physically consistent θ (J(θ) ≻ 0; raises ValueError otherwise).

    U is the upper-triangular factor of J = U Uᵀ (the Cholesky factor of J with its rows and
    columns reversed).
    """
    theta = _as_parameters(theta, "theta")
    J = pseudo_inertia(theta)
    rev = J[..., ::-1, ::-1]
    try:
        L = np.linalg.cholesky(rev)
    except np.linalg.LinAlgError:
        _, reason = is_physically_consistent(theta)
        raise ValueError("log_cholesky_from_theta: θ is not physically consistent"
                         + (f" ({reason})" if reason else " (J is not positive definite)")) \
            from None
    U = L[..., ::-1, ::-1]            # upper triangular, positive diagonal, J = U Uᵀ
    s = U[..., 3, 3]                  # e^α = √m
    phi = np.empty(theta.shape)
    phi[..., 0] = np.log(s)
    for k, (r, c) in enumerate(_PHI_ENTRIES):
        x = U[..., r, c] / s
        phi[..., k + 1] = np.log(x) if r == c else x
    return phi


def theta_jacobian(phi):
    """
    ∂θ/∂φ, shape (..., 10, 10) (row: θ entry, column: φ entry), analytic.

    θ = e^{2α} T(V Vᵀ) with T the linear map J -> θ, so ∂θ/∂α = 2θ and, for an entry x of V
    at (r, c), ∂θ/∂x = e^{2α} T(∂V Vᵀ + V ∂Vᵀ) with ∂V = E_rc (times e^d for a diagonal
    entry d).
    """
    phi = _as_parameters(phi, "phi")
    V = _upper_factor(phi)
    scale = np.exp(2.0 * phi[..., 0])
    out = np.empty(phi.shape + (10,))
    out[..., :, 0] = 2.0 * theta_from_pseudo_inertia(scale[..., None, None]
                                                     * (V @ np.swapaxes(V, -1, -2)))
    for k, (r, c) in enumerate(_PHI_ENTRIES):
        # ∂V Vᵀ has row r = V[:, c]ᵀ (times the entry's derivative factor)
        dV_VT = np.zeros(phi.shape[:-1] + (4, 4))
        factor = V[..., r, c] if r == c else 1.0       # d e^d / dd = e^d
        dV_VT[..., r, :] = (scale * factor)[..., None] * V[..., :, c]
        out[..., :, k + 1] = theta_from_pseudo_inertia(dV_VT + np.swapaxes(dV_VT, -1, -2))
    return out


# -- identification ------------------------------------------------------------------------

@dataclass
class IdentificationResult:
    """
    What an identification returns.

    theta: the identified θ (nbodies, 10); model: a new model carrying it
    (``Model.with_inertial_parameters``); rms_before / rms_after: RMS torque error over the
    samples with the starting model's θ and with the identified θ; rank: the number of
    identifiable parameter combinations found in the data (the base size); consistent,
    reason: ``is_physically_consistent(theta)``; extra: method-specific details.
    """

    theta: np.ndarray
    model: object
    rms_before: float
    rms_after: float
    rank: int
    consistent: bool
    reason: object
    extra: dict


def _samples(model, q, v, a, tau):
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


def _rms(r):
    return float(np.sqrt(np.mean(r * r)))


def _column_scales(Y):
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


def _base(Ys, rtol):
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
    Least-squares θ from N samples: q (N, nq), v, a, tau (N, nv).

    With ``prior_weight == 0`` only the identifiable combinations of θ (the row space of the
    stacked regressor Y, found by an SVD of Y with its columns normalized; ``rtol`` is the
    relative singular value threshold) are fitted; the others keep the model's current
    values: θ = θ₀ + Y⁺ (τ - Y θ₀), the fitted torques being the projection of τ on the
    range of Y. With ``prior_weight = w > 0`` the cost is
    mean((Y θ - τ)²) + w ‖θ - θ₀‖² (ridge regression toward the model's θ₀).
    The result need not be physically consistent (see ``result.consistent``).
    """
    if prior_weight < 0:
        raise ValueError("prior_weight must be >= 0")
    Y, b = _samples(model, q, v, a, tau)
    theta0 = model.inertial_parameters().ravel()
    r0 = b - Y @ theta0
    D = _column_scales(Y)
    Ys = Y * D
    U, s, Vr = _base(Ys, rtol)
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
        rms_before=_rms(r0), rms_after=_rms(b - Y @ theta.ravel()), rank=len(s),
        consistent=consistent, reason=reason,
        extra={"base": Vr, "column_scales": D, "singular_values": s})


def _nearest_consistent(theta, eps=1e-9):
    """
    Return θ made physically consistent (for a starting point only).

    The eigenvalues of J are lifted to at least eps · max(1, largest eigenvalue).
    """
    J = pseudo_inertia(theta)
    w, Q = np.linalg.eigh(J)
    floor = eps * np.maximum(1.0, np.max(np.abs(w), axis=-1, keepdims=True))
    w = np.maximum(w, floor)
    return theta_from_pseudo_inertia((Q * w[..., None, :]) @ np.swapaxes(Q, -1, -2))
