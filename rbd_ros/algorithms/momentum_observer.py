"""
The generalized-momentum observer, stepped over N timestamped samples in one compiled call.

De Luca & Mattone 2003; Haddadin, De Luca, Albu-Schäffer, T-RO 2017 (Eqs. 22-25). With
the joint parameters of ``rbd_ros.actuation`` (D = diag(armature), f(v) = Fv v + Fc tanh(v/ε)
+ τ0) the dynamics are (M + D) q̈ + C v + g = τ_m + τ_w − f(v) + τ_ext, τ_w = Σ Jᵀ f_w of the
measured wrenches. The momentum p = (M + D) v has ṗ = Ṁ v + (M + D) q̈ and Ṁ = C + Cᵀ, so

    ṗ = u + τ_ext,   u = τ_m + Cᵀ v − (g − τ_w) − f(v),

and r = K [p − p(0) − ∫ (u + r) ds] obeys ṙ = K (τ_ext − r): τ_ext through a first-order
filter of bandwidth K (per dof, 1/s), no acceleration needed. g − τ_w = RNEA(q, 0, 0, fext).

Discretization, between stamps t_{k-1} and t_k (h = t_k − t_{k-1}, the actual one, and
h' = t_{k-1} − t_{k-2}): s = p − ∫u has Δs_k = p_k − p_{k-1} − U_k, with U_k the integral
over the step of the quadratic through (t_{k-2}, u_{k-2}), (t_{k-1}, u_{k-1}), (t_k, u_k):

    U_k = w₂ u_{k-2} + w₁ u_{k-1} + w₀ u_k,   w₂ = −h³ / (6 h' (h' + h)),
    w₁ = h/2 + h² / (6 h'),   w₀ = (h²/3 + h' h / 2) / (h' + h)

((−1, 8, 5) h/12 at a steady rate: third order, where the trapezoid left 1e-5 N·m at 1 kHz
on a moving arm). With ṡ held at Δs_k / h over the step the filter ṙ = K (ṡ − r) is solved
exactly:

    r_k = e^{−K h} r_{k-1} + (1 − e^{−K h}) Δs_k / h,

stable for any h. A sample whose stamp is not after the last one, or comes more than
``max_gap`` after it, or the first one, (re)starts the observer: p(0) = p_k, r_k = 0; the
next sample is stored (r = 0) and the one after integrates both intervals at once
(``observer_step``). A sample with a bad input is skipped (its status set, the state
unchanged).

State (3 + 5 nv): [started (0; 1, 1.5: one, two samples; 2), t_{k-1}, h', p_{k-1},
u_{k-1}, u_{k-2}, r_{k-1}, p_{k-2} (nv each)].
"""
import math

from .._jit import f64_1d, f64_2d, f64_2d_ro, f64_3d, helper, i64_1d, int64, kernel
from .common import NOT_FINITE, NOT_FINITE_RESULT, check_vector
from .coriolis import coriolis_kernel, coupled_coriolis_kernel
from .coupled import coupled_crba_kernel, coupled_rnea_kernel
from .crba import crba_kernel
from .rnea import rnea_kernel

# rows of the joint-parameter table (4, nv)
ARMATURE, VISCOUS, COULOMB, OFFSET = range(4)
# state layout
S_STARTED, S_TIME, S_STEP, S_REST = 0, 1, 2, 3
# a sample's status names its argument by position: q 1, v 2, tau 3, fext 4, the stamp 5
BAD_STAMP = 5 * 4 + NOT_FINITE


@helper
def dynamics_terms(packed, table, ws, dws, bws, qf, VF, MF, q, v, fext, zeros, M, C, gw):
    """M(q), C(q, v) and g − τ_w = RNEA(q, 0, 0, fext) of one sample; return a status."""
    if table.shape[0] == 0:
        status = crba_kernel(packed, ws, q, M)
        status = status or coriolis_kernel(packed, ws, dws, bws, q, v, C)
        return status or rnea_kernel(packed, ws, q, zeros, zeros, fext, gw)
    status = coupled_crba_kernel(packed, table, ws, qf, MF, q, M)
    status = status or coupled_coriolis_kernel(packed, table, ws, dws, bws, qf, VF, MF, q, v, C)
    return status or coupled_rnea_kernel(packed, table, ws, qf, VF, q, zeros, zeros, fext, gw)


@kernel(int64(f64_2d_ro, f64_2d_ro, f64_2d, f64_2d, f64_2d, f64_1d, f64_2d, f64_3d,
              f64_2d, f64_1d, f64_1d, f64_1d, f64_1d, f64_2d, f64_2d, f64_2d, f64_3d,
              f64_3d, f64_2d, i64_1d, i64_1d))
