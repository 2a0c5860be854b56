"""
Batched functions: the same results as a loop over the single-state functions.

Also: bad samples named by index, leading dimensions checked, N = 0 allowed.
"""
import numba
import numpy as np
import pytest

import rbd_ros
from helpers import (assert_a_stale_module_is_reported, assert_close,
                     assert_generated_module_is_current, get_robot)

BATCH_ROBOTS = ("arm7", "quadruped", "talos", "branched_planar")
N = 37
TOL = 1e-12

# name: (batch function, single-state function, names of the per-state inputs, outputs)
FUNCTIONS = {
    "rnea": (rbd_ros.rnea_batch, rbd_ros.rnea, ("q", "v", "a"), 1),
    "aba": (rbd_ros.aba_batch, rbd_ros.aba, ("q", "v", "tau"), 1),
    "minv": (rbd_ros.minv_batch, rbd_ros.minv, ("q",), 1),
    "rnea_derivatives": (rbd_ros.rnea_derivatives_batch, rbd_ros.rnea_derivatives,
                         ("q", "v", "a"), 3),
    "aba_derivatives": (rbd_ros.aba_derivatives_batch, rbd_ros.aba_derivatives,
                        ("q", "v", "tau"), 3),
    "coriolis_matrix": (rbd_ros.coriolis_matrix_batch, rbd_ros.coriolis_matrix, ("q", "v"), 1),
}
TAKES_FEXT = {"rnea", "aba", "rnea_derivatives", "aba_derivatives"}


def batch_states(robot, n, seed=0):
    """Return a dict of (n, ·) arrays q, v, a, tau and fext (n, nbodies, 6)."""
    states = [robot.random_state(seed * 1000 + k) for k in range(n)]
    m = robot.model
    if n == 0:
        return {"q": np.zeros((0, m.nq)), "v": np.zeros((0, m.nv)), "a": np.zeros((0, m.nv)),
                "tau": np.zeros((0, m.nv)), "fext": np.zeros((0, m.nbodies, 6))}
    q, v, a, tau, fext = (np.array(x) for x in zip(*states))
    return {"q": q, "v": v, "a": a, "tau": tau, "fext": fext}


def as_tuple(out, nout):
    return out if nout > 1 else (out,)


@pytest.fixture(params=BATCH_ROBOTS)
def robot(request):
    return get_robot(request.param)


@pytest.mark.parametrize("function, with_fext",
                         [(f, False) for f in FUNCTIONS] + [(f, True) for f in FUNCTIONS
                                                            if f in TAKES_FEXT])
def test_batch_equals_loop(robot, function, with_fext):
    batch, single, names, nout = FUNCTIONS[function]
    m = robot.model
    s = batch_states(robot, N)
    args = [s[n] for n in names]
    fext = s["fext"] if with_fext else None
    extra = (fext,) if function in TAKES_FEXT else ()
    out = as_tuple(batch(m, *args, *extra), nout)
    assert len(out) == nout
    for k in range(N):
        extra_k = ((None if fext is None else fext[k]),) if function in TAKES_FEXT else ()
        ref = as_tuple(single(m, *(x[k] for x in args), *extra_k), nout)
        for j in range(nout):
            assert out[j].shape[0] == N
            assert_close(out[j][k], ref[j], TOL, f"{function}[{k}] output {j}")


def test_batch_equals_loop_with_several_thread_counts(robot):
    """The chunking (one chunk per thread, fewer states than threads) changes nothing."""
    m = robot.model
    s = batch_states(robot, 5)
    ref = np.array([rbd_ros.aba(m, s["q"][k], s["v"][k], s["tau"][k], s["fext"][k])
                    for k in range(5)])
    saved = numba.get_num_threads()
    try:
        for nthreads in sorted({1, saved}):
            numba.set_num_threads(nthreads)
            for n in (1, 2, 5):
                out = rbd_ros.aba_batch(m, s["q"][:n], s["v"][:n], s["tau"][:n], s["fext"][:n])
                assert_close(out, ref[:n], TOL, f"aba_batch n={n} threads={nthreads}")
    finally:
        numba.set_num_threads(saved)


