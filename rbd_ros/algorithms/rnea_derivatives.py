"""
Analytical partial derivatives of inverse dynamics: ∂τ/∂q, ∂τ/∂q̇ and ∂τ/∂q̈ = M.

Algorithms 2 (forward pass) and 3 (backward pass) of the RSS 2018 seed (Carpentier &
Mansard), evaluated in the world frame as Pinocchio's ``computeRNEADerivatives``; line
numbers below are those of Algorithms 2 and 3 ("A2 l.3", "A3 l.1"). In the world frame the
placement derivatives of A2 l.2 and A3 l.3 (Eqs. 13 and 14) become cross products with the
world motion subspace S_j of the joint being varied, and everything else is sums.

Derivation (world frame; j is the joint varied, λ = λ(j) its parent, i a body of the subtree
of j). Varying q_j rotates the subtree of j rigidly about S_j while v_λ, a_λ stay fixed, so

    ∂v_i/∂q_j = S_j × v_i + dV_j,             dV_j = v_λ × S_j                 (A2 l.3)
    ∂a_i/∂q_j = S_j × a_i + dV_j × v_i + dA_j, dA_j = a_λ × S_j + v_λ × dV_j   (A2 l.5)
    ∂v_i/∂q̇_j = S_j,  ∂a_i/∂q̇_j = S_j × v_i + dW_j,  dW_j = v_j × S_j + v_λ × S_j

(for a 1-dof joint v_j × S_j = v_λ × S_j, so dW_j = 2 dV_j; the free-flyer root has v_λ = 0).
With h_i = I_i v_i, f_i = I_i a_i + v_i ×* h_i - f_ext_i and I_i, f_ext_i turning with the
subtree (∂(I m) = S ×* (I m) - I (S × m)), the Jacobi identity collapses A2 l.4-6 to

    ∂f_i/∂q_j = S_j ×* f_i + I_i dA_j + B_i dV_j,    ∂f_i/∂q̇_j = B_i S_j + I_i dW_j,
    B_i m = I_i (m × v_i) + m ×* h_i + v_i ×* (I_i m)     (a 6×6 matrix, linear in I_i).

Summing over a subtree, with I^c_l = Σ I_k, B^c_l = Σ B_k and F_l = Σ f_k (A3 l.3: in the
world frame the force transform is the identity and ∂X*/∂q_j f = S_j ×* f, Eq. 14), and
τ_l = S_lᵀ F_l (A3 l.1, where S_l itself turns about S_j when j ⪯ l):

    l ⪰ j:  ∂τ_l/∂q_j = Y_l·dA_j + Z_l·dV_j     (the S_l-rotation term (S_j × S_l)ᵀ F_l
                                                  cancels S_lᵀ (S_j ×* F_l) exactly)
            ∂τ_l/∂q̇_j = Z_l·S_j + Y_l·dW_j,     M[l, j] = Y_l·S_j
            with Y_l = I^c_l S_l and Z_l = (B^c_l)ᵀ S_l;
    l ≺ j:  ∂τ_l/∂q_j = S_l·(S_j ×* F_j + I^c_j dA_j + B^c_j dV_j)
            ∂τ_l/∂q̇_j = S_l·(B^c_j S_j + I^c_j dW_j),          M[l, j] = S_l·I^c_j S_j;

and zero when neither joint supports the other. Each body visits its ancestors once: O(n d)
for a tree of depth d. For the free-flyer root S = Ad(oM) (six columns) and q is varied in
the tangent space, M ← M exp(δ) with δ in the base frame, i.e. along the world twists S_k.
"""
from .._jit import f64_1d, f64_2d, f64_2d_ro, helper, int64, kernel
from ..model.layout import D_DA, D_DV, D_DW, D_S, P_IV, P_PARENT, W_OA, W_OF, W_OI
from ..model.spatial import (add6, add10, cross_force, cross_motion, dot6, inertia_apply, load6,
                             load10)
