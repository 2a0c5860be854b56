"""
The centre of mass c, its velocity ċ and its Jacobian J_c (3 × nv), in the root frame.

Pinocchio's ``centerOfMass(model, data, q[, v])`` (``data.com[0]``, ``data.vcom[0]``) and
``jacobianCenterOfMass``: c = Σ m_i c_i / m, ċ = Σ m_i ċ_i / m (c_i, ċ_i: each body's centre
of mass and its velocity, world frame). Each body's inertia moved to the world gives m_i c_i
(its first moment) and its linear momentum m_i ċ_i (``inertia_apply`` of its velocity):
``total_momentum`` of ``centroidal_momentum.py`` sums both. The Jacobian is the linear rows
of the centroidal momentum matrix over the mass (the linear momentum is m ċ = A_G[0:3] v),
from the same composite pass. A coupled model (mimic joints): at f(q), G v; J_c G.
"""
from .._jit import f64_1d, f64_2d, f64_2d_ro, f64_3d, int64, kernel
from ..model.layout import P_THETA
from .common import NO_MASS, matrix_status
from .centroidal_momentum import centroidal_matrix_columns, total_momentum
from .entries import public
from .frame_jacobian import coupling_table, world_origin
from .frame_jacobian_time_variation import tree_motion
from .frame_placement import tree_configuration


def velocity_given(model, v):
    """Return (whether the caller gave v: the call then returns ċ too, the coupling table)."""
    return v is not None, coupling_table(model)


@kernel(int64(f64_2d_ro, f64_2d_ro, f64_2d, f64_1d, f64_2d, f64_1d, f64_1d, f64_2d))
def center_of_mass_kernel(packed, table, ws, qf, VF, q, v, out):
    """out[0] = c, out[1] = ċ at (q, v)."""
    status, qt, vt = tree_motion(packed, table, qf, VF[0], q, v)
    if status:
        return status
    total, momentum = total_momentum(packed, ws, qt, vt)
    mass = total[0]
    if not mass > 0.0:
        return NO_MASS
    origin = world_origin(packed, qt)
    for k in range(3):
        out[0, k] = total[1 + k] / mass - origin[k]
        out[1, k] = momentum[k] / mass
    return matrix_status(out)


@kernel(int64(f64_2d_ro, f64_2d_ro, f64_2d, f64_1d, f64_1d, f64_3d, f64_2d))
def center_of_mass_jacobian_kernel(packed, table, ws, qf, q, work, Jc):
    """Jc (3 × nv) = A_G[0:3] / m at q (A_G in ``work[0]``)."""
    status, qt = tree_configuration(packed, table, qf, q)
    A = work[0, :, :Jc.shape[1]]
    status = status or centroidal_matrix_columns(packed, table, ws, qt, A)
    if status:
        return status
    mass = 0.0
    for i in range(packed.shape[0] - 1):
        mass += packed[i, P_THETA]
    for r in range(3):
        for c in range(Jc.shape[1]):
            Jc[r, c] = A[r, c] / mass
    return matrix_status(Jc)


@public
def center_of_mass(model, q, v=None, *, data=None):
    """
    Return the centre of mass c (3) at q, or with ``v`` the tuple (c, ċ), in the root frame.

    Pinocchio's ``centerOfMass(model, data, q[, v])`` → ``data.com[0]`` (``data.vcom[0]``): the
    mass-weighted mean of the bodies' centres of mass and of their velocities, in the model's
    world (a fixed base's root link, a floating base's odometry frame).

    Parameters
    ----------
    model : Model
        The robot, from :func:`load_model`.
    q : array_like, shape ``(nq,)``
        Joint positions (rad, m) in ``model.joint_names`` order; with a floating base, the first
        7 are its position (m) and unit quaternion (x, y, z, w) in the world (normalized where
        it is used).
    v : array_like, shape ``(nv,)``, or None
        Joint velocities (rad/s, m/s), laid out as in :func:`rbd_ros.rnea`; None (default): c
        alone.
    data : Data or None
        The workspace the call computes in; None (default): ``model.data``. Threads that compute
        on one model concurrently each pass their own.

    Returns
    -------
    c : numpy.ndarray, shape ``(3,)``
        The centre of mass (m) in the root frame.
    c_dot : numpy.ndarray, shape ``(3,)``
        Only with ``v``: its velocity (m/s) in the root frame's axes.

    Raises
    ------
    ValueError
        A model without mass; an input of the wrong size, not real numbers, with NaN or inf, or
        a zero base quaternion (the message names it); a result that is not finite (inputs too
        large for float64, or a degenerate model); ``data`` made for a model of another size; an
        ``out`` that is not as described.

    Notes
    -----
    A model with mimic joints: at (f(q), G v).

    """


@public
def center_of_mass_jacobian(model, q, *, data=None):
    """
    Return J_c (3 × nv) at q: ċ = J_c v, in the root frame's axes.

    Pinocchio's ``jacobianCenterOfMass(model, data, q)`` (``data.Jcom``).

    Parameters
    ----------
    model : Model
        The robot, from :func:`load_model`.
    q : array_like, shape ``(nq,)``
        Joint positions (rad, m) in ``model.joint_names`` order; with a floating base, the first
        7 are its position (m) and unit quaternion (x, y, z, w) in the world (normalized where
        it is used).
    data : Data or None
        The workspace the call computes in; None (default): ``model.data``. Threads that compute
        on one model concurrently each pass their own.

    Returns
    -------
    Jc : numpy.ndarray, shape ``(3, nv)``
        J_c: J_c v is ċ (m/s) in the root frame's axes.

    Raises
    ------
    ValueError
        A model without mass; an input of the wrong size, not real numbers, with NaN or inf, or
        a zero base quaternion (the message names it); a result that is not finite (inputs too
        large for float64, or a degenerate model); ``data`` made for a model of another size; an
        ``out`` that is not as described.

    Notes
    -----
    A model with mimic joints: J_c G.

    """
