"""
The operational-space (end-effector) inertia of a link's frame: Λ = (J M⁻¹ Jᵀ)⁻¹.

Khatib, "A unified approach for motion and force control of robot manipulators: the
operational space formulation", IEEE J. Robotics and Automation, 1987: the inertia the
frame presents to a wrench applied at it, F = Λ ẍ (+ bias terms). M⁻¹ is the analytical
inverse (``minv.py``, Carpentier 2018), which also leaves every body's placement in the
workspace for J (``frame_jacobian.py``); Λ⁻¹ = J M⁻¹ Jᵀ skips the zero columns of J
(the joints that do not support the frame), then a Cholesky factorization inverts it.

Λ (6 × 6) exists where J M⁻¹ Jᵀ is nonsingular: J of rank 6, so the joints supporting the
frame have at least 6 degrees of freedom and are not at a singular configuration. A pivot
of the factorization at or below ``PIVOT_RATIO`` times its diagonal entry (the squared sine
of the angle between that row and the previous ones in the M⁻¹ metric, free of units) is
refused with that reason; ``translational`` asks for the 3 × 3 Λ of the linear rows, the
inertia felt at the origin when the frame's rotation is free, which needs rank 3 only.
A model with mimic joints: J_r and M_r⁻¹ of the reduced system (``coupled.py``).
"""
import math

from .._jit import f64_1d, f64_2d, f64_2d_ro, f64_3d, helper, int64, kernel
from ..model.layout import W_OM
from ..model.se3 import se3_load, se3_mul
from .common import (INPUT_STRIDED, OUTPUT_REFUSED, SINGULAR_OPERATIONAL, SINGULAR_TRANSLATIONAL,
                     apart, matrix_status, plain, writeable_matrix)
from .coupled import coupled_minv_kernel
from .entries import declare
from .frame_jacobian import (frame_in, frame_jacobian_in, frame_row_parts,  # noqa: F401
                             jacobian_columns, placement_tuple, reference_placement)
from .frame_placement import link_status
from .minv import minv_kernel

PIVOT_RATIO = 1e-10


@helper
def projected_inverse_inertia(J, Minv, n, X, A):
    """Set A (n × n) = J[:n] M⁻¹ J[:n]ᵀ, X[:n] = J[:n] M⁻¹ on the way (J's zeros skipped)."""
    nv = Minv.shape[0]
    for r in range(n):
        for c in range(nv):
            X[r, c] = 0.0
        for k in range(nv):
            jk = J[r, k]
            if jk != 0.0:
                for c in range(nv):
                    X[r, c] += jk * Minv[k, c]
    for r in range(n):
        for c in range(r, n):
            s = 0.0
            for k in range(nv):
                s += X[r, k] * J[c, k]
            A[r, c] = s
            A[c, r] = s


@helper
def spd_inverse(A, L):
    """
    Invert the symmetric A (n × n, n ≤ 6) in place through its Cholesky factor L; False if singular.

    Singular: a pivot at or below PIVOT_RATIO times its diagonal entry (or not a number).
    """
    n = A.shape[0]
    for j in range(n):
        d = A[j, j]
        for k in range(j):
            d -= L[j, k] * L[j, k]
        if not d > PIVOT_RATIO * A[j, j]:
            return False
        L[j, j] = math.sqrt(d)
        for i in range(j + 1, n):
            s = A[i, j]
            for k in range(j):
                s -= L[i, k] * L[j, k]
            L[i, j] = s / L[j, j]
    for c in range(n):                  # column c of A⁻¹: L y = e_c, then Lᵀ x = y
        for i in range(n):
            s = 1.0 if i == c else 0.0
            for k in range(i):
                s -= L[i, k] * A[k, c]
            A[i, c] = s / L[i, i]
        for i in range(n - 1, -1, -1):
            s = A[i, c]
            for k in range(i + 1, n):
                s -= L[k, i] * A[k, c]
            A[i, c] = s / L[i, i]
    for r in range(n):                  # symmetric to the last bit
        for c in range(r + 1, n):
            m = 0.5 * (A[r, c] + A[c, r])
            A[r, c] = m
            A[c, r] = m
    return True