def test_every_state_once_whatever_the_split(robot):
    """
    Each state is computed once, by whichever thread claims it.

    Blocks of a chunk are claimed by its thread, then by threads that finished their own;
    sizes that do not divide into blocks or chunks, on 1 and all threads.
    """
    m = robot.model
    s = batch_states(robot, 131)
    ref = np.array([rbd_ros.rnea(m, s["q"][k], s["v"][k], s["a"][k]) for k in range(131)])
    saved = numba.get_num_threads()
    try:
        for nthreads in sorted({1, saved}):
            numba.set_num_threads(nthreads)
            for n in (3, 17, 64, 131):
                out = np.full((n, m.nv), np.nan)
                rbd_ros.rnea_batch(m, s["q"][:n], s["v"][:n], s["a"][:n], out=out)
                assert np.array_equal(out, ref[:n]), f"n={n} threads={nthreads}"
            bad = s["v"].copy()
            bad[130, 0] = np.nan                   # in the last block of the last chunk
            with pytest.raises(ValueError, match="sample 130: v contains NaN"):
                rbd_ros.rnea_batch(m, s["q"], bad, s["a"])
    finally:
        numba.set_num_threads(saved)


@pytest.mark.parametrize("function", list(FUNCTIONS))
def test_nan_in_sample_names_index_and_argument(robot, function):
    batch, _, names, _ = FUNCTIONS[function]
    m = robot.model
    s = batch_states(robot, N)
    targets = list(names) + (["fext"] if function in TAKES_FEXT else [])
    for target in targets:
        bad = {n: s[n].copy() for n in s}
        bad[target][5].flat[2] = np.nan
        bad[target][9].flat[0] = np.inf     # a later bad sample: the first one is reported
        extra = (bad["fext"],) if function in TAKES_FEXT else ()
        with pytest.raises(ValueError) as info:
            batch(m, *(bad[n] for n in names), *extra)
        message = str(info.value)
        assert "sample 5" in message, message
        assert f"{target} contains NaN" in message, message


def test_zero_quaternion_names_sample():
    robot = get_robot("quadruped")
    m = robot.model
    s = batch_states(robot, 8)
    s["q"][3, 3:7] = 0.0
    with pytest.raises(ValueError, match=r"sample 3: .*q has a zero base quaternion"):
        rbd_ros.aba_batch(m, s["q"], s["v"], s["tau"])


@pytest.mark.parametrize("function", list(FUNCTIONS))
def test_mismatched_leading_dimension_raises(robot, function):
    batch, _, names, _ = FUNCTIONS[function]
    m = robot.model
    s = batch_states(robot, 6)
    for target in names[1:]:
        args = [s[n][:5] if n == target else s[n] for n in names]
        extra = (s["fext"],) if function in TAKES_FEXT else ()
        with pytest.raises(ValueError, match=rf"{target} has 5 states but q has 6"):
            batch(m, *args, *extra)
    if function in TAKES_FEXT:
        with pytest.raises(ValueError, match=r"fext has 4 states but q has 6"):
            batch(m, *(s[n] for n in names), s["fext"][:4])


@pytest.mark.parametrize("function", list(FUNCTIONS))
def test_wrong_shapes_raise(robot, function):
    batch, _, names, _ = FUNCTIONS[function]
    m = robot.model
    s = batch_states(robot, 4)
    for target in names:
        args = [s[n][:, :-1] if n == target else s[n] for n in names]
        extra = (s["fext"],) if function in TAKES_FEXT else ()
        with pytest.raises(ValueError, match=rf"{target} must have shape \(N, "):
            batch(m, *args, *extra)
        args = [s[n][0] if n == target else s[n] for n in names]     # a single state: 1-D
        with pytest.raises(ValueError, match=rf"{target} must be a 2-D array"):
            batch(m, *args, *extra)
    if function in TAKES_FEXT:
        with pytest.raises(ValueError, match=r"fext must have shape \(N, "):
            batch(m, *(s[n] for n in names), s["fext"][:, 1:])


@pytest.mark.parametrize("function", list(FUNCTIONS))
def test_empty_batch(robot, function):
    batch, _, names, nout = FUNCTIONS[function]
    m = robot.model
    s = batch_states(robot, 0)
    shape = (0, m.nv) if function in ("rnea", "aba") else (0, m.nv, m.nv)
    for extra in ([(), ((s["fext"],))] if function in TAKES_FEXT else [()]):
        out = as_tuple(batch(m, *(s[n] for n in names), *extra), nout)
        assert len(out) == nout
        for x in out:
            assert x.shape == shape and x.dtype == np.float64


