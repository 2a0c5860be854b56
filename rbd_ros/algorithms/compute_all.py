"""Everything a controller needs at one state, in one kernel sharing the passes:

    τ = ID(q, q̇, a)              RNEA (RSS 2018 seed, Algorithm 1), a = 0 when not given
    q̈ = FD(q, q̇, τ_in)           ABA (RBDA Table 7.1)
    M⁻¹(q)                        Carpentier 2018, Algorithm 1 (corrected, see ``minv.py``)
    ∂ID/∂q, ∂ID/∂q̇ at (q, q̇, a)   Algorithms 2-3 of the seed (see ``rnea_derivatives.py``)
    ∂FD/∂q, ∂FD/∂q̇ at (q, q̇, τ_in) = -M⁻¹ ∂ID/∂u at (q, q̇, q̈)    (seed, Eq. 24)

Calling the five functions in turn repeats most of the work; here each piece is computed
once (all in the world frame, as the other kernels):

* pass 1 (forward): placements, world S, velocities, world body inertias I_i, the bias
  forces v ×* I v - f_ext, the velocity-only per-dof terms dV, dW (A2 l.3, l.5) and the
  per-body matrices B_i (A2 l.6) serve every algorithm; the RNEA at ``a`` (A1 l.5-11) and its
  dA columns (A2 l.5) ride along.
* pass 2 (backward): ABA's articulated inertias I^A, U = I^A S and D (Table 7.1 pass 2)
  are exactly those of the M⁻¹ backward pass (report lines 8-16), so that pass runs in the
  same loop on the same I^A, U, D⁻¹ and one rank-1 update per body serves both. The
  free-flyer root's I^A is factorized once (Cholesky) for M⁻¹ and ABA's root solve.
* pass 3 (forward): ABA's accelerations (pass 3) with M⁻¹'s second forward pass (report
  lines 28-36); the accelerations at q̈ give the dA columns at q̈ and the body forces at q̈.
* pass 4 (backward): Algorithm 3 once for both accelerations. ∂τ/∂q̇ does not depend on
  the acceleration (A2 l.5 for u = q̇ and the B, I^c terms), so ∂ID/∂q̇ at q̈ is dtau_dv
  itself; only the dA columns and the subtree forces F differ between a and q̈, so
  ∂ID/∂q at both shares Y = I^c S, Z = (B^c)ᵀ S and B^c dV.
* Eq. 24: two nv × nv × nv products with -M⁻¹, through BLAS (``np.dot`` inside numba calls
  SciPy's dgemm): 4 µs for both at nv = 38, against 18 µs for loops.
"""
from typing import NamedTuple

import numpy as np

from .. import _checks
from .._jit import f64_1d, f64_2d, f64_3d, f64_2d_ro, helper, int64, kernel
from ..model import (D_DA, D_DV, D_DW, D_S, FREE_FLYER, P_IV, P_PARENT, P_THETA, P_TYPE,
                     P_VEND, W_DINV, W_IA, W_OA, W_OC, W_OF, W_OI, W_OM, W_OS, W_OV, W_U,
                     W_UU, X_COLS, X_FA, X_FQ)
from ..spatial import (act_force, act_inv_force, act_inv_motion, act_motion, add6, add10, axpy6,
                       cross_force, cross_motion, dot6, inertia_act, inertia_apply, load6,
                       load6_vector, load10, mat6_add_sub_rank1, mat6_apply,
                       mat6_apply_transpose, mat6_cholesky, mat6_cholesky_solve,
                       mat6_set_inertia, scale6, se3_load, se3_store, store6, store10, sub6)
from .common import check_configuration, check_forces, check_vector, jcalc, model_sizes, set_world
from .aba import aba_kernel
from .crba import UNIT_MOTIONS
from .minv import free_flyer_root_rows, load_column6, store_column6
from .rnea import rnea_kernel
from .rnea_derivatives import store_dof_columns, store_inertia_variation