from ..model.matrix6 import mat6_apply, mat6_apply_transpose
from ..model.se3 import store6, store10
from .common import (OUTPUT_REFUSED, apart_from_state, begin_state_pass, body_bias_force,
                     matrix_status, model_sizes, placement_step, square_outputs_fit,
                     store_motion, velocity_step)
from .joints import UNIT_MOTIONS, ZERO6, joint_motion, joint_nv, subspace_column
from .entries import declare


@helper
def inertia_variation_column(oI, ov, h, m):
    """B m = I (m × v) + m ×* h + v ×* (I m) for the body of inertia I, twist v, h = I v."""
    return add6(add6(inertia_apply(oI, cross_motion(m, ov)), cross_force(m, h)),
                cross_force(ov, inertia_apply(oI, m)))


@helper
def store_inertia_variation(bws, i, oI, ov, h):
    """bws[i] = B_i (6×6 row-major), column by column: B_i m for the unit twists m."""
    for c in range(6):
        col = inertia_variation_column(oI, ov, h, UNIT_MOTIONS[c])
        for r in range(6):
            bws[i, 6 * r + c] = col[r]


@helper
def acceleration_column(a_parent, v_parent, S, dV):
    """A2 l.5: dA_j = a_λ × S_j + v_λ × dV_j."""
    return add6(cross_motion(a_parent, S), cross_motion(v_parent, dV))


@helper
def velocity_derivative_step(packed, ws, dws, bws, i, oM, oS, v_parent, ov, oI, oh):
    """
    Run the acceleration-free part of A2 l.3-6 for body i once its velocity is known.

    It stores per dof column S, dV, dW (``dws``), I_i (W_OI) and B_i (``bws``): all that
    ∂ID/∂q̇ and the B, I^c terms of ∂ID/∂q need, at any acceleration (``aba_derivatives``
    adds the dA columns once q̈ is known).
    """
    iv = int(packed[i, P_IV])
    for k in range(joint_nv(packed, i)):
        S = subspace_column(packed, i, k, oM, oS)
        dV = cross_motion(v_parent, S)                                      # A2 l.3, Eq. 13
        store6(dws, iv + k, D_S, S)
        store6(dws, iv + k, D_DV, dV)
        store6(dws, iv + k, D_DW, add6(cross_motion(ov, S), dV))     # A2 l.5 with u = q̇
    store10(ws, i, W_OI, oI)                                  # I^c_i: summed going back
    store_inertia_variation(bws, i, oI, ov, oh)               # A2 l.6: B_i


@helper
def acceleration_columns_step(packed, dws, i, a_parent, v_parent):
    """A2 l.5 for the columns of body i, after ``velocity_derivative_step``: dA (``dws``)."""
    iv = int(packed[i, P_IV])
    for k in range(iv, iv + joint_nv(packed, i)):
        store6(dws, k, D_DA, acceleration_column(a_parent, v_parent, load6(dws, k, D_S),
                                                 load6(dws, k, D_DV)))


@helper
def derivative_forward_step(packed, ws, dws, bws, a, i, oM, oS, v_parent, vJ, ov, oI, oh,
                            bias):
    """
    Run A1 l.9-11 and A2 l.1-6 for body i once its placement and velocity are known.

    It stores a_i (W_OA), per dof column S, dV, dA, dW (``dws``), I_i (W_OI), B_i (``bws``).
    Returns f_i = I_i a_i + v_i ×* h_i - f_ext,i.
    """
    a_parent = load6(ws, int(packed[i, P_PARENT]), W_OA)
    oa = add6(add6(a_parent, joint_motion(packed, i, oM, oS, a)),
              cross_motion(v_parent, vJ))                                   # A1 l.9
    velocity_derivative_step(packed, ws, dws, bws, i, oM, oS, v_parent, ov, oI, oh)
    acceleration_columns_step(packed, dws, i, a_parent, v_parent)           # A2 l.5
    store6(ws, i, W_OA, oa)
    return add6(inertia_apply(oI, oa), bias)                  # A1 l.10-11


