"""
The public calls built from one table (``rbd_ros.algorithms.entries``).

Every row is built and exported; the call reaches its kernel's compiled entry point only
with arrays of the dtype and number of dimensions it is compiled for (the kernel tests the
strides: a strided view is copied and the kernel called again), and any other input
(another dtype, a strided view, a byte-swapped or read-only array, the wrong number of
dimensions, an object that only looks like an array) gives what the dispatcher path gives:
the same numbers after one conversion, or the same ValueError. The reference for each hostile input
is the same call on a clean float64 copy, whose numbers test_rnea.py & co. check against
Pinocchio.
"""
import inspect
import os
import pickle
import re

import numpy as np
import pytest

import rbd_ros
from helpers import (assert_a_stale_module_is_reported, assert_generated_module_is_current,
                     get_robot, robot_path)
from rbd_ros.algorithms import entries

STATE_ARGS = {"q": "q", "v": "v", "a": "a", "tau": "tau", "dv": "v"}
GENERATE_CALLS = "python -m rbd_ros.algorithms.generate_calls"


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


# out= on every call: panda's mimic fingers take the coupled route, talos is floating
OUT_ROBOTS = ("arm7", "panda", "talos")


def out_model(robot_name):
    if robot_name == "panda":
        model = rbd_ros.load_model(robot_path("panda"))     # mimic="coupled", the default
        assert model.coupling is not None
        return model
    return get_robot(robot_name).model


def out_shapes(name, model):
    """Return the shapes of the arrays ``out=`` gives to the call ``name`` (from its row)."""
    # operational_space_inertia's shape depends on translational (False: the call's default)
    # and center_of_mass's on velocity (v given: ``call`` passes the state's)
    sizes = {"nv": model.nv, "nq": model.nq, "nb": model.nbodies, "translational": False,
             "velocity": True}
    shapes = [eval(shape, {}, sizes) for shape in
              entries.caller_outputs(entries.ENTRIES[name]).values()]
    return tuple(shape if isinstance(shape, tuple) else (shape,) for shape in shapes)


def out_argument(arrays):
    """Return what ``out=`` takes: the array of a call with one result, else the tuple."""
    return arrays[0] if len(arrays) == 1 else tuple(arrays)


def test_every_call_takes_out():
    for name in entries.ENTRIES:
        parameter = inspect.signature(getattr(rbd_ros, name)).parameters.get("out")
        assert parameter is not None and parameter.kind is parameter.KEYWORD_ONLY, name
        assert parameter.default is None, name


@pytest.mark.parametrize("robot_name", OUT_ROBOTS)
@pytest.mark.parametrize("name", sorted(entries.ENTRIES))
def test_out_gives_the_fresh_results_bit_for_bit(name, robot_name):
    """
    The caller's arrays are written, returned, and hold exactly what a fresh call returns.

    Arrays of their own (seed 3, reused for seed 4: the test made inline in a call of one
    result) and C-contiguous views into one buffer (seed 5: what only the full checks take).
    """
    m = out_model(robot_name)
    shapes = out_shapes(name, m)
    for seed in (3, 4, 5):
        s = clean_state(m, seed)
        fresh = flat(call(name, m, s))
        if seed == 3:
            arrays = [np.full(shape, np.nan) for shape in shapes]
        elif seed == 5:
            buffer, arrays, start = np.full(1 + sum(map(np.prod, shapes)), np.nan), [], 1
            for shape in shapes:
                arrays.append(buffer[start:start + np.prod(shape)].reshape(shape))
                start += np.prod(shape)
        for data in (None, rbd_ros.Data(m)):
            got = call(name, m, s, out=out_argument(arrays), data=data) \
                if name != "integrate" else call(name, m, s, out=out_argument(arrays))
            assert np.array_equal(flat(got), fresh), f"{name} on {robot_name}, seed {seed}"
            if len(arrays) == 1 and isinstance(got, tuple):
                # compute_all, center_of_mass with v: views of the caller's block
                assert all(np.shares_memory(x, arrays[0]) for x in got), name
            elif len(arrays) == 1 and isinstance(got, float):     # effective_mass: a number
                assert arrays[0].shape == (1,) and arrays[0][0] == got, name
            elif len(arrays) == 1:
                assert got is arrays[0], name
            else:
                assert len(got) == len(arrays) and all(x is y for x, y in zip(got, arrays))


