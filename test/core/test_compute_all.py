"""
Check compute_all against the separate functions and Pinocchio.

compute_all is one kernel sharing the passes of RNEA, ABA, M⁻¹ and the derivatives of ID
and FD (RSS 2018 seed, Algorithms 1-3 and Eq. 24). Every field must equal the separate
functions' results, and Pinocchio's.
"""
import numpy as np
import pytest

import rbd_ros
from helpers import assert_close, get_robot

ROBOTS = ("arm7", "branched", "quadruped", "talos", "branched_planar")
FIELDS = ("tau", "qdd", "Minv", "dtau_dq", "dtau_dv", "dqdd_dq", "dqdd_dv")
SEP_TOL = 1e-10
PIN_TOL = 1e-9


@pytest.fixture(params=ROBOTS)
def robot(request):
    return get_robot(request.param)


def _separate(m, q, v, tau, a, fext):
    """Compute the same quantities with the five separate functions."""
    a0 = np.zeros(m.nv) if a is None else a
    dtau_dq, dtau_dv, _ = rbd_ros.rnea_derivatives(m, q, v, a0, fext)
    dqdd_dq, dqdd_dv, _ = rbd_ros.aba_derivatives(m, q, v, tau, fext)
    return {"tau": rbd_ros.rnea(m, q, v, a0, fext), "qdd": rbd_ros.aba(m, q, v, tau, fext),
            "Minv": rbd_ros.minv(m, q), "dtau_dq": dtau_dq, "dtau_dv": dtau_dv,
            "dqdd_dq": dqdd_dq, "dqdd_dv": dqdd_dv}


def _check_against_separate(robot, seed, given_a, with_fext):
    m = robot.model
    q, v, a, tau, fext = robot.random_state(seed)
    a = a if given_a else None
    fext = fext if with_fext else None
    res = rbd_ros.compute_all(m, q, v, a=a, tau=tau, fext=fext)
    assert isinstance(res, rbd_ros.Dynamics)
    assert res._fields == FIELDS
    ref = _separate(m, q, v, tau, a, fext)
    for name in FIELDS:
        got = getattr(res, name)
        assert got.shape == ref[name].shape, name
        assert got.flags.c_contiguous, name
        assert_close(got, ref[name], SEP_TOL,
                     f"{name} {robot.name} seed {seed} a={given_a} fext={with_fext}")


@pytest.mark.parametrize("with_fext", (False, True))
@pytest.mark.parametrize("given_a", (False, True))
@pytest.mark.parametrize("seed", (0, 1))
def test_fields_equal_separate_functions(robot, seed, given_a, with_fext):
    _check_against_separate(robot, seed, given_a, with_fext)


def test_a_equal_to_qdd(robot):
    """With a = q̈ the RNEA derivatives at a and at q̈ coincide, and ID(q, v, q̈) = τ."""
    m = robot.model
    q, v, _, tau, fext = robot.random_state(3)
    qdd = rbd_ros.aba(m, q, v, tau, fext)
    res = rbd_ros.compute_all(m, q, v, a=qdd, tau=tau, fext=fext)
    assert_close(res.tau, tau, 1e-9, f"ID(FD(τ)) {robot.name}")
    M = rbd_ros.crba(m, q)
    assert_close(-M @ res.dqdd_dq, res.dtau_dq, 1e-8, f"Eq. 24 q {robot.name}")
    assert_close(-M @ res.dqdd_dv, res.dtau_dv, 1e-8, f"Eq. 24 v {robot.name}")
    assert_close(res.Minv @ M, np.eye(m.nv), 1e-8, f"Minv M {robot.name}")


def test_no_state_leaks_between_calls(robot):
    """
    Cached scratch and the shared workspace do not leak between calls.

    The same inputs give bit-identical results after other calls scribbled on them.
    """
    m = robot.model
    q, v, a, tau, fext = robot.random_state(4)
    first = rbd_ros.compute_all(m, q, v, a=a, tau=tau, fext=fext)
    q2, v2, a2, tau2, _ = robot.random_state(5)
    rbd_ros.compute_all(m, q2, v2, tau=tau2)
    rbd_ros.aba_derivatives(m, q2, v2, tau2)
    rbd_ros.rnea_derivatives(m, q2, v2, a2)
    again = rbd_ros.compute_all(m, q, v, a=a, tau=tau, fext=fext)
    for name in FIELDS:
        assert np.array_equal(getattr(first, name), getattr(again, name)), name


def test_own_data_per_model_copy(robot):
    """The scratch is per Data: a second Data (another thread's) gives the same results."""
    m = robot.model
    q, v, a, tau, fext = robot.random_state(6)
    ref = rbd_ros.compute_all(m, q, v, a=a, tau=tau, fext=fext)
    got = rbd_ros.compute_all(m, q, v, a=a, tau=tau, fext=fext, data=rbd_ros.Data(m))
    for name in FIELDS:
        assert np.array_equal(getattr(ref, name), getattr(got, name)), name


