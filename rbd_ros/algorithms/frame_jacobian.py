"""
The Jacobian of a link's frame: J (6 × nv), the frame's velocity [v; ω] = J v.

Pinocchio's ``computeFrameJacobian`` / ``getFrameJacobian`` in its three reference frames
(``ReferenceFrame``): LOCAL, the linear velocity of the frame's origin and the angular
velocity, both in the frame's own axes; LOCAL_WORLD_ALIGNED, the same two vectors in the
world's (the root frame's) axes; WORLD, the spatial velocity in the world frame (the linear
part is the velocity of the point of the frame's body at the world's origin). A link frame
f is welded to a body b (``model.link_frames``: ^bM_f), so it moves as b: with S_j the
world motion subspace of each joint j supporting b (the joints on b's path to the root),
^0M_f = ^0M_b ^bM_f and X the reference frame's placement (WORLD: the identity; LOCAL:
^0M_f; LOCAL_WORLD_ALIGNED: the translation to the frame's origin),

    J[:, j] = Ad(X)⁻¹ S_j   (j ⪯ b),      J[:, j] = 0 otherwise

(a body's Jacobian: the supporting joints' motion subspaces in one frame; Featherstone,
Rigid Body Dynamics Algorithms, 2008, ch. 4). The LOCAL Jᵀ maps a wrench [f; n] on the
frame (at its origin, in its axes) to the generalized force τ = Jᵀ [f; n], what the
measured-wrench path (``wrench.fext`` then RNEA) gives. A coupled model (mimic joints):
J_r = J G, column by column through the coupling table. A link welded to the world of a
fixed base (body -1) has J = 0.
"""
import numpy as np

from .. import _checks
from .._jit import f64_1d, f64_2d, f64_2d_ro, helper, int64, kernel
from ..model.model import link_table
from ..model.layout import P_IQ, P_IV, P_PARENT, W_OM, W_OS
from ..model.spatial import act_inv_motion, load6
from ..model.se3 import se3_load, se3_mul, se3_store, store6
from .common import (INPUT_STRIDED, OUTPUT_REFUSED, apart, check_configuration, model_sizes,
                     placement_step, plain, supports, writeable_matrix)
from .joints import joint_nv, root_position_left_out, subspace_column
from .entries import declare
from .mimic import T_MULTIPLIER, T_SOURCE, expand_configuration, reduced_sizes

BAD_FRAME = -1          # status: the body or the placement does not fit the model
# the reference frames, numbered as Pinocchio's ReferenceFrame
WORLD, LOCAL, LOCAL_WORLD_ALIGNED = range(3)
REFERENCES = {"world": WORLD, "local": LOCAL, "local_world_aligned": LOCAL_WORLD_ALIGNED}
# the key of the links' own entries in ``model.frame_lookups`` beside frame_in's reference
# frames: no argument a caller passes is this object
LINK_ONLY = object()
# a frame's row, what the frame kernels take of a link: ^bM_f (R row-major, then p), the
# body b and the reference frame (-1: none). One array where three arguments cost ~12 ns
# more a call (numba unboxes each); ``frame_row_parts`` reads it
F_BODY, F_REFERENCE, F_COLS = 12, 13, 14


@helper
def store_placements(packed, ws, q, body):
    """Store the placements and 1-dof subspaces of ``body`` and its ancestors (its support)."""
    for i in range(body + 1):           # DFS order: body's ancestors come before it
        if not supports(packed, i, body):
            continue
        oM, oS = placement_step(packed, ws, q, i)
        se3_store(ws, i, W_OM, oM)
        store6(ws, i, W_OS, oS)


@helper
def world_origin(packed, q):
    """
    Return the world's origin where the world-frame passes place it: −b or 0.

    ``jcalc`` leaves a free-flyer base's position b out (those passes run in the world
    translated to the base), so a placement they store is the true one moved by −b.
    """
    if root_position_left_out(packed):
        iq = int(packed[0, P_IQ])
        return -q[iq], -q[iq + 1], -q[iq + 2]
    return 0.0, 0.0, 0.0


@helper
def reference_placement(packed, q, oMf, reference):
    """X, the reference frame's placement: the world's, ^0M_f, or the translation to f."""
    if reference == LOCAL:
        return oMf
    if reference == WORLD:
        ox, oy, oz = world_origin(packed, q)
        return (1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, ox, oy, oz)
    return (1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, oMf[9], oMf[10], oMf[11])


