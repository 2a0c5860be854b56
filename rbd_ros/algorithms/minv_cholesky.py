"""
M⁻¹(q) the classic way: CRBA, a sparse LᵀDL factorization of M, then M⁻¹ from the factors.

The baseline of Carpentier, "Analytical derivatives of rigid body dynamics algorithms"
(RSS 2018), Sec. IV-C, Eq. (25). The factorization is Featherstone's LTDL (RBDA Table 6.3):
M = Lᵀ D L with L unit lower triangular, in place in M's lower triangle, following the
tree's branch-induced sparsity through λ(k), the parent of each degree of freedom (the
previous dof of a multi-dof joint, else the last dof of the parent body's joint; -1 at a
root). L[k, j] ≠ 0 only for j an ancestor of k, and the factorization fills in nothing.

Then M⁻¹ = L⁻¹ D⁻¹ L⁻ᵀ, column by column (RBDA Table 6.4's back-substitutions): for column
c, y = L⁻ᵀ e_c is nonzero only at c and its ancestors, and x = L⁻¹ D⁻¹ y is needed only in
rows ≤ c (row k of L⁻¹ involves only k's ancestors). Rows ≤ c of column c are written to
row c (the lower triangle) and mirrored.
"""
from .._jit import f64_1d, f64_2d, f64_2d_ro, i64_1d_ro, int64, kernel
from .common import (INPUT_STRIDED, OUTPUT_REFUSED, apart, matrix_status, model_sizes, plain,
                     writeable_matrix)
from .crba import crba_kernel
from .entries import declare


@kernel(int64(f64_2d_ro, f64_2d, f64_1d, i64_1d_ro, f64_2d, f64_2d))
def minv_cholesky_kernel(packed, ws, q, dof_parent, H, Minv):
    if not plain(q):
        return INPUT_STRIDED
    nv = model_sizes(packed)[2]
    if not (writeable_matrix(Minv, nv, nv) and apart(Minv, q)):
        return OUTPUT_REFUSED
    status = crba_kernel(packed, ws, q, H)        # H = M(q), full (checks q)
    if status:
        return status
    nv = H.shape[0]
    # LTDL factorization, RBDA Table 6.3: H = Lᵀ D L in place (D on the diagonal, L below)
    for k in range(nv - 1, -1, -1):
        i = dof_parent[k]
        while i >= 0:
            a = H[k, i] / H[k, k]
            j = i
            while j >= 0:
                H[i, j] -= a * H[k, j]
                j = dof_parent[j]
            H[k, i] = a
            i = dof_parent[i]
    # M⁻¹ = L⁻¹ D⁻¹ L⁻ᵀ, one column c at a time, written into row c (entries ≤ c)
    for c in range(nv):
        for r in range(c):
            Minv[c, r] = 0.0
        Minv[c, c] = 1.0
        # y = L⁻ᵀ e_c (RBDA Table 6.4, "Lᵀ" back-substitution): only c and its ancestors
        i = c
        while i >= 0:
            yi = Minv[c, i]
            j = dof_parent[i]
            while j >= 0:
                Minv[c, j] -= H[i, j] * yi
                j = dof_parent[j]
            i = dof_parent[i]
        # z = D⁻¹ y
        i = c
        while i >= 0:
            Minv[c, i] /= H[i, i]
            i = dof_parent[i]
        # x = L⁻¹ z ("L" forward substitution), rows 0..c
        for i in range(c + 1):
            x = Minv[c, i]
            j = dof_parent[i]
            while j >= 0:
                x -= H[i, j] * Minv[c, j]
                j = dof_parent[j]
            Minv[c, i] = x
    for r in range(nv):                              # mirror the lower triangle
        for c in range(r + 1, nv):
            Minv[r, c] = Minv[c, r]
    return matrix_status(Minv)


@declare
def minv_cholesky(model, q, *, data=None):
    """
    Return M(q)⁻¹ by CRBA and a sparse LᵀDL factorization (the baseline of :func:`minv`).

    Parameters
    ----------
    model, q, data : ...
        Shared by the calls: ``rbd_ros.algorithms.entries.SHARED_PARAMETERS``.

    Returns
    -------
    Minv : numpy.ndarray, shape ``(nv, nv)``
        M(q)⁻¹, full and symmetric, as :func:`minv` returns it.

    Raises
    ------
    ValueError
        ... the shared refusals: ``rbd_ros.algorithms.entries.SHARED_REFUSALS``.

    Notes
    -----
    With mimic joints, M_r⁻¹ by CRBA and a dense Cholesky factorization, as :func:`minv`.

    """
