"""URDF loading: errors, XML strings, joint bookkeeping and fixed-joint merging."""
import os
import pathlib
import xml.etree.ElementTree as ET

import numpy as np
import pytest

import rbd_ros
from helpers import (BAD_DIR, ERD, EXAMPLE_ROBOT_DATA_ROBOTS, ROBOTS, URDF_DIR, assert_close,
                     load_quietly, missing, robot_path, strip_mimic)
from rbd_ros.model import inertia as rin

BAD = {
    "malformed": "malformed",
    "two_roots": "root",
    "loop": "loop",
    "planar": "planar",
    "floating_joint": "floating",
    "mimic": "mimic",
    "negative_mass": "negative mass",
    "not_positive_inertia": "positive",
    "no_links": "no <link>",
}


@pytest.mark.parametrize("floating", [False, True])
@pytest.mark.parametrize("name,word", sorted(BAD.items()))
def test_bad_urdf_raises(name, word, floating):
    path = os.path.join(BAD_DIR, name + ".urdf")
    with pytest.raises(rbd_ros.URDFError) as info:
        rbd_ros.load_model(path, floating_base=floating)
    assert word in str(info.value).lower(), str(info.value)
    assert isinstance(info.value, ValueError)
    # the same from the XML text
    with open(path, encoding="utf-8") as f:
        text = f.read()
    with pytest.raises(rbd_ros.URDFError) as info:
        rbd_ros.load_model(text, floating_base=floating)
    assert word in str(info.value).lower(), str(info.value)


# refused only with strict_inertia=True (loaded with a warning by default)
STRICT = {"bad_inertia": "triangle"}


@pytest.mark.parametrize("name,word", sorted(STRICT.items()))
def test_strict_bad_urdf_raises(name, word):
    path = os.path.join(BAD_DIR, name + ".urdf")
    with pytest.raises(rbd_ros.URDFError, match=word):
        rbd_ros.load_model(path, strict_inertia=True)
    with pytest.warns(UserWarning, match=word):
        rbd_ros.load_model(path)


def test_bad_files_are_all_covered():
    names = {f[:-5] for f in os.listdir(BAD_DIR) if f.endswith(".urdf")}
    assert names == set(BAD) | set(STRICT)


def test_urdf_error_is_value_error():
    assert issubclass(rbd_ros.URDFError, ValueError)


@pytest.mark.parametrize("bad", [os.path.join(URDF_DIR, "does_not_exist.urdf"), "", 42, None,
                                 3.5, ["<robot/>"]])
def test_bad_sources(bad):
    with pytest.raises(rbd_ros.URDFError):
        rbd_ros.load_model(bad)


def test_unknown_link_in_joint():
    xml = ('<robot name="r"><link name="a"/><link name="b"/>'
           '<joint name="j" type="revolute"><parent link="a"/><child link="zzz"/>'
           '<axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="1" velocity="1"/></joint>'
           '</robot>')
    with pytest.raises(rbd_ros.URDFError, match="zzz"):
        rbd_ros.load_model(xml)


def test_zero_axis_rejected():
    xml = ('<robot name="r"><link name="a"/><link name="b"><inertial><mass value="1"/>'
           '<inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial></link>'
           '<joint name="j" type="revolute"><parent link="a"/><child link="b"/>'
           '<axis xyz="0 0 0"/><limit lower="-1" upper="1" effort="1" velocity="1"/></joint>'
           '</robot>')
    with pytest.raises(rbd_ros.URDFError, match="axis"):
        rbd_ros.load_model(xml)


def _same_model(m1, m2):
    assert (m1.nq, m1.nv, m1.nbodies) == (m2.nq, m2.nv, m2.nbodies)
    assert m1.joint_names == m2.joint_names
    assert m1.body_names == m2.body_names
    np.testing.assert_array_equal(m1.packed, m2.packed)
    for attr in ("lower", "upper", "velocity_limit", "effort_limit", "parent", "joint_type"):
        np.testing.assert_array_equal(getattr(m1, attr), getattr(m2, attr), err_msg=attr)


@pytest.mark.parametrize("name", ["pendulum", "branched", "prismatic", "arm7", "quadruped",
                                  "ur5", "branched_floating"])
