"""
6×6 matrices in the kernels' workspace rows: articulated inertias, their products and Cholesky.

A matrix is 36 consecutive numbers (row-major) of a workspace row from column ``off``.
"""
from .._jit import helper
from .spatial import dot6


@helper
def load6_vector(x, k):
    """x[k:k+6] as a tuple."""
    return x[k], x[k + 1], x[k + 2], x[k + 3], x[k + 4], x[k + 5]


# -- 6×6 matrices stored row-major in 36 consecutive workspace columns ---------------------
@helper
def mat6_set_inertia(arr, i, off, th):
    """Write the 6×6 matrix of the θ inertia ``th``: [[m 1, -[h]], [[h], I_o]]."""
    mass, hx, hy, hz = th[0], th[1], th[2], th[3]
    rows = ((mass, 0.0, 0.0, 0.0, hz, -hy),
            (0.0, mass, 0.0, -hz, 0.0, hx),
            (0.0, 0.0, mass, hy, -hx, 0.0),
            (0.0, -hz, hy, th[4], th[5], th[7]),
            (hz, 0.0, -hx, th[5], th[6], th[8]),
            (-hy, hx, 0.0, th[7], th[8], th[9]))
    for r in range(6):
        for c in range(6):
            arr[i, off + 6 * r + c] = rows[r][c]


@helper
def mat6_apply(arr, i, off, m):
    """Return A m for the 6×6 matrix A stored at arr[i, off:off+36]."""
    out0 = 0.0
    out1 = 0.0
    out2 = 0.0
    out3 = 0.0
    out4 = 0.0
    out5 = 0.0
    for c in range(6):
        x = m[c]
        out0 += arr[i, off + c] * x
        out1 += arr[i, off + 6 + c] * x
        out2 += arr[i, off + 12 + c] * x
        out3 += arr[i, off + 18 + c] * x
        out4 += arr[i, off + 24 + c] * x
        out5 += arr[i, off + 30 + c] * x
    return out0, out1, out2, out3, out4, out5


@helper
def mat6_add_sub_rank1(arr, dst, src, off, U, s):
    """arr[dst] += arr[src] - s U Uᵀ (6×6 blocks at column off)."""
    for r in range(6):
        su = s * U[r]
        for c in range(6):
            arr[dst, off + 6 * r + c] += arr[src, off + 6 * r + c] - su * U[c]


@helper
def mat6_sub_rank1(arr, i, off, U, s):
    """arr[i] -= s U Uᵀ (the 6×6 block at column off)."""
    for r in range(6):
        su = s * U[r]
        for c in range(6):
            arr[i, off + 6 * r + c] -= su * U[c]


@helper
def mat6_apply_transpose(arr, i, off, m):
    """Aᵀ m for the 6×6 matrix A stored at arr[i, off:off+36]: m dotted with A's columns."""
    return (dot6(mat6_column(arr, i, off, 0), m), dot6(mat6_column(arr, i, off, 1), m),
            dot6(mat6_column(arr, i, off, 2), m), dot6(mat6_column(arr, i, off, 3), m),
            dot6(mat6_column(arr, i, off, 4), m), dot6(mat6_column(arr, i, off, 5), m))


@helper
def mat6_column(arr, i, off, c):
    """Column c of the 6×6 matrix stored at arr[i, off:off+36]."""
    return (arr[i, off + c], arr[i, off + 6 + c], arr[i, off + 12 + c], arr[i, off + 18 + c],
            arr[i, off + 24 + c], arr[i, off + 30 + c])


@helper
def mat6_cholesky(arr, i, off):
    """In-place Cholesky A = L Lᵀ of the SPD 6×6 block at arr[i, off:off+36] (lower part)."""
    for j in range(6):
        d = arr[i, off + 7 * j]
        for k in range(j):
            d -= arr[i, off + 6 * j + k] ** 2
        d = d ** 0.5
        arr[i, off + 7 * j] = d
        for r in range(j + 1, 6):
            s = arr[i, off + 6 * r + j]
            for k in range(j):
                s -= arr[i, off + 6 * r + k] * arr[i, off + 6 * j + k]
            arr[i, off + 6 * r + j] = s / d


@helper
def mat6_cholesky_solve(arr, i, off, b):
    """Return x = A⁻¹ b with the factor L left in arr[i, off:off+36] by :func:`mat6_cholesky`."""
    y0 = b[0] / arr[i, off]
    y1 = (b[1] - arr[i, off + 6] * y0) / arr[i, off + 7]
    y2 = (b[2] - arr[i, off + 12] * y0 - arr[i, off + 13] * y1) / arr[i, off + 14]
    y3 = (b[3] - arr[i, off + 18] * y0 - arr[i, off + 19] * y1 - arr[i, off + 20] * y2) \
        / arr[i, off + 21]
    y4 = (b[4] - arr[i, off + 24] * y0 - arr[i, off + 25] * y1 - arr[i, off + 26] * y2
          - arr[i, off + 27] * y3) / arr[i, off + 28]
    y5 = (b[5] - arr[i, off + 30] * y0 - arr[i, off + 31] * y1 - arr[i, off + 32] * y2
          - arr[i, off + 33] * y3 - arr[i, off + 34] * y4) / arr[i, off + 35]
    x5 = y5 / arr[i, off + 35]
    x4 = (y4 - arr[i, off + 34] * x5) / arr[i, off + 28]
    x3 = (y3 - arr[i, off + 27] * x4 - arr[i, off + 33] * x5) / arr[i, off + 21]
    x2 = (y2 - arr[i, off + 20] * x3 - arr[i, off + 26] * x4 - arr[i, off + 32] * x5) \
        / arr[i, off + 14]
    x1 = (y1 - arr[i, off + 13] * x2 - arr[i, off + 19] * x3 - arr[i, off + 25] * x4
          - arr[i, off + 31] * x5) / arr[i, off + 7]
    x0 = (y0 - arr[i, off + 6] * x1 - arr[i, off + 12] * x2 - arr[i, off + 18] * x3
          - arr[i, off + 24] * x4 - arr[i, off + 30] * x5) / arr[i, off]
    return x0, x1, x2, x3, x4, x5
