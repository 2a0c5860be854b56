"""
Pieces every kernel shares: input checks and the first steps of a forward pass.

The world-frame kernels (CRBA, ABA, M⁻¹, the derivatives; as Pinocchio's) move each body's
inertia to the world once per call, after which forces and inertias of a subtree add up
without any change of frame. Their forward passes start with the same steps, defined once
here: the placement (``placement_step``), the velocity (``velocity_step``) and the body's
inertia and bias force (``body_bias_force``). The joint kinds live in ``joints``.
"""
import math

from .._array_flags import is_read_only
from .._jit import helper
from ..model.layout import (P_GRAVITY, P_IQ, P_IV, P_PARENT, P_THETA, P_VEND, W_OA, W_OM, W_OS,
                            W_OV)
from ..model.spatial import (act_force, add6, cross_force, inertia_act, inertia_apply, load6,
                             load10, sub6)
from ..model.se3 import se3_load, se3_store, store6
from .joints import jcalc, joint_motion, joint_nq, joint_nv, zero_unit_part

# status codes returned by kernels: argument position * 4 + kind (see rbd_ros._checks)
WRONG_SIZE = 1
NOT_FINITE = 2
ZERO_QUATERNION = 3
# a result that is not finite although the inputs are (they are too large for float64, or
# the model is degenerate): "position" 15 names no argument
RESULT_POSITION = 15
NOT_FINITE_RESULT = RESULT_POSITION * 4 + NOT_FINITE
# a quantity the inputs are fine for but that is not defined there: statuses past those of
# any argument position (REFUSAL_POSITION * 4 on; ``rbd_ros._checks`` words each)
REFUSAL_POSITION = 13
(ZERO_DIRECTION, SINGULAR_OPERATIONAL, SINGULAR_TRANSLATIONAL, CANNOT_MOVE_ALONG,
 NO_MASS) = (REFUSAL_POSITION * 4 + k for k in range(5))
# the caller's ``out=`` is read-only, not of the result's shape, not C-contiguous, or shares
# memory with an input or another output ("position" 14 stands for the outputs): the call's
# Python side words it (``rbd_ros._output_arrays.refused``), and tests in Python only what
# numba's unboxing trusts (type, dtype, number of dimensions)
OUTPUT_REFUSED = (REFUSAL_POSITION + 1) * 4 + WRONG_SIZE
# an input that is not C-contiguous, reached a kernel through its entry point (which reads
# it as if it were): the kernel reads nothing of it and the call copies its inputs, then
# calls again. Testing the strides in the kernel costs ~1 ns; in Python, ~50 ns an input
# (the strides tuple numpy builds)
INPUT_STRIDED = OUTPUT_REFUSED + 1


@helper
def vector_status(x):
    """Return 0 if every entry of the 1-D x is finite, else NOT_FINITE_RESULT."""
    bad = False
    for k in range(x.shape[0]):
        y = x[k]
        bad |= (y - y) != 0.0          # inf - inf and NaN are NaN: no branch, vectorizes
    return NOT_FINITE_RESULT if bad else 0


@helper
def residue_status(residue):
    """
    Return 0 if ``residue``, a sum of x − x over numbers x, is 0, else NOT_FINITE_RESULT.

    x − x is 0 for a finite x and NaN for an infinite or NaN one (``vector_status``'s rule),
    so a kernel tests the numbers it writes as they go by, without a pass of its own.
    """
    return 0 if residue == 0.0 else NOT_FINITE_RESULT


@helper
def matrix_status(A):
    """
    Return 0 if every entry of the C-contiguous 2-D A is finite, else NOT_FINITE_RESULT.

    One loop over the flat buffer: LLVM vectorizes it, where the two nested loops over rows
    and columns did not (three 38 × 38 checks: 0.2 µs against 1.0 µs).
    """
    return vector_status(A.reshape(A.size))