def test_xml_string_equals_path(name):
    path = robot_path(name)
    floating = ROBOTS[name][1]
    from_path = rbd_ros.load_model(path, floating_base=floating)
    with open(path, encoding="utf-8") as f:
        text = f.read()
    _same_model(from_path, rbd_ros.load_model(text, floating_base=floating))
    _same_model(from_path, rbd_ros.load_model(text.encode("utf-8"), floating_base=floating))
    _same_model(from_path, rbd_ros.load_model(pathlib.Path(path), floating_base=floating))


def _pin_movable_joints(pm):
    """Map name -> JointModel of Pinocchio's 1-dof joints."""
    return {pm.names[j]: pm.joints[j] for j in range(1, pm.njoints) if pm.joints[j].nv == 1}


@pytest.mark.pinocchio
def test_sizes_and_joint_names_match_pinocchio(robot):
    m, pm = robot.model, robot.pm
    pin_joints = _pin_movable_joints(pm)
    assert set(m.joint_names) == set(pin_joints)
    assert len(m.joint_names) == len(set(m.joint_names))
    assert m.nv == pm.nv
    continuous = sum(1 for j in pin_joints.values() if j.nq == 2)
    assert m.nq == pm.nq - continuous
    assert m.nq == m.nv + (1 if robot.floating else 0)
    assert m.floating_base == robot.floating
    assert m.nbodies == len(m.body_names) == len(m.joint_names) + (1 if robot.floating else 0)
    assert m.neutral().shape == (m.nq,)


@pytest.mark.pinocchio
def test_body_inertias_match_pinocchio(robot):
    """
    Each body's merged inertia (fixed children lumped in) equals Pinocchio's.

    In the joint frame: a direct check of fixed-joint merging.
    """
    m, pm = robot.model, robot.pm
    theta = m.inertial_parameters()
    for i, jid in enumerate(robot.body_joint):
        ref = pm.inertias[jid]
        assert_close(theta[i], ref.toDynamicParameters(), 1e-10, f"body {m.body_names[i]}")
        assert_close(rin.to_matrix(m.inertia[i]), ref.matrix(), 1e-10, m.body_names[i])


@pytest.mark.pinocchio
def test_joint_limits_match_pinocchio(robot):
    m, pm = robot.model, robot.pm
    pin_joints = _pin_movable_joints(pm)
    off = m.nv_base
    for k, name in enumerate(m.joint_names):
        j = pin_joints[name]
        iv = j.idx_v
        assert m.velocity_limit[k] == pm.velocityLimit[iv], name
        assert m.effort_limit[k] == pm.effortLimit[iv], name
        if j.nq == 2:   # continuous
            assert m.lower[k] == -np.inf and m.upper[k] == np.inf, name
        else:
            assert m.lower[k] == pm.lowerPositionLimit[j.idx_q], name
            assert m.upper[k] == pm.upperPositionLimit[j.idx_q], name
    assert off + len(m.joint_names) == m.nv


@pytest.mark.parametrize("seed", [0, 1])
def test_random_configuration_within_limits(robot, seed):
    m = robot.model
    q = m.random_configuration(seed)
    assert q.shape == (m.nq,)
    joints = q[m.nq_base:]
    lo = np.where(np.isfinite(m.lower), m.lower, -np.pi)
    hi = np.where(np.isfinite(m.upper), m.upper, np.pi)
    assert np.all(joints >= lo) and np.all(joints <= hi)
    if robot.floating:       # the free flyer's quaternion, the planar joint's (cos θ, sin θ)
        unit = q[3:7] if m.nq_base == 7 else q[2:4]
        assert np.linalg.norm(unit) == pytest.approx(1.0, abs=1e-12)
    np.testing.assert_array_equal(q, m.random_configuration(seed))   # seeded: reproducible


def test_neutral(robot):
    m = robot.model
    q = m.neutral()
    expected = np.zeros(m.nq)
    if robot.floating:       # the identity quaternion's w (x, y, z, w); cos 0 of a planar base
        expected[6 if m.nq_base == 7 else 2] = 1.0
    np.testing.assert_array_equal(q, expected)


def _urdf_masses(text):
    """Read link name -> <mass value>, and the joints, with an independent XML parse."""
    root = ET.fromstring(text)
    masses = {}
    for link in root.findall("link"):
        mass = link.find("inertial/mass")
        masses[link.get("name")] = 0.0 if mass is None else float(mass.get("value"))
    joints = [(j.get("type"), j.find("parent").get("link"), j.find("child").get("link"))
              for j in root.findall("joint")]
    return masses, joints


