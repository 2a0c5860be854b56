"""
rbd_ros.batch.rollout: limits along a trajectory, rollouts and their step derivatives.

Oracles: Pinocchio (its rnea and limits from the same URDF; the rollout schemes written out
with its aba and integrate, ``pinocchio_oracles.pin_rollout``), central finite differences
of the rollout itself (derivatives) and hand-made limit violations.
"""
import numpy as np
import pytest

import rbd_ros
from rbd_ros.batch import rollout as rl
from helpers import assert_close, get_robot
from pinocchio_oracles import pin_rollout

ROLLOUT_ROBOTS = ("arm7", "quadruped", "panda", "branched_planar")
STEPS = 25
DT = 2e-3


def _torques(robot, n, seed):
    rng = np.random.default_rng(seed)
    return rng.normal(scale=2.0, size=(n, robot.model.nv))


@pytest.mark.pinocchio
@pytest.mark.parametrize("method", rl.METHODS)
@pytest.mark.parametrize("name", ROLLOUT_ROBOTS)
def test_rollout_matches_pinocchio(name, method):
    robot = get_robot(name)
    m = robot.model
    q0, v0, _, _, _ = robot.random_state(3)
    tau = _torques(robot, STEPS, 4)
    r = rl.rollout(m, q0, v0, tau, DT, method)
    assert r.dx_dx is None and r.q.shape == (STEPS + 1, m.nq)
    qs, vs = pin_rollout(robot, q0, v0, tau, DT, method)
    for k in range(STEPS + 1):
        assert_close(robot.q_to_pin(r.q[k]), qs[k], 1e-9, f"q[{k}]")
        assert_close(r.v[k], robot.v_from_pin(vs[k]), 1e-9, f"v[{k}]")


def _difference(robot, q1, q0):
    """q1 ⊖ q0 in our v order (Pinocchio's difference: the tangent vector from q0 to q1)."""
    return robot.v_from_pin(robot.pin.difference(robot.pm, robot.q_to_pin(q0),
                                                 robot.q_to_pin(q1)))


@pytest.mark.pinocchio
@pytest.mark.parametrize("method", rl.METHODS)
@pytest.mark.parametrize("name", ("arm7", "quadruped", "branched_planar"))
def test_rollout_derivatives_match_finite_differences(name, method):
    robot = get_robot(name)
    m = robot.model
    nv = m.nv
    q0, v0, _, _, _ = robot.random_state(5)
    tau = _torques(robot, 3, 6)
    dt = 0.01                                   # a large step: the chain rule matters
    r = rl.rollout(m, q0, v0, tau, dt, method, derivatives=True)
    assert r.dx_dx.shape == (3, 2 * nv, 2 * nv) and r.dx_du.shape == (3, 2 * nv, nv)
    k = 1                                       # a step from a state the rollout reached
    qk, vk, uk = r.q[k], r.v[k], tau[k]

    def step(dq, dv, du):
        s = rl.rollout(m, rbd_ros.integrate(m, qk, dq), vk + dv, (uk + du)[None], dt, method)
        return np.concatenate([_difference(robot, s.q[1], r.q[k + 1]), s.v[1] - r.v[k + 1]])

    eps = 1e-4          # central differences: truncation ~eps², roundoff ~1e-16/eps; the light
    # links of branched_planar (large ∂q̈) put the roundoff above 1e-6 at eps = 1e-6
    fd = np.empty((2 * nv, 3 * nv))
    for j in range(3 * nv):
        e = np.zeros(3 * nv)
        e[j] = eps
        fd[:, j] = (step(*np.split(e, 3)) - step(*np.split(-e, 3))) / (2 * eps)
    assert_close(r.dx_dx[k], fd[:, :2 * nv], 1e-6, "dx'/dx")
    assert_close(r.dx_du[k], fd[:, 2 * nv:], 1e-6, "dx'/du")


@pytest.mark.pinocchio
@pytest.mark.parametrize("name", ("quadruped", "branched_planar"))
def test_integrate_jacobians_match_pinocchio(pin, name):
    robot = get_robot(name)
    m = robot.model
    rng = np.random.default_rng(7)
    q = m.random_configuration(rng)
    for w in (rng.normal(size=m.nv), 1e-5 * rng.normal(size=m.nv)):
        jq, jw = rl.integrate_jacobians(m, w)
        qp, wp = robot.q_to_pin(q), robot.v_to_pin(w)
        ref_q = robot.matrix_from_pin(pin.dIntegrate(robot.pm, qp, wp, pin.ARG0))
        ref_w = robot.matrix_from_pin(pin.dIntegrate(robot.pm, qp, wp, pin.ARG1))
        assert_close(jq, ref_q, 1e-12, "J_q")
        assert_close(jw, ref_w, 1e-12, "J_w")


