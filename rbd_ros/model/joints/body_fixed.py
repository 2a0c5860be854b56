"""
The pieces the kinds whose motion subspace is constant in their body share.

A free flyer (S the identity), a planar joint (linear x, y and angular z) and the like: the
columns of S are fixed motions in the body's own frame (the kind's ``MOTIONS``, each six
numbers) and S x is the kind's ``local_motion(x, iv)``. Their world-frame columns are those
motions moved by the body's placement, so no world subspace oS is kept (the second entry of
``jcalc``'s pair is unused). As ``axis_joint.py`` serves the 1-dof kinds, this module
writes these pieces once; a kind takes them from :func:`subspace_pieces` (and a kind whose
world placement is its parent's times its local one, from :func:`placement_pieces`) given
its own functions, which the returned helpers call (numba inlines them, as any helper).
"""
from ..._jit import helper
from ..layout import P_IV
from ..se3 import se3_mul
from ..spatial import act_motion

ZERO6 = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)


def subspace_pieces(placement_local, local_motion, motions):
    """
    Return the kind's ``(jcalc_local, motion, subspace_column, local_subspace_column)``.

    ``placement_local(packed, q, i)``: ^λX_i; ``local_motion(x, iv)``: S x[iv : iv + nv] in
    the body frame; ``motions``: the columns of S in the body frame (a tuple of 6-tuples).
    """
    @helper
    def jcalc_local(packed, q, v, a, i):
        """(X, v_J, S q̈) in the body frame."""
        iv = int(packed[i, P_IV])
        return placement_local(packed, q, i), local_motion(v, iv), local_motion(a, iv)

    @helper
    def motion(packed, i, oM, oS, x):
        """S x in the world frame, x given in the body frame."""
        return act_motion(oM, local_motion(x, int(packed[i, P_IV])))

    @helper
    def subspace_column(packed, i, k, oM, oS):
        """Column k of S in the world: the body frame's column k, moved by oM."""
        return act_motion(oM, motions[k])

    @helper
    def local_subspace_column(packed, i, k):
        """Column k of S in the body frame."""
        return motions[k]

    return jcalc_local, motion, subspace_column, local_subspace_column


def placement_pieces(placement_local):
    """
    Return the kind's ``(jcalc, world_from_local)``: oMi = oM_λ ^λX_i, oS unused.

    For a kind anywhere in the tree (not the free-flyer root, whose world placement leaves
    its position out).
    """
    @helper
    def jcalc(packed, q, i, oM_parent):
        """(oMi, unused oS): the columns of S are the body frame's, moved by oMi."""
        return se3_mul(oM_parent, placement_local(packed, q, i)), ZERO6

    @helper
    def world_from_local(packed, i, oM_parent, X):
        """(oMi, unused oS) from ^λX_i."""
        return se3_mul(oM_parent, X), ZERO6

    return jcalc, world_from_local
