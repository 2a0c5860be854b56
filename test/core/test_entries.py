"""
The public calls built from one table (``rbd_ros.algorithms.entries``).

Every row is built and exported; the call reaches its kernel's compiled entry point only
with arrays of the dtype and number of dimensions it is compiled for (the kernel tests the
strides: a strided view is copied and the kernel called again), and any other input
(another dtype, a strided view, a byte-swapped or read-only array, the wrong number of
dimensions, an object that only looks like an array) gives what the dispatcher path gives:
the same numbers after one conversion, or the same ValueError. The reference for each
hostile input is the same call on a clean float64 copy, whose numbers test_rnea.py & co.
check against Pinocchio. ``out=``: ``test_entries_out.py``.
"""
import inspect
import os
import pickle

import numpy as np
import pytest

import rbd_ros
from entry_calls import call, clean_state, flat, out_model
from helpers import (assert_a_stale_module_is_reported, assert_generated_module_is_current,
                     get_robot)
from rbd_ros.algorithms import entries

GENERATE_CALLS = "python -m rbd_ros.algorithms.generate_calls"


def test_every_row_is_built_and_exported():
    assert entries.uses_entry_point("frame_jacobian") and not entries.uses_entry_point("rnea")
    for name in entries.ENTRIES:
        function = getattr(rbd_ros, name)
        assert name in rbd_ros.__all__, name
        assert function.__name__ == name and function.__doc__, name
        assert function.__module__ == "rbd_ros.algorithms.calls", name
        assert inspect.getsource(function).startswith(f"def {name}(model, "), name
        assert pickle.loads(pickle.dumps(function)) is function, name   # by reference
        declaration = entries.DECLARED[name]
        assert function.__doc__.strip() == declaration.doc, name
        assert str(inspect.signature(function)) == f"(model, {declaration.parameters})", name


def test_the_generated_calls_are_what_the_generator_writes():
    """calls.py is checked in: it must be what the table and the declarations give now."""
    from rbd_ros.algorithms import generate_calls
    assert_generated_module_is_current(generate_calls, GENERATE_CALLS)


def test_a_stale_calls_module_is_reported(tmp_path, monkeypatch, capsys):
    from rbd_ros.algorithms import generate_calls
    assert_a_stale_module_is_reported(generate_calls, GENERATE_CALLS, tmp_path, monkeypatch,
                                      capsys)


def test_a_declaration_is_not_the_call():
    """The stub next to a kernel declares the call; calling it says where the call is."""
    from rbd_ros.algorithms import crba as crba_module
    m = get_robot("arm7").model
    with pytest.raises(TypeError, match="declares the call rbd_ros.crba: call that"):
        crba_module.crba(m, np.zeros(m.nq))


@pytest.mark.parametrize("name", sorted(x for x in entries.ENTRIES
                                        if entries.uses_entry_point(x)))
def test_the_entry_point_serves_after_the_first_call(name):
    """The first call compiles (or loads) through the dispatcher, then binds its entry point."""
    m = get_robot("quadruped").model
    s = clean_state(m)
    first = flat(call(name, m, s))
    entry = getattr(rbd_ros, name).__globals__[f"_{name}_entry"]
    assert type(entry).__name__ == "builtin_function_or_method", type(entry)
    np.testing.assert_array_equal(flat(call(name, m, s)), first)


