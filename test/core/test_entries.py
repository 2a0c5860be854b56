"""
The public calls built from one table (``rbd_ros.algorithms.entries``).

Every row is built and exported; the call reaches its kernel's compiled entry point only
with arrays numba's dispatcher would have taken as they are, and any other input (another
dtype, a strided view, a byte-swapped or read-only array, the wrong number of dimensions,
an object that only looks like an array) gives what the dispatcher path gives: the same
numbers after one conversion, or the same ValueError. The reference for each hostile input
is the same call on a clean float64 copy, whose numbers test_rnea.py & co. check against
Pinocchio.
"""
import inspect
import os
import pickle

import numpy as np
import pytest

import rbd_ros
from helpers import get_robot, robot_path
from rbd_ros.algorithms import entries

STATE_ARGS = {"q": "q", "v": "v", "a": "a", "tau": "tau", "dv": "v"}


def call(name, model, values, fext=None, **options):
    """Call the public ``name`` with its row's inputs from ``values``, and ``options``."""
    row = entries.ENTRIES[name]
    function = getattr(rbd_ros, name)
    args = [values[x] for x in row.inputs if x != "fext"]
    if name in ("compute_all", "inverse_and_forward_dynamics"):
        q, v, a, tau = args
        kwargs = {"a": a, "tau": tau} if fext is None else {"a": a, "tau": tau, "fext": fext}
        return function(model, q, v, **kwargs, **options)
    if name == "frame_jacobian":       # the link is not an array: the row's prepare step
        return function(model, *args, model.body_names[-1], **options)
    if "link" in inspect.signature(function).parameters:      # the frame calls (issue 36)
        states = [x for x in row.inputs if x != "direction"]
        after = [values["direction"]] if "direction" in row.inputs else []
        return function(model, *(values[x] for x in states), model.body_names[-1], *after,
                        **options)
    if fext is not None:
        return function(model, *args, fext, **options)
    return function(model, *args, **options)


def flat(result):
    if isinstance(result, tuple):
        return np.concatenate([np.ravel(r) for r in result])
    return np.ravel(result)


def clean_state(model, seed=3):
    rng = np.random.default_rng(seed)
    return {"q": model.random_configuration(rng), "v": rng.normal(size=model.nv),
            "a": rng.normal(size=model.nv), "tau": rng.normal(size=model.nv),
            "dv": rng.normal(size=model.nv), "direction": rng.normal(size=3)}


def test_every_row_is_built_and_exported():
    assert entries.uses_entry_point("crba") and not entries.uses_entry_point("rnea")
    for name in entries.ENTRIES:
        function = getattr(rbd_ros, name)
        assert name in rbd_ros.__all__, name
        assert function.__name__ == name and function.__doc__, name
        assert function.__module__.startswith("rbd_ros.algorithms."), name
        assert f"def {name}(model, " in function.__source__, name
        module = __import__(function.__module__, fromlist=[name])
        assert getattr(module, name) is function, name
        assert pickle.loads(pickle.dumps(function)) is function, name   # by reference


@pytest.mark.parametrize("name", sorted(x for x in entries.ENTRIES
                                        if entries.uses_entry_point(x)))
def test_the_entry_point_serves_after_the_first_call(name):
    """The first call compiles (or loads) through the dispatcher, then binds its entry point."""
    m = get_robot("quadruped").model
    s = clean_state(m)
    first = flat(call(name, m, s))
    entry = getattr(rbd_ros, name).__globals__["_entry"]
    assert type(entry).__name__ == "builtin_function_or_method", type(entry)
    np.testing.assert_array_equal(flat(call(name, m, s)), first)


def _hostile(x):
    """Arrays of x's values that the dispatcher refuses as they are, and a 2-D one."""
    strided = np.empty(2 * x.size)
    strided[::2] = x
    read_only = x.copy()
    read_only.flags.writeable = False
    return {"float32": x.astype(np.float32), "list": list(x),
            "strided view": strided[::2], "byte-swapped": x.astype(">f8"),
            "read-only": read_only, "fortran 2-D column": np.asfortranarray(x[:, None])}