@helper
def derivative_backward_step(packed, ws, dws, bws, i, F, dA, dA_col, dtau_dq, dtau_dv, M,
                             second, F2, dA2, dA2_col, G):
    """
    Run Algorithm 3 for the columns c of body i, with the subtree sums complete.

    The subtree sums are I^c_i (W_OI), B^c_i (``bws``) and F_i. It writes the entries (c, r)
    and (r, c), for r a column of i or of an ancestor, of ∂τ/∂q with the acceleration
    columns dA[:, dA_col:dA_col + 6], of ∂τ/∂q̇, and either of M or, when ``second`` (a
    constant: the compiler drops the other branch), of G, ∂τ/∂q at a second acceleration
    (subtree forces F2, columns dA2): ∂τ/∂q̇ does not depend on the acceleration, and
    I^c S, (B^c)ᵀ S and B^c dV serve both accelerations (``compute_all``).
    """
    Ic = load10(ws, i, W_OI)
    iv = int(packed[i, P_IV])
    for c in range(iv, iv + joint_nv(packed, i)):
        S = load6(dws, c, D_S)
        Y = inertia_apply(Ic, S)                                   # I^c S (also ∂τ/∂q̈)
        Z = mat6_apply_transpose(bws, i, 0, S)                     # (B^c)ᵀ S
        BdV = mat6_apply(bws, i, 0, load6(dws, c, D_DV))
        # A3 l.3 summed over the subtree, S ×* F from Eq. 14: the force set seen by the
        # joints above i
        dFdq = add6(add6(cross_force(S, F), inertia_apply(Ic, load6(dA, c, dA_col))), BdV)
        dFdq2 = ZERO6
        if second:
            dFdq2 = add6(add6(cross_force(S, F2), inertia_apply(Ic, load6(dA2, c, dA2_col))),
                         BdV)
        dFdv = add6(mat6_apply(bws, i, 0, S), inertia_apply(Ic, load6(dws, c, D_DW)))
        j = i
        while j >= 0:                                              # i and its ancestors
            jv = int(packed[j, P_IV])
            for r in range(jv, jv + joint_nv(packed, j)):
                Sr = load6(dws, r, D_S)
                # row c, column r (r ⪯ c): A3 l.1 with ∂S_c/∂q_r = S_r × S_c
                zdv = dot6(Z, load6(dws, r, D_DV))
                dtau_dq[c, r] = dot6(Y, load6(dA, r, dA_col)) + zdv
                dtau_dv[c, r] = dot6(Z, Sr) + dot6(Y, load6(dws, r, D_DW))
                if second:
                    G[c, r] = dot6(Y, load6(dA2, r, dA2_col)) + zdv
                elif r <= c:               # always so for an ancestor; M exactly symmetric
                    M[c, r] = dot6(Y, Sr)
                    M[r, c] = M[c, r]
                if j != i:
                    # row r, column c (r ≺ c): A3 l.1 with S_r independent of q_c
                    dtau_dq[r, c] = dot6(Sr, dFdq)
                    dtau_dv[r, c] = dot6(Sr, dFdv)
                    if second:
                        G[r, c] = dot6(Sr, dFdq2)
            j = int(packed[j, P_PARENT])


@helper
def subtree_sum_step(packed, ws, bws, i):
    """A3 l.2-3: I^c_λ += I^c_i and B^c_λ += B^c_i (world frame: no change of frame)."""
    lam = int(packed[i, P_PARENT])
    if lam >= 0:
        store10(ws, lam, W_OI, add10(load10(ws, lam, W_OI), load10(ws, i, W_OI)))
        for k in range(36):
            bws[lam, k] += bws[i, k]


@kernel(int64(f64_2d_ro, f64_2d, f64_2d, f64_2d, f64_1d, f64_1d, f64_1d, f64_2d, f64_2d, f64_2d,
              f64_2d))
