"""
Translation joint (test only): the body slides along the joint frame's x, y and z axes.

The kind ``test/core/test_new_joint_kind.py`` adds to a copy of the package as
doc/contributing.md says ("Adding a joint kind"), to show that a kind whose motion subspace
is constant in its body is this one module and the dispatch generated again: Pinocchio's
``JointModelTranslation``, q = v = the slide (3 numbers), S = (linear x, linear y, linear z)
in the body frame, X_J = (I, q). No URDF type reads it;
it may sit anywhere in the tree. Written here, not in the package: it is the example, not a
kind rbd_ros ships.
"""
import numpy as np

from ..._jit import helper
from . import axis_joint, body_fixed
from .kind import JointKind
from ..layout import P_IQ, P_IV, P_PLACEMENT
from ..se3 import se3_load, se3_mul

CODE = 4
# the columns of S in the body frame: linear x, y, z
MOTIONS = ((1.0, 0.0, 0.0, 0.0, 0.0, 0.0), (0.0, 1.0, 0.0, 0.0, 0.0, 0.0),
           (0.0, 0.0, 1.0, 0.0, 0.0, 0.0))


def neutral():
    """Return q at rest: no slide."""
    return np.zeros(3)


def random(rng, lower, upper):
    """Draw the slide uniformly within the limits (an unbounded side at ±1 m)."""
    return axis_joint.random_in_limits(rng, lower, upper, 1.0)


def subspace(axis):
    """S (6 × 3) in the body frame (no axis)."""
    return np.array(MOTIONS).T


KIND = JointKind(code=CODE, name="translation", urdf_types=(), nq=3, nv=3, root_only=False,
                 axis_motion=None, neutral=neutral, random=random)


@helper
def placement_local(packed, q, i):
    """^λX_i = X_T X_J: the fixed placement, then the slide."""
    iq = int(packed[i, P_IQ])
    XJ = (1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, q[iq], q[iq + 1], q[iq + 2])
    return se3_mul(se3_load(packed, i, P_PLACEMENT), XJ)


@helper
def local_motion(x, iv):
    """S x[iv : iv+3] in the body frame."""
    return x[iv], x[iv + 1], x[iv + 2], 0.0, 0.0, 0.0


@helper
def tangent(packed, i, x):
    """Return the three entries of x."""
    return local_motion(x, int(packed[i, P_IV]))


jcalc_local, motion, subspace_column, local_subspace_column = body_fixed.subspace_pieces(
    placement_local, local_motion, MOTIONS)
jcalc, world_from_local = body_fixed.placement_pieces(placement_local)


@helper
def force_local(packed, i, f):
    """Sᵀ f = the force's three components, f in the body frame."""
    return f[0], f[1], f[2], 0.0, 0.0, 0.0


@helper
def integrate(packed, q, i, d, out):
    """Set out to q ⊕ d = q + d: the joint does not turn (body and parent axes agree)."""
    iq = int(packed[i, P_IQ])
    for k in range(3):
        out[iq + k] = q[iq + k] + d[k]
