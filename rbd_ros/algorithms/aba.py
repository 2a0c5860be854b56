"""
Forward dynamics: the articulated-body algorithm (ABA).

Featherstone, RBDA Table 7.1, in the world frame (as Pinocchio): the articulated inertia of
a child is added to its parent's without the 6×6 change of frame (X* I X) that dominates the
classic body-frame version. Pass numbers follow Table 7.1.
"""
from .._jit import f64_1d, f64_2d, f64_2d_ro, helper, int64, kernel
from ..model.layout import (P_IV, P_PARENT, W_DINV, W_DINVK, W_IA, W_OA, W_OC, W_OF, W_OM, W_OS,
                            W_U, W_UK, W_UU, W_UUK)
from ..model.spatial import add6, axpy6, cross_motion, dot6, load6, scale6, sub6
from ..model.matrix6 import (load6_vector, mat6_add_sub_rank1, mat6_apply, mat6_cholesky,
                             mat6_cholesky_solve, mat6_set_inertia, mat6_sub_rank1)
from ..model.se3 import se3_load, store6
from .common import (OUTPUT_REFUSED, apart_from_state, begin_state_pass, body_bias_force,
                     model_sizes, placement_step, store_motion, vector_status, velocity_step,
                     writeable_vector)
from .joints import (ZERO6, joint_force_in_world, joint_inv_motion, joint_nv,
                     joint_spans_all_motions, subspace_column)
from .entries import declare

# Multi-dof joints. The free-flyer root's S (6×6) is invertible: its articulated inertia is
# factorized in pass 2 and its acceleration solved in pass 3. Any other joint of n dofs
# (a planar one) is run as a chain of n 1-dof joints S_0 … S_{n-1} through massless bodies
# (RBDA §7.3's multi-dof joint, eliminated one column at a time): pass 2 takes its dofs from
# the last, U_k = I_k S_k with I_k = I^A - Σ_{m>k} U_m D_m⁻¹ U_mᵀ (the articulated inertia
# left after the later dofs), D_k = S_kᵀ U_k, u_k = τ_k - S_kᵀ p_k with
# p_k = p^A + Σ_{m>k} U_m D_m⁻¹ u_m; the parent receives I^A - Σ U D⁻¹ Uᵀ and
# p^A + Σ U D⁻¹ u + I^a c. Pass 3 runs the dofs from the first, a ← a + S_k q̈_k from
# a_λ + c. The whole joint's c = v_λ × S q̇ enters once, at the first dof: its columns are
# fixed in the body, so they add no velocity product among themselves. W_IA keeps I^A.


@helper
def dof_factor(ws, i, k):
    """Return (U_k, D_k⁻¹) of dof k of body i's joint (pass 2)."""
    if k == 0:
        return load6(ws, i, W_U), ws[i, W_DINV]
    return load6(ws, i, W_UK + 6 * (k - 1)), ws[i, W_DINVK + k - 1]


@helper
def store_dof_factor(ws, i, k, U, Dinv):
    """Store (U_k, D_k⁻¹) of dof k of body i's joint, where ``dof_factor`` reads them."""
    if k == 0:
        store6(ws, i, W_U, U)
        ws[i, W_DINV] = Dinv
    else:
        store6(ws, i, W_UK + 6 * (k - 1), U)
        ws[i, W_DINVK + k - 1] = Dinv


@helper
def dof_bias(ws, i, k):
    """Return u_k of dof k of body i's joint (pass 2)."""
    if k == 0:
        return ws[i, W_UU]
    return ws[i, W_UUK + k - 1]


@helper
def store_dof_bias(ws, i, k, u):
    """Store u_k of dof k of body i's joint, where ``dof_bias`` reads it."""
    if k == 0:
        ws[i, W_UU] = u
    else:
        ws[i, W_UUK + k - 1] = u