def rnea_derivatives_kernel(packed, ws, dws, bws, q, v, a, fext, dtau_dq, dtau_dv, M):
    """
    Compute dtau_dq, dtau_dv, M (nv × nv, all entries written) at (q, v, a, fext).

    ws, dws, bws: the workspace's ``body``, ``dof`` and ``body_matrix`` arrays.
    """
    if not (square_outputs_fit(dtau_dq, dtau_dv, M, model_sizes(packed)[2])
            and apart_from_state(dtau_dq, q, v, a, fext)
            and apart_from_state(dtau_dv, q, v, a, fext) and apart_from_state(M, q, v, a, fext)):
        return OUTPUT_REFUSED
    status = begin_state_pass(packed, ws, q, v, a, fext)          # and RNEA lines 2-3
    if status:
        return status
    nb = packed.shape[0] - 1
    for i in range(nb):                     # forward: RNEA (A1 l.5-11) and Algorithm 2
        oM, oS = placement_step(packed, ws, q, i)                  # A2 l.1-2
        v_parent, vJ, ov = velocity_step(packed, ws, v, i, oM, oS)
        oI, oh, bias = body_bias_force(packed, fext, i, oM, ov)    # A2 l.4
        f = derivative_forward_step(packed, ws, dws, bws, a, i, oM, oS, v_parent, vJ, ov, oI,
                                    oh, bias)
        store_motion(ws, i, oM, oS, ov)
        store6(ws, i, W_OF, f)
    dtau_dq[:, :] = 0.0                     # joints on different branches do not couple
    dtau_dv[:, :] = 0.0
    M[:, :] = 0.0
    for i in range(nb - 1, -1, -1):         # backward: Algorithm 3
        F = load6(ws, i, W_OF)              # subtree sums are complete: children came first
        derivative_backward_step(packed, ws, dws, bws, i, F, dws, D_DA, dtau_dq, dtau_dv, M,
                                 False, F, dws, D_DA, M)
        subtree_sum_step(packed, ws, bws, i)
        lam = int(packed[i, P_PARENT])
        if lam >= 0:
            store6(ws, lam, W_OF, add6(load6(ws, lam, W_OF), F))
    return matrix_status(dtau_dq) or matrix_status(dtau_dv) or matrix_status(M)


@declare
def rnea_derivatives(model, q, v, a, fext=None, *, data=None):
    """
    Return (∂τ/∂q, ∂τ/∂q̇, M) of τ = ID(q, v, a, fext), each nv × nv (M full and symmetric).

    Pinocchio's ``computeRNEADerivatives(model, data, q, v, a[, fext])`` (``data.dtau_dq``,
    ``data.dtau_dv``, ``data.M``). ∂/∂q is taken in the tangent space: for a floating base, q ⊕
    δ moves the base placement to M exp(δ) with δ = (linear, angular) in the base frame
    (Pinocchio's convention; :func:`rbd_ros.integrate`).

    Parameters
    ----------
    model, q, v, a, fext, data : ...
        Shared by the calls: ``rbd_ros.algorithms.entries.SHARED_PARAMETERS``.

    Returns
    -------
    dtau_dq : numpy.ndarray, shape ``(nv, nv)``
        ∂τ/∂q in the tangent space (N·m/rad, N/m, ...); column j is the change of τ per unit of
        the tangent coordinate j.
    dtau_dv : numpy.ndarray, shape ``(nv, nv)``
        ∂τ/∂q̇ (N·m·s/rad, N·s/m, ...).
    M : numpy.ndarray, shape ``(nv, nv)``
        ∂τ/∂q̈ = M(q), as :func:`rbd_ros.crba` returns it.

    Raises
    ------
    ValueError
        ... the shared refusals: ``rbd_ros.algorithms.entries.SHARED_REFUSALS``.

    Notes
    -----
    With mimic joints (coupled), the reduced system's ∂τ_r/∂x = Gᵀ (∂τ/∂x) G.

    """
