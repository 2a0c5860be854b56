"""
The Coriolis matrix C(q, v) with Ṁ = C + Cᵀ and C v = the Coriolis and centrifugal torques.

The factorization Pinocchio's ``computeCoriolisMatrix`` computes, derived in the world frame
(the frame of ``rnea_derivatives``, whose pieces it shares). With J_i the world Jacobian of
body i (the columns S_j of the joints j ⪯ i) and J̇_j = v_j × S_j (S_j turns with body j),

    M = Σ_i J_iᵀ I_i J_i,   İ_i = v_i ×* I_i − I_i v_i×,
    C = Σ_i J_iᵀ (I_i J̇_i + B_i J_i),   B_i m = ½ [v_i ×* (I_i m) − I_i (v_i × m) + m ×* h_i],

h_i = I_i v_i. B_i + B_iᵀ = İ_i (the m ×* h part is skew) gives Ṁ = C + Cᵀ; B_i v_i =
v_i ×* h_i gives C v = Σ J_iᵀ (I_i J̇_i v + v_i ×* h_i), the velocity-product torques. B_i is
half the B_i of ``rnea_derivatives`` (its ``store_inertia_variation`` at ½ v_i, ½ h_i).
Summing over a subtree (I^c_j = Σ I_i, B^c_j = Σ B_i), each joint c and each r ⪯ c:

    C[r, c] = S_rᵀ (I^c_c J̇_c + B^c_c S_c)          (r an ancestor of c, or c itself)
    C[c, r] = (I^c_c S_c)ᵀ J̇_r + S_cᵀ B^c_c S_r      (r a strict ancestor of c)

and zero when neither joint supports the other: Pinocchio's backward pass (rnea.hxx,
CoriolisMatrixBackwardStep), one visit of each body's ancestors, O(n d).
"""
from .._jit import f64_1d, f64_2d, f64_2d_ro, f64_3d, helper, int64, kernel
from ..model.layout import D_DA, D_DV, D_S, P_IV, P_PARENT, P_THETA, P_VEND, W_OI
from ..model.spatial import (add6, cross_motion, dot6, inertia_act, inertia_apply, load6, load10,
                             scale6)
from ..model.matrix6 import mat6_apply, mat6_apply_transpose
from ..model.se3 import store6, store10
from .common import (INPUT_STRIDED, OUTPUT_REFUSED, apart, check_configuration, check_vector,
                     matrix_status, model_sizes, placement_step, plain, store_motion, velocity_step,
                     writeable_matrix)
from .joints import joint_nv, subspace_column
from .mimic import expand_configuration, expand_motion, reduce_matrix, reduced_sizes
from .rnea_derivatives import store_inertia_variation, subtree_sum_step
from .entries import declare

# dof workspace columns used here: S_c (D_S), J̇_c (D_DV), I^c_c J̇_c + B^c_c S_c (D_DA)
D_DJ = D_DV
D_DFDV = D_DA


@kernel(int64(f64_2d_ro, f64_2d, f64_2d, f64_2d, f64_1d, f64_1d, f64_2d))
def coriolis_kernel(packed, ws, dws, bws, q, v, C):
    """C (nv × nv, all entries written) at (q, v); ws, dws, bws as ``rnea_derivatives``."""
    if not (plain(q) and plain(v)):
        return INPUT_STRIDED
    nb, nq, nv = model_sizes(packed)
    if not (writeable_matrix(C, nv, nv) and apart(C, q) and apart(C, v)):
        return OUTPUT_REFUSED
    status = check_configuration(packed, q, nq, 1) or check_vector(v, nv, 2)
    if status:
        return status
    for i in range(nb):                     # forward: S, J̇ = v_i × S, I_i, B_i
        oM, oS = placement_step(packed, ws, q, i)
        ov = velocity_step(packed, ws, v, i, oM, oS)[2]
        oI = inertia_act(oM, load10(packed, i, P_THETA))
        oh = inertia_apply(oI, ov)
        iv = int(packed[i, P_IV])
        for k in range(joint_nv(packed, i)):
            S = subspace_column(packed, i, k, oM, oS)
            store6(dws, iv + k, D_S, S)
            store6(dws, iv + k, D_DJ, cross_motion(ov, S))
        store10(ws, i, W_OI, oI)
        store_inertia_variation(bws, i, oI, scale6(0.5, ov), scale6(0.5, oh))
        store_motion(ws, i, oM, oS, ov)
    C[:, :] = 0.0                           # joints on different branches do not couple
    for i in range(nb - 1, -1, -1):         # backward: the subtree sums are complete
        coriolis_backward_step(packed, ws, dws, bws, i, C)
        subtree_sum_step(packed, ws, bws, i)
    return matrix_status(C)


