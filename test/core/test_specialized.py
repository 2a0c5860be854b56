"""
Kernels specialized for one model (rbd_ros.specialized) against Pinocchio and the generic ones.

Each robot is specialized once per module (a compile takes seconds the first time, in a
child process; later runs load numba's disk cache). Its specialized model and a plain one
of the same URDF are compared call by call; the plain one runs the generic kernels.
"""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import rbd_ros
from helpers import (ERD, ROBOTS, SEEDS, Robot, assert_close, load_quietly, missing,
                     rel_err, robot_path)
from rbd_ros.specialized import loader

PIN_TOL = 1e-10
GENERIC_TOL = 1e-12
NAMES = ("rnea", "nonlinear_effects", "gravity_torques", "crba", "minv")

# robots of this repository, of example-robot-data used throughout the tests, and two URDFs
# used nowhere else here (ur10, kinova: not written with this code in mind)
OTHER_URDFS = {"ur10": "ur_description/urdf/ur10_robot.urdf",
               "kinova": "kinova_description/robots/kinova.urdf"}
SPECIALIZED_ROBOTS = ("arm7", "panda", "ur5", "branched", "prismatic") + tuple(OTHER_URDFS)


def robot_source(name):
    """Return (URDF path, floating); skip (fail in CI) without example-robot-data."""
    if name in OTHER_URDFS:
        if ERD is None:
            missing("example-robot-data")
        return os.path.join(ERD, OTHER_URDFS[name]), False
    return robot_path(name), ROBOTS[name][1]


class Pair:
    """A robot's specialized model, its plain (generic) twin and the Pinocchio oracle."""

    def __init__(self, name):
        path, floating = robot_source(name)
        self.robot = Robot(name, path=path, floating=floating)
        self.generic = self.robot.model
        self.model = load_quietly(path, floating, mimic=self.robot.mimic)
        self.in_use = rbd_ros.specialize(self.model, wait=True, timeout=600)


@pytest.fixture(scope="module", params=SPECIALIZED_ROBOTS)
def pair(request):
    return Pair(request.param)


def call(name, model, q, v, a):
    args = {"rnea": (q, v, a), "nonlinear_effects": (q, v)}.get(name, (q,))
    return getattr(rbd_ros, name)(model, *args)


def pinocchio(robot, name, q, v, a):
    pin, pm, pd = robot.pin, robot.pm, robot.pd
    qp, vp, ap = robot.q_to_pin(q), robot.v_to_pin(v), robot.v_to_pin(a)
    if name in ("crba", "minv"):
        M = np.array(pin.crba(pm, pd, qp) if name == "crba" else pin.computeMinverse(pm, pd, qp))
        return robot.matrix_from_pin(np.triu(M) + np.triu(M, 1).T)
    result = {"rnea": lambda: pin.rnea(pm, pd, qp, vp, ap),
              "nonlinear_effects": lambda: pin.nonLinearEffects(pm, pd, qp, vp),
              "gravity_torques": lambda: pin.computeGeneralizedGravity(pm, pd, qp)}[name]()
    return robot.v_from_pin(result)


def test_the_kernels_are_specialized_and_loaded_from_numbas_cache(pair):
    status = rbd_ros.specialized.status(pair.model)
    assert pair.in_use and status.state == "ready", status
    for name in NAMES:
        kernel = getattr(pair.model._specialized, name)
        assert kernel is not None, name
        assert sum(kernel.stats.cache_misses.values()) == 0     # never compiled here
        assert sum(kernel.stats.cache_hits.values()) == 1
        assert getattr(pair.generic._specialized, name) is None
    assert os.path.isfile(status.path) and status.cache_bytes > os.path.getsize(status.path)


@pytest.mark.pinocchio
@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("seed", SEEDS)
def test_specialized_matches_pinocchio_and_the_generic_kernel(pair, name, seed):
    q, v, a, _, _ = pair.robot.random_state(seed)
    ours = call(name, pair.model, q, v, a)
    generic = call(name, pair.generic, q, v, a)
    assert ours.shape == generic.shape
    assert rel_err(ours, generic) <= GENERIC_TOL, (name, rel_err(ours, generic))
    assert_close(ours, pinocchio(pair.robot, name, q, v, a), PIN_TOL, f"{name} {pair.robot.name}")
    if name in ("crba", "minv"):
        np.testing.assert_array_equal(ours, ours.T)


