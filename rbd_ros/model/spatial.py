"""
Spatial algebra for the kernels, on tuples of scalars.

numba keeps tuples of floats in registers, so these helpers cost nothing beyond their
arithmetic and let the algorithms read like their pseudo-code without array temporaries.

Conventions (the same as Pinocchio, so results compare one to one):
  motion  m = (vx, vy, vz, wx, wy, wz)   linear first
  force   f = (fx, fy, fz, nx, ny, nz)
  placement M = (R00, R01, R02, R10, R11, R12, R20, R21, R22, px, py, pz) maps child
            coordinates to parent coordinates: x_parent = R x_child + p
  inertia θ = (m, hx, hy, hz, Ixx, Ixy, Iyy, Ixz, Iyz, Izz) about the frame origin, h = m c
            (the regressor order of the seeds README; ``rbd_ros.model.inertia`` converts from the
            compact centroidal layout)
"""
import math

from .._jit import helper


# -- 3-vectors ---------------------------------------------------------------------------
@helper
def cross3(ax, ay, az, bx, by, bz):
    return ay * bz - az * by, az * bx - ax * bz, ax * by - ay * bx


@helper
def rot3(M, x, y, z):
    """R @ (x, y, z) for the rotation part of a placement."""
    return (M[0] * x + M[1] * y + M[2] * z,
            M[3] * x + M[4] * y + M[5] * z,
            M[6] * x + M[7] * y + M[8] * z)


@helper
def rot3_t(M, x, y, z):
    """R.T @ (x, y, z)."""
    return (M[0] * x + M[3] * y + M[6] * z,
            M[1] * x + M[4] * y + M[7] * z,
            M[2] * x + M[5] * y + M[8] * z)


# -- placements --------------------------------------------------------------------------
@helper
def se3_load(arr, i, off):
    return (arr[i, off], arr[i, off + 1], arr[i, off + 2], arr[i, off + 3], arr[i, off + 4],
            arr[i, off + 5], arr[i, off + 6], arr[i, off + 7], arr[i, off + 8],
            arr[i, off + 9], arr[i, off + 10], arr[i, off + 11])


@helper
def store_tuple(arr, i, off, t):
    """arr[i, off:off + len(t)] = t (a placement, motion, force or inertia tuple)."""
    for k in range(len(t)):
        arr[i, off + k] = t[k]


se3_store = store6 = store10 = store_tuple


@helper
def se3_mul(A, B):
    """Return A * B: the placement of B's frame in A's parent frame."""
    px, py, pz = rot3(A, B[9], B[10], B[11])
    return (A[0] * B[0] + A[1] * B[3] + A[2] * B[6],
            A[0] * B[1] + A[1] * B[4] + A[2] * B[7],
            A[0] * B[2] + A[1] * B[5] + A[2] * B[8],
            A[3] * B[0] + A[4] * B[3] + A[5] * B[6],
            A[3] * B[1] + A[4] * B[4] + A[5] * B[7],
            A[3] * B[2] + A[4] * B[5] + A[5] * B[8],
            A[6] * B[0] + A[7] * B[3] + A[8] * B[6],
            A[6] * B[1] + A[7] * B[4] + A[8] * B[7],
            A[6] * B[2] + A[7] * B[5] + A[8] * B[8],
            px + A[9], py + A[10], pz + A[11])


@helper
def se3_rotate_about_axis(M, ax, ay, az, angle):
    """
    Return M * Rot(axis, angle) for a unit axis (Rodrigues), the revolute joint motion.

    Most robots' axes are ±x, ±y or ±z: those take a 12-multiplication path (as Pinocchio's
    RX/RY/RZ joints do) instead of the 47 operations of the general one.
    """
    if ax == 0.0 and ay == 0.0:                       # ±z: columns 0, 1 turn
        s = math.sin(angle * az)
        c = math.cos(angle * az)
        return (c * M[0] + s * M[1], c * M[1] - s * M[0], M[2],
                c * M[3] + s * M[4], c * M[4] - s * M[3], M[5],
                c * M[6] + s * M[7], c * M[7] - s * M[6], M[8], M[9], M[10], M[11])
    if ax == 0.0 and az == 0.0:                       # ±y: columns 2, 0 turn
        s = math.sin(angle * ay)
        c = math.cos(angle * ay)
        return (c * M[0] - s * M[2], M[1], c * M[2] + s * M[0],
                c * M[3] - s * M[5], M[4], c * M[5] + s * M[3],
                c * M[6] - s * M[8], M[7], c * M[8] + s * M[6], M[9], M[10], M[11])
    if ay == 0.0 and az == 0.0:                       # ±x: columns 1, 2 turn
        s = math.sin(angle * ax)
        c = math.cos(angle * ax)
        return (M[0], c * M[1] + s * M[2], c * M[2] - s * M[1],
                M[3], c * M[4] + s * M[5], c * M[5] - s * M[4],
                M[6], c * M[7] + s * M[8], c * M[8] - s * M[7], M[9], M[10], M[11])
    s = math.sin(angle)
    c = math.cos(angle)
    t = 1.0 - c
    r00 = c + t * ax * ax
    r11 = c + t * ay * ay
    r22 = c + t * az * az
    txy = t * ax * ay
    txz = t * ax * az
    tyz = t * ay * az
    r01 = txy - s * az
    r10 = txy + s * az
    r02 = txz + s * ay
    r20 = txz - s * ay
    r12 = tyz - s * ax
    r21 = tyz + s * ax
    return (M[0] * r00 + M[1] * r10 + M[2] * r20,
            M[0] * r01 + M[1] * r11 + M[2] * r21,
            M[0] * r02 + M[1] * r12 + M[2] * r22,
            M[3] * r00 + M[4] * r10 + M[5] * r20,
            M[3] * r01 + M[4] * r11 + M[5] * r21,
            M[3] * r02 + M[4] * r12 + M[5] * r22,
            M[6] * r00 + M[7] * r10 + M[8] * r20,
            M[6] * r01 + M[7] * r11 + M[8] * r21,
            M[6] * r02 + M[7] * r12 + M[8] * r22,
            M[9], M[10], M[11])


