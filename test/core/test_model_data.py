"""The Model/Data split: an immutable Model, workspaces passed as ``data=``, derived models."""
import pickle
import types

import numpy as np
import pytest

import rbd_ros
from helpers import get_robot, run_threads
from mimic_oracle import hand_urdf

CALLS = {
    "rnea": lambda m, s, **kw: rbd_ros.rnea(m, s["q"], s["v"], s["a"], **kw),
    "nonlinear_effects": lambda m, s, **kw: rbd_ros.nonlinear_effects(m, s["q"], s["v"], **kw),
    "gravity_torques": lambda m, s, **kw: rbd_ros.gravity_torques(m, s["q"], **kw),
    "crba": lambda m, s, **kw: rbd_ros.crba(m, s["q"], **kw),
    "aba": lambda m, s, **kw: rbd_ros.aba(m, s["q"], s["v"], s["tau"], **kw),
    "minv": lambda m, s, **kw: rbd_ros.minv(m, s["q"], **kw),
    "minv_cholesky": lambda m, s, **kw: rbd_ros.minv_cholesky(m, s["q"], **kw),
    "rnea_derivatives": lambda m, s, **kw: rbd_ros.rnea_derivatives(m, s["q"], s["v"], s["a"],
                                                                    **kw),
    "aba_derivatives": lambda m, s, **kw: rbd_ros.aba_derivatives(m, s["q"], s["v"], s["tau"],
                                                                  **kw),
    "compute_all": lambda m, s, **kw: rbd_ros.compute_all(m, s["q"], s["v"], a=s["a"],
                                                          tau=s["tau"], **kw),
    "inverse_and_forward_dynamics": lambda m, s, **kw: rbd_ros.inverse_and_forward_dynamics(
        m, s["q"], s["v"], a=s["a"], tau=s["tau"], **kw),
    "joint_torque_regressor": lambda m, s, **kw: rbd_ros.joint_torque_regressor(
        m, s["q"], s["v"], s["a"], **kw),
    "rnea_derivatives_fd": lambda m, s, **kw: rbd_ros.rnea_derivatives_fd(
        m, s["q"], s["v"], s["a"], **kw),
    "rnea_batch": lambda m, s, **kw: rbd_ros.rnea_batch(m, s["Q"], s["V"], s["A"], **kw),
    "aba_batch": lambda m, s, **kw: rbd_ros.aba_batch(m, s["Q"], s["V"], s["TAU"], **kw),
    "minv_batch": lambda m, s, **kw: rbd_ros.minv_batch(m, s["Q"], **kw),
    "rnea_derivatives_batch": lambda m, s, **kw: rbd_ros.rnea_derivatives_batch(
        m, s["Q"], s["V"], s["A"], **kw),
    "aba_derivatives_batch": lambda m, s, **kw: rbd_ros.aba_derivatives_batch(
        m, s["Q"], s["V"], s["TAU"], **kw),
    "joint_torque_regressor_batch": lambda m, s, **kw: rbd_ros.joint_torque_regressor_batch(
        m, s["Q"], s["V"], s["A"], **kw),
}


def state(m, seed=0, n=5):
    rng = np.random.default_rng(seed)
    q = m.random_configuration(rng)
    Q = np.array([m.random_configuration(rng) for _ in range(n)])
    return {"q": q, "v": rng.normal(size=m.nv), "a": rng.normal(size=m.nv),
            "tau": rng.normal(size=m.nv), "Q": Q, "V": rng.normal(size=(n, m.nv)),
            "A": rng.normal(size=(n, m.nv)), "TAU": rng.normal(size=(n, m.nv))}


def flat(result):
    if isinstance(result, tuple):
        return np.concatenate([np.ravel(r) for r in result])
    return np.ravel(result)