class Dynamics(NamedTuple):
    """Result of :func:`compute_all` (arrays share one block of memory)."""
    tau: np.ndarray        # ID(q, v, a)
    qdd: np.ndarray        # FD(q, v, tau_input)
    Minv: np.ndarray       # M(q)⁻¹, full and symmetric
    dtau_dq: np.ndarray    # ∂ID/∂q at (q, v, a)
    dtau_dv: np.ndarray    # ∂ID/∂q̇ at (q, v, a) (the same at any acceleration)
    dqdd_dq: np.ndarray    # ∂FD/∂q at (q, v, tau_input)
    dqdd_dv: np.ndarray    # ∂FD/∂q̇ at (q, v, tau_input)


@helper
def _passes(packed, ws, dws, bws, FP, X, XD, stacked, q, v, tau_in, a, fext, out):
    """Passes 1-4 (module docstring). ``out`` rows: M⁻¹ [0, nv), ∂τ/∂q [nv, 2nv),
    ∂τ/∂q̇ [2nv, 3nv), then (filled by the caller) ∂q̈/∂q, ∂q̈/∂q̇, then τ and q̈.
    ``stacked`` rows: ∂ID/∂q at q̈ [0, nv), -M⁻¹ [nv, 2nv). Returns a status code."""
    nb, nq, nv = model_sizes(packed)
    status = check_configuration(packed, q, nq, 1) or check_vector(v, nv, 2)
    status = status or check_vector(tau_in, nv, 3) or check_vector(a, nv, 4)
    status = status or check_forces(fext, nb, 5)
    if status:
        return status
    Minv = out[0:nv]
    dtau_dq = out[nv:2 * nv]
    dtau_dv = out[2 * nv:3 * nv]
    tau = out[5 * nv]
    qdd = out[5 * nv + 1]
    G = stacked[0:nv]                 # ∂ID/∂q at q̈
    nMinv = stacked[nv:2 * nv]        # -M⁻¹
    set_world(packed, ws)                                         # A1 l.2-3: a_0 = -g
    # ---- pass 1, roots to leaves: everything that does not depend on τ_in or q̈ ---------
    for i in range(nb):
        lam = int(packed[i, P_PARENT])
        iv = int(packed[i, P_IV])
        v_parent = load6(ws, lam, W_OV)
        a_parent = load6(ws, lam, W_OA)
        oM, oS = jcalc(packed, q, i, se3_load(ws, lam, W_OM))      # A1 l.6-7, A2 l.1-2
        if int(packed[i, P_TYPE]) == FREE_FLYER:
            # S = Ad(oM): the base twist and acceleration are given in the base frame
            vJ = act_motion(oM, load6_vector(v, iv))
            ov = add6(v_parent, vJ)
            oa = add6(add6(a_parent, act_motion(oM, load6_vector(a, iv))),
                      cross_motion(v_parent, vJ))
            for k in range(6):                                    # A2 l.3, l.5: six columns
                store_dof_columns(dws, iv + k, act_motion(oM, UNIT_MOTIONS[k]), v_parent,
                                  a_parent, ov)
        else:
            vJ = scale6(v[iv], oS)
            ov = add6(v_parent, vJ)                               # A1 l.8
            oa = add6(axpy6(a[iv], oS, a_parent), cross_motion(v_parent, vJ))   # A1 l.9
            store_dof_columns(dws, iv, oS, v_parent, a_parent, ov)               # A2 l.3, l.5
        oI = inertia_act(oM, load10(packed, i, P_THETA))
        oh = inertia_apply(oI, ov)                                # A2 l.4
        bias = cross_force(ov, oh)                                # v ×* I v (A1 l.10-11)
        if fext.shape[0]:
            bias = sub6(bias, act_force(oM, load6(fext, i, 0)))
        se3_store(ws, i, W_OM, oM)
        store6(ws, i, W_OS, oS)
        store6(ws, i, W_OV, ov)
        store6(ws, i, W_OA, oa)                                   # at a; q̈ in pass 3
        store6(ws, i, W_OC, cross_motion(v_parent, vJ))           # ABA's c = v_λ × v_J
        store6(ws, i, W_OF, bias)                                 # ABA's p^A (pass 1)
        store6(X, i, X_FA, add6(inertia_apply(oI, oa), bias))     # A1 l.10-11 at a
        store6(X, i, X_FQ, bias)
        store10(ws, i, W_OI, oI)                                  # I^c_i: summed in pass 4
        mat6_set_inertia(ws, i, W_IA, oI)                         # I^A_i = I_i (report l.4)
        store_inertia_variation(bws, i, oI, ov, oh)               # A2 l.6: B_i
        for j in range(iv, int(packed[i, P_VEND])):               # report l.5: F_i = 0
            for r in range(6):
                FP[i, j, r] = 0.0
    # ---- pass 2, leaves to root: ABA pass 2 and the M⁻¹ backward pass (lines 8-26) ------
    for i in range(nb - 1, -1, -1):
        lam = int(packed[i, P_PARENT])
        iv = int(packed[i, P_IV])
        vend = int(packed[i, P_VEND])
        if int(packed[i, P_TYPE]) == FREE_FLYER:
            # the root, S = Ad(oM): one factorization of I^A serves the M⁻¹ rows here
            # (lines 9-12) and ABA's root solve in pass 3
            mat6_cholesky(ws, i, W_IA)
            free_flyer_root_rows(ws, FP, Minv, i, iv, vend)
            continue
        oS = load6(ws, i, W_OS)
        U = mat6_apply(ws, i, W_IA, oS)        # Table 7.1 / report l.9: U = I^A S
        Dinv = 1.0 / dot6(oS, U)               # report l.10: D = Sᵀ U
        pA = load6(ws, i, W_OF)
        u = tau_in[iv] - dot6(oS, pA)          # Table 7.1: u = τ - Sᵀ p^A
        store6(ws, i, W_U, U)
        ws[i, W_DINV] = Dinv
        ws[i, W_UU] = u
        Minv[iv, iv] = Dinv                    # report l.11
        if lam >= 0:
            # ABA: p^a = p^A + I^a c + U D⁻¹ u, I^a = I^A - U D⁻¹ Uᵀ, added to the parent
            c = load6(ws, i, W_OC)
            Ia_c = sub6(mat6_apply(ws, i, W_IA, c), scale6(Dinv * dot6(U, c), U))
            pa = add6(add6(pA, Ia_c), scale6(Dinv * u, U))
            store6(ws, lam, W_OF, add6(load6(ws, lam, W_OF), pa))
            # M⁻¹, corrected line 14 for column i: F^a_i[:, i] = U D⁻¹, added to F_λ
            for r in range(6):
                FP[lam, iv, r] += U[r] * Dinv
        for j in range(iv + 1, vend):
            s = 0.0                            # line 12: M⁻¹[i, j] = -D⁻¹ Sᵀ F_i[:, j]
            for r in range(6):
                s += oS[r] * FP[i, j, r]
            m = -Dinv * s
            Minv[iv, j] = m
            if lam >= 0:                       # corrected line 14
                for r in range(6):
                    FP[lam, j, r] += FP[i, j, r] + U[r] * m
        if lam >= 0:
            # lines 15-16 and ABA's I^A_λ += I^a, once for both
            mat6_add_sub_rank1(ws, lam, i, W_IA, U, Dinv)
    # ---- pass 3, root to leaves: ABA pass 3 and the M⁻¹ second forward pass (28-36) ---
    for i in range(nb):
        lam = int(packed[i, P_PARENT])
        iv = int(packed[i, P_IV])
        vend = int(packed[i, P_VEND])
        a_parent = load6(ws, lam, W_OA)        # already at q̈ (the world: -g)
        v_parent = load6(ws, lam, W_OV)
        a_in = add6(a_parent, load6(ws, i, W_OC))                 # a' = a_λ + c
        if int(packed[i, P_TYPE]) == FREE_FLYER:
            # ABA: I^A a = f_J - p^A with f_J = S^-T τ (I^A factorized in pass 2)
            oM = se3_load(ws, i, W_OM)
            f_joint = act_force(oM, load6_vector(tau_in, iv))
            oa = mat6_cholesky_solve(ws, i, W_IA, sub6(f_joint, load6(ws, i, W_OF)))
            a_local = act_inv_motion(oM, sub6(oa, a_in))
            for k in range(6):
                qdd[iv + k] = a_local[k]
            # M⁻¹ lines 30-34 reduce to P_i = S M⁻¹[i, :], set in pass 2 for the subtree;
            # the rest of its rows is zero (another tree of a forest)
            for j in range(vend, nv):
                for r in range(6):
                    Minv[iv + r, j] = 0.0
                    FP[i, j, r] = 0.0
        else:
            oS = load6(ws, i, W_OS)
            U = load6(ws, i, W_U)
            Dinv = ws[i, W_DINV]
            qdd_i = Dinv * (ws[i, W_UU] - dot6(U, a_in))
            qdd[iv] = qdd_i
            oa = axpy6(qdd_i, oS, a_in)
            if lam < 0:
                # M⁻¹ line 32 only: P_i = S_i M⁻¹[i, :]
                for j in range(vend, nv):
                    Minv[iv, j] = 0.0
                for j in range(iv, nv):
                    store_column6(FP, i, j, scale6(Minv[iv, j], oS))
            else:
                for j in range(iv, nv):
                    Pl = load_column6(FP, lam, j)
                    m = -Dinv * dot6(U, Pl)    # line 30 (outside the subtree: only this term)
                    if j < vend:
                        m += Minv[iv, j]
                    Minv[iv, j] = m
                    for r in range(6):         # lines 32-34: P_i = S_i M⁻¹[i, :] + P_λ
                        FP[i, j, r] = oS[r] * m + Pl[r]
        store6(ws, i, W_OA, oa)
        # A2 l.5 at q̈: dA_j = a_λ × S_j + v_λ × dV_j ; A1 l.10: f_i += I_i a_i at q̈
        nvi = 6 if int(packed[i, P_TYPE]) == FREE_FLYER else 1
        for k in range(iv, iv + nvi):
            store6(XD, k, 0, add6(cross_motion(a_parent, load6(dws, k, D_S)),
                                  cross_motion(v_parent, load6(dws, k, D_DV))))
        store6(X, i, X_FQ, add6(inertia_apply(load10(ws, i, W_OI), oa), load6(X, i, X_FQ)))
    for r in range(nv):                        # mirror M⁻¹'s upper triangle; -M⁻¹ for Eq. 24
        nMinv[r, r] = -Minv[r, r]
        for c in range(r):
            m = Minv[c, r]
            Minv[r, c] = m
            nMinv[r, c] = -m
            nMinv[c, r] = -m
    # ---- pass 4, leaves to root: A1 l.14-17 and Algorithm 3 at a and at q̈ ----------------
    for r in range(nv):
        for c in range(nv):
            dtau_dq[r, c] = 0.0
            dtau_dv[r, c] = 0.0
            G[r, c] = 0.0
    for i in range(nb - 1, -1, -1):
        Ic = load10(ws, i, W_OI)            # subtree sums are complete: children came first
        Fa = load6(X, i, X_FA)
        Fq = load6(X, i, X_FQ)
        iv = int(packed[i, P_IV])
        nvi = 6 if int(packed[i, P_TYPE]) == FREE_FLYER else 1
        if nvi == 6:                                               # A1 l.15: τ = Sᵀ f
            f_local = act_inv_force(se3_load(ws, i, W_OM), Fa)
            for k in range(6):
                tau[iv + k] = f_local[k]
        else:
            tau[iv] = dot6(load6(ws, i, W_OS), Fa)
        for c in range(iv, iv + nvi):
            S = load6(dws, c, D_S)
            Y = inertia_apply(Ic, S)                               # I^c S
            Z = mat6_apply_transpose(bws, i, 0, S)                 # (B^c)ᵀ S
            BdV = mat6_apply(bws, i, 0, load6(dws, c, D_DV))
            # A3 l.3 summed over the subtree (S ×* F from Eq. 14), at a and at q̈
            dFdq_a = add6(add6(cross_force(S, Fa), inertia_apply(Ic, load6(dws, c, D_DA))), BdV)
            dFdq_q = add6(add6(cross_force(S, Fq), inertia_apply(Ic, load6(XD, c, 0))), BdV)
            dFdv = add6(mat6_apply(bws, i, 0, S), inertia_apply(Ic, load6(dws, c, D_DW)))
            j = i
            while j >= 0:                                          # i and its ancestors
                jv = int(packed[j, P_IV])
                nvj = 6 if int(packed[j, P_TYPE]) == FREE_FLYER else 1
                for r in range(jv, jv + nvj):
                    Sr = load6(dws, r, D_S)
                    # row c, column r (r ⪯ c): A3 l.1 with ∂S_c/∂q_r = S_r × S_c
                    zdv = dot6(Z, load6(dws, r, D_DV))
                    dtau_dq[c, r] = dot6(Y, load6(dws, r, D_DA)) + zdv
                    G[c, r] = dot6(Y, load6(XD, r, 0)) + zdv
                    dtau_dv[c, r] = dot6(Z, Sr) + dot6(Y, load6(dws, r, D_DW))
                    if j != i:
                        # row r, column c (r ≺ c): A3 l.1 with S_r independent of q_c
                        dtau_dq[r, c] = dot6(Sr, dFdq_a)
                        G[r, c] = dot6(Sr, dFdq_q)
                        dtau_dv[r, c] = dot6(Sr, dFdv)
                j = int(packed[j, P_PARENT])
        lam = int(packed[i, P_PARENT])
        if lam >= 0:                                               # A1 l.17, A3 l.2-3
            store10(ws, lam, W_OI, add10(load10(ws, lam, W_OI), Ic))
            for k in range(X_COLS):
                X[lam, k] += X[i, k]
            for k in range(36):
                bws[lam, k] += bws[i, k]
    return 0


