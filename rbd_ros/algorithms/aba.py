"""
Forward dynamics: the articulated-body algorithm (ABA).

Featherstone, RBDA Table 7.1, in the world frame (as Pinocchio): the articulated inertia of
a child is added to its parent's without the 6×6 change of frame (X* I X) that dominates the
classic body-frame version. Pass numbers follow Table 7.1.
"""
from .._jit import f64_1d, f64_2d, f64_2d_ro, helper, int64, kernel
from ..model.layout import P_IV, P_PARENT, W_DINV, W_IA, W_OA, W_OC, W_OF, W_OM, W_OS, W_U, W_UU
from ..model.spatial import add6, axpy6, cross_motion, dot6, load6, scale6, sub6
from ..model.matrix6 import (load6_vector, mat6_add_sub_rank1, mat6_apply, mat6_cholesky,
                             mat6_cholesky_solve, mat6_set_inertia)
from ..model.se3 import se3_load, store6
from .common import (begin_state_pass, body_bias_force, placement_step, store_motion,
                     vector_status, velocity_step)
from .joints import ZERO6, joint_force_in_world, joint_inv_motion, joint_spans_all_motions
from .entries import declare

# The only multi-dof joint is the free-flyer root, whose S (6×6) is invertible: its
# articulated inertia is factorized in pass 2 and its acceleration solved in pass 3.


@helper
def aba_forward_step(packed, ws, q, v, fext, i):
    """
    Run pass 1 for body i.

    Placement, v_i, c_i = v_λ × v_J (W_OC), p^A_i = v_i ×* I_i v_i - f_ext,i (W_OF),
    I^A_i = I_i (W_IA). Returns what the derivatives reuse:
    (oM, oS, v_λ, v_J, v_i, I_i, h_i, p^A_i).
    """
    oM, oS = placement_step(packed, ws, q, i)
    v_parent, vJ, ov = velocity_step(packed, ws, v, i, oM, oS)
    oI, oh, bias = body_bias_force(packed, fext, i, oM, ov)
    store_motion(ws, i, oM, oS, ov)
    store6(ws, i, W_OC, cross_motion(v_parent, vJ))
    store6(ws, i, W_OF, bias)
    mat6_set_inertia(ws, i, W_IA, oI)
    return oM, oS, v_parent, vJ, ov, oI, oh, bias


@helper
def articulated_inertia_step(packed, ws, i):
    """
    Run pass 2 for body i, the inertia part (also the M⁻¹ report's lines 9-10, 15-16).

    U = I^A S, D⁻¹ = (Sᵀ U)⁻¹ (W_U, W_DINV), I^A_λ += I^A - U D⁻¹ Uᵀ. Returns (U, D⁻¹).

    The multi-dof root instead gets its I^A factorized in place (Cholesky) and (0, 0).
    """
    if joint_spans_all_motions(packed, i):
        mat6_cholesky(ws, i, W_IA)
        return ZERO6, 0.0
    oS = load6(ws, i, W_OS)
    U = mat6_apply(ws, i, W_IA, oS)
    Dinv = 1.0 / dot6(oS, U)
    store6(ws, i, W_U, U)
    ws[i, W_DINV] = Dinv
    lam = int(packed[i, P_PARENT])
    if lam >= 0:
        mat6_add_sub_rank1(ws, lam, i, W_IA, U, Dinv)     # world frame: X* I X = I
    return U, Dinv


@helper
def bias_force_step(packed, ws, tau, i, U, Dinv):
    """
    Run pass 2 for a 1-dof body i, the force part.

    u = τ - Sᵀ p^A (W_UU), and p^a = p^A + I^a c + U D⁻¹ u with I^a = I^A - U D⁻¹ Uᵀ added
    to the parent's p^A.
    """
    pA = load6(ws, i, W_OF)
    u = tau[int(packed[i, P_IV])] - dot6(load6(ws, i, W_OS), pA)
    ws[i, W_UU] = u
    lam = int(packed[i, P_PARENT])
    if lam >= 0:
        c = load6(ws, i, W_OC)
        Ia_c = sub6(mat6_apply(ws, i, W_IA, c), scale6(Dinv * dot6(U, c), U))
        pa = add6(add6(pA, Ia_c), scale6(Dinv * u, U))
        store6(ws, lam, W_OF, add6(load6(ws, lam, W_OF), pa))


@helper
def acceleration_step(packed, ws, tau, qdd, i):
    """
    Run pass 3 for body i: q̈_i and a_i = a' + S q̈_i with a' = a_λ + c (W_OA).

    Returns (a_λ, a_i). Gravity enters as the world's acceleration.
    """
    iv = int(packed[i, P_IV])
    a_parent = load6(ws, int(packed[i, P_PARENT]), W_OA)
    a_in = add6(a_parent, load6(ws, i, W_OC))
    if joint_spans_all_motions(packed, i):
        # I^A a = f_J - p^A with f_J = S^-T τ (τ given in the base frame), I^A factorized
        oM = se3_load(ws, i, W_OM)
        f_joint = joint_force_in_world(packed, i, oM, load6_vector(tau, iv))
        oa = mat6_cholesky_solve(ws, i, W_IA, sub6(f_joint, load6(ws, i, W_OF)))
        a_joint = joint_inv_motion(packed, i, oM, sub6(oa, a_in))
        for k in range(6):
            qdd[iv + k] = a_joint[k]
    else:
        qdd_i = ws[i, W_DINV] * (ws[i, W_UU] - dot6(load6(ws, i, W_U), a_in))
        qdd[iv] = qdd_i
        oa = axpy6(qdd_i, load6(ws, i, W_OS), a_in)
    store6(ws, i, W_OA, oa)
    return a_parent, oa


@kernel(int64(f64_2d_ro, f64_2d, f64_1d, f64_1d, f64_1d, f64_2d, f64_1d))
def aba_kernel(packed, ws, q, v, tau, fext, qdd):
    status = begin_state_pass(packed, ws, q, v, tau, fext)
    if status:
        return status
    nb = packed.shape[0] - 1
    for i in range(nb):                      # pass 1: velocities, c, p^A, I^A = I
        aba_forward_step(packed, ws, q, v, fext, i)
    for i in range(nb - 1, -1, -1):          # pass 2: I^A and p^A, leaves to root
        U, Dinv = articulated_inertia_step(packed, ws, i)
        if not joint_spans_all_motions(packed, i):
            bias_force_step(packed, ws, tau, i, U, Dinv)
    for i in range(nb):                      # pass 3: accelerations, root to leaves
        acceleration_step(packed, ws, tau, qdd, i)
    return vector_status(qdd)


@declare
def aba(model, q, v, tau, fext=None, *, data=None):
    """
    Return the joint accelerations q̈ = FD(q, v, τ): forward dynamics by the ABA.

    Pinocchio's ``aba(model, data, q, v, tau[, fext])``, with gravity ``model.gravity``.

    Parameters
    ----------
    model, q, v, tau, fext, data : ...
        Shared by the calls: ``rbd_ros.algorithms.entries.SHARED_PARAMETERS``.

    Returns
    -------
    qdd : numpy.ndarray, shape ``(nv,)``
        The joint accelerations (rad/s², m/s²) that ``tau`` and ``fext`` produce at (q, v), laid
        out as ``v``.

    Raises
    ------
    ValueError
        ... the shared refusals: ``rbd_ros.algorithms.entries.SHARED_REFUSALS``.

    Notes
    -----
    With mimic joints (coupled), the reduced system is solved exactly, by a dense Cholesky
    factorization of M_r (the recursion cannot carry the coupling).

    """
