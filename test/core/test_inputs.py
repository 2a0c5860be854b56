"""
Input validation of the core functions.

Bad inputs raise ValueError naming the argument; other array-likes give the same answer as
C-contiguous float64 arrays.
"""
import re

import numpy as np
import pytest

import rbd_ros
from helpers import get_robot

# a fixed-base robot and a floating-base one (the latter for quaternion checks)
INPUT_ROBOTS = ("arm7", "prismatic", "quadruped")


def names_argument(message, name):
    """Tell whether the message speaks of the argument ``name`` as such ("v has ...")."""
    return re.search(rf"(^|[\s:(,'\"]){re.escape(name)}['\"]?\s+(has|contains|must|is)\b",
                     message) is not None


def call(function, model, args):
    """Call an rbd_ros function given a dict of its arguments."""
    if function == "rnea":
        return rbd_ros.rnea(model, args["q"], args["v"], args["a"], args.get("fext"))
    if function == "aba":
        return rbd_ros.aba(model, args["q"], args["v"], args["tau"], args.get("fext"))
    if function == "crba":
        return rbd_ros.crba(model, args["q"])
    if function == "nonlinear_effects":
        return rbd_ros.nonlinear_effects(model, args["q"], args["v"])
    if function == "gravity_torques":
        return rbd_ros.gravity_torques(model, args["q"])
    raise AssertionError(function)


ARGS = {
    "rnea": ("q", "v", "a", "fext"),
    "aba": ("q", "v", "tau", "fext"),
    "crba": ("q",),
    "nonlinear_effects": ("q", "v"),
    "gravity_torques": ("q",),
}
CASES = [(f, arg) for f, args in ARGS.items() for arg in args]


def good_args(model, seed=0):
    rng = np.random.default_rng(seed)
    return {"q": model.random_configuration(rng), "v": rng.normal(size=model.nv),
            "a": rng.normal(size=model.nv), "tau": rng.normal(size=model.nv),
            "fext": rng.normal(size=(model.nbodies, 6))}


def expect_error(function, model, args, name):
    with pytest.raises(ValueError) as info:
        call(function, model, args)
    message = str(info.value)
    assert names_argument(message, name), f"message does not name {name!r}: {message!r}"
    return message


@pytest.mark.parametrize("robot_name", INPUT_ROBOTS)
@pytest.mark.parametrize("function,arg", CASES)
@pytest.mark.parametrize("delta", [-1, 1])
def test_wrong_size(robot_name, function, arg, delta):
    m = get_robot(robot_name).model
    args = good_args(m)
    x = args[arg]
    if arg == "fext":
        assert m.nbodies > 1            # (0, 6) would mean "no external force"
        args[arg] = np.zeros((m.nbodies + delta, 6))
    else:
        args[arg] = np.zeros(len(x) + delta)
    msg = expect_error(function, m, args, arg)
    assert "size" in msg or "shape" in msg


@pytest.mark.parametrize("function", ["rnea", "aba"])
@pytest.mark.parametrize("shape", [(None, 5), (None, 7), (6,), (None, 6, 1), (0, 5), (6, None)])
def test_fext_wrong_shape(function, shape):
    m = get_robot("arm7").model
    args = good_args(m)
    args["fext"] = np.ones(tuple(m.nbodies if s is None else s for s in shape))
    expect_error(function, m, args, "fext")


@pytest.mark.parametrize("robot_name", INPUT_ROBOTS)
@pytest.mark.parametrize("function,arg", CASES)
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite(robot_name, function, arg, bad):
    m = get_robot(robot_name).model
    for position in (0, -1):           # first and last entry
        args = good_args(m)
        x = np.array(args[arg])
        x.flat[position] = bad
        args[arg] = x
        msg = expect_error(function, m, args, arg)
        assert re.search(r"nan|inf|finite", msg, re.I), msg


@pytest.mark.parametrize("function,arg", CASES)
def test_empty_list_is_a_wrong_size(function, arg):
    """An empty list is a wrong-size argument like any other."""
    m = get_robot("arm7").model
    args = good_args(m)
    args[arg] = []
    expect_error(function, m, args, arg)


@pytest.mark.parametrize("function", list(ARGS))
def test_zero_dof_model_accepts_empty_lists(function):
    """A fixed-base robot with a single link has nq = nv = 0; empty lists are valid inputs."""
    m = rbd_ros.load_model('<robot name="one"><link name="a"><inertial><mass value="2"/>'
                           '<inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/>'
                           '</inertial></link></robot>')
    assert (m.nq, m.nv, m.nbodies) == (0, 0, 0)
    empty = np.zeros(0)
    args = {"q": empty, "v": empty, "a": empty, "tau": empty}
    assert call(function, m, args).size == 0
    assert call(function, m, {k: [] for k in args}).size == 0


@pytest.mark.parametrize("function", list(ARGS))
def test_nan_in_quaternion(function):
    m = get_robot("quadruped").model
    args = good_args(m)
    args["q"][5] = np.nan
    expect_error(function, m, args, "q")


@pytest.mark.parametrize("function", list(ARGS))
def test_zero_quaternion(function):
    m = get_robot("quadruped").model
    args = good_args(m)
    args["q"][3:7] = 0.0
    msg = expect_error(function, m, args, "q")
    assert "quaternion" in msg


@pytest.mark.parametrize("function", list(ARGS))
@pytest.mark.parametrize("robot_name", ["arm7", "quadruped"])
def test_two_dimensional_q(function, robot_name):
    m = get_robot(robot_name).model
    args = good_args(m)
    args["q"] = args["q"][None, :]
    expect_error(function, m, args, "q")
    args["q"] = np.array(args["q"][0])[:, None]
    expect_error(function, m, args, "q")