@helper
def apart(x, y):
    """
    Whether the C-contiguous arrays x and y share no byte: ``np.may_share_memory`` is False.

    Each spans one byte range, so comparing the bounds is exact, as numpy's test is.
    """
    if x.size == 0 or y.size == 0:
        return True
    x0, y0 = x.ctypes.data, y.ctypes.data
    return x0 + x.size * x.itemsize <= y0 or y0 + y.size * y.itemsize <= x0


@helper
def plain(x):
    """Whether the 1-D x is C-contiguous (numpy's flag: any stride for fewer than 2 entries)."""
    return vector_fits(x, x.shape[0])


@helper
def plain_rows(x):
    """Whether the 2-D x is C-contiguous (numpy's flag: a 1-long axis's stride is free)."""
    return matrix_fits(x, x.shape[0], x.shape[1])


@helper
def vector_fits(x, n):
    """Whether x has n entries and is C-contiguous (any stride for n < 2, as numpy's flag)."""
    return x.shape[0] == n and (n < 2 or x.strides[0] == x.itemsize)


@helper
def matrix_fits(x, rows, cols):
    """Whether x is rows × cols and C-contiguous (numpy's flag: a 1-long axis's stride is free)."""
    if x.shape[0] != rows or x.shape[1] != cols:
        return False
    return rows * cols == 0 or ((rows == 1 or x.strides[0] == cols * x.itemsize)
                                and (cols == 1 or x.strides[1] == x.itemsize))


@helper
def writeable_vector(x, n):
    """Whether the output x may be written (``rbd_ros._array_flags``) and fits (vector_fits)."""
    return not is_read_only(x) and vector_fits(x, n)


@helper
def writeable_matrix(x, rows, cols):
    """Whether the output x may be written (``rbd_ros._array_flags``) and fits (matrix_fits)."""
    return not is_read_only(x) and matrix_fits(x, rows, cols)


@helper
def apart_from_state(x, q, v, u, fext):
    """Whether x shares no memory with any of a state's (q, v, u, fext)."""
    return apart(x, q) and apart(x, v) and apart(x, u) and apart(x, fext)


@helper
def square_outputs_fit(A, B, C, n):
    """Whether A, B and C are writeable, n × n, C-contiguous, and share no memory."""
    return (writeable_matrix(A, n, n) and writeable_matrix(B, n, n)
            and writeable_matrix(C, n, n)
            and apart(A, B) and apart(A, C) and apart(B, C))


@helper
def mirror_upper(A):
    """
    Copy the upper triangle of the square, C-contiguous A into its lower triangle.

    Return A's status. The lower triangle is written row by row (each row's stores are
    contiguous, its loads strided), then A checked as a flat buffer: 0.19 µs for 38 × 38,
    against 0.58 µs for a copy column by column that checked each entry as it went.
    """
    n = A.shape[0]
    for r in range(1, n):
        for c in range(r):
            A[r, c] = A[c, r]
    return matrix_status(A)


@helper
def model_sizes(packed):
    """(nbodies, nq, nv) from the packed model table."""
    nb = packed.shape[0] - 1
    if nb == 0:
        return 0, 0, 0
    iq = int(packed[nb - 1, P_IQ]) + joint_nq(packed, nb - 1)
    return nb, iq, int(packed[nb - 1, P_IV]) + joint_nv(packed, nb - 1)


@helper
def configuration_status(packed, q):
    """Return (nb, nv, the status of q as argument 1): the start of every kernel of q alone."""
    nb, nq, nv = model_sizes(packed)
    return nb, nv, check_configuration(packed, q, nq, 1)


@helper
def set_world(packed, ws):
    """Set the world row of the workspace: zero velocity, acceleration -gravity (RNEA line 3)."""
    for k in range(3):
        ws[-1, W_OA + k] = -packed[-1, P_GRAVITY + k]