@helper
def add_column(table, nqf, J, iv, column):
    """
    J[:, iv] = column, or J_r = J G: the column added to its independent dof's.

    ``column``: 6 numbers, of which J's rows take the first J.shape[0] (6, or 3: linear).
    Written entry by entry: a tuple indexed by a loop counter compiles to a jump table, one
    indirect jump per entry.
    """
    c0, c1, c2, c3, c4, c5 = column
    if table.shape[0] == 0:
        J[0, iv], J[1, iv], J[2, iv] = c0, c1, c2
        if J.shape[0] == 6:
            J[3, iv], J[4, iv], J[5, iv] = c3, c4, c5
    else:
        row = 1 + nqf + iv
        s, m = int(table[row, T_SOURCE]), table[row, T_MULTIPLIER]
        J[0, s] += m * c0
        J[1, s] += m * c1
        J[2, s] += m * c2
        if J.shape[0] == 6:
            J[3, s] += m * c3
            J[4, s] += m * c4
            J[5, s] += m * c5


@helper
def jacobian_columns(packed, table, ws, nqf, body, X, J):
    """Set J (all entries): Ad(X)⁻¹ S_j for the joints supporting body (stored placements)."""
    for r in range(6):
        for c in range(J.shape[1]):
            J[r, c] = 0.0
    j = body
    while j >= 0:
        oM, oS = se3_load(ws, j, W_OM), load6(ws, j, W_OS)
        iv = int(packed[j, P_IV])
        for k in range(joint_nv(packed, j)):
            add_column(table, nqf, J, iv + k,
                       act_inv_motion(X, subspace_column(packed, j, k, oM, oS)))
        j = int(packed[j, P_PARENT])


@helper
def stored_frame_jacobian(packed, table, ws, nqf, body, fM, J):
    """
    Set J (6 × nv, all entries, LOCAL) of the frame ^bM_f = ``fM`` (12-tuple) on ``body``.

    From the placements already in ``ws``: for a kernel whose pass over the whole tree at
    the same configuration stored them (``store_motion``: the momentum observer's
    ``momentum_terms``), which the support's jcalc would compute again. nqf: the full
    tree's nq; ``table``: the coupling table ((0, 3): none), whose G the columns go through.
    """
    if body < 0:
        for r in range(6):
            for c in range(J.shape[1]):
                J[r, c] = 0.0
        return
    jacobian_columns(packed, table, ws, nqf, body, se3_mul(se3_load(ws, body, W_OM), fM), J)


@helper
def frame_jacobian_in(packed, table, ws, q, body, fM, reference, J):
    """
    Set J (6 × nv, all entries) of the frame ^bM_f = ``fM`` on ``body`` in ``reference``.

    ``reference``: WORLD, LOCAL or LOCAL_WORLD_ALIGNED; q: the full tree's configuration
    (checked); ``table`` as :func:`stored_frame_jacobian`'s. Writes the placements of the
    support of ``body`` into ``ws``.
    """
    if body < 0:
        for r in range(6):
            for c in range(J.shape[1]):
                J[r, c] = 0.0
        return
    store_placements(packed, ws, q, body)
    oMf = se3_mul(se3_load(ws, body, W_OM), fM)
    jacobian_columns(packed, table, ws, q.shape[0], body,
                     reference_placement(packed, q, oMf, reference), J)


@helper
def frame_status(packed, body, placement, J, nv):
    """BAD_FRAME unless body is a body (or -1), placement 12 numbers and J (6, nv); else 0."""
    if body < -1 or body >= packed.shape[0] - 1 or placement.shape[0] != 12:
        return BAD_FRAME
    if J.shape[0] != 6 or J.shape[1] != nv:
        return BAD_FRAME
    return 0


@helper
def frame_row_parts(frame):
    """
    Return (body, placement, reference) of a frame's row (F_COLS numbers).

    A row of another length gives body -2, which ``frame_status`` refuses (BAD_FRAME),
    and placement empty; nothing past the row's end is read.
    """
    if frame.shape[0] != F_COLS:
        return -2, frame[:0], -1
    return int(frame[F_BODY]), frame[:F_BODY], int(frame[F_REFERENCE])


@helper
def placement_tuple(placement):
    p = placement
    return (p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7], p[8], p[9], p[10], p[11])


@kernel(int64(f64_2d_ro, f64_2d_ro, f64_2d, f64_1d, f64_1d, f64_1d, f64_2d))
def frame_jacobian_kernel(packed, table, ws, qf, q, frame, J):
    """
    J (6 × nv) at q of the frame whose row (placement, body, reference) is ``frame``.

    The reference: WORLD, LOCAL or LOCAL_WORLD_ALIGNED. Returns a status: INPUT_STRIDED, or
    ``frame_jacobian_checked``'s.
    """
    if not plain(q):
        return INPUT_STRIDED
    body, placement, reference = frame_row_parts(frame)
    return frame_jacobian_checked(packed, table, ws, qf, q, body, placement, reference, J)


