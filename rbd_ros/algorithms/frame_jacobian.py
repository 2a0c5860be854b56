"""
The Jacobian of a link's frame: J (6 × nv), [v; ω] of the frame = J q̇, in the frame's axes.

Pinocchio's ``computeFrameJacobian`` / ``getFrameJacobian`` in its LOCAL reference frame:
the linear velocity of the frame's origin and the angular velocity, both in the frame's own
axes. A link frame f is welded to a body b (``model.link_frames``: ^bM_f), so it moves as b:
with S_j the world motion subspace of each joint j supporting b (the joints on b's path to
the root) and ^0M_f = ^0M_b ^bM_f,

    J[:, j] = Ad(^0M_f)⁻¹ S_j   (j ⪯ b),      J[:, j] = 0 otherwise

(a body's Jacobian: the supporting joints' motion subspaces in one frame; Featherstone,
Rigid Body Dynamics Algorithms, 2008, ch. 4). Its transpose maps a wrench [f; n] on the
frame (at its origin, in its axes) to the generalized force τ = Jᵀ [f; n], what the
measured-wrench path (``wrench.fext`` then RNEA) gives. A coupled model (mimic joints):
J_r = J G, column by column through the coupling table. A link welded to the world of a
fixed base (body -1) has J = 0.
"""
import weakref

import numpy as np

from .. import _checks
from .._jit import f64_1d, f64_2d, f64_2d_ro, helper, int64, kernel
from ..model.model import link_table
from ..model.layout import P_IV, P_PARENT, W_OM, W_OS
from ..model.spatial import act_inv_motion, load6
from ..model.se3 import se3_load, se3_mul, se3_store, store6
from .common import check_configuration, model_sizes, placement_step
from .joints import joint_nv, subspace_column
from .entries import public
from .mimic import T_MULTIPLIER, T_SOURCE, expand_configuration, reduced_sizes

BAD_FRAME = -1          # status: the body or the placement does not fit the model
_NO_COUPLING = np.frombuffer(np.zeros((0, 3)).tobytes()).reshape(0, 3)   # read-only, empty


@helper
def frame_jacobian_pass(packed, table, ws, q, body, fM, J):
    """
    Set J (6 × nv, all entries) of the frame ^bM_f = ``fM`` (12-tuple) on ``body``.

    q: the full tree's configuration (checked); ``table``: the coupling table ((0, 3): none),
    whose G the columns go through. Writes the placements of bodies 0..body into ``ws``.
    """
    for r in range(6):
        for c in range(J.shape[1]):
            J[r, c] = 0.0
    if body < 0:
        return
    for i in range(body + 1):           # DFS order: body's ancestors come before it
        oM, oS = placement_step(packed, ws, q, i)
        se3_store(ws, i, W_OM, oM)
        store6(ws, i, W_OS, oS)
    oMf = se3_mul(se3_load(ws, body, W_OM), fM)
    nqf = q.shape[0]
    j = body
    while j >= 0:
        oM, oS = se3_load(ws, j, W_OM), load6(ws, j, W_OS)
        iv = int(packed[j, P_IV])
        for k in range(joint_nv(packed, j)):
            column = act_inv_motion(oMf, subspace_column(packed, j, k, oM, oS))
            if table.shape[0] == 0:
                for r in range(6):
                    J[r, iv + k] = column[r]
            else:                       # J_r = J G: the column goes to its independent dof
                row = 1 + nqf + iv + k
                s, m = int(table[row, T_SOURCE]), table[row, T_MULTIPLIER]
                for r in range(6):
                    J[r, s] += m * column[r]
        j = int(packed[j, P_PARENT])


@helper
def frame_status(packed, body, placement, J, nv):
    """BAD_FRAME unless body is a body (or -1), placement 12 numbers and J (6, nv); else 0."""
    if body < -1 or body >= packed.shape[0] - 1 or placement.shape[0] != 12:
        return BAD_FRAME
    if J.shape[0] != 6 or J.shape[1] != nv:
        return BAD_FRAME
    return 0


@helper
def placement_tuple(placement):
    p = placement
    return (p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7], p[8], p[9], p[10], p[11])


@kernel(int64(f64_2d_ro, f64_2d_ro, f64_2d, f64_1d, f64_1d, int64, f64_1d, f64_2d))
def frame_jacobian_kernel(packed, table, ws, qf, q, body, placement, J):
    """
    J (6 × nv) of the frame ``placement`` (^bM_f: R row-major, then p) on ``body`` at q.

    q: the model's configuration; with a coupling ``table`` (not (0, 3)) its independent
    joints, expanded into ``qf`` (the full tree's). Returns a status: BAD_FRAME, or q's.
    """
    if table.shape[0] == 0:
        nq, nv = model_sizes(packed)[1:]
    else:
        nq, nv = reduced_sizes(table)
    status = check_configuration(packed, q, nq, 1) or frame_status(packed, body, placement,
                                                                   J, nv)
    if status:
        return status
    if table.shape[0] == 0:
        frame_jacobian_pass(packed, table, ws, q, body, placement_tuple(placement), J)
    else:
        expand_configuration(table, q, qf)
        frame_jacobian_pass(packed, table, ws, qf, body, placement_tuple(placement), J)
    return 0


# model -> {link: (body, placement)}, every link of the model at once, made on first use: a
# call then looks its link up instead of building its frame's arrays (2.5 µs a call on arm7)
_LINK_FRAMES = weakref.WeakKeyDictionary()


def frame_of_link(model, link):
    """
    Return the kernel's (body, placement, table) for ``link``: ValueError if the model has none.

    body: the body the link moves with; placement: its frame in that body's (R row-major,
    then p); table: the model's coupling table (empty without mimic joints).
    """
    frames = _LINK_FRAMES.get(model)
    if frames is None:
        names = list(model.link_frames)
        bodies, placements = link_table(model, names)
        frames = {name: (int(body), placement)
                  for name, body, placement in zip(names, bodies, placements)}
        _LINK_FRAMES[model] = frames
    try:
        body, placement = frames[link]
    except (KeyError, TypeError):           # TypeError: a link that is not even hashable
        raise ValueError(f"no link {_checks.excerpt(link)} in the model") from None
    return body, placement, _NO_COUPLING if model.coupling is None else model.coupling.table


@public
def frame_jacobian(model, q, link, *, data=None, out=None):
    """
    Return J (6 × nv) of ``link``'s frame at q: [v; ω] of the frame = J v, in its axes.

    Pinocchio's ``getFrameJacobian(..., LOCAL)`` after ``computeFrameJacobian``; ``link``
    any link of ``model.link_frames`` (one welded to the world: zeros). ``out``: a (6, nv)
    float64 C-contiguous array to write into (and return). A model with mimic joints:
    J_r = J G. Jᵀ maps a wrench at the frame's origin in its axes to joint torques.
    """