def _normalized(message):
    """Return a refusal's message without the call's name and the numbers of its shapes."""
    message = re.sub(r"^\w+: ", "", message)
    message = re.sub(r"(tuple|list) of \d+", r"\1 of N", message)
    return re.sub(r"\((\d+, )*\d+,?\)", "(shape)", message)


def _refusal(function, *args, **kwargs):
    with pytest.raises(ValueError) as caught:
        function(*args, **kwargs)
    return str(caught.value)


def _bad_outs(shapes, inputs):
    """
    Yield (kind, the out argument) of each refusal, the bad array at index 1 of several.

    ``inputs``: the call's first input array, which the aliasing out shares memory with.
    """
    several = len(shapes) > 1
    j = 1 if several else 0
    shape = shapes[j]

    def put(arr):
        arrays = [np.empty(x) for x in shapes]
        arrays[j] = arr
        return out_argument(arrays)
    read_only = np.empty(shape)
    read_only.flags.writeable = False
    yield "float32", put(np.empty(shape, np.float32))
    yield "shape", put(np.empty((shape[0] + 1,) + shape[1:]))
    yield "strided", put(np.empty(shape[:-1] + (2 * shape[-1],))[..., ::2])
    yield "read-only", put(read_only)
    yield "byte-swapped", put(np.empty(shape, ">f8"))
    yield "fortran", put(np.empty(shape, order="F"))
    yield "flat", put(np.empty(int(np.prod(shape))))         # the entry point trusts ndim
    yield "extra axis", put(np.empty(shape + (1,)))
    yield "list", put(np.empty(shape).tolist())
    yield "aliasing an input", put(inputs[:np.prod(shape)].reshape(shape))
    if several:
        shared = np.empty(shapes[0])
        yield "aliasing an output", (shared,) + tuple(np.empty(x) for x in shapes[1:-1]) + (
            shared.ravel()[:np.prod(shapes[-1])].reshape(shapes[-1]),)
        yield "too few", tuple(np.empty(x) for x in shapes[:-1])
        yield "an array", np.empty(shapes[0])


def _aliased_first_input(state, name, size):
    """Put the first input at the start of a buffer of ``size`` floats; return the buffer."""
    buffer = np.zeros(max(size, state[name].size))
    buffer[:state[name].size] = state[name]
    state[name] = buffer[:state[name].size]
    return buffer


@pytest.mark.parametrize("robot_name", ["arm7", "panda"])
@pytest.mark.parametrize("name", sorted(entries.ENTRIES))
def test_a_bad_out_is_refused_as_a_batch_call_refuses_it(name, robot_name):
    """
    Each refusal's message is the batch call's for the same bad ``out``, names and shapes aside.

    The batch call of one result is rnea_batch's, of several rnea_derivatives_batch's (its
    three outputs; a call of two is refused with the same words). Nothing is written.
    """
    m = out_model(robot_name)
    shapes = out_shapes(name, m)
    first = next(iter(entries.ENTRIES[name].inputs))
    batch_name = "rnea_derivatives_batch" if len(shapes) > 1 else "rnea_batch"
    batch_shapes = (((4, m.nv, m.nv),) * 3 if len(shapes) > 1 else ((4, m.nv),))
    size = max(int(np.prod(x)) for x in shapes + batch_shapes)
    s = clean_state(m)
    buffer = _aliased_first_input(s, first, size)
    batch_state = {k: np.tile(s[k], (4, 1)) for k in ("q", "v", "a")}
    batch_buffer = np.zeros(max(size, batch_state["q"].size))
    batch_buffer[:batch_state["q"].size] = batch_state["q"].ravel()
    batch_state["q"] = batch_buffer[:batch_state["q"].size].reshape(batch_state["q"].shape)
    before = {k: x.copy() for k, x in s.items()}
    for (kind, bad), (_, batch_bad) in zip(_bad_outs(shapes, buffer),
                                           _bad_outs(batch_shapes, batch_buffer)):
        if kind == "strided" and np.prod(shapes[0]) == 1:
            continue        # an array of one number is contiguous whatever its stride
        if kind in ("fortran", "flat") and len(shapes[1 if len(shapes) > 1 else 0]) == 1:
            continue        # a vector in Fortran order, or flattened, is what it was
        message = _refusal(call, name, m, s, out=bad)
        assert message.startswith(f"{name}: out"), (kind, message)
        expected = _refusal(getattr(rbd_ros, batch_name), m, batch_state["q"],
                            batch_state["v"], batch_state["a"], out=batch_bad)
        if kind == "aliasing an input":
            expected = expected.replace("with q:", f"with {first}:")
        if kind == "aliasing an output":          # the last output shares the first's
            expected = expected.replace("out[2]", f"out[{len(shapes) - 1}]")
        assert _normalized(message) == _normalized(expected), kind
        for k, x in s.items():
            assert np.array_equal(x, before[k]), (kind, k)


