"""
The parametrizations of θ: the pseudo-inertia, physical consistency, log-Cholesky.

The package docstring (``rbd_ros.identification``) says what each parametrization is.
"""
import numpy as np

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
    Return the 4×4 pseudo-inertia J = [[Σ, h], [hᵀ, m]] of inertial parameters.

    Σ = ½ tr(I) 1 - I is the second moment of the mass distribution, ∫ x xᵀ ρ dV, h = m·c.
    θ is that of a body (a positive mass density) if and only if J is positive definite.

    Parameters
    ----------
    theta : array_like, shape (10,) or (..., 10)
        [m, m·cx, m·cy, m·cz, Ixx, Ixy, Iyy, Ixz, Iyz, Izz] per body (kg, kg·m, kg·m²),
        as :meth:`rbd_ros.Model.inertial_parameters`.

    Returns
    -------
    ndarray, shape (4, 4) or (..., 4, 4)
        J per body, symmetric.

    Raises
    ------
    ValueError
        If the last dimension of ``theta`` is not 10.

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
    Return the inertial parameters θ of a pseudo-inertia (the inverse of :func:`pseudo_inertia`).

    m = J₃₃, h = J[:3, 3], I = tr(Σ) 1 - Σ.

    Parameters
    ----------
    J : array_like, shape (4, 4) or (..., 4, 4)
        Symmetric pseudo-inertias.

    Returns
    -------
    ndarray, shape (10,) or (..., 10)
        θ per body, in the order of :func:`pseudo_inertia`'s input.

    Raises
    ------
    ValueError
        If the last two dimensions of ``J`` are not (4, 4).

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
    Return whether inertial parameters are those of physical bodies, and if not why.

    Physical: m > 0, strict triangle inequalities of the centroidal principal moments
    (I1 + I2 > I3, which implies I ≻ 0 there) and the pseudo-inertia J ≻ 0 (checked by a
    Cholesky factorization).

    Parameters
    ----------
    theta : array_like, shape (10,) or (..., 10)
        θ of one body or a stack, in the order of :func:`pseudo_inertia`'s.

    Returns
    -------
    consistent : bool
        True if every body is physical.
    reason : str or None
        Why not, naming the first bad body of a stack; None when consistent.

    Raises
    ------
    ValueError
        If the last dimension of ``theta`` is not 10.

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
    Return the inertial parameters θ of log-Cholesky parameters φ.

    θ = θ(J), J = U Uᵀ with U built from φ = [α, d1, d2, d3, s12, s23, s13, t1, t2, t3]
    (module docstring). Every φ in R¹⁰ gives a physically consistent θ (m = e^{2α},
    c = t), which is why a fit on φ stays physical.

    Parameters
    ----------
    phi : array_like, shape (10,) or (..., 10)
        Log-Cholesky parameters per body (dimensionless logarithms and lengths in m).

    Returns
    -------
    ndarray, shape (10,) or (..., 10)
        θ per body (kg, kg·m, kg·m²).

    Raises
    ------
    ValueError
        If the last dimension of ``phi`` is not 10.

    """
    phi = _as_parameters(phi, "phi")
    V = _upper_factor(phi)
    J = np.exp(2.0 * phi[..., 0])[..., None, None] * (V @ np.swapaxes(V, -1, -2))
    return theta_from_pseudo_inertia(J)


def log_cholesky_from_theta(theta):
    """
    Return the log-Cholesky parameters φ of physically consistent inertial parameters.

    The inverse of :func:`theta_from_log_cholesky`: U is the upper-triangular factor of
    J = U Uᵀ (the Cholesky factor of J with its rows and columns reversed).

    Parameters
    ----------
    theta : array_like, shape (10,) or (..., 10)
        θ per body, with J(θ) ≻ 0.

    Returns
    -------
    ndarray, shape (10,) or (..., 10)
        φ = [α, d1, d2, d3, s12, s23, s13, t1, t2, t3] per body.

    Raises
    ------
    ValueError
        If the last dimension is not 10, or θ is not physically consistent (the reason).

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
    Return the Jacobian ∂θ/∂φ of :func:`theta_from_log_cholesky`, analytic.

    θ = e^{2α} T(V Vᵀ) with T the linear map J -> θ, so ∂θ/∂α = 2θ and, for an entry x of V
    at (r, c), ∂θ/∂x = e^{2α} T(∂V Vᵀ + V ∂Vᵀ) with ∂V = E_rc (times e^d for a diagonal
    entry d).

    Parameters
    ----------
    phi : array_like, shape (10,) or (..., 10)
        Log-Cholesky parameters per body.

    Returns
    -------
    ndarray, shape (10, 10) or (..., 10, 10)
        Row: θ entry, column: φ entry.

    Raises
    ------
    ValueError
        If the last dimension of ``phi`` is not 10.

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
