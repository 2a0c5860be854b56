"""
The contact wrench that explains the external torques: F̂ = (Jᵀ)⁺ r, least squares, compiled.

J (6 × nv) is the contact frame's Jacobian (``frame_jacobian``); F̂ = [f; n] at the frame's
origin in its axes minimizes ‖Jᵀ F − r‖. Solved by a Householder QR with column pivoting of
A = Jᵀ (nv × 6; Golub & Van Loan, Matrix Computations, 4th ed., Alg. 5.4.1), in place in a
scratch: R F_π = (Qᵀ r)[:6]. The rank is the number of pivots |R_kk| above
rcond · max(1, max |A|): with fewer than 6 the wrench is refused (the chain has fewer than
six dof, or a singular pose), unless ``force_only``: the contact is then a pure force at
the frame's origin (n = 0), f = (J_vᵀ)⁺ r from the first three columns, which needs three.

The kernels return ``rank6 + 8 · rank3`` (rank3: of the force columns, computed only for
``force_only`` with rank6 < 6): the wrench is written when rank6 = 6, or rank3 = 3.
"""
import math

from .._jit import f64_1d, f64_2d, f64_2d_ro, float64, helper, i64_1d, int64, kernel
from .common import check_vector
from .frame_jacobian import BAD_FRAME, LOCAL, frame_jacobian_checked

RCOND = 1e-9              # the rank's relative tolerance (the node's and the replay's)
RANK_SCALE = 8             # the status packs rank6 + RANK_SCALE · rank3


@helper
def pivoted_qr_solve(J, r, ncols, rcond, A, out):
    """
    Solve min ‖Jᵀ[:, :ncols] x − r‖ into out[:ncols]; return the rank found (ncols: solved).

    ``A`` (nv + 2, 7) scratch: rows :nv the matrix (columns :6) and Qᵀ r (column 6); row nv
    the permutation, row nv + 1 the diagonal of R.
    """
    nv = J.shape[1]
    big = 1.0
    for i in range(nv):
        for c in range(ncols):
            A[i, c] = J[c, i]
            big = max(big, abs(J[c, i]))
        A[i, 6] = r[i]
    tol = rcond * big
    for c in range(ncols):
        A[nv, c] = c
    for k in range(ncols):
        best, p = -1.0, k
        for c in range(k, ncols):          # the remaining column of largest norm
            s = 0.0
            for i in range(k, nv):
                s += A[i, c] * A[i, c]
            if s > best:
                best, p = s, c
        if p != k:
            for i in range(nv + 1):
                A[i, k], A[i, p] = A[i, p], A[i, k]
        norm = math.sqrt(best)
        if not norm > tol:                 # NaN included
            return k
        alpha = -norm if A[k, k] > 0.0 else norm
        A[k, k] -= alpha                   # v = a - alpha e_k, kept in column k
        vv = 0.0
        for i in range(k, nv):
            vv += A[i, k] * A[i, k]
        for c in range(k + 1, 7):
            if c >= ncols and c != 6:
                continue
            s = 0.0
            for i in range(k, nv):
                s += A[i, k] * A[i, c]
            s *= 2.0 / vv
            for i in range(k, nv):
                A[i, c] -= s * A[i, k]
        A[nv + 1, k] = alpha
    for k in range(ncols - 1, -1, -1):     # R x = (Qᵀ r)[:ncols]
        s = A[k, 6]
        for c in range(k + 1, ncols):
            s -= A[k, c] * out[int(A[nv, c])]
        out[int(A[nv, k])] = s / A[nv + 1, k]
    return ncols


@helper
def contact_wrench_solve(J, r, force_only, rcond, A, out):
    """Set out (6) to F̂ = (Jᵀ)⁺ r (module docstring); return rank6 + RANK_SCALE · rank3."""
    for c in range(6):
        out[c] = 0.0
    rank6 = pivoted_qr_solve(J, r, 6, rcond, A, out)
    if rank6 == 6 or not force_only:
        return rank6
    for c in range(6):
        out[c] = 0.0
    return rank6 + RANK_SCALE * pivoted_qr_solve(J, r, 3, rcond, A, out)


@helper
def wrench_solved(status):
    """Whether a ``contact_wrench_solve`` status says the wrench was written."""
    return status % RANK_SCALE == 6 or status // RANK_SCALE == 3


@kernel(int64(f64_2d_ro, f64_2d_ro, f64_2d, f64_1d, f64_1d, int64, f64_1d, f64_1d, int64,
              float64, f64_2d, f64_2d, f64_1d, i64_1d))
def contact_wrench_kernel(packed, table, ws, qf, q, body, placement, r, force_only, rcond, J,
                          A, out, rank):
    """
    F̂ (out, 6) at the frame ``placement`` on ``body`` that explains r at q; rank[0] its rank.

    ``frame_jacobian_checked``'s arguments (LOCAL), then r (nv), force_only (0/1), rcond,
    J (6, nv) and A (nv + 2, 7) scratch. Returns the status of the inputs (r at position 2).
    """
    status = frame_jacobian_checked(packed, table, ws, qf, q, body, placement, LOCAL, J)
    status = status or check_vector(r, J.shape[1], 2)
    if status == 0 and (A.shape[0] != J.shape[1] + 2 or A.shape[1] != 7 or out.shape[0] != 6
                        or rank.shape[0] != 1):
        status = BAD_FRAME
    if status:
        return status
    rank[0] = contact_wrench_solve(J, r, force_only != 0, rcond, A, out)
    return 0
