"""
The node's trajectory services (issue 16) with real rclpy clients, against Pinocchio.

``~/trajectory_torques``: τ, limits and ∂τ/∂q, ∂τ/∂v at every point against pin.rnea,
Pinocchio's limits and pin.computeRNEADerivatives; ``~/trajectory_forward``: q̈ and its
derivatives against pin.aba / pin.computeABADerivatives, rollouts against the schemes
written out with Pinocchio's aba and integrate (``pinocchio_oracles.pin_rollout``), and bad
requests refused with a reason. Served by the node's planner process (its default).
"""
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from rbd_ros.batch import rollout as rl  # noqa: E402
from rbd_ros.node import trajectory_request  # noqa: E402
from helpers import assert_close, get_robot  # noqa: E402
from node_helpers import PLANNER_SERVICES  # noqa: E402
from node_cases import pin_each, random_states, trajectory  # noqa: E402
from pinocchio_oracles import pin_rollout  # noqa: E402


pytestmark = pytest.mark.pinocchio


def start(harness, name):
    """Start the node with its planner process (the default; the harness turns it off)."""
    robot = get_robot(name)
    return harness(dict(robot_description=robot.xml, floating_base=robot.floating,
                        planner_process=True)), robot


def request_order(robot, seed):
    names = list(robot.model.joint_names)
    perm = np.random.default_rng(seed).permutation(len(names))
    return [names[k] for k in perm], perm


def pin_derivatives(robot, function, *arrays):
    """Stack Pinocchio's derivatives (∂/∂q, ∂/∂v) over the points, in our order."""
    dq, dv = [], []
    for q, x, y in zip(*arrays):
        d = function(robot.pm, robot.pd, robot.q_to_pin(q), robot.v_to_pin(x),
                     robot.v_to_pin(y))
        dq.append(robot.matrix_from_pin(d[0]))
        dv.append(robot.matrix_from_pin(d[1]))
    return np.array(dq), np.array(dv)


def reorder(robot, perm, x, nbase):
    """Model-order (N, nbase + joints) -> (joints in request order (N, ·), base (N, nbase))."""
    return x[:, nbase:][:, perm], x[:, :nbase]


def dof_index(robot, perm):
    nb = 6 if robot.floating else 0
    return np.concatenate([np.arange(nb), nb + np.asarray(perm)])


@pytest.mark.parametrize("name", ["arm7", "quadruped"])
def test_trajectory_torques(harness, name, pin):
    h, robot = start(harness, name)
    m = robot.model
    nb = 6 if robot.floating else 0
    n = 60
    q, v, a = random_states(robot, n, 1)
    v[41, nb + 2] = 3.0 * robot.v_from_pin(robot.pm.velocityLimit)[nb + 2]   # a violation
    names, perm = request_order(robot, 2)
    req = PLANNER_SERVICES["trajectory_torques"].Request(derivatives=True)
    req.trajectory = trajectory(names, perm, positions=q[:, 7 if nb else 0:],
                                velocities=v[:, nb:], accelerations=a[:, nb:])
    if nb:
        req.base_q, req.base_v, req.base_a = (x[:, :w].ravel().tolist()
                                              for x, w in ((q, 7), (v, 6), (a, 6)))
    resp = h.call("trajectory_torques", req)
    assert resp.success, resp.message
    tau = pin_each(robot, pin.rnea, q, v, a)
    got = np.reshape(resp.tau, (n, -1))
    ref_joints, ref_base = reorder(robot, perm, tau, nb)
    assert resp.points == n and got.shape == ref_joints.shape
    assert_close(got, ref_joints, 1e-9, "tau")
    assert_close(np.reshape(resp.base_tau, (n, nb)), ref_base, 1e-9, "base tau")
    # limits: Pinocchio's, from the same URDF
    effort = robot.v_from_pin(robot.pm.effortLimit)[nb:]
    velocity = robot.v_from_pin(robot.pm.velocityLimit)[nb:]
    r_effort, r_velocity = np.abs(tau[:, nb:]) / effort, np.abs(v[:, nb:]) / velocity
    assert_close(resp.peak_effort_ratio, r_effort.max(axis=0)[perm], 1e-9, "peak effort")
    assert_close(resp.peak_velocity_ratio, r_velocity.max(axis=0)[perm], 1e-9, "peak v")
    over = (r_effort > 1) | (r_velocity > 1)
    first = np.argwhere(over)[0]
    assert not resp.feasible and resp.first_violation_point == first[0] <= 41
    assert resp.first_violation_joint in [m.joint_names[j] for j in np.flatnonzero(
        over[first[0]])]
    assert resp.first_violation_limit in ("effort", "velocity")
    # derivatives over the base's six then the request's joints
    dq, dv = pin_derivatives(robot, pin.computeRNEADerivatives, q, v, a)
    idx = dof_index(robot, perm)
    k = len(idx)
    assert list(resp.dof_names[nb:]) == names and len(resp.dof_names) == k
    assert_close(np.reshape(resp.dtau_dq, (n, k, k)), dq[:, idx][:, :, idx], 1e-8, "dtau/dq")
    assert_close(np.reshape(resp.dtau_dv, (n, k, k)), dv[:, idx][:, :, idx], 1e-8, "dtau/dv")


