"""``bench/node_run.py``: the command that starts the node for bench_node's runs."""
import argparse
import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "bench"))
import node_run  # noqa: E402
from node_command import COMMAND  # noqa: E402
from node_trees import FloorTree, SourceTree  # noqa: E402

from rbd_ros.node.parameters import PARAMETERS, enabled_outputs  # noqa: E402
from rbd_ros.outputs import NAMES, OBSERVER_BY_NAME  # noqa: E402


def arguments(fixed_base=False):
    return argparse.Namespace(fixed_base=fixed_base, executor="events", contact_frame="hand",
                              end_effector="wrist", command_joints=["j1", "j2"],
                              urdf_path="robot.urdf")


def parameters(cmd):
    """[(name, value)] of the command's ``-p name:=value`` arguments, in order."""
    return [tuple(cmd[k + 1].split(":=", 1)) for k in range(len(cmd) - 1) if cmd[k] == "-p"]


def node_parameters(cmd):
    """Return the node's parameters as the command leaves them: its defaults, then each -p."""
    params = {name: default for name, (default, _) in PARAMETERS.items()}
    for name, text in parameters(cmd):
        assert name in PARAMETERS, f"-p {name}: not a parameter of the node"
        default = PARAMETERS[name][0]
        params[name] = (text == "true") if isinstance(default, bool) else text
    return params


def tree():
    return SourceTree.__new__(SourceTree)        # the command only: no tree extracted


@pytest.mark.parametrize("fixed_base", [False, True])
@pytest.mark.parametrize("output", list(NAMES) + list(OBSERVER_BY_NAME))
def test_each_output_alone_is_what_the_node_turns_on(output, fixed_base):
    """
    One output named: the node's parameters turn it on, and no other output of the table.

    ~/end_effector is on where its frame is named, the centroidal momentum with the centre
    of mass (a floating base's only): no publish_ flag of their own (a run of every output
    once counted ~/end_effector missing on every message, given publish_end_effector).
    """
    cmd = node_run.command_line(arguments(fixed_base), tree(), [output])
    names = [name for name, _ in parameters(cmd)]
    assert len(names) == len(set(names)), names          # no parameter given twice
    params = node_parameters(cmd)
    params["floating_base"] = not fixed_base
    on = set(enabled_outputs(params))
    if output in OBSERVER_BY_NAME:
        assert params[OBSERVER_BY_NAME[output].parameter] is True
        assert on == set()
    elif output in ("center_of_mass", "centroidal_momentum"):   # one flag for the two
        assert on == ({"center_of_mass"} if fixed_base
                      else {"center_of_mass", "centroidal_momentum"})
    else:
        assert on == {output}
    if output == "end_effector":
        assert params["end_effector_frame"] == "wrist"


def test_every_output_at_once_and_the_command_and_contact_wrench():
    everything = list(NAMES) + ["external_torques", "contact_wrench", COMMAND]
    cmd = node_run.command_line(arguments(), tree(), everything)
    params = node_parameters(cmd)
    params["floating_base"] = True
    assert set(enabled_outputs(params)) == set(NAMES)
    assert params["contact_frame"] == "hand" and params["publish_external_torques"] is True
    assert params["command_joints"] == "[j1, j2]"
    assert ("floating_base", "true") in parameters(cmd)


def test_the_floor_is_started_with_its_calls_and_the_contact_frame():
    source = tree()
    source.path, source.cache = "/repo", None
    cmd = node_run.command_line(arguments(fixed_base=True), FloorTree(source, pinocchio=True),
                                ["torques", "contact_wrench"])
    assert os.path.basename(cmd[1]) == "node_floor.py"
    assert cmd[cmd.index("--outputs") + 1] == "torques,contact_wrench"
    assert cmd[cmd.index("--contact-frame") + 1] == "hand"
    assert "--pinocchio" in cmd and "--core" not in cmd and "--floating-base" not in cmd
