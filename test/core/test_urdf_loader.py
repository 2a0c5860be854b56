"""
The URDF loader reads what the dynamics needs: tolerated content, refusals, inertias.

Each refusal has its own test (a URDFError whose message names the problem); each
tolerated construct is checked to give the same model as the plain document.
"""
import warnings

import numpy as np
import pytest

import rbd_ros
from helpers import assert_close

INERTIAL = ('<inertial><origin xyz="0 0 0.1"/><mass value="{m}"/><inertia ixx="{ixx}" '
            'iyy="{iyy}" izz="{izz}" ixy="{ixy}" ixz="0" iyz="0"/></inertial>')


def inertial(m=1.0, ixx=0.1, iyy=0.1, izz=0.1, ixy=0.0):
    """Return an <inertial> element."""
    return INERTIAL.format(m=m, ixx=ixx, iyy=iyy, izz=izz, ixy=ixy)


def link(name, body=None, extra=""):
    """Return a <link>; ``body`` its inertial (default: a 1 kg body; "" for none)."""
    return f'<link name="{name}">{inertial() if body is None else body}{extra}</link>'


def joint(name, parent, child, kind="revolute", origin='xyz="0 0 0.2"', axis="0 1 0",
          extra=""):
    """Return a <joint>."""
    return (f'<joint name="{name}" type="{kind}"><parent link="{parent}"/>'
            f'<child link="{child}"/><origin {origin}/><axis xyz="{axis}"/>'
            f'<limit lower="-1" upper="1" effort="10" velocity="2"/>{extra}</joint>')


def robot(*elements):
    """Return a <robot> document of the elements."""
    return '<robot name="r">' + "".join(elements) + "</robot>"


ARM = [link("base", ""), link("l1"), link("l2"), joint("j1", "base", "l1"),
       joint("j2", "l1", "l2")]


def same_model(a, b):
    """Check that two models are the same robot."""
    assert a.joint_names == b.joint_names and a.body_names == b.body_names
    np.testing.assert_array_equal(a.packed, b.packed)


def refused(text, *words, **options):
    """Check that loading ``text`` raises URDFError naming each of ``words``."""
    with pytest.raises(rbd_ros.URDFError) as info:
        rbd_ros.load_model(text, **options)
    message = str(info.value)
    for word in words:
        assert word in message, message
    assert len(message) < 600, "errors quote short excerpts only"
    return message


# -- tolerated ------------------------------------------------------------------------------
PLAIN = robot(*ARM)
VISUAL = ('<visual><geometry><box size="1 1 1"/><sphere radius="1"/></geometry>'
          '<material name="m"><texture/></material></visual>'
          '<collision><geometry><mesh/></geometry></collision>')
TOLERATED = {
    "bom": "\ufeff" + PLAIN,
    "blank line before the declaration": '\n  <?xml version="1.0"?>\n' + PLAIN,
    "comment before the declaration": '<!-- generated -->\n<?xml version="1.0" ?>' + PLAIN,
    "bom and declaration": '\ufeff<?xml version="1.0" encoding="UTF-8"?>' + PLAIN,
    # no declaration after them: a backtracking pattern would take 2^40 steps here
    "many comments and no declaration": "<!-- c -->\n" * 40 + PLAIN,
    "texture without filename, two shapes in a geometry": robot(
        link("base", ""), link("l1", None, VISUAL), link("l2"), *ARM[3:]),
    "material at the top level": robot('<material name="m"><texture/><color/></material>',
                                       *ARM),
    "ROS 1 transmission": robot(*ARM, '<transmission name="t"><type>x</type><joint name="j1">'
                                '<hardwareInterface>Effort</hardwareInterface></joint>'
                                '<actuator name="a"><mechanicalReduction>1'
                                '</mechanicalReduction></actuator></transmission>'),
    "gazebo and sensors": robot(*ARM, '<gazebo reference="l1"><sensor type="camera">'
                                '<camera/></sensor></gazebo><gazebo><plugin/></gazebo>'),
    "joint extras": robot(*ARM[:3], joint("j1", "base", "l1", extra='<dynamics damping="1"/>'
                                          '<safety_controller/><calibration rising="x"/>'),
                          ARM[4]),
    "namespaced xacro leftovers": robot('<xacro:property name="p" value="1"/>', *ARM),
}


