"""
urdf-parser-py as an oracle of the reader, and its ``Robot`` as an input of ``load_model``.

ROS Python code holds robot descriptions as ``urdf_parser_py.urdf.Robot`` objects
(``URDF.from_xml_string``); ``load_model`` takes one as it takes the document. Over the
corpus of real URDFs (``corpus.py``), wherever urdf-parser-py parses a file:

* the reader (``rbd_ros.description.urdf_reader``) and urdf-parser-py read the same numbers for
  everything the dynamics reads (joint types, ends, origins, axes, limits, mimic tags;
  link inertials), with the URDF's defaults for what is absent (the reader's attribute names
  are urdf-parser-py's);
* the model loaded from the ``Robot`` is the model loaded from the file, array for array, and
  a file that ``load_model`` refuses is refused as a ``Robot`` too, for the same reason.

urdf-parser-py is stricter than the reader about what the dynamics never reads:
:data:`NOT_PARSED` lists the corpus files it refuses, and why.
"""
import math
import warnings

import numpy as np
import pytest

import rbd_ros
from helpers import require_module
from corpus import CORPUS, read
from rbd_ros.description.urdf_reader import (URDFError, check_document, parse_xml, read_robot,
                                             read_source)

# The corpus files urdf-parser-py 0.0.4 does not parse (facts about the files; the reader
# ignores these elements, the dynamics never reads them):
TEXTURE = "a <texture> without filename"
NOT_PARSED = {
    "erd/icub/icub": TEXTURE,                   # in a link's <visual><material>
    "erd/icub/icub_reduced": TEXTURE,
    "icub/iCubGenova03": TEXTURE,
    "icub/iCubLisboa01": TEXTURE,
    "icub/iCubNancy01": TEXTURE,
    "erd/romeo/romeo_laas_small": TEXTURE,      # in a top-level <material>
    "erd/pr2/pr2": "a ROS 1 <transmission> (<actuator> without <hardwareInterface>)",
    "erd/ur/ur3": "a <robot> without name (an empty xacro output)",
}
NAMES = tuple(CORPUS)


@pytest.fixture(scope="module")
def urdf_parser_py():
    module = require_module("urdf_parser_py.urdf", "urdf-parser-py")
    from urdf_parser_py.xml_reflection import core
    printing, core.on_error = core.on_error, lambda message: None   # it prints each unknown tag
    yield module
    core.on_error = printing


def parse_with_urdf_parser_py(module, name):
    """Return urdf-parser-py's Robot of the corpus file ``name``, or None if it refuses it."""
    try:
        return module.URDF.from_xml_string(read(name).encode())
    except Exception:                        # its ParseError, AssertionError, ...
        return None


def test_the_files_urdf_parser_py_refuses_are_those_listed(urdf_parser_py):
    refused = {n for n in NAMES if parse_with_urdf_parser_py(urdf_parser_py, n) is None}
    assert refused == set(NOT_PARSED) & set(NAMES)
    assert len(refused) < len(NAMES) // 4    # the comparisons below cover most of the corpus


def _numbers(values, default):
    return tuple(map(float, default if values is None else values))


def _limit(value, default):
    return default if value is None else float(value)


