"""
The output arrays of a call, batch or single-state: made fresh, or the caller's ``out=`` checked.

A fresh output costs its first touch: the kernel's threads fault in every page of it (about
one minor fault per talos state of the derivatives, 35 kB of results: a fifth of the time
of a single-thread call, and page faults do not run well side by side on two threads). An
``out=`` array that the caller reuses from call to call has its pages mapped already. It
must be exactly what the kernel writes into: float64, C-contiguous, writeable, of the
result's shape, and sharing no memory with the inputs (the kernel would overwrite states it
has still to read) or with another output.
"""
import numpy as np

_F8 = np.dtype(np.float64)
_NDARRAY = np.ndarray
# bits of ndarray.flags.num (numpy's C API: NPY_ARRAY_C_CONTIGUOUS, _OWNDATA, _WRITEABLE)
OWNS = 0x4
OWNED_TARGET = 0x1 | OWNS | 0x400


def fresh(shapes):
    """Return new uninitialised float64 arrays of ``shapes`` (the kernel writes every entry)."""
    return tuple(np.empty(shape) for shape in shapes)


def checked(function, out, shapes, inputs):
    """
    Return ``out`` as a tuple of arrays, one per shape of ``shapes``, or raise a ValueError.

    ``out``: one array when there is one output, else a tuple (or list) of as many arrays.
    ``inputs``: name -> the array the kernel reads, which no output may overlap (what is not
    an array, None or a list, is read from a copy of its own and passes).
    """
    if len(shapes) == 1:
        arrays = (out,)
    elif isinstance(out, (tuple, list)) and len(out) == len(shapes):
        arrays = tuple(out)
    else:
        raise ValueError(f"{function}: out must be a tuple of {len(shapes)} arrays, got "
                         f"{_kind(out)}")
    if _fit(arrays, shapes, inputs):      # the common case, tested fast (a single call's)
        return arrays
    names = ("out",) if len(shapes) == 1 else tuple(f"out[{j}]" for j in range(len(shapes)))
    for j, (name, arr, shape) in enumerate(zip(names, arrays, shapes)):
        _check_one(function, name, arr, shape)
        for other, x in list(inputs.items()) + list(zip(names[:j], arrays[:j])):
            # both are C-contiguous: one byte range each, so the bounds test is exact
            if isinstance(x, np.ndarray) and x.size and arr.size and np.may_share_memory(arr, x):
                what = "inputs it has still to read" if other in inputs else "each other"
                raise ValueError(f"{function}: {name} shares memory with {other}: the results "
                                 f"would overwrite {what}; pass a separate array")
    return arrays


def refused(function, out, shapes, inputs):
    """
    Return the ValueError for an ``out=`` a kernel would not write into (``OUTPUT_REFUSED``).

    The kernels of the public calls refuse what :func:`checked` does (read-only, a wrong
    shape, not C-contiguous, memory shared with an input or another output); this words it.
    """
    try:
        checked(function, out, shapes, inputs)
    except ValueError as error:
        return error
    # the kernel and checked disagree: still a refusal, never a result from a refused array
    return ValueError(f"{function}: out does not fit what the kernel writes (writeable, "
                      f"shapes {shapes}, C-contiguous, no memory shared with the inputs or "
                      "another output)")


def _fit(arrays, shapes, inputs):
    """
    Whether ``arrays`` pass every test of :func:`checked`, tested fast; False: look closer.

    No more lenient than those tests: an ndarray (not a subclass) of the float64 dtype
    itself, that owns its memory, beside inputs that are no view (``base`` None: numpy
    allocated them for themselves): two arrays that numpy allocated each for itself cannot
    overlap unless they are one array. A view, of an output or of an input, is left to
    ``np.may_share_memory`` (~0.2 µs a pair). One ``flags`` read per output and a ``base``
    read per input: each ``flags`` read builds an object (~50 ns), ``base`` does not. Every
    array numpy, ctypes, buffers or numba make over another's memory has a base; one that
    an extension builds over foreign memory without setting it (the C API allows it) is
    trusted as an array of its own.
    """
    for arr, shape in zip(arrays, shapes):
        if (arr.__class__ is not _NDARRAY or arr.dtype is not _F8 or arr.shape != shape
                or arr.flags.num & OWNED_TARGET != OWNED_TARGET):
            return False
    if len(arrays) == 1:
        arr = arrays[0]
        for x in inputs.values():
            if x is arr or isinstance(x, _NDARRAY) and x.base is not None:
                return False
        return True
    ids = set(map(id, arrays))
    if len(ids) < len(arrays):
        return False
    for x in inputs.values():
        if isinstance(x, _NDARRAY) and (x.base is not None or id(x) in ids):
            return False
    return True


def _check_one(function, name, arr, shape):
    if not isinstance(arr, np.ndarray):
        raise ValueError(f"{function}: {name} must be a numpy array, got {_kind(arr)}")
    if arr.dtype != np.float64:
        raise ValueError(f"{function}: {name} must have dtype float64, got {arr.dtype}")
    if arr.shape != shape:
        raise ValueError(f"{function}: {name} must have shape {shape}, got {arr.shape}")
    if not arr.flags.c_contiguous:
        raise ValueError(f"{function}: {name} must be C-contiguous (results are written "
                         f"in place, not copied back)")
    if not arr.flags.writeable:
        raise ValueError(f"{function}: {name} must be writeable")


def _kind(x):
    if isinstance(x, (tuple, list)):
        return f"a {type(x).__name__} of {len(x)}"
    if isinstance(x, np.ndarray):
        return f"an array of shape {x.shape}"
    return type(x).__name__
