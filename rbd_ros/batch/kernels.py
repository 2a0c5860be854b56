"""
The batch kernels of :mod:`rbd_ros.batch`: chunks of states over numba's threads.

Each kernel runs, for each state of its chunks, the single-state kernel of its algorithm in
the chunk's copy of the workspace; :func:`next_block` is how threads share the chunks (see
:mod:`rbd_ros.batch` for the scheme and its reasons). The Python entry points, their checks
and outputs are in :mod:`rbd_ros.batch`.
"""
import numba
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

from .._jit import batch_kernel, f64_2d, f64_2d_ro, f64_3d, f64_4d, helper, i64_1d, int64, void
from ..algorithms import coupled as _coupled
from ..algorithms.aba_derivatives import aba_derivatives_kernel
from ..algorithms.coriolis import coriolis_kernel, coupled_coriolis_kernel
from ..algorithms.aba import aba_kernel
from ..algorithms.minv import minv_kernel
from ..algorithms.regressor import joint_torque_regressor_kernel
from ..algorithms.rnea import rnea_kernel
from ..algorithms.rnea_derivatives import rnea_derivatives_kernel
from ..model.data import BATCH_SLOT_STRIDE as SLOT


# -- scheduling: each thread owns a chunk, then helps the others ------------------------------

CLAIM_STRIDE = 8        # int64s between two chunks' counters: one cache line each
BLOCK = 8               # states claimed at a time (fewer in small chunks)


@intrinsic
def _fetch_add(typingctx, counters, index, value):
    """Add ``value`` to ``counters[index]`` atomically; return the value before."""
    def codegen(context, builder, signature, args):
        array_type = signature.args[0]
        array = context.make_array(array_type)(context, builder, args[0])
        pointer = cgutils.get_item_pointer(context, builder, array_type, array, [args[1]])
        return builder.atomic_rmw("add", pointer, args[2], "monotonic")
    return types.int64(counters, types.intp, types.int64), codegen