@pytest.mark.parametrize("name", sorted(CALLS))
@pytest.mark.parametrize("robot_name", ["arm7", "quadruped"])
def test_own_data_gives_the_same_result(name, robot_name):
    """A workspace passed as data= gives bit-for-bit the model's own workspace's result."""
    m = get_robot(robot_name).model
    s = state(m)
    ref = flat(CALLS[name](m, s))
    other = rbd_ros.Data(m)
    np.testing.assert_array_equal(flat(CALLS[name](m, s, data=other)), ref)
    # and a Data of a derived model of the same size fits too
    np.testing.assert_array_equal(
        flat(CALLS[name](m, s, data=rbd_ros.Data(m.with_gravity(m.gravity)))), ref)


@pytest.mark.parametrize("name", sorted(CALLS))
def test_foreign_data_is_refused(name):
    m = get_robot("arm7").model
    small = get_robot("pendulum").model
    s = state(m)
    # an object that only looks like a Data of the model's sizes is not one either
    lookalike = types.SimpleNamespace(sizes=m.data.sizes, body=m.data.body)
    for bad in (rbd_ros.Data(small), np.zeros((m.nbodies + 1, 96)), "data", lookalike):
        with pytest.raises(ValueError, match="data must be an rbd_ros.Data"):
            CALLS[name](m, s, data=bad)


def test_threads_with_their_own_data_agree_with_serial():
    m = get_robot("arm7").model
    states = [state(m, seed) for seed in range(8)]
    expected = [flat(CALLS["compute_all"](m, s)) for s in states]
    errors = []

    def work(k):
        data = rbd_ros.Data(m)
        compared = 0
        for _ in range(200):
            for s, ref in zip(states, expected):
                if not np.array_equal(flat(CALLS["compute_all"](m, s, data=data)), ref):
                    errors.append(k)
                compared += 1
        return compared
    assert run_threads(work, 4) == [200 * len(states)] * 4     # every comparison was made
    assert errors == []


@pytest.mark.parametrize("attribute", ["nv", "nq", "packed", "data", "gravity", "joint_names",
                                       "parent", "new_attribute"])
def test_model_attributes_cannot_be_rebound(attribute):
    m = get_robot("arm7").model
    with pytest.raises(AttributeError):
        setattr(m, attribute, getattr(m, attribute, 1))
    with pytest.raises(AttributeError):
        delattr(m, "nv")


@pytest.mark.parametrize("array", ["packed", "parent", "joint_type", "idx_q", "idx_v",
                                   "placement", "axis", "inertia", "theta", "lower",
                                   "effort_limit", "subtree_end", "dof_parent"])
def test_model_arrays_are_read_only(array):
    m = get_robot("arm7").model
    with pytest.raises(ValueError, match="read-only"):
        getattr(m, array)[0] = 0


@pytest.mark.parametrize("attribute", ["body", "force_sets", "dof", "nv", "lock"])
def test_data_attributes_cannot_be_rebound(attribute):
    d = get_robot("arm7").model.data
    with pytest.raises(AttributeError):
        setattr(d, attribute, np.zeros(3))


