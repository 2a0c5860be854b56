"""
Every joint kind in one place: its placement (jcalc), S·x, Sᵀf and its tangent step.

The algorithms never branch on the joint kind themselves; they ask this module. A joint
has ``joint_nv`` degrees of freedom (1 for revolute and prismatic, 6 for the free-flyer
root) and, for each, a column S_k of its motion subspace. Results that depend on the
number of degrees of freedom come as 6-tuples whose first ``joint_nv`` entries are used, so
that one compiled code path serves every kind (numba needs one tuple type per variable).

Kinds (``rbd_ros.model``): REVOLUTE (also URDF "continuous"): S = the unit axis, angular;
PRISMATIC: S = the unit axis, linear; FREE_FLYER (the root only): S = Ad(oM), the six
base-frame unit twists expressed in the world, q = [p, quaternion (x, y, z, w)].

A new kind is added here: its branches of ``joint_nv``, ``joint_spans_all_motions``,
``joint_nq``, ``base_sizes``,
``zero_quaternion``, ``jcalc``, ``joint_placement_local``, ``jcalc_local``, ``joint_motion``,
``joint_tangent``, ``subspace_column``, ``local_subspace_column``, ``local_subspace_1dof``,
``joint_rotates``, ``joint_force_local``, ``world_subspace_1dof``,
``world_placement_from_local``, ``world_subspace``, ``world_force_projection`` and
``joint_integrate`` (and, for a multi-dof kind that is not the root, of
``joint_inv_motion``/``joint_force_in_world``, which the root solves of ABA and M⁻¹ use);
``ONE_DOF_KINDS`` lists the kinds that the generated kernels (``rbd_ros.specialized``) write
out, from ``local_subspace_1dof`` and ``joint_rotates``.
Sᵀ f of a world-frame force is ``subspace_column``·f, or ``world_force_projection``.
"""
import math
import numpy as np

from .._jit import helper
from ..model.layout import (FREE_FLYER, P_AXIS, P_IQ, P_IV, P_PLACEMENT, P_TYPE, PRISMATIC,
                            REVOLUTE, W_OM, W_OS)
from ..model.spatial import act_force, act_inv_force, act_inv_motion, act_motion, load6
from ..model.se3 import (cross3, rot3, se3_from_quaternion, se3_load, se3_mul,
                         se3_rotate_about_axis, se3_translate_along_axis)
from ..model.matrix6 import load6_vector

UNIT_MOTIONS = ((1.0, 0.0, 0.0, 0.0, 0.0, 0.0), (0.0, 1.0, 0.0, 0.0, 0.0, 0.0),
                (0.0, 0.0, 1.0, 0.0, 0.0, 0.0), (0.0, 0.0, 0.0, 1.0, 0.0, 0.0),
                (0.0, 0.0, 0.0, 0.0, 1.0, 0.0), (0.0, 0.0, 0.0, 0.0, 0.0, 1.0))
ZERO6 = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
IDENTITY_SE3 = (1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0)
ONE_DOF_KINDS = (REVOLUTE, PRISMATIC)


@helper
def joint_nv(packed, i):
    """Return the number of degrees of freedom (entries of v) of the joint of body i."""
    return 6 if int(packed[i, P_TYPE]) == FREE_FLYER else 1


@helper
def joint_spans_all_motions(packed, i):
    """
    Return whether the joint of body i spans every motion (S is 6 × 6 and invertible).

    Only the free-flyer root does. ABA and M⁻¹ then factorize its articulated inertia and
    solve its six accelerations at once, where a 1-dof joint has the scalar D = Sᵀ I^A S.
    """
    return int(packed[i, P_TYPE]) == FREE_FLYER


@helper
def joint_nq(packed, i):
    """Return the number of entries of q of the joint of body i."""
    return 7 if int(packed[i, P_TYPE]) == FREE_FLYER else 1


@helper
def base_sizes(packed):
    """Return (nq_base, nv_base): the root's entries of q and v if it floats, else (0, 0)."""
    if packed.shape[0] > 1 and int(packed[0, P_TYPE]) == FREE_FLYER:
        return 7, 6
    return 0, 0


@helper
def zero_quaternion(packed, q):
    """Whether the free-flyer root's quaternion in q is (almost) zero: no rotation at all."""
    if base_sizes(packed)[0] == 0:
        return False
    return q[3] * q[3] + q[4] * q[4] + q[5] * q[5] + q[6] * q[6] < 1e-12


@helper
def joint_rotates(kind):
    """Whether a 1-dof joint of ``kind`` rotates about its axis (else it slides along it)."""
    return kind != PRISMATIC


