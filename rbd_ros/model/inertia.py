"""
The compact 10-number spatial inertia and its operations.

The layout is that of the compact spatial inertia note the project started from (its C type
``ksl_inertia_t``; "the seed" below). Layout of one inertia, ``COMPACT``::

    [m, m·cx, m·cy, m·cz, Ixx, Iyy, Izz, Ixy, Iyz, Izx]

with c the centre of mass in the reference frame and I the *centroidal* rotational inertia
expressed in the reference frame's axes. Rotating only touches m·c and I; translating only
touches m·c -- the reason the seed stores it this way.

The kernels use the dynamic-parameter vector θ (the order of the identification
literature, :meth:`rbd_ros.Model.inertial_parameters`) instead::

    θ = [m, m·cx, m·cy, m·cz, Ixx, Ixy, Iyy, Ixz, Iyz, Izz]   (inertia about the origin)

because θ is linear in the mass distribution (so it can be summed and it is what the
regressors multiply) and applies to a twist without a division by the mass.

Every function works on one inertia (shape (10,)) or a stack (shape (..., 10)) in float64 or
float32, and returns the same dtype.
"""
import numpy as np

M, MCX, MCY, MCZ, IXX, IYY, IZZ, IXY, IYZ, IZX = range(10)


def _dtype(*arrays):
    dt = np.result_type(*[np.asarray(a).dtype for a in arrays])
    return dt if dt in (np.float32, np.float64) else np.float64


def _sym_from_compact(ic):
    """(…, 3, 3) centroidal rotational inertia from the compact layout."""
    out = np.empty(ic.shape[:-1] + (3, 3), ic.dtype)
    out[..., 0, 0], out[..., 1, 1], out[..., 2, 2] = ic[..., IXX], ic[..., IYY], ic[..., IZZ]
    out[..., 0, 1] = out[..., 1, 0] = ic[..., IXY]
    out[..., 1, 2] = out[..., 2, 1] = ic[..., IYZ]
    out[..., 0, 2] = out[..., 2, 0] = ic[..., IZX]
    return out


def _pack(mass, mc, rot):
    out = np.empty(np.shape(mass) + (10,), np.result_type(mass, mc, rot))
    out[..., M] = mass
    out[..., MCX:MCZ + 1] = mc
    out[..., IXX], out[..., IYY], out[..., IZZ] = rot[..., 0, 0], rot[..., 1, 1], rot[..., 2, 2]
    out[..., IXY], out[..., IYZ], out[..., IZX] = rot[..., 0, 1], rot[..., 1, 2], rot[..., 0, 2]
    return out


def _shift(d):
    """|d|² 1 - d dᵀ: the parallel-axis matrix for an offset d (…, 3)."""
    d = np.asarray(d)
    out = -d[..., :, None] * d[..., None, :]
    idx = np.arange(3)
    out[..., idx, idx] += np.sum(d * d, axis=-1)[..., None]
    return out


def centre_of_mass(inertia):
    """
    Return the centre of mass c = (m·c)/m; zero for a massless body.

    Parameters
    ----------
    inertia : array_like, shape (10,) or (..., 10)
        Compact inertias (``COMPACT`` layout).

    Returns
    -------
    ndarray, shape (3,) or (..., 3)
        c, m, in the reference frame.

    """
    inertia = np.asarray(inertia)
    m = inertia[..., M:M + 1]
    safe = np.where(m > 0, m, 1)
    return np.where(m > 0, inertia[..., MCX:MCZ + 1] / safe, 0)


def compact(mass, com, centroidal_inertia, dtype=None):
    """
    Return the 10 compact numbers of a mass, a centre of mass and a centroidal inertia.

    Parameters
    ----------
    mass : float or array_like, shape (...)
        kg.
    com : array_like, shape (3,) or (..., 3)
        The centre of mass in the reference frame, m.
    centroidal_inertia : array_like, shape (3, 3) or (..., 3, 3)
        The rotational inertia about the centre of mass, in the reference frame's axes,
        kg·m² (symmetrized).
    dtype : numpy dtype, optional
        float32 or float64; None: that of the inputs (float64 for integers).

    Returns
    -------
    ndarray, shape (10,) or (..., 10)
        ``COMPACT`` layout, e.g. a payload for :meth:`rbd_ros.Model.with_payload`.

    """
    dt = np.dtype(dtype) if dtype is not None else _dtype(mass, com, centroidal_inertia)
    mass = np.asarray(mass, dt)
    com = np.asarray(com, dt)
    rot = np.asarray(centroidal_inertia, dt)
    return _pack(mass, mass[..., None] * com, 0.5 * (rot + np.swapaxes(rot, -1, -2)))


def rotate(inertia, R):
    """
    Return the same body seen from axes rotated by R (x_new = R x_old): R c, R I Rᵀ.

    Parameters
    ----------
    inertia : array_like, shape (10,) or (..., 10)
        Compact inertias (``COMPACT`` layout).
    R : array_like, shape (3, 3) or (..., 3, 3)
        The rotation.

    Returns
    -------
    ndarray, shape (10,) or (..., 10)
        The inertia in the rotated axes.

    """
    inertia = np.asarray(inertia)
    R = np.asarray(R, inertia.dtype)
    mc = np.einsum("...ij,...j->...i", R, inertia[..., MCX:MCZ + 1])
    rot = R @ _sym_from_compact(inertia) @ np.swapaxes(R, -1, -2)
    return _pack(inertia[..., M], mc, rot)


