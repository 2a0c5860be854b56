"""
rbd_replay's whole-body outputs (end_effector, center_of_mass) in the output bag, against Pinocchio.

A bag of joint_states of arm7 (random states, efforts absent) replayed with
``--outputs end_effector,center_of_mass --end-effector-frame link7``: every message in the
bag carries the input's stamp, the root link as frame_id, and numbers equal to Pinocchio's at
that state (pose, twist, Λ_t, Λ, effective masses; the centre of mass). The arguments these
outputs need are refused with the reason when missing. The node-vs-replay equality is
``test_node_replay``'s.
"""
import numpy as np
import pytest

from rbd_ros.replay import ReplayError, bag_io, replay
from oracle import Robot, assert_close

pytestmark = pytest.mark.pinocchio

LINK = "link7"
N = 12


def read(path, topic):
    store = bag_io.typestore()
    with bag_io.Reader(path) as r:
        cons = [c for c in r.connections if c.topic == topic]
        return [store.deserialize_cdr(raw, c.msgtype) for c, _, raw in r.messages(cons)]


@pytest.fixture(scope="module")
def replayed(tmp_path_factory):
    robot = Robot("arm7")
    m = robot.model
    rng = np.random.default_rng(11)
    q = np.array([m.random_configuration(rng) for _ in range(N)])
    v = rng.normal(scale=0.5, size=(N, m.nv))
    folder = tmp_path_factory.mktemp("whole_body")
    bag_io.write_joint_states(folder / "in", robot.xml, m.joint_names, 0.01 * np.arange(N), q,
                              v, np.full((N, m.nv), np.nan))
    replay(folder / "in", folder / "out", outputs=("end_effector", "center_of_mass"),
           end_effector_frame=LINK, acceleration="zero", progress=False, plots=False)
    return robot, q, v, folder / "out"


def test_end_effector_messages_equal_pinocchio(replayed):
    robot, q, v, out = replayed
    pin, pm, pd = robot.pin, robot.pm, robot.pd
    messages = read(out, "/rbd_dynamics/end_effector")
    assert len(messages) == N
    frame = pm.getFrameId(LINK, pin.BODY)
    for k, msg in enumerate(messages):
        assert msg.link == LINK and msg.header.frame_id == "base_link", msg.header.frame_id
        qp, vp = robot.q_to_pin(q[k]), robot.v_to_pin(v[k])
        pin.framesForwardKinematics(pm, pd, qp)
        p = msg.pose.position
        assert_close([p.x, p.y, p.z], pd.oMf[frame].translation, 1e-9, f"position {k}")
        o = msg.pose.orientation
        R = pin.Quaternion(o.w, o.x, o.y, o.z).toRotationMatrix()
        assert_close(R, pd.oMf[frame].rotation, 1e-9, f"orientation {k}")
        J = np.asarray(pin.computeFrameJacobian(pm, pd, qp, frame, pin.LOCAL_WORLD_ALIGNED))
        t = msg.twist
        assert_close([t.linear.x, t.linear.y, t.linear.z, t.angular.x, t.angular.y,
                      t.angular.z], J @ vp, 1e-9, f"twist {k}")
        Minv = np.asarray(pin.computeMinverse(pm, pd, qp))
        Minv = np.triu(Minv) + np.triu(Minv, 1).T
        inverse = J @ Minv @ J.T
        assert msg.inertia_defined and msg.translational_inertia_defined
        assert_close(np.reshape(msg.inertia, (6, 6)), np.linalg.inv(inverse), 1e-8, f"Λ {k}")
        assert_close(np.reshape(msg.translational_inertia, (3, 3)),
                     np.linalg.inv(inverse[:3, :3]), 1e-8, f"Λ_t {k}")
        assert list(msg.effective_mass_defined) == [True] * 3
        assert_close(msg.effective_mass, 1.0 / np.diag(inverse[:3, :3]), 1e-8, f"m_u {k}")


def test_center_of_mass_messages_equal_pinocchio(replayed):
    robot, q, v, out = replayed
    messages = read(out, "/rbd_dynamics/center_of_mass")
    assert len(messages) == N
    for k, msg in enumerate(messages):
        assert msg.header.frame_id == "base_link"
        com = robot.pin.centerOfMass(robot.pm, robot.pd, robot.q_to_pin(q[k]))
        assert_close([msg.point.x, msg.point.y, msg.point.z], com, 1e-9, f"com {k}")


def test_missing_arguments_are_refused(replayed, tmp_path):
    out = replayed[3]
    source = out.parent / "in"
    with pytest.raises(ReplayError, match="end_effector needs --end-effector-frame"):
        replay(source, tmp_path / "a", outputs=("end_effector",), progress=False, plots=False)
    with pytest.raises(ReplayError, match="centroidal_momentum needs --floating-base"):
        replay(source, tmp_path / "b", outputs=("centroidal_momentum",), progress=False,
               plots=False)