def motion_subspace(kind, axis):
    """
    Return S (6 × nv) of a joint of ``kind`` in its own frame, as a numpy array (not compiled).

    For Python code outside the kernels that needs a joint's motions (the description's checks):
    the free flyer moves along every motion (S = I), a 1-dof joint along its axis.
    """
    if kind == FREE_FLYER:
        return np.eye(6)
    return np.array(local_subspace_1dof.py_func(kind, *axis)).reshape(6, 1)


@helper
def local_subspace_1dof(kind, ax, ay, az):
    """S of a 1-dof joint in its own frame: the axis, linear (prismatic) or angular."""
    if joint_rotates(kind):
        return 0.0, 0.0, 0.0, ax, ay, az
    return ax, ay, az, 0.0, 0.0, 0.0


@helper
def unit_quaternion(q, iq):
    """
    Return the free-flyer quaternion q[iq+3 : iq+7] normalized.

    A slightly denormalized one from a sensor gives a proper rotation; the entries are scaled
    by the largest first, so that a huge one (1e200) does not overflow when squared.
    """
    qx, qy, qz, qw = q[iq + 3], q[iq + 4], q[iq + 5], q[iq + 6]
    big = max(abs(qx), abs(qy), abs(qz), abs(qw))
    qx, qy, qz, qw = qx / big, qy / big, qz / big, qw / big
    s = 1.0 / math.sqrt(qx * qx + qy * qy + qz * qz + qw * qw)
    return qx * s, qy * s, qz * s, qw * s


@helper
def free_flyer_placement(q, iq):
    """Return the world placement of a free-flyer body (its quaternion normalized)."""
    qx, qy, qz, qw = unit_quaternion(q, iq)
    return se3_from_quaternion(q[iq], q[iq + 1], q[iq + 2], qx, qy, qz, qw)


@helper
def jcalc(packed, q, i, oM_parent):
    """
    Return (oMi, oS): world placement of body i and its world-frame subspace (1-dof joints).

    For the free-flyer root oS is unused: its subspace is the placement's adjoint itself.
    Its position is left out: the world-frame algorithms then run in the world translated to
    the base. Nothing they return depends on that translation (gravity is uniform; external
    forces are given in body frames; v is in the base frame), while world-frame terms such as
    m |p|² in a moved inertia lose precision with the distance: with the position kept, M⁻¹
    lost 4e-6 relative at 1e4 m and 3e-2 at 1e6 m (quadruped).
    """
    kind = int(packed[i, P_TYPE])
    if kind == FREE_FLYER:
        qx, qy, qz, qw = unit_quaternion(q, int(packed[i, P_IQ]))
        return se3_from_quaternion(0.0, 0.0, 0.0, qx, qy, qz, qw), ZERO6
    oMt = se3_mul(oM_parent, se3_load(packed, i, P_PLACEMENT))   # X_T: the fixed placement
    lx, ly, lz = packed[i, P_AXIS], packed[i, P_AXIS + 1], packed[i, P_AXIS + 2]
    ax, ay, az = rot3(oMt, lx, ly, lz)   # world-frame axis
    qi = q[int(packed[i, P_IQ])]
    if joint_rotates(kind):
        oM = se3_rotate_about_axis(oMt, lx, ly, lz, qi)
    else:
        oM = se3_translate_along_axis(oMt, lx, ly, lz, qi)
    return oM, world_subspace_1dof(kind, oM, ax, ay, az)


@helper
def world_subspace_1dof(kind, oM, ax, ay, az):
    """
    Return the world-frame subspace of a 1-dof joint with world axis a, placed at oM.

    Prismatic: the axis, linear; revolute: a rotation about the line through oM's origin
    along a (linear part p × a).
    """
    if kind == PRISMATIC:
        return ax, ay, az, 0.0, 0.0, 0.0
    lx, ly, lz = cross3(oM[9], oM[10], oM[11], ax, ay, az)
    return lx, ly, lz, ax, ay, az


@helper
def joint_placement_local(packed, q, i):
    """
    Return ^λX_i = X_T X_J(q_i), the placement of body i in its parent's frame.

    The free-flyer root's is its placement in the world, its quaternion normalized.
    """
    kind = int(packed[i, P_TYPE])
    iq = int(packed[i, P_IQ])
    if kind == FREE_FLYER:
        return free_flyer_placement(q, iq)
    qi = q[iq]
    XT = se3_load(packed, i, P_PLACEMENT)
    ax, ay, az = packed[i, P_AXIS], packed[i, P_AXIS + 1], packed[i, P_AXIS + 2]
    if joint_rotates(kind):
        return se3_rotate_about_axis(XT, ax, ay, az, qi)
    return se3_translate_along_axis(XT, ax, ay, az, qi)


