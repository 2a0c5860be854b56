"""
The kernels' tests of a caller's ``out=`` (``algorithms.common``) against numpy's own answers.

Every public call leaves to its kernel the shape, C-contiguity and memory shared with an
input of the caller's ``out=``: what the kernel refuses must be what numpy's
``flags.c_contiguous`` and ``np.may_share_memory`` say, or a call would write into an array
its full test (``_output_arrays.checked``) refuses, or refuse one it accepts. The
tests compile the helpers into a numba function of their own, as the kernels inline them,
and ask both on views of one buffer: offsets, steps, transposes, axes of length 1 (whose
stride numpy ignores) and empty arrays.
"""
import numba
import numpy as np
import pytest

import rbd_ros
from rbd_ros.algorithms.common import apart, matrix_fits, vector_fits


@numba.njit
def _verdicts(x, y):
    """(x fits its own shape, x and y share no memory), as a kernel computes them."""
    fits = matrix_fits(x, x.shape[0], x.shape[1]) if x.ndim == 2 else vector_fits(x, x.shape[0])
    return fits, apart(x, y)


def _views(rng, buffer, count):
    """Yield ``count`` random 1-D and 2-D views of ``buffer`` (each a float64 array)."""
    for _ in range(count):
        start = int(rng.integers(0, 8))
        if rng.random() < 0.4:
            step = int(rng.choice([1, 1, 2, -1]))
            n = int(rng.integers(0, 6))
            x = buffer[start:start + abs(step) * n:abs(step)]
            x = x[::-1] if step < 0 else x
            yield np.ascontiguousarray(x) if rng.random() < 0.1 else x
            continue
        rows, cols = (int(k) for k in rng.integers(0, 5, size=2))
        step = int(rng.choice([1, 1, 1, 2]))
        flat = buffer[start:start + rows * cols * step:step]
        if flat.size < rows * cols:
            continue
        x = flat[:rows * cols].reshape(rows, cols)
        if rng.random() < 0.25:
            x = x.T
        if rng.random() < 0.2 and x.shape[1] > 1:
            x = x[:, ::2]
        yield x


def test_the_kernels_tests_of_an_output_are_numpys():
    """
    Fits == C-contiguous (shape as given); apart == not may_share_memory (C arrays).

    On up to 600 views (a 2-D one that does not fit in the buffer is skipped).
    """
    rng = np.random.default_rng(20261203)
    buffer = np.zeros(64)
    other = np.zeros(16)
    seen = {"fits": set(), "apart": set()}
    views = list(_views(rng, buffer, 600))
    for j, x in enumerate(views):
        y = views[(j * 7 + 3) % len(views)] if j % 3 else other
        if not y.flags.c_contiguous:
            y = other
        fits, disjoint = _verdicts(x, y)
        assert fits == x.flags.c_contiguous, (x.shape, x.strides)
        seen["fits"].add(fits)
        if x.flags.c_contiguous:
            assert disjoint == (not np.may_share_memory(x, y)), (x.shape, x.strides, y.shape)
            seen["apart"].add(disjoint)
    # both answers came up for each test, axes of length 1 and empty arrays among the views
    assert seen == {"fits": {True, False}, "apart": {True, False}}
    assert any(x.ndim == 2 and 1 in x.shape and x.size > 1 and x.strides[0] != 8 * x.shape[1]
               and x.flags.c_contiguous for x in views)
    assert any(x.size == 0 for x in views)
    assert any(x.ndim == 1 and x.size > 1 and x.strides[0] < 0 for x in views)


@pytest.mark.parametrize("route", ["rnea", "crba", "frame_jacobian"])
def test_an_output_with_a_free_stride_is_written(route):
    """
    An out whose only odd stride is that of an axis of length 1 is C-contiguous: accepted.

    A one-joint pendulum (nv = 1): rnea's (1,) and crba's (1, 1) through the dispatcher,
    frame_jacobian's (6, 1) through the entry point.
    """
    m = rbd_ros.load_model(_PENDULUM)
    assert m.nv == 1
    q, v, a = np.array([0.3]), np.array([-0.2]), np.array([0.5])
    if route == "rnea":
        fresh, out = rbd_ros.rnea(m, q, v, a), np.zeros(4)[::4]
        assert out.shape == (1,) and out.strides == (32,)
        result = rbd_ros.rnea(m, q, v, a, out=out)
    elif route == "crba":
        fresh, out = rbd_ros.crba(m, q), np.zeros((2, 3))[:1, :1]
        assert out.flags.c_contiguous and out.strides == (24, 8)
        result = rbd_ros.crba(m, q, out=out)
    else:
        link = list(m.link_frames)[-1]
        fresh = rbd_ros.frame_jacobian(m, q, link)
        out = np.lib.stride_tricks.as_strided(np.zeros(12), (6, 1), (8, 16))
        assert out.flags.c_contiguous and out.flags.writeable
        result = rbd_ros.frame_jacobian(m, q, link, out=out)
    assert result is out
    np.testing.assert_array_equal(result, fresh)


_PENDULUM = """<robot name="pendulum">
  <link name="base"/>
  <link name="bob">
    <inertial><origin xyz="0 0 -0.5"/><mass value="1.5"/>
      <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.02"/></inertial>
  </link>
  <joint name="swing" type="revolute"><parent link="base"/><child link="bob"/>
    <axis xyz="0 1 0"/><limit effort="10" velocity="3" lower="-3" upper="3"/></joint>
</robot>
"""


def test_a_refusal_the_full_test_would_not_make_is_still_a_refusal():
    """Were a kernel and ``checked`` ever to disagree, the call raises, naming what it needs."""
    from rbd_ros import _output_arrays
    fine = np.empty(3)
    error = _output_arrays.refused("rnea", fine, ((3,),), {"q": np.zeros(3)})
    assert isinstance(error, ValueError)
    assert str(error).startswith("rnea: out does not fit what the kernel writes (writeable, "
                                 "shapes ((3,),)")
    error = _output_arrays.refused("rnea", fine, ((4,),), {"q": np.zeros(3)})
    assert str(error) == "rnea: out must have shape (4,), got (3,)"


def test_a_kernel_refusal_reached_another_way_is_worded():
    """OUTPUT_REFUSED through ``_checks.input_error`` (a batch's or a coupled route's status)."""
    from rbd_ros import _checks
    from rbd_ros.algorithms.common import OUTPUT_REFUSED
    m = rbd_ros.load_model(_PENDULUM)
    error = _checks.input_error("rnea", OUTPUT_REFUSED, m, ("q", "v", "a", "fext"),
                                (np.zeros(1),) * 4)
    assert str(error) == ("rnea: an output does not fit what the kernel writes: read-only, the "
                          "wrong shape, not C-contiguous, or sharing memory with an input or "
                          "another output")
