"""
The centre of mass c, its velocity ċ and its Jacobian J_c (3 × nv), in the root frame.

Pinocchio's ``centerOfMass(model, data, q[, v])`` (``data.com[0]``, ``data.vcom[0]``) and
``jacobianCenterOfMass``: c = Σ m_i c_i / m, ċ = Σ m_i ċ_i / m (c_i, ċ_i: each body's centre
of mass and its velocity, world frame). Only the mass m_i and the first moment h_i = m_i c_i
of each body enter (not its rotational inertia): h_i moved to the world is R_i h_i + m_i p_i,
and the linear momentum of a body moving with the world twist [v; ω] is m_i v − h_i × ω
(the linear rows of ``inertia_apply``). The Jacobian's column of dof j of body i is that
linear momentum of i's subtree (its mass m^C and first moment h^C, summed leaves to root)
moved by S_j, over the robot's mass: the linear rows of the centroidal momentum matrix over
m, without its angular rows. A coupled model (mimic joints): at f(q), G v; J_c G.
"""
from .._jit import f64_1d, f64_2d, f64_2d_ro, helper, int64, kernel
from ..model.layout import P_IV, P_PARENT, P_THETA, W_OI, W_OM, W_OS
from ..model.se3 import cross3, rot3, se3_load, se3_store, store6
from ..model.spatial import load6
from .common import (INPUT_STRIDED, NO_MASS, OUTPUT_REFUSED, apart, placement_step, plain,
                     residue_status, store_motion, vector_status, velocity_step, writeable_matrix,
                     writeable_vector)
from .entries import declare
from .frame_jacobian import add_column, world_origin
from .frame_jacobian_time_variation import tree_motion
from .frame_placement import tree_configuration
from .joints import joint_nv, subspace_column
from .mimic import caller_nv


@helper
def world_first_moment(packed, i, oM):
    """Return (m_i, h_i): body i's mass and first moment m_i c_i about the world's origin."""
    mass = packed[i, P_THETA]
    hx, hy, hz = rot3(oM, packed[i, P_THETA + 1], packed[i, P_THETA + 2],
                      packed[i, P_THETA + 3])
    return mass, (hx + mass * oM[9], hy + mass * oM[10], hz + mass * oM[11])


@helper
def linear_momentum(mass, h, twist):
    """Return m v − h × ω: the linear momentum of (m, h) moving with the world ``twist``."""
    cx, cy, cz = cross3(h[0], h[1], h[2], twist[3], twist[4], twist[5])
    return mass * twist[0] - cx, mass * twist[1] - cy, mass * twist[2] - cz


@kernel(int64(f64_2d_ro, f64_2d_ro, f64_2d, f64_1d, f64_2d, f64_1d, f64_1d, f64_1d))
def center_of_mass_kernel(packed, table, ws, qf, VF, q, v, out):
    """
    out[0:3] = c at q; where out has 6 entries, also out[3:6] = ċ at (q, v).

    Without ċ the velocities are not computed (nor is v read): c alone is a placements pass.
    """
    if not (plain(q) and plain(v)):
        return INPUT_STRIDED
    velocity = out.shape[0] == 6
    if not ((writeable_vector(out, 3) or writeable_vector(out, 6)) and apart(out, q)
            and apart(out, v)):
        return OUTPUT_REFUSED
    if velocity:
        status, qt, vt = tree_motion(packed, table, qf, VF[0], q, v)
    else:
        status, qt = tree_configuration(packed, table, qf, q)
        vt = v
    if status:
        return status
    mass = hx = hy = hz = px = py = pz = 0.0
    for i in range(packed.shape[0] - 1):
        oM, oS = placement_step(packed, ws, qt, i)
        m, h = world_first_moment(packed, i, oM)
        if velocity:
            ov = velocity_step(packed, ws, vt, i, oM, oS)[2]
            store_motion(ws, i, oM, oS, ov)
            p = linear_momentum(m, h, ov)
            px, py, pz = px + p[0], py + p[1], pz + p[2]
        else:
            se3_store(ws, i, W_OM, oM)      # the children's placement_step reads it
        mass += m
        hx, hy, hz = hx + h[0], hy + h[1], hz + h[2]
    if not mass > 0.0:
        return NO_MASS
    origin = world_origin(packed, qt)
    out[0], out[1], out[2] = hx / mass - origin[0], hy / mass - origin[1], hz / mass - origin[2]
    if velocity:
        out[3], out[4], out[5] = px / mass, py / mass, pz / mass
    return vector_status(out)


