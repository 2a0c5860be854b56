"""
Every algorithm on the reduced system of a model with mimic joints (see ``mimic.py``).

Each kernel checks the reduced inputs, expands them to the full tree (q = f(q_r),
v = G v_r, a = G a_r), runs the tree's own kernel (RNEA, CRBA, the RNEA derivatives, the
regressor) on the full state and reduces its result with G. That is exact for inverse
dynamics, M, the regressor and the RNEA derivatives (``mimic.py`` gives the identities).

Forward dynamics and M⁻¹ are not: the articulated-body recursion (ABA, RBDA Table 7.1) and
Carpentier's M⁻¹ recursion (the seed report, Algorithm 1) eliminate one joint at a time
from the leaves up, which assumes every joint's acceleration is free. A holonomic coupling
between two joints (a follower on another branch than its leader, or below it) ties
accelerations across that elimination, and no per-body articulated inertia can carry it
exactly. So the reduced system is solved directly, exactly:

    q̈_r = M_r⁻¹ (τ_r − Gᵀ b),   b = RNEA(q, v, 0),  M_r = Gᵀ CRBA(q) G,

with a dense Cholesky factorization of the nv_r × nv_r M_r (``mimic.cholesky``), M_r⁻¹
from the same factor, and the forward-dynamics derivatives from Eq. 24 of the RSS 2018 seed
on the reduced system: ∂q̈_r/∂x = −M_r⁻¹ ∂τ_r/∂x at a_r = q̈_r.

Scratch (the workspace's, allocated once; ``Data``): ``qf`` (nq_full), ``VF`` (3, nv_full):
v, a and τ of the full tree; ``MF`` (3, nv_full, nv_full); ``R`` (3, nv_r, nv_r): M_r's
factor and reduced products; ``VR`` (3, nv_r); ``YF`` (nv_full, 10·nbodies).
"""

from .._blas import gemm
from .._jit import f64_1d, f64_2d, f64_3d, f64_2d_ro, helper, int64, kernel
from .common import (NOT_FINITE_RESULT, check_configuration, check_vector, matrix_status,
                     vector_status)
from .crba import crba_kernel
from .joints import base_sizes, joint_integrate, joint_tangent
from .mimic import (check_state, cholesky, cholesky_inverse, cholesky_solve, expand_configuration,
                    expand_motion, expand_state, reduce_force, reduce_matrix, reduce_rows,
                    reduced_sizes)
from .regressor import joint_torque_regressor_kernel
from .rnea import rnea_kernel
from .rnea_derivatives import rnea_derivatives_kernel

_STATE = (f64_2d_ro, f64_2d_ro, f64_2d)                  # packed, table, ws


@kernel(int64(*_STATE, f64_1d, f64_2d, f64_1d, f64_1d, f64_1d, f64_2d, f64_1d))
def coupled_rnea_kernel(packed, table, ws, qf, VF, q, v, a, fext, tau):
    """τ_r = Gᵀ RNEA(f(q), G v, G a)."""
    status = check_state(packed, table, q, v, a, fext, 4)
    status = status or expand_state(table, q, v, a, qf, VF, True)
    status = status or rnea_kernel(packed, ws, qf, VF[0], VF[1], fext, VF[2])
    if status:
        return status
    reduce_force(table, qf.shape[0], VF[2], tau)
    return vector_status(tau)


@kernel(int64(*_STATE, f64_1d, f64_3d, f64_1d, f64_2d))
def coupled_crba_kernel(packed, table, ws, qf, MF, q, M):
    """M_r = Gᵀ CRBA(f(q)) G."""
    status = check_configuration(packed, q, reduced_sizes(table)[0], 1)
    if status:
        return status
    expand_configuration(table, q, qf)
    status = vector_status(qf) or crba_kernel(packed, ws, qf, MF[0])
    if status:
        return status
    reduce_matrix(table, qf.shape[0], MF[0], M)
    return matrix_status(M)


@helper
def solve_forward(L, a, tau_in, tau, qdd):
    """q̈ = a + M_r⁻¹ (τ_in − τ) with τ = ID_r(a) and L the Cholesky factor of M_r."""
    for k in range(qdd.shape[0]):
        qdd[k] = tau_in[k] - tau[k]
    cholesky_solve(L, qdd)
    for k in range(qdd.shape[0]):
        qdd[k] += a[k]
    return vector_status(qdd)


@helper
def inverse_and_forward_step(packed, table, ws, qf, VF, MF, L, a, tau_in, fext, tau, qdd):
    """
    Set τ = ID_r(q, v, a), L = chol(M_r) and q̈ = FD_r(q, v, τ_in) = a + M_r⁻¹ (τ_in − τ).

    The full state (qf, VF[0] = G v, VF[1] = G a) is expanded already.
    """
    nqf = qf.shape[0]
    status = rnea_kernel(packed, ws, qf, VF[0], VF[1], fext, VF[2])
    status = status or crba_kernel(packed, ws, qf, MF[0])
    if status:
        return status
    reduce_force(table, nqf, VF[2], tau)
    reduce_matrix(table, nqf, MF[0], L)
    if not cholesky(L):
        return NOT_FINITE_RESULT
    return solve_forward(L, a, tau_in, tau, qdd)