def test_other_array_likes(robot):
    """
    Lists, int arrays, read-only arrays and strided views give the same answer.

    The same as writable float64 C-contiguous arrays.
    """
    m = robot.model
    s = batch_states(robot, 6)
    s["fext"] = np.round(s["fext"])
    ref = rbd_ros.rnea_batch(m, s["q"], s["v"], s["a"], s["fext"])
    wide = np.zeros((6, 2 * m.nv))
    wide[:, ::2] = s["v"]
    readonly = s["a"].copy()
    readonly.flags.writeable = False
    out = rbd_ros.rnea_batch(m, s["q"].tolist(), wide[:, ::2], readonly,
                             s["fext"].astype(np.int64))
    assert_close(out, ref, TOL, "array-likes")
    with pytest.raises(ValueError, match="q must be an array of numbers"):
        rbd_ros.rnea_batch(m, [["x"] * m.nq] * 6, s["v"], s["a"])


def test_workspace_is_cached(robot):
    m = robot.model
    s = batch_states(robot, 4)
    rbd_ros.minv_batch(m, s["q"])
    ws = m.data.batch_workspace(1)
    rbd_ros.minv_batch(m, s["q"])
    rbd_ros.aba_derivatives_batch(m, s["q"], s["v"], s["tau"])
    assert m.data.batch_workspace(1) is ws
    assert ws.nchunks >= numba.get_num_threads()


# name: (batch function, names of the per-state inputs, shapes of the outputs for N states)
ALL_BATCHES = {
    **{name: (f[0], f[2]) for name, f in FUNCTIONS.items()},
    "joint_torque_regressor": (rbd_ros.joint_torque_regressor_batch, ("q", "v", "a")),
}


def out_shapes(model, function, n):
    """Return the shapes of the outputs of ``function`` for n states (a tuple per output)."""
    nv = model.nv
    if function in ("rnea", "aba"):
        return ((n, nv),)
    if function in ("minv", "coriolis_matrix"):
        return ((n, nv, nv),)
    if function == "joint_torque_regressor":
        return ((n * nv, 10 * model.nbodies),)
    return ((n, nv, nv),) * 3


def call(function, model, s, **kw):
    batch, names = ALL_BATCHES[function]
    extra = (s["fext"],) if function in TAKES_FEXT else ()
    return batch(model, *(s[n] for n in names), *extra, **kw)


@pytest.mark.parametrize("function", list(ALL_BATCHES))
def test_out_is_written_and_returned(robot, function):
    """out= gives the fresh call's results exactly, in the caller's arrays, call after call."""
    m = robot.model
    shapes = out_shapes(m, function, 9)
    out = tuple(np.full(shape, np.nan) for shape in shapes)
    arg = out[0] if len(out) == 1 else list(out)           # a list of arrays serves too
    for seed in (1, 2):                                     # the same arrays reused
        s = batch_states(robot, 9, seed)
        ref = as_tuple(call(function, m, s), len(shapes))
        got = as_tuple(call(function, m, s, out=arg), len(shapes))
        assert len(got) == len(shapes)
        for j, (x, y) in enumerate(zip(got, ref)):
            assert x is out[j], f"{function}: output {j} is not the out array"
            assert np.array_equal(x, y), f"{function}: output {j} differs (seed {seed})"


@pytest.mark.parametrize("function", list(ALL_BATCHES))
def test_out_empty_batch(robot, function):
    m = robot.model
    s = batch_states(robot, 0)
    out = tuple(np.empty(shape) for shape in out_shapes(m, function, 0))
    got = as_tuple(call(function, m, s, out=out[0] if len(out) == 1 else out), len(out))
    assert all(x is y for x, y in zip(got, out))


def _bad_outs(model, function, s):
    """Yield (description, out argument, message pattern) for each kind of bad ``out``."""
    shapes = out_shapes(model, function, len(s["q"]))
    several = len(shapes) > 1

    def put(j, arr):
        """Return the out argument with output j replaced by arr (the others good)."""
        arrays = [np.empty(shape) for shape in shapes]
        arrays[j] = arr
        return tuple(arrays) if several else arr

    name = r"out\[1\]" if several else "out"
    j = 1 if several else 0
    shape = shapes[j]
    yield "float32", put(j, np.empty(shape, np.float32)), rf"{name} must have dtype float64"
    yield "shape", put(j, np.empty((shape[0] + 1,) + shape[1:])), rf"{name} must have shape"
    yield "list", put(j, np.empty(shape).tolist()), rf"{name} must be a numpy array"
    strided = np.empty(shape[:-1] + (2 * shape[-1],))[..., ::2]
    yield "strided", put(j, strided), rf"{name} must be C-contiguous"
    readonly = np.empty(shape)
    readonly.flags.writeable = False
    yield "read-only", put(j, readonly), rf"{name} must be writeable"
    if several:
        shared = np.empty(shapes[0])
        yield "aliased", (shared, np.empty(shapes[1]), shared), \
            r"out\[2\] shares memory with out\[0\]"
        yield "pair", tuple(np.empty(shape) for shape in shapes[:2]), \
            r"out must be a tuple of 3 arrays, got a tuple of 2"
        yield "array", np.empty(shapes[0]), r"out must be a tuple of 3 arrays, got an array"