@pytest.mark.parametrize("name", NAMES)
def test_out_on_the_specialized_path(pair, name):
    """out= (no data=, no fext: the specialized kernel serves): written, returned, checked."""
    assert pair.in_use
    q, v, a, _, _ = pair.robot.random_state(0)
    fresh = call(name, pair.model, q, v, a)
    out = np.full_like(fresh, np.nan)
    args = {"rnea": (q, v, a), "nonlinear_effects": (q, v)}.get(name, (q,))
    assert getattr(rbd_ros, name)(pair.model, *args, out=out) is out
    np.testing.assert_array_equal(out, fresh)
    with pytest.raises(ValueError, match=f"{name}: out must have dtype float64, got float32"):
        getattr(rbd_ros, name)(pair.model, *args, out=out.astype(np.float32))


def test_external_forces_or_another_workspace_take_the_generic_path(pair):
    q, v, a, _, fext = pair.robot.random_state(0)
    m = pair.model
    np.testing.assert_array_equal(rbd_ros.rnea(m, q, v, a, fext),
                                  rbd_ros.rnea(pair.generic, q, v, a, fext))
    data = rbd_ros.Data(m)
    for name in NAMES:
        fn = getattr(rbd_ros, name)
        args = {"rnea": (q, v, a), "nonlinear_effects": (q, v)}.get(name, (q,))
        np.testing.assert_array_equal(fn(m, *args, data=data), fn(pair.generic, *args))


def hostile_inputs(model, name):
    """Return (description, q, v, a) a caller may pass by mistake."""
    rng = np.random.default_rng(7)
    q = model.random_configuration(rng)
    v, a = rng.normal(size=(2, model.nv))
    nan = q.copy()
    nan[-1] = np.nan
    inf_v = v.copy()
    inf_v[0] = np.inf
    huge = np.full(model.nq, 1e300)
    return [("short q", q[:-1], v, a), ("long q", np.append(q, 0.0), v, a),
            ("empty q", np.zeros(0), v, a), ("NaN in q", nan, v, a),
            ("inf in v", q, inf_v, a), ("short v", q, v[:-1], a), ("short a", q, v, a[:1]),
            ("lists", list(q), list(v), list(a)), ("float32", q.astype(np.float32), v, a),
            ("strided", np.repeat(q, 2)[::2], v, a), ("2-D q", q[None, :], v, a),
            ("strings", ["x"] * model.nq, v, a), ("huge", huge, v * 1e300, a)]


@pytest.mark.parametrize("name", NAMES)
def test_hostile_inputs_give_the_generic_kernels_errors(pair, name):
    for what, q, v, a in hostile_inputs(pair.model, name):
        outcomes = []
        for model in (pair.model, pair.generic):
            try:
                outcomes.append(("ok", call(name, model, q, v, a)))
            except (ValueError, TypeError) as exc:
                outcomes.append((type(exc).__name__, str(exc)))
        (kind, ours), (generic_kind, generic) = outcomes
        if what == "huge":
            # where terms of 1e300 cancel (panda's two fingers), or overflow in one order of
            # operations and not in another (the generic M⁻¹ of a prismatic joint at 1e300
            # squares world positions; the specialized one, in body frames, does not), the
            # two kernels differ: each returns finite numbers or the same refusal
            assert kind == "ok" or ours == generic, (name, what, ours, generic)
            assert kind != "ok" or np.all(np.isfinite(ours)), (name, what)
            continue
        assert kind == generic_kind, (name, what, ours, generic)
        if kind == "ok":
            assert rel_err(ours, generic) <= GENERIC_TOL, (name, what)
        else:
            assert ours == generic, (name, what)


def test_floating_base_and_mimic_models_are_refused_with_the_reason():
    floating = load_quietly(ROBOTS["arm7_floating"][0], True)
    assert rbd_ros.specialize(floating, wait=True) is False
    status = rbd_ros.specialized.status(floating)
    assert status.state == "refused" and "floating" in status.reason
    assert floating._specialized.rnea is None
    coupled = load_quietly(robot_path("panda"), mimic="coupled")
    assert rbd_ros.specialize(coupled) is False            # refused at once, without waiting
    assert rbd_ros.specialized.status(coupled).state == "refused"
    assert "mimic" in rbd_ros.specialized.status(coupled).reason


