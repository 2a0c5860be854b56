"""
Inverse of the joint-space inertia matrix, M⁻¹(q), without forming M.

Carpentier, "Analytical Inverse of the Joint Space Inertia Matrix" (LAAS report 18125,
2018), Algorithm 1, with the corrected backward pass of the seeds' annotated notes: line 14
becomes F^a_i[:, subtree(i)] = F_i[:, subtree(i)] + U_i M⁻¹[i, subtree(i)], then
F_λ(i)[:, subtree(i)] += X* F^a_i[:, subtree(i)]. Line numbers below are those of
Algorithm 1 in the report (backward pass lines 8-26, second forward pass lines 28-36).

It is ABA (RBDA Table 7.1) with v = 0, gravity 0 and τ replaced by the identity, one
column of τ per degree of freedom: F_i τ is the articulated bias force p^A_i and P_i τ the
spatial acceleration a_i. Like ``aba.py`` it runs in the world frame, where every X and X*
is the identity: articulated inertias and force sets of a subtree add up directly.

F_i (6 × nv force set) and P_i (6 × nv motion set) share one slice per body of the
workspace's ``force_sets`` (nbodies, nv, 6), column j of the set being ``FP[i, j, :]`` (48
contiguous bytes): F_i is last read in the backward pass, P_i first written in the forward
pass. F_i starts at 0 (report line 5, "F_i = 0" in the first forward pass), but the
columns of subtree(i) that the backward pass adds to F_λ(i) (corrected line 14) receive no
other child's term, the subtrees of the children being disjoint, and F_i's own column is
never read (line 12 reads its subtree's): so each write is an assignment and F is never
cleared, nor the array zeroed between calls. The backward pass only touches the columns of
subtree(i) (a contiguous range of v indices in DFS order, ``packed[i, P_VEND]`` its end);
the second forward pass fills row i of the upper triangle, columns idx_v(i) .. nv-1, since
M⁻¹ couples i to every joint sharing an ancestor with it: with a fixed base, those of its
own tree, the rest of the row being zero (``tree_end``). The lower triangle is mirrored at
the end.

The free-flyer root (S = Ad(oM), 6 × 6) has D = Sᵀ I^A S, so D⁻¹ Sᵀ = S⁻¹ (I^A)⁻¹:
its rows of M⁻¹ come from a 6 × 6 SPD (Cholesky) solve with I^A, after which S⁻¹ maps the
world-frame result to the base frame.
"""
from .._jit import f64_1d, f64_2d, f64_3d, f64_2d_ro, helper, int64, kernel
from ..model.layout import P_IV, P_PARENT, P_THETA, P_VEND, W_DINV, W_IA, W_OM, W_OS, W_U
from ..model.spatial import dot6, inertia_act, load10, load6, scale6
from ..model.matrix6 import mat6_cholesky_solve, mat6_set_inertia
from ..model.se3 import se3_load, se3_store, store6
from .aba import articulated_inertia_step, bias_force_step, dof_factor
from .common import (INPUT_STRIDED, OUTPUT_REFUSED, apart, configuration_status, mirror_upper,
                     model_sizes, placement_step, plain, writeable_matrix)
from .joints import (UNIT_MOTIONS, ZERO6, joint_force_in_world, joint_inv_motion, joint_nv,
                     joint_spans_all_motions, subspace_column)
from .entries import declare


@helper
def load_column6(X, i, j):
    """Column j of the set X[i] (stored as X[i, j, 0:6]) as a tuple."""
    return X[i, j, 0], X[i, j, 1], X[i, j, 2], X[i, j, 3], X[i, j, 4], X[i, j, 5]


@helper
def store_column6(X, i, j, m):
    for r in range(6):
        X[i, j, r] = m[r]


@helper
def free_flyer_root_rows(packed, ws, FP, Minv, i):
    """
    Run lines 9-12 and 32 for the free-flyer root i, given the Cholesky factor of its I^A.

    S = Ad(oM), so D⁻¹ Sᵀ = S⁻¹ (I^A)⁻¹, a 6×6 SPD solve in the world frame, then S⁻¹ maps
    the result to the base frame. P_i = S M⁻¹[i, :] (line 32: the root has no parent).
    """
    iv = int(packed[i, P_IV])
    oM = se3_load(ws, i, W_OM)
    for k in range(6):                     # M⁻¹[i, i] = D⁻¹ = S⁻¹ (I^A)⁻¹ S⁻ᵀ (line 11)
        a = mat6_cholesky_solve(ws, i, W_IA,
                                joint_force_in_world(packed, i, oM, UNIT_MOTIONS[k]))
        a_joint = joint_inv_motion(packed, i, oM, a)
        for r in range(6):
            Minv[iv + r, iv + k] = a_joint[r]
        store_column6(FP, i, iv + k, a)
    for j in range(iv + 6, int(packed[i, P_VEND])):   # M⁻¹[i, subtree] = -D⁻¹ Sᵀ F_i (l. 12)
        a = mat6_cholesky_solve(ws, i, W_IA, load_column6(FP, i, j))
        a_joint = joint_inv_motion(packed, i, oM, a)
        for r in range(6):
            Minv[iv + r, j] = -a_joint[r]
        store_column6(FP, i, j, scale6(-1.0, a))


