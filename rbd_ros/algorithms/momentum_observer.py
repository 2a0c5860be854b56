"""
The generalized-momentum observer, stepped over N timestamped samples in one compiled call.

De Luca & Mattone 2003; Haddadin, De Luca, Albu-Schäffer, T-RO 2017 (Eqs. 22-25). With
the joint parameters of ``rbd_ros.actuation`` (D = diag(armature), f(v) = Fv v + Fc tanh(v/ε)
+ τ0) the dynamics are (M + D) q̈ + C v + g = τ_m + τ_w − f(v) + τ_ext, τ_w = Σ Jᵀ f_w of the
measured wrenches. The momentum p = (M + D) v has ṗ = Ṁ v + (M + D) q̈ and Ṁ = C + Cᵀ, so

    ṗ = u + τ_ext,   u = τ_m + Cᵀ v − (g − τ_w) − f(v),

and r = K [p − p(0) − ∫ (u + r) ds] obeys ṙ = K (τ_ext − r): τ_ext through a first-order
filter of bandwidth K (per dof, 1/s), no acceleration needed. g − τ_w = RNEA(q, 0, 0, fext);
p, Cᵀ v and g − τ_w come from one O(n) pass (``momentum_terms``: neither M nor C is formed),
and the contact wrench of each r, when asked, from the same call (``contact_wrench``).

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
from .common import (NOT_FINITE, NOT_FINITE_RESULT, check_configuration, check_forces,
                     check_vector, model_sizes)
from .contact_wrench import RCOND, contact_wrench_solve
from .frame_jacobian import frame_status, placement_tuple, stored_frame_jacobian
from .joints import IDENTITY_SE3
from .mimic import reduced_sizes
from .momentum_terms import momentum_terms

# N·m: no robot feels it; with it r², and r / threshold (≥ MIN_THRESHOLD), stay finite. A
# sample whose r (or contact wrench) leaves it resets the observer (``rbd_ros.contact``)
R_LIMIT = 1e150
# rows of the joint-parameter table (4, nv)
ARMATURE, VISCOUS, COULOMB, OFFSET = range(4)
# state layout
S_STARTED, S_TIME, S_STEP, S_REST = 0, 1, 2, 3
# a sample's status names its argument by position: q 1, v 2, tau 3, fext 4, the stamp 5
BAD_STAMP = 5 * 4 + NOT_FINITE


@kernel(int64(f64_2d_ro, f64_2d_ro, f64_2d, f64_1d, f64_2d, f64_2d, f64_1d, f64_1d, f64_1d,
              f64_1d, f64_2d, f64_2d, f64_2d, f64_3d, int64, f64_1d, f64_2d, f64_2d, f64_2d,
              f64_2d, i64_1d, i64_1d, i64_1d))
def momentum_observer_kernel(packed, table, ws, qf, VF, joint, epsilon_gain_gap, state,
                             scratch_v, t, q, v, tau, fext, frame_body, frame_placement, J, A,
                             r, wrench, wrench_rank, restarted, status):
    """
    Step the observer over the N samples (t[k], q[k], v[k], tau[k], fext[k]); r (N, nv) out.

    ``table``: the coupling table ((0, 3): none), ``qf``, ``VF`` (4, nv_full) its scratch;
    ``joint`` (4, nv): armature, viscous, Coulomb, offset; ``epsilon_gain_gap``: [ε,
    max_gap, K (nv)]; ``scratch_v`` (5 nv): M v, Cᵀ v, g − τ_w, p, u. ``restarted[k]`` = 1
    where sample k (re)started it; ``status[k]`` nonzero where sample k was refused.
    ``wrench`` (N, 6) or (0, 6): the contact wrench of each r at the frame
    ``frame_placement`` (^bM_f, 12) on ``frame_body`` (``contact_wrench``; J (6, nv) and
    A (nv + 2, 7) scratch), ``wrench_rank[k]`` its rank status (-1: sample refused).
    Returns the number of samples refused, or -1 for a frame that does not fit.
    """
    nv = joint.shape[1]
    eps, max_gap = epsilon_gain_gap[0], epsilon_gain_gap[1]
    mv, ctv, gw = scratch_v[0:nv], scratch_v[nv:2 * nv], scratch_v[2 * nv:3 * nv]
    p, u = scratch_v[3 * nv:4 * nv], scratch_v[4 * nv:5 * nv]
    nq = model_sizes(packed)[1] if table.shape[0] == 0 else reduced_sizes(table)[0]
    with_wrench = wrench.shape[0] > 0
    if with_wrench and (frame_status(packed, frame_body, frame_placement, J, nv)
                        or A.shape[0] != nv + 2 or A.shape[1] != 7
                        or wrench.shape[0] != t.shape[0] or wrench_rank.shape[0] != t.shape[0]):
        return -1
    fM = placement_tuple(frame_placement) if with_wrench else IDENTITY_SE3
    refused = 0
    for n in range(t.shape[0]):
        restarted[n] = 0
        s = 0 if math.isfinite(t[n]) else BAD_STAMP
        s = s or check_configuration(packed, q[n], nq, 1) or check_vector(v[n], nv, 2)
        s = s or check_vector(tau[n], nv, 3) or check_forces(fext[n], packed.shape[0] - 1, 4)
        if s == 0:
            momentum_terms(packed, table, ws, qf, VF, q[n], v[n], fext[n], mv, ctv, gw)
            s = momentum_and_input(mv, ctv, joint, eps, v[n], tau[n], gw, p, u)
        status[n] = s
        if s:
            refused += 1
            for k in range(nv):
                r[n, k] = state[S_REST + 3 * nv + k]
            if with_wrench:
                wrench_rank[n] = -1
            continue
        restarted[n] = observer_step(state, epsilon_gain_gap, t[n] - state[S_TIME], p, u, nv,
                                     max_gap)
        state[S_TIME] = t[n]
        for k in range(nv):
            r[n, k] = state[S_REST + 3 * nv + k]
        if with_wrench:                 # at the placements momentum_terms stored
            stored_frame_jacobian(packed, table, ws, q.shape[1] if table.shape[0] == 0
                                  else qf.shape[0], frame_body, fM, J)
            wrench_rank[n] = contact_wrench_solve(J, r[n], False, RCOND, A, wrench[n])
    return refused


@helper
def stamp_admitted(t, newest, max_gap):
    """
    Whether a sample at ``t`` is stepped: after ``newest``, or a clock set back.

    A clock set back: more than ``max_gap`` before it. A stamp that is not finite is too:
    the kernel refuses its sample. The one rule of ``rbd_ros.contact``'s Python step
    (``samples.admitted``) and of the node's one compiled tick (``observer_tick``).
    """
    return not math.isfinite(t) or t > newest or t < newest - max_gap


@helper
def within_limit(x):
    """Whether every |x_j| ≤ R_LIMIT (NaN is not): ``rbd_ros.contact.samples.bounded``'s rule."""
    for j in range(x.shape[0]):
        if not abs(x[j]) <= R_LIMIT:
            return False
    return True


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
def momentum_and_input(mv, ctv, joint, eps, v, tau, gw, p, u):
    """Set p = (M + D) v and u = τ_m + Cᵀ v − (g − τ_w) − f(v); return a status (0 if finite)."""
    nv = v.shape[0]
    bad = False
    for i in range(nv):
        pi = joint[ARMATURE, i] * v[i] + mv[i]
        ui = tau[i] - gw[i] - (joint[VISCOUS, i] * v[i] + joint[COULOMB, i]
                               * math.tanh(v[i] / eps) + joint[OFFSET, i]) + ctv[i]
        p[i] = pi
        u[i] = ui
        bad |= (pi - pi) != 0.0 or (ui - ui) != 0.0
    return NOT_FINITE_RESULT if bad else 0