_SIGNATURE = int64(f64_2d_ro, f64_2d, f64_2d, f64_2d, f64_3d, f64_2d, f64_2d, f64_2d, f64_1d,
                   f64_1d, f64_1d, f64_1d, f64_2d, f64_2d)

@kernel(_SIGNATURE)
def compute_all_kernel(packed, ws, dws, bws, FP, X, XD, stacked, q, v, tau_in, a, fext, out):
    """See :func:`compute_all`."""
    status = _passes(packed, ws, dws, bws, FP, X, XD, stacked, q, v, tau_in, a, fext, out)
    nv = out.shape[1]
    if status or nv == 0:
        return status
    # Eq. 24: ∂FD/∂q = -M⁻¹ ∂ID/∂q |q̈ ;  ∂FD/∂q̇ = -M⁻¹ ∂ID/∂q̇ (= dtau_dv, see above)
    np.dot(stacked[nv:2 * nv], stacked[0:nv], out[3 * nv:4 * nv])
    np.dot(stacked[nv:2 * nv], out[2 * nv:3 * nv], out[4 * nv:5 * nv])
    return 0


_NAMES = ("q", "v", "tau", "a", "fext")


def compute_all(model, q, v, *, a=None, tau, fext=None, data=None):
    """τ, q̈, M⁻¹ and the derivatives of inverse and forward dynamics at one state.

    Returns ``Dynamics(tau, qdd, Minv, dtau_dq, dtau_dv, dqdd_dq, dqdd_dv)`` where
    ``tau`` = ID(q, v, a) (a = 0 when None: gravity and Coriolis compensation),
    ``qdd`` = FD(q, v, tau) for the given ``tau``, ``Minv`` = M(q)⁻¹, ``dtau_dq``,
    ``dtau_dv`` = ∂ID/∂q, ∂ID/∂q̇ at (q, v, a) and ``dqdd_dq``, ``dqdd_dv`` = ∂FD/∂q, ∂FD/∂q̇
    at (q, v, tau). Each equals the separate function's result (:func:`rbd_ros.rnea`,
    :func:`rbd_ros.aba`, :func:`rbd_ros.minv`, :func:`rbd_ros.rnea_derivatives`,
    :func:`rbd_ros.aba_derivatives`) up to rounding, for about the cost of
    ``aba_derivatives`` alone. ``fext`` (nbodies, 6) applies to both ID and FD, as for
    :func:`rbd_ros.rnea`. ∂/∂q is taken in the tangent space (see ``rnea_derivatives``).
    The arrays are views of one block, valid until the caller drops them (not reused).
    """
    nv = model.nv
    data = _checks.workspace(model, data)
    X, XD, stacked = data.all_body, data.all_dof, data.all_stacked
    out = np.empty((5 * nv + 2, nv))
    if a is None:
        a = data.zeros_v
    if fext is None:
        fext = data.no_fext
    try:
        status = compute_all_kernel(model.packed, data.body, data.dof, data.body_matrix,
                                    data.force_sets, X, XD, stacked, q, v, tau, a, fext, out)
    except (TypeError, ValueError):   # not float64 C arrays (or an empty list): convert once
        q, v, tau, a = _checks.vectors(_NAMES, q, v, tau, a)
        fext = _checks.matrix(fext, "fext")
        status = compute_all_kernel(model.packed, data.body, data.dof, data.body_matrix,
                                    data.force_sets, X, XD, stacked, q, v, tau, a, fext, out)
    if status:
        raise _checks.input_error("compute_all", status, model, _NAMES, (q, v, tau, a, fext))
    return Dynamics(out[5 * nv], out[5 * nv + 1], out[0:nv], out[nv:2 * nv],
                    out[2 * nv:3 * nv], out[3 * nv:4 * nv], out[4 * nv:5 * nv])