@helper
def jcalc_local(packed, q, v, a, i):
    """
    Return (X, v_J, S q̈) of body i in its own frame.

    X = ^λX_i (``joint_placement_local``); v_J = S q̇ and S q̈ with S the unit axis (angular
    for a revolute joint, linear for a prismatic one; the identity for the free-flyer root).
    """
    X = joint_placement_local(packed, q, i)
    kind = int(packed[i, P_TYPE])
    iv = int(packed[i, P_IV])
    if kind == FREE_FLYER:
        return X, load6_vector(v, iv), load6_vector(a, iv)
    ax, ay, az = packed[i, P_AXIS], packed[i, P_AXIS + 1], packed[i, P_AXIS + 2]
    if kind == PRISMATIC:
        return (X, (ax * v[iv], ay * v[iv], az * v[iv], 0.0, 0.0, 0.0),
                (ax * a[iv], ay * a[iv], az * a[iv], 0.0, 0.0, 0.0))
    return (X, (0.0, 0.0, 0.0, ax * v[iv], ay * v[iv], az * v[iv]),
            (0.0, 0.0, 0.0, ax * a[iv], ay * a[iv], az * a[iv]))


@helper
def joint_motion(packed, i, oM, oS, x):
    """
    Return S x[idx_v(i) : idx_v(i) + joint_nv] in the world frame.

    x: a velocity, an acceleration or a column of them.
    """
    iv = int(packed[i, P_IV])
    if int(packed[i, P_TYPE]) == FREE_FLYER:
        return act_motion(oM, load6_vector(x, iv))     # x given in the base frame
    s = x[iv]
    return oS[0] * s, oS[1] * s, oS[2] * s, oS[3] * s, oS[4] * s, oS[5] * s


@helper
def joint_tangent(packed, i, x):
    """x[idx_v(i) : idx_v(i) + joint_nv] as the first entries of a 6-tuple."""
    iv = int(packed[i, P_IV])
    if int(packed[i, P_TYPE]) == FREE_FLYER:
        return load6_vector(x, iv)
    return x[iv], 0.0, 0.0, 0.0, 0.0, 0.0


@helper
def subspace_column(packed, i, k, oM, oS):
    """Column k of the world-frame motion subspace of body i at placement oM (1-dof: oS)."""
    if int(packed[i, P_TYPE]) == FREE_FLYER:
        return act_motion(oM, UNIT_MOTIONS[k])
    return oS


@helper
def world_placement_from_local(packed, i, oM_parent, X):
    """
    Return what ``jcalc`` returns, (oMi, oS), from body i's local ^λX_i (``jcalc_local``'s).

    No second evaluation of the joint's transform (its sine and cosine): oMi = oM_λ ^λX_i,
    the axis the same before and after the joint's own motion. The free-flyer root keeps
    its rotation only: the world translated to the base, as in ``jcalc``.
    """
    kind = int(packed[i, P_TYPE])
    if kind == FREE_FLYER:
        return (X[0], X[1], X[2], X[3], X[4], X[5], X[6], X[7], X[8], 0.0, 0.0, 0.0), ZERO6
    oM = se3_mul(oM_parent, X)
    ax, ay, az = rot3(oM, packed[i, P_AXIS], packed[i, P_AXIS + 1], packed[i, P_AXIS + 2])
    return oM, world_subspace_1dof(kind, oM, ax, ay, az)


@helper
def world_subspace(packed, ws, j):
    """
    Return (joint_nv, oM, oS): what Sᵀ f needs of body j's joint, f a world-frame force.

    From the workspace's world placement (W_OM, the free-flyer root) and 1-dof subspace
    (W_OS), read once, then applied to many forces (``world_force_projection``).
    """
    if int(packed[j, P_TYPE]) == FREE_FLYER:
        return 6, se3_load(ws, j, W_OM), ZERO6
    return 1, IDENTITY_SE3, load6(ws, j, W_OS)


@helper
def world_force_projection(subspace, f):
    """Sᵀ f (first joint_nv entries of the 6-tuple) for a ``world_subspace``, f in the world."""
    nv, oM, oS = subspace
    if nv == 6:
        return act_inv_force(oM, f)                  # the wrench in the base frame
    return (oS[0] * f[0] + oS[1] * f[1] + oS[2] * f[2] + oS[3] * f[3] + oS[4] * f[4]
            + oS[5] * f[5]), 0.0, 0.0, 0.0, 0.0, 0.0