@pytest.mark.parametrize("function", list(ALL_BATCHES))
def test_bad_out_is_refused(robot, function):
    m = robot.model
    s = batch_states(robot, 4)
    for _, out, pattern in _bad_outs(m, function, s):
        with pytest.raises(ValueError, match=rf"{function}_batch: {pattern}"):
            call(function, m, s, out=out)


@pytest.mark.parametrize("function", ["rnea", "aba", "rnea_derivatives", "aba_derivatives"])
def test_out_overlapping_an_input_is_refused(robot, function):
    """An out that is (part of) an input would overwrite states still to be read: refused."""
    m = robot.model
    s = batch_states(robot, 4)
    if function in ("rnea", "aba"):
        out, pattern = s["v"], "out shares memory with v"
    else:                                      # out[2] and fext start in the same buffer
        matrices = 4 * m.nv * m.nv
        buffer = np.zeros(max(matrices, s["fext"].size))
        buffer[:s["fext"].size] = s["fext"].ravel()
        s["fext"] = buffer[:s["fext"].size].reshape(s["fext"].shape)
        out = (np.empty((4, m.nv, m.nv)), np.empty((4, m.nv, m.nv)),
               buffer[:matrices].reshape(4, m.nv, m.nv))
        pattern = r"out\[2\] shares memory with fext"
    before = {n: s[n].copy() for n in s}
    with pytest.raises(ValueError, match=rf"{function}_batch: {pattern}"):
        call(function, m, s, out=out)
    for n in s:                                # refused before anything was written
        assert np.array_equal(s[n], before[n]), n


def test_out_of_a_converted_input_is_accepted(robot):
    """An input that had to be converted (a copy is read) may share memory with out."""
    m = robot.model
    s = batch_states(robot, 4)
    ref = rbd_ros.rnea_batch(m, s["q"], s["v"], s["a"])
    wide = np.zeros((4, 2 * m.nv))
    wide[:, ::2] = s["a"]                      # strided: converted, so not read in place
    out = rbd_ros.rnea_batch(m, s["q"], s["v"], wide[:, ::2], out=np.empty((4, m.nv)))
    assert np.array_equal(out, ref)


GENERATE_KERNELS = "python -m rbd_ros.batch.generate_kernels"


def test_the_batch_kernels_are_what_their_generator_writes():
    """algorithm_kernels.py is checked in: it must be what the tables and signatures give now."""
    from rbd_ros.batch import generate_kernels
    assert_generated_module_is_current(generate_kernels, GENERATE_KERNELS)


def test_a_stale_batch_kernels_module_is_reported(tmp_path, monkeypatch, capsys):
    from rbd_ros.batch import generate_kernels
    assert_a_stale_module_is_reported(generate_kernels, GENERATE_KERNELS, tmp_path, monkeypatch,
                                      capsys)


def test_a_table_row_that_does_not_fit_its_kernel_is_refused(monkeypatch):
    """A scratch array too many, too few, or not the single-state call's: TypeError."""
    from rbd_ros.batch import generate_kernels
    single, module, scratch = generate_kernels.ALGORITHMS["minv"]
    for wrong in (scratch + ("dof",), scratch[:1]):
        with pytest.raises(TypeError, match="minv_kernel takes 5 arguments"):
            generate_kernels.kernel_source("minv", (single, module, wrong), False)
    with pytest.raises(TypeError, match="not what its single-state call passes"):    # swapped
        generate_kernels.kernel_source("minv", (single, module, scratch[::-1]), False)


def test_every_batch_call_has_its_kernel_and_its_coupled_kernel():
    from rbd_ros.batch import generate_kernels
    from rbd_ros.batch.algorithm_kernels import COUPLED_KERNELS, KERNELS
    assert set(KERNELS) == set(COUPLED_KERNELS) == set(generate_kernels.STATES)
    for table, rows in ((KERNELS, generate_kernels.ALGORITHMS),
                        (COUPLED_KERNELS, generate_kernels.COUPLED)):
        for algorithm, (kernel, scratch) in table.items():
            assert scratch == rows[algorithm][2]
            assert kernel.__name__.endswith(f"{algorithm}_batch_kernel")