def translate(inertia, t):
    """
    Return the body seen from a frame whose origin is at -t: c + t (I_c unchanged).

    Parameters
    ----------
    inertia : array_like, shape (10,) or (..., 10)
        Compact inertias (``COMPACT`` layout).
    t : array_like, shape (3,) or (..., 3)
        The translation, m.

    Returns
    -------
    ndarray, shape (10,) or (..., 10)
        The translated inertia.

    """
    inertia = np.asarray(inertia)
    t = np.asarray(t, inertia.dtype)
    out = inertia.copy()
    out[..., MCX:MCZ + 1] += inertia[..., M:M + 1] * t
    return out


def transform(inertia, R, p):
    """
    Express a body given in a child frame in its parent frame (x_parent = R x_child + p).

    Parameters
    ----------
    inertia : array_like, shape (10,) or (..., 10)
        Compact inertias (``COMPACT`` layout).
    R : array_like, shape (3, 3)
        The child frame's rotation in the parent's.
    p : array_like, shape (3,)
        The child frame's origin in the parent's, m.

    Returns
    -------
    ndarray, shape (10,) or (..., 10)
        The inertia in the parent frame.

    """
    return translate(rotate(inertia, R), p)


def merge(parent, child, R=None, p=None):
    """
    Merge ``child`` into ``parent``: the inertia of the rigid union, in the parent frame.

    This is the compact-inertia merge: the union's mass, first moment and centroidal inertia
    (parallel-axis theorem) from the two bodies' (fixed-joint lumping, payloads).

    Parameters
    ----------
    parent : array_like, shape (10,) or (..., 10)
        The body merged into, in its frame.
    child : array_like, shape (10,) or (..., 10)
        The other body, in its own frame.
    R : array_like, shape (3, 3), optional
        The child frame's rotation in the parent frame; None: the child is given in the
        parent frame.
    p : array_like, shape (3,), optional
        The child frame's origin in the parent frame, m (None: 0).

    Returns
    -------
    ndarray, shape (10,) or (..., 10)
        The union, in the parent frame.

    """
    parent = np.asarray(parent)
    child = np.asarray(child, parent.dtype)
    if R is not None:
        child = transform(child, R, np.zeros(3) if p is None else p)
    m1, m2 = parent[..., M], child[..., M]
    m = m1 + m2
    c1, c2 = centre_of_mass(parent), centre_of_mass(child)
    mc = parent[..., MCX:MCZ + 1] + child[..., MCX:MCZ + 1]
    c = np.where(m[..., None] > 0, mc / np.where(m > 0, m, 1)[..., None], 0)
    rot = (_sym_from_compact(parent) + m1[..., None, None] * _shift(c1 - c)
           + _sym_from_compact(child) + m2[..., None, None] * _shift(c2 - c))
    return _pack(m, mc, rot)


def to_matrix(inertia):
    """
    Return the 6×6 spatial inertia about the origin, linear first: [[m 1, -[h]], [[h], I_o]].

    Parameters
    ----------
    inertia : array_like, shape (10,) or (..., 10)
        Compact inertias (``COMPACT`` layout).

    Returns
    -------
    ndarray, shape (6, 6) or (..., 6, 6)
        h = m·c, I_o the rotational inertia about the origin.

    """
    theta = to_theta(inertia)
    out = np.zeros(theta.shape[:-1] + (6, 6), theta.dtype)
    idx = np.arange(3)
    out[..., idx, idx] = theta[..., 0:1]
    hx, hy, hz = theta[..., 1], theta[..., 2], theta[..., 3]
    hat = np.zeros(theta.shape[:-1] + (3, 3), theta.dtype)
    hat[..., 0, 1], hat[..., 0, 2], hat[..., 1, 2] = -hz, hy, -hx
    hat[..., 1, 0], hat[..., 2, 0], hat[..., 2, 1] = hz, -hy, hx
    out[..., :3, 3:] = -hat
    out[..., 3:, :3] = hat
    out[..., 3:, 3:] = _sym_from_theta(theta)
    return out


def _sym_from_theta(theta):
    out = np.empty(theta.shape[:-1] + (3, 3), theta.dtype)
    out[..., 0, 0], out[..., 1, 1], out[..., 2, 2] = theta[..., 4], theta[..., 6], theta[..., 9]
    out[..., 0, 1] = out[..., 1, 0] = theta[..., 5]
    out[..., 0, 2] = out[..., 2, 0] = theta[..., 7]
    out[..., 1, 2] = out[..., 2, 1] = theta[..., 8]
    return out


