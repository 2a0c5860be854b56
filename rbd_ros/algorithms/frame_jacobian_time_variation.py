"""
The time variation of a link's frame Jacobian: J̇ (6 × nv), d/dt J(q(t)) along q̇ = v.

Pinocchio's ``getFrameJacobianTimeVariation`` after ``computeJointJacobiansTimeVariation``,
in its three reference frames (``frame_jacobian.py``). In the world frame each supporting
joint's column moves with its body (velocity v_j, world frame): Ṡ_j = v_j × S_j
(Featherstone 2008, eq. 2.33; Pinocchio's ``dJ``). A column in a frame X that itself moves
with world velocity v_X, Ad(X)⁻¹ S_j, varies as

    d/dt (Ad(X)⁻¹ S_j) = Ad(X)⁻¹ (Ṡ_j − v_X × S_j) = Ad(X)⁻¹ ((v_j − v_X) × S_j),

with v_X = 0 (WORLD), v_b, the frame's body's velocity (LOCAL), or [ṗ; 0], the translation
of the frame's origin p (LOCAL_WORLD_ALIGNED). One forward pass to the frame's body stores
placements and velocities (``store_motions``), one walk up its support writes the columns.
A coupled model (mimic joints): J̇_r = J̇ G at q_f = f(q), v_f = G v (G is constant).
"""
from .._jit import f64_1d, f64_2d, f64_2d_ro, helper, int64, kernel
from ..model.layout import P_IV, P_PARENT, W_OA, W_OM, W_OS, W_OV
from ..model.spatial import act_inv_motion, add6, cross_motion, load6, sub6
from ..model.se3 import cross3, se3_load, se3_mul
from .common import (INPUT_STRIDED, OUTPUT_REFUSED, apart, check_vector, placement_step, plain,
                     store_motion, supports, velocity_step, writeable_matrix)
from .entries import declare
from .frame_jacobian import (LOCAL, WORLD, add_column, frame_in, frame_row_parts,  # noqa: F401
                             placement_tuple, reference_placement)
from .frame_placement import link_status, tree_configuration
from .joints import joint_nv, subspace_column
from .mimic import caller_nv, expand_motion

ZERO6 = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)


@helper
def tree_motion(packed, table, qf, vf, q, v):
    """Return (status, q, v of the tree): checked (q at 1, v at 2), expanded through G."""
    status, qt = tree_configuration(packed, table, qf, q)
    status = status or check_vector(v, caller_nv(packed, table), 2)
    if status or table.shape[0] == 0:
        return status, qt, v
    expand_motion(table, qf.shape[0], v, vf)
    return status, qt, vf


@helper
def tree_state(packed, table, qf, vf, q, v, body, placement):
    """``tree_motion``, then the status of the frame (``link_status``)."""
    status, qt, vt = tree_motion(packed, table, qf, vf, q, v)
    return status or link_status(packed, body, placement), qt, vt


@helper
def store_motions(packed, ws, q, v, body):
    """
    Store placements, velocities and q̈ = 0 accelerations (world) of ``body``'s support.

    a_i = a_λ + v_λ × S_i q̇_i (v_i × v_J = v_λ × v_J): the acceleration at zero joint
    accelerations and no gravity, what ``forwardKinematics(q, v, 0)`` gives.
    """
    for i in range(body + 1):           # DFS order: body's ancestors come before it
        if not supports(packed, i, body):
            continue
        oM, oS = placement_step(packed, ws, q, i)
        v_parent, vJ, ov = velocity_step(packed, ws, v, i, oM, oS)
        store_motion(ws, i, oM, oS, ov)
        parent = int(packed[i, P_PARENT])
        a_parent = ZERO6 if parent < 0 else load6(ws, parent, W_OA)
        oa = add6(a_parent, cross_motion(v_parent, vJ))
        for k in range(6):
            ws[i, W_OA + k] = oa[k]