@helper
def articulated_and_minv_backward_pass(packed, ws, FP, Minv, tau):
    """
    Run ABA pass 2 and lines 11-14 together: one I^A, U, D⁻¹ per body serves both.

    What ``aba_derivatives`` and ``compute_all`` share (``bias_force_step`` skips the
    free-flyer root, whose forces ABA pass 3 solves with its I^A).
    """
    for i in range(model_sizes(packed)[0] - 1, -1, -1):
        U, Dinv = articulated_inertia_step(packed, ws, i)
        bias_force_step(packed, ws, tau, i, U, Dinv)
        minv_backward_step(packed, ws, FP, Minv, i, U, Dinv)


@helper
def minv_backward_step(packed, ws, FP, Minv, i, U, Dinv):
    """Lines 11-14 (corrected line 14) for body i, after ``articulated_inertia_step``."""
    if joint_nv(packed, i) > 1:             # the commonest, 1 dof, tested once
        if joint_spans_all_motions(packed, i):
            free_flyer_root_rows(packed, ws, FP, Minv, i)
            return
        later_dofs_backward(packed, ws, FP, Minv, i)
    lam = int(packed[i, P_PARENT])
    iv = int(packed[i, P_IV])
    oS = load6(ws, i, W_OS)
    Minv[iv, iv] = Dinv                    # line 11 (F_i[:, i] = 0: no -D⁻¹SᵀF term)
    # corrected line 14, F_λ[:, j] += F^a_i[:, j] (X* = 1), as an assignment: column j of
    # F_λ gets no other term (module docstring)
    if lam >= 0:
        for r in range(6):                 # column i: F^a_i[:, i] = U D⁻¹
            FP[lam, iv, r] = U[r] * Dinv
    for j in range(iv + 1, int(packed[i, P_VEND])):
        m = -Dinv * dot6(oS, load_column6(FP, i, j))     # line 12: -D⁻¹ Sᵀ F_i[:, j]
        Minv[iv, j] = m
        if lam >= 0:
            for r in range(6):             # F^a_i[:, j] = F_i[:, j] + U_i M⁻¹[i, j]
                FP[lam, j, r] = FP[i, j, r] + U[r] * m


@helper
def later_dofs_backward(packed, ws, FP, Minv, i):
    """
    Lines 11-14 for dofs n-1 … 1 of a multi-dof joint, a chain of 1-dof joints (``aba``).

    F of dof k is F_i's columns after the later dofs, updated in place in F_i: dof k's own
    column gets U_k D_k⁻¹, the columns after it F + U_k M⁻¹[k, j]. Dof 0 then runs as a
    1-dof joint on the result.
    """
    iv = int(packed[i, P_IV])
    vend = int(packed[i, P_VEND])
    oM = se3_load(ws, i, W_OM)
    for k in range(joint_nv(packed, i) - 1, 0, -1):
        U, Dinv = dof_factor(ws, i, k)
        S = subspace_column(packed, i, k, oM, ZERO6)
        d = iv + k
        Minv[d, d] = Dinv
        for j in range(d + 1, vend):
            m = -Dinv * dot6(S, load_column6(FP, i, j))
            Minv[d, j] = m
            for r in range(6):
                FP[i, j, r] += U[r] * m
        store_column6(FP, i, d, scale6(Dinv, U))


@helper
def later_dofs_forward(packed, ws, FP, Minv, i, end, nv):
    """
    Lines 28-36 for dofs 1 … n-1 of a multi-dof joint: P of dof k - 1 is in P_i, in place.

    ``end``: :func:`tree_end` of body i; its rows are zero past it.
    """
    iv = int(packed[i, P_IV])
    vend = int(packed[i, P_VEND])
    oM = se3_load(ws, i, W_OM)
    for k in range(1, joint_nv(packed, i)):
        U, Dinv = dof_factor(ws, i, k)
        S = subspace_column(packed, i, k, oM, ZERO6)
        d = iv + k
        for j in range(d, end):
            Pl = load_column6(FP, i, j)
            m = -Dinv * dot6(U, Pl)
            if j < vend:
                m += Minv[d, j]
            Minv[d, j] = m
            for r in range(6):
                FP[i, j, r] = S[r] * m + Pl[r]
        for j in range(end, nv):
            Minv[d, j] = 0.0


