"""
The dynamics node with joint friction, rotor inertia and offsets: real rclpy, in-process.

The parameters ``joint_parameters_file`` and ``urdf_joint_dynamics``.

Every number is checked against this file's own formulas on Pinocchio (the oracle):
τ = rnea + Ia a + Fv v + Fc tanh(v/ε) + τ0, q̈ = (crba + diag Ia)⁻¹ (τ_measured - friction -
rnea(q, v, 0)), M⁻¹ = (crba + diag Ia)⁻¹ and the derivatives as central differences of those.
A file that cannot be used stops the node at start-up; one that does not fit a description
has that description rejected (counted), the node running on.
"""
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from rbd_ros_interfaces import srv as rbd_srv  # noqa: E402
from trajectory_msgs.msg import JointTrajectoryPoint  # noqa: E402

from node_helpers import Harness, joint_vector, wait_for  # noqa: E402
from node_cases import (ALL_OUTPUTS, ARM7, BRANCHED, JOINT_EPS, OUTPUTS,  # noqa: E402
                        core_model, message, random_joint_parameters, random_state, shuffled,
                        write_joint_file, xml)

TOL = dict(rtol=1e-8, atol=1e-8)
FD_TOL = dict(rtol=1e-5, atol=1e-5)


class Oracle:
    """The test's own formulas, on Pinocchio."""

    def __init__(self, pin, values, eps=JOINT_EPS):
        self.pin, self.p, self.eps = pin, values, eps
        self.pm = pin.buildModelFromUrdf(ARM7)
        self.pd = self.pm.createData()
        self.Ia = values.get("armature", np.zeros(self.pm.nv))

    def friction(self, v):
        p = self.p
        return p["viscous"] * v + p["coulomb"] * np.tanh(v / self.eps) + p.get("offset", 0.0)

    def M(self, q):
        M = self.pin.crba(self.pm, self.pd, q)
        return np.triu(M) + np.triu(M, 1).T + np.diag(self.Ia)

    def tau(self, q, v, a):
        return self.pin.rnea(self.pm, self.pd, q, v, a) + self.Ia * a + self.friction(v)

    def qdd(self, q, v, tau):
        bias = self.pin.rnea(self.pm, self.pd, q, v, np.zeros_like(v))
        return np.linalg.solve(self.M(q), tau - self.friction(v) - bias)

    @staticmethod
    def diff(fn, args, k, h=1e-6):
        cols = []
        for e in np.eye(len(args[k])):
            hi, lo = list(args), list(args)
            hi[k], lo[k] = args[k] + h * e, args[k] - h * e
            cols.append((fn(*hi) - fn(*lo)) / (2 * h))
        return np.array(cols).T


def test_outputs_include_the_joint_parameters(harness, pin, tmp_path):
    """Every topic with a parameter file: against the oracle, at a commanded acceleration."""
    model = core_model(ARM7)
    values = random_joint_parameters(model)
    h = harness(dict(ALL_OUTPUTS, robot_description=xml(ARM7),
                     acceleration_topic="commanded_accelerations",
                     joint_parameters_file=write_joint_file(tmp_path / "p.json", model, values)))
    oracle = Oracle(pin, values)
    names = list(model.joint_names)
    for seed in (1, 2):
        q, v, tau = random_state(model, seed)
        v *= 0.2                                # within a few ε: the tanh is not saturated
        a = np.random.default_rng(seed).uniform(-2, 2, model.nv)
        order, perm = shuffled(names, seed)
        h.accel.publish(joint_vector(order, a[perm]))
        wait_for(lambda: np.array_equal(h.node.current_robot().a, a),
                 what="the commanded acceleration")
        msg = message(model, q, v, tau, seed=seed)
        found = h.exchange(lambda: h.joint_states.publish(msg), msg.header.stamp,
                           topics=list(OUTPUTS))
        np.testing.assert_allclose(found["torques"].effort, oracle.tau(q, v, a), **TOL)
        np.testing.assert_allclose(found["accelerations"].data, oracle.qdd(q, v, tau), **TOL)
        n = model.nv
        minv = np.reshape(found["inverse_inertia"].data, (n, n))
        np.testing.assert_allclose(minv, np.linalg.inv(oracle.M(q)), **TOL)
        rd, ad = found["rnea_derivatives"], found["aba_derivatives"]
        for k, field in ((0, "d_dq"), (1, "d_dv")):
            np.testing.assert_allclose(np.reshape(getattr(rd, field), (n, n)),
                                       oracle.diff(oracle.tau, (q, v, a), k), **FD_TOL)
            np.testing.assert_allclose(np.reshape(getattr(ad, field), (n, n)),
                                       oracle.diff(oracle.qdd, (q, v, tau), k), **FD_TOL)


def trajectory(names, rows, field):
    points = []
    for row in rows:
        p = JointTrajectoryPoint()
        for attr, x in zip(("positions", "velocities", field), row):
            setattr(p, attr, [float(y) for y in x])
        points.append(p)
    return points


