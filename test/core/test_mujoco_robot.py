"""
rbd_sim's physics (``rbd_ros.tools.mujoco_robot``): MuJoCo's import of a URDF against ours.

The inertia matrix MuJoCo builds (mj_fullM) equals rbd_ros's CRBA at the same q, the URDF's
joint damping is kept, meshes that cannot be found are dropped with a note, commands are
bounded by the effort limits.
"""
import re

import numpy as np
import pytest

import rbd_ros
from helpers import require_module


@pytest.fixture(scope="module")
def mujoco_robot():
    require_module("mujoco", "MuJoCo (pip: mujoco)")
    from rbd_ros.tools import mujoco_robot
    return mujoco_robot


def arm7_text():
    with open(rbd_ros.robots.path("rbd_arm7"), encoding="utf-8") as f:
        return f.read()


def test_mujoco_inertia_matrix_equals_crba(mujoco_robot):
    text = arm7_text()
    model = rbd_ros.load_model(text)
    sim = mujoco_robot.MujocoRobot(text)
    assert sim.joint_names == list(model.joint_names)
    for seed in range(5):
        q = model.random_configuration(seed)
        M = rbd_ros.crba(model, q)
        np.testing.assert_allclose(sim.mass_matrix(q), M, rtol=1e-9, atol=1e-10)


def test_damping_kept_meshes_dropped_with_a_note(mujoco_robot, tmp_path):
    damping = {f"joint{k}": 0.1 * k for k in range(1, 8)}
    text = arm7_text()
    for name, d in damping.items():
        text = re.sub(rf'(<joint name="{name}" type="revolute">)',
                      rf'\1<dynamics damping="{d}" friction="0"/>', text)
    mesh = tmp_path / "found.stl"
    _write_box_stl(mesh)
    text = text.replace('<link name="link2">', '<link name="link2"><visual><geometry><mesh '
                        'filename="package://nowhere/visual.dae"/></geometry></visual>'
                        '<collision><geometry><mesh filename="package://nowhere/gone.stl"/>'
                        '</geometry></collision>', 1)
    text = text.replace('<link name="link3">', '<link name="link3"><collision><geometry><mesh '
                        'filename="found.stl"/></geometry></collision>', 1)
    sim = mujoco_robot.MujocoRobot(text, str(tmp_path))
    np.testing.assert_allclose(sim.damping(), [damping[n] for n in sim.joint_names])
    assert len(sim.notes) == 1 and "gone.stl" in sim.notes[0]
    model = rbd_ros.load_model(text)
    q = model.random_configuration(1)
    np.testing.assert_allclose(sim.mass_matrix(q), rbd_ros.crba(model, q), rtol=1e-9,
                               atol=1e-10)


def test_torques_bounded_by_the_effort_limits(mujoco_robot):
    text = arm7_text()
    model = rbd_ros.load_model(text)
    sim = mujoco_robot.MujocoRobot(text)
    sim.set_state(np.zeros(7))
    sim.step(np.full(7, 1e6))
    np.testing.assert_array_equal(sim.applied, model.effort_limit)


def test_a_step_follows_our_forward_dynamics(mujoco_robot):
    """From rest, one small step moves v by dt * ABA(q, 0, tau): the same dynamics."""
    text = arm7_text()
    model = rbd_ros.load_model(text)
    dt = 1e-5
    sim = mujoco_robot.MujocoRobot(text, timestep=dt)
    q = np.array([0.1, 0.4, -0.2, -1.2, 0.3, 1.4, 0.2])
    sim.set_state(q)
    tau = np.linspace(-2.0, 2.0, 7)
    sim.step(tau)
    qdd = rbd_ros.aba(model, q, np.zeros(7), tau)
    np.testing.assert_allclose(sim.velocities() / dt, qdd, rtol=1e-6, atol=1e-6)


def _write_box_stl(path):
    """Write a tetrahedron as binary STL (a mesh MuJoCo can load)."""
    import struct
    v = np.array([[0, 0, 0], [0.05, 0, 0], [0, 0.05, 0], [0, 0, 0.05]], np.float32)
    faces = [(0, 2, 1), (0, 1, 3), (0, 3, 2), (1, 2, 3)]
    data = b"\0" * 80 + struct.pack("<I", len(faces))
    for f in faces:
        data += struct.pack("<3f", 0, 0, 0) + v[list(f)].tobytes() + b"\0\0"
    path.write_bytes(data)
