"""
Regressors: inverse dynamics written linearly in the inertial parameters (regressor seed).

    f = Y_b(v, a_g) θ            one body: f = I a_g + v ×* (I v)           Y_b: 6 × 10
    τ = Y(q, v, v̇) θ             the whole tree, θ = [θ_0; θ_1; …]          Y: nv × 10·nbodies

θ of a body is ``[m, m·cx, m·cy, m·cz, Ixx, Ixy, Iyy, Ixz, Iyz, Izz]`` about its joint frame
origin (``model.theta``, ``model.inertial_parameters()``), so that
``Y @ model.inertial_parameters().ravel() == rnea(model, q, v, a)``.

The joint torque regressor is computed as in the seed (l. 252-295, Y = [J_1ᵀ Y_b1 … J_nbᵀ
Y_bnb]) in one forward pass: RNEA's forward pass in body frames gives each body's twist v_i
and gravity-including acceleration a_i in its own frame; the body regressor Y_b(v_i, a_i) is
the 6×10 map from θ_i to the force body i needs; its 10 columns are moved once to the world
(^0X_i^*) and projected on each ancestor's world-frame joint subspace: column block i of row
block j is S_jᵀ ^0X_i^* Y_b(v_i, a_i) for each ancestor j of i (i included), zero elsewhere.
Carrying the block up the tree in body frames instead (as Pinocchio does) costs a force
transform per column and ancestor where this costs a dot product. The world is the one
translated to the floating base of the other world-frame kernels (``joints.jcalc``): no
precision lost far from the origin; the projections do not depend on it. (Placements in the
base's own frame, where the free flyer's S is the identity, measured 25 % slower on talos;
the world placement from the local one, not from a second jcalc, 7-12 % faster.)
"""
import numpy as np

from .. import _checks
from .._jit import f64_1d, f64_2d, f64_2d_ro, helper, int64, kernel
from ..model.layout import P_IV, P_PARENT, W_OA, W_OM, W_OS, W_OV
from ..model.spatial import act_force, act_inv_force, dot6, load6
from ..model.matrix6 import load6_vector
from ..model.se3 import se3_load, se3_store, store6
from .common import (NOT_FINITE_RESULT, OUTPUT_REFUSED, WRONG_SIZE, apart, check_configuration,
                     check_vector, model_sizes, set_world, writeable_matrix)
from .joints import (IDENTITY_SE3, ZERO6, joint_force_local, joint_nv,
                     world_placement_from_local)
from .rnea import body_motion_step
from .entries import declare


@helper
def body_regressor_into(Y, v, a):
    """
    Write into Y (6, 10) the body regressor of a body with twist v and spatial acceleration a.

    The acceleration a includes gravity; v and a are both tuples in the body frame, linear
    first.

    Columns follow θ = [m, hx, hy, hz, Ixx, Ixy, Iyy, Ixz, Iyz, Izz]; with b = a_lin + ω × v_lin:
    f_lin = m b + ([α]× + [ω]×[ω]×) h,   f_ang = -[b]× h + I α + ω × (I ω).
    """
    vx, vy, vz, wx, wy, wz = v
    alx, aly, alz, ax, ay, az = a
    bx = alx + wy * vz - wz * vy
    by = aly + wz * vx - wx * vz
    bz = alz + wx * vy - wy * vx
    wxx, wyy, wzz = wx * wx, wy * wy, wz * wz
    wxy, wxz, wyz = wx * wy, wx * wz, wy * wz
    # mass
    Y[0, 0] = bx
    Y[1, 0] = by
    Y[2, 0] = bz
    Y[3, 0] = 0.0
    Y[4, 0] = 0.0
    Y[5, 0] = 0.0
    # first moment h: f_lin = ([α]× + w wᵀ - |w|² 1) h, f_ang = -[b]× h
    Y[0, 1] = -(wyy + wzz)
    Y[1, 1] = az + wxy
    Y[2, 1] = -ay + wxz
    Y[3, 1] = 0.0
    Y[4, 1] = -bz
    Y[5, 1] = by
    Y[0, 2] = -az + wxy
    Y[1, 2] = -(wxx + wzz)
    Y[2, 2] = ax + wyz
    Y[3, 2] = bz
    Y[4, 2] = 0.0
    Y[5, 2] = -bx
    Y[0, 3] = ay + wxz
    Y[1, 3] = -ax + wyz
    Y[2, 3] = -(wxx + wyy)
    Y[3, 3] = -by
    Y[4, 3] = bx
    Y[5, 3] = 0.0
    # rotational inertia about the origin: I α + ω × (I ω)
    for r in range(3):
        for c in range(4, 10):
            Y[r, c] = 0.0
    Y[3, 4] = ax                # Ixx
    Y[4, 4] = wxz
    Y[5, 4] = -wxy
    Y[3, 5] = ay - wxz          # Ixy
    Y[4, 5] = ax + wyz
    Y[5, 5] = wxx - wyy
    Y[3, 6] = -wyz              # Iyy
    Y[4, 6] = ay
    Y[5, 6] = wxy
    Y[3, 7] = az + wxy          # Ixz
    Y[4, 7] = wzz - wxx
    Y[5, 7] = ax - wyz
    Y[3, 8] = wyy - wzz         # Iyz
    Y[4, 8] = az - wxy
    Y[5, 8] = ay + wxz
    Y[3, 9] = wyz               # Izz
    Y[4, 9] = -wxz
    Y[5, 9] = az