@kernel(int64(f64_2d_ro, f64_2d, f64_1d, f64_1d, f64_1d, f64_1d, f64_2d, f64_1d, f64_1d))
def inverse_and_forward_kernel(packed, ws, q, v, a, tau_in, fext, tau, qdd):
    # statuses name an argument by position (* 4): renumber to this kernel's (q, v, a, tau, fext)
    status = rnea_kernel(packed, ws, q, v, a, fext, tau)
    if status:
        position = status // 4
        return (5 if position == 4 else position) * 4 + status % 4
    status = aba_kernel(packed, ws, q, v, tau_in, fext, qdd)
    if status:
        position = status // 4
        return (position + 1 if position >= 3 else position) * 4 + status % 4
    return 0


def inverse_and_forward_dynamics(model, q, v, *, a, tau, fext=None, data=None):
    """(ID(q, v, a), FD(q, v, tau)) in one call: what a node needs when it publishes torques
    and accelerations but no matrices (cheaper than :func:`compute_all`)."""
    nv = model.nv
    out = np.empty((2, nv))
    data = _checks.workspace(model, data)
    if fext is None:
        fext = data.no_fext
    names = ("q", "v", "a", "tau", "fext")
    try:
        status = inverse_and_forward_kernel(model.packed, data.body, q, v, a, tau, fext,
                                            out[0], out[1])
    except (TypeError, ValueError):   # not float64 C arrays: convert once
        q, v, a, tau = _checks.vectors(names, q, v, a, tau)
        fext = _checks.matrix(fext, "fext")
        status = inverse_and_forward_kernel(model.packed, data.body, q, v, a, tau, fext,
                                            out[0], out[1])
    if status:
        raise _checks.input_error("inverse_and_forward_dynamics", status, model, names,
                                  (q, v, a, tau, fext))
    return out[0], out[1]
