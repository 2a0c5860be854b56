"""
rbd_ros.contact.measured_wrenches (wrenches as fext), payloads on fixed-joint links, vs Pinocchio.

The Pinocchio side is built independently (``pinocchio_oracles.pin_fext``): a wrench in a
link's frame is moved to its parent joint with the frame's placement
(``pin.Frame.placement.act``), one in the world frame with the joint's world placement after
``pin.forwardKinematics`` (``oMi.actInv``).
"""
import numpy as np
import pytest

import rbd_ros
from helpers import assert_close
from oracle import Robot
from pinocchio_oracles import pin_fext
from rbd_ros.contact import measured_wrenches as wrench
from rbd_ros.model.model import link_table

ROBOTS = ["arm7", "quadruped", "panda", "talos"]


def fixed_links(model):
    """Return the links welded to a body by fixed joints (not a body's own link)."""
    return [name for name, (body, _, _) in model.link_frames.items()
            if body >= 0 and name not in model.body_names]


def some_wrenches(model, seed):
    """Wrenches on the last body, a fixed-joint link (when there is one), both frames."""
    rng = np.random.default_rng(seed)
    links = [model.body_names[-1], model.body_names[len(model.body_names) // 2]]
    links += fixed_links(model)[:2]
    return [(link, frame, rng.normal(scale=5.0, size=6))
            for link in links for frame in wrench.FRAMES]


@pytest.mark.pinocchio
@pytest.mark.parametrize("name", ROBOTS)
def test_wrenches_match_pinocchio_rnea_and_aba(pin, name):
    robot = Robot(name) if name in ("arm7", "quadruped") else _erd(name)
    m = robot.model
    if name in ("arm7", "quadruped", "talos"):
        assert fixed_links(m), "the test needs a robot with fixed-joint links"
    for seed in range(3):
        q, v, a, tau, _ = robot.random_state(seed)
        ws = some_wrenches(m, seed)
        fext = wrench.fext(m, q, ws)
        qp, vp = robot.q_to_pin(q), robot.v_to_pin(v)
        fp = pin_fext(robot, qp, ws)
        expected = robot.v_from_pin(pin.rnea(robot.pm, robot.pd, qp, vp, robot.v_to_pin(a), fp))
        assert_close(rbd_ros.rnea(m, q, v, a, fext), expected, 1e-10, "rnea with wrenches")
        expected = robot.v_from_pin(pin.aba(robot.pm, robot.pd, qp, vp, robot.v_to_pin(tau),
                                            fp))
        assert_close(rbd_ros.aba(m, q, v, tau, fext), expected, 1e-9, "aba with wrenches")
        # the wrenches change the torques (the test is not vacuous)
        assert not np.allclose(rbd_ros.rnea(m, q, v, a, fext), rbd_ros.rnea(m, q, v, a))


def _erd(name):
    from helpers import get_robot
    get_robot(name)                        # skips without example-robot-data
    return Robot(name)


@pytest.mark.pinocchio
@pytest.mark.parametrize("name", ["quadruped", "talos"])
def test_body_pose_matches_pinocchio(pin, name):
    robot = Robot(name) if name == "quadruped" else _erd(name)
    m = robot.model
    q = robot.random_state(4)[0]
    pin.forwardKinematics(robot.pm, robot.pd, robot.q_to_pin(q))
    for body in range(m.nbodies):
        R, p = wrench.body_pose(m, q, body)
        oM = robot.pd.oMi[robot.body_joint[body]]
        assert_close(R, oM.rotation, 1e-12, f"rotation of body {body}")
        assert_close(p, oM.translation, 1e-12, f"position of body {body}")


def test_wrench_identities():
    """A pure force through a body's origin in the world frame; the world-welded link; sums."""
    m = rbd_ros.load_model(rbd_ros.robots.path("rbd_arm7"))
    q = m.random_configuration(1)
    body = m.nbodies - 1
    R, p = wrench.body_pose(m, q, body)
    f_world = np.array([1.0, -2.0, 3.0])
    # a force through the body's origin: the world-frame wrench has torque p × f
    w = np.concatenate([f_world, np.cross(p, f_world)])
    b, f_body = wrench.to_body(m, q, m.body_names[body], "world", w)
    assert b == body
    assert_close(f_body, np.concatenate([R.T @ f_world, np.zeros(3)]), 1e-12, "force")
    # link frame of the body itself: unchanged
    assert_close(wrench.to_body(m, q, m.body_names[body], "link", w)[1], w, 0, "link frame")
    # the root link of a fixed base is welded to the world: nothing
    root = next(n for n, (bb, _, _) in m.link_frames.items() if bb < 0)
    assert not wrench.fext(m, q, [(root, "world", w)]).any()
    # two wrenches on one body add
    both = wrench.fext(m, q, [(m.body_names[body], "link", w)] * 2)
    assert_close(both[body], 2 * w, 1e-15, "sum")


def test_wrench_refusals():
    m = rbd_ros.load_model(rbd_ros.robots.path("rbd_arm7"))
    q = m.neutral()
    link = m.body_names[-1]
    for args, words in (((q, "no_link", "link", np.zeros(6)), "no link"),
                        ((q, link, "tool0", np.zeros(6)), "frame must be one of"),
                        ((q, link, "link", np.zeros(5)), "six finite"),
                        ((q, link, "link", [0, 0, np.nan, 0, 0, 0]), "six finite")):
        with pytest.raises(ValueError, match=words):
            wrench.to_body(m, *args)


def test_fext_refuses_bad_configurations_and_tables():
    """Nothing is read out of bounds (the kernels have no bounds checks): sizes are refused."""
    m = rbd_ros.load_model(rbd_ros.robots.path("rbd_arm7"))
    q = m.neutral()
    one = [("link7", "world", np.ones(6))]
    for bad_q in (q[:3], np.r_[q, 0.0], np.full(m.nq, np.nan), np.full(m.nq, np.inf)):
        with pytest.raises(ValueError, match="q must be 7 finite numbers"):
            wrench.fext(m, bad_q, one)
        with pytest.raises(ValueError, match="q must be"):
            wrench.body_pose(m, bad_q, 3)
    for bad_body in (1.5, "1", None, m.nbodies, -1):     # int() would have taken 1.5 and "1"
        with pytest.raises(ValueError, match="body"):
            wrench.body_pose(m, q, bad_body)
    bodies, placements = link_table(m, ["link7"])
    frames, values, out = np.array([wrench.WORLD]), np.ones((1, 6)), np.zeros((m.nbodies, 6))
    assert np.isfinite(wrench.fext_into(m, q, bodies, placements, frames, values, out)).all()
    for bad in ({"bodies": np.array([m.nbodies])}, {"bodies": np.array([-2])},
                {"frames": np.array([2])}, {"frames": np.array([0, 1])},
                {"placements": np.zeros((2, 12))}, {"values": np.ones((2, 6))},
                {"out": np.zeros((m.nbodies - 1, 6))}):
        args = {"bodies": bodies, "placements": placements, "frames": frames,
                "values": values, "out": out, **bad}
        with pytest.raises(ValueError, match="tables do not fit"):
            wrench.fext_into(m, q, **args)


@pytest.mark.pinocchio
@pytest.mark.parametrize("name", ["arm7", "quadruped"])
def test_payload_on_fixed_joint_link_matches_pinocchio(pin, name):
    robot = Robot(name)                    # our own copy: its Pinocchio model is changed here
    m = robot.model
    link = fixed_links(m)[0]
    mass, com = 1.3, np.array([0.02, -0.01, 0.05])
    rot = np.diag([0.01, 0.02, 0.015])
    m2 = m.with_payload(link, rbd_ros.model.inertia.compact(mass, com, rot))
    f = robot.pm.frames[robot.pm.getFrameId(link, pin.BODY)]
    jid = f.parentJoint
    robot.pm.inertias[jid] = robot.pm.inertias[jid] + f.placement.act(pin.Inertia(mass, com,
                                                                                  rot))
    pd = robot.pm.createData()
    q, v, a, _, _ = robot.random_state(2)
    qp = robot.q_to_pin(q)
    expected = pin.rnea(robot.pm, pd, qp, robot.v_to_pin(v), robot.v_to_pin(a))
    assert_close(rbd_ros.rnea(m2, q, v, a), robot.v_from_pin(expected), 1e-10, "rnea")
    assert not np.allclose(rbd_ros.rnea(m2, q, v, a), rbd_ros.rnea(m, q, v, a))


def test_payload_on_world_welded_link_changes_nothing():
    m = rbd_ros.load_model(rbd_ros.robots.path("rbd_arm7"))
    root = next(n for n, (b, _, _) in m.link_frames.items() if b < 0)
    m2 = m.with_payload(root, rbd_ros.model.inertia.compact(2.0, np.zeros(3), np.eye(3) * 0.1))
    q, v = m.random_configuration(0), np.ones(m.nv)
    assert_close(rbd_ros.rnea(m2, q, v, v), rbd_ros.rnea(m, q, v, v), 0, "rnea")
