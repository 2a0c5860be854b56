"""
Free-flyer joint: the floating base, only as the tree's root.

q = [x, y, z, qx, qy, qz, qw] (position, unit quaternion), v = [v_lin, ω] in the base frame;
S = the identity in the base frame, Ad(oM) in the world. Built by ``load_model(...,
floating_base=True)``, or from a URDF ``floating`` joint whose parent is the (massless) root
link.

Its world placement is its rotation only: the world-frame algorithms run in the world
translated to the base. Nothing they return depends on that translation (gravity is uniform;
external forces are given in body frames; v is in the base frame), while world-frame terms such
as m |p|² in a moved inertia lose precision with the distance: with the position kept, M⁻¹
lost 4e-6 relative at 1e4 m and 3e-2 at 1e6 m (quadruped).
"""
import math

import numpy as np

from ..._jit import helper
from . import body_fixed
from .axis_joint import random_in_limits
from .kind import JointKind
from ..layout import P_IQ, P_IV
from ..matrix6 import load6_vector
from ..se3 import cross3, rot3, se3_from_quaternion

CODE = 2
UNIT_MOTIONS = ((1.0, 0.0, 0.0, 0.0, 0.0, 0.0), (0.0, 1.0, 0.0, 0.0, 0.0, 0.0),
                (0.0, 0.0, 1.0, 0.0, 0.0, 0.0), (0.0, 0.0, 0.0, 1.0, 0.0, 0.0),
                (0.0, 0.0, 0.0, 0.0, 1.0, 0.0), (0.0, 0.0, 0.0, 0.0, 0.0, 1.0))


def neutral():
    """Return q at rest: at the origin, the identity quaternion."""
    return np.array([0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0])


def random(rng, lower, upper):
    """Draw a uniform unit quaternion, then a position within the limits (else the unit box)."""
    quaternion = rng.normal(size=4)
    position = random_in_limits(rng, lower[:3], upper[:3], 1.0)
    return np.concatenate([position, quaternion / np.linalg.norm(quaternion)])


def subspace(axis):
    """S (6 × 6) in the base frame: the identity (the axis is unused)."""
    return np.eye(6)


KIND = JointKind(code=CODE, name="free_flyer", urdf_types=("floating",),
                 nq=7, nv=6, root_only=True, axis_motion=None, unit_part=(3, 4, "quaternion"),
                 position_left_out=True,
                 neutral=neutral, random=random)


@helper
def unit_quaternion(q, iq):
    """
    Return the quaternion q[iq+3 : iq+7] normalized.

    A slightly denormalized one from a sensor gives a proper rotation; the entries are scaled
    by the largest first, so that a huge one (1e200) does not overflow when squared.
    """
    qx, qy, qz, qw = q[iq + 3], q[iq + 4], q[iq + 5], q[iq + 6]
    big = max(abs(qx), abs(qy), abs(qz), abs(qw))
    qx, qy, qz, qw = qx / big, qy / big, qz / big, qw / big
    s = 1.0 / math.sqrt(qx * qx + qy * qy + qz * qz + qw * qw)
    return qx * s, qy * s, qz * s, qw * s


@helper
def placement_local(packed, q, i):
    """Return the placement in the world, its quaternion normalized."""
    iq = int(packed[i, P_IQ])
    qx, qy, qz, qw = unit_quaternion(q, iq)
    return se3_from_quaternion(q[iq], q[iq + 1], q[iq + 2], qx, qy, qz, qw)


@helper
def jcalc(packed, q, i, oM_parent):
    """(rotation only, unused oS): S is the placement's adjoint itself."""
    qx, qy, qz, qw = unit_quaternion(q, int(packed[i, P_IQ]))
    return se3_from_quaternion(0.0, 0.0, 0.0, qx, qy, qz, qw), body_fixed.ZERO6


@helper
def tangent(packed, i, x):
    """Return the six entries of x."""
    return load6_vector(x, int(packed[i, P_IV]))


jcalc_local, motion, subspace_column, local_subspace_column = body_fixed.subspace_pieces(
    placement_local, load6_vector, UNIT_MOTIONS)


@helper
def world_from_local(packed, i, oM_parent, X):
    """Its rotation only, as ``jcalc``."""
    return (X[0], X[1], X[2], X[3], X[4], X[5], X[6], X[7], X[8], 0.0, 0.0, 0.0), body_fixed.ZERO6


@helper
def force_local(packed, i, f):
    """Sᵀ f = f."""
    return f


@helper
def integrate(packed, q, i, d, out):
    """
    Move to M exp(d), d = (linear, angular) in the base frame (Pinocchio's ``integrate``).

    The quaternion is multiplied by (sin(θ/2) ω/θ, cos(θ/2)), normalized, kept in the input's
    hemisphere, and the origin moves by R V(ω) v, V = 1 + b [ω]× + c [ω]×²,
    b = (1 - cos θ)/θ², c = (θ - sin θ)/θ³.
    """
    iq = int(packed[i, P_IQ])
    M = placement_local(packed, q, i)
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