@pytest.mark.parametrize("name", ("quadruped", "talos", "branched_planar"))
@pytest.mark.parametrize("with_fext", (False, True))
def test_matches_pinocchio(name, with_fext, pin):
    robot = get_robot(name)
    pm, pd = robot.pm, robot.pd
    m = robot.model
    q, v, a, tau, fext = robot.random_state(2)
    fext = fext if with_fext else None
    res = rbd_ros.compute_all(m, q, v, a=a, tau=tau, fext=fext)
    Q, V, A, T = robot.q_to_pin(q), robot.v_to_pin(v), robot.v_to_pin(a), robot.v_to_pin(tau)
    extra = [] if fext is None else [robot.fext_to_pin(fext)]
    what = f"{name} fext={with_fext}"
    assert_close(res.tau, robot.v_from_pin(pin.rnea(pm, pd, Q, V, A, *extra)), PIN_TOL,
                 f"tau {what}")
    assert_close(res.qdd, robot.v_from_pin(pin.aba(pm, pd, Q, V, T, *extra)), PIN_TOL,
                 f"qdd {what}")
    Minv = np.array(pin.computeMinverse(pm, pd, Q))
    Minv = np.triu(Minv) + np.triu(Minv, 1).T          # Pinocchio fills the upper triangle
    assert_close(res.Minv, robot.matrix_from_pin(Minv), PIN_TOL, f"Minv {what}")
    pin.computeRNEADerivatives(pm, pd, Q, V, A, *extra)
    assert_close(res.dtau_dq, robot.matrix_from_pin(pd.dtau_dq), PIN_TOL, f"dtau_dq {what}")
    assert_close(res.dtau_dv, robot.matrix_from_pin(pd.dtau_dv), PIN_TOL, f"dtau_dv {what}")
    pin.computeABADerivatives(pm, pd, Q, V, T, *extra)
    assert_close(res.dqdd_dq, robot.matrix_from_pin(pd.ddq_dq), PIN_TOL, f"dqdd_dq {what}")
    assert_close(res.dqdd_dv, robot.matrix_from_pin(pd.ddq_dv), PIN_TOL, f"dqdd_dv {what}")


def test_inputs_are_converted():
    robot = get_robot("quadruped")
    m = robot.model
    q, v, a, tau, fext = robot.random_state(0)
    ref = rbd_ros.compute_all(m, q, v, a=a, tau=tau, fext=fext)
    strided = np.repeat(a, 2)[::2]                       # not C-contiguous
    got = rbd_ros.compute_all(m, list(q), list(v), a=strided, tau=list(tau),
                              fext=fext.tolist())
    for name in FIELDS:
        assert np.array_equal(getattr(ref, name), getattr(got, name)), name


@pytest.mark.parametrize("argument", ("q", "v", "tau", "a", "fext"))
def test_bad_inputs_raise_value_error_naming_the_argument(argument):
    robot = get_robot("quadruped")
    m = robot.model
    q, v, a, tau, fext = robot.random_state(0)
    args = {"q": q, "v": v, "tau": tau, "a": a, "fext": fext}

    def call(**changes):
        kw = dict(args, **changes)
        return rbd_ros.compute_all(m, kw["q"], kw["v"], a=kw["a"], tau=kw["tau"],
                                   fext=kw["fext"])

    short = args[argument][:-1]
    with pytest.raises(ValueError, match=f"compute_all: {argument} has the wrong size"):
        call(**{argument: short})
    bad = np.array(args[argument], copy=True)
    bad.flat[2] = np.nan
    with pytest.raises(ValueError, match=f"compute_all: {argument} contains NaN"):
        call(**{argument: bad})
    inf = np.array(args[argument], copy=True)
    inf.flat[1] = np.inf
    with pytest.raises(ValueError, match=f"compute_all: {argument} contains NaN or inf"):
        call(**{argument: inf})
    with pytest.raises(ValueError, match=f"{argument} must be an array of numbers"):
        call(**{argument: "not numbers"})


def test_zero_quaternion_and_empty_list():
    robot = get_robot("quadruped")
    m = robot.model
    q, v, _, tau, _ = robot.random_state(0)
    zq = q.copy()
    zq[3:7] = 0.0
    with pytest.raises(ValueError, match="compute_all: q has a zero base quaternion"):
        rbd_ros.compute_all(m, zq, v, tau=tau)
    with pytest.raises(ValueError, match="compute_all: v has the wrong size"):
        rbd_ros.compute_all(m, q, [], tau=tau)
    with pytest.raises(ValueError, match="compute_all: fext has the wrong size"):
        rbd_ros.compute_all(m, q, v, tau=tau, fext=np.zeros((m.nbodies, 5)))


@pytest.mark.parametrize("name", ["arm7", "quadruped"])
def test_inverse_and_forward_dynamics_equals_rnea_and_aba(name):
    robot = get_robot(name)
    m = robot.model
    q, v, a, tau, fext = robot.random_state(3)
    tau_out, qdd = rbd_ros.inverse_and_forward_dynamics(m, q, v, a=a, tau=tau, fext=fext)
    np.testing.assert_array_equal(tau_out, rbd_ros.rnea(m, q, v, a, fext))
    np.testing.assert_array_equal(qdd, rbd_ros.aba(m, q, v, tau, fext))
    for position, arg in enumerate(("q", "v", "a", "tau")):
        args = [q.copy(), v.copy(), a.copy(), tau.copy()]
        args[position][-1] = np.nan
        with pytest.raises(ValueError, match=f"{arg} contains NaN"):
            rbd_ros.inverse_and_forward_dynamics(m, args[0], args[1], a=args[2], tau=args[3])
    with pytest.raises(ValueError, match="fext has the wrong size"):
        rbd_ros.inverse_and_forward_dynamics(m, q, v, a=a, tau=tau, fext=fext[1:])
