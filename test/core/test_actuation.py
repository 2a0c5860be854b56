"""
The outputs with joint friction, rotor inertia and offset (rbd_ros.actuation), in the core.

Oracles: Pinocchio's RNEA and CRBA with the per-joint terms added by the formulas written
here (τ = ID + Ia a + Fv v + Fc tanh(v/ε) + τ0), the identity that the torque of the
acceleration computed is the effort given, and central finite differences of that
acceleration. With measured wrenches (``fext``) too, since the node passes them through.
"""
import numpy as np
import pytest

from helpers import assert_close, get_robot, robot_path
import rbd_ros
from rbd_ros.actuation import dynamics as actuation
from rbd_ros.actuation.joint_parameters import JointParameters

EPS = 0.05


def _parameters(model, rng):
    n = len(model.joint_names)
    values = {"armature": rng.uniform(0.05, 0.5, n), "viscous": rng.uniform(0.1, 2.0, n),
              "coulomb": rng.uniform(0.1, 1.0, n), "offset": rng.normal(scale=0.3, size=n)}
    return JointParameters(tuple(model.joint_names), values, EPS)


def _by_hand(params, nbase, v, a):
    """Ia a + Fv v + Fc tanh(v/ε) + τ0 on every dof (zero on a floating base's six)."""
    x = {k: np.r_[np.zeros(nbase), params.values[k]] for k in params.values}
    return (x["armature"] * a + x["viscous"] * v + x["coulomb"] * np.tanh(v / EPS)
            + x["offset"])


def _setup(name, seed):
    robot = get_robot(name)
    m = robot.model
    rng = np.random.default_rng(seed)
    params = _parameters(m, rng)
    act = actuation.Actuation(params, m.nv_base)
    q, v, a, tau, fext = robot.random_state(seed)
    return robot, m, params, act, q, v, a, tau, fext


@pytest.mark.pinocchio
@pytest.mark.parametrize("name", ["arm7", "quadruped"])
def test_actuated_outputs_match_pinocchio_with_wrenches(pin, name):
    robot, m, params, act, q, v, a, tau, fext = _setup(name, 3)
    nbase = m.nv_base
    res = actuation.compute(act, "compute_all", m, q, v, a, tau, fext)
    qp, vp, fp = robot.q_to_pin(q), robot.v_to_pin(v), robot.fext_to_pin(fext)
    rigid = robot.v_from_pin(pin.rnea(robot.pm, robot.pd, qp, vp, robot.v_to_pin(a), fp))
    assert_close(res["tau"], rigid + _by_hand(params, nbase, v, a), 1e-10, "torques")
    M = robot.matrix_from_pin(pin.crba(robot.pm, robot.pd, qp))
    M = np.triu(M) + np.triu(M, 1).T
    D = np.diag(np.r_[np.zeros(nbase), params.values["armature"]])
    assert_close(res["Minv"], np.linalg.inv(M + D), 1e-9, "(M + diag Ia)⁻¹")
    # q̈ is the acceleration at which the motors' torque is the effort given
    qdd = res["qdd"]
    rigid = robot.v_from_pin(pin.rnea(robot.pm, robot.pd, qp, vp, robot.v_to_pin(qdd), fp))
    assert_close(rigid + _by_hand(params, nbase, v, qdd), tau, 1e-9, "ID(FD(τ)) = τ")
    # the wrenches matter here (the test is not vacuous)
    without = actuation.compute(act, "compute_all", m, q, v, a, tau)
    assert not np.allclose(without["qdd"], qdd)


@pytest.mark.parametrize("name", ["arm7", "quadruped"])
def test_actuated_forward_derivatives_match_finite_differences(name):
    robot, m, params, act, q, v, a, tau, fext = _setup(name, 5)
    res = actuation.compute(act, "compute_all", m, q, v, a, tau, fext)

    def qdd(q_, v_):
        return actuation.compute(act, "compute_all", m, q_, v_, a, tau, fext)["qdd"]
    h = 1e-6
    dq = np.empty((m.nv, m.nv))
    dv = np.empty((m.nv, m.nv))
    for k in range(m.nv):
        e = np.zeros(m.nv)
        e[k] = h
        dq[:, k] = (qdd(rbd_ros.integrate(m, q, e), v)
                    - qdd(rbd_ros.integrate(m, q, -e), v)) / (2 * h)
        dv[:, k] = (qdd(q, v + e) - qdd(q, v - e)) / (2 * h)
    scale = 1.0 + np.abs(dq).max()
    assert np.abs(res["dqdd_dq"] - dq).max() < 1e-5 * scale
    scale = 1.0 + np.abs(dv).max()
    assert np.abs(res["dqdd_dv"] - dv).max() < 1e-5 * scale


