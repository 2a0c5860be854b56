"""
The placement of a link's frame in the root frame: ^0M_f as a 4 × 4 homogeneous matrix.

Pinocchio's ``data.oMf[frame]`` after ``framesForwardKinematics`` (or ``updateFramePlacement``):
^0M_f = ^0M_b ^bM_f, b the body the link is welded to (``model.link_frames``), ^0M_b the
product of the joint placements on b's path from the root (``placement_step``). The root
frame is the world of the model: the root link of a fixed base, the odometry frame of a
floating base. A coupled model (mimic joints): q expanded to the tree first.
"""
from .._jit import f64_1d, f64_2d, f64_2d_ro, helper, int64, kernel
from ..model.layout import W_OM
from ..model.se3 import se3_load, se3_mul
from .common import (INPUT_STRIDED, OUTPUT_REFUSED, apart, check_configuration, model_sizes, plain,
                     writeable_matrix)
from .entries import declare
from .frame_jacobian import (BAD_FRAME, frame_of_link, frame_row_parts,  # noqa: F401
                             placement_tuple, store_placements, world_origin)
from .mimic import expand_configuration, reduced_sizes


@helper
def link_status(packed, body, placement):
    """BAD_FRAME unless body is a body (or -1, the world) and placement 12 numbers; else 0."""
    if body < -1 or body >= packed.shape[0] - 1 or placement.shape[0] != 12:
        return BAD_FRAME
    return 0


@helper
def tree_configuration(packed, table, qf, q):
    """Return (status of q at position 1, the tree's q): q itself, or f(q) into qf."""
    if table.shape[0] == 0:
        nq = model_sizes(packed)[1]
    else:
        nq = reduced_sizes(table)[0]
    status = check_configuration(packed, q, nq, 1)
    if status or table.shape[0] == 0:
        return status, q
    expand_configuration(table, q, qf)
    return status, qf


@helper
def frame_world_placement(packed, ws, q, body, placement):
    """
    ^0M_f of the frame ``placement`` on ``body`` (the world's: the placement itself).

    As the world-frame passes place it: a floating base's moved by −b (``world_origin``).
    """
    fM = placement_tuple(placement)
    if body < 0:
        return fM
    store_placements(packed, ws, q, body)
    return se3_mul(se3_load(ws, body, W_OM), fM)


@kernel(int64(f64_2d_ro, f64_2d_ro, f64_2d, f64_1d, f64_1d, f64_1d, f64_2d))
def frame_placement_kernel(packed, table, ws, qf, q, frame, out):
    """Set out (4 × 4) to ^0M_f at q of the frame whose row is ``frame`` (``frame_row_parts``)."""
    if not plain(q):
        return INPUT_STRIDED
    body, placement, _ = frame_row_parts(frame)
    if not (writeable_matrix(out, 4, 4) and apart(out, q)):
        return OUTPUT_REFUSED
    status, qt = tree_configuration(packed, table, qf, q)
    status = status or link_status(packed, body, placement)
    if status:
        return status
    oMf = frame_world_placement(packed, ws, qt, body, placement)
    origin = world_origin(packed, qt)
    for r in range(3):
        for c in range(3):
            out[r, c] = oMf[3 * r + c]
        out[r, 3] = oMf[9 + r] - origin[r]
        out[3, r] = 0.0
    out[3, 3] = 1.0
    return 0


@declare
def frame_placement(model, q, link, *, data=None):
    """
    Return the placement of ``link``'s frame in the root frame at q, a 4 × 4 matrix [R p; 0 1].

    Pinocchio's ``data.oMf[frame].homogeneous`` after ``framesForwardKinematics``: x_root = R
    x_link + p. The root frame is the model's world (a fixed base's root link, a floating base's
    odometry frame).

    Parameters
    ----------
    model, q, link, data : ...
        Shared by the calls: ``rbd_ros.algorithms.entries.SHARED_PARAMETERS``.

    Returns
    -------
    placement : numpy.ndarray, shape ``(4, 4)``
        [R p; 0 1]: R the link frame's axes in the root frame, p its origin (m).

    Raises
    ------
    ValueError
        ``link`` not a link of the model;
        ... the shared refusals: ``rbd_ros.algorithms.entries.SHARED_REFUSALS``.

    Notes
    -----
    A model with mimic joints: at the tree's configuration f(q).

    """