@pytest.mark.parametrize("what", sorted(TOLERATED))
def test_tolerated_content_gives_the_plain_model(what):
    text = TOLERATED[what]
    same_model(rbd_ros.load_model(text), rbd_ros.load_model(PLAIN))
    same_model(rbd_ros.load_model(text.encode("utf-8")), rbd_ros.load_model(PLAIN))


def test_bom_and_declared_encoding_in_files(tmp_path):
    plain = rbd_ros.load_model(PLAIN)
    path = tmp_path / "bom.urdf"
    path.write_bytes(b"\xef\xbb\xbf\n<?xml version='1.0'?>" + PLAIN.encode())
    same_model(rbd_ros.load_model(str(path)), plain)
    latin = PLAIN.replace('name="r"', 'name="r\xe9"')
    path = tmp_path / "latin1.urdf"
    path.write_bytes(b'<?xml version="1.0" encoding="ISO-8859-1"?>' + latin.encode("latin-1"))
    assert rbd_ros.load_model(path).name == "r\xe9"


def test_massless_intermediate_link_is_fine():
    """A massless link between two joints, with a massive one below it: M is regular."""
    text = robot(link("base", ""), link("l1", ""), link("l2"), joint("j1", "base", "l1"),
                 joint("j2", "l1", "l2", axis="1 0 0"))
    m = rbd_ros.load_model(text)
    M = rbd_ros.crba(m, m.random_configuration(0))
    assert np.all(np.linalg.eigvalsh(M) > 0)


# -- refused: names, numbers, XML -----------------------------------------------------------
def test_duplicate_joint_names():
    refused(robot(*ARM[:3], joint("j", "base", "l1"), joint("j", "l1", "l2")),
            "joint name 'j'", "twice")


def test_duplicate_link_names():
    refused(robot(*ARM, link("l2")), "link name 'l2'", "twice")


@pytest.mark.parametrize("name", ["", "  "])
def test_empty_joint_name(name):
    refused(robot(*ARM[:4], joint(name, "l1", "l2")), "<joint>", "empty")


def test_empty_link_name():
    refused(robot(*ARM, '<link name=""/>'), "<link>", "empty")


def test_missing_link_name():
    refused(robot(*ARM, "<link/>"), "<link>", "missing")


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "1e400", "NaN"])
def test_non_finite_joint_origin(value):
    refused(robot(*ARM[:4], joint("j2", "l1", "l2", origin=f'xyz="0 {value} 0"')),
            "joint 'j2'", "origin xyz")


def test_non_finite_joint_rpy():
    """An infinite rpy was a bare 'math domain error'."""
    refused(robot(*ARM[:4], joint("j2", "l1", "l2", origin='rpy="0 0 inf"')), "joint 'j2'",
            "rpy", "inf")


def test_non_finite_axis():
    refused(robot(*ARM[:4], joint("j2", "l1", "l2", axis="0 nan 1")), "joint 'j2'", "axis",
            "NaN")


def test_axis_with_two_numbers():
    refused(robot(*ARM[:4], joint("j2", "l1", "l2", axis="0 1")), "joint 'j2'", "3 numbers")


def test_origin_that_is_not_a_number():
    refused(robot(*ARM[:4], joint("j2", "l1", "l2", origin='xyz="0 x 0"')), "joint 'j2'",
            "3 numbers")


@pytest.mark.parametrize("body", [inertial(m="nan"), inertial(m="inf"), inertial(ixx="inf"),
                                  inertial(ixy="nan"),
                                  inertial().replace('xyz="0 0 0.1"', 'xyz="nan 0 0"')])
def test_non_finite_inertial(body):
    refused(robot(link("base", ""), link("l1"), link("l2", body), *ARM[3:]), "link 'l2'")


def test_nan_joint_limit():
    text = robot(*ARM).replace('upper="1"', 'upper="nan"', 1)
    refused(text, "joint 'j1'", "limit", "NaN")


def test_infinite_joint_limit_is_no_limit():
    m = rbd_ros.load_model(robot(*ARM).replace('upper="1"', 'upper="inf"', 1))
    assert m.upper[0] == np.inf


