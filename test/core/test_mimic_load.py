"""
Loading mimic joints: the three options, what is ignored, what is refused, and the coupling.

The coupling is checked against the XML read here (``mimic_oracle.coupling_from_xml``), and
the coupled model's tree against the model that loads every joint independently.
"""
import numpy as np
import pytest

import rbd_ros
from mimic_oracle import HAND, WELDED, coupling_from_xml, hand_urdf
from oracle import strip_mimic


def _pair(tag, kind="revolute", leader_kind="revolute"):
    """Two joints, j2 carrying ``tag`` (a <mimic> element or '')."""
    link = ('<link name="{}"><inertial><mass value="1"/><inertia ixx="0.01" ixy="0" ixz="0" '
            'iyy="0.01" iyz="0" izz="0.01"/></inertial></link>')
    limit = '<limit lower="-1" upper="1" effort="1" velocity="1"/>'
    return (f'<robot name="r"><link name="base"/>{link.format("l1")}{link.format("l2")}'
            f'<joint name="j1" type="{leader_kind}"><parent link="base"/><child link="l1"/>'
            f'<axis xyz="0 0 1"/>{limit}</joint>'
            f'<joint name="j2" type="{kind}"><parent link="l1"/><child link="l2"/>'
            f'<origin xyz="0.1 0 0"/><axis xyz="0 1 0"/>{limit}{tag}</joint></robot>')


def test_default_is_coupled_independent_and_error_are_kept():
    text = hand_urdf(HAND)
    coupled = rbd_ros.load_model(text)
    assert coupled.coupling is not None
    independent = rbd_ros.load_model(text, mimic="independent")
    assert independent.coupling is None and independent.nv == coupled.nv_full
    stripped = rbd_ros.load_model(strip_mimic(text))
    assert independent.joint_names == stripped.joint_names
    np.testing.assert_array_equal(independent.packed, stripped.packed)
    # the coupled model's tree is the independent one; its dofs are the independent joints
    np.testing.assert_array_equal(coupled.packed, independent.packed)
    assert coupled.coupling.joint_names == independent.joint_names
    with pytest.raises(rbd_ros.URDFError, match="'j4'.*mimic='error'"):
        rbd_ros.load_model(text, mimic="error")
    with pytest.raises(ValueError, match="'coupled', 'independent', 'error'"):
        rbd_ros.load_model(text, mimic="ignore")


@pytest.mark.parametrize("floating", [False, True])
def test_coupling_matrix_is_the_urdfs(floating):
    """G has one entry per full dof: the resolved multiplier, in its leader's column."""
    text = hand_urdf(HAND)
    m = rbd_ros.load_model(text, floating_base=floating)
    followers, _ = coupling_from_xml(text)
    c = m.coupling
    base = 6 if floating else 0
    expected = np.zeros((m.nv_full, m.nv))
    expected[:base, :base] = np.eye(base)
    for k, name in enumerate(c.joint_names):
        leader, multiplier, _ = followers.get(name, (name, 1.0, 0.0))
        expected[base + k, base + m.joint_names.index(leader)] = multiplier
    np.testing.assert_allclose(c.G, expected, rtol=1e-15, atol=0)
    q = m.random_configuration(0)
    full = c.expand(q)
    for k, name in enumerate(c.joint_names):
        leader, multiplier, offset = followers.get(name, (name, 1.0, 0.0))
        lead = q[base + (1 if floating else 0) + m.joint_names.index(leader)]
        assert full[(7 if floating else 0) + k] == pytest.approx(multiplier * lead + offset,
                                                                 rel=1e-15, abs=1e-15)


def test_mimic_tags_on_fixed_joints_are_ignored():
    fixed = _pair('<mimic joint="j1" multiplier="2"/>', kind="fixed")
    for option in ("coupled", "independent", "error"):
        m = rbd_ros.load_model(fixed, mimic=option)
        assert m.joint_names == ("j1",) and m.coupling is None


# the reader refuses a NaN/inf attribute before the coupling sees it
NOT_FINITE = "must be finite|NaN and inf are not allowed"


@pytest.mark.parametrize("tag,kind,leader_kind,words", [
    ('<mimic joint="j9"/>', "revolute", "revolute", "mimics 'j9', which is not a joint"),
    ('<mimic joint="j1"/>', "revolute", "fixed", "mimics the fixed joint 'j1'"),
    ('<mimic joint="j1" multiplier="nan"/>', "revolute", "revolute", NOT_FINITE),
    ('<mimic joint="j1" offset="inf"/>', "prismatic", "revolute", NOT_FINITE),
    ('<mimic joint="j2"/>', "revolute", "revolute", "cycle: j2 -> j2"),
])
def test_bad_mimic_joints_are_refused(tag, kind, leader_kind, words):
    with pytest.raises(rbd_ros.URDFError, match=words):
        rbd_ros.load_model(_pair(tag, kind, leader_kind))


def test_a_cycle_of_followers_is_refused():
    tree = list(HAND)
    tree[0] = ("j1", "revolute", "base", (0, 0, 1), ("j8", 1.0, 0.0))   # j8 follows j1
    with pytest.raises(rbd_ros.URDFError, match="cycle: j1 -> j8 -> j1"):
        rbd_ros.load_model(hand_urdf(tuple(tree)))


def test_defaults_multiplier_one_offset_zero_and_a_prismatic_follower():
    m = rbd_ros.load_model(_pair('<mimic joint="j1"/>', kind="prismatic"))
    assert m.joint_names == ("j1",) and dict(m.coupling.followers) == {"j2": ("j1", 1.0, 0.0)}


def test_welded_twin_has_the_same_mass_and_the_independent_dofs():
    """The benchmark's uncoupled twin: followers welded at zero, same bodies merged."""
    coupled = rbd_ros.load_model(hand_urdf(HAND))
    welded = rbd_ros.load_model(hand_urdf(WELDED))
    assert welded.joint_names == coupled.joint_names and welded.coupling is None
    assert welded.inertia[:, 0].sum() == pytest.approx(coupled.inertia[:, 0].sum(), rel=1e-14)
