"""
The centroidal momentum h_G = A_G v and its matrix A_G (6 × nv), linear rows first.

Orin, Goswami and Lee, "Centroidal dynamics of a humanoid robot", Autonomous Robots 35,
2013; Pinocchio's ``ccrba`` (A_G: ``data.Ag``) and ``computeCentroidalMomentum``
(``data.hg``): the robot's linear momentum and its angular momentum about the centre of
mass c, both in the root frame's axes. In the world frame, as the world-frame CRBA: each
body's inertia is moved to the world once (``inertia_act``), the composite inertias I^C_i
of the subtrees add up leaves to root without changes of frame, and column j of the
momentum matrix at the world's origin is I^C_i S_j (j a dof of body i: the momentum of
everything j moves, when only j moves). A_G moves it to c:

    A_G[:, j] = [f_j; n_j − c × f_j],   [f_j; n_j] = I^C_i S_j,   c = h / m (of I^C_root).

h_G sums I_i v_i over the bodies (``total_momentum``) and moves it to c the same way. A
coupled model (mimic joints): A_G,r = A_G G at f(q); h_G at f(q), G v.
"""
from .._jit import f64_1d, f64_2d, f64_2d_ro, helper, int64, kernel
from ..model.layout import P_IV, P_PARENT, P_THETA, W_OI, W_OM, W_OS
from ..model.spatial import add6, add10, inertia_act, inertia_apply, load6, load10
from ..model.se3 import cross3, se3_load, se3_store, store6, store10
from .common import (INPUT_STRIDED, NO_MASS, OUTPUT_REFUSED, apart, placement_step, plain,
                     residue_status, store_motion, vector_status, velocity_step, writeable_matrix,
                     writeable_vector)
from .entries import declare
from .frame_jacobian import add_column
from .frame_jacobian_time_variation import tree_motion
from .frame_placement import tree_configuration
from .joints import joint_nv, subspace_column
from .mimic import caller_nv

ZERO10 = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
ZERO6 = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)


@helper
def world_inertias(packed, ws, q):
    """Store each body's placement, subspace and world inertia (W_OM, W_OS, W_OI)."""
    for i in range(packed.shape[0] - 1):
        oM, oS = placement_step(packed, ws, q, i)
        se3_store(ws, i, W_OM, oM)
        store6(ws, i, W_OS, oS)
        store10(ws, i, W_OI, inertia_act(oM, load10(packed, i, P_THETA)))


@helper
def about_com(f, c):
    """Return the momentum [f; n] at the world's origin taken at c instead: [f; n − c × f]."""
    cx, cy, cz = cross3(c[0], c[1], c[2], f[0], f[1], f[2])
    return f[0], f[1], f[2], f[3] - cx, f[4] - cy, f[5] - cz


@helper
def centroidal_matrix_columns(packed, table, ws, q, A):
    """
    Set A = A_G (6 × nv, all entries) at the tree's q; return the status (no mass, not finite).

    One pass leaves to root: a body's I^C is whole once its children (after it in DFS)
    are added, so its columns I^C S_j are made then, at the world's origin; c is known at
    the end, where every column is moved to it (``about_com``: linear in the column, so
    the mimic sums of ``add_column`` move as their terms would) and its six numbers tested
    as they go by (``residue_status``).
    """
    for r in range(6):
        for col in range(A.shape[1]):
            A[r, col] = 0.0
    world_inertias(packed, ws, q)
    total = ZERO10
    for i in range(packed.shape[0] - 2, -1, -1):
        Ic = load10(ws, i, W_OI)
        parent = int(packed[i, P_PARENT])
        if parent >= 0:
            store10(ws, parent, W_OI, add10(load10(ws, parent, W_OI), Ic))
        else:
            total = add10(total, Ic)
        oM, oS = se3_load(ws, i, W_OM), load6(ws, i, W_OS)
        iv = int(packed[i, P_IV])
        for k in range(joint_nv(packed, i)):
            add_column(table, q.shape[0], A, iv + k,
                       inertia_apply(Ic, subspace_column(packed, i, k, oM, oS)))
    if not total[0] > 0.0:
        return NO_MASS
    c = (total[1] / total[0], total[2] / total[0], total[3] / total[0])
    zero = 0.0
    for col in range(A.shape[1]):
        f0, f1, f2, n0, n1, n2 = about_com((A[0, col], A[1, col], A[2, col], A[3, col],
                                            A[4, col], A[5, col]), c)
        A[3, col], A[4, col], A[5, col] = n0, n1, n2
        zero += (f0 - f0) + (f1 - f1) + (f2 - f2) + (n0 - n0) + (n1 - n1) + (n2 - n2)
    return residue_status(zero)


