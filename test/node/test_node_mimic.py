"""
ROS 2 tests of the dynamics node with mimic joints: a Panda-like arm with a coupled gripper.

The description goes out as robot_state_publisher publishes it (the XML on the latched
robot_description topic) and the joint states as joint_state_publisher does (every joint,
the follower finger included, its position computed from its leader). Real rclpy on
loopback, the node in-process (``node_helpers.Harness``). Oracles: Pinocchio's own mimic model
(torques: its RNEA at zero acceleration) and the reduced system of Pinocchio's model without
coupling (``mimic_oracle.ReducedOracle``: accelerations, M⁻¹).
"""
import tempfile

import numpy as np  # noqa: E402
import pytest  # noqa: E402

import rbd_ros  # noqa: E402
from mimic_oracle import ReducedOracle  # noqa: E402
from node_helpers import SERVICES, joint_state, wait_for  # noqa: E402
from std_msgs.msg import String  # noqa: E402
from node_cases import ALL_OUTPUTS  # noqa: E402

TOL = dict(rtol=1e-9, atol=1e-9)
FINGER = """
  <joint name="hand_joint" type="fixed">
    <parent link="tool"/><child link="hand"/><origin xyz="0 0 0.05" rpy="0 0 -0.785398"/>
    <mimic joint="joint7"/>
  </joint>
  <link name="hand"><inertial><origin xyz="0 0 0.03"/><mass value="0.73"/>
    <inertia ixx="0.0025" ixy="0" ixz="0" iyy="0.0025" iyz="0" izz="0.0017"/></inertial></link>
  <joint name="finger_joint1" type="prismatic">
    <parent link="hand"/><child link="finger1"/><origin xyz="0 0 0.0584"/>
    <axis xyz="0 1 0"/><limit lower="0" upper="0.04" effort="100" velocity="0.2"/>
  </joint>
  <link name="finger1"><inertial><origin xyz="0 0.01 0.02"/><mass value="0.015"/>
    <inertia ixx="2.4e-6" ixy="0" ixz="0" iyy="2.4e-6" iyz="0" izz="1.5e-6"/></inertial></link>
  <joint name="finger_joint2" type="prismatic">
    <parent link="hand"/><child link="finger2"/><origin xyz="0 0 0.0584"/>
    <axis xyz="0 -1 0"/><limit lower="0" upper="0.04" effort="100" velocity="0.2"/>
    <mimic joint="finger_joint1"/>
  </joint>
  <link name="finger2"><inertial><origin xyz="0 -0.01 0.02"/><mass value="0.015"/>
    <inertia ixx="2.4e-6" ixy="0" ixz="0" iyy="2.4e-6" iyz="0" izz="1.5e-6"/></inertial></link>
</robot>"""


def panda_like():
    """Return rbd_arm7 with a Panda-style hand: two fingers, the second mimicking the first."""
    with open(rbd_ros.robots.path("rbd_arm7"), encoding="utf-8") as f:
        return f.read().replace("</robot>", FINGER)


def publisher_state(model, seed):
    """
    Return joint_state_publisher's message at a random state, and (q, v, τ) of the model.

    Every joint, followers included, in the tree's order; a follower's position and
    velocity follow its leader's.
    """
    rng = np.random.default_rng(seed)
    q = model.random_configuration(rng)
    v, tau = rng.uniform(-1, 1, model.nv), rng.uniform(-5, 5, model.nv)
    c = model.coupling
    full_v = c.G @ v
    full_tau = np.zeros(model.nv_full)
    full_tau[list(c.independent_index)] = tau
    msg = joint_state(c.joint_names, c.expand(q), full_v, full_tau)
    return msg, q, v, tau


@pytest.fixture(scope="module")
def oracle(pin):
    xml = panda_like()
    model = rbd_ros.load_model(xml)
    with tempfile.NamedTemporaryFile("w", suffix=".urdf") as f:
        f.write(xml)
        f.flush()
        pm = pin.buildModelFromUrdf(f.name, mimic=True)
    reduced = ReducedOracle(xml, False, model.joint_names, model.body_names)
    perm = [pm.joints[pm.getJointId(n)].idx_v for n in model.joint_names]

    def torques(q, v):
        qp, vp = np.empty(pm.nq), np.empty(pm.nv)
        qp[perm], vp[perm] = q, v
        return pin.rnea(pm, pm.createData(), qp, vp, np.zeros(pm.nv))[perm]
    return model, torques, reduced


def test_panda_like_outputs_equal_the_oracles(harness, oracle):
    model, torques, reduced = oracle
    assert model.joint_names[-1] == "finger_joint1" and model.nv == 8
    h = harness(dict(ALL_OUTPUTS))
    h.description.publish(String(data=panda_like()))
    msg, q, v, tau = publisher_state(model, 1)
    found = h.exchange(lambda: h.joint_states.publish(msg), msg.header.stamp,
                       topics=["torques", "accelerations", "inverse_inertia"])
    assert list(found["torques"].name) == list(model.joint_names)      # no follower
    np.testing.assert_allclose(found["torques"].effort, torques(q, v), **TOL)
    assert list(found["accelerations"].names) == list(model.joint_names)
    np.testing.assert_allclose(found["accelerations"].data, reduced.aba(q, v, tau), **TOL)
    np.testing.assert_allclose(np.reshape(found["inverse_inertia"].data, (8, 8)),
                               reduced.minv(q), **TOL)


