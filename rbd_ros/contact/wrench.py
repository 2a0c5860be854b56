"""
The contact wrench at a link's frame that explains the observer's r: F̂ = (J_linkᵀ)⁺ r.

:func:`contact_wrench` for one r (one compiled call: ``algorithms/contact_wrench.py``);
:class:`rbd_ros.contact.observer.MomentumObserver` given a ``frame`` computes it in the same
call as r. :func:`wrench_refusal` words its rank status, :func:`frame_problem` checks a
``contact_frame`` before a node uses it.
"""
import numpy as np

from .. import _checks
from ..algorithms.calls import frame_jacobian
from ..algorithms.contact_wrench import RANK_SCALE, RCOND, contact_wrench_kernel
from ..model.model import link_table


def frame_problem(model, link):
    """Say why the contact wrench at ``link`` (contact_frame) cannot be had, or None."""
    if not link:
        return None
    if link not in model.link_frames:
        names = list(model.link_frames)
        return (f"contact_frame {link[:60]!r} is not a link of the model (its links: "
                f"{', '.join(names[:8])}{', ...' if len(names) > 8 else ''})")
    try:
        contact_wrench(model, model.neutral(), np.zeros(model.nv), link)
    except ValueError as exc:
        return f"contact_frame: {exc}"
    return None


def link_jacobian_transpose(model, q, link):
    """Return Jᵀ (nv × 6) of ``link``'s frame at q: τ = Jᵀ [f; n] for a wrench at its origin."""
    return frame_jacobian(model, q, link).T


def wrench_refusal(link, rank):
    """Say why the contact wrench at ``link`` was not had, from its rank status, or None."""
    rank6, rank3 = rank % RANK_SCALE, rank // RANK_SCALE
    if rank < 0:
        return "the observer refused the sample"
    if rank6 == 6 or rank3 == 3:
        return None
    if rank < RANK_SCALE:
        return (f"the contact wrench at {link!r} needs 6 independent directions, its chain "
                f"gives {rank6} (fewer than 6 dof, or a singular pose): estimate the force "
                "only (force_only, contact at the frame's origin)")
    return (f"the contact force at {link!r} needs 3 independent directions, its chain gives "
            f"{rank3}")


def contact_wrench(model, q, r, link, force_only=False, rcond=RCOND):
    """
    Return F̂ = [f; n] (6) at ``link``'s frame origin in its axes: (J_linkᵀ)⁺ r, least squares.

    It needs six independent directions of the link's motion (six dof in its chain): with
    fewer, a ValueError says so, unless ``force_only``: the contact is then taken as a pure
    force at the frame's origin (n = 0), f = (J_vᵀ)⁺ r, which needs three. One compiled
    call (``algorithms/contact_wrench.py``: the frame's Jacobian, a pivoted QR).
    """
    bodies, placements = link_table(model, [link])
    q = _checks.matrix(q, "q", 1)
    r = _checks.matrix(r, "r", 1)
    if r.shape != (model.nv,):
        raise ValueError(f"r must have {model.nv} entries, got {r.shape[0]}")
    rcond = _checks.plain_number(rcond, "rcond")
    if not 0.0 <= rcond < 1.0:       # NaN or >= 1 cut every pivot: "rank 0" would be the answer
        raise ValueError(f"rcond must be in [0, 1) (the pivots' relative cut), got {rcond!r}")
    data = model.data
    out, rank = np.zeros(6), np.zeros(1, np.int64)
    status = contact_wrench_kernel(model.packed, model.coupling_table, data.body,
                                   data.full_q, q, int(bodies[0]), placements[0], r,
                                   int(bool(force_only)), rcond, np.zeros((6, model.nv)),
                                   np.zeros((model.nv + 2, 7)), out, rank)
    if status:
        raise _checks.input_error("contact_wrench", status, model, ("q", "r"), (q, r))
    why = wrench_refusal(link, int(rank[0]))
    if why:
        raise ValueError(why)
    return out
