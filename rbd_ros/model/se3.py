"""
Placements (SE(3)) and 3-vectors for the kernels, on tuples of scalars; tuples into arrays.

A placement M = (R00, R01, R02, R10, R11, R12, R20, R21, R22, px, py, pz) maps child
coordinates to parent coordinates: x_parent = R x_child + p (as Pinocchio's SE3).
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