@helper
def total_momentum(packed, ws, q, v):
    """Return (the robot's world inertia θ, its momentum Σ I_i v_i at the world's origin)."""
    total = ZERO10
    momentum = ZERO6
    for i in range(packed.shape[0] - 1):
        oM, oS = placement_step(packed, ws, q, i)
        ov = velocity_step(packed, ws, v, i, oM, oS)[2]
        store_motion(ws, i, oM, oS, ov)
        oI = inertia_act(oM, load10(packed, i, P_THETA))
        total = add10(total, oI)
        momentum = add6(momentum, inertia_apply(oI, ov))
    return total, momentum


@kernel(int64(f64_2d_ro, f64_2d_ro, f64_2d, f64_1d, f64_1d, f64_2d))
def centroidal_momentum_matrix_kernel(packed, table, ws, qf, q, A):
    """Set A (6 × nv) to A_G at q."""
    if not plain(q):
        return INPUT_STRIDED
    if not (writeable_matrix(A, 6, caller_nv(packed, table)) and apart(A, q)):
        return OUTPUT_REFUSED
    status, qt = tree_configuration(packed, table, qf, q)
    return status or centroidal_matrix_columns(packed, table, ws, qt, A)


@kernel(int64(f64_2d_ro, f64_2d_ro, f64_2d, f64_1d, f64_2d, f64_1d, f64_1d, f64_1d))
def centroidal_momentum_kernel(packed, table, ws, qf, VF, q, v, out):
    """Set out (6) to h_G at (q, v): linear momentum, angular momentum about the centre of mass."""
    if not (plain(q) and plain(v)):
        return INPUT_STRIDED
    if not (writeable_vector(out, 6) and apart(out, q) and apart(out, v)):
        return OUTPUT_REFUSED
    status, qt, vt = tree_motion(packed, table, qf, VF[0], q, v)
    if status:
        return status
    total, momentum = total_momentum(packed, ws, qt, vt)
    if not total[0] > 0.0:
        return NO_MASS
    c = (total[1] / total[0], total[2] / total[0], total[3] / total[0])
    h = about_com(momentum, c)
    for k in range(6):
        out[k] = h[k]
    return vector_status(out)


@declare
def centroidal_momentum_matrix(model, q, *, data=None):
    """
    Return the centroidal momentum matrix A_G (6 × nv) at q: h_G = A_G v.

    Pinocchio's ``ccrba(model, data, q, v)`` → ``data.Ag``: rows 0-2 the linear momentum, rows
    3-5 the angular momentum about the centre of mass, both in the root frame's axes.

    Parameters
    ----------
    model, q, data : ...
        Shared by the calls: ``rbd_ros.algorithms.entries.SHARED_PARAMETERS``.

    Returns
    -------
    A : numpy.ndarray, shape ``(6, nv)``
        A_G: A_G v is h_G (kg·m/s, kg·m²/s), linear rows first, in the root frame's axes.

    Raises
    ------
    ValueError
        A model without mass;
        ... the shared refusals: ``rbd_ros.algorithms.entries.SHARED_REFUSALS``.

    Notes
    -----
    A model with mimic joints: A_G G.

    """


@declare
def centroidal_momentum(model, q, v, *, data=None):
    """
    Return the centroidal momentum h_G (6) at (q, v): [linear; angular about the CoM].

    Pinocchio's ``computeCentroidalMomentum(model, data, q, v)`` → ``data.hg``, in the root
    frame's axes; equal to ``centroidal_momentum_matrix(model, q) @ v``.

    Parameters
    ----------
    model, q, v, data : ...
        Shared by the calls: ``rbd_ros.algorithms.entries.SHARED_PARAMETERS``.

    Returns
    -------
    h : numpy.ndarray, shape ``(6,)``
        h_G: the linear momentum (kg·m/s) and the angular momentum about the centre of mass
        (kg·m²/s), in the root frame's axes.

    Raises
    ------
    ValueError
        A model without mass;
        ... the shared refusals: ``rbd_ros.algorithms.entries.SHARED_REFUSALS``.

    Notes
    -----
    A model with mimic joints: at (f(q), G v).

    """
