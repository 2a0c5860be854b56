"""
The robot set of the tests and benchmarks, and Pinocchio as an oracle.

Pinocchio is the reference implementation (a test and benchmark dependency, never a runtime
one). Its models order joints differently from ours and store a continuous joint as
(cos, sin), so :class:`Robot` maps our q / v / τ / f_ext to Pinocchio's layout and back by
joint name.
"""
import os
import re
import sys
import warnings

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

import rbd_ros  # noqa: E402
from rbd_ros.model.joints import KINDS  # noqa: E402

TEST_DIR = os.path.dirname(os.path.abspath(__file__))
URDF_DIR = os.path.join(TEST_DIR, "urdf")
BAD_DIR = os.path.join(URDF_DIR, "bad")
BUNDLED_DIR = os.path.join(ROOT, "rbd_ros", "robots")


def example_robot_data_dir():
    """Return the robots folder of the example-robot-data pip package (None if missing)."""
    try:
        from importlib.metadata import PackageNotFoundError, distribution
    except ImportError:  # pragma: no cover
        return None
    try:
        path = distribution("example-robot-data").locate_file(
            "cmeel.prefix/share/example-robot-data/robots")
    except PackageNotFoundError:
        return None
    path = os.fspath(path)
    return path if os.path.isdir(path) else None


ERD = example_robot_data_dir()


def _erd(rel):
    return None if ERD is None else os.path.join(ERD, rel)


# name -> (path, base): False a fixed base, True a free flyer added (load_model's floating_base),
# "planar" a planar root joint in the URDF. A None path: example-robot-data is not installed.
ROBOTS = {
    "pendulum": (os.path.join(URDF_DIR, "pendulum.urdf"), False),
    "branched": (os.path.join(URDF_DIR, "branched.urdf"), False),
    "prismatic": (os.path.join(URDF_DIR, "prismatic.urdf"), False),
    "arm7": (os.path.join(BUNDLED_DIR, "rbd_arm7.urdf"), False),
    "quadruped": (os.path.join(BUNDLED_DIR, "rbd_quadruped.urdf"), True),
    "panda": (_erd("panda_description/urdf/panda.urdf"), False),
    "ur5": (_erd("ur_description/urdf/ur5_robot.urdf"), False),
    "hyq": (_erd("hyq_description/robots/hyq_no_sensors.urdf"), True),
    "talos": (_erd("talos_data/robots/talos_reduced.urdf"), True),
    # held at its pelvis: three subtrees hang from the world (legs, torso with arms and head)
    "talos_fixed": (_erd("talos_data/robots/talos_reduced.urdf"), False),
    "arm7_floating": (os.path.join(BUNDLED_DIR, "rbd_arm7.urdf"), True),
    "branched_floating": (os.path.join(URDF_DIR, "branched.urdf"), True),
    "branched_planar": (os.path.join(URDF_DIR, "branched_planar.urdf"), "planar"),
}
EXAMPLE_ROBOT_DATA_ROBOTS = ("panda", "ur5", "hyq", "talos", "talos_fixed")
ROBOT_NAMES = tuple(ROBOTS)
FIXED_ROBOTS = tuple(n for n, (_, base) in ROBOTS.items() if base is False)
FLOATING_ROBOTS = tuple(n for n, (_, base) in ROBOTS.items() if base is True)


def has_mimic(text):
    return re.search(r"<mimic\b", text) is not None


def strip_mimic(text):
    """
    Return the URDF text without its <mimic> elements.

    An independent way to get what ``load_model(..., mimic="independent")`` and Pinocchio's
    default (mimic=False) build.
    """
    text = re.sub(r"<mimic\b[^>]*/>", "", text)
    return re.sub(r"<mimic\b[^>]*>.*?</mimic>", "", text, flags=re.S)


