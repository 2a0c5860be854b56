"""
Prismatic joint (URDF "prismatic"): one displacement along the unit axis.

q = [x], v = [ẋ]; S = the axis as a linear motion.
"""
import numpy as np

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


(jcalc, placement_local, jcalc_local, motion, tangent, subspace_column, world_from_local,
 local_subspace_column, force_local, integrate) = axis_joint.pieces(ROTATES)