@pytest.mark.parametrize("doctype", [
    '<!DOCTYPE robot [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;">]>',
    '<!DOCTYPE robot SYSTEM "file:///etc/passwd">',
    '<!DOCTYPE robot>'])
def test_doctype_and_entities_are_refused(doctype):
    refused(doctype + robot(*ARM).replace('name="r"', 'name="&b;"'), "malformed", "DOCTYPE")


def test_undefined_entity_is_malformed():
    refused(robot(*ARM).replace('name="r"', 'name="&x;"'), "malformed")


def test_root_element_must_be_robot():
    refused("<sdf><model/></sdf>", "<sdf>", "not <robot>")


# -- refused: a movable joint that drives nothing ---------------------------------------------
def _massless_tip():
    return robot(link("base", ""), link("l1"), link("l2", ""), *ARM[3:])


def test_joint_with_massless_subtree_is_refused():
    refused(_massless_tip(), "'j2'", "singular", "allow_massless=True")


def test_allow_massless_loads_it():
    m = rbd_ros.load_model(_massless_tip(), allow_massless=True)
    assert m.nv == 2 and m.inertial_parameters()[1, 0] == 0


def test_point_mass_on_the_joint_axis_is_refused():
    """A mass on a revolute joint's axis, without rotational inertia: nothing to turn."""
    tip = '<inertial><mass value="2"/><inertia ixx="0" iyy="0" izz="0" ixy="0" ixz="0" ' \
          'iyz="0"/></inertial>'
    refused(robot(link("base", ""), link("l1"), link("l2", tip), *ARM[3:4],
                  joint("j2", "l1", "l2", axis="0 0 1")), "'j2'", "singular")


def test_prismatic_joint_moving_no_mass_is_refused():
    spin_only = inertial(m=0.0)
    refused(robot(link("base", ""), link("l1"), link("l2", spin_only), *ARM[3:4],
                  joint("j2", "l1", "l2", kind="prismatic")), "'j2'", "singular")


def test_massless_floating_robot_is_refused():
    text = robot(link("base", ""), link("l1", ""), joint("j1", "base", "l1"))
    refused(text, "floating base", floating_base=True)


# -- inertias -------------------------------------------------------------------------------
def _two_links(tip1, tip2):
    return robot(link("base", ""), link("l1", tip1), link("l2", tip2), *ARM[3:])


def test_triangle_violation_loads_with_one_warning_naming_each_link():
    text = _two_links(inertial(ixx=0.000913, iyy=0.167169, izz=0.169),
                      inertial(ixx=8.67e-6, iyy=6.69e-4, izz=1.37e-3))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        m = rbd_ros.load_model(text)
    assert len(caught) == 1, [str(w.message) for w in caught]
    message = str(caught[0].message)
    for words in ("l1", "0.000913", "0.167", "0.169", "l2", "8.67e-06", "0.000669",
                  "0.00137", "strict_inertia"):
        assert words in message, message
    assert_close(m.inertial_parameters()[:, 0], [1.0, 1.0], 0, "masses kept")


def test_strict_inertia_refuses_the_triangle_violation():
    text = _two_links(inertial(), inertial(ixx=8.67e-6, iyy=6.69e-4, izz=1.37e-3))
    refused(text, "link 'l2'", "triangle", "8.67e-06", strict_inertia=True)


def test_valid_inertias_give_no_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rbd_ros.load_model(robot(*ARM), strict_inertia=True)


def test_inertia_not_positive_semidefinite_is_refused():
    refused(_two_links(inertial(), inertial(ixx=1, iyy=1, izz=1, ixy=2)), "link 'l2'",
            "positive semi-definite", "-1")


def test_round_off_below_positive_semidefinite_is_accepted():
    """A rank-two inertia printed with 6 digits has a moment of -1e-7 relative: round-off."""
    text = _two_links(inertial(), inertial(ixx=0.5, iyy=0.5, izz=1, ixy=0.5000001))
    with warnings.catch_warnings():
        warnings.simplefilter("error")          # and no warning either
        m = rbd_ros.load_model(text, strict_inertia=True)
    assert m.nv == 2


def test_negative_mass_is_refused():
    refused(_two_links(inertial(), inertial(m=-0.5)), "link 'l2'", "negative mass")