@helper
def tree_end(packed, i, nv):
    """
    Return the end of the v range of the tree that holds body i: M⁻¹ is zero past it.

    A fixed base's limbs hang from the world as separate trees (a forest; in DFS order each
    tree's dofs are one range, its root's subtree): M is block diagonal by tree, and so is
    M⁻¹. The forward pass carries P_i over the columns of its own tree only: the others'
    would be zeros.
    """
    if int(packed[0, P_VEND]) == nv:       # one tree (a floating base): every column
        return nv
    root = i
    while int(packed[root, P_PARENT]) >= 0:
        root = int(packed[root, P_PARENT])
    return int(packed[root, P_VEND])


@helper
def minv_forward_step(packed, ws, FP, Minv, i, nv):
    """
    Lines 28-36 for body i: row i of the upper triangle, columns idx_v(i) .. nv - 1.

    Carried over the columns of i's own tree (:func:`tree_end`); the row is zero past it.
    """
    lam = int(packed[i, P_PARENT])
    iv = int(packed[i, P_IV])
    vend = int(packed[i, P_VEND])
    nvi = joint_nv(packed, i)
    if lam < 0:
        # a root: lines 30-34 reduce to P_i = S M⁻¹[i, :] (line 32); outside its subtree
        # (another tree of a forest) its rows are zero, and its P_i is not read there. The
        # free-flyer root set P_i above.
        for j in range(vend, nv):
            for k in range(nvi):
                Minv[iv + k, j] = 0.0
        if not joint_spans_all_motions(packed, i):
            oS = load6(ws, i, W_OS)
            for j in range(iv, vend):
                store_column6(FP, i, j, scale6(Minv[iv, j], oS))
            if nvi > 1:
                later_dofs_forward(packed, ws, FP, Minv, i, vend, nv)
        return
    end = tree_end(packed, i, nv)
    oS = load6(ws, i, W_OS)
    U = load6(ws, i, W_U)
    Dinv = ws[i, W_DINV]
    for j in range(iv, end):
        Pl = load_column6(FP, lam, j)
        m = -Dinv * dot6(U, Pl)            # line 30 (outside the subtree: only this term)
        if j < vend:
            m += Minv[iv, j]
        Minv[iv, j] = m
        for r in range(6):                 # lines 32-34: P_i[:, j] = S_i M⁻¹[i, j] + P_λ
            FP[i, j, r] = oS[r] * m + Pl[r]
    for j in range(end, nv):               # another tree's columns
        Minv[iv, j] = 0.0
    if nvi > 1:
        later_dofs_forward(packed, ws, FP, Minv, i, end, nv)


@kernel(int64(f64_2d_ro, f64_2d, f64_3d, f64_1d, f64_2d))
def minv_kernel(packed, ws, FP, q, Minv):
    if not plain(q):
        return INPUT_STRIDED
    nb, nv, status = configuration_status(packed, q)
    if not (writeable_matrix(Minv, nv, nv) and apart(Minv, q)):
        return OUTPUT_REFUSED
    if status:
        return status
    for i in range(nb):                    # first forward pass (lines 1-6)
        oM, oS = placement_step(packed, ws, q, i)
        oI = inertia_act(oM, load10(packed, i, P_THETA))
        se3_store(ws, i, W_OM, oM)
        store6(ws, i, W_OS, oS)
        mat6_set_inertia(ws, i, W_IA, oI)
    for i in range(nb - 1, -1, -1):        # backward pass (lines 8-26), leaves to root
        U, Dinv = articulated_inertia_step(packed, ws, i)
        minv_backward_step(packed, ws, FP, Minv, i, U, Dinv)
    for i in range(nb):                    # second forward pass (lines 28-36)
        minv_forward_step(packed, ws, FP, Minv, i, nv)
    return mirror_upper(Minv)


@declare
def minv(model, q, *, data=None):
    """
    Return the inverse of the joint-space inertia matrix, M(q)⁻¹, full and symmetric (nv × nv).

    Computed directly by a three-pass recursion (Carpentier 2018) without forming or factorizing
    M: Pinocchio's ``computeMinverse(model, data, q)``, symmetrized.

    Parameters
    ----------
    model, q, data : ...
        Shared by the calls: ``rbd_ros.algorithms.entries.SHARED_PARAMETERS``.

    Returns
    -------
    Minv : numpy.ndarray, shape ``(nv, nv)``
        M(q)⁻¹, in the inverse units of :func:`rbd_ros.crba`'s M.

    Raises
    ------
    ValueError
        ... the shared refusals: ``rbd_ros.algorithms.entries.SHARED_REFUSALS``.

    Notes
    -----
    With mimic joints, the inverse of the reduced M_r from its Cholesky factor
    (``coupled.py`` says why the recursion cannot carry the coupling).

    """