@pytest.mark.parametrize("name", ["arm7", "quadruped"])
def test_trajectory_forward_points(harness, name, pin):
    h, robot = start(harness, name)
    nb = 6 if robot.floating else 0
    n = 30
    q, v, tau = random_states(robot, n, 3)
    names, perm = request_order(robot, 4)
    req = PLANNER_SERVICES["trajectory_forward"].Request(mode="points", derivatives=True)
    req.trajectory = trajectory(names, perm, positions=q[:, 7 if nb else 0:],
                                velocities=v[:, nb:], effort=tau[:, nb:])
    if nb:
        req.base_q, req.base_v = q[:, :7].ravel().tolist(), v[:, :6].ravel().tolist()
        tau[:, :6] = 0.0                          # base_tau left empty: no base wrench
    resp = h.call("trajectory_forward", req)
    assert resp.success, resp.message
    qdd = pin_each(robot, pin.aba, q, v, tau)
    ref_joints, ref_base = reorder(robot, perm, qdd, nb)
    assert_close(np.reshape(resp.qdd, (n, -1)), ref_joints, 1e-9, "qdd")
    assert_close(np.reshape(resp.base_qdd, (n, nb)), ref_base, 1e-9, "base qdd")
    dq, dv = pin_derivatives(robot, pin.computeABADerivatives, q, v, tau)
    idx = dof_index(robot, perm)
    k = len(idx)
    assert_close(np.reshape(resp.dqdd_dq, (n, k, k)), dq[:, idx][:, :, idx], 1e-7, "dqdd/dq")
    assert_close(np.reshape(resp.dqdd_dv, (n, k, k)), dv[:, idx][:, :, idx], 1e-7, "dqdd/dv")


@pytest.mark.parametrize("method", rl.METHODS)
@pytest.mark.parametrize("name", ["arm7", "quadruped"])
def test_trajectory_forward_rollout(harness, name, method, pin):
    h, robot = start(harness, name)
    m = robot.model
    nb = 6 if robot.floating else 0
    n, dt = 40, 2e-3
    q, v, tau = random_states(robot, n, 5)
    if nb:
        tau[:, :6] = np.random.default_rng(6).normal(size=(n, 6))
    names, perm = request_order(robot, 7)
    req = PLANNER_SERVICES["trajectory_forward"].Request(mode="rollout", integrator=method,
                                                         dt=dt, derivatives=True)
    # only point 0's state is read: the others carry their efforts only
    req.trajectory = trajectory(names, perm, effort=tau[:, nb:])
    req.trajectory.points[0].positions = [float(x) for x in q[0, 7 if nb else 0:][perm]]
    req.trajectory.points[0].velocities = [float(x) for x in v[0, nb:][perm]]
    if nb:
        req.base_q, req.base_v = q[0, :7].tolist(), v[0, :6].tolist()
        req.base_tau = tau[:, :6].ravel().tolist()
    resp = h.call("trajectory_forward", req)
    assert resp.success, resp.message
    qs, vs = pin_rollout(robot, q[0], v[0], tau, dt, method)
    got_q = np.reshape(resp.positions, (n + 1, -1))
    got_v = np.reshape(resp.velocities, (n + 1, -1))
    for k in range(n + 1):
        mine = np.concatenate([np.reshape(resp.base_q, (n + 1, 7 if nb else 0))[k],
                               np.empty(len(names))])
        mine[7 if nb else 0:][perm] = got_q[k]
        assert_close(robot.q_to_pin(mine), qs[k], 1e-9, f"q[{k}]")
        ref_v = robot.v_from_pin(vs[k])
        assert_close(got_v[k], ref_v[nb:][perm], 1e-9, f"v[{k}]")
        assert_close(np.reshape(resp.base_v, (n + 1, nb))[k], ref_v[:nb], 1e-9, f"vb[{k}]")
    # the step derivatives: those of rbd_ros.batch.rollout (checked against finite differences in
    # test_rollout), restricted to the request's order
    core = rl.rollout(m, q[0], v[0], tau, dt, method, derivatives=True)
    idx = dof_index(robot, perm)
    idx2 = np.concatenate([idx, m.nv + idx])
    k = len(idx)
    assert_close(np.reshape(resp.dx_dx, (n, 2 * k, 2 * k)), core.dx_dx[:, idx2][:, :, idx2],
                 1e-12, "dx'/dx")
    assert_close(np.reshape(resp.dx_du, (n, 2 * k, k)), core.dx_du[:, idx2][:, :, idx],
                 1e-12, "dx'/du")