@helper
def check_vector(x, n, position):
    """
    0 if x has n finite entries, else a status code naming the argument.

    One loop without a branch (``vector_status``'s, which LLVM vectorizes): the input is
    finite nearly always, and an exit at the first bad entry kept the loop scalar.
    """
    if x.shape[0] != n:
        return position * 4 + WRONG_SIZE
    return position * 4 + NOT_FINITE if vector_status(x) else 0


@helper
def check_configuration(packed, q, nq, position):
    """Like check_vector, plus the base's unit part (quaternion, direction) must not be zero."""
    status = check_vector(q, nq, position)
    if status == 0 and zero_unit_part(packed, q):
        return position * 4 + ZERO_QUATERNION
    return status


@helper
def check_forces(fext, nb, position):
    """Return the status of fext; an empty (0, 6) array stands for no external force."""
    if fext.shape[1] != 6 or (fext.shape[0] != nb and fext.shape[0] != 0):
        return position * 4 + WRONG_SIZE
    if fext.shape[0] == 0:
        return 0
    for i in range(nb):
        for k in range(6):
            if not math.isfinite(fext[i, k]):
                return position * 4 + NOT_FINITE
    return 0


@helper
def check_inputs(packed, q, v, u, fext, fext_position):
    """Status of (q, v, u) at argument positions 1-3 and fext at ``fext_position``."""
    nb, nq, nv = model_sizes(packed)
    status = check_configuration(packed, q, nq, 1) or check_vector(v, nv, 2)
    return status or check_vector(u, nv, 3) or check_forces(fext, nb, fext_position)


@helper
def begin_state_pass(packed, ws, q, v, u, fext):
    """
    Check (q, v, u, fext) and, if they are fine, set the world row; return the status.

    (q, v, u, fext) are the argument positions 1-4; the world row is set for a pass at that
    state.
    """
    status = check_inputs(packed, q, v, u, fext, 4)
    if status == 0:
        set_world(packed, ws)
    return status


# The steps below compute and return; the kernels store their results at the end of each
# body's iteration (``store_motion``): in the RNEA kernel written out, storing into the
# workspace before the iteration's other loads (the model table, fext) cost 15-20 % on talos.


@helper
def supports(packed, i, body):
    """
    Return whether body i is ``body`` or one of its ancestors.

    DFS order numbers i's subtree's dofs [idx_v(i), vend(i)): i supports ``body`` iff
    ``body``'s first dof lies in that range (every body has a dof). A pass to one link's
    frame visits only these (Pinocchio's support), not every body before it.
    """
    iv = packed[body, P_IV]
    return packed[i, P_IV] <= iv and iv < packed[i, P_VEND]


@helper
def placement_step(packed, ws, q, i):
    """Run jcalc of body i below its parent's stored placement: return (oM, oS)."""
    return jcalc(packed, q, i, se3_load(ws, int(packed[i, P_PARENT]), W_OM))


@helper
def velocity_step(packed, ws, v, i, oM, oS):
    """Return (v_λ, v_J, v_i) with v_J = S q̇ and v_i = v_λ + v_J (world frame)."""
    v_parent = load6(ws, int(packed[i, P_PARENT]), W_OV)
    vJ = joint_motion(packed, i, oM, oS, v)
    return v_parent, vJ, add6(v_parent, vJ)


@helper
def store_motion(ws, i, oM, oS, ov):
    """Store body i's placement, 1-dof subspace and velocity (W_OM, W_OS, W_OV)."""
    se3_store(ws, i, W_OM, oM)
    store6(ws, i, W_OS, oS)
    store6(ws, i, W_OV, ov)


@helper
def body_bias_force(packed, fext, i, oM, ov):
    """(I_i, h_i = I_i v_i, v_i ×* h_i - f_ext,i), all in the world frame."""
    oI = inertia_act(oM, load10(packed, i, P_THETA))
    oh = inertia_apply(oI, ov)
    bias = cross_force(ov, oh)
    if fext.shape[0]:
        bias = sub6(bias, act_force(oM, load6(fext, i, 0)))
    return oI, oh, bias
