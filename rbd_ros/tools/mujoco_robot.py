"""
The robot of a URDF in MuJoCo, for ``rbd_sim``: no ROS here, ``mujoco`` imported when used.

MuJoCo reads a URDF itself (``MjSpec.from_string``); what is added or taken away first
(:func:`mujoco_urdf`):

* a ``<mujoco><compiler>`` element: visuals discarded, static bodies not fused, inertias
  not rebalanced, mesh paths kept as written (each resolved here);
* ``<visual>`` elements (the dynamics need only the inertials), and every ``<collision>``
  whose mesh file cannot be found (``package://`` and ``file://`` are resolved against the
  URDF's folder), each dropped with a note.

What MuJoCo keeps of the URDF: the inertials, the joint limits (as joint ranges) and the
joints' ``<dynamics damping friction>`` (as damping and dry friction). Contacts are off
unless asked for (the robot alone in the world: links would touch each other).
The joint torques are applied as generalized forces (``qfrc_applied``), bounded by the URDF's
effort limits; the integrator is ``implicitfast`` (damping integrated implicitly).
"""
import os
import xml.etree.ElementTree as ET

import numpy as np

COMPILER = ('<compiler discardvisual="true" fusestatic="false" balanceinertia="false" '
            'strippath="false"/>')


def mujoco_urdf(text, folder="."):
    """
    Return (URDF text MuJoCo can load, notes): visuals and unfound meshes removed.

    ``folder``: where relative (and ``package://``) mesh paths are looked for.
    """
    root = ET.fromstring(text)
    notes = []
    for link in root.iter("link"):
        for visual in link.findall("visual"):
            link.remove(visual)
        for collision in link.findall("collision"):
            mesh = collision.find("geometry/mesh")
            if mesh is None:
                continue
            path = _mesh_path(mesh.get("filename", ""), folder)
            if path is None:
                notes.append(f"link {link.get('name')!r}: collision mesh "
                             f"{mesh.get('filename', '')[:120]!r} not found, dropped")
                link.remove(collision)
            else:
                mesh.set("filename", path)
    for old in root.findall("mujoco"):
        root.remove(old)
    root.insert(0, ET.fromstring(f"<mujoco>{COMPILER}</mujoco>"))
    return ET.tostring(root, encoding="unicode"), notes


def _mesh_path(filename, folder):
    """Return the absolute path of a mesh ``filename`` found on disk, or None."""
    for prefix in ("package://", "file://"):
        if filename.startswith(prefix):
            filename = filename[len(prefix):]
    candidates = [filename] if os.path.isabs(filename) else [
        os.path.join(folder, filename), os.path.join(folder, *filename.split("/")[1:])]
    for path in candidates:
        if path and os.path.isfile(path):
            return os.path.abspath(path)
    return None


class MujocoRobot:
    """
    A URDF's robot in MuJoCo, stepped with joint torques (``mujoco`` imported here).

    ``joint_names``: its movable joints in the URDF's order; ``effort_limit``: per joint (inf:
    none), from the URDF; ``notes``: what was dropped on loading.
    """

    def __init__(self, text, folder=".", timestep=0.001, contacts=False):
        import mujoco
        self.mj = mujoco
        xml, self.notes = mujoco_urdf(text, folder)
        self.m = m = mujoco.MjSpec.from_string(xml).compile()
        m.opt.timestep = timestep
        m.opt.integrator = mujoco.mjtIntegrator.mjINT_IMPLICITFAST
        if not contacts:
            m.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_CONTACT
        self.d = mujoco.MjData(m)
        kinds = {int(mujoco.mjtJoint.mjJNT_HINGE), int(mujoco.mjtJoint.mjJNT_SLIDE)}
        joints = [m.joint(k) for k in range(m.njnt) if int(m.jnt_type[k]) in kinds]
        self.joint_names = [j.name for j in joints]
        self.qadr = np.array([j.qposadr[0] for j in joints], np.intp)
        self.dadr = np.array([j.dofadr[0] for j in joints], np.intp)
        self.effort_limit = _effort_limits(text, self.joint_names)
        self.applied = np.zeros(len(joints))
        self.M = np.zeros((m.nv, m.nv))

    @property
    def time(self):
        return float(self.d.time)

    def set_state(self, q, v=None):
        """Put the joints at ``q`` (joint order) with velocity ``v`` (default 0)."""
        self.d.qpos[self.qadr] = q
        self.d.qvel[:] = 0.0
        if v is not None:
            self.d.qvel[self.dadr] = v
        self.mj.mj_forward(self.m, self.d)

    def positions(self):
        return self.d.qpos[self.qadr].copy()

    def velocities(self):
        return self.d.qvel[self.dadr].copy()

    def step(self, tau):
        """One time step with the joint torques ``tau`` (bounded by the effort limits)."""
        np.clip(tau, -self.effort_limit, self.effort_limit, out=self.applied)
        self.d.qfrc_applied[:] = 0.0
        self.d.qfrc_applied[self.dadr] = self.applied
        self.mj.mj_step(self.m, self.d)

    def mass_matrix(self, q):
        """Return MuJoCo's joint-space inertia matrix at ``q`` (mj_fullM), in joint order."""
        self.set_state(q)
        self.mj.mj_fullM(self.m, self.d, self.M)
        return self.M[np.ix_(self.dadr, self.dadr)].copy()

    def damping(self):
        """Return the joints' damping as MuJoCo has it (N·m·s/rad)."""
        return self.m.dof_damping[self.dadr].copy()


def _effort_limits(text, names):
    """Return the URDF's effort limit of each joint of ``names`` (inf: none, or 0)."""
    limits = {}
    for joint in ET.fromstring(text).iter("joint"):
        limit = joint.find("limit")
        try:
            value = float(limit.get("effort", "inf")) if limit is not None else np.inf
        except ValueError:
            value = np.inf
        limits[joint.get("name")] = value if value > 0 else np.inf
    return np.array([limits.get(n, np.inf) for n in names])
