"""Pieces every kernel shares: joint calculation (``jcalc``) and input checks.

All kernels work in the world frame (as Pinocchio's do): each body's inertia is moved to the
world once per call, after which forces and inertias of a subtree add up without any
change of frame. ``jcalc`` returns the body placement in the world and, for 1-dof joints,
the joint motion subspace S in the world frame.
"""
import math

from .._jit import helper
from ..model import FREE_FLYER, P_AXIS, P_GRAVITY, P_IQ, P_IV, P_PLACEMENT, P_TYPE, PRISMATIC, W_OA
from ..spatial import (cross3, load6_vector, rot3, se3_from_quaternion, se3_load, se3_mul,
                       se3_rotate_about_axis, se3_translate_along_axis)

IDENTITY = (1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0)

# status codes returned by kernels: argument position * 4 + kind (see rbd_ros._checks)
WRONG_SIZE = 1
NOT_FINITE = 2
ZERO_QUATERNION = 3


@helper
def model_sizes(packed):
    """(nbodies, nq, nv) from the packed model table."""
    nb = packed.shape[0] - 1
    if nb == 0:
        return 0, 0, 0
    iq = int(packed[nb - 1, P_IQ])
    iv = int(packed[nb - 1, P_IV])
    if int(packed[nb - 1, P_TYPE]) == FREE_FLYER:
        return nb, iq + 7, iv + 6
    return nb, iq + 1, iv + 1


@helper
def set_world(packed, ws):
    """The world row of the workspace: zero velocity, acceleration -gravity (RNEA line 3)."""
    for k in range(3):
        ws[-1, W_OA + k] = -packed[-1, P_GRAVITY + k]


@helper
def check_vector(x, n, position):
    """0 if x has n finite entries, else a status code naming the argument."""
    if x.shape[0] != n:
        return position * 4 + WRONG_SIZE
    for k in range(n):
        if not math.isfinite(x[k]):
            return position * 4 + NOT_FINITE
    return 0


@helper
def check_configuration(packed, q, nq, position):
    """Like check_vector, plus a free-flyer quaternion must not be zero."""
    status = check_vector(q, nq, position)
    if status == 0 and packed.shape[0] > 1 and int(packed[0, P_TYPE]) == FREE_FLYER:
        if q[3] * q[3] + q[4] * q[4] + q[5] * q[5] + q[6] * q[6] < 1e-12:
            return position * 4 + ZERO_QUATERNION
    return status


@helper
def check_forces(fext, nb, position):
    """An empty (0, 6) array stands for no external force."""
    if fext.shape[1] != 6 or (fext.shape[0] != nb and fext.shape[0] != 0):
        return position * 4 + WRONG_SIZE
    if fext.shape[0] == 0:
        return 0
    for i in range(nb):
        for k in range(6):
            if not math.isfinite(fext[i, k]):
                return position * 4 + NOT_FINITE
    return 0


@helper
def free_flyer_placement(q, iq):
    """World placement of a free-flyer body; the quaternion is normalized here, so a
    slightly denormalized one from a sensor gives a proper rotation."""
    qx, qy, qz, qw = q[iq + 3], q[iq + 4], q[iq + 5], q[iq + 6]
    s = 1.0 / math.sqrt(qx * qx + qy * qy + qz * qz + qw * qw)
    return se3_from_quaternion(q[iq], q[iq + 1], q[iq + 2], qx * s, qy * s, qz * s, qw * s)


@helper
def jcalc(packed, q, i, oM_parent):
    """(oMi, oS): world placement of body i and its world-frame motion subspace (1-dof).

    For the free-flyer root oS is unused (its subspace is the placement's adjoint itself).
    """
    kind = int(packed[i, P_TYPE])
    if kind == FREE_FLYER:
        return free_flyer_placement(q, int(packed[i, P_IQ])), (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    oMt = se3_mul(oM_parent, se3_load(packed, i, P_PLACEMENT))   # X_T: the fixed placement
    lx, ly, lz = packed[i, P_AXIS], packed[i, P_AXIS + 1], packed[i, P_AXIS + 2]
    ax, ay, az = rot3(oMt, lx, ly, lz)   # world-frame axis
    qi = q[int(packed[i, P_IQ])]
    if kind == PRISMATIC:
        return se3_translate_along_axis(oMt, lx, ly, lz, qi), (ax, ay, az, 0.0, 0.0, 0.0)
    oM = se3_rotate_about_axis(oMt, lx, ly, lz, qi)
    lx, ly, lz = cross3(oM[9], oM[10], oM[11], ax, ay, az)   # rotation about a line through p
    return oM, (lx, ly, lz, ax, ay, az)


@helper
def jcalc_local(packed, q, v, a, i):
    """(X, v_J, S q̈) of body i in its own frame: X = ^λX_i = X_T X_J(q_i), the placement of
    body i in its parent's frame; v_J = S q̇ and S q̈ with S the unit axis (angular for a
    revolute joint, linear for a prismatic one; the identity for the free-flyer root)."""
    kind = int(packed[i, P_TYPE])
    iv = int(packed[i, P_IV])
    if kind == FREE_FLYER:
        return (free_flyer_placement(q, int(packed[i, P_IQ])), load6_vector(v, iv),
                load6_vector(a, iv))
    ax, ay, az = packed[i, P_AXIS], packed[i, P_AXIS + 1], packed[i, P_AXIS + 2]
    XT = se3_load(packed, i, P_PLACEMENT)
    qi = q[int(packed[i, P_IQ])]
    if kind == PRISMATIC:
        return (se3_translate_along_axis(XT, ax, ay, az, qi),
                (ax * v[iv], ay * v[iv], az * v[iv], 0.0, 0.0, 0.0),
                (ax * a[iv], ay * a[iv], az * a[iv], 0.0, 0.0, 0.0))
    return (se3_rotate_about_axis(XT, ax, ay, az, qi),
            (0.0, 0.0, 0.0, ax * v[iv], ay * v[iv], az * v[iv]),
            (0.0, 0.0, 0.0, ax * a[iv], ay * a[iv], az * a[iv]))