@pytest.mark.parametrize("robot_name", OUT_ROBOTS)
@pytest.mark.parametrize("name", sorted(entries.ENTRIES))
def test_a_read_only_out_is_refused_at_every_position_and_nothing_is_written(name, robot_name):
    """
    Each output in turn read-only, of its own or a view of a writeable buffer: refused.

    The calls' inline tests leave the WRITEABLE flag to the kernels (``rbd_ros._array_flags``),
    which read it on every call: the message is the full check's, no output is written, and
    the same arrays, the flag set back on, are then written (nothing cached the refusal).
    """
    m = out_model(robot_name)
    shapes = out_shapes(name, m)
    s = clean_state(m)
    fresh = flat(call(name, m, s))
    for j in range(len(shapes)):
        for kind in ("own", "view"):
            arrays = [np.full(shape, 7.25) for shape in shapes]
            if kind == "view":
                buffer = np.full(np.prod(shapes[j]), 7.25)
                arrays[j] = buffer.reshape(shapes[j]).view()
            arrays[j].flags.writeable = False
            message = _refusal(call, name, m, s, out=out_argument(arrays))
            where = "out" if len(shapes) == 1 else f"out[{j}]"
            assert message == f"{name}: {where} must be writeable", (kind, message)
            assert all(np.all(x == 7.25) for x in arrays), (kind, j)
            arrays[j].flags.writeable = True
            got = call(name, m, s, out=out_argument(arrays))
            assert np.array_equal(flat(got), fresh), (kind, j)


def test_an_output_that_is_an_input_or_another_output_itself_is_refused():
    """
    Arrays that own their memory pass the inline test unless one *is* another.

    ur5 has nv = nb = 6, so an fext (nb, 6) has the shape of an (nv, nv) result: the same
    array given as fext and as an output, or twice as an output, is refused, with the
    words of the full check, and nothing is written.
    """
    m = get_robot("ur5").model
    assert (m.nbodies, 6) == (m.nv, m.nv)
    s = clean_state(m)
    fext = np.random.default_rng(1).normal(size=(m.nbodies, 6))
    kept = {k: x.copy() for k, x in s.items()}, fext.copy()
    dv, M = np.empty((m.nv, m.nv)), np.empty((m.nv, m.nv))
    message = _refusal(rbd_ros.rnea_derivatives, m, s["q"], s["v"], s["a"], fext,
                       out=(fext, dv, M))
    assert message.startswith("rnea_derivatives: out[0] shares memory with fext"), message
    message = _refusal(rbd_ros.rnea_derivatives, m, s["q"], s["v"], s["a"], out=(dv, dv, M))
    assert message.startswith("rnea_derivatives: out[1] shares memory with out[0]"), message
    message = _refusal(rbd_ros.rnea, m, s["q"], s["v"], s["a"], out=s["v"])
    assert message.startswith("rnea: out shares memory with v"), message
    for k, x in s.items():
        np.testing.assert_array_equal(x, kept[0][k])
    np.testing.assert_array_equal(fext, kept[1])
    fresh = rbd_ros.rnea_derivatives(m, s["q"], s["v"], s["a"], fext)
    given = np.empty((m.nv, m.nv)), dv, M
    result = rbd_ros.rnea_derivatives(m, s["q"], s["v"], s["a"], fext, out=given)
    assert all(x is y for x, y in zip(result, given))
    for x, y in zip(result, fresh):
        np.testing.assert_array_equal(x, y)