@helper
def body_regressor_to_world(oM, Yb):
    """Express the 10 force columns of Yb (body frame, 6×10) in the world: ^0X_i^* Yb."""
    for c in range(10):
        f = act_force(oM, (Yb[0, c], Yb[1, c], Yb[2, c], Yb[3, c], Yb[4, c], Yb[5, c]))
        for r in range(6):
            Yb[r, c] = f[r]


@helper
def project_block(packed, ws, Yb, j, Y, col):
    """
    Set Y[rows of joint j, col:col+10] = S_jᵀ Yb (Yb: 6×10 forces in the world frame).

    Return True if an entry written is not finite: every other entry of Y is a zero, so the
    check of Y rides on the writes instead of a pass over all of Y (38 × 390 on talos).
    """
    iv = int(packed[j, P_IV])
    nvj = joint_nv(packed, j)
    if nvj == 1:
        oM, oS = IDENTITY_SE3, load6(ws, j, W_OS)
    else:
        oM, oS = se3_load(ws, j, W_OM), ZERO6
    bad = False
    for c in range(10):
        f = (Yb[0, c], Yb[1, c], Yb[2, c], Yb[3, c], Yb[4, c], Yb[5, c])
        if nvj == 1:                      # the commonest: one dot product with S (W_OS)
            t = dot6(oS, f), 0.0, 0.0, 0.0, 0.0, 0.0
        elif nvj == 6:                    # spanning all motions: the identity in the body
            t = act_inv_force(oM, f)      # frame (``joints.py``), no dispatch per column
        else:                             # Sᵀ of the wrench in the body frame
            t = joint_force_local(packed, j, act_inv_force(oM, f))
        for k in range(nvj):
            y = t[k]
            Y[iv + k, col + c] = y
            bad |= (y - y) != 0.0             # inf - inf and NaN are NaN
    return bad


@kernel(int64(f64_2d_ro, f64_2d, f64_2d, f64_1d, f64_1d, f64_1d, f64_2d))
def joint_torque_regressor_kernel(packed, ws, Yb, q, v, a, Y):
    """Y (nv, 10 nb) with Y θ = τ; ws: the model's body workspace, Yb: a (6, 10) scratch."""
    nb, nq, nv = model_sizes(packed)
    if not (writeable_matrix(Y, nv, 10 * nb) and apart(Y, q) and apart(Y, v) and apart(Y, a)):
        return OUTPUT_REFUSED
    status = check_configuration(packed, q, nq, 1) or check_vector(v, nv, 2)
    status = status or check_vector(a, nv, 3)
    if status:
        return status
    if Yb.shape[0] != 6 or Yb.shape[1] != 10:
        return 5 * 4 + WRONG_SIZE
    for r in range(nv):
        for c in range(10 * nb):
            Y[r, c] = 0.0
    set_world(packed, ws)
    bad = False
    for i in range(nb):
        # v_i, a_i in body i's own frame (RNEA's forward pass); its placement and joint
        # subspace in the world, for the projections of it and of its descendants
        X, vi, ai = body_motion_step(packed, ws, q, v, a, i)
        oM_parent = se3_load(ws, int(packed[i, P_PARENT]), W_OM)
        oM, oS = world_placement_from_local(packed, i, oM_parent, X)
        store6(ws, i, W_OV, vi)
        store6(ws, i, W_OA, ai)
        se3_store(ws, i, W_OM, oM)
        store6(ws, i, W_OS, oS)
        # column block i: J_iᵀ Y_b(v_i, a_i) (seed l. 275-293), J_i's rows those of i's
        # ancestors j, each S_jᵀ in the world: one 6-vector dot product per column and
        # ancestor, where carrying the block up the tree in body frames costs a force
        # transform per column and ancestor
        body_regressor_into(Yb, vi, ai)
        body_regressor_to_world(oM, Yb)
        j = i
        while j >= 0:
            bad |= project_block(packed, ws, Yb, j, Y, 10 * i)
            j = int(packed[j, P_PARENT])
    return NOT_FINITE_RESULT if bad else 0


