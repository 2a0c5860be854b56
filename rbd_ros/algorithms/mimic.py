"""
Mimic joints, coupled: the compiled steps between the tree and its independent joints.

A URDF mimic joint (a follower) moves with another joint (its leader):
q_m = multiplier · q_leader + offset. The tree keeps every joint (the "full" system, what
``mimic="independent"`` would load); the model's degrees of freedom are the independent
joints only (the "reduced" system, r). With the constant coupling matrix G (nv_full × nv_r:
one row per full dof, a single entry, the multiplier, in the column of its independent
joint; identity rows for the free-flyer base and the independent joints) and the affine map
q_full = f(q_r):

    v_full = G v_r,  a_full = G a_r       (G is constant: no velocity-product term)
    τ_r = Gᵀ τ_full,  M_r = Gᵀ M G,  Y_r = Gᵀ Y                    (virtual work)
    ∂τ_r/∂q_r = Gᵀ (∂τ/∂q) G,  ∂τ_r/∂v_r = Gᵀ (∂τ/∂v) G            (chain rule, ∂f/∂q_r = G)

The steps here are ``expand_configuration`` (f), ``expand_motion`` (G x), ``reduce_force``
(Gᵀ t), ``reduce_matrix`` (Gᵀ A G), ``reduce_rows`` (Gᵀ Y) and a dense Cholesky of the
nv_r × nv_r M_r; ``coupled.py`` composes them with the tree's own kernels.

G is stored sparse, in the coupling ``table`` (see
:class:`rbd_ros.description.mimic_coupling.Coupling`), a
read-only float64 array of 1 + nq_full + nv_full rows of 3 numbers:

    row 0:                        nq_r, nv_r, 0
    row 1 + k, k < nq_full:       the q_r entry full q[k] follows, multiplier, offset
    row 1 + nq_full + k:          the v_r entry full v[k] follows, multiplier, 0

(an independent joint or base entry follows itself with multiplier 1 and offset 0, which
copies it exactly).
"""
import math

from .._jit import helper
from .common import (NOT_FINITE_RESULT, check_configuration, check_forces, check_vector,
                     mirror_upper, model_sizes)

T_SOURCE, T_MULTIPLIER, T_OFFSET = range(3)


@helper
def reduced_sizes(table):
    """(nq_r, nv_r) of the coupling table."""
    return int(table[0, 0]), int(table[0, 1])


@helper
def caller_nv(packed, table):
    """Return the nv of the caller's arrays: the tree's, or the reduced one (a coupling table)."""
    return model_sizes(packed)[2] if table.shape[0] == 0 else reduced_sizes(table)[1]


@helper
def expand_configuration(table, q, qf):
    """Set qf = f(q): every full configuration entry from its independent one."""
    for k in range(qf.shape[0]):
        r = 1 + k
        qf[k] = table[r, T_MULTIPLIER] * q[int(table[r, T_SOURCE])] + table[r, T_OFFSET]


@helper
def expand_motion(table, nqf, x, xf):
    """Set xf = G x (a velocity or an acceleration)."""
    for k in range(xf.shape[0]):
        r = 1 + nqf + k
        xf[k] = table[r, T_MULTIPLIER] * x[int(table[r, T_SOURCE])]


@helper
def reduce_force(table, nqf, tf, t):
    """Set t = Gᵀ tf: a leader's generalized force carries its followers'."""
    for k in range(t.shape[0]):
        t[k] = 0.0
    for k in range(tf.shape[0]):
        r = 1 + nqf + k
        t[int(table[r, T_SOURCE])] += table[r, T_MULTIPLIER] * tf[k]