@helper
def local_subspace_column(packed, i, k):
    """Column k of the motion subspace of body i's joint in its own frame (S of jcalc_local)."""
    kind = int(packed[i, P_TYPE])
    if kind == FREE_FLYER:
        return UNIT_MOTIONS[k]
    return local_subspace_1dof(kind, packed[i, P_AXIS], packed[i, P_AXIS + 1],
                               packed[i, P_AXIS + 2])


@helper
def joint_force_local(packed, i, f):
    """
    Sᵀ f for a force f in body i's own frame (first joint_nv entries of the 6-tuple).

    For a 1-dof joint Sᵀ f = axis · f[off : off + 3], off = 0 (prismatic: the linear part) or
    3 (revolute: the angular part); the free-flyer root's S is the identity.
    """
    kind = int(packed[i, P_TYPE])
    if kind == FREE_FLYER:
        return f
    off = 0 if kind == PRISMATIC else 3
    t = (packed[i, P_AXIS] * f[off] + packed[i, P_AXIS + 1] * f[off + 1]
         + packed[i, P_AXIS + 2] * f[off + 2])
    return t, 0.0, 0.0, 0.0, 0.0, 0.0


@helper
def joint_inv_motion(packed, i, oM, m):
    """
    Return the joint velocity (first joint_nv entries) whose motion S q̇ is the world motion m.

    For the multi-dof root: S⁻¹ m = m in the base frame. (1-dof joints never need it.)
    """
    return act_inv_motion(oM, m)


@helper
def joint_force_in_world(packed, i, oM, t):
    """S⁻ᵀ t for the multi-dof root: its joint wrench t (base frame) in the world frame."""
    return act_force(oM, t)


@helper
def joint_integrate(packed, q, i, d, out):
    """
    Set out[q range of body i] = that joint's q ⊕ d (Pinocchio's ``integrate``).

    ``d``: the joint's tangent step, the first joint_nv entries of a 6-tuple. A 1-dof joint
    adds d. The free-flyer moves to M exp(d), d = (linear, angular) in the base frame: the
    quaternion is multiplied by (sin(θ/2) ω/θ, cos(θ/2)), normalized, kept in the input's
    hemisphere, and the origin moves by R V(ω) v, V = 1 + b [ω]× + c [ω]×²,
    b = (1 - cos θ)/θ², c = (θ - sin θ)/θ³.
    """
    iq = int(packed[i, P_IQ])
    if int(packed[i, P_TYPE]) != FREE_FLYER:
        out[iq] = q[iq] + d[0]
        return
    M = free_flyer_placement(q, iq)
    vx, vy, vz, wx, wy, wz = d
    theta = math.sqrt(wx * wx + wy * wy + wz * wz)
    if theta < 1e-8:                 # series of the three ratios below
        b, c, s = 0.5 - theta * theta / 24.0, 1.0 / 6.0 - theta * theta / 120.0, \
            0.5 - theta * theta / 48.0
    else:
        b = (1.0 - math.cos(theta)) / (theta * theta)
        c = (theta - math.sin(theta)) / (theta * theta * theta)
        s = math.sin(0.5 * theta) / theta
    ux, uy, uz = cross3(wx, wy, wz, vx, vy, vz)
    tx, ty, tz = cross3(wx, wy, wz, ux, uy, uz)
    px, py, pz = rot3(M, vx + b * ux + c * tx, vy + b * uy + c * ty, vz + b * uz + c * tz)
    out[iq] = q[iq] + px
    out[iq + 1] = q[iq + 1] + py
    out[iq + 2] = q[iq + 2] + pz
    x, y, z, w = unit_quaternion(q, iq)
    ex, ey, ez, ec = s * wx, s * wy, s * wz, math.cos(0.5 * theta)
    nx = w * ex + x * ec + y * ez - z * ey
    ny = w * ey - x * ez + y * ec + z * ex
    nz = w * ez + x * ey - y * ex + z * ec
    nw = w * ec - x * ex - y * ey - z * ez
    sign = -1.0 if nx * x + ny * y + nz * z + nw * w < 0.0 else 1.0   # the input's hemisphere
    scale = sign / math.sqrt(nx * nx + ny * ny + nz * nz + nw * nw)
    out[iq + 3] = nx * scale
    out[iq + 4] = ny * scale
    out[iq + 5] = nz * scale
    out[iq + 6] = nw * scale
