"""
The node's ``~/retime_trajectory`` (issue 25) with real rclpy clients, against Pinocchio.

Served by the node's planner process (its default). The answer's points are checked as the
core's are in ``test_retime`` (τ by pin.rnea within the scaled effort limits, the velocity
and acceleration limits, positions on the spline through the waypoints); its duration is the
core's for the same inputs; followers of a mimic-coupled model are filled from their leaders;
bad requests are refused with a reason.
"""
import numpy as np  # noqa: E402
import pytest  # noqa: E402

pytest.importorskip("toppra")

from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint  # noqa: E402

import rbd_ros  # noqa: E402
from rbd_ros.node import trajectory_request  # noqa: E402
from helpers import get_robot  # noqa: E402
from mimic_oracle import PAIR, hand_urdf  # noqa: E402
from node_helpers import PLANNER_SERVICES  # noqa: E402
from node_cases import (JOINT_EPS, random_joint_parameters, set_payload,  # noqa: E402
                        write_joint_file)
from pinocchio_oracles import pin_effort  # noqa: E402
from retime_paths import spline, waypoints  # noqa: E402


pytestmark = pytest.mark.pinocchio
Request = PLANNER_SERVICES["retime_trajectory"].Request


def path_message(names, w):
    """Return a JointTrajectory of the waypoints ``w`` (M, joints) in the order of ``names``."""
    msg = JointTrajectory()
    msg.joint_names = list(names)
    for row in w:
        msg.points.append(JointTrajectoryPoint(positions=[float(x) for x in row]))
    return msg


def answer(resp, names):
    """Return (t, q, v, a, τ) of the answer, joints in the order of ``names``."""
    traj = resp.trajectory
    assert list(traj.joint_names) == list(names)
    t = np.array([p.time_from_start.sec + 1e-9 * p.time_from_start.nanosec
                  for p in traj.points])
    fields = [np.array([getattr(p, f) for p in traj.points])
              for f in ("positions", "velocities", "accelerations", "effort")]
    return (t, *fields)


def test_retime_trajectory_against_pinocchio(harness, pin):
    robot = get_robot("arm7")
    m = robot.model
    h = harness(dict(robot_description=robot.xml, planner_process=True))
    w = waypoints(m, 10, 7)
    perm = np.random.default_rng(8).permutation(m.nv)
    names = [m.joint_names[k] for k in perm]
    acc = np.full(m.nv, 20.0)
    acc[2] = np.inf
    req = Request(trajectory=path_message(names, w[:, perm]), velocity_scale=0.8,
                  effort_scale=0.4, acceleration_limits=acc[perm].tolist(),
                  sample_period=0.01, grid_points=300)
    resp = h.call("retime_trajectory", req)
    assert resp.success, resp.message
    t, q, v, a, tau = answer(resp, names)
    back = np.argsort(perm)                       # request order -> model order
    q, v, a, tau = q[:, back], v[:, back], a[:, back], tau[:, back]
    ref = pin_effort(robot, robot.pm, q, v, a)
    assert np.all(np.abs(ref) <= 0.4 * m.effort_limit * (1 + 1e-6))
    assert np.max(np.abs(tau - ref)) <= 1e-8 * np.max(np.abs(ref))
    assert np.all(np.abs(v) <= 0.8 * m.velocity_limit * (1 + 1e-6))
    assert np.all(np.abs(a) <= acc * (1 + 1e-6))
    # the core's answer for the same inputs, in this process
    core = rbd_ros.retime(m, w, velocity_scale=0.8, effort_scale=0.4, acceleration_limits=acc,
                          grid=300, sample_period=0.01)
    assert resp.duration == pytest.approx(core.duration, rel=1e-9)
    assert resp.time_scale == pytest.approx(core.time_scale, rel=1e-9)
    assert np.max(np.abs(q - spline(w)(core.s))) <= 1e-6
    assert np.allclose(t, core.t, rtol=0, atol=1e-9)
    kinds = set(resp.binding_limit)
    assert kinds <= {"", "velocity", "acceleration", "effort"} and "velocity" in kinds
    assert len(resp.binding_joint) == len(t) == len(resp.binding_ratio)
    bound = [k for k, kind in enumerate(resp.binding_limit) if kind]
    assert all(resp.binding_joint[k] in names and resp.binding_ratio[k] >= 0.99 for k in bound)


def test_retime_trajectory_payload_and_joint_parameters(harness, pin, tmp_path):
    """The node's payload (~/set_payload) and joint parameters are in the answer's τ."""
    robot = get_robot("arm7")
    m = robot.model
    values = random_joint_parameters(m, 3)
    h = harness(dict(robot_description=robot.xml, planner_process=True,
                     joint_parameters_file=write_joint_file(tmp_path / "p.json", m, values)))
    link, mass, com = m.body_names[-1], 1.5, np.array([0.0, 0.02, 0.06])
    assert set_payload(h, link, mass, com).success
    w = waypoints(m, 6, 16)
    req = Request(trajectory=path_message(m.joint_names, w), effort_scale=0.6,
                  sample_period=0.01)
    resp = h.call("retime_trajectory", req)
    assert resp.success, resp.message
    _, q, v, a, tau = answer(resp, m.joint_names)
    pm = pin.Model(robot.pm)
    jid = robot.body_joint[m.nbodies - 1]
    pm.inertias[jid] = pm.inertias[jid] + pin.Inertia(mass, com, np.zeros((3, 3)))
    ref = (pin_effort(robot, pm, q, v, a) + values["armature"] * a + values["viscous"] * v
           + values["coulomb"] * np.tanh(v / JOINT_EPS) + values["offset"])
    assert np.max(np.abs(tau - ref)) <= 1e-8 * np.max(np.abs(ref))
    assert np.all(np.abs(ref) <= 0.6 * m.effort_limit * (1 + 1e-6))
    assert "effort" in resp.binding_limit