@helper
def jacobian_and_minv(packed, table, ws, FP, qf, MF, R, q, body, placement, reference, matrix,
                      work):
    """
    Return (status, J, M⁻¹) at q: the frame's J (a view of ``work[0]``) and M⁻¹ (or M_r⁻¹).

    The tree: the analytical M⁻¹ into ``matrix``, whose pass leaves the placements J reads.
    A coupled ``table``: M_r⁻¹ into R[1], J_r = J G at f(q).
    """
    coupled = table.shape[0] != 0
    Minv = R[1] if coupled else matrix
    if coupled:
        status = coupled_minv_kernel(packed, table, ws, qf, MF, R, q, Minv)
    else:
        status = minv_kernel(packed, ws, FP, q, Minv)
    J = work[0, :, :Minv.shape[0]]
    status = status or link_status(packed, body, placement)
    if status:
        return status, J, Minv
    fM = placement_tuple(placement)
    if coupled:
        frame_jacobian_in(packed, table, ws, qf, body, fM, reference, J)
    else:
        oMf = se3_mul(se3_load(ws, body, W_OM), fM)   # body -1: the world row's identity
        jacobian_columns(packed, table, ws, q.shape[0], body,
                         reference_placement(packed, q, oMf, reference), J)
    return 0, J, Minv


@kernel(int64(f64_2d_ro, f64_2d_ro, f64_2d, f64_3d, f64_1d, f64_3d, f64_3d, f64_1d, f64_1d,
              int64, f64_2d, f64_3d, f64_2d))
def operational_space_inertia_kernel(packed, table, ws, FP, qf, MF, R, q, frame, translational,
                                     matrix, work, Lambda):
    """Lambda (6 × 6, or 3 × 3 if ``translational``) at q of the frame row ``frame``."""
    if not plain(q):
        return INPUT_STRIDED
    body, placement, reference = frame_row_parts(frame)
    n = 3 if translational else 6
    if not (writeable_matrix(Lambda, n, n) and apart(Lambda, q)):
        return OUTPUT_REFUSED
    status, J, Minv = jacobian_and_minv(packed, table, ws, FP, qf, MF, R, q, body, placement,
                                        reference, matrix, work)
    if status:
        return status
    projected_inverse_inertia(J, Minv, n, work[1], Lambda)
    if not spd_inverse(Lambda, work[2]):
        return SINGULAR_TRANSLATIONAL if translational else SINGULAR_OPERATIONAL
    return matrix_status(Lambda)


@declare
def operational_space_inertia(model, q, link, reference="local_world_aligned",
                              translational=False, *, data=None, out=None):
    """
    Return Λ = (J M⁻¹ Jᵀ)⁻¹ (6 × 6) of ``link``'s frame at q: its operational-space inertia.

    J = ``frame_jacobian(model, q, link, reference)`` (Pinocchio's ``getFrameJacobian``,
    reference "local_world_aligned" by default: the frame's origin, the root frame's axes), M⁻¹
    the analytical inverse (``minv``); Pinocchio has no single call for it: the product of
    ``computeMinverse`` and ``getFrameJacobian``, inverted.

    Parameters
    ----------
    model, q, link : ...
        Shared by the calls: ``rbd_ros.algorithms.entries.SHARED_PARAMETERS``.
    reference : str
        The frame of J, as for :func:`rbd_ros.frame_jacobian`: "local", "local_world_aligned"
        (default) or "world".
    translational : bool
        True: the 3 × 3 Λ of J's linear rows (needs 3 degrees of freedom that move the frame's
        origin); False (default): the 6 × 6 Λ.
    data : ...
        Shared by the calls: ``rbd_ros.algorithms.entries.SHARED_PARAMETERS``.
    out : numpy.ndarray, shape ``(6, 6)`` (``(3, 3)`` if ``translational``), or None
        The array to write the result into and return; None (default): a new one. Float64,
        C-contiguous, writeable and sharing no memory with an input (checked as a batch call's
        ``out``); a loop that reuses it allocates nothing per call.

    Returns
    -------
    Lambda : numpy.ndarray, shape ``(6, 6)`` or ``(3, 3)``
        Λ, linear rows and columns first (kg, kg·m, kg·m²), in ``reference``.

    Raises
    ------
    ValueError
        J M⁻¹ Jᵀ singular, saying why (fewer than 6, or with ``translational`` 3, degrees of
        freedom support the frame, or a singular configuration); ``link`` not a link of the
        model, or ``reference`` not one of its three values;
        ... the shared refusals: ``rbd_ros.algorithms.entries.SHARED_REFUSALS``.

    Notes
    -----
    A model with mimic joints: J_r and M_r⁻¹ of the reduced system.

    """