@helper
def coriolis_backward_step(packed, ws, dws, bws, i, C):
    """Write the rows of body i's columns c: C[c, subtree of i] and C[c, ancestors of i]."""
    Ic = load10(ws, i, W_OI)
    iv = int(packed[i, P_IV])
    nvi = joint_nv(packed, i)
    for c in range(iv, iv + nvi):           # first every column's force derivative
        store6(dws, c, D_DFDV, add6(inertia_apply(Ic, load6(dws, c, D_DJ)),
                                    mat6_apply(bws, i, 0, load6(dws, c, D_S))))
    for c in range(iv, iv + nvi):
        S = load6(dws, c, D_S)
        for s in range(iv, int(packed[i, P_VEND])):     # c itself and i's subtree (DFS)
            C[c, s] = dot6(S, load6(dws, s, D_DFDV))
        Ag = inertia_apply(Ic, S)
        BtS = mat6_apply_transpose(bws, i, 0, S)
        j = int(packed[i, P_PARENT])
        while j >= 0:                       # the strict ancestors' columns
            jv = int(packed[j, P_IV])
            for r in range(jv, jv + joint_nv(packed, j)):
                C[c, r] = dot6(Ag, load6(dws, r, D_DJ)) + dot6(BtS, load6(dws, r, D_S))
            j = int(packed[j, P_PARENT])


@kernel(int64(f64_2d_ro, f64_2d_ro, f64_2d, f64_2d, f64_2d, f64_1d, f64_2d, f64_3d, f64_1d,
              f64_1d, f64_2d))
def coupled_coriolis_kernel(packed, table, ws, dws, bws, qf, VF, MF, q, v, C):
    """C_r = Gᵀ C(f(q), G v) G: Ṁ_r = Gᵀ Ṁ G (G constant) and C_r v_r = Gᵀ C v."""
    nq, nv = reduced_sizes(table)
    status = check_configuration(packed, q, nq, 1) or check_vector(v, nv, 2)
    if status:
        return status
    nqf = qf.shape[0]
    expand_configuration(table, q, qf)
    expand_motion(table, nqf, v, VF[0])
    status = coriolis_kernel(packed, ws, dws, bws, qf, VF[0], MF[0])
    if status:
        return status
    reduce_matrix(table, nqf, MF[0], C)
    return matrix_status(C)


@declare
def coriolis_matrix(model, q, v, *, data=None):
    """
    Return the Coriolis matrix C(q, v) (nv × nv): Ṁ = C + Cᵀ, C v = velocity-product torques.

    C v = ``nonlinear_effects(q, v) - gravity_torques(q)``; the factorization is Pinocchio's
    ``computeCoriolisMatrix``'s.

    Parameters
    ----------
    model, q, v, data : ...
        Shared by the calls: ``rbd_ros.algorithms.entries.SHARED_PARAMETERS``.

    Returns
    -------
    C : numpy.ndarray, shape ``(nv, nv)``
        C(q, v), in the units of M(q) per second (C v in N·m, N).

    Raises
    ------
    ValueError
        ... the shared refusals: ``rbd_ros.algorithms.entries.SHARED_REFUSALS``.

    Notes
    -----
    A model with mimic joints gives C_r = Gᵀ C G.

    """