def test_retime_trajectory_mimic_followers(harness):
    xml = hand_urdf(PAIR, seed=2, name="pair").replace('effort="10"', 'effort="200"')
    h = harness(dict(robot_description=xml, planner_process=True))
    m = rbd_ros.load_model(xml)
    w = waypoints(m, 4, 9, spread=0.5)
    # the follower j3 named first, its positions nonsense: they are ignored
    names = ["j3"] + list(m.joint_names)
    rows = np.hstack([np.full((len(w), 1), 1e3), w])
    req = Request(trajectory=path_message(names, rows), sample_period=0.02)
    resp = h.call("retime_trajectory", req)
    assert resp.success, resp.message
    t, q, v, a, tau = answer(resp, names)
    core = rbd_ros.retime(m, w, sample_period=0.02)
    leader = names.index("j2")
    assert np.allclose(q[:, 1:], core.q, atol=1e-12)
    assert np.allclose(q[:, 0], -0.5 * q[:, leader] + 0.2, atol=1e-12)   # PAIR: j3 = -0.5 j2 + 0.2
    assert np.allclose(v[:, 0], -0.5 * v[:, leader], atol=1e-12)
    assert np.all(tau[:, 0] == 0)
    assert np.allclose(tau[:, 1:], core.tau, atol=1e-9)


def test_bad_retime_requests(harness):
    robot = get_robot("arm7")
    m = robot.model
    h = harness(dict(robot_description=robot.xml, planner_process=True))
    names = list(m.joint_names)
    w = waypoints(m, 4, 10)

    def good():
        return Request(trajectory=path_message(names, w))

    def refused(req, *words):
        resp = h.call("retime_trajectory", req)
        assert not resp.success, f"a bad request was accepted ({words})"
        assert len(resp.message) < 400, resp.message
        for word in words:
            assert word in resp.message, f"{resp.message!r} lacks {word!r}"

    assert h.call("retime_trajectory", good()).success
    req = good()
    req.trajectory.points[2].positions[4] = float("nan")
    refused(req, "point 2", names[4], "NaN")
    req = good()
    req.trajectory.joint_names[1] = names[0]
    refused(req, "duplicates")
    req = good()
    req.trajectory.joint_names[1] = "no_such_joint"
    refused(req, "unknown", "no_such_joint")
    req = good()
    req.trajectory.points = req.trajectory.points[:1]
    refused(req, "at least two")
    req = good()
    req.effort_scale = 0.05
    refused(req, "infeasible", "standing still", "joint")
    req = good()
    req.trajectory.points[1].positions[0] = float(m.upper[0] + 0.2)
    refused(req, "waypoint 1", names[0], "outside")
    req = good()
    req.trajectory.points[3].positions = [0.0] * 3
    refused(req, "point 3", "positions")
    req = good()
    req.acceleration_limits = [1.0, 2.0]
    refused(req, "acceleration_limits")
    req = good()
    req.acceleration_limits = [-1.0] * m.nv
    refused(req, "acceleration limit")
    for field, value, word in (("velocity_scale", 2.0, "velocity_scale"),
                               ("effort_scale", float("nan"), "effort_scale"),
                               ("sample_period", -1.0, "sample_period"),
                               ("sample_period", 1e-7, "at most"),
                               ("grid_points", 100_000, "grid_points")):
        req = good()
        setattr(req, field, value)
        refused(req, word)
    req = good()
    req.trajectory.points = [req.trajectory.points[k % 4]
                             for k in range(trajectory_request.MAX_POINTS + 1)]
    refused(req, "at most")


def test_retime_trajectory_in_the_node_process(harness):
    """planner_process false: the worker thread serves it, with the same answer as the core."""
    robot = get_robot("arm7")
    m = robot.model
    h = harness(dict(robot_description=robot.xml))          # the harness's default: a thread
    w = waypoints(m, 5, 17)
    resp = h.call("retime_trajectory", Request(trajectory=path_message(m.joint_names, w),
                                               effort_scale=0.5, sample_period=0.02))
    assert resp.success, resp.message
    core = rbd_ros.retime(m, w, effort_scale=0.5, sample_period=0.02)
    _, q, v, a, tau = answer(resp, m.joint_names)
    assert resp.duration == pytest.approx(core.duration, rel=1e-12)
    assert np.array_equal(tau, core.tau) and np.array_equal(q, core.q)