@pytest.mark.parametrize("name", sorted(entries.ENTRIES))
def test_every_input_and_every_other_output_an_out_overlaps_is_named(name):
    """
    Each kernel tests ``out=`` against each array input and each other output it is given.

    Every input in turn, then every pair of outputs, shares the first bytes of one buffer
    with an output (its start, so that a missing test would let the kernel overwrite what it
    reads): refused with that input's or output's name, and nothing is written.
    """
    m = out_model("arm7")
    shapes = out_shapes(name, m)
    names = ("out",) if len(shapes) == 1 else tuple(f"out[{j}]" for j in range(len(shapes)))
    size = sum(int(np.prod(x)) for x in shapes) + 8 * m.nv * m.nbodies
    # each input C-contiguous, and a view of every other entry (row, for fext): a strided
    # input, copied before its kernel reads it, is tested against out= first all the same
    for x, stride in ((x, stride) for x in entries.ENTRIES[name].inputs for stride in (1, 2)):
        s = clean_state(m)
        if x == "fext":     # ``call`` passes it apart, where given
            s["fext"] = np.zeros((m.nbodies, 6))
        buffer = np.zeros(size + s[x].size)
        s[x] = _view_at_start(buffer, s[x], stride)
        before = {k: y.copy() for k, y in s.items()}
        for j, shape in enumerate(shapes):
            arrays = [np.empty(y) for y in shapes]
            arrays[j] = buffer[:int(np.prod(shape))].reshape(shape)
            message = _refusal(call, name, m, s, s["fext"] if x == "fext" else None,
                               out=out_argument(arrays))
            assert message.startswith(f"{name}: {names[j]} shares memory with {x}"), message
            for k, y in s.items():
                assert np.array_equal(y, before[k]), (name, x, k)
    s = clean_state(m)
    for i in range(len(shapes)):
        for j in range(i + 1, len(shapes)):
            arrays = [np.empty(y) for y in shapes]
            buffer = np.empty(size)
            arrays[i] = buffer[:int(np.prod(shapes[i]))].reshape(shapes[i])
            arrays[j] = buffer[:int(np.prod(shapes[j]))].reshape(shapes[j])
            message = _refusal(call, name, m, s, out=tuple(arrays))
            assert message.startswith(f"{name}: {names[j]} shares memory with {names[i]}"), \
                message


def _view_at_start(buffer, x, stride):
    """Return a view of ``buffer``'s first entries holding x: every ``stride``-th (row, 2-D)."""
    rows = buffer[:stride * x.size].reshape((stride * len(x),) + x.shape[1:])
    rows[::stride] = x
    return rows[::stride]


def test_center_of_mass_without_v_converts_q_as_with_it():
    """Without v (c alone) a q to convert is converted, with and without out=, not refused."""
    m = get_robot("arm7").model
    q = clean_state(m)["q"]
    expected = rbd_ros.center_of_mass(m, q)
    np.testing.assert_array_equal(rbd_ros.center_of_mass(m, list(q)), expected)
    out = np.empty(3)
    assert rbd_ros.center_of_mass(m, list(q), out=out) is out
    np.testing.assert_array_equal(out, expected)
    position, velocity = rbd_ros.center_of_mass(m, list(q), np.zeros(m.nv))
    np.testing.assert_array_equal(position, expected)


def test_out_beside_an_input_that_is_not_an_array():
    """An input that is converted (a list) is read from a copy: it cannot overlap ``out``."""
    m = get_robot("arm7").model
    s = clean_state(m)
    out = np.empty(m.nv)
    assert rbd_ros.rnea(m, list(s["q"]), s["v"], s["a"], out=out) is out
    np.testing.assert_array_equal(out, rbd_ros.rnea(m, s["q"], s["v"], s["a"]))


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
