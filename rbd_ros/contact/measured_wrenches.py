"""
Measured wrenches as the ``fext`` of the dynamics: a link's or the world's frame to the bodies'.

A measured wrench is the wrench the environment exerts **on** the link (a force/torque
sensor's reading of what the tool or the contact pushes onto the link, a contact
estimator's contact force on the foot): ``fext`` of :func:`rbd_ros.rnea` and
:func:`rbd_ros.aba`, whose sign is Pinocchio's. RNEA then gives the torques the motors must
produce with that wrench acting (τ = ID(q, v, a) − Σ Jᵀ f), ABA the accelerations under it.
A sensor that reports the wrench the link exerts on the environment needs its sign flipped
before it comes here.

A wrench is six numbers ``[fx, fy, fz, tx, ty, tz]`` (force first, as a spatial force; a
``geometry_msgs/Wrench`` is ``force`` then ``torque``) expressed in a frame: its axes, and
its torque about that frame's origin (as tf2 transforms a ``WrenchStamped``). The frames
here are

* ``"link"``: the link's own URDF frame. The link may be one welded to a body by fixed joints
  (``model.link_frames``): the wrench moves to the body's frame through the fixed placement.
* ``"world"``: the world frame of the model at q (a floating base: the frame its base pose
  is given in, e.g. the odometry's; a fixed base: the root link's frame).

``fext`` is ``(model.nbodies, 6)``, each row ``[f; n]`` in its body's frame (the frame of the
joint that moves it; README: ``fext``). A wrench on a link welded to the world of a fixed
base moves nothing: it adds nothing (the world takes it).
"""
import math
import operator

import numpy as np

from .._jit import f64_1d, f64_2d, f64_2d_ro, helper, i64_1d, int64, kernel
from ..model.model import link_table
from ..algorithms.common import check_configuration, model_sizes
from ..algorithms.joints import jcalc_local
from ..model.layout import P_PARENT
from ..model.spatial import act_force, act_inv_force, add6, load6
from ..model.se3 import se3_load, se3_mul, store6

LINK, WORLD = 0, 1          # frame codes of ``fext_kernel``
BAD_CONFIGURATION, BAD_TABLE = -1, -2     # statuses of the kernels: q, the other arrays

FRAMES = ("link", "world")


@helper
def body_world_placement(packed, q, zeros, body):
    """
    Return ^0M_b, the world placement of ``body`` at the full configuration q.

    The product of the local placements (``jcalc_local``) up its chain to the root; the
    floating base's position included (the world of the odometry). ``zeros``: a zero
    velocity of the full tree (jcalc_local's velocity and acceleration arguments).
    """
    M = jcalc_local(packed, q, zeros, zeros, body)[0]
    j = int(packed[body, P_PARENT])
    while j >= 0:
        M = se3_mul(jcalc_local(packed, q, zeros, zeros, j)[0], M)
        j = int(packed[j, P_PARENT])
    return M


@helper
def pose_inputs_status(packed, q, zeros):
    """BAD_CONFIGURATION unless q and ``zeros`` fit the full tree (sizes, q finite), else 0."""
    nb, nq, nv = model_sizes(packed)
    if check_configuration(packed, q, nq, 1) or zeros.shape[0] != nv:
        return BAD_CONFIGURATION
    return 0


@kernel(int64(f64_2d_ro, f64_1d, f64_1d, int64, f64_1d))
def body_pose_kernel(packed, q, zeros, body, out):
    """Set out (12) to ``body_world_placement``; return a negative status for bad inputs."""
    status = pose_inputs_status(packed, q, zeros)
    if status:
        return status
    if body < 0 or body >= packed.shape[0] - 1 or out.shape[0] != 12:
        return BAD_TABLE
    M = body_world_placement(packed, q, zeros, body)
    for k in range(12):
        out[k] = M[k]
    return 0


def _full_configuration(model, q):
    """Return q of the whole tree (a model with coupled mimic joints: its followers added)."""
    q = np.ascontiguousarray(q, np.float64)
    return q if model.coupling is None else model.coupling.expand(q)


def body_pose(model, q, body):
    """
    Return (R, p), the world pose of ``body`` at q: x_world = R x_body + p.

    q is the model's configuration (a model with coupled mimic joints: its independent
    joints). The chain walk of :func:`fext_kernel`, compiled.
    """
    try:
        body = operator.index(body)       # an index: 1.5 or "1" is no body (int() would take them)
    except TypeError:
        raise ValueError(f"body must be an integer index, got {body!r:.60}") from None
    out = np.empty(12)
    q = _full_configuration(model, q)
    status = body_pose_kernel(model.packed, q, np.zeros(model.nv_full), body, out)
    if status == BAD_TABLE:
        raise ValueError(f"no body {body} in the model ({model.nbodies} bodies)")
    _refuse(status, model, q)
    return out[:9].reshape(3, 3), out[9:]