def test_identification_keeps_its_physical_checks():
    """load_model tolerates what the identification's consistency check still reports."""
    from rbd_ros.model import inertia as rin
    text = _two_links(inertial(), inertial(ixx=1e-3, iyy=1e-3, izz=5e-3))
    with pytest.warns(UserWarning, match="triangle"):
        m = rbd_ros.load_model(text)
    assert rin.physical_violation(m.inertia[1]) is not None


# -- deep chains ----------------------------------------------------------------------------
def chain(n):
    """Return an n-joint serial chain URDF (alternating axes)."""
    links = "".join(link(f"l{i}", None if i else "") for i in range(n + 1))
    joints = "".join(joint(f"j{i}", f"l{i}", f"l{i + 1}", axis=f"0 {i % 2} {1 - i % 2}")
                     for i in range(n))
    return robot(links, joints)


def test_ten_thousand_link_chain_loads():
    """The loader is iterative: a 10,000-link chain loads when the limits allow it."""
    urdf = chain(10_000)
    with pytest.raises(rbd_ros.DescriptionTooLarge, match="the limit is 1000"):
        rbd_ros.load_model(urdf)                 # the default limits: urdf_limits
    model = rbd_ros.load_model(urdf, limits=rbd_ros.DescriptionLimits(
        max_bytes=64 << 20, max_links=10_001, max_dofs=10_000))
    assert model.nv == 10_000 and model.joint_names[-1] == "j9999"
    assert model.parent[-1] == 9998


def test_driven_inertias_are_the_diagonal_of_crba(robot):
    """The massless check's composite inertias, against CRBA at the neutral configuration."""
    from rbd_ros.description.physical_checks import driven_inertias
    m = robot.model
    driven = driven_inertias(m.parent, m.joint_type, m.placement, m.axis, m.inertia)
    M = rbd_ros.crba(m, m.neutral())
    first = m.nv_base
    if m.floating_base:
        assert_close(driven[0], np.linalg.eigvalsh(M[:first, :first])[0], 1e-12, "base block")
    assert_close(driven[1 if first else 0:], np.diag(M)[first:], 1e-12, "diagonal")


POINT_ON_Y = ('<inertial><origin xyz="0 0.3 0"/><mass value="1"/><inertia ixx="0" iyy="0" '
              'izz="0" ixy="0" ixz="0" iyz="0"/></inertial>')       # a point mass on the y axis


@pytest.mark.parametrize("case, elements, named, floating", [
    ("massless slider", [link("base", ""), link("l1"), link("l2", ""),
                         joint("j1", "base", "l1"), joint("j2", "l1", "l2", "prismatic")],
     "'j2'", False),
    ("point mass on the axis", [link("base", ""), link("l1", POINT_ON_Y),
                                joint("j1", "base", "l1", origin='xyz="0 0 0"')], "'j1'", False),
    ("massless floating base", [link("base", ""), link("l1", ""),
                                joint("j1", "base", "l1", "fixed")], "the floating base", True),
])
def test_joints_that_move_no_mass_are_refused_where_pinocchio_finds_m_singular(
        pin, case, elements, named, floating):
    # the oracle: Pinocchio's M of the same URDF has a zero eigenvalue (nothing else loads it
    # the same way: it tolerates a singular M, where ours refuses it with the joint named)
    text = robot(*elements)
    message = refused(text, named, "singular", floating_base=floating)
    model = rbd_ros.load_model(text, floating_base=floating, allow_massless=True)
    reference = (pin.buildModelFromXML(text, pin.JointModelFreeFlyer()) if floating
                 else pin.buildModelFromXML(text))
    q = pin.neutral(reference)
    M = pin.crba(reference, reference.createData(), q)
    assert np.linalg.eigvalsh((M + M.T) / 2)[0] < 1e-12, (case, message)
    assert model.nv == reference.nv


def test_a_joint_that_moves_mass_loads_and_pinocchio_agrees(pin):
    text = robot(*ARM)
    model = rbd_ros.load_model(text)
    reference = pin.buildModelFromXML(text)
    assert np.linalg.eigvalsh(pin.crba(reference, reference.createData(),
                                       pin.neutral(reference)))[0] > 1e-6
    q = model.random_configuration(1)
    assert_close(rbd_ros.crba(model, q), pin.crba(reference, reference.createData(), q), 1e-10)