def load_quietly(source, floating_base=False, **kwargs):
    """rbd_ros.load_model, ignoring its UserWarning about placeholder inertias (hyq)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return rbd_ros.load_model(source, floating_base=floating_base, **kwargs)


def available(name):
    """Tell whether the robot's URDF is there (no for example-robot-data's, without it)."""
    path, _ = ROBOTS[name]
    return path is not None and os.path.isfile(path)


def rel_err(ours, ref):
    """max|ours - ref| / max(1, max|ref|)."""
    ours = np.asarray(ours, np.float64)
    ref = np.asarray(ref, np.float64)
    assert ours.shape == ref.shape, f"shape {ours.shape} != reference shape {ref.shape}"
    if ref.size == 0:
        return 0.0
    return float(np.max(np.abs(ours - ref)) / max(1.0, float(np.max(np.abs(ref)))))


def assert_close(ours, ref, tol, what=""):
    err = rel_err(ours, ref)
    assert np.all(np.isfinite(ours)), f"{what}: non-finite result {ours}"
    assert err <= tol, f"{what}: relative error {err:.3e} > {tol:.0e}\nours={ours}\nref={ref}"


class Robot:
    """Our model and Pinocchio's for one URDF, with conversions between their layouts."""

    def __init__(self, name, path=None, floating=None, **options):
        """Load the robot ``name`` of ROBOTS, or any URDF ``path``, with ``options``."""
        if path is None:
            if not available(name):
                raise FileNotFoundError(f"{name}: example-robot-data is not installed")
            path, floating = ROBOTS[name]
        self.name = name
        self.path = path
        self.add_free_flyer = floating is True    # load_model's floating_base
        with open(path, encoding="utf-8-sig") as f:
            self.xml = f.read()
        # panda and talos have mimic joints (gripper fingers): rbd_ros rejects them unless
        # asked to treat them as independent joints, which is what Pinocchio does by default
        self.mimic = "independent" if has_mimic(self.xml) else "error"
        self.model = load_quietly(path, self.add_free_flyer, **{"mimic": self.mimic, **options})
        # also by a URDF "floating" or "planar" root joint
        self.floating = self.model.floating_base
        self._pin = None

    # -- Pinocchio side (built lazily so that tests without Pinocchio still run) -----------
    def _build_pin(self):
        import pinocchio as pin
        if self.add_free_flyer:
            pm = pin.buildModelFromUrdf(self.path, pin.JointModelFreeFlyer())
        else:
            pm = pin.buildModelFromUrdf(self.path)
        m = self.model
        off_q, off_v = m.nq_base, m.nv_base
        # for each of our movable joints k: (pin idx_q, pin nq, pin idx_v)
        joints = []
        for name in m.joint_names:
            assert pm.existJointName(name), f"Pinocchio has no joint {name!r}"
            j = pm.joints[pm.getJointId(name)]
            assert j.nv == 1 and j.nq in (1, 2), (name, j.nq, j.nv)
            joints.append((j.idx_q, j.nq, j.idx_v))
        perm_v = np.empty(m.nv, np.int64)       # our v index -> pin v index
        if self.floating:
            root = pm.joints[1]
            assert (root.nq, root.nv) == (off_q, off_v), (root.shortname(), off_q, off_v)
            perm_v[:off_v] = root.idx_v + np.arange(off_v)
            self._root_q = root.idx_q
        for k, (_, _, iv) in enumerate(joints):
            perm_v[off_v + k] = iv
        assert sorted(perm_v) == list(range(pm.nv))
        # pin joint id of each of our bodies (body i carries the joint of body_names[i])
        body_joint = []
        for i in range(m.nbodies):
            if i == 0 and self.floating:
                body_joint.append(1)
            else:
                body_joint.append(pm.getJointId(m.joint_names[m.idx_v[i] - off_v]))
        self._pin = (pin, pm, pm.createData(), joints, perm_v, body_joint, off_q, off_v)

    @property
    def pin(self):
        if self._pin is None:
            self._build_pin()
        return self._pin[0]

    @property
    def pm(self):
        self.pin
        return self._pin[1]

    @property
    def pd(self):
        self.pin
        return self._pin[2]

    @property
    def perm_v(self):
        self.pin
        return self._pin[4]

    @property
    def body_joint(self):
        """Pinocchio joint id of each of our bodies."""
        self.pin
        return self._pin[5]

    def q_to_pin(self, q):
        self.pin
        pm, joints, off_q = self._pin[1], self._pin[3], self._pin[6]
        q = np.asarray(q, np.float64)
        qp = np.zeros(pm.nq)
        if self.floating:                 # the root's unit part normalized, as rbd_ros reads it
            base = np.array(q[:off_q])
            start, count, _ = KINDS[self.model.joint_type[0]].unit_part
            base[start:start + count] /= np.linalg.norm(base[start:start + count])
            qp[self._root_q:self._root_q + off_q] = base
        for k, (iq, nq, _) in enumerate(joints):
            angle = q[off_q + k]
            if nq == 2:
                qp[iq], qp[iq + 1] = np.cos(angle), np.sin(angle)
            else:
                qp[iq] = angle
        return qp

    def v_to_pin(self, v):
        """Our v (or a, τ) in Pinocchio's order."""
        v = np.asarray(v, np.float64)
        out = np.zeros(self.pm.nv)
        out[self.perm_v] = v
        return out

    def v_from_pin(self, vp):
        return np.asarray(vp, np.float64)[self.perm_v]

    def matrix_from_pin(self, Mp):
        Mp = np.asarray(Mp, np.float64)
        return Mp[np.ix_(self.perm_v, self.perm_v)]

    def fext_to_pin(self, fext):
        pin, pm = self.pin, self.pm
        forces = [pin.Force.Zero() for _ in range(pm.njoints)]
        for i, jid in enumerate(self.body_joint):
            forces[jid] = pin.Force(np.asarray(fext[i], np.float64))
        return forces

    # -- random states ------------------------------------------------------------------
    def random_state(self, seed):
        """(q, v, a, tau, fext) from a seeded generator."""
        rng = np.random.default_rng(seed)
        m = self.model
        q = m.random_configuration(rng)
        v = rng.normal(size=m.nv)
        a = rng.normal(size=m.nv)
        tau = rng.normal(scale=5.0, size=m.nv)
        fext = rng.normal(size=(m.nbodies, 6))
        return q, v, a, tau, fext