def _hostile(x):
    """Arrays of x's values that the dispatcher refuses as they are, and a 2-D one."""
    strided = np.empty(2 * x.size)
    strided[::2] = x
    read_only = x.copy()
    read_only.flags.writeable = False
    return {"float32": x.astype(np.float32), "list": list(x),
            "strided view": strided[::2], "reversed view": x[::-1].copy()[::-1],
            "byte-swapped": x.astype(">f8"),
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


@pytest.mark.parametrize("name", sorted(n for n in entries.ENTRIES if entries.uses_entry_point(n)))
def test_a_strided_q_on_a_coupled_model_gives_what_a_clean_copy_gives(name):
    """The coupled branches (panda's mimic fingers): a strided q is copied before it is read."""
    m = out_model("panda")
    s = clean_state(m)
    expected = flat(call(name, m, s))
    for q in (np.repeat(s["q"], 2)[::2], s["q"][::-1].copy()[::-1]):
        np.testing.assert_array_equal(flat(call(name, m, dict(s, q=q))), expected)
    if name == "center_of_mass":        # without v: q alone, the workspace's v its default
        q = np.repeat(s["q"], 2)[::2]
        np.testing.assert_array_equal(rbd_ros.center_of_mass(m, q),
                                      rbd_ros.center_of_mass(m, s["q"].copy()))


class LooksLikeAnArray:
    """Has an array's dtype, ndim and strides, and is not one: its values come from __array__."""

    def __init__(self, values):
        self.values = values
        self.dtype = values.dtype
        self.ndim = values.ndim
        self.strides = values.strides

    def __array__(self, dtype=None, copy=None):
        return self.values


# dispatcher routes, and entry point routes (the fast test passes: numba's unboxing refuses)
@pytest.mark.parametrize("name", ["rnea", "crba", "aba_derivatives", "integrate",
                                  "frame_jacobian", "centroidal_momentum_matrix", "compute_all"])
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
    rows = np.empty((2 * m.nbodies, 6))
    rows[::2] = fext
    # views of every other row and of the columns reversed: strided, read as their values
    for value in (np.asfortranarray(fext), fext.astype(">f8"), fext.tolist(), rows[::2],
                  fext[:, ::-1].copy()[:, ::-1]):
        np.testing.assert_allclose(flat(call(name, m, s, value)), reference, rtol=0, atol=0)
    with pytest.raises(ValueError, match=r"fext has the wrong size \(%d, 7\)" % m.nbodies):
        call(name, m, s, np.zeros((m.nbodies, 7)))
    with pytest.raises(ValueError, match="fext must be a 2-D array"):
        call(name, m, s, np.zeros(6 * m.nbodies))


def test_the_table_and_the_calls_compile_nothing():
    """
    The calls' modules are left out of the hash that stamps the cached kernels.

    entries.py, calls.py and generate_calls.py (``_jit.PYTHON_ONLY``): that is right only
    while they define no compiled code; editing them then recompiles nothing.
    """
    from rbd_ros import _jit
    folder = os.path.dirname(entries.__file__)
    for file in ("entries.py", "calls.py", "generate_calls.py"):
        with open(os.path.join(folder, file), encoding="utf-8") as f:
            text = f.read()
        for compiled in ("import numba", "from numba", "_jit", "@kernel", "@helper", "@stage"):
            assert compiled not in text, (file, compiled)
        assert os.path.join("algorithms", file) in _jit.PYTHON_ONLY, file


def test_a_new_row_walks_through_the_generator(tmp_path, monkeypatch):
    """doc/contributing.md's "Adding a public call", steps 1-3, with a test-sized call."""
    import importlib.util
    from rbd_ros.algorithms import generate_calls

    def gravity_again(model, q, *, data=None):
        """
        Return g(q) once more: a call added as contributing.md says.

        Parameters
        ----------
        model : Model
            The robot.
        q : array_like, shape ``(nq,)``
            Joint positions.
        data : Data or None
            The workspace.

        Returns
        -------
        tau : numpy.ndarray, shape ``(nv,)``
            The gravity torques.

        """
    gravity_again.__module__ = "rbd_ros.algorithms.rnea"     # declared next to its kernel
    row = entries.ENTRIES["gravity_torques"]._replace(special=None, coupled=None)
    monkeypatch.setitem(entries.ENTRIES, "gravity_again", row)
    monkeypatch.setitem(entries.DECLARED, "gravity_again", entries.declare(gravity_again))
    path = tmp_path / "calls.py"
    monkeypatch.setattr(generate_calls, "PATH", str(path))
    assert generate_calls.main([]) == 0
    spec = importlib.util.spec_from_file_location("rbd_ros.algorithms.walkthrough_calls", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    m = get_robot("arm7").model
    q = m.random_configuration(np.random.default_rng(8))
    np.testing.assert_array_equal(module.gravity_again(m, q), rbd_ros.gravity_torques(m, q))
    assert "Return g(q) once more" in module.gravity_again.__doc__
    assert "out : numpy.ndarray, shape ``(nv,)``" in module.gravity_again.__doc__
    assert "out" in inspect.signature(module.gravity_again).parameters