@helper
def multi_dof_inertia_step(packed, ws, i, n):
    """Run pass 2's inertia part for a joint of n > 1 dofs but the free-flyer root (top)."""
    oM = se3_load(ws, i, W_OM)
    U, Dinv = ZERO6, 0.0
    for k in range(n - 1, -1, -1):
        S = subspace_column(packed, i, k, oM, ZERO6)
        U = mat6_apply(ws, i, W_IA, S)
        for m in range(k + 1, n):               # I_k S = I^A S - Σ_{m>k} U_m D_m⁻¹ U_mᵀ S
            Um, Dm = dof_factor(ws, i, m)
            U = sub6(U, scale6(Dm * dot6(Um, S), Um))
        Dinv = 1.0 / dot6(S, U)
        store_dof_factor(ws, i, k, U, Dinv)
    store6(ws, i, W_OS, S)                      # S_0: dof 0 runs as a 1-dof joint
    lam = int(packed[i, P_PARENT])
    if lam >= 0:
        mat6_add_sub_rank1(ws, lam, i, W_IA, U, Dinv)
        for m in range(1, n):
            Um, Dm = dof_factor(ws, i, m)
            mat6_sub_rank1(ws, lam, W_IA, Um, Dm)
    return U, Dinv


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

    The multi-dof root instead gets its I^A factorized in place (Cholesky) and (0, 0);
    another multi-dof joint returns its first dof's (top of the module).
    """
    n = joint_nv(packed, i)
    if n > 1:                             # the commonest, 1 dof, tested once
        if joint_spans_all_motions(packed, i):
            mat6_cholesky(ws, i, W_IA)
            return ZERO6, 0.0
        return multi_dof_inertia_step(packed, ws, i, n)
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
    Run pass 2 for body i, the force part.

    u = τ - Sᵀ p^A (W_UU), and p^a = p^A + I^a c + U D⁻¹ u with I^a = I^A - U D⁻¹ Uᵀ added
    to the parent's p^A. A multi-dof joint: ``multi_dof_bias_force_step``; none for the
    free-flyer root (its pass 3 solves with its I^A and p^A).
    """
    if joint_nv(packed, i) > 1:             # the commonest, 1 dof, tested once
        if not joint_spans_all_motions(packed, i):
            multi_dof_bias_force_step(packed, ws, tau, i)
        return
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
def multi_dof_bias_force_step(packed, ws, tau, i):
    """Run pass 2's force part for a joint of n > 1 dofs but the free-flyer root (top)."""
    n = joint_nv(packed, i)
    iv = int(packed[i, P_IV])
    oM = se3_load(ws, i, W_OM)
    p = load6(ws, i, W_OF)
    c = load6(ws, i, W_OC)
    Ia_c = mat6_apply(ws, i, W_IA, c)           # I^a c = I^A c - Σ U D⁻¹ Uᵀ c
    for k in range(n - 1, -1, -1):             # p_k: p^A and the later dofs' U D⁻¹ u
        U, Dinv = dof_factor(ws, i, k)
        u = tau[iv + k] - dot6(subspace_column(packed, i, k, oM, ZERO6), p)
        store_dof_bias(ws, i, k, u)
        p = add6(p, scale6(Dinv * u, U))
        Ia_c = sub6(Ia_c, scale6(Dinv * dot6(U, c), U))
    lam = int(packed[i, P_PARENT])
    if lam >= 0:
        store6(ws, lam, W_OF, add6(load6(ws, lam, W_OF), add6(p, Ia_c)))


@helper
def acceleration_step(packed, ws, tau, qdd, i):
    """
    Run pass 3 for body i: q̈_i and a_i = a' + S q̈_i with a' = a_λ + c (W_OA).

    Returns (a_λ, a_i). Gravity enters as the world's acceleration.
    """
    iv = int(packed[i, P_IV])
    a_parent = load6(ws, int(packed[i, P_PARENT]), W_OA)
    a_in = add6(a_parent, load6(ws, i, W_OC))
    n = joint_nv(packed, i)
    if n == 1:                            # the commonest first
        qdd_i = ws[i, W_DINV] * (ws[i, W_UU] - dot6(load6(ws, i, W_U), a_in))
        qdd[iv] = qdd_i
        oa = axpy6(qdd_i, load6(ws, i, W_OS), a_in)
    elif joint_spans_all_motions(packed, i):
        # I^A a = f_J - p^A with f_J = S^-T τ (τ given in the base frame), I^A factorized
        oM = se3_load(ws, i, W_OM)
        f_joint = joint_force_in_world(packed, i, oM, load6_vector(tau, iv))
        oa = mat6_cholesky_solve(ws, i, W_IA, sub6(f_joint, load6(ws, i, W_OF)))
        a_joint = joint_inv_motion(packed, i, oM, sub6(oa, a_in))
        for k in range(6):
            qdd[iv + k] = a_joint[k]
    else:
        oM = se3_load(ws, i, W_OM)
        oa = a_in
        for k in range(n):                # the dofs from the first (top of the module)
            U, Dinv = dof_factor(ws, i, k)
            qdd_k = Dinv * (dof_bias(ws, i, k) - dot6(U, oa))
            qdd[iv + k] = qdd_k
            oa = axpy6(qdd_k, subspace_column(packed, i, k, oM, ZERO6), oa)
    store6(ws, i, W_OA, oa)
    return a_parent, oa


@kernel(int64(f64_2d_ro, f64_2d, f64_1d, f64_1d, f64_1d, f64_2d, f64_1d))
def aba_kernel(packed, ws, q, v, tau, fext, qdd):
    if not (writeable_vector(qdd, model_sizes(packed)[2])
            and apart_from_state(qdd, q, v, tau, fext)):
        return OUTPUT_REFUSED
    status = begin_state_pass(packed, ws, q, v, tau, fext)
    if status:
        return status
    nb = packed.shape[0] - 1
    for i in range(nb):                      # pass 1: velocities, c, p^A, I^A = I
        aba_forward_step(packed, ws, q, v, fext, i)
    for i in range(nb - 1, -1, -1):          # pass 2: I^A and p^A, leaves to root
        U, Dinv = articulated_inertia_step(packed, ws, i)
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