@helper
def frame_jacobian_checked(packed, table, ws, qf, q, body, placement, reference, J):
    """
    J (6 × nv) of the frame ``placement`` (^bM_f: R row-major, then p) on ``body`` at q.

    ``reference``: WORLD, LOCAL or LOCAL_WORLD_ALIGNED; q C-contiguous.
    q: the model's configuration; with a coupling ``table`` (not (0, 3)) its independent
    joints, expanded into ``qf`` (the full tree's). Returns a status: OUTPUT_REFUSED,
    BAD_FRAME, or q's.
    """
    if table.shape[0] == 0:
        nq, nv = model_sizes(packed)[1:]
    else:
        nq, nv = reduced_sizes(table)
    if not (writeable_matrix(J, 6, nv) and apart(J, q)):
        return OUTPUT_REFUSED
    status = check_configuration(packed, q, nq, 1) or frame_status(packed, body, placement,
                                                                   J, nv)
    if status:
        return status
    if table.shape[0] == 0:
        frame_jacobian_in(packed, table, ws, q, body, placement_tuple(placement), reference, J)
    else:
        expand_configuration(table, q, qf)
        frame_jacobian_in(packed, table, ws, qf, body, placement_tuple(placement), reference,
                          J)
    return 0


def frame_of_link(model, link):
    """
    Return the kernels' (frame, table) for ``link``: ValueError if the model has none.

    frame: the link's row (F_COLS numbers: its frame in the body it moves with, R row-major
    then p; that body; reference -1); table: the model's coupling table (empty without
    mimic joints). Kept in ``model.frame_lookups[LINK_ONLY]`` (a call looks its link up
    instead of building its frame's arrays: 2.5 µs a call on arm7); only the model's own
    links enter it.
    """
    try:
        return model.frame_lookups[LINK_ONLY][link]
    except (KeyError, TypeError):           # TypeError: a link that is not even hashable
        pass
    if not isinstance(link, str) or link not in model.link_frames:
        raise ValueError(f"no link {_checks.excerpt(link)} in the model")
    bodies, placements = link_table(model, [link])
    found = (np.concatenate([placements[0], [bodies[0], -1.0]]), model.coupling_table)
    model.frame_lookups.setdefault(LINK_ONLY, {})[link] = found
    return found


def frame_in(model, link, reference):
    """
    Return ``frame_of_link``'s (frame, table), the frame's row naming ``reference``.

    Kept in ``model.frame_lookups[reference][link]``: two lookups by a string, whose hash
    Python keeps, cost ~20 ns less than one by the tuple (link, reference), hashed anew.
    """
    try:
        return model.frame_lookups[reference][link]
    except (KeyError, TypeError):
        pass
    if not isinstance(reference, str) or reference not in REFERENCES:
        raise ValueError(f"reference must be one of {', '.join(map(repr, REFERENCES))}, got "
                         f"{_checks.excerpt(repr(reference))}")
    row, table = frame_of_link(model, link)
    row = row.copy()                        # the link's own row keeps reference -1
    row[F_REFERENCE] = REFERENCES[reference]
    found = model.frame_lookups.setdefault(reference, {})[link] = (row, table)
    return found


@declare
def frame_jacobian(model, q, link, reference="local", *, data=None):
    """
    Return J (6 × nv) of ``link``'s frame at q: [v; ω] of the frame = J v.

    Pinocchio's ``getFrameJacobian(..., reference)`` after ``computeFrameJacobian``:
    ``reference`` "local" (LOCAL: the linear velocity of the frame's origin and the angular
    velocity, in the frame's axes), "local_world_aligned" (LOCAL_WORLD_ALIGNED: the same in the
    root frame's axes) or "world" (WORLD: the spatial velocity in the root frame, its linear
    part that of the point at the root's origin).

    Parameters
    ----------
    model, q : ...
        Shared by the calls: ``rbd_ros.algorithms.entries.SHARED_PARAMETERS``.
    link : str
        A link of ``model.link_frames`` (any URDF link, those welded by fixed joints too); one
        welded to the world gives zeros.
    reference : str
        The frame the result is expressed in: "local" (default), "local_world_aligned" or
        "world" (see above).
    data : ...
        Shared by the calls: ``rbd_ros.algorithms.entries.SHARED_PARAMETERS``.

    Returns
    -------
    J : numpy.ndarray, shape ``(6, nv)``
        Linear rows first: J v is the frame's [v; ω] (m/s, rad/s) in ``reference``.

    Raises
    ------
    ValueError
        ``link`` not a link of the model, or ``reference`` not one of its three values;
        ... the shared refusals: ``rbd_ros.algorithms.entries.SHARED_REFUSALS``.

    Notes
    -----
    The LOCAL Jᵀ maps a wrench at the frame's origin in its axes to joint torques. A model
    with mimic joints: J_r = J G.

    """
