"""The benchmark and test robot set, and the mapping of our states onto Pinocchio's.

Pinocchio is an oracle here, never a dependency of the package: this file is used by the
benchmarks and the tests only.
"""
import importlib.metadata
import os

import numpy as np

import rbd_ros
from rbd_ros import robots

HERE = os.path.dirname(os.path.abspath(__file__))
TEST_URDF = os.path.join(HERE, os.pardir, "test", "urdf")


def example_robot_data_dir():
    """The robots folder of the example-robot-data wheel, or None if it is not installed."""
    try:
        dist = importlib.metadata.distribution("example-robot-data")
    except importlib.metadata.PackageNotFoundError:
        return None
    path = str(dist.locate_file("cmeel.prefix/share/example-robot-data/robots"))
    return path if os.path.isdir(path) else None


# name -> (where, relative path, floating base). panda's fingers are mimic joints: they are
# loaded as independent joints, which is what Pinocchio does with them too.
ROBOTS = {
    "rbd_arm7": ("bundled", "rbd_arm7", False),
    "rbd_quadruped": ("bundled", "rbd_quadruped", True),
    "pendulum": ("test", "pendulum.urdf", False),
    "branched": ("test", "branched.urdf", False),
    "prismatic": ("test", "prismatic.urdf", False),
    "panda": ("erd", "panda_description/urdf/panda.urdf", False),
    "ur5": ("erd", "ur_description/urdf/ur5_robot.urdf", False),
    "hyq": ("erd", "hyq_description/robots/hyq_no_sensors.urdf", True),
    "talos": ("erd", "talos_data/robots/talos_reduced.urdf", True),
}


def urdf_path(name):
    where, rel, _ = ROBOTS[name]
    if where == "bundled":
        return robots.path(rel)
    if where == "test":
        return os.path.normpath(os.path.join(TEST_URDF, rel))
    base = example_robot_data_dir()
    if base is None:
        raise FileNotFoundError("example-robot-data is not installed (pip install .[test])")
    return os.path.join(base, rel)


class PinocchioPair:
    """Our model and Pinocchio's of the same URDF, with state conversion between them."""

    def __init__(self, name, floating=None):
        import pinocchio as pin
        self.pin = pin
        path = urdf_path(name)
        self.floating = ROBOTS[name][2] if floating is None else floating
        self.model = rbd_ros.load_model(path, floating_base=self.floating, mimic="independent")
        if self.floating:
            self.pmodel = pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer())
        else:
            self.pmodel = pin.buildModelFromUrdf(path)
        self.pdata = self.pmodel.createData()
        nbase_q, nbase_v = (7, 6) if self.floating else (0, 0)
        self.v_index = list(range(nbase_v))      # our v index k -> Pinocchio's v index
        self.q_index = []                        # (our q index, Pinocchio q index, is continuous)
        self.body_joint = [1] if self.floating else []   # our body -> Pinocchio joint id
        for k, joint in enumerate(self.model.joint_names):
            jid = self.pmodel.getJointId(joint)
            pj = self.pmodel.joints[jid]
            self.v_index.append(pj.idx_v)
            self.q_index.append((nbase_q + k, pj.idx_q, pj.nq == 2))
            self.body_joint.append(jid)
        self.v_index = np.array(self.v_index)

    def q(self, q):
        """Our configuration as Pinocchio's (continuous joints become cos, sin)."""
        qp = np.zeros(self.pmodel.nq)
        if self.floating:
            qp[:7] = q[:7]
        for ours, theirs, continuous in self.q_index:
            if continuous:
                qp[theirs:theirs + 2] = np.cos(q[ours]), np.sin(q[ours])
            else:
                qp[theirs] = q[ours]
        return qp

    def v(self, v):
        """A tangent vector (v, a, τ) as Pinocchio's."""
        vp = np.zeros(self.pmodel.nv)
        vp[self.v_index] = v
        return vp

    def v_from_pin(self, vp):
        return np.asarray(vp)[self.v_index]

    def matrix_from_pin(self, Mp):
        return np.asarray(Mp)[np.ix_(self.v_index, self.v_index)]

    def forces(self, fext):
        """Our (nbodies, 6) body forces as Pinocchio's per-joint list."""
        pin = self.pin
        out = [pin.Force.Zero() for _ in range(self.pmodel.njoints)]
        for body, jid in enumerate(self.body_joint):
            out[jid] = pin.Force(np.asarray(fext[body], np.float64))
        return out

    def random_state(self, rng):
        rng = np.random.default_rng(rng)
        nv = self.model.nv
        return (self.model.random_configuration(rng), rng.normal(size=nv), rng.normal(size=nv),
                rng.normal(size=nv))
