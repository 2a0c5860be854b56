"""
A xacro file given as a URDF (issue 38): refused naming xacro and how to expand it.

``load_model("x.urdf.xacro")`` read the macros' file as a URDF and returned a model with
zero joints (``dual_panda_example.urdf.xacro`` of rtb-data). Checked on every .xacro file of
the installed public corpus (rtb-data, example-robot-data), and that a URDF that xacro has
expanded, which keeps the ``xmlns:xacro`` declaration, still loads.
"""
import os

import pytest

import rbd_ros
from rbd_ros.description.urdf_reader import URDFError, parse_xml
from corpus import CORPUS, _dist_dir, read
from helpers import missing


def _xacro_files():
    tops = [_dist_dir("rtb-data", "rtbdata", "xacro"),
            _dist_dir("example-robot-data", "cmeel.prefix", "share", "example-robot-data")]
    found = []
    for top in filter(None, tops):
        for folder, _, files in os.walk(top):
            found += [os.path.join(folder, f) for f in files if f.endswith(".xacro")]
    return sorted(found)


XACRO_FILES = _xacro_files()


def test_every_public_xacro_file_is_refused_naming_xacro():
    if not any(p.endswith("dual_panda_example.urdf.xacro") for p in XACRO_FILES):
        missing("rtb-data's xacro descriptions (pip install rtb-data)")
    for path in XACRO_FILES:
        with pytest.raises(URDFError) as err:
            rbd_ros.load_model(path)
        message = str(err.value)
        name = os.path.basename(path)
        assert "xacro file" in message and f"xacro {name} > " in message, message
        assert "ros2 run xacro xacro" in message and "\n" not in message


def test_a_xacro_text_is_refused_and_an_expanded_urdf_loads():
    expanded = rbd_ros.robots.path("rbd_arm7")
    with open(expanded, encoding="utf-8") as f:
        urdf = f.read()
    declared = urdf.replace("<robot ", '<robot xmlns:xacro="http://www.ros.org/wiki/xacro" ', 1)
    assert declared != urdf
    assert rbd_ros.load_model(declared).nv == 7              # the declaration alone: a URDF
    macro = declared.replace("</robot>", '<xacro:include filename="gripper.xacro"/></robot>')
    other_prefix = urdf.replace("<robot ", '<robot xmlns:x="http://ros.org/wiki/xacro" ', 1) \
        .replace("</robot>", '<x:gripper side="left"/></robot>')
    substitution = declared.replace('effort="', 'effort="${', 1)
    for text, word in ((macro, "<xacro:include>"), (other_prefix, "<x:gripper>"),
                       (substitution, "substitutions")):
        with pytest.raises(URDFError) as err:
            rbd_ros.load_model(text)
        assert "xacro file" in str(err.value) and word in str(err.value), str(err.value)
        assert "xacro robot.urdf.xacro > robot.urdf" in str(err.value)


def test_corpus_urdfs_are_not_taken_for_xacro():
    """46 of the corpus's URDFs keep xmlns:xacro (expanded by xacro): none is refused as xacro."""
    if not CORPUS:
        missing("the public robot corpus (pip install -e '.[test]')")
    declared = 0
    for name, path in CORPUS.items():
        text = read(name)
        declared += "xmlns:xacro" in text
        try:
            parse_xml(text, path)                 # where a xacro file is refused
        except URDFError as exc:
            assert "xacro file" not in str(exc), name
    assert declared >= 10