def dynamics_view(robot):
    """Everything the dynamics reads of a robot, with the URDF's defaults filled in."""
    def origin(o):
        if o is None:
            return (0.0,) * 6
        return _numbers(o.xyz, (0, 0, 0)) + _numbers(o.rpy, (0, 0, 0))
    links = {}
    for link in robot.links:
        i = link.inertial
        links[link.name] = None if i is None else (
            float(i.mass or 0.0), origin(i.origin),
            None if i.inertia is None else tuple(
                float(getattr(i.inertia, k)) for k in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")))
    joints = {}
    for j in robot.joints:
        limit = j.limit
        mimic = j.mimic
        joints[j.name] = (
            j.type, j.parent, j.child, origin(j.origin), _numbers(j.axis, (1, 0, 0)),
            None if limit is None else (
                _limit(limit.lower, 0.0), _limit(limit.upper, 0.0),
                _limit(limit.effort, math.inf), _limit(limit.velocity, math.inf)),
            None if mimic is None else (
                mimic.joint, _limit(mimic.multiplier, 1.0), _limit(mimic.offset, 0.0)))
    return links, joints


@pytest.mark.parametrize("name", [n for n in NAMES if n not in NOT_PARSED])
def test_reader_reads_the_numbers_urdf_parser_py_reads(urdf_parser_py, name):
    theirs = parse_with_urdf_parser_py(urdf_parser_py, name)
    assert theirs is not None
    root = parse_xml(read(name), name)
    check_document(root, name)
    ours = read_robot(root, name)
    our_links, our_joints = dynamics_view(ours)
    their_links, their_joints = dynamics_view(theirs)
    assert list(our_links) == list(their_links)          # the same links, in the same order
    assert list(our_joints) == list(their_joints)
    for link in our_links:
        assert our_links[link] == their_links[link], link
    for joint in our_joints:
        assert our_joints[joint] == their_joints[joint], joint


def _load(source, floating):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")      # odd inertias warn alike either way
        try:
            return rbd_ros.load_model(source, floating_base=floating, allow_massless=True)
        except URDFError as exc:
            return exc


@pytest.mark.parametrize("floating", [False, True], ids=["fixed", "floating"])
@pytest.mark.parametrize("name", [n for n in NAMES if n not in NOT_PARSED])
def test_a_robot_loads_as_its_file(urdf_parser_py, name, floating):
    robot = parse_with_urdf_parser_py(urdf_parser_py, name)
    from_file, from_robot = _load(CORPUS[name], floating), _load(robot, floating)
    if isinstance(from_file, URDFError):     # refused alike, for the same reason
        assert isinstance(from_robot, URDFError)
        assert (str(from_robot).replace(read_source(robot)[1], "SOURCE")
                == str(from_file).replace(CORPUS[name], "SOURCE"))
        return
    assert not isinstance(from_robot, URDFError), from_robot
    for attribute in ("packed", "lower", "upper", "velocity_limit", "effort_limit",
                      "inertia"):
        assert np.array_equal(getattr(from_file, attribute), getattr(from_robot, attribute))
    for attribute in ("name", "nq", "nv", "joint_names", "body_names", "nq_full"):
        assert getattr(from_file, attribute) == getattr(from_robot, attribute)
    assert (from_file.coupling is None) == (from_robot.coupling is None)
    if from_file.coupling is not None:
        assert dict(from_file.coupling.followers) == dict(from_robot.coupling.followers)
    assert from_file.link_frames.keys() == from_robot.link_frames.keys()
    for link, (body, R, p) in from_file.link_frames.items():
        other = from_robot.link_frames[link]
        assert body == other[0] and np.array_equal(R, other[1]) and np.array_equal(p, other[2])


class _Unwritable:
    name = "broken"

    def to_xml_string(self):
        raise AssertionError("Invalid vector length")


class _NotText:
    def to_xml_string(self):
        return 42


class _NotXML:
    def to_xml_string(self):
        return "/etc/hostname"               # text, never a path: parsed as XML


@pytest.mark.parametrize("robot, words", [
    (_Unwritable(), "could not be written as URDF XML: AssertionError"),
    (_NotText(), "returned a int, not XML text"),
    (_NotXML(), "malformed URDF"),
    (object(), "urdf_parser_py Robot, got object"),
])
def test_a_robot_object_that_is_not_a_urdf_is_refused(robot, words):
    with pytest.raises(URDFError, match=words):
        rbd_ros.load_model(robot)


def test_a_robot_object_with_bad_numbers_is_refused_as_its_document(urdf_parser_py):
    """The checks of the document apply: a NaN written into a Robot is refused."""
    robot = urdf_parser_py.URDF.from_xml_file(rbd_ros.robots.path("rbd_arm7"))
    robot.joints[0].origin.xyz[1] = float("nan")
    with pytest.raises(URDFError, match="NaN"):
        rbd_ros.load_model(robot)