@helper
def reference_motion(packed, q, ws, body, oMf, reference):
    """(X, v_X): the reference frame's placement and world velocity (see the docstring)."""
    X = reference_placement(packed, q, oMf, reference)
    if reference == WORLD:
        return X, ZERO6
    vb = load6(ws, body, W_OV)
    if reference == LOCAL:
        return X, vb
    cx, cy, cz = cross3(vb[3], vb[4], vb[5], oMf[9], oMf[10], oMf[11])
    return X, (vb[0] + cx, vb[1] + cy, vb[2] + cz, 0.0, 0.0, 0.0)


@helper
def time_variation_columns(packed, table, ws, nqf, body, X, vX, dJ):
    """Set dJ (all entries): Ad(X)⁻¹ ((v_j − v_X) × S_j) for the joints supporting body."""
    for r in range(6):
        for c in range(dJ.shape[1]):
            dJ[r, c] = 0.0
    j = body
    while j >= 0:
        oM, oS = se3_load(ws, j, W_OM), load6(ws, j, W_OS)
        relative = sub6(load6(ws, j, W_OV), vX)
        iv = int(packed[j, P_IV])
        for k in range(joint_nv(packed, j)):
            column = cross_motion(relative, subspace_column(packed, j, k, oM, oS))
            add_column(table, nqf, dJ, iv + k, act_inv_motion(X, column))
        j = int(packed[j, P_PARENT])


@kernel(int64(f64_2d_ro, f64_2d_ro, f64_2d, f64_1d, f64_2d, f64_1d, f64_1d, f64_1d, f64_2d))
def frame_jacobian_time_variation_kernel(packed, table, ws, qf, VF, q, v, frame, dJ):
    """Set dJ (6 × nv) to J̇ at (q, v) of the frame whose row is ``frame`` (``frame_row_parts``)."""
    if not (plain(q) and plain(v)):
        return INPUT_STRIDED
    body, placement, reference = frame_row_parts(frame)
    if not (writeable_matrix(dJ, 6, caller_nv(packed, table)) and apart(dJ, q) and apart(dJ, v)):
        return OUTPUT_REFUSED
    status, qt, vt = tree_state(packed, table, qf, VF[0], q, v, body, placement)
    if status:
        return status
    for r in range(6):
        for c in range(dJ.shape[1]):
            dJ[r, c] = 0.0
    if body < 0:
        return 0
    store_motions(packed, ws, qt, vt, body)
    oMf = se3_mul(se3_load(ws, body, W_OM), placement_tuple(placement))
    X, vX = reference_motion(packed, qt, ws, body, oMf, reference)
    time_variation_columns(packed, table, ws, qt.shape[0], body, X, vX, dJ)
    return 0


@declare
def frame_jacobian_time_variation(model, q, v, link, reference="local", *, data=None):
    """
    Return J̇ (6 × nv) of ``link``'s frame at (q, v): d/dt J(q(t)) along q̇ = v.

    Pinocchio's ``getFrameJacobianTimeVariation(..., reference)`` after
    ``computeJointJacobiansTimeVariation(q, v)``; ``reference`` as for ``frame_jacobian``
    ("local", "local_world_aligned" or "world"), J̇ the time derivative of that J. The frame's
    acceleration is J q̈ + J̇ v (spatial; ``frame_acceleration_bias`` gives the classical one).

    Parameters
    ----------
    model, q, v, link : ...
        Shared by the calls: ``rbd_ros.algorithms.entries.SHARED_PARAMETERS``.
    reference : str
        The frame the result is expressed in: "local" (default), "local_world_aligned" or
        "world" (as for :func:`rbd_ros.frame_jacobian`).
    data : ...
        Shared by the calls: ``rbd_ros.algorithms.entries.SHARED_PARAMETERS``.

    Returns
    -------
    dJ : numpy.ndarray, shape ``(6, nv)``
        J̇ of the J that :func:`rbd_ros.frame_jacobian` returns for ``reference``, linear rows
        first (J̇ v in m/s², rad/s²).

    Raises
    ------
    ValueError
        ``link`` not a link of the model, or ``reference`` not one of its three values;
        ... the shared refusals: ``rbd_ros.algorithms.entries.SHARED_REFUSALS``.

    Notes
    -----
    A model with mimic joints: J̇_r = J̇ G.

    """