@helper
def se3_translate_along_axis(M, ax, ay, az, d):
    """M * Trans(axis * d), the prismatic joint motion."""
    px, py, pz = rot3(M, ax * d, ay * d, az * d)
    return (M[0], M[1], M[2], M[3], M[4], M[5], M[6], M[7], M[8],
            M[9] + px, M[10] + py, M[11] + pz)


@helper
def se3_from_quaternion(x, y, z, qx, qy, qz, qw):
    """Placement from a translation and a unit quaternion (x, y, z, w)."""
    xx = qx * qx
    yy = qy * qy
    zz = qz * qz
    xy = qx * qy
    xz = qx * qz
    yz = qy * qz
    wx = qw * qx
    wy = qw * qy
    wz = qw * qz
    return (1.0 - 2.0 * (yy + zz), 2.0 * (xy - wz), 2.0 * (xz + wy),
            2.0 * (xy + wz), 1.0 - 2.0 * (xx + zz), 2.0 * (yz - wx),
            2.0 * (xz - wy), 2.0 * (yz + wx), 1.0 - 2.0 * (xx + yy),
            x, y, z)


# -- motions and forces ------------------------------------------------------------------
@helper
def load6(arr, i, off):
    return (arr[i, off], arr[i, off + 1], arr[i, off + 2], arr[i, off + 3], arr[i, off + 4],
            arr[i, off + 5])


@helper
def add6(a, b):
    return a[0] + b[0], a[1] + b[1], a[2] + b[2], a[3] + b[3], a[4] + b[4], a[5] + b[5]


@helper
def sub6(a, b):
    return a[0] - b[0], a[1] - b[1], a[2] - b[2], a[3] - b[3], a[4] - b[4], a[5] - b[5]


@helper
def axpy6(s, a, b):
    """Return s * a + b."""
    return (s * a[0] + b[0], s * a[1] + b[1], s * a[2] + b[2],
            s * a[3] + b[3], s * a[4] + b[4], s * a[5] + b[5])


@helper
def scale6(s, a):
    return s * a[0], s * a[1], s * a[2], s * a[3], s * a[4], s * a[5]


@helper
def dot6(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3] + a[4] * b[4] + a[5] * b[5]


@helper
def act_motion(M, m):
    """Express a motion given in the child frame in the parent frame (Ad_M m)."""
    wx, wy, wz = rot3(M, m[3], m[4], m[5])
    vx, vy, vz = rot3(M, m[0], m[1], m[2])
    cx, cy, cz = cross3(M[9], M[10], M[11], wx, wy, wz)
    return vx + cx, vy + cy, vz + cz, wx, wy, wz


@helper
def act_inv_motion(M, m):
    """Express a motion given in the parent frame in the child frame."""
    cx, cy, cz = cross3(M[9], M[10], M[11], m[3], m[4], m[5])
    vx, vy, vz = rot3_t(M, m[0] - cx, m[1] - cy, m[2] - cz)
    wx, wy, wz = rot3_t(M, m[3], m[4], m[5])
    return vx, vy, vz, wx, wy, wz


@helper
def act_force(M, f):
    """Express a force given in the child frame in the parent frame (Ad_M^-T f)."""
    fx, fy, fz = rot3(M, f[0], f[1], f[2])
    nx, ny, nz = rot3(M, f[3], f[4], f[5])
    cx, cy, cz = cross3(M[9], M[10], M[11], fx, fy, fz)
    return fx, fy, fz, nx + cx, ny + cy, nz + cz


@helper
def act_inv_force(M, f):
    """Express a force given in the parent frame in the child frame."""
    cx, cy, cz = cross3(M[9], M[10], M[11], f[0], f[1], f[2])
    fx, fy, fz = rot3_t(M, f[0], f[1], f[2])
    nx, ny, nz = rot3_t(M, f[3] - cx, f[4] - cy, f[5] - cz)
    return fx, fy, fz, nx, ny, nz


