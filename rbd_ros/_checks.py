"""
Input conversion and error messages for the thin Python wrappers around the kernels.

The fast path does no checking in Python: a kernel validates sizes and finiteness while it
reads its inputs (nearly free) and returns a status code; only when that code is nonzero does
Python build a message. An input that is not a float64 array (a list, ints) makes the
compiled kernel raise TypeError, and a strided view makes it answer INPUT_STRIDED unread
(``algorithms.common``); the wrapper then converts it here once and calls again.
"""
import numpy as np

from .algorithms.common import (CANNOT_MOVE_ALONG, INPUT_STRIDED, NO_MASS, NOT_FINITE,
                                OUTPUT_REFUSED, RESULT_POSITION, SINGULAR_OPERATIONAL,
                                SINGULAR_TRANSLATIONAL, WRONG_SIZE, ZERO_DIRECTION,
                                ZERO_QUATERNION)
from .model import Data
from .model.joints import KINDS


def vector(x, name):
    """Return ``x`` as a 1-D C-contiguous float64 array, or a ValueError naming the argument."""
    return matrix(x, name, 1)


def bound_vector(x, name, size):
    """
    Refuse ``x`` (ValueError) unless it is a float64 C vector of ``size``.

    For an array a prepared call reads in place (``ResultBuffer.bind``,
    ``MomentumObserver.bind``): those calls hand it to a kernel's entry point, whose
    unboxing tests only that it is an array of 8-byte items (another dtype is misread, and
    another number of dimensions overruns its shape).
    """
    if not (isinstance(x, np.ndarray) and x.dtype == np.float64 and x.ndim == 1
            and x.shape[0] == size and x.flags.c_contiguous):
        raise ValueError(f"{name} must be a float64 C vector of {size}")


def vectors(names, *xs):
    return tuple(vector(x, n) for x, n in zip(xs, names))


def matrix(x, name, ndim=2):
    """Return ``x`` as a C-contiguous float64 array of ``ndim`` dimensions, or a ValueError."""
    if np.iscomplexobj(x):        # float64 conversion would drop the imaginary part silently
        raise ValueError(f"{name} must be real numbers, got complex values")
    try:
        arr = np.array(x, dtype=np.float64, order="C", copy=True)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be an array of numbers: {excerpt(exc)}") from None
    if arr.ndim != ndim:
        raise ValueError(f"{name} must be a {ndim}-D array, got shape {arr.shape}")
    return arr


def number(value, name):
    """Return ``value`` as a float; a ValueError naming ``name`` where ``float()`` cannot."""
    try:
        return float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number, got {excerpt(value)}") from None


def plain_number(value, name):
    """Return ``value`` as a float (:func:`number`); a bool or a text is refused too."""
    if isinstance(value, (bool, str, bytes)):
        raise ValueError(f"{name} must be a number, got {excerpt(repr(value))}")
    return number(value, name)


def excerpt(value, limit=80):
    """Return ``str(value)`` cut to ``limit`` characters (error messages quote no more)."""
    text = str(value)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def expected_size(model, name):
    if name in ("q",):
        return f"model.nq = {model.nq}"
    if name == "fext":
        return f"({model.nbodies}, 6): one spatial force per body"
    if name == "direction":
        return "3: a direction in the root frame"
    return f"model.nv = {model.nv}"


def input_error(function, status, model, names, values=None):
    """Return the ValueError for a kernel status code (argument position * 4 + kind)."""
    if int(status) in _REFUSALS:
        return ValueError(f"{function}: {_REFUSALS[int(status)]}")
    position, kind = divmod(int(status), 4)
    if position == RESULT_POSITION:
        return ValueError(f"{function}: the result is not finite: the inputs are too large "
                          f"for float64 or the model is degenerate ({_magnitudes(names, values)})")
    name = names[position - 1] if 0 < position <= len(names) else f"argument {position}"
    value = (None if values is None or not 0 < position <= len(values)
             else np.asarray(values[position - 1]))
    if kind == WRONG_SIZE:
        got = "" if value is None else f" {value.shape}"
        return ValueError(f"{function}: {name} has the wrong size{got}; expected "
                          f"{expected_size(model, name)}")
    if kind == NOT_FINITE:
        where = ""
        if value is not None:
            bad = np.argwhere(~np.isfinite(value))
            if len(bad):
                index = tuple(int(k) for k in bad[0]) if value.ndim > 1 else int(bad[0][0])
                where = f" at index {index}"
        return ValueError(f"{function}: {name} contains NaN or inf{where}")
    if kind == ZERO_QUATERNION:
        start, count, what = KINDS[model.joint_type[0]].unit_part
        return ValueError(f"{function}: {name} has a zero base {what} "
                          f"(q[{start}:{start + count}])")
    return ValueError(f"{function}: invalid input (status {status})")


