"""
``out=`` on every public call (``rbd_ros.algorithms.entries``).

The caller's arrays are written and returned, bit for bit what a fresh call returns; every
bad ``out`` (another dtype or shape, strided, read-only at any position, byte-swapped,
Fortran order, a list, aliasing an input or another output) is refused with the batch
calls' words, and nothing is written.
"""
import inspect
import re

import numpy as np
import pytest

import rbd_ros
from entry_calls import (OUT_ROBOTS, call, clean_state, flat, out_argument, out_model,
                         out_shapes)
from helpers import get_robot
from rbd_ros.algorithms import entries


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