def to_theta(inertia):
    """
    Return the inertial parameters θ = [m, h, Ixx, Ixy, Iyy, Ixz, Iyz, Izz] about the origin.

    Parameters
    ----------
    inertia : array_like, shape (10,) or (..., 10)
        Compact inertias (``COMPACT`` layout).

    Returns
    -------
    ndarray, shape (10,) or (..., 10)
        θ (kg, kg·m, kg·m²), the order of :meth:`rbd_ros.Model.inertial_parameters`.

    """
    inertia = np.asarray(inertia)
    rot = _sym_from_compact(inertia) + inertia[..., M, None, None] * _shift(centre_of_mass(inertia))
    out = np.empty_like(inertia)
    out[..., 0:4] = inertia[..., 0:4]
    out[..., 4], out[..., 5], out[..., 6] = rot[..., 0, 0], rot[..., 0, 1], rot[..., 1, 1]
    out[..., 7], out[..., 8], out[..., 9] = rot[..., 0, 2], rot[..., 1, 2], rot[..., 2, 2]
    return out


def from_theta(theta):
    """
    Return the compact layout of inertial parameters θ (the inverse of :func:`to_theta`).

    Parameters
    ----------
    theta : array_like, shape (10,) or (..., 10)
        θ about the origin.

    Returns
    -------
    ndarray, shape (10,) or (..., 10)
        ``COMPACT`` layout.

    """
    theta = np.asarray(theta)
    if theta.dtype not in (np.float32, np.float64):
        theta = theta.astype(np.float64)
    m = theta[..., 0]
    mc = theta[..., 1:4]
    c = np.where(m[..., None] > 0, mc / np.where(m > 0, m, 1)[..., None], 0)
    rot = _sym_from_theta(theta) - m[..., None, None] * _shift(c)
    return _pack(m, mc, rot)


def principal_moments(inertia):
    """
    Return the principal moments: the eigenvalues of the centroidal rotational inertia.

    Parameters
    ----------
    inertia : array_like, shape (10,) or (..., 10)
        Compact inertias (``COMPACT`` layout).

    Returns
    -------
    ndarray, shape (3,) or (..., 3)
        Ascending, kg·m².

    """
    return np.linalg.eigvalsh(_sym_from_compact(np.asarray(inertia)))


def physical_violation(inertia, rtol=1e-9):
    """
    Why this inertia is not that of a physical body, or None if it is.

    Physical: m ≥ 0, a massless body carries no first moment, the centroidal inertia is
    positive semi-definite and its principal moments satisfy the triangle inequalities
    (I1 + I2 ≥ I3), all up to ``rtol`` relative to the largest moment.

    Parameters
    ----------
    inertia : array_like, shape (10,)
        One compact inertia.
    rtol : float, optional
        The relative tolerance.

    Returns
    -------
    str or None
        Why it is not physical, or None.

    """
    inertia = np.asarray(inertia, np.float64)
    m = inertia[M]
    if not np.all(np.isfinite(inertia)):
        return "it contains a non-finite number"
    if m < 0:
        return f"negative mass {m:g}"
    moments = principal_moments(inertia)
    tol = rtol * max(1.0, abs(moments[-1]))
    if moments[0] < -tol:
        return f"the rotational inertia is not positive semi-definite (principal moments {moments})"
    if moments[0] + moments[1] < moments[2] - tol:
        return (f"the principal moments {moments[0]:.6g}, {moments[1]:.6g}, {moments[2]:.6g} "
                "violate the triangle inequality I1 + I2 >= I3")
    if m == 0 and np.any(inertia[MCX:MCZ + 1] != 0):
        return "a massless body has a nonzero first moment m·c"
    return None


def factor(inertia, rtol=1e-12):
    """
    Factor the 6×6 spatial inertia as F Fᵀ and return ``(rank, F)``, F of shape (6, rank).

    With m > 0 the spatial inertia is [[1, 0], [[c], 1]] · diag(m 1, I_c) · (…)ᵀ, so its rank
    is 3 + rank(I_c): 6 for a body, 5 for a thin rod, 3 for a point mass; a massless body has
    rank(I_c) (0 for nothing at all). This is the seed's four-case factorization.

    Parameters
    ----------
    inertia : array_like, shape (10,)
        One compact inertia.
    rtol : float, optional
        Eigenvalues of I_c below ``rtol`` × the largest count as zero.

    Returns
    -------
    rank : int
        The rank of the spatial inertia, 0 to 6.
    F : ndarray, shape (6, rank)
        The factor.

    """
    inertia = np.asarray(inertia)
    dt = inertia.dtype
    m = inertia[M]
    c = centre_of_mass(inertia)
    w, V = np.linalg.eigh(_sym_from_compact(inertia).astype(np.float64))
    keep = w > rtol * max(1.0, abs(w[-1]))
    cols = []
    if m > 0:
        hat = np.array([[0, -c[2], c[1]], [c[2], 0, -c[0]], [-c[1], c[0], 0]])
        lower = np.vstack([np.eye(3), hat]) * np.sqrt(m)   # columns [1; [c]] √m
        cols.append(lower)
    rot_cols = np.vstack([np.zeros((3, int(keep.sum()))), V[:, keep] * np.sqrt(w[keep])])
    cols.append(rot_cols)
    F = np.hstack(cols).astype(dt) if cols else np.zeros((6, 0), dt)
    return F.shape[1], F