@helper
def cross_motion(m, n):
    """Return m × n (motion on motion)."""
    ax, ay, az = cross3(m[3], m[4], m[5], n[0], n[1], n[2])
    bx, by, bz = cross3(m[0], m[1], m[2], n[3], n[4], n[5])
    wx, wy, wz = cross3(m[3], m[4], m[5], n[3], n[4], n[5])
    return ax + bx, ay + by, az + bz, wx, wy, wz


@helper
def cross_force(m, f):
    """Return m ×* f (motion on force)."""
    fx, fy, fz = cross3(m[3], m[4], m[5], f[0], f[1], f[2])
    ax, ay, az = cross3(m[3], m[4], m[5], f[3], f[4], f[5])
    bx, by, bz = cross3(m[0], m[1], m[2], f[0], f[1], f[2])
    return fx, fy, fz, ax + bx, ay + by, az + bz


# -- rigid-body inertias in the θ layout -------------------------------------------------
@helper
def load10(arr, i, off):
    return (arr[i, off], arr[i, off + 1], arr[i, off + 2], arr[i, off + 3], arr[i, off + 4],
            arr[i, off + 5], arr[i, off + 6], arr[i, off + 7], arr[i, off + 8], arr[i, off + 9])


@helper
def add10(a, b):
    return (a[0] + b[0], a[1] + b[1], a[2] + b[2], a[3] + b[3], a[4] + b[4],
            a[5] + b[5], a[6] + b[6], a[7] + b[7], a[8] + b[8], a[9] + b[9])


@helper
def inertia_apply(th, m):
    """I m: the momentum of a body of inertia I (θ layout ``th``) moving with twist m."""
    mass = th[0]
    hx, hy, hz = th[1], th[2], th[3]
    vx, vy, vz, wx, wy, wz = m
    cx, cy, cz = cross3(hx, hy, hz, wx, wy, wz)
    ax, ay, az = cross3(hx, hy, hz, vx, vy, vz)
    return (mass * vx - cx, mass * vy - cy, mass * vz - cz,
            th[4] * wx + th[5] * wy + th[7] * wz + ax,
            th[5] * wx + th[6] * wy + th[8] * wz + ay,
            th[7] * wx + th[8] * wy + th[9] * wz + az)


@helper
def inertia_act(M, th):
    """
    Express an inertia ``th`` given in the child frame in the parent frame (θ layout).

    The first moment is rotated then shifted; the rotational inertia is rotated and then
    moved to the parent origin: I' = R I Rᵀ + m(|p|² 1 - p pᵀ) + 2(p·h')1 - p h'ᵀ - h' pᵀ,
    with h' = R h (the parallel-axis theorem written for the first moment).
    """
    mass = th[0]
    hx, hy, hz = rot3(M, th[1], th[2], th[3])
    px, py, pz = M[9], M[10], M[11]
    # T = R I (row-major), then R I Rᵀ = T Rᵀ (symmetric: six entries)
    ixx, ixy, iyy, ixz, iyz, izz = th[4], th[5], th[6], th[7], th[8], th[9]
    t00 = M[0] * ixx + M[1] * ixy + M[2] * ixz
    t01 = M[0] * ixy + M[1] * iyy + M[2] * iyz
    t02 = M[0] * ixz + M[1] * iyz + M[2] * izz
    t10 = M[3] * ixx + M[4] * ixy + M[5] * ixz
    t11 = M[3] * ixy + M[4] * iyy + M[5] * iyz
    t12 = M[3] * ixz + M[4] * iyz + M[5] * izz
    t20 = M[6] * ixx + M[7] * ixy + M[8] * ixz
    t21 = M[6] * ixy + M[7] * iyy + M[8] * iyz
    t22 = M[6] * ixz + M[7] * iyz + M[8] * izz
    rxx = t00 * M[0] + t01 * M[1] + t02 * M[2]
    rxy = t00 * M[3] + t01 * M[4] + t02 * M[5]
    ryy = t10 * M[3] + t11 * M[4] + t12 * M[5]
    rxz = t00 * M[6] + t01 * M[7] + t02 * M[8]
    ryz = t10 * M[6] + t11 * M[7] + t12 * M[8]
    rzz = t20 * M[6] + t21 * M[7] + t22 * M[8]
    # parallel-axis terms with a = m p + 2 h':  m(|p|²1 - ppᵀ) + 2(p·h')1 - p h'ᵀ - h' pᵀ
    pp = px * px + py * py + pz * pz
    ph = px * hx + py * hy + pz * hz
    diag = mass * pp + 2.0 * ph
    return (mass, hx + mass * px, hy + mass * py, hz + mass * pz,
            rxx + diag - mass * px * px - 2.0 * px * hx,
            rxy - mass * px * py - px * hy - hx * py,
            ryy + diag - mass * py * py - 2.0 * py * hy,
            rxz - mass * px * pz - px * hz - hx * pz,
            ryz - mass * py * pz - py * hz - hy * pz,
            rzz + diag - mass * pz * pz - 2.0 * pz * hz)


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