def test_total_mass_after_fixed_joint_merging(robot):
    """
    Σ body masses = Σ URDF link masses, minus (fixed base) the links welded to the world.

    Those are the root and whatever hangs below it through fixed joints only.
    """
    masses, joints = _urdf_masses(robot.xml)
    children = {j[2] for j in joints}
    roots = [name for name in masses if name not in children]
    assert len(roots) == 1
    total = sum(masses.values())
    if not robot.floating:
        welded, frontier = set(), [roots[0]]
        while frontier:
            link = frontier.pop()
            welded.add(link)
            frontier += [c for t, p, c in joints if p == link and t == "fixed"]
        total -= sum(masses[name] for name in welded)
    theta = robot.model.inertial_parameters()
    assert theta.shape == (robot.model.nbodies, 10)
    assert float(np.sum(theta[:, 0])) == pytest.approx(total, rel=1e-12, abs=1e-12)
    assert total > 0


def test_branched_merging_by_hand():
    """branched.urdf: the base (2.5) + b_mount (0.4) lumped, then b3_link (0.6) + b_tip (0.1)."""
    m_fixed = rbd_ros.load_model(os.path.join(URDF_DIR, "branched.urdf"))
    m_float = rbd_ros.load_model(os.path.join(URDF_DIR, "branched.urdf"), floating_base=True)
    masses_fixed = dict(zip(m_fixed.body_names, m_fixed.inertial_parameters()[:, 0]))
    masses_float = dict(zip(m_float.body_names, m_float.inertial_parameters()[:, 0]))
    assert masses_float["base"] == pytest.approx(2.5 + 0.4)
    assert masses_fixed["b3_link"] == pytest.approx(0.6 + 0.1)
    assert masses_fixed["b2_link"] == 0.0
    assert "b_mount" not in masses_fixed and "a3_mount" not in masses_fixed
    assert set(m_fixed.joint_names) == {"a1", "a2", "a3", "a4_left", "a4_right", "b1", "b2",
                                        "b3"}


def test_parent_before_child(robot):
    m = robot.model
    assert np.all(m.parent < np.arange(m.nbodies))
    assert m.parent[0] == -1


def test_continuous_joint_takes_one_angle():
    """prismatic.urdf's "wrist" is continuous: one q entry, 2π-periodic dynamics."""
    m = rbd_ros.load_model(os.path.join(URDF_DIR, "prismatic.urdf"))
    assert m.nq == m.nv == 5
    k = m.joint_names.index("wrist")
    assert m.lower[k] == -np.inf and m.upper[k] == np.inf
    rng = np.random.default_rng(2)
    q, v, a = m.random_configuration(rng), rng.normal(size=5), rng.normal(size=5)
    q2 = q.copy()
    q2[k] += 2 * np.pi
    assert_close(rbd_ros.rnea(m, q2, v, a), rbd_ros.rnea(m, q, v, a), 1e-12, "2π")
    q3 = q.copy()
    q3[k] += 1.0
    assert np.max(np.abs(rbd_ros.rnea(m, q3, v, a) - rbd_ros.rnea(m, q, v, a))) > 1e-6


def test_unknown_tags_are_ignored():
    """Gazebo / transmission elements are not errors."""
    path = os.path.join(URDF_DIR, "pendulum.urdf")
    with open(path, encoding="utf-8") as f:
        text = f.read()
    extra = text.replace("</robot>", '<gazebo reference="pole"><mu1>0.2</mu1></gazebo>'
                         '<transmission name="t">'
                         '<type>transmission_interface/SimpleTransmission</type>'
                         '<joint name="pivot"><hardwareInterface>EffortJointInterface'
                         '</hardwareInterface></joint><actuator name="motor">'
                         '<mechanicalReduction>1</mechanicalReduction></actuator>'
                         '</transmission></robot>')
    _same_model(rbd_ros.load_model(path), rbd_ros.load_model(extra))


@pytest.mark.parametrize("name", EXAMPLE_ROBOT_DATA_ROBOTS)
def test_example_robot_data_loads_unmodified(name):
    """
    The example-robot-data files load as shipped, with the default options.

    Panda's finger joints are coupled (mimic="error" refuses them); talos's mimic tags are
    on fixed joints only, which couple nothing and load even with mimic="error".
    """
    path = robot_path(name)
    floating = ROBOTS[name][1]
    m = load_quietly(path, floating)
    assert m.nv > 0
    if name == "panda":
        assert m.coupling is not None
        with pytest.raises(rbd_ros.URDFError, match="mimic"):
            load_quietly(path, floating, mimic="error")
    else:
        assert m.coupling is None
        _same_model(load_quietly(path, floating, mimic="error"), m)