def test_services_include_the_joint_parameters(harness, pin, tmp_path):
    model = core_model(ARM7)
    values = random_joint_parameters(model, 3)
    h = harness(dict(robot_description=xml(ARM7),
                     joint_parameters_file=write_joint_file(tmp_path / "p.json", model, values)))
    oracle = Oracle(pin, values)
    names = list(model.joint_names)
    q, v, tau = random_state(model, 4)
    a = np.random.default_rng(5).uniform(-2, 2, model.nv)
    req = rbd_srv.InverseDynamics.Request(joint_names=names, q=list(q), v=list(v), a=list(a))
    resp = h.call("inverse_dynamics", req)
    assert resp.success, resp.message
    np.testing.assert_allclose(resp.tau, oracle.tau(q, v, a), **TOL)
    req = rbd_srv.ForwardDynamics.Request(joint_names=names, q=list(q), v=list(v),
                                          tau=list(tau))
    resp = h.call("forward_dynamics", req)
    assert resp.success, resp.message
    np.testing.assert_allclose(resp.qdd, oracle.qdd(q, v, tau), **TOL)
    req = rbd_srv.TrajectoryTorques.Request()
    req.trajectory.joint_names = names
    req.trajectory.points = trajectory(names, [(q, v, a), (-q, 2 * v, -a)], "accelerations")
    resp = h.call("trajectory_torques", req)
    assert resp.success, resp.message
    np.testing.assert_allclose(np.reshape(resp.tau, (2, -1)),
                               [oracle.tau(q, v, a), oracle.tau(-q, 2 * v, -a)], **TOL)
    req = rbd_srv.TrajectoryForward.Request(mode="points")
    req.trajectory.joint_names = names
    req.trajectory.points = trajectory(names, [(q, v, tau)], "effort")
    resp = h.call("trajectory_forward", req)
    assert resp.success, resp.message
    np.testing.assert_allclose(resp.qdd, oracle.qdd(q, v, tau), **TOL)
    req.mode, req.dt = "rollout", 0.01
    resp = h.call("trajectory_forward", req)
    assert not resp.success and "rigid-body" in resp.message


def with_dynamics(text, damping, friction):
    """Return the URDF ``text`` with <dynamics damping friction> on every joint."""
    tag = f'<dynamics damping="{damping}" friction="{friction}"/>'
    return text.replace("</joint>", tag + "</joint>")


def test_urdf_joint_dynamics_live(harness, pin):
    """urdf_joint_dynamics: set live, the URDF's <dynamics> in the torques; refused if bad."""
    model = core_model(ARM7)
    h = harness(dict(robot_description=with_dynamics(xml(ARM7), 0.7, 0.4)))
    n = model.nv
    on = Oracle(pin, {"viscous": np.full(n, 0.7), "coulomb": np.full(n, 0.4)}, eps=0.01)
    off = Oracle(pin, {"viscous": np.zeros(n), "coulomb": np.zeros(n)})
    for flag, oracle, seed in ((True, on, 6), (False, off, 7)):
        (result,) = h.set_parameters(urdf_joint_dynamics=flag)
        assert result.successful, result.reason
        q, v, tau = random_state(model, seed)
        msg = message(model, q, v, tau, seed=seed)
        found = h.exchange(lambda: h.joint_states.publish(msg), msg.header.stamp)
        np.testing.assert_allclose(found["torques"].effort, oracle.tau(q, v, 0 * v), **TOL)
    h.set_parameters(robot_description=with_dynamics(xml(ARM7), -1.0, 0.0))
    wait_for(lambda: "-1.0" in h.node.current_robot().xml, what="the new description")
    (result,) = h.set_parameters(urdf_joint_dynamics=True)
    assert not result.successful and "damping" in result.reason


@pytest.mark.parametrize("content, message", [
    (None, "cannot read it"),
    (b"{not json", "not JSON"),
    (b'{"format": "something else"}', "not an rbd_ros joint parameter file"),
    (b'{"format": "rbd_ros joint parameters 1", "joints": {"joint1": {"viscous": -1}}}',
     "viscous must be a finite number >= 0"),
    (b"\xff\xfe" * 10, "not UTF-8"),
    (b" " * (1 << 21), "larger than 1 MiB"),
])
def test_a_bad_file_stops_the_node_at_start_up(tmp_path, content, message):
    path = tmp_path / "p.json"
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(ValueError, match="joint_parameters_file") as err:
        Harness(dict(robot_description=xml(ARM7), joint_parameters_file=str(path)))
    assert message in str(err.value) and len(str(err.value)) < 400


def test_file_and_urdf_dynamics_choose_one(tmp_path):
    model = core_model(ARM7)
    path = write_joint_file(tmp_path / "p.json", model, random_joint_parameters(model))
    with pytest.raises(ValueError, match="choose one"):
        Harness(dict(robot_description=xml(ARM7), joint_parameters_file=path,
                     urdf_joint_dynamics=True))


def test_description_that_does_not_fit_is_rejected(harness, pin, tmp_path):
    """A description without the file's joints is rejected, counted; the model runs on."""
    model = core_model(ARM7)
    values = random_joint_parameters(model, 8)
    h = harness(dict(robot_description=xml(ARM7),
                     joint_parameters_file=write_joint_file(tmp_path / "p.json", model, values)))
    h.set_parameters(robot_description=xml(BRANCHED))
    h.wait_log("joint_parameters_file: joints not in the model")
    assert h.node.stats()["descriptions_rejected"] == 1
    assert h.node.current_robot().model.name == model.name
    q, v, tau = random_state(model, 9)
    msg = message(model, q, v, tau, seed=9)
    found = h.exchange(lambda: h.joint_states.publish(msg), msg.header.stamp)
    np.testing.assert_allclose(found["torques"].effort,
                               Oracle(pin, values).tau(q, v, 0 * v), **TOL)