_FORWARD = (f64_1d, f64_2d, f64_3d, f64_3d, f64_2d)     # qf, VF, MF, R, VR


@kernel(int64(*_STATE, *_FORWARD, f64_1d, f64_1d, f64_1d, f64_2d, f64_1d))
def coupled_aba_kernel(packed, table, ws, qf, VF, MF, R, VR, q, v, tau, fext, qdd):
    """q̈_r = M_r⁻¹ (τ_r − Gᵀ RNEA(q, v, 0)); leaves chol(M_r) in R[0]."""
    status = check_state(packed, table, q, v, tau, fext, 4)
    status = status or expand_state(table, q, v, tau, qf, VF, False)     # a = 0: the bias
    if status:
        return status
    zero = VR[0]
    for k in range(zero.shape[0]):
        zero[k] = 0.0
    return inverse_and_forward_step(packed, table, ws, qf, VF, MF, R[0], zero, tau, fext,
                                    VR[1], qdd)


@kernel(int64(*_STATE, f64_1d, f64_3d, f64_3d, f64_1d, f64_2d))
def coupled_minv_kernel(packed, table, ws, qf, MF, R, q, Minv):
    """M_r⁻¹ from the Cholesky factor of M_r."""
    status = coupled_crba_kernel(packed, table, ws, qf, MF, q, R[0])
    if status:
        return status
    if not cholesky(R[0]):
        return NOT_FINITE_RESULT
    return cholesky_inverse(R[0], Minv)


_DERIVATIVES = (f64_2d, f64_2d)                          # dws, bws


@kernel(int64(*_STATE, *_DERIVATIVES, f64_1d, f64_2d, f64_3d, f64_1d, f64_1d, f64_1d, f64_2d,
              f64_2d, f64_2d, f64_2d))
def coupled_rnea_derivatives_kernel(packed, table, ws, dws, bws, qf, VF, MF, q, v, a, fext,
                                    dtau_dq, dtau_dv, M):
    """Gᵀ (∂τ/∂q) G, Gᵀ (∂τ/∂v) G and Gᵀ M G at the full state."""
    status = check_state(packed, table, q, v, a, fext, 4)
    status = status or expand_state(table, q, v, a, qf, VF, True)
    status = status or rnea_derivatives_kernel(packed, ws, dws, bws, qf, VF[0], VF[1], fext,
                                               MF[0], MF[1], MF[2])
    if status:
        return status
    nqf = qf.shape[0]
    reduce_matrix(table, nqf, MF[0], dtau_dq)
    reduce_matrix(table, nqf, MF[1], dtau_dv)
    reduce_matrix(table, nqf, MF[2], M)
    return matrix_status(dtau_dq) or matrix_status(dtau_dv) or matrix_status(M)


@helper
def forward_derivatives(packed, table, ws, dws, bws, qf, VF, MF, R, fext, qdd, Minv, dq, dv):
    """
    Set dq, dv = −M_r⁻¹ Gᵀ (∂ID/∂q, ∂ID/∂v) G at q̈ (seed Eq. 24) and Minv = M_r⁻¹.

    R[0] holds chol(M_r) and the full state is expanded (qf, VF[0]); R[1], R[2] are
    overwritten.
    """
    nqf = qf.shape[0]
    expand_motion(table, nqf, qdd, VF[1])
    status = rnea_derivatives_kernel(packed, ws, dws, bws, qf, VF[0], VF[1], fext, MF[0],
                                     MF[1], MF[2])
    if status:
        return status
    cholesky_inverse(R[0], Minv)
    reduce_matrix(table, nqf, MF[0], R[1])
    reduce_matrix(table, nqf, MF[1], R[2])
    gemm(-1.0, Minv, R[1], dq)                # BLAS dgemm, as aba_derivatives
    gemm(-1.0, Minv, R[2], dv)
    return matrix_status(dq) or matrix_status(dv) or matrix_status(Minv)


@kernel(int64(*_STATE, *_DERIVATIVES, *_FORWARD, f64_1d, f64_1d, f64_1d, f64_2d, f64_2d,
              f64_2d, f64_2d))
def coupled_aba_derivatives_kernel(packed, table, ws, dws, bws, qf, VF, MF, R, VR, q, v, tau,
                                   fext, dqdd_dq, dqdd_dv, Minv):
    """q̈_r as ``coupled_aba_kernel``, then Eq. 24 on the reduced system."""
    qdd = VR[2]
    status = coupled_aba_kernel(packed, table, ws, qf, VF, MF, R, VR, q, v, tau, fext, qdd)
    if status:
        return status
    return forward_derivatives(packed, table, ws, dws, bws, qf, VF, MF, R, fext, qdd, Minv,
                               dqdd_dq, dqdd_dv)