def test_bad_trajectory_requests(harness):
    h, robot = start(harness, "arm7")
    m = robot.model
    names, perm = request_order(robot, 8)
    q, v, a = random_states(robot, 4, 9)

    def good(service):
        req = PLANNER_SERVICES[service].Request()
        fields = dict(positions=q, velocities=v)
        fields["accelerations" if service == "trajectory_torques" else "effort"] = a
        req.trajectory = trajectory(names, perm, **fields)
        return req

    def refused(service, req, *words):
        resp = h.call(service, req)
        assert not resp.success, f"{service} accepted a bad request ({words})"
        assert len(resp.message) < 400, resp.message
        for word in words:
            assert word in resp.message, f"{resp.message!r} lacks {word!r}"

    for service in ("trajectory_torques", "trajectory_forward"):
        assert h.call(service, good(service)).success
        req = good(service)
        req.trajectory.joint_names[1] = "no_such_joint"
        refused(service, req, "unknown", "no_such_joint")
        req = good(service)
        req.trajectory.points[2].velocities = [0.0] * 3
        refused(service, req, "point 2", "velocities")
        req = good(service)                  # a short point and a long one: not a row each
        req.trajectory.points[1].positions = list(q[1][perm])[:-1]
        req.trajectory.points[2].positions = list(q[2][perm]) + [0.0]
        refused(service, req, "point 1", "positions")
        req = good(service)
        req.trajectory.points[3].positions[4] = float("nan")
        refused(service, req, "point 3", names[4], "NaN")
        req = good(service)
        req.base_q = [0.0] * 7
        refused(service, req, "base_q", "fixed-base")
        req = good(service)
        req.trajectory.points = [req.trajectory.points[0]] * (trajectory_request.MAX_POINTS + 1)
        refused(service, req, "at most")
        req = good(service)
        req.derivatives = True
        req.trajectory.points[0].velocities = [1e200] * m.nv
        refused(service, req, "not finite")
    forward = "trajectory_forward"
    for change, words in ((dict(mode="backward"), ("mode",)),
                          (dict(mode="rollout", integrator="euler"), ("integrator",)),
                          (dict(mode="rollout", dt=0.0), ("dt",)),
                          (dict(mode="rollout", dt=float("inf")), ("dt",)),
                          (dict(mode="rollout", dt=5.0), ("dt",))):
        req = good(forward)
        for key, value in change.items():
            setattr(req, key, value)
        refused(forward, req, *words)
    req = good(forward)
    req.mode, req.dt = "rollout", 1e-3
    req.trajectory.points = []
    refused(forward, req, "at least one point")
    req = good(forward)
    req.mode, req.dt = "rollout", 1e-3
    req.trajectory.points[2].effort = [1e300] * m.nv
    refused(forward, req, "finite")


@pytest.mark.parametrize("name", ["arm7", "quadruped"])
def test_trajectory_effective_mass(harness, name, pin):
    """~/trajectory_effective_mass: 1 / (uᵀ J_v M⁻¹ J_vᵀ u), u along J_v v, from Pinocchio."""
    h, robot = start(harness, name)
    nb = 6 if robot.floating else 0
    n = 12
    q, v, _ = random_states(robot, n, 3)
    link = list(robot.model.link_frames)[-1]
    names, perm = request_order(robot, 4)
    req = PLANNER_SERVICES["trajectory_effective_mass"].Request(link=link)
    req.trajectory = trajectory(names, perm, positions=q[:, 7 if nb else 0:],
                                velocities=v[:, nb:])
    if nb:
        req.base_q, req.base_v = q[:, :7].ravel().tolist(), v[:, :6].ravel().tolist()
    resp = h.call("trajectory_effective_mass", req)
    assert resp.success, resp.message
    assert resp.points == n and all(resp.defined)
    frame = robot.pm.getFrameId(link, pin.BODY)
    for k in range(n):
        qp = robot.q_to_pin(q[k])
        Jv = np.asarray(pin.computeFrameJacobian(robot.pm, robot.pd, qp, frame,
                                                 pin.LOCAL_WORLD_ALIGNED))[:3]
        M = np.asarray(pin.crba(robot.pm, robot.pd, qp))
        M = np.triu(M) + np.triu(M, 1).T
        velocity = Jv @ robot.v_to_pin(v[k])
        u = velocity / np.linalg.norm(velocity)
        w = Jv.T @ u
        assert_close(resp.direction[3 * k:3 * k + 3], u, 1e-9, f"u {k}")
        assert_close(resp.speed[k], np.linalg.norm(velocity), 1e-9, f"speed {k}")
        assert_close(resp.effective_mass[k], 1.0 / (w @ np.linalg.solve(M, w)), 1e-8,
                     f"effective mass {k}")
    req.link = "no_such_link"
    resp = h.call("trajectory_effective_mass", req)
    assert not resp.success and "not a link" in resp.message
