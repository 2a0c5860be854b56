"""
The effective mass of a link's frame along a direction: m_u = 1 / (uᵀ J_v M⁻¹ J_vᵀ u).

The mass a point of the robot presents to an impact along the unit vector u (Khatib 1987;
ISO/TS 15066's power-and-force limiting bounds the energy a cobot transfers in a collision
through it): J_v the linear rows of the frame's LOCAL_WORLD_ALIGNED Jacobian (the origin's
velocity in the root frame's axes), M⁻¹ the analytical inverse (``minv.py``). With
w = J_vᵀ u, m_u = 1 / (wᵀ M⁻¹ w); it is defined wherever the joints can move the point
along u (w ≠ 0), fewer than 3 degrees of freedom included, and refused where they cannot
(|w| at or below ``DIRECTION_RATIO`` times |J_v|, Frobenius). Where the 3 × 3 Λ_t of the
linear rows exists, m_u = 1 / (uᵀ Λ_t⁻¹ u). A model with mimic joints: J_r, M_r⁻¹.
"""
import math

from .._jit import f64_1d, f64_2d, f64_2d_ro, f64_3d, helper, int64, kernel
from .common import (CANNOT_MOVE_ALONG, INPUT_STRIDED, OUTPUT_REFUSED, ZERO_DIRECTION, apart,
                     check_vector, plain, vector_status, writeable_vector)
from .entries import declare
from .frame_jacobian import LOCAL_WORLD_ALIGNED, frame_of_link, frame_row_parts  # noqa: F401
from .operational_space_inertia import jacobian_and_minv

DIRECTION_RATIO = 1e-10


@helper
def mass_along(J, Minv, direction, w, out):
    """out[0] = 1 / (wᵀ M⁻¹ w), w = J[:3]ᵀ u (into ``w``), u = direction / |direction|."""
    norm = math.sqrt(direction[0] ** 2 + direction[1] ** 2 + direction[2] ** 2)
    if norm == 0.0:
        return ZERO_DIRECTION
    nv = Minv.shape[0]
    w_squared = 0.0
    j_squared = 0.0
    for k in range(nv):
        s = 0.0
        for r in range(3):
            s += direction[r] / norm * J[r, k]
            j_squared += J[r, k] * J[r, k]
        w[k] = s
        w_squared += s * s
    if not w_squared > DIRECTION_RATIO ** 2 * j_squared:
        return CANNOT_MOVE_ALONG
    x = 0.0
    for r in range(nv):
        if w[r] != 0.0:
            s = 0.0
            for c in range(nv):
                s += Minv[r, c] * w[c]
            x += w[r] * s
    out[0] = 1.0 / x
    return vector_status(out)


@kernel(int64(f64_2d_ro, f64_2d_ro, f64_2d, f64_3d, f64_1d, f64_3d, f64_3d, f64_1d, f64_1d,
              f64_1d, f64_2d, f64_3d, f64_1d))
def effective_mass_kernel(packed, table, ws, FP, qf, MF, R, q, frame, direction, matrix, work,
                          out):
    """out[0]: the effective mass of the frame row ``frame``'s origin along ``direction``."""
    if not (plain(q) and plain(direction)):
        return INPUT_STRIDED
    body, placement, _ = frame_row_parts(frame)
    if not (writeable_vector(out, 1) and apart(out, q) and apart(out, direction)):
        return OUTPUT_REFUSED
    status, J, Minv = jacobian_and_minv(packed, table, ws, FP, qf, MF, R, q, body, placement,
                                        LOCAL_WORLD_ALIGNED, matrix, work)
    status = status or check_vector(direction, 3, 2)
    if status:
        return status
    return mass_along(J, Minv, direction, work[1, 0, :Minv.shape[0]], out)


@declare
def effective_mass(model, q, link, direction, *, data=None):
    """
    Return the effective mass (kg) of ``link``'s frame origin along ``direction`` at q.

    1 / (uᵀ J_v M⁻¹ J_vᵀ u): u = direction / ‖direction‖, a 3-vector in the root frame; J_v the
    linear rows of ``frame_jacobian(model, q, link, "local_world_aligned")`` (Pinocchio's
    ``getFrameJacobian(..., LOCAL_WORLD_ALIGNED)[:3]``), M⁻¹ ``minv``. The mass an impact along
    u at that point meets (ISO/TS 15066).

    Parameters
    ----------
    model, q, link : ...
        Shared by the calls: ``rbd_ros.algorithms.entries.SHARED_PARAMETERS``.
    direction : array_like, shape ``(3,)``
        The direction u, in the root frame's axes; any nonzero length (it is normalized).
    data : ...
        Shared by the calls: ``rbd_ros.algorithms.entries.SHARED_PARAMETERS``.
    out : numpy.ndarray, shape ``(1,)``, or None
        An array to write the mass into (its one entry); None (default): a new one. Float64,
        C-contiguous, writeable and sharing no memory with an input (checked as a batch call's
        ``out``); the call still returns a float.

    Returns
    -------
    float
        The effective mass (kg).

    Raises
    ------
    ValueError
        Saying why, where the joints cannot move the point along u or ``direction`` is zero;
        ``link`` not a link of the model;
        ... the shared refusals: ``rbd_ros.algorithms.entries.SHARED_REFUSALS``.

    Notes
    -----
    A model with mimic joints: the reduced system's.

    """