@pytest.mark.parametrize("name", ["arm7", "quadruped"])
def test_a_result_buffer_gives_the_results_computed_without_it(name):
    """
    ``buffer=`` (the node's per-tick call): the same numbers, bit for bit, in its views.

    With and without joint parameters and wrenches; the rigid results are views of the
    buffer's block (nothing allocated), and a call at another state overwrites them. The
    calls that have no buffer, and a model with coupled mimic joints, get None.
    """
    robot, m, params, act, q, v, a, tau, fext = _setup(name, 7)
    buffer = rbd_ros.outputs.result_buffer("compute_all", m)
    for joints in (None, act):
        for wrenches in (None, fext):
            alone = actuation.compute(joints, "compute_all", m, q, v, a, tau, wrenches)
            into = actuation.compute(joints, "compute_all", m, q, v, a, tau, wrenches, buffer)
            assert set(into) == set(alone)
            for key in alone:
                np.testing.assert_array_equal(into[key], alone[key], err_msg=key)
    into = actuation.compute(None, "compute_all", m, q, v, a, tau, None, buffer)
    assert all(np.shares_memory(x, buffer.block) for x in into.values())
    before = into["Minv"].copy()
    q2, *_ = robot.random_state(8)
    again = actuation.compute(None, "compute_all", m, q2, v, a, tau, None, buffer)
    assert again is not into and not np.array_equal(into["Minv"], before)
    np.testing.assert_array_equal(into["Minv"], again["Minv"])
    assert rbd_ros.outputs.result_buffer("rnea", m) is None
    coupled = rbd_ros.load_model(robot_path("panda"))     # its mimic fingers: coupled
    assert coupled.coupling is not None
    assert rbd_ros.outputs.result_buffer("compute_all", coupled) is None


@pytest.mark.parametrize("name", ["arm7", "quadruped"])
def test_a_bound_result_buffer_reads_its_arrays_in_place_and_refuses_as_compute_all(
        name, monkeypatch):
    """
    ``ResultBuffer.bind`` (the node's Robot arrays): the kernel through its entry point.

    Bit for bit the results of ``compute_all`` at the values the bound arrays hold at each
    call; the checked call is not made (it is made to fail here) unless the arrays are others,
    fext is given or the kernel refuses; a refused state raises ``compute_all``'s ValueError.
    """
    from rbd_ros.outputs import core_calls
    robot, m, _, _, q, v, a, tau, fext = _setup(name, 11)
    buffer = rbd_ros.outputs.result_buffer("compute_all", m)
    bq, bv, ba, btau = (np.zeros(m.nq), np.zeros(m.nv), np.zeros(m.nv), np.zeros(m.nv))
    buffer.bind(bq, bv, ba, btau)
    checked = core_calls.compute_all

    def refused(*args, **kwargs):
        raise AssertionError("the checked compute_all was called")
    for seed in (11, 12):
        q, v, a, tau, _ = robot.random_state(seed)
        bq[:], bv[:], ba[:], btau[:] = q, v, a, tau
        monkeypatch.setattr(core_calls, "compute_all", refused)
        into = actuation.compute(None, "compute_all", m, bq, bv, ba, btau, None, buffer)
        monkeypatch.setattr(core_calls, "compute_all", checked)
        alone = rbd_ros.compute_all(m, q, v, a=a, tau=tau)
        for key, x in zip(alone._fields, alone):
            np.testing.assert_array_equal(into[key], x, err_msg=key)
        np.testing.assert_array_equal(into["joint_tau"], alone.tau[m.nv_base:])
    # other arrays, or wrenches: the checked call, whose results they are
    made = []

    def counted(*args, **kwargs):
        made.append(1)
        return checked(*args, **kwargs)
    monkeypatch.setattr(core_calls, "compute_all", counted)
    with_fext = actuation.compute(None, "compute_all", m, bq, bv, ba, btau, fext, buffer)
    np.testing.assert_array_equal(
        with_fext["Minv"], rbd_ros.compute_all(m, bq, bv, a=ba, tau=btau, fext=fext).Minv)
    actuation.compute(None, "compute_all", m, bq.copy(), bv, ba, btau, None, buffer)
    assert len(made) == 2
    # another model (under another gravity: its own packed table) at the bound arrays
    other = m.with_gravity([0.0, 0.0, -1.62])
    on_the_moon = actuation.compute(None, "compute_all", other, bq, bv, ba, btau, None, buffer)
    assert len(made) == 3
    np.testing.assert_array_equal(on_the_moon["tau"],
                                  rbd_ros.compute_all(other, bq, bv, a=ba, tau=btau).tau)
    assert not np.allclose(on_the_moon["tau"], rbd_ros.compute_all(m, bq, bv, a=ba, tau=btau).tau)
    # a state the kernel refuses: compute_all's own error
    bv[0] = np.nan
    with pytest.raises(ValueError) as bound_error:
        actuation.compute(None, "compute_all", m, bq, bv, ba, btau, None, buffer)
    with pytest.raises(ValueError) as own_error:
        rbd_ros.compute_all(m, bq, bv, a=ba, tau=btau)
    assert str(bound_error.value) == str(own_error.value)
    assert len(made) == 4


@pytest.mark.parametrize("bad", [np.zeros(7, np.float32), np.zeros(14)[::2], [0.0] * 7,
                                 np.zeros((1, 7)), np.zeros(8), np.zeros(7, np.int64)])
def test_a_result_buffer_binds_float64_c_vectors_of_the_model_s_sizes_only(bad):
    m = get_robot("arm7").model
    assert m.nv == 7
    buffer = rbd_ros.outputs.result_buffer("compute_all", m)
    ok = np.zeros(m.nv)
    with pytest.raises(ValueError, match="^v must be a float64 C vector of 7$"):
        buffer.bind(np.zeros(m.nq), bad, ok, ok)
    assert buffer.bound is None
