"""
The output arrays of a batch call: made fresh, or the caller's ``out=`` arrays checked.

A fresh output costs its first touch: the kernel's threads fault in every page of it (about
one minor fault per talos state of the derivatives, 35 kB of results: a fifth of the time
of a single-thread call, and page faults do not run well side by side on two threads). An
``out=`` array that the caller reuses from call to call has its pages mapped already. It
must be exactly what the kernel writes into: float64, C-contiguous, writeable, of the
result's shape, and sharing no memory with the inputs (the kernel would overwrite states it
has still to read) or with another output.
"""
import numpy as np


def fresh(shapes):
    """Return new uninitialised float64 arrays of ``shapes`` (the kernel writes every entry)."""
    return tuple(np.empty(shape) for shape in shapes)


def checked(function, out, shapes, inputs):
    """
    Return ``out`` as a tuple of arrays, one per shape of ``shapes``, or raise a ValueError.

    ``out``: one array when there is one output, else a tuple (or list) of as many arrays.
    ``inputs``: name -> the array the kernel reads (after conversion), which no output may
    overlap.
    """
    if len(shapes) == 1:
        arrays, names = (out,), ("out",)
    else:
        if not isinstance(out, (tuple, list)) or len(out) != len(shapes):
            raise ValueError(f"{function}: out must be a tuple of {len(shapes)} arrays, got "
                             f"{_kind(out)}")
        arrays, names = tuple(out), tuple(f"out[{j}]" for j in range(len(shapes)))
    for j, (name, arr, shape) in enumerate(zip(names, arrays, shapes)):
        _check_one(function, name, arr, shape)
        for other, x in list(inputs.items()) + list(zip(names[:j], arrays[:j])):
            # both are C-contiguous: one byte range each, so the bounds test is exact
            if x.size and arr.size and np.may_share_memory(arr, x):
                what = "inputs it has still to read" if other in inputs else "each other"
                raise ValueError(f"{function}: {name} shares memory with {other}: the results "
                                 f"would overwrite {what}; pass a separate array")
    return arrays


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