@pytest.mark.parametrize("robot_name", ["arm7", "quadruped"])
@pytest.mark.parametrize("name", sorted(entries.ENTRIES))
def test_hostile_inputs_give_what_the_dispatcher_path_gives(name, robot_name):
    m = get_robot(robot_name).model
    s = clean_state(m)
    reference = flat(call(name, m, s))
    for argument in (x for x in entries.ENTRIES[name].inputs if x != "fext"):
        for kind, value in _hostile(s[argument]).items():
            if kind == "float32":
                expected = flat(call(name, m, dict(s, **{argument: value.astype(np.float64)})))
            else:
                expected = reference
            hostile = dict(s, **{argument: value})
            if kind == "fortran 2-D column":
                with pytest.raises(ValueError, match=f"{argument} must be a 1-D array"):
                    call(name, m, hostile)
                continue
            np.testing.assert_array_equal(flat(call(name, m, hostile)), expected,
                                          err_msg=f"{name}: {argument} {kind}")


@pytest.mark.parametrize("name", sorted(
    x for x in entries.ENTRIES if "out" in inspect.signature(getattr(rbd_ros, x)).parameters))
def test_the_callers_out_is_written_and_checked(name):
    """A row whose call takes ``out=``: that array is filled and returned, on both routes."""
    coupled = rbd_ros.load_model(robot_path("panda"))       # a mimic finger: the coupled route
    assert coupled.coupling is not None
    for m in (get_robot("arm7").model, coupled):
        s = clean_state(m)
        fresh = call(name, m, s)
        out = np.full_like(fresh, np.nan)
        assert call(name, m, s, out=out) is out
        np.testing.assert_array_equal(out, fresh)
        rows, cols = fresh.shape
        for bad in (np.empty((rows, cols), np.float32), np.empty((rows + 1, cols)),
                    np.empty((rows, 2 * cols))[:, ::2], np.empty((rows, cols)).tolist()):
            with pytest.raises(ValueError, match=f"{name}: out"):
                call(name, m, s, out=bad)


class LooksLikeAnArray:
    """Has an array's dtype and strides, and is not one: its values come from __array__."""

    def __init__(self, values):
        self.values = values
        self.dtype = values.dtype
        self.strides = values.strides

    def __array__(self, dtype=None, copy=None):
        return self.values


@pytest.mark.parametrize("name", ["rnea", "crba", "aba_derivatives", "integrate"])
def test_an_object_that_only_looks_like_an_array_is_converted(name):
    m = get_robot("quadruped").model
    s = clean_state(m)
    hostile = dict(s, q=LooksLikeAnArray(s["q"]))
    np.testing.assert_array_equal(flat(call(name, m, hostile)), flat(call(name, m, s)))


@pytest.mark.parametrize("name", sorted(x for x, row in entries.ENTRIES.items()
                                        if "fext" in row.inputs))
def test_fext_of_another_layout_gives_what_the_dispatcher_path_gives(name):
    m = get_robot("quadruped").model
    s = clean_state(m)
    fext = np.random.default_rng(4).normal(size=(m.nbodies, 6))
    reference = flat(call(name, m, s, fext))
    for value in (np.asfortranarray(fext), fext.astype(">f8"), fext.tolist()):
        np.testing.assert_allclose(flat(call(name, m, s, value)), reference, rtol=0, atol=0)
    with pytest.raises(ValueError, match=r"fext has the wrong size \(%d, 7\)" % m.nbodies):
        call(name, m, s, np.zeros((m.nbodies, 7)))
    with pytest.raises(ValueError, match="fext must be a 2-D array"):
        call(name, m, s, np.zeros(6 * m.nbodies))


def test_the_table_compiles_nothing():
    """
    entries.py is left out of the hash that stamps the cached kernels (``_jit.PYTHON_ONLY``).

    That is right only while it defines no compiled code: editing it then recompiles nothing.
    """
    with open(entries.__file__, encoding="utf-8") as f:
        text = f.read()
    for compiled in ("import numba", "from numba", "_jit", "@kernel", "@helper", "@stage"):
        assert compiled not in text, compiled
    from rbd_ros import _jit
    assert os.path.relpath(entries.__file__, _jit.PACKAGE_DIR) in _jit.PYTHON_ONLY