def test_a_derived_model_is_not_specialized_unless_asked():
    model = load_quietly(ROBOTS["arm7"][0])
    assert rbd_ros.specialize(model, wait=True, timeout=600)
    heavier = model.with_gravity((0.0, 0.0, -20.0))
    assert heavier._specialized.rnea is None and rbd_ros.specialized.status(heavier) is None
    q = model.random_configuration(3)
    assert_close(rbd_ros.gravity_torques(heavier, q),
                 rbd_ros.gravity_torques(model, q) * (20.0 / 9.81), GENERIC_TOL, "gravity")


@pytest.mark.pinocchio
def test_a_failure_leaves_the_generic_kernels_serving(monkeypatch, tmp_path, pin):
    gravity = (0.0, 0.0, -1.62)
    model = load_quietly(ROBOTS["arm7"][0]).with_gravity(gravity)
    # a cache of this test's own: nothing of this model is compiled there
    monkeypatch.setattr(loader, "specialized_dir", lambda: str(tmp_path))
    path, _ = loader.write_source(model)
    assert loader.load_cached(path) is None

    def refuse(path):
        raise RuntimeError("no compiler here")
    monkeypatch.setattr(loader, "compile_in_child", refuse)
    failed = rbd_ros.specialized.COUNTS["failed"]
    assert rbd_ros.specialize(model, wait=True) is False
    status = rbd_ros.specialized.status(model)
    assert status.state == "failed" and "no compiler here" in status.reason
    assert rbd_ros.specialized.COUNTS["failed"] == failed + 1
    assert all(getattr(model._specialized, name) is None for name in NAMES)
    # the generic kernels answer, with this model's gravity: Pinocchio's on the Moon
    robot = Robot("arm7")
    robot.pm.gravity.linear = np.array(gravity)
    for seed in SEEDS:
        q, v, a, _, _ = robot.random_state(seed)
        for name in NAMES:
            assert_close(call(name, model, q, v, a), pinocchio(robot, name, q, v, a), PIN_TOL,
                         f"{name} after a failure")


CHILD = """
import json, sys, warnings
import rbd_ros
warnings.simplefilter("ignore")
model = rbd_ros.load_model(sys.argv[1])
in_use = rbd_ros.specialize(model, wait=True, timeout=600)
status = rbd_ros.specialized.status(model)
kernels = [getattr(model._specialized, n) for n in sys.argv[2:]]
print(json.dumps({"in_use": in_use, "compiled": status.compiled, "reason": status.reason,
                  "hits": [sum(k.stats.cache_hits.values()) for k in kernels],
                  "misses": [sum(k.stats.cache_misses.values()) for k in kernels]}))
"""


def run_child(path):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [os.path.dirname(os.path.dirname(rbd_ros.__file__)), os.environ.get("PYTHONPATH", "")]))
    done = subprocess.run([sys.executable, "-c", CHILD, path, *NAMES], env=env,
                          capture_output=True, text=True, timeout=600, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_another_process_loads_the_kernels_from_the_cache():
    path = ROBOTS["arm7"][0]
    assert rbd_ros.specialize(load_quietly(path), wait=True, timeout=600)
    child = run_child(path)
    assert child == {"in_use": True, "compiled": False, "reason": None,
                     "hits": [1] * len(NAMES), "misses": [0] * len(NAMES)}


@pytest.mark.parametrize("damage", ["half", "garbage", "missing"])
def test_a_damaged_source_file_is_regenerated(damage):
    path = ROBOTS["arm7"][0]
    model = load_quietly(path)
    assert rbd_ros.specialize(model, wait=True, timeout=600)
    generated = rbd_ros.specialized.status(model).path
    with open(generated, encoding="utf-8") as f:
        good = f.read()
    if damage == "missing":
        os.remove(generated)
    else:
        with open(generated, "w", encoding="utf-8") as f:
            f.write(good[:len(good) // 2] if damage == "half" else "def rnea(:\n")
    child = run_child(path)
    assert child["in_use"] and child["reason"] is None, child
    with open(generated, encoding="utf-8") as f:
        assert f.read() == good