def momentum_observer_kernel(packed, table, ws, dws, bws, qf, VF, MF, joint, epsilon_gain_gap,
                             state, scratch_v, t, q, v, tau, fext, M, r, restarted, status):
    """
    Step the observer over the N samples (t[k], q[k], v[k], tau[k], fext[k]); r (N, nv) out.

    ``joint`` (4, nv): armature, viscous, Coulomb, offset; ``epsilon_gain_gap``: [ε,
    max_gap, K (nv)]; ``scratch_v`` (5 nv): zeros, p, u, g − τ_w, Cᵀ v workspace;
    ``M`` (2, nv, nv): M and C. ``restarted[k]`` = 1 where sample k (re)started it;
    ``status[k]`` nonzero where sample k was refused. Returns the number of samples refused.
    """
    nv = joint.shape[1]
    eps, max_gap = epsilon_gain_gap[0], epsilon_gain_gap[1]
    zeros = scratch_v[0:nv]
    p = scratch_v[nv:2 * nv]
    u = scratch_v[2 * nv:3 * nv]
    gw = scratch_v[3 * nv:4 * nv]
    for k in range(nv):
        zeros[k] = 0.0
    refused = 0
    for n in range(t.shape[0]):
        restarted[n] = 0
        s = 0 if math.isfinite(t[n]) else BAD_STAMP
        s = s or check_vector(tau[n], nv, 3)
        s = s or dynamics_terms(packed, table, ws, dws, bws, qf, VF, MF, q[n], v[n], fext[n],
                                zeros, M[0], M[1], gw)
        if s == 0:
            s = momentum_and_input(M[0], M[1], joint, eps, v[n], tau[n], gw, p, u)
        status[n] = s
        if s:
            refused += 1
            for k in range(nv):
                r[n, k] = state[S_REST + 3 * nv + k]
            continue
        restarted[n] = observer_step(state, epsilon_gain_gap, t[n] - state[S_TIME], p, u, nv,
                                     max_gap)
        state[S_TIME] = t[n]
        for k in range(nv):
            r[n, k] = state[S_REST + 3 * nv + k]
    return refused


@helper
def last_interval_weights(h1, h):
    """(w₂, w₁, w₀): ∫ over [t_{k-1}, t_k] of the quadratic through the last three samples."""
    return (-h * h * h / (6.0 * h1 * (h1 + h)), 0.5 * h + h * h / (6.0 * h1),
            (h * h / 3.0 + 0.5 * h1 * h) / (h1 + h))


@helper
def observer_step(state, epsilon_gain_gap, h, p, u, nv, max_gap):
    """
    Advance the state by a step of h (s) to (p, u); return 1 if it (re)started it.

    The second sample after a start is only stored (r stays 0): the third integrates both
    intervals with the quadratic through the three (the first interval's weights are the
    last interval's with time reversed) and holds ṡ over both, so no step is integrated by
    a lower order.
    """
    started = state[S_STARTED]
    restart = started == 0.0 or not (h > 0.0) or h > max_gap
    R, P2 = S_REST + 3 * nv, S_REST + 4 * nv
    if restart:
        state[S_STARTED] = 1.0
        for k in range(nv):
            state[R + k] = 0.0
    elif started == 2.0:
        w2, w1, w0 = last_interval_weights(state[S_STEP], h)
        for k in range(nv):
            ds = (p[k] - state[S_REST + k] - w0 * u[k] - w1 * state[S_REST + nv + k]
                  - w2 * state[S_REST + 2 * nv + k])
            decay = math.exp(-epsilon_gain_gap[2 + k] * h)
            state[R + k] = decay * state[R + k] + (1.0 - decay) * ds / h
    elif started == 1.5:                                # the first two intervals at once
        h1 = state[S_STEP]
        w2, w1, w0 = last_interval_weights(h1, h)
        # the first interval, [t_{k-2}, t_{k-1}]: time reversed, t_k is the far node
        far, shared, near = last_interval_weights(h, h1)
        span = h1 + h
        for k in range(nv):
            ds = (p[k] - state[P2 + k] - (w0 + far) * u[k]
                  - (w1 + shared) * state[S_REST + nv + k]
                  - (w2 + near) * state[S_REST + 2 * nv + k])
            state[R + k] = (1.0 - math.exp(-epsilon_gain_gap[2 + k] * span)) * ds / span
        state[S_STARTED] = 2.0
    else:
        state[S_STARTED] = 1.5
    if not restart:
        state[S_STEP] = h
    for k in range(nv):
        state[P2 + k] = state[S_REST + k]
        state[S_REST + k] = p[k]
        state[S_REST + 2 * nv + k] = state[S_REST + nv + k]
        state[S_REST + nv + k] = u[k]
    return 1 if restart else 0


@helper
def momentum_and_input(M, C, joint, eps, v, tau, gw, p, u):
    """Set p = (M + D) v and u = τ_m + Cᵀ v − (g − τ_w) − f(v); return a status (0 if finite)."""
    nv = v.shape[0]
    bad = False
    for i in range(nv):
        pi = joint[ARMATURE, i] * v[i]
        ui = tau[i] - gw[i] - (joint[VISCOUS, i] * v[i] + joint[COULOMB, i]
                               * math.tanh(v[i] / eps) + joint[OFFSET, i])
        for j in range(nv):
            pi += M[i, j] * v[j]
            ui += C[j, i] * v[j]
        p[i] = pi
        u[i] = ui
        bad |= (pi - pi) != 0.0 or (ui - ui) != 0.0
    return NOT_FINITE_RESULT if bad else 0
