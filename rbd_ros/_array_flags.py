"""
Whether a kernel may write into an array the caller passed: numpy's WRITEABLE flag.

The flag is read in the kernel. A generated call hands the caller's ``out=`` to a kernel's
compiled entry point, which trusts the array's flags: a read-only array is written like any
other. Testing ``out.flags.writeable`` in Python costs ~30 ns a call (``flags`` is a new
object each time), a tenth of a small call such as a frame Jacobian; reading the flag where
the kernel tests ``out``'s shape costs ~1 ns. Numba keeps, beside the data pointer, the
ndarray the argument was unboxed from (its ``parent``), and numpy's ``PyArrayObject_fields``
(``ndarraytypes.h``, part of numpy's ABI in 1.x and 2.x) holds the flags at a fixed offset.
:func:`check_layout` verifies that offset on live arrays when this module is imported, so a
numpy that laid the struct out otherwise stops the import instead of letting a read-only
array be written.

An array made inside a kernel has no parent (kernels run without numba's runtime and never
make one, so that branch is a guard): it is writeable. A view keeps its array's parent. Only
numba's ``Array`` type is accepted: the parent of another buffer is not an ndarray. A
CPython whose object head is not 16 bytes (a debug or free-threaded build) fails the
import's check.
"""
import ctypes

import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

# offsetof(PyArrayObject_fields, flags) on a 64-bit CPython: the object's head (16 bytes),
# then data, nd (padded to 8), dimensions, strides, base and descr
FLAGS_OFFSET = 64
NPY_ARRAY_WRITEABLE = 0x0400


def check_layout():
    """
    Raise ImportError unless numpy's flags sit at FLAGS_OFFSET of its array objects.

    Compares the int read there with ``flags.num`` on arrays whose flags differ (read-only
    or not, C or Fortran order, owning their data or a view).
    """
    base = np.zeros((3, 4))
    frozen = np.zeros(5)
    frozen.flags.writeable = False
    for x in (base, frozen, np.asfortranarray(base), base[:, ::2], base.T):
        found = ctypes.c_int32.from_address(id(x) + FLAGS_OFFSET).value
        if found != x.flags.num or bool(found & NPY_ARRAY_WRITEABLE) != x.flags.writeable:
            raise ImportError(f"numpy {np.__version__} does not keep an array's flags where "
                              f"rbd_ros reads them (offset {FLAGS_OFFSET}): its kernels "
                              "cannot tell a read-only out= from a writeable one")


check_layout()


@intrinsic
def is_read_only(typingctx, array):
    """Return whether ``array`` comes from a numpy array whose WRITEABLE flag is clear."""
    if not isinstance(array, types.Array):      # a buffer's parent is not an ndarray
        return None

    def codegen(context, builder, signature, args):
        parent = context.make_array(signature.args[0])(context, builder, args[0]).parent
        result = cgutils.alloca_once_value(builder, cgutils.false_bit)
        with builder.if_then(cgutils.is_not_null(builder, parent), likely=True):
            address = builder.gep(parent, [ir.Constant(ir.IntType(64), FLAGS_OFFSET)])
            flags = builder.load(builder.bitcast(address, ir.IntType(32).as_pointer()))
            bit = builder.and_(flags, ir.Constant(ir.IntType(32), NPY_ARRAY_WRITEABLE))
            builder.store(builder.icmp_unsigned("==", bit, ir.Constant(ir.IntType(32), 0)),
                          result)
        return builder.load(result)
    return types.boolean(array), codegen