@helper
def next_block(claims, c, r, n, nchunks):
    """
    Return (start, stop, r): the next block of states for the thread of chunk c.

    The thread claims blocks of its own chunk (r = 0) in order, then of chunk c + r for
    r = 1, 2, ... (the chunks whose threads are behind); ``claims[CLAIM_STRIDE * j]``
    counts the states of chunk j claimed so far (zero at the start). start >= stop when
    every block is taken.
    """
    while r < nchunks:
        owner = (c + r) % nchunks
        lo = owner * n // nchunks
        hi = (owner + 1) * n // nchunks
        block = max(1, min(BLOCK, (hi - lo) // 8))
        start = lo + _fetch_add(claims, CLAIM_STRIDE * owner, block)
        if start < hi:
            return start, min(start + block, hi), r
        r += 1
    return 0, 0, r


@numba.njit(error_model="numpy", boundscheck=False, _nrt=False)
def chunk_states(claims, c, n, nchunks):
    """
    Yield the states the thread of chunk c runs: its own chunk's, then the others' leftovers.

    Every batch kernel's loop: ``for k in chunk_states(...)``. A generator, which numba
    compiles into each kernel's loop (no allocation; as fast as the loop written out).
    """
    start, stop, seen = next_block(claims, c, 0, n, nchunks)
    while start < stop:
        for k in range(start, stop):
            yield k
        start, stop, seen = next_block(claims, c, seen, n, nchunks)


# -- kernels: status[k] receives the single-state kernel's status of state k ------------------

@helper
def algorithm_state(which, packed, w, dw, bw, fp, t, yb, q, v, u, fext, out1, out2, out3):
    """
    Run the single-state kernel ``which`` on one state; return its status.

    ``which`` numbers the algorithms as ``algorithms/coupled.py`` does; ``u`` is q̈ (RNEA,
    its derivatives, the regressor) or τ (ABA, its derivatives); a vector result is
    ``out1[0]``; the inputs and outputs an algorithm does not have are never read.
    """
    if which == _coupled.RNEA:
        return rnea_kernel(packed, w, q, v, u, fext, out1[0])
    if which == _coupled.ABA:
        return aba_kernel(packed, w, q, v, u, fext, out1[0])
    if which == _coupled.MINV:
        return minv_kernel(packed, w, fp, q, out1)
    if which == _coupled.RNEA_DERIVATIVES:
        return rnea_derivatives_kernel(packed, w, dw, bw, q, v, u, fext, out1, out2, out3)
    if which == _coupled.ABA_DERIVATIVES:
        return aba_derivatives_kernel(packed, w, dw, bw, fp, t, q, v, u, fext, out1, out2,
                                      out3)
    if which == _coupled.CORIOLIS:
        return coriolis_kernel(packed, w, dw, bw, q, v, out1)
    return joint_torque_regressor_kernel(packed, w, yb, q, v, u, out1)


# one kernel for every batch call (seven loops written out were the same loop): ``which``
# picks the single-state kernel; each chunk works in its slot of every per-chunk workspace
# array (Data.batch_workspace); outputs are (N, rows, cols), a vector result (N, 1, nv)
@batch_kernel(void(int64, f64_2d_ro, f64_3d, f64_3d, f64_3d, f64_4d, f64_3d, f64_3d, f64_2d,
                   f64_2d, f64_2d, f64_3d, f64_3d, f64_3d, f64_3d, i64_1d, i64_1d, int64))
def algorithm_batch_kernel(which, packed, ws, dws, bws, FP, tmp, Yb, q, v, u, fext, out1,
                           out2, out3, status, claims, nchunks):
    n = q.shape[0]
    for c in numba.prange(nchunks):
        slot = SLOT * c
        w, dw, bw, fp, t, yb = ws[slot], dws[slot], bws[slot], FP[slot], tmp[slot], Yb[slot]
        for k in chunk_states(claims, c, n, nchunks):
            status[k] = algorithm_state(which, packed, w, dw, bw, fp, t, yb, q[k], v[k], u[k],
                                        fext[k], out1[k], out2[k], out3[k])


@helper
def coupled_state(which, packed, table, w, dw, bw, yb, qf, vf, mf, r, vr, yf, q, v, u, fext,
                  out1, out2, out3):
    """Run the coupled single-state kernel ``which`` on one state; return its status."""
    if which == _coupled.RNEA:
        return _coupled.coupled_rnea_kernel(packed, table, w, qf, vf, q, v, u, fext, out1[0])
    if which == _coupled.ABA:
        return _coupled.coupled_aba_kernel(packed, table, w, qf, vf, mf, r, vr, q, v, u, fext,
                                           out1[0])
    if which == _coupled.MINV:
        return _coupled.coupled_minv_kernel(packed, table, w, qf, mf, r, q, out1)
    if which == _coupled.RNEA_DERIVATIVES:
        return _coupled.coupled_rnea_derivatives_kernel(packed, table, w, dw, bw, qf, vf, mf,
                                                        q, v, u, fext, out1, out2, out3)
    if which == _coupled.ABA_DERIVATIVES:
        return _coupled.coupled_aba_derivatives_kernel(packed, table, w, dw, bw, qf, vf, mf, r,
                                                       vr, q, v, u, fext, out1, out2, out3)
    if which == _coupled.CORIOLIS:
        return coupled_coriolis_kernel(packed, table, w, dw, bw, qf, vf, mf, q, v, out1)
    return _coupled.coupled_regressor_kernel(packed, table, w, yb, qf, vf, yf, q, v, u, out1)


# one kernel for every batch call of a model with mimic joints (rarer, so one compiled entry
# rather than seven): ``which`` picks the coupled single-state kernel (algorithms/coupled.py);
# outputs are (N, rows, cols), a vector result (N, 1, nv)
@batch_kernel(void(int64, f64_2d_ro, f64_2d_ro, f64_3d, f64_3d, f64_3d, f64_3d, f64_2d, f64_3d,
                   f64_4d, f64_4d, f64_3d, f64_3d, f64_2d, f64_2d, f64_2d, f64_3d, f64_3d,
                   f64_3d, f64_3d, i64_1d, i64_1d, int64))
def coupled_batch_kernel(which, packed, table, ws, dws, bws, Yb, QF, VF, MF, R, VR, YF, q, v, u,
                         fext, out1, out2, out3, status, claims, nchunks):
    n = q.shape[0]
    for c in numba.prange(nchunks):
        slot = SLOT * c
        w, dw, bw, yb, qf, vf, mf, r, vr, yf = (ws[slot], dws[slot], bws[slot], Yb[slot],
                                                QF[slot], VF[slot], MF[slot], R[slot],
                                                VR[slot], YF[slot])
        for k in chunk_states(claims, c, n, nchunks):
            status[k] = coupled_state(which, packed, table, w, dw, bw, yb, qf, vf, mf, r,
                                      vr, yf, q[k], v[k], u[k], fext[k], out1[k], out2[k],
                                      out3[k])