def test_with_gravity_shares_constant_arrays_and_leaves_the_original():
    m = get_robot("arm7").model
    g = m.with_gravity((1.0, 2.0, -3.0))
    np.testing.assert_array_equal(g.gravity, (1.0, 2.0, -3.0))
    np.testing.assert_array_equal(m.gravity, (0.0, 0.0, -9.81))
    assert g.inertia is m.inertia and g.parent is m.parent and g.dof_parent is m.dof_parent
    assert g.data is not m.data and g.packed is not m.packed
    np.testing.assert_array_equal(g.packed[:-1], m.packed[:-1])
    assert not g.packed.flags.writeable
    # τ_g is linear in g: an independent check that the new gravity is the one used
    q = m.random_configuration(3)
    g2 = m.with_gravity((2.0, 4.0, -6.0))
    np.testing.assert_allclose(rbd_ros.gravity_torques(g2, q),
                               2 * rbd_ros.gravity_torques(g, q), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", sorted(CALLS))
def test_float64_arrays_take_the_fast_path(name, monkeypatch):
    """
    C-contiguous float64 inputs reach the compiled kernel as they are.

    The converting fallback (a TypeError from numba, then a copy) is never taken. A default
    argument of the wrong array type (e.g. read-only) would silently cost ~100x per call.
    """
    m = get_robot("quadruped").model
    s = state(m)

    def refuse(*args, **kwargs):
        raise AssertionError("the converting fallback was taken")
    monkeypatch.setattr(rbd_ros._checks, "vector", refuse)
    monkeypatch.setattr(rbd_ros._checks, "vectors", refuse)
    monkeypatch.setattr(rbd_ros._checks, "matrix", refuse)
    assert np.all(np.isfinite(flat(CALLS[name](m, s))))


def pickled_models():
    """Models of every kind a process may be sent: floating, payload and gravity, coupled."""
    arm = get_robot("arm7").model
    return {"quadruped": get_robot("quadruped").model,
            "arm7 with payload": arm.with_gravity((0.5, 0.0, -9.0)).with_payload(
                arm.body_names[-1],
                rbd_ros.model.inertia.compact(1.5, [0.1, 0.0, 0.05], np.diag([0.02, 0.03, 0.04]))),
            "mimic coupled": rbd_ros.load_model(hand_urdf(), mimic="coupled")}


@pytest.mark.parametrize("protocol", [2, pickle.HIGHEST_PROTOCOL])
@pytest.mark.parametrize("name", ["quadruped", "arm7 with payload", "mimic coupled"])
def test_a_pickled_model_is_the_same_immutable_model(name, protocol):
    model = pickled_models()[name]
    copy = pickle.loads(pickle.dumps(model, protocol))
    assert sorted(vars(copy)) == sorted(vars(model))
    for key, value in vars(model).items():
        if isinstance(value, np.ndarray):
            got = getattr(copy, key)
            np.testing.assert_array_equal(got, value, err_msg=key)
            assert got.dtype == value.dtype and not got.flags.writeable, key
            with pytest.raises(ValueError):      # over immutable memory: cannot be undone
                got.flags.writeable = True
    assert isinstance(copy.link_frames, types.MappingProxyType)
    assert list(copy.link_frames) == list(model.link_frames)
    for link, (body, R, p) in model.link_frames.items():
        assert copy.link_frames[link][0] == body
        np.testing.assert_array_equal(copy.link_frames[link][1], R)
        np.testing.assert_array_equal(copy.link_frames[link][2], p)
    assert copy.data is not model.data and copy.data.fits(copy)
    assert np.shares_memory(copy.theta, copy.packed)    # the views are views again
    if model.coupling is not None:
        assert dict(copy.coupling.followers) == dict(model.coupling.followers)
        np.testing.assert_array_equal(copy.coupling.G, model.coupling.G)
    with pytest.raises(AttributeError):
        copy.nv = 1
    # the same tables give the same numbers, bit for bit, through every kind of kernel
    s = state(model, 4)
    for call in ("rnea", "aba", "rnea_derivatives", "rnea_batch", "aba_derivatives_batch"):
        np.testing.assert_array_equal(flat(CALLS[call](copy, s)), flat(CALLS[call](model, s)),
                                      err_msg=call)


@pytest.mark.parametrize("name", ["quadruped", "arm7 with payload", "mimic coupled"])
def test_base_entries_come_before_the_joints(name):
    """nq_base, nv_base: the entries of q and v before the joints' (those of the free flyer)."""
    model = pickled_models()[name]
    assert model.nq - model.nq_base == len(model.joint_names) == model.nv - model.nv_base
    assert model.nq_base == 7 * model.floating_base and model.nv_base == 6 * model.floating_base
    q = model.neutral()
    # a step of the joints alone moves q's joint entries only, by that step
    step = np.concatenate([np.zeros(model.nv_base), np.full(model.nv - model.nv_base, 0.1)])
    moved = rbd_ros.integrate(model, q, step)
    np.testing.assert_array_equal(moved[:model.nq_base], q[:model.nq_base])
    np.testing.assert_allclose(moved[model.nq_base:], q[model.nq_base:] + 0.1, rtol=0, atol=1e-15)
