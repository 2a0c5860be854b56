"""
Planar joint (URDF "planar"): the body slides and turns in the joint frame's x-y plane.

q = [x, y, cos θ, sin θ] (Pinocchio's ``JointModelPlanar``), v = [v_x, v_y, ω] in the
body's own frame; S = the columns (linear x, linear y, angular z), constant in the body
frame. X_J = (R_z(θ), (x, y, 0)); the body frame's motion is q ⊕ v = M(q) exp(v) on SE(2).
Like the free flyer it is a base only (the tree's root, hung from the world or from a
massless root link): a mobile base on the floor. URDF's ``<axis>`` (the plane's normal)
must be the joint frame's z, as Pinocchio reads it; its ``<limit>`` is not read.
"""
import math

import numpy as np

from ..._jit import helper
from . import body_fixed
from .kind import JointKind
from ..layout import P_IQ, P_IV, P_PLACEMENT
from ..se3 import se3_load, se3_mul

CODE = 3
# the columns of S in the body frame: linear x, linear y, angular z
MOTIONS = ((1.0, 0.0, 0.0, 0.0, 0.0, 0.0), (0.0, 1.0, 0.0, 0.0, 0.0, 0.0),
           (0.0, 0.0, 0.0, 0.0, 0.0, 1.0))


def neutral():
    """Return q at rest: at the origin, θ = 0."""
    return np.array([0.0, 0.0, 1.0, 0.0])


def random(rng, lower, upper):
    """Draw x, y in the unit box and θ uniform in [-π, π) (limits are not read)."""
    x, y = rng.uniform(-1.0, 1.0, size=2)
    theta = rng.uniform(-np.pi, np.pi)
    return np.array([x, y, np.cos(theta), np.sin(theta)])


def subspace(axis):
    """S (6 × 3) in the body frame (the axis is the plane's normal, z: unused)."""
    return np.array(MOTIONS).T


KIND = JointKind(code=CODE, name="planar", urdf_types=("planar",),
                 nq=4, nv=3, root_only=True, axis_motion=None,
                 unit_part=(2, 2, "direction (cos θ, sin θ)"), only_axis=(0.0, 0.0, 1.0),
                 neutral=neutral, random=random)


@helper
def unit_direction(q, iq):
    """Return (cos θ, sin θ) from q[iq+2 : iq+4], normalized (scaled by the larger first)."""
    c, s = q[iq + 2], q[iq + 3]
    big = max(abs(c), abs(s))
    c, s = c / big, s / big
    r = 1.0 / math.sqrt(c * c + s * s)
    return c * r, s * r


@helper
def placement_local(packed, q, i):
    """^λX_i = X_T X_J: the fixed placement, then the turn and the slide in its x-y plane."""
    iq = int(packed[i, P_IQ])
    c, s = unit_direction(q, iq)
    XJ = (c, -s, 0.0, s, c, 0.0, 0.0, 0.0, 1.0, q[iq], q[iq + 1], 0.0)
    return se3_mul(se3_load(packed, i, P_PLACEMENT), XJ)


@helper
def local_motion(x, iv):
    """S x[iv : iv+3] in the body frame."""
    return x[iv], x[iv + 1], 0.0, 0.0, 0.0, x[iv + 2]


@helper
def tangent(packed, i, x):
    """Return the three entries of x."""
    iv = int(packed[i, P_IV])
    return x[iv], x[iv + 1], x[iv + 2], 0.0, 0.0, 0.0


jcalc_local, motion, subspace_column, local_subspace_column = body_fixed.subspace_pieces(
    placement_local, local_motion, MOTIONS)
jcalc, world_from_local = body_fixed.placement_pieces(placement_local)


@helper
def force_local(packed, i, f):
    """Sᵀ f = (f_x, f_y, n_z), f in the body frame."""
    return f[0], f[1], f[5], 0.0, 0.0, 0.0


@helper
def integrate(packed, q, i, d, out):
    """
    Move to M exp(d) on SE(2), d = (v_x, v_y, ω) in the body frame (Pinocchio's ``integrate``).

    The slide is V(ω) (v_x, v_y) in the body frame, V = [[a, -b], [b, a]] with a = sin ω / ω,
    b = (1 - cos ω) / ω; the direction turns by ω and is normalized.
    """
    iq = int(packed[i, P_IQ])
    c, s = unit_direction(q, iq)
    vx, vy, w = d[0], d[1], d[2]
    if abs(w) < 1e-8:                # series of the two ratios
        a, b = 1.0 - w * w / 6.0, 0.5 * w
    else:
        a, b = math.sin(w) / w, (1.0 - math.cos(w)) / w
    tx, ty = a * vx - b * vy, b * vx + a * vy
    out[iq] = q[iq] + c * tx - s * ty
    out[iq + 1] = q[iq + 1] + s * tx + c * ty
    cw, sw = math.cos(w), math.sin(w)
    nc, ns = c * cw - s * sw, s * cw + c * sw
    r = 1.0 / math.sqrt(nc * nc + ns * ns)
    out[iq + 2] = nc * r
    out[iq + 3] = ns * r