@pytest.mark.parametrize("name", ["panda", "talos"])
def test_mimic_independent_equals_stripping_mimic(name):
    path = robot_path(name)
    floating = ROBOTS[name][1]
    with open(path, encoding="utf-8") as f:
        text = f.read()
    assert "<mimic" in text
    _same_model(load_quietly(path, floating, mimic="independent"),
                load_quietly(strip_mimic(text), floating))


def test_mimic_independent_on_the_bad_mimic_file():
    m = rbd_ros.load_model(os.path.join(BAD_DIR, "mimic.urdf"), mimic="independent")
    assert m.joint_names == ("j1", "j2") and m.nv == 2


def test_bad_mimic_option():
    with pytest.raises(ValueError, match="mimic"):
        rbd_ros.load_model(os.path.join(URDF_DIR, "pendulum.urdf"), mimic="ignore")


def test_hyq_placeholder_inertia_is_kept_with_a_warning():
    """
    Hyq's placeholder inertia is kept, with a warning.

    hyq's base_link has the rank-one placeholder inertia 'every entry 1e-6'; it is tiny, so
    it is kept as given (like Pinocchio) with a warning naming the link.
    """
    path = robot_path("hyq")
    with pytest.warns(UserWarning, match="base_link"):
        m = rbd_ros.load_model(path, floating_base=True)
    i = m.body_names.index("trunk") if "trunk" in m.body_names else 0
    assert m.inertial_parameters()[i, 0] > 1.0


def test_large_invalid_inertia_is_still_an_error():
    """
    An inertia that is not positive semi-definite is refused, whatever its size.

    not_positive_inertia.urdf (moments of order 1 kg m²) must fail, and so must a tiny
    inertia with a negative mass.
    """
    with pytest.raises(rbd_ros.URDFError, match="positive semi-definite"):
        rbd_ros.load_model(os.path.join(BAD_DIR, "not_positive_inertia.urdf"))
    with open(os.path.join(BAD_DIR, "negative_mass.urdf"), encoding="utf-8") as f:
        text = f.read().replace('ixx="0.01"', 'ixx="1e-7"').replace('iyy="0.01"', 'iyy="1e-7"')
    with pytest.raises(rbd_ros.URDFError, match="negative mass"):
        rbd_ros.load_model(text.replace('izz="0.01"', 'izz="1e-7"'))


def test_example_robot_data_found():
    """example-robot-data is installed in CI; this guards against silently skipping it."""
    if ERD is None:
        missing("example-robot-data")        # a skip, or a failure where CI=true
    for name in EXAMPLE_ROBOT_DATA_ROBOTS:
        assert os.path.isfile(ROBOTS[name][0]), name


def test_talos_has_38_dofs():
    m = load_quietly(robot_path("talos"), True, mimic="independent")
    assert (m.nq, m.nv) == (39, 38)


def test_deep_chain_loads_without_recursion():
    """
    Check that a 3,000-link serial chain (deeper than Python's recursion limit) loads.

    Its dynamics satisfy ABA(q, v, RNEA(q, v, a)) = a.
    """
    n = 3000
    inertial = ('<inertial><mass value="1"/><inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" '
                'ixz="0" iyz="0"/></inertial>')
    links = "".join(f'<link name="l{i}">{inertial}</link>' for i in range(n + 1))
    joints = "".join(
        f'<joint name="j{i}" type="revolute"><parent link="l{i}"/><child link="l{i + 1}"/>'
        f'<origin xyz="0 0 0.1"/><axis xyz="0 {i % 2} {1 - i % 2}"/></joint>' for i in range(n))
    text = f'<robot name="chain">{links}{joints}</robot>'
    with pytest.raises(rbd_ros.DescriptionTooLarge, match="3001 links"):
        rbd_ros.load_model(text)                    # above the default limits ...
    model = rbd_ros.load_model(text, limits=rbd_ros.DescriptionLimits(
        max_links=n + 1, max_dofs=n))               # ... and loads when they are raised
    assert model.nv == n and model.joint_names[-1] == f"j{n - 1}"
    rng = np.random.default_rng(0)
    q, v, a = rng.uniform(-0.1, 0.1, (3, n))
    tau = rbd_ros.rnea(model, q, v, a)
    np.testing.assert_allclose(rbd_ros.aba(model, q, v, tau), a, rtol=0, atol=1e-6)