@kernel(int64(f64_1d, f64_1d, f64_2d))
def body_regressor_kernel(v, a, Y):
    if v.shape[0] != 6:
        return 1 * 4 + WRONG_SIZE
    if a.shape[0] != 6:
        return 2 * 4 + WRONG_SIZE
    body_regressor_into(Y, load6_vector(v, 0), load6_vector(a, 0))
    return 0


def body_regressor(v, a_g):
    """
    Return the 6×10 body regressor Y_b with f = Y_b(v, a_g) θ = I a_g + v ×* (I v).

    θ = [m, m·cx, m·cy, m·cz, Ixx, Ixy, Iyy, Ixz, Iyz, Izz] about the body frame origin (kg,
    kg·m, kg·m²); f = [f; n] (N, N·m) in the body frame, the moment about its origin.

    Parameters
    ----------
    v : array_like, shape ``(6,)``
        The body's twist [v; ω] (m/s, rad/s), in the body frame, linear part first.
    a_g : array_like, shape ``(6,)``
        Its spatial acceleration minus gravity (m/s², rad/s²), in the body frame, linear part
        first.

    Returns
    -------
    Y_b : numpy.ndarray, shape ``(6, 10)``
        The body regressor: column k multiplies θ[k].

    Raises
    ------
    ValueError
        ``v`` or ``a_g`` not 6 entries, or not an array of real numbers (NaN and inf are not
        refused: they propagate into Y_b).

    """
    v, a_g = _checks.vectors(("v", "a_g"), v, a_g)
    Y = np.empty((6, 10))
    status = body_regressor_kernel(v, a_g, Y)
    if status:
        name = "v" if status // 4 == 1 else "a_g"
        raise ValueError(f"body_regressor: {name} must have 6 entries (a spatial vector, "
                         f"linear part first), got {({'v': v, 'a_g': a_g}[name]).shape}")
    return Y


@declare
def joint_torque_regressor(model, q, v, a, *, data=None):
    """
    Return the joint torque regressor Y (nv, 10·nbodies): τ = Y θ, linear in the inertias.

    ``Y @ model.inertial_parameters().ravel() == rnea(model, q, v, a)``; column block i belongs
    to body i's θ (seeds README order). Pinocchio's
    ``computeJointTorqueRegressor(model, data, q, v, a)``.

    Parameters
    ----------
    model, q, v, a, data : ...
        Shared by the calls: ``rbd_ros.algorithms.entries.SHARED_PARAMETERS``.

    Returns
    -------
    Y : numpy.ndarray, shape ``(nv, 10 * nb)``
        Columns 10 i … 10 i + 9 belong to body i (``model.body_names`` order, nb =
        ``model.nbodies``), θ_i = [m, m·cx, m·cy, m·cz, Ixx, Ixy, Iyy, Ixz, Iyz, Izz] (kg, kg·m,
        kg·m²) about the body frame's origin; τ in N·m, N.

    Raises
    ------
    ValueError
        ... the shared refusals: ``rbd_ros.algorithms.entries.SHARED_REFUSALS``.

    Notes
    -----
    With mimic joints (coupled), Y_r = Gᵀ Y.

    """