@pytest.mark.pinocchio
@pytest.mark.parametrize("name", ("arm7", "panda"))
def test_limits_of_pinocchio_torques(pin, name):
    """Feasibility, first violation and peaks from Pinocchio's τ and Pinocchio's limits."""
    robot = get_robot(name)
    m, pm, pd = robot.model, robot.pm, robot.pd
    rng = np.random.default_rng(8)
    n = 40
    states = [robot.random_state(100 + k) for k in range(n)]
    q = np.array([s[0] for s in states])
    v = rng.normal(scale=0.3, size=(n, m.nv))
    a = rng.normal(scale=0.5, size=(n, m.nv))
    v[17, 3] = 1.5 * robot.v_from_pin(pm.velocityLimit)[3]     # one planted violation
    tau_pin = np.array([robot.v_from_pin(pin.rnea(pm, pd, robot.q_to_pin(q[k]),
                                                  robot.v_to_pin(v[k]), robot.v_to_pin(a[k])))
                        for k in range(n)])
    tau = rbd_ros.rnea_batch(m, q, v, a)
    assert_close(tau, tau_pin, 1e-10, "rnea_batch")
    effort, velocity = robot.v_from_pin(pm.effortLimit), robot.v_from_pin(pm.velocityLimit)
    lim = rl.check_limits(m, v, tau)
    r_effort, r_velocity = np.abs(tau_pin) / effort, np.abs(v) / velocity
    assert_close(lim.peak_effort, r_effort.max(axis=0), 1e-10, "peak effort")
    assert_close(lim.peak_velocity, r_velocity.max(axis=0), 1e-10, "peak velocity")
    over = (r_effort > 1) | (r_velocity > 1)
    first = np.argwhere(over)[0]
    assert not lim.feasible
    assert (lim.first_point, lim.first_joint) == tuple(first) and first[0] <= 17
    assert lim.first_limit == ("effort" if r_effort[tuple(first)] > 1 else "velocity")
    scaled = rl.check_limits(m, v * 0.0, tau * 0.0)
    assert scaled.feasible and scaled.first_point == -1 and scaled.first_limit == ""


def test_limits_by_hand():
    m = rbd_ros.load_model(rbd_ros.robots.path("rbd_arm7"))
    n = len(m.joint_names)
    v = np.zeros((5, m.nv))
    tau = np.zeros((5, m.nv))
    tau[:, :] = 0.5 * m.effort_limit
    lim = rl.check_limits(m, v, tau)
    assert lim.feasible and np.allclose(lim.peak_effort, 0.5) and np.all(lim.peak_velocity == 0)
    tau[3, 4] = -1.01 * m.effort_limit[4]
    v[2, 6] = 2.0 * m.velocity_limit[6]
    lim = rl.check_limits(m, v, tau)
    assert (lim.feasible, lim.first_point, lim.first_joint, lim.first_limit) == (
        False, 2, 6, "velocity")
    assert lim.peak_effort[4] == pytest.approx(1.01) and lim.peak_velocity[6] == 2.0
    assert len(lim.peak_effort) == n


def test_rollout_refuses_bad_input():
    m = rbd_ros.load_model(rbd_ros.robots.path("rbd_arm7"))
    q0, v0, tau = m.neutral(), np.zeros(m.nv), np.zeros((3, m.nv))
    for kwargs, words in ((dict(dt=0.0), "dt"), (dict(dt=np.nan), "dt"),
                          (dict(method="euler"), "method"),
                          (dict(tau=np.zeros((3, 2))), "tau"),
                          (dict(v0=np.full(m.nv, np.nan)), "v0"),
                          (dict(tau=np.full((3, m.nv), 1e300)), "not finite")):
        args = {**dict(q0=q0, v0=v0, tau=tau, dt=1e-3), **kwargs}
        with pytest.raises(ValueError, match=words):
            rl.rollout(m, **args)


def test_rollout_zero_steps_and_gravity_free_fall():
    """A free body under gravity only: v grows by g t, exactly, with either scheme."""
    m = rbd_ros.load_model(rbd_ros.robots.path("rbd_quadruped"), floating_base=True)
    q0 = m.neutral()
    tau = np.zeros((10, m.nv))
    r0 = rl.rollout(m, q0, np.zeros(m.nv), tau[:0], 1e-3)
    assert r0.q.shape == (1, m.nq)
    for method in rl.METHODS:
        r = rl.rollout(m, q0, np.zeros(m.nv), tau, 1e-3, method)
        # the base frame is the world's (no rotation): the base falls at g, joints stay
        np.testing.assert_allclose(r.v[-1, :3], [0, 0, -9.81 * 1e-2], atol=1e-12)
        np.testing.assert_allclose(r.v[-1, 3:], 0, atol=1e-12)
