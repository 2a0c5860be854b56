"""
~/trajectory_feedforward (served by the planner process) against Pinocchio's RNEA.

The answer is the request's timed trajectory with effort = RNEA(q, v, a) + Ia a + f(v) at
every point (armature and friction from a joint parameters file, a payload too), in the
request's joint order; bad requests are refused with a reason.
"""
import numpy as np
import pytest
from trajectory_msgs.msg import JointTrajectory

from node_cases import (JOINT_EPS, pin_each, random_joint_parameters, random_states,
                        set_payload, trajectory, write_joint_file)
from node_helpers import call_service
from oracle import Robot
from rbd_ros_interfaces import srv as rbd_srv

pytestmark = pytest.mark.pinocchio


def timed(names, perm, q, v, a, step=0.01):
    traj = trajectory(names, perm, positions=q, velocities=v, accelerations=a)
    for k, p in enumerate(traj.points):
        t = (k + 1) * step
        p.time_from_start.sec, p.time_from_start.nanosec = int(t), int(round(t % 1 * 1e9))
    return traj


def call(h, traj):
    client = h.tester.create_client(rbd_srv.TrajectoryFeedforward,
                                    f"{h.namespace}/rbd_dynamics/trajectory_feedforward")
    return call_service(client, rbd_srv.TrajectoryFeedforward.Request(trajectory=traj),
                        "trajectory_feedforward", timeout=60.0)


def test_feedforward_equals_rnea_with_armature_friction_and_payload(harness, pin, tmp_path):
    robot = Robot("arm7")
    m = robot.model
    values = random_joint_parameters(m, 4)
    path = write_joint_file(tmp_path / "joints.json", m, values)
    h = harness({"robot_description": robot.xml, "planner_process": True,
                 "joint_parameters_file": path})
    mass, com, inertia = 0.8, np.array([0.01, 0.0, 0.04]), np.diag([2e-3, 2e-3, 1e-3])
    link = m.body_names[m.nbodies - 1]
    assert set_payload(h, link, mass, com, inertia).success
    jid = robot.body_joint[m.nbodies - 1]
    robot.pm.inertias[jid] = robot.pm.inertias[jid] + pin.Inertia(mass, com, inertia)
    n = 40
    q, v, a = random_states(robot, n, 5)
    v *= 0.2
    perm = np.random.default_rng(6).permutation(7)
    names = [m.joint_names[k] for k in perm]
    resp = call(h, timed(names, perm, q, v, a))
    assert resp.success, resp.message
    out = resp.trajectory
    assert list(out.joint_names) == names and len(out.points) == n
    friction = values["viscous"] * v + values["coulomb"] * np.tanh(v / JOINT_EPS) + \
        values["offset"]
    expected = pin_each(robot, pin.rnea, q, v, a) + values["armature"] * a + friction
    got = np.array([p.effort for p in out.points])
    np.testing.assert_allclose(got, expected[:, perm], rtol=1e-9, atol=1e-9)
    for k, p in enumerate(out.points):                 # the rest is the request's
        np.testing.assert_array_equal(p.positions, q[k][perm])
        assert p.time_from_start.nanosec == int(round((k + 1) * 0.01 % 1 * 1e9))


def test_feedforward_refusals(harness, pin):
    robot = Robot("arm7")
    m = robot.model
    h = harness({"robot_description": robot.xml, "planner_process": True})
    q, v, a = random_states(robot, 3, 1)
    perm = np.arange(7)
    names = list(m.joint_names)
    cases = []
    untimed = timed(names, perm, q, v, a)
    untimed.points[2].time_from_start = untimed.points[1].time_from_start
    cases.append((untimed, "time_from_start"))
    short = timed(names, perm, q, v, a)
    short.points[1].accelerations = short.points[1].accelerations[:3]
    cases.append((short, "accelerations"))
    nan = timed(names, perm, q, v, a)
    nan.points[0].velocities[4] = float("nan")
    cases.append((nan, "NaN"))
    cases.append((timed(names[:6], perm[:6], q, v, a), "missing"))
    cases.append((timed(names[:6] + ["nope"], perm, q, v, a), "nope"))
    for traj, text in cases:
        resp = call(h, traj)
        assert not resp.success and text in resp.message, (text, resp.message)
    empty = call(h, JointTrajectory(joint_names=names))
    assert empty.success and len(empty.trajectory.points) == 0
