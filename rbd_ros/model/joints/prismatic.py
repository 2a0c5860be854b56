"""
Prismatic joint (URDF "prismatic"): one displacement along the unit axis.

q = [x], v = [ẋ]; S = the axis as a linear motion.
"""
import numpy as np

from ..._jit import helper
from . import axis_joint
from .kind import JointKind

CODE = 1
ROTATES = False


def neutral():
    """Return q at rest: zero."""
    return np.zeros(1)


def random(rng, lower, upper):
    """Draw q uniformly within the limits (an unbounded side at ±π, as for a revolute joint)."""
    return axis_joint.random_in_limits(rng, lower, upper, np.pi)


def subspace(axis):
    """S (6 × 1) in the joint frame, as a numpy array (Python code outside the kernels)."""
    return np.array(axis_joint.local_subspace.py_func(ROTATES, *axis)).reshape(6, 1)


KIND = JointKind(code=CODE, name="prismatic", urdf_types=("prismatic",),
                 nq=1, nv=1, root_only=False, axis_motion="slide",
                 neutral=neutral, random=random)


@helper
def jcalc(packed, q, i, oM_parent):
    """(oMi, oS): world placement of body i and its world-frame subspace."""
    return axis_joint.jcalc(ROTATES, packed, q, i, oM_parent)


@helper
def placement_local(packed, q, i):
    """^λX_i = X_T X_J(q_i)."""
    return axis_joint.placement_local(ROTATES, packed, q, i)


@helper
def jcalc_local(packed, q, v, a, i):
    """(X, v_J, S q̈) in the joint's own frame."""
    return axis_joint.jcalc_local(ROTATES, packed, q, v, a, i)


@helper
def motion(packed, i, oM, oS, x):
    """S x[idx_v(i)] in the world frame."""
    return axis_joint.motion(packed, i, oS, x)


@helper
def tangent(packed, i, x):
    """x[idx_v(i)], first entry of a 6-tuple."""
    return axis_joint.tangent(packed, i, x)


@helper
def subspace_column(packed, i, k, oM, oS):
    """Return the world-frame subspace: oS itself (one column)."""
    return oS


@helper
def world_from_local(packed, i, oM_parent, X):
    """(oMi, oS) from ^λX_i."""
    return axis_joint.world_from_local(ROTATES, packed, i, oM_parent, X)


@helper
def local_subspace_column(packed, i, k):
    """S in the joint's own frame."""
    ax, ay, az = axis_joint.axis(packed, i)
    return axis_joint.local_subspace(ROTATES, ax, ay, az)


@helper
def force_local(packed, i, f):
    """Sᵀ f, f in the joint's own frame."""
    return axis_joint.force_local(ROTATES, packed, i, f)


@helper
def integrate(packed, q, i, d, out):
    """Set q ⊕ d: the angle or displacement plus d[0]."""
    axis_joint.integrate(packed, q, i, d, out)
