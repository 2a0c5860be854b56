"""
How the batch kernels of :mod:`rbd_ros.batch` share chunks of states over numba's threads.

Each batch kernel (``algorithm_kernels.py``, generated) runs, for each state of its chunks,
the single-state kernel of its algorithm in the chunk's copy of the workspace;
:func:`chunk_states` is its loop and :func:`next_block` how threads share the chunks (see
:mod:`rbd_ros.batch` for the scheme and its reasons). The Python entry points, their checks
and outputs are in :mod:`rbd_ros.batch`.
"""
import numba
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

from .._jit import helper


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
