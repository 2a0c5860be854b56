"""
Spatial algebra for the kernels, on tuples of scalars: motions, forces, inertias.

Placements and 3-vectors are in :mod:`rbd_ros.model.se3`, 6×6 matrices (articulated
inertias) in :mod:`rbd_ros.model.matrix6`.

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
from .._jit import helper
from .se3 import cross3, rot3, rot3_t


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