def test_a_follower_off_its_coupling_is_logged_and_never_used(harness, oracle):
    model, torques, _ = oracle
    h = harness({})
    h.description.publish(String(data=panda_like()))
    msg, q, v, _ = publisher_state(model, 2)
    position = list(msg.position)
    position[-1] += 0.01                      # finger_joint2, 1 cm off its leader
    msg.position = position
    found = h.exchange(lambda: h.joint_states.publish(msg), msg.header.stamp)
    np.testing.assert_allclose(found["torques"].effort, torques(q, v), **TOL)
    h.wait_log("mimic joints disagree with their leaders")
    h.wait_log("finger_joint2 = ")


def test_services_may_name_the_followers(harness, oracle):
    model, torques, reduced = oracle
    h = harness({})
    h.description.publish(String(data=panda_like()))
    wait_for(lambda: h.node.current_robot() is not None, what="the model")
    c = model.coupling
    _, q, v, tau = publisher_state(model, 3)
    zero = np.zeros(model.nv)
    for names, expand in ((list(model.joint_names), lambda x: x),
                          (list(c.joint_names), lambda x: c.G @ x)):
        req = SERVICES["inverse_dynamics"].Request(joint_names=names)
        req.q, req.v, req.a = (list(map(float, x)) for x in (c.expand(q) if len(names) > 8
                                                             else q, expand(v), expand(zero)))
        resp = h.call("inverse_dynamics", req)
        assert resp.success, resp.message
        assert len(resp.tau) == len(names)
        np.testing.assert_allclose(np.array(resp.tau)[:8], torques(q, v), **TOL)
    assert resp.tau[-1] == 0.0                # the follower's load is in its leader's τ
    # forward dynamics: a follower's τ acts through the coupling (τ_r = Gᵀ τ)
    full_tau = c.G @ tau                      # any full τ; Gᵀ of it is what acts
    req = SERVICES["forward_dynamics"].Request(joint_names=list(c.joint_names))
    req.q, req.v, req.tau = (list(map(float, x)) for x in (c.expand(q), c.G @ v, full_tau))
    resp = h.call("forward_dynamics", req)
    assert resp.success, resp.message
    qdd = reduced.aba(q, v, c.G.T @ full_tau)
    np.testing.assert_allclose(resp.qdd, c.G @ qdd, **TOL)     # the follower's: its leader's


def test_a_rejected_description_is_logged_once_and_says_which_parameter(harness):
    h = harness({"mimic_joints": "error"})
    for k in range(3):                        # the same description, again and again
        h.description.publish(String(data=panda_like()))
        wait_for(lambda: h.node.stats()["descriptions_rejected"] > k, what="the rejection")
    h.wait_log("parameter mimic_joints: 'coupled'")
    h.send_joint_states(joint_state(["joint1"], [0.0]))
    h.wait_log("no robot model yet (the last robot description was rejected: ")
    rejected = [m.msg for m in h.messages("rosout") if "rejected robot description" in m.msg]
    assert len(rejected) == 1 and "finger_joint2" in rejected[0], rejected


def test_trajectory_services_with_followers(harness, oracle):
    """The trajectory services follow the other services' mimic convention (issue 16)."""
    from node_helpers import PLANNER_SERVICES
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint
    model, torques, reduced = oracle
    h = harness({})
    h.description.publish(String(data=panda_like()))
    wait_for(lambda: h.node.current_robot() is not None, what="the model")
    c = model.coupling
    states = [publisher_state(model, 10 + k)[1:] for k in range(3)]
    traj = JointTrajectory(joint_names=list(c.joint_names))       # the follower named last
    for q, v, tau in states:
        traj.points.append(JointTrajectoryPoint(
            positions=list(c.expand(q)), velocities=list(c.G @ v),
            accelerations=[0.0] * model.nv_full, effort=list(c.G @ tau)))
    resp = h.call("trajectory_torques", PLANNER_SERVICES["trajectory_torques"].Request(
        trajectory=traj))
    assert resp.success, resp.message
    got = np.reshape(resp.tau, (3, model.nv_full))
    for k, (q, v, _) in enumerate(states):
        np.testing.assert_allclose(got[k, :8], torques(q, v), **TOL)
    assert np.all(got[:, -1] == 0.0) and resp.peak_effort_ratio[-1] == 0.0
    resp = h.call("trajectory_forward", PLANNER_SERVICES["trajectory_forward"].Request(
        trajectory=traj))
    assert resp.success, resp.message
    got = np.reshape(resp.qdd, (3, model.nv_full))
    for k, (q, v, tau) in enumerate(states):     # the follower's τ acts through Gᵀ
        np.testing.assert_allclose(got[k], c.G @ reduced.aba(q, v, c.G.T @ (c.G @ tau)), **TOL)
    req = PLANNER_SERVICES["trajectory_forward"].Request(trajectory=traj, mode="rollout",
                                                         dt=1e-3)
    resp = h.call("trajectory_forward", req)
    assert resp.success, resp.message
    positions = np.reshape(resp.positions, (4, model.nv_full))
    # semi-implicit Euler on Pinocchio's reduced system: v' = v + dt q̈(q, v, Gᵀ τ), q' = q + dt v'
    # (revolute and prismatic joints only), from the first point's state
    q, v = states[0][0].copy(), states[0][1].copy()
    expected = [q.copy()]
    for _, _, tau in states:
        v = v + 1e-3 * reduced.aba(q, v, c.G.T @ (c.G @ tau))
        q = q + 1e-3 * v
        expected.append(q.copy())
    np.testing.assert_allclose(positions[:, :8], expected, **TOL)
    for k in range(4):                           # a follower's position: its coupling
        np.testing.assert_allclose(positions[k], c.expand(positions[k, :8]), **TOL)
    assert not np.allclose(positions[1:, :8], positions[0, :8], rtol=0, atol=1e-9)  # it moved
    assert len(resp.dof_names) == 8 and "finger_joint2" not in resp.dof_names
