"""
Matrix products inside the kernels: BLAS ``dgemm``, called directly.

The kernels are compiled without numba's runtime (see ``rbd_ros._jit.kernel``), which
``np.dot`` needs; the products of Eq. 24 of the RSS 2018 seed (∂FD/∂x = -M⁻¹ ∂ID/∂x, in
``compute_all`` and ``aba_derivatives``) therefore call the ``dgemm`` of SciPy's BLAS, the
routine numba's ``np.dot`` would call, themselves. Its α = -1 also spares negating M⁻¹.
"""
import llvmlite.binding
import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import get_cython_function_address, intrinsic

from ._jit import before_first_compile, helper

# Called by name, not through a ctypes pointer: numba does not cache code that holds an
# address, and the name is resolved again each time a cached kernel is loaded.
_DGEMM = "rbd_ros_scipy_dgemm"


@before_first_compile
def _add_dgemm_symbol():
    # at the first compile, not at import: SciPy's BLAS takes 0.1 s to load
    llvmlite.binding.add_symbol(_DGEMM,
                                get_cython_function_address("scipy.linalg.cython_blas", "dgemm"))


@intrinsic
def _dgemm(typingctx, transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc):
    """Call Fortran's dgemm: all 13 arguments are addresses."""
    def codegen(context, builder, signature, args):
        function_type = ir.FunctionType(ir.VoidType(), [cgutils.voidptr_t] * 13)
        builder.call(cgutils.get_or_insert_function(builder.module, function_type, _DGEMM),
                     args)
        return context.get_dummy_value()
    return types.void(*(types.voidptr,) * 13), codegen


@intrinsic
def _on_stack(typingctx, value):
    """Return the address of a copy of the scalar ``value`` in the caller's stack frame."""
    def codegen(context, builder, signature, args):
        slot = cgutils.alloca_once_value(builder, args[0])
        return builder.bitcast(slot, cgutils.voidptr_t)
    return types.voidptr(value), codegen


@intrinsic
def _data(typingctx, array):
    """Return the address of an array's first element."""
    def codegen(context, builder, signature, args):
        view = context.make_array(signature.args[0])(context, builder, args[0])
        return builder.bitcast(view.data, cgutils.voidptr_t)
    return types.voidptr(array), codegen


@helper
def gemm(alpha, A, B, C):
    """
    Set C = α A B, for row-major A (m × k), B (k × n) and C (m × n) with unit column stride.

    C-contiguous arrays, or blocks of them (``M[s:e, s:e]``): each row starts a leading
    dimension (its row stride) after the last. Row-major C is column-major Cᵀ = α Bᵀ Aᵀ:
    dgemm('N', 'N', n, m, k, α, B, ldb, A, lda, 0, C, ldc). Nothing is called for an empty
    product (BLAS refuses leading dimensions of 0).
    """
    m, k, n = A.shape[0], A.shape[1], B.shape[1]
    if m == 0 or n == 0:
        return
    if k == 0:
        C[:, :] = 0.0
        return
    no_transpose = _on_stack(np.uint8(78))                       # 'N'
    m32, k32, n32 = _on_stack(np.int32(m)), _on_stack(np.int32(k)), _on_stack(np.int32(n))
    # a one-row array's row stride is not read by BLAS, only checked (≥ its row's length)
    lda = _on_stack(np.int32(max(A.strides[0] // 8, k)))
    ldb = _on_stack(np.int32(max(B.strides[0] // 8, n)))
    ldc = _on_stack(np.int32(max(C.strides[0] // 8, n)))
    _dgemm(no_transpose, no_transpose, n32, m32, k32, _on_stack(np.float64(alpha)),
           _data(B), ldb, _data(A), lda, _on_stack(np.float64(0.0)), _data(C), ldc)
