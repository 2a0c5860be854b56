"""
Revolute joint (URDF "revolute" and "continuous"): one angle about the unit axis.

q = [θ], v = [θ̇]; S = the axis as an angular motion. A continuous joint is this kind with
no position limits (Pinocchio keeps it as [cos θ, sin θ]; here it is the angle itself).
"""
import numpy as np

from . import axis_joint
from .kind import JointKind

CODE = 0
ROTATES = True


def neutral():
    """Return q at rest: zero."""
    return np.zeros(1)


def random(rng, lower, upper):
    """Draw q uniformly within the limits (an unbounded side at ±π)."""
    return axis_joint.random_in_limits(rng, lower, upper, np.pi)


def subspace(axis):
    """S (6 × 1) in the joint frame, as a numpy array (Python code outside the kernels)."""
    return np.array(axis_joint.local_subspace.py_func(ROTATES, *axis)).reshape(6, 1)


KIND = JointKind(code=CODE, name="revolute", urdf_types=("revolute", "continuous"),
                 nq=1, nv=1, root_only=False, axis_motion="rotate",
                 neutral=neutral, random=random)


(jcalc, placement_local, jcalc_local, motion, tangent, subspace_column, world_from_local,
 local_subspace_column, force_local, integrate) = axis_joint.pieces(ROTATES)