@pytest.mark.parametrize("function", list(ARGS))
@pytest.mark.parametrize("bad", ["abc", "1.0", ["a", "b"], None, {"x": 1}, object()])
def test_non_numeric_q(function, bad):
    m = get_robot("arm7").model
    args = good_args(m)
    args["q"] = bad
    expect_error(function, m, args, "q")


@pytest.mark.parametrize("function,arg", [c for c in CASES if c[1] != "q"])
def test_string_other_arguments(function, arg):
    m = get_robot("arm7").model
    args = good_args(m)
    args[arg] = "hello"
    expect_error(function, m, args, arg)


@pytest.mark.parametrize("function,arg", [c for c in CASES if c[1] in ("v", "a", "tau")])
def test_two_dimensional_vectors(function, arg):
    m = get_robot("arm7").model
    args = good_args(m)
    args[arg] = args[arg][None, :]
    expect_error(function, m, args, arg)


def test_error_is_raised_for_first_bad_argument_only_once():
    """After an error the model still works (no corrupted workspace)."""
    robot = get_robot("quadruped")
    m = robot.model
    args = good_args(m, 3)
    expected = rbd_ros.rnea(m, args["q"], args["v"], args["a"], args["fext"])
    bad = dict(args, v=np.full(m.nv, np.nan))
    with pytest.raises(ValueError):
        call("rnea", m, bad)
    np.testing.assert_array_equal(rbd_ros.rnea(m, args["q"], args["v"], args["a"],
                                               args["fext"]), expected)


def _variants(x):
    """Array-likes equal to x that are not C-contiguous float64 arrays."""
    x = np.asarray(x, np.float64)
    strided = np.empty(x.shape[:-1] + (2 * x.shape[-1],))
    strided[..., ::2] = x
    fortran = np.asfortranarray(x)
    readonly = x.copy()
    readonly.flags.writeable = False
    return {
        "list": x.tolist(),
        "tuple": tuple(map(tuple, x)) if x.ndim == 2 else tuple(x),
        "strided view": strided[..., ::2],
        "reversed view": x[..., ::-1].copy()[..., ::-1],
        "fortran": fortran if x.ndim == 2 else x.copy(),
        "readonly": readonly,
    }


@pytest.mark.parametrize("function", list(ARGS))
@pytest.mark.parametrize("robot_name", ["arm7", "quadruped"])
def test_array_likes_give_the_same_answer(function, robot_name):
    m = get_robot(robot_name).model
    args = good_args(m, 5)
    ref = call(function, m, args)
    for arg in ARGS[function]:
        for kind, value in _variants(args[arg]).items():
            out = call(function, m, dict(args, **{arg: value}))
            np.testing.assert_array_equal(out, ref, err_msg=f"{arg} as {kind}")


@pytest.mark.parametrize("function", list(ARGS))
def test_float32_and_int_inputs(function):
    m = get_robot("arm7").model
    rng = np.random.default_rng(9)
    ints = {"q": rng.integers(-2, 3, m.nv), "v": rng.integers(-3, 4, m.nv),
            "a": rng.integers(-3, 4, m.nv), "tau": rng.integers(-9, 10, m.nv),
            "fext": rng.integers(-2, 3, (m.nbodies, 6))}
    ref = call(function, m, {k: x.astype(np.float64) for k, x in ints.items()})
    np.testing.assert_array_equal(call(function, m, ints), ref)
    np.testing.assert_array_equal(call(function, m, {k: x.astype(np.float32)
                                                     for k, x in ints.items()}), ref)
    np.testing.assert_array_equal(call(function, m, {k: x.tolist() for k, x in ints.items()}),
                                  ref)


def test_inputs_are_not_modified():
    m = get_robot("quadruped").model
    args = good_args(m, 2)
    args["q"][3:7] *= 2.0            # non-normalized: must not be normalized in place
    copies = {k: np.array(x) for k, x in args.items()}
    for function in ARGS:
        call(function, m, args)
    for k in args:
        np.testing.assert_array_equal(args[k], copies[k], err_msg=k)


def test_results_are_fresh_arrays():
    m = get_robot("arm7").model
    args = good_args(m, 4)
    t1 = rbd_ros.rnea(m, args["q"], args["v"], args["a"])
    t1_copy = t1.copy()
    t2 = rbd_ros.rnea(m, args["q"], np.zeros(m.nv), np.zeros(m.nv))
    assert t1 is not t2
    np.testing.assert_array_equal(t1, t1_copy)
    M1 = rbd_ros.crba(m, args["q"])
    M1_copy = M1.copy()
    rbd_ros.crba(m, m.random_configuration(1))
    np.testing.assert_array_equal(M1, M1_copy)


@pytest.mark.parametrize("bad", [(0, 0), (0, 0, 0, 0), (np.nan, 0, 0), "up", [[0, 0, -9.81]]])
def test_bad_gravity(bad):
    m = get_robot("pendulum").model
    before = m.gravity
    with pytest.raises(ValueError, match="gravity"):
        m.with_gravity(bad)
    with pytest.raises(AttributeError):
        m.gravity = [0.0, 0.0, -1.0]
    np.testing.assert_array_equal(m.gravity, before)


def test_gravity_property_returns_a_copy():
    m = get_robot("pendulum").model
    g = m.gravity
    g[:] = 100.0
    np.testing.assert_array_equal(m.gravity, [0.0, 0.0, -9.81])