@kernel(int64(*_STATE, *_DERIVATIVES, *_FORWARD, f64_1d, f64_1d, f64_1d, f64_1d, f64_2d,
              f64_2d))
def coupled_compute_all_kernel(packed, table, ws, dws, bws, qf, VF, MF, R, VR, q, v, a, tau_in,
                               fext, out):
    """``out`` rows as ``compute_all_kernel``'s: M⁻¹, ∂τ/∂q, ∂τ/∂v, ∂q̈/∂q, ∂q̈/∂v, τ, q̈."""
    nv = out.shape[1]
    status = check_state(packed, table, q, v, a, fext, 5) or check_vector(tau_in, nv, 4)
    status = status or expand_state(table, q, v, a, qf, VF, True)
    # ∂ID/∂q, ∂ID/∂v and M at a; τ at a
    status = status or rnea_derivatives_kernel(packed, ws, dws, bws, qf, VF[0], VF[1], fext,
                                               MF[0], MF[1], MF[2])
    status = status or rnea_kernel(packed, ws, qf, VF[0], VF[1], fext, VF[2])
    if status:
        return status
    nqf = qf.shape[0]
    tau, qdd = out[5 * nv], out[5 * nv + 1]
    reduce_matrix(table, nqf, MF[0], out[nv:2 * nv])
    reduce_matrix(table, nqf, MF[1], out[2 * nv:3 * nv])
    reduce_matrix(table, nqf, MF[2], R[0])
    reduce_force(table, nqf, VF[2], tau)
    if not cholesky(R[0]):
        return NOT_FINITE_RESULT
    status = solve_forward(R[0], a, tau_in, tau, qdd)
    # ∂ID/∂v does not depend on the acceleration (see compute_all.py): ∂q̈/∂v at q̈ is
    # −M_r⁻¹ ∂τ_r/∂v at a
    status = status or forward_derivatives(packed, table, ws, dws, bws, qf, VF, MF, R, fext,
                                           qdd, out[0:nv], out[3 * nv:4 * nv],
                                           out[4 * nv:5 * nv])
    return status or matrix_status(out)


@kernel(int64(*_STATE, f64_1d, f64_2d, f64_3d, f64_3d, f64_1d, f64_1d, f64_1d, f64_1d, f64_2d,
              f64_1d, f64_1d))
def coupled_inverse_and_forward_kernel(packed, table, ws, qf, VF, MF, R, q, v, a, tau_in, fext,
                                       tau, qdd):
    """τ_r = ID_r(q, v, a) and q̈_r = FD_r(q, v, τ_in): one RNEA, one CRBA, one factorization."""
    status = check_state(packed, table, q, v, a, fext, 5)
    status = status or check_vector(tau_in, reduced_sizes(table)[1], 4)
    status = status or expand_state(table, q, v, a, qf, VF, True)
    if status:
        return status
    return inverse_and_forward_step(packed, table, ws, qf, VF, MF, R[0], a, tau_in, fext, tau,
                                    qdd)


@kernel(int64(*_STATE, f64_2d, f64_1d, f64_2d, f64_2d, f64_1d, f64_1d, f64_1d, f64_2d))
def coupled_regressor_kernel(packed, table, ws, Yb, qf, VF, YF, q, v, a, Y):
    """Y_r = Gᵀ Y(f(q), G v, G a)."""
    nq, nv = reduced_sizes(table)
    status = check_configuration(packed, q, nq, 1) or check_vector(v, nv, 2)
    status = status or check_vector(a, nv, 3)
    status = status or expand_state(table, q, v, a, qf, VF, True)
    status = status or joint_torque_regressor_kernel(packed, ws, Yb, qf, VF[0], VF[1], YF)
    if status:
        return status
    reduce_rows(table, qf.shape[0], YF, Y)
    return matrix_status(Y)


@kernel(int64(f64_2d_ro, f64_2d_ro, f64_1d, f64_1d, f64_1d))
def coupled_integrate_kernel(packed, table, q, dv, out):
    """q_r ⊕ dv_r: the free-flyer base as the tree's, the independent joints add."""
    nq, nv = reduced_sizes(table)
    status = check_configuration(packed, q, nq, 1) or check_vector(dv, nv, 2)
    if status:
        return status
    base_q, base_v = base_sizes(packed)
    if base_v:
        joint_integrate(packed, q, 0, joint_tangent(packed, 0, dv), out)
    for k in range(base_q, nq):
        out[k] = q[k] + dv[k - base_q + base_v]
    return vector_status(out)
