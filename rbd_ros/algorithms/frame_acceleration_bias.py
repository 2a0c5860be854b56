"""
The acceleration bias of a link's frame: its classical acceleration at zero q̈, ẍ = J q̈ + bias.

Pinocchio's ``getFrameClassicalAcceleration(..., reference)`` after
``forwardKinematics(q, v, 0)``. The body's spatial acceleration at q̈ = 0, with no
gravity, comes from one forward pass (``store_motions``: a_i = a_λ + v_λ × S_i q̇_i, world
frame; it is J̇ v); in the reference frame X (``frame_jacobian.py``) it is Ad(X)⁻¹ a_b, a
motion like the velocity v_f = Ad(X)⁻¹ v_b. The classical acceleration adds ω × v to the
linear part (the acceleration of the frame's origin point, where the spatial one is that
of the body point passing through it):

    bias = Ad(X)⁻¹ a_b + [ω_f × v_f; 0],     ẍ = J q̈ + bias  (J in the same reference).

In WORLD, as in Pinocchio, the linear parts are those of the body point at the world's
origin. A coupled model (mimic joints): at q_f = f(q), v_f = G v.
"""
from .._jit import f64_1d, f64_2d, f64_2d_ro, int64, kernel
from ..model.layout import W_OA, W_OM, W_OV
from ..model.spatial import act_inv_motion, load6
from ..model.se3 import cross3, se3_load, se3_mul
from .common import INPUT_STRIDED, OUTPUT_REFUSED, apart, plain, writeable_vector
from .entries import declare
from .frame_jacobian import (frame_in, frame_row_parts, placement_tuple,  # noqa: F401
                             reference_placement)
from .frame_jacobian_time_variation import store_motions, tree_state


@kernel(int64(f64_2d_ro, f64_2d_ro, f64_2d, f64_1d, f64_2d, f64_1d, f64_1d, f64_1d, f64_1d))
def frame_acceleration_bias_kernel(packed, table, ws, qf, VF, q, v, frame, out):
    """Set out (6) to the classical acceleration at (q, v, q̈ = 0) of the frame row ``frame``."""
    if not (plain(q) and plain(v)):
        return INPUT_STRIDED
    body, placement, reference = frame_row_parts(frame)
    if not (writeable_vector(out, 6) and apart(out, q) and apart(out, v)):
        return OUTPUT_REFUSED
    status, qt, vt = tree_state(packed, table, qf, VF[0], q, v, body, placement)
    if status:
        return status
    for k in range(6):
        out[k] = 0.0
    if body < 0:
        return 0
    store_motions(packed, ws, qt, vt, body)
    oMf = se3_mul(se3_load(ws, body, W_OM), placement_tuple(placement))
    X = reference_placement(packed, qt, oMf, reference)
    a = act_inv_motion(X, load6(ws, body, W_OA))
    vf = act_inv_motion(X, load6(ws, body, W_OV))
    cx, cy, cz = cross3(vf[3], vf[4], vf[5], vf[0], vf[1], vf[2])
    out[0], out[1], out[2] = a[0] + cx, a[1] + cy, a[2] + cz
    out[3], out[4], out[5] = a[3], a[4], a[5]
    return 0


@declare
def frame_acceleration_bias(model, q, v, link, reference="local", *, data=None):
    """
    Return the classical acceleration (6) of ``link``'s frame at (q, v) and q̈ = 0.

    Pinocchio's ``getFrameClassicalAcceleration(..., reference)`` after
    ``forwardKinematics(q, v, 0)`` (no gravity): the linear acceleration of the frame's origin
    and the angular acceleration, so that [ẍ; ω̇] = J q̈ + bias with J =
    ``frame_jacobian(model, q, link, reference)``.

    Parameters
    ----------
    model, q, v, link : ...
        Shared by the calls: ``rbd_ros.algorithms.entries.SHARED_PARAMETERS``.
    reference : str
        "local" (default: the frame's axes), "local_world_aligned" (the root frame's axes) or
        "world" (Pinocchio's WORLD: the spatial acceleration at the root's origin plus ω × v
        there).
    data : ...
        Shared by the calls: ``rbd_ros.algorithms.entries.SHARED_PARAMETERS``.

    Returns
    -------
    bias : numpy.ndarray, shape ``(6,)``
        [ẍ; ω̇] at q̈ = 0 (m/s², rad/s²), in ``reference``.

    Raises
    ------
    ValueError
        ``link`` not a link of the model, or ``reference`` not one of its three values;
        ... the shared refusals: ``rbd_ros.algorithms.entries.SHARED_REFUSALS``.

    Notes
    -----
    A model with mimic joints: at the tree's state (f(q), G v).

    """
