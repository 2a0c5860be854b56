"""``bench/node_run.py``: the command that starts the node for bench_node's runs."""
import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "bench"))
import node_run  # noqa: E402
from node_command import COMMAND  # noqa: E402
from node_trees import FloorTree, SourceTree  # noqa: E402

from rbd_ros.node.parameters import PARAMETERS  # noqa: E402
from rbd_ros.outputs import NAMES  # noqa: E402


def arguments(fixed_base=False):
    return argparse.Namespace(fixed_base=fixed_base, executor="events", contact_frame="hand",
                              end_effector="wrist", command_joints=["j1", "j2"],
                              urdf_path="robot.urdf")


def parameters(cmd):
    """{name: value} of the command's ``-p name:=value`` arguments."""
    return dict(cmd[k + 1].split(":=", 1) for k in range(len(cmd) - 1) if cmd[k] == "-p")


def tree():
    return SourceTree.__new__(SourceTree)        # the command only: no tree extracted


def test_every_output_is_switched_on_by_a_parameter_the_node_declares():
    """
    Each output bench_node can name starts the node with parameters it has, the output on.

    ~/end_effector is switched on by the frame it names (end_effector_frame), the centroidal
    momentum with the centre of mass: no publish_ flag of their own (a run of every output
    once counted ~/end_effector missing on every message).
    """
    everything = list(NAMES) + ["external_torques", "contact_wrench", COMMAND]
    given = parameters(node_run.command_line(arguments(), tree(), everything))
    assert set(given) <= set(PARAMETERS), set(given) - set(PARAMETERS)
    assert given["end_effector_frame"] == "wrist" and given["contact_frame"] == "hand"
    for name in set(NAMES) - {"end_effector", "centroidal_momentum"}:
        assert given[f"publish_{name}"] == "true", name
    assert given["command_joints"] == "[j1, j2]"


def test_an_output_not_named_is_switched_off():
    given = parameters(node_run.command_line(arguments(), tree(), ["torques"]))
    assert given["publish_torques"] == "true"
    for name in set(NAMES) - {"torques", "end_effector", "centroidal_momentum"}:
        assert given[f"publish_{name}"] == "false", name
    assert "end_effector_frame" not in given           # its default: none, so off
    assert set(given) <= set(PARAMETERS), set(given) - set(PARAMETERS)


def test_the_floor_is_started_with_its_calls_and_the_contact_frame():
    source = tree()
    source.path, source.cache = "/repo", None
    cmd = node_run.command_line(arguments(fixed_base=True), FloorTree(source, pinocchio=True),
                                ["torques", "contact_wrench"])
    assert os.path.basename(cmd[1]) == "node_floor.py"
    assert cmd[cmd.index("--outputs") + 1] == "torques,contact_wrench"
    assert cmd[cmd.index("--contact-frame") + 1] == "hand"
    assert "--pinocchio" in cmd and "--core" not in cmd and "--floating-base" not in cmd