def _refuse(status, model, q):
    """Raise the ValueError that a kernel's nonzero ``status`` stands for."""
    if status == BAD_CONFIGURATION:
        raise ValueError(f"q must be {model.nq_full} finite numbers of the whole tree (a "
                         f"floating base's quaternion not zero), got shape {np.shape(q)}")
    if status == BAD_TABLE:
        raise ValueError("the wrench tables do not fit the model or each other (link_table's "
                         "bodies and placements, frame codes LINK/WORLD, (n, 6) values, "
                         "out (nbodies, 6))")
    if status:
        raise ValueError(f"wrench {status - 1}: a wrench is six finite numbers "
                         "[fx fy fz tx ty tz]")


def to_body(model, q, link, frame, wrench):
    """
    Return (body, [f; n] in the body's frame) of a ``wrench`` on ``link`` given in ``frame``.

    ``frame``: ``"link"`` or ``"world"`` (module docstring); body -1: the link is welded to
    the world (the wrench moves nothing). ValueError for an unknown link or frame, or a
    wrench that is not six finite numbers (those of :func:`fext`, which computes it).
    """
    out = fext(model, q, [(link, frame, wrench)])
    body = model.link_frames[link][0]
    return body, (out[body] if body >= 0 else np.zeros(6))


@kernel(int64(f64_2d_ro, f64_1d, f64_1d, i64_1d, i64_1d, f64_2d, f64_2d, f64_2d))
def fext_kernel(packed, q, zeros, bodies, frames, placements, wrenches, out):
    """
    Set out (nbodies, 6) to the wrenches moved into their bodies' frames, summed per body.

    Wrench k acts on body ``bodies[k]`` (-1: welded to the world, nothing to add), given in
    its link's frame (``frames[k]`` LINK: ``placements[k]`` is that frame's placement in
    the body, ^bM_l) or in the world (WORLD: the body's world placement at the full
    configuration q, ``zeros`` a zero velocity of the full tree). Return k + 1 for a
    wrench k that is not finite, BAD_CONFIGURATION or BAD_TABLE (arrays that do not fit
    the tree or each other: checked before any is read), else 0.
    """
    status = pose_inputs_status(packed, q, zeros)
    if status:
        return status
    n, nb = bodies.shape[0], packed.shape[0] - 1
    if (frames.shape[0] != n or placements.shape[0] != n or placements.shape[1] != 12
            or wrenches.shape[0] != n or wrenches.shape[1] != 6 or out.shape[0] != nb
            or out.shape[1] != 6):
        return BAD_TABLE
    for k in range(n):
        if bodies[k] < -1 or bodies[k] >= nb or (frames[k] != LINK and frames[k] != WORLD):
            return BAD_TABLE
    out[:, :] = 0.0
    for k in range(n):
        w = load6(wrenches, k, 0)
        for c in range(6):
            if not math.isfinite(w[c]):
                return k + 1
        body = bodies[k]
        if body < 0:
            continue
        if frames[k] == WORLD:
            f = act_inv_force(body_world_placement(packed, q, zeros, body), w)
        else:
            f = act_force(se3_load(placements, k, 0), w)
        store6(out, body, 0, add6(load6(out, body, 0), f))
    return 0


def fext_into(model, q, bodies, placements, frames, values, out):
    """
    Fill ``out`` (nbodies, 6) with the wrenches ``values`` (n, 6) on ``link_table``'s links.

    ``frames`` (n,) int64: LINK or WORLD per wrench. One compiled call (the node's tick);
    ValueError for a wrench that is not finite.
    """
    q = _full_configuration(model, q)
    _refuse(fext_kernel(model.packed, q, np.zeros(model.nv_full), bodies, frames, placements,
                        values, out), model, q)
    return out


def fext(model, q, wrenches, out=None):
    """
    Return the ``fext`` (nbodies, 6) of ``wrenches``: (link, frame, six numbers) each.

    Wrenches on the same body add. ``out``: an (nbodies, 6) array to fill instead of a new
    one. ValueError for an unknown link or frame, or a wrench that is not six finite numbers.
    """
    wrenches = list(wrenches)
    links = [link for link, _, _ in wrenches]
    for _, frame, _ in wrenches:
        if frame not in FRAMES:
            raise ValueError(f"a wrench's frame must be one of {FRAMES}, got {frame!r}")
    try:
        values = np.array([np.asarray(w, np.float64).reshape(6) for _, _, w in wrenches],
                          np.float64).reshape(-1, 6)
    except (ValueError, TypeError):
        raise ValueError("a wrench is six finite numbers [fx fy fz tx ty tz]") from None
    bodies, placements = link_table(model, links)
    frames = np.array([FRAMES.index(f) for _, f, _ in wrenches], np.int64)
    out = np.zeros((model.nbodies, 6)) if out is None else out
    return fext_into(model, q, bodies, placements, frames, values, out)