@helper
def first_moment_columns(packed, table, ws, q, Jc):
    """
    Set Jc's columns to the subtrees' linear momenta under S_j (not yet over the mass).

    Stores placements, 1-dof subspaces and each subtree's (m^C, h^C) (W_OI[0:4], world) on
    the way; returns the robot's mass. Leaves to root: a body's (m^C, h^C) is whole once
    its children (after it in DFS) are added, so its columns are made then.
    """
    nb = packed.shape[0] - 1
    for i in range(nb):
        oM, oS = placement_step(packed, ws, q, i)
        se3_store(ws, i, W_OM, oM)
        store6(ws, i, W_OS, oS)
        m, h = world_first_moment(packed, i, oM)
        ws[i, W_OI], ws[i, W_OI + 1], ws[i, W_OI + 2], ws[i, W_OI + 3] = m, h[0], h[1], h[2]
    mass = 0.0
    for i in range(nb - 1, -1, -1):
        oM, oS = se3_load(ws, i, W_OM), load6(ws, i, W_OS)
        h = (ws[i, W_OI + 1], ws[i, W_OI + 2], ws[i, W_OI + 3])
        iv = int(packed[i, P_IV])
        for k in range(joint_nv(packed, i)):
            f = linear_momentum(ws[i, W_OI], h, subspace_column(packed, i, k, oM, oS))
            add_column(table, q.shape[0], Jc, iv + k, (f[0], f[1], f[2], 0.0, 0.0, 0.0))
        parent = int(packed[i, P_PARENT])
        if parent < 0:
            mass += ws[i, W_OI]
            continue
        for k in range(4):
            ws[parent, W_OI + k] += ws[i, W_OI + k]
    return mass


@kernel(int64(f64_2d_ro, f64_2d_ro, f64_2d, f64_1d, f64_1d, f64_2d))
def center_of_mass_jacobian_kernel(packed, table, ws, qf, q, Jc):
    """
    Jc (3 × nv) at q: column j the subtree's linear momentum under S_j, over the mass.

    The columns are divided by the mass once it is known, and tested for finiteness as they
    are (``residue_status``).
    """
    if not plain(q):
        return INPUT_STRIDED
    if not (writeable_matrix(Jc, 3, caller_nv(packed, table)) and apart(Jc, q)):
        return OUTPUT_REFUSED
    status, qt = tree_configuration(packed, table, qf, q)
    if status:
        return status
    for r in range(3):
        for c in range(Jc.shape[1]):
            Jc[r, c] = 0.0
    mass = first_moment_columns(packed, table, ws, qt, Jc)
    if not mass > 0.0:
        return NO_MASS
    zero = 0.0
    for c in range(Jc.shape[1]):
        x, y, z = Jc[0, c] / mass, Jc[1, c] / mass, Jc[2, c] / mass
        Jc[0, c], Jc[1, c], Jc[2, c] = x, y, z
        zero += (x - x) + (y - y) + (z - z)
    return residue_status(zero)


@declare
def center_of_mass(model, q, v=None, *, data=None):
    """
    Return the centre of mass c (3) at q, or with ``v`` the tuple (c, ċ), in the root frame.

    Pinocchio's ``centerOfMass(model, data, q[, v])`` → ``data.com[0]`` (``data.vcom[0]``): the
    mass-weighted mean of the bodies' centres of mass and of their velocities, in the model's
    world (a fixed base's root link, a floating base's odometry frame).

    Parameters
    ----------
    model, q : ...
        Shared by the calls: ``rbd_ros.algorithms.entries.SHARED_PARAMETERS``.
    v : array_like, shape ``(nv,)``, or None
        Joint velocities (rad/s, m/s), laid out as in :func:`rbd_ros.rnea`; None (default): c
        alone.
    data : ...
        Shared by the calls: ``rbd_ros.algorithms.entries.SHARED_PARAMETERS``.

    Returns
    -------
    c : numpy.ndarray, shape ``(3,)``
        The centre of mass (m) in the root frame.
    c_dot : numpy.ndarray, shape ``(3,)``
        Only with ``v``: its velocity (m/s) in the root frame's axes.

    Raises
    ------
    ValueError
        A model without mass;
        ... the shared refusals: ``rbd_ros.algorithms.entries.SHARED_REFUSALS``.

    Notes
    -----
    A model with mimic joints: at (f(q), G v).

    """


@declare
def center_of_mass_jacobian(model, q, *, data=None):
    """
    Return J_c (3 × nv) at q: ċ = J_c v, in the root frame's axes.

    Pinocchio's ``jacobianCenterOfMass(model, data, q)`` (``data.Jcom``).

    Parameters
    ----------
    model, q, data : ...
        Shared by the calls: ``rbd_ros.algorithms.entries.SHARED_PARAMETERS``.

    Returns
    -------
    Jc : numpy.ndarray, shape ``(3, nv)``
        J_c: J_c v is ċ (m/s) in the root frame's axes.

    Raises
    ------
    ValueError
        A model without mass;
        ... the shared refusals: ``rbd_ros.algorithms.entries.SHARED_REFUSALS``.

    Notes
    -----
    A model with mimic joints: J_c G.

    """