@helper
def reduce_matrix(table, nqf, Af, A):
    """Set A = Gᵀ Af G (nv_r × nv_r) from the nv_full × nv_full Af."""
    for r in range(A.shape[0]):
        for c in range(A.shape[1]):
            A[r, c] = 0.0
    n = Af.shape[0]
    for i in range(n):
        si = int(table[1 + nqf + i, T_SOURCE])
        mi = table[1 + nqf + i, T_MULTIPLIER]
        for j in range(n):
            sj = int(table[1 + nqf + j, T_SOURCE])
            A[si, sj] += mi * table[1 + nqf + j, T_MULTIPLIER] * Af[i, j]


@helper
def reduce_rows(table, nqf, Yf, Y):
    """Set Y = Gᵀ Yf: row k of Yf, times its multiplier, added to its independent row."""
    for r in range(Y.shape[0]):
        for c in range(Y.shape[1]):
            Y[r, c] = 0.0
    for k in range(Yf.shape[0]):
        s = int(table[1 + nqf + k, T_SOURCE])
        m = table[1 + nqf + k, T_MULTIPLIER]
        for c in range(Yf.shape[1]):
            Y[s, c] += m * Yf[k, c]


@helper
def check_state(packed, table, q, v, u, fext, fext_position):
    """Status of the reduced (q, v, u) at positions 1-3 and fext at ``fext_position``."""
    nq, nv = reduced_sizes(table)
    status = check_configuration(packed, q, nq, 1) or check_vector(v, nv, 2)
    return status or check_vector(u, nv, 3) or check_forces(fext, packed.shape[0] - 1,
                                                            fext_position)


@helper
def expand_state(table, q, v, a, qf, VF, expand_a):
    """
    Set qf = f(q), VF[0] = G v and VF[1] = G a (``expand_a``) or 0; return a status.

    A full state that is not finite although the reduced one is (multipliers times values
    too large for float64) is a non-finite result.
    """
    nqf = qf.shape[0]
    expand_configuration(table, q, qf)
    expand_motion(table, nqf, v, VF[0])
    if expand_a:
        expand_motion(table, nqf, a, VF[1])
    else:
        for k in range(VF.shape[1]):
            VF[1, k] = 0.0
    bad = False
    for k in range(nqf):
        bad |= (qf[k] - qf[k]) != 0.0
    for k in range(VF.shape[1]):
        bad |= (VF[0, k] - VF[0, k]) != 0.0 or (VF[1, k] - VF[1, k]) != 0.0
    return NOT_FINITE_RESULT if bad else 0


@helper
def cholesky(A):
    """
    Factor the symmetric A = L Lᵀ in place (L in the lower triangle); return success.

    Dense: M_r is not tree-sparse (a leader couples to its followers' ancestors, which
    need not be its own). False when A is not positive definite (a degenerate model).
    """
    n = A.shape[0]
    for j in range(n):
        d = A[j, j]
        for k in range(j):
            d -= A[j, k] * A[j, k]
        if not d > 0.0:                      # also NaN
            return False
        d = math.sqrt(d)
        A[j, j] = d
        for i in range(j + 1, n):
            s = A[i, j]
            for k in range(j):
                s -= A[i, k] * A[j, k]
            A[i, j] = s / d
    return True


@helper
def cholesky_solve(L, x):
    """Set x = (L Lᵀ)⁻¹ x in place (forward, then backward substitution)."""
    n = L.shape[0]
    for i in range(n):
        s = x[i]
        for k in range(i):
            s -= L[i, k] * x[k]
        x[i] = s / L[i, i]
    for i in range(n - 1, -1, -1):
        s = x[i]
        for k in range(i + 1, n):
            s -= L[k, i] * x[k]
        x[i] = s / L[i, i]


@helper
def cholesky_inverse(L, Ainv):
    """
    Set Ainv = (L Lᵀ)⁻¹; return its status.

    Row c solves for e_c; the upper triangle is then mirrored, so that Ainv is exactly
    symmetric.
    """
    Ainv[:, :] = 0.0
    for c in range(L.shape[0]):
        Ainv[c, c] = 1.0
        cholesky_solve(L, Ainv[c])
    return mirror_upper(Ainv)