# quantities not defined at the inputs given (``algorithms.common``)
_REFUSALS = {
    # the public calls word it with the full test of out= (_output_arrays.refused); this is
    # for a kernel reached another way
    OUTPUT_REFUSED: ("an output does not fit what the kernel writes: read-only, the wrong "
                     "shape, not C-contiguous, or sharing memory with an input or another "
                     "output"),
    # the public calls copy the input and call again; this is for a kernel reached another way
    INPUT_STRIDED: "an input is not C-contiguous: the kernel reads C-contiguous arrays only",
    ZERO_DIRECTION: "direction is the zero vector: it names no direction",
    SINGULAR_OPERATIONAL: (
        "J M⁻¹ Jᵀ of the frame is singular (the joints supporting it have fewer than 6 "
        "degrees of freedom, or the configuration is singular): the 6 × 6 Λ is not defined; "
        "translational=True gives the 3 × 3 Λ of the linear part where that one is"),
    SINGULAR_TRANSLATIONAL: (
        "J_v M⁻¹ J_vᵀ of the frame is singular (its origin cannot move in every direction "
        "at this configuration): the 3 × 3 Λ is not defined"),
    CANNOT_MOVE_ALONG: (
        "the joints supporting the frame cannot move its origin along the direction "
        "(J_vᵀ u = 0): the effective mass along it is not defined"),
    NO_MASS: "the model's total mass is zero: its centre of mass is not defined",
}


def _magnitudes(names, values):
    if values is None:
        return "inputs not shown"
    parts = []
    for name, value in zip(names, values):
        value = np.asarray(value, dtype=np.float64)
        if value.size:
            parts.append(f"largest |{name}| = {np.max(np.abs(value)):.3g}")
    return ", ".join(parts)


def workspace(model, data):
    """
    Return the workspace a call runs in.

    That is ``data`` if given and of the model's size, else the model's own. A workspace of
    another size is refused before any kernel can touch it.
    """
    if data is None:
        return model.data
    if not isinstance(data, Data) or not data.fits(model):
        raise ValueError(f"data must be an rbd_ros.Data made for a model of this size "
                         f"({model.nbodies} bodies, nv = {model.nv}), got {type(data).__name__}"
                         + (f" for {data.nbodies} bodies, nv = {data.nv}"
                            if isinstance(data, Data) else ""))
    return data


def state(names, q, v, u, fext):
    """Return (q, v, u, fext) as C-contiguous float64 arrays: a wrapper's one conversion."""
    q, v, u = vectors(names, q, v, u)
    return q, v, u, matrix(fext, "fext")


def state_call(function, kernel, names, model, q, v, u, fext, data):
    """
    Call a kernel ``kernel(packed, ws, q, v, u, fext, out)`` that returns one nv-vector.

    Defaults, the one conversion, the error message. The public wrappers write this out
    (a helper's call in between cost ~0.07 µs per call); bench/bench_mimic.py calls it.
    """
    out = np.empty(model.nv)
    data = model.data if data is None else workspace(model, data)
    if fext is None:
        fext = data.no_fext
    try:
        status = kernel(model.packed, data.body, q, v, u, fext, out)
    except (TypeError, ValueError):   # not float64 C arrays: convert once
        q, v, u, fext = state(names, q, v, u, fext)
        status = kernel(model.packed, data.body, q, v, u, fext, out)
    if status:
        raise input_error(function, status, model, names, (q, v, u, fext))
    return out
