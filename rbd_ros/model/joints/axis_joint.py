"""
The pieces the 1-dof kinds (revolute, prismatic) share.

One entry in q and v, the unit axis of the joint frame, S the axis as an angular or a linear
motion.

Each function takes ``rotates``, a constant of the calling kind's module, so that the
compiled (inlined) code keeps one branch; :func:`pieces` gives a kind its ten kernel pieces
with its constant bound, so that a 1-dof kind's module is its record and one line.
"""
import numpy as np

from ..._jit import helper
from ..layout import P_AXIS, P_IQ, P_IV, P_PLACEMENT
from ..se3 import (cross3, rot3, se3_load, se3_mul, se3_rotate_about_axis,
                   se3_translate_along_axis)

IDENTITY_SE3 = (1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0)


def random_in_limits(rng, lower, upper, half_width):
    """Return a q uniform within [lower, upper], an unbounded side at ±half_width."""
    lo = np.where(np.isfinite(lower), lower, -half_width)
    hi = np.where(np.isfinite(upper), upper, half_width)
    return rng.uniform(lo, hi)


@helper
def axis(packed, i):
    """Return the unit joint axis of body i in its joint frame."""
    return packed[i, P_AXIS], packed[i, P_AXIS + 1], packed[i, P_AXIS + 2]


@helper
def local_motion(rotates, ax, ay, az, s):
    """S s in the joint's own frame: the axis times s, angular (rotates) or linear."""
    if rotates:
        return 0.0, 0.0, 0.0, ax * s, ay * s, az * s
    return ax * s, ay * s, az * s, 0.0, 0.0, 0.0


@helper
def local_subspace(rotates, ax, ay, az):
    """S of the joint in its own frame."""
    if rotates:
        return 0.0, 0.0, 0.0, ax, ay, az
    return ax, ay, az, 0.0, 0.0, 0.0


@helper
def world_subspace_at(rotates, oM, ax, ay, az):
    """
    Return the world-frame subspace of the joint with world axis a, placed at oM.

    Sliding: the axis, linear; rotating: a rotation about the line through oM's origin
    along a (linear part p × a).
    """
    if not rotates:
        return ax, ay, az, 0.0, 0.0, 0.0
    lx, ly, lz = cross3(oM[9], oM[10], oM[11], ax, ay, az)
    return lx, ly, lz, ax, ay, az


@helper
def move(rotates, XT, ax, ay, az, qi):
    """X_T X_J(q_i): the fixed placement, then the joint's rotation or slide."""
    if rotates:
        return se3_rotate_about_axis(XT, ax, ay, az, qi)
    return se3_translate_along_axis(XT, ax, ay, az, qi)


@helper
def jcalc(rotates, packed, q, i, oM_parent):
    """(oMi, oS): world placement of body i and its world-frame subspace."""
    oMt = se3_mul(oM_parent, se3_load(packed, i, P_PLACEMENT))   # X_T: the fixed placement
    lx, ly, lz = axis(packed, i)
    ax, ay, az = rot3(oMt, lx, ly, lz)   # world-frame axis
    oM = move(rotates, oMt, lx, ly, lz, q[int(packed[i, P_IQ])])
    return oM, world_subspace_at(rotates, oM, ax, ay, az)


@helper
def placement_local(rotates, packed, q, i):
    """^λX_i = X_T X_J(q_i)."""
    ax, ay, az = axis(packed, i)
    return move(rotates, se3_load(packed, i, P_PLACEMENT), ax, ay, az,
                q[int(packed[i, P_IQ])])


@helper
def jcalc_local(rotates, packed, q, v, a, i):
    """(X, v_J, S q̈) in the joint's own frame."""
    X = placement_local(rotates, packed, q, i)
    iv = int(packed[i, P_IV])
    ax, ay, az = axis(packed, i)
    return X, local_motion(rotates, ax, ay, az, v[iv]), local_motion(rotates, ax, ay, az, a[iv])


@helper
def motion(packed, i, oS, x):
    """S x[idx_v(i)] in the world frame, oS the world subspace."""
    s = x[int(packed[i, P_IV])]
    return oS[0] * s, oS[1] * s, oS[2] * s, oS[3] * s, oS[4] * s, oS[5] * s


@helper
def tangent(packed, i, x):
    """x[idx_v(i)] as the first entry of a 6-tuple."""
    return x[int(packed[i, P_IV])], 0.0, 0.0, 0.0, 0.0, 0.0


@helper
def world_from_local(rotates, packed, i, oM_parent, X):
    """(oMi, oS) from ^λX_i: no second evaluation of the joint's sine and cosine."""
    oM = se3_mul(oM_parent, X)
    lx, ly, lz = axis(packed, i)
    ax, ay, az = rot3(oM, lx, ly, lz)
    return oM, world_subspace_at(rotates, oM, ax, ay, az)


@helper
def force_local(rotates, packed, i, f):
    """Sᵀ f, f in the joint's own frame: axis · f's angular (rotates) or linear part."""
    off = 3 if rotates else 0
    t = (packed[i, P_AXIS] * f[off] + packed[i, P_AXIS + 1] * f[off + 1]
         + packed[i, P_AXIS + 2] * f[off + 2])
    return t, 0.0, 0.0, 0.0, 0.0, 0.0


@helper
def integrate(packed, q, i, d, out):
    """out[idx_q(i)] = q[idx_q(i)] + d[0]."""
    iq = int(packed[i, P_IQ])
    out[iq] = q[iq] + d[0]


def pieces(rotates):
    """
    Return a 1-dof kind's kernel pieces, ``rotates`` (its ``ROTATES``) bound in each.

    In the order ``(jcalc, placement_local, jcalc_local, motion, tangent, subspace_column,
    world_from_local, local_subspace_column, force_local, integrate)``, with the dispatch's
    signatures (``rbd_ros.algorithms.generate_joint_dispatch.PIECES``). ``rotates`` is a
    constant of each compiled piece, so the inlined code keeps one branch.
    """
    @helper
    def kind_jcalc(packed, q, i, oM_parent):
        """(oMi, oS): world placement of body i and its world-frame subspace."""
        return jcalc(rotates, packed, q, i, oM_parent)

    @helper
    def kind_placement_local(packed, q, i):
        """^λX_i = X_T X_J(q_i)."""
        return placement_local(rotates, packed, q, i)

    @helper
    def kind_jcalc_local(packed, q, v, a, i):
        """(X, v_J, S q̈) in the joint's own frame."""
        return jcalc_local(rotates, packed, q, v, a, i)

    @helper
    def kind_motion(packed, i, oM, oS, x):
        """S x[idx_v(i)] in the world frame."""
        return motion(packed, i, oS, x)

    @helper
    def kind_subspace_column(packed, i, k, oM, oS):
        """Return the world-frame subspace: oS itself (one column)."""
        return oS

    @helper
    def kind_world_from_local(packed, i, oM_parent, X):
        """(oMi, oS) from ^λX_i."""
        return world_from_local(rotates, packed, i, oM_parent, X)

    @helper
    def kind_local_subspace_column(packed, i, k):
        """S in the joint's own frame."""
        ax, ay, az = axis(packed, i)
        return local_subspace(rotates, ax, ay, az)

    @helper
    def kind_force_local(packed, i, f):
        """Sᵀ f, f in the joint's own frame."""
        return force_local(rotates, packed, i, f)

    # the names say "kind_": inside this function the module's own helpers keep theirs
    return (kind_jcalc, kind_placement_local, kind_jcalc_local, kind_motion, tangent,
            kind_subspace_column, kind_world_from_local, kind_local_subspace_column,
            kind_force_local, integrate)
