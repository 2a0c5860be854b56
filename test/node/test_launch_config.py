"""
config/dynamics.yaml and launch/dynamics.launch.py against the node's PARAMETERS.

The launch file is loaded with launch's own loader where launch_ros is installed (a ROS 2
install, or the pip venv with ../shared/ros-tools installed by ./dev.sh setup): elsewhere those
tests skip, except in CI (CI=true), where they fail. ``test_ros_cli.py`` runs it with
``ros2 launch``.
"""
import ast
import os
import re

import numpy as np
import pytest

yaml = pytest.importorskip("yaml")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CONFIG = os.path.join(ROOT, "config", "dynamics.yaml")
LAUNCH = os.path.join(ROOT, "launch", "dynamics.launch.py")
OUTPUT_SWITCHES = {"publish_torques", "publish_accelerations", "publish_inverse_inertia",
                   "publish_rnea_derivatives", "publish_aba_derivatives"}
LAUNCH_ARGUMENTS = {"urdf_file", "robot_description_topic", "params_file", "floating_base",
                    "namespace", "node_name", "use_sim_time", "log_level"} | OUTPUT_SWITCHES


def node_parameters():
    """Return the node's PARAMETERS, {name: (default, description)} (a module without ROS)."""
    from rbd_ros.node.parameters import PARAMETERS
    return PARAMETERS


def config_parameters():
    with open(CONFIG, encoding="utf-8") as f:
        data = yaml.safe_load(f)
    # one section for the node whatever the launch file's node_name and namespace
    assert list(data) == ["/**"]
    return data["/**"]["ros__parameters"]


def test_config_sets_every_parameter_to_its_default():
    params = node_parameters()
    config = config_parameters()
    assert set(config) == set(params)
    for name, (default, _description) in params.items():
        value = config[name]
        assert value == default, name
        # a ROS parameter's type must match the declared default's (0 is not 0.0)
        assert type(value) is type(default), (name, value, default)
        if isinstance(default, list):
            assert [type(x) for x in value] == [type(x) for x in default], name


def test_config_documents_every_parameter():
    with open(CONFIG, encoding="utf-8") as f:
        lines = f.read().splitlines()
    documented = set()
    for k, line in enumerate(lines):
        m = re.match(r"^    (\w+):", line)
        if m and k > 0 and lines[k - 1].strip().startswith("#"):
            documented.add(m.group(1))
    assert documented == set(node_parameters())


def _launch_tree():
    with open(LAUNCH, encoding="utf-8") as f:
        return ast.parse(f.read())


def test_launch_file_declares_arguments_and_runs_dynamics_node():
    tree = _launch_tree()
    names = {f.name for f in tree.body if isinstance(f, ast.FunctionDef)}
    assert "generate_launch_description" in names
    node_calls = [{kw.arg: kw.value for kw in call.keywords} for call in ast.walk(tree)
                  if isinstance(call, ast.Call) and ast.unparse(call.func) == "Node"]
    assert len(node_calls) == 1
    node = node_calls[0]
    assert ast.literal_eval(node["package"]) == "rbd_ros"
    assert ast.literal_eval(node["executable"]) == "dynamics_node"
    assert ast.unparse(node["name"]) == "value('node_name')"
    assert "parameters" in node
    text = ast.unparse(tree)
    assert "get_package_share_directory('rbd_ros')" in text
    assert "'dynamics.yaml'" in text


def launch_actions(arguments):
    """
    Load the launch file with launch's own loader and run its arguments and functions.

    ``arguments``: {name: value} as given on the ros2 launch command line. Returns
    (declared arguments, the actions the launch file's functions return).
    """
    from helpers import require_module
    require_module("launch_ros", "launch_ros (../shared/ros-tools/install.sh VENV)")
    from launch import LaunchContext
    from launch.actions import DeclareLaunchArgument, OpaqueFunction
    from launch.launch_description_sources import get_launch_description_from_python_launch_file

    ld = get_launch_description_from_python_launch_file(LAUNCH)
    args = [e for e in ld.entities if isinstance(e, DeclareLaunchArgument)]
    context = LaunchContext()
    context.launch_configurations.update(arguments)
    for arg in args:                     # the others take their defaults, as ros2 launch does
        arg.execute(context)
    actions = []
    for entity in ld.entities:
        if isinstance(entity, OpaqueFunction):
            actions += entity.execute(context) or []
    return args, actions, context


@pytest.mark.parametrize("floating_base", ["true", "false", ""])
def test_launch_file_loads_with_launch(floating_base):
    """Issue 13: floating_base:=true (any value) crashed the launch: a str typed as bool."""
    import rbd_ros.robots
    args, actions, context = launch_actions({
        "urdf_file": rbd_ros.robots.path("rbd_arm7"), "floating_base": floating_base,
        "publish_inverse_inertia": "true", "node_name": "my_dynamics"})
    assert {a.name for a in args} == LAUNCH_ARGUMENTS
    assert all(a.description for a in args)
    params_file = context.launch_configurations["params_file"]
    assert params_file.endswith(os.path.join("config", "dynamics.yaml"))
    assert os.path.isfile(params_file)
    from launch_ros.actions import Node
    (node,) = actions
    assert isinstance(node, Node)
    assert node.node_package == "rbd_ros" and node.node_executable == "dynamics_node"
    from launch_ros.utilities import evaluate_parameters
    _, overrides = evaluate_parameters(context, node._Node__parameters)   # as ros2 launch does
    expected = {"publish_inverse_inertia": True, "use_sim_time": False,
                **({"floating_base": floating_base == "true"} if floating_base else {})}
    for name, value in expected.items():
        assert overrides[name] is value, name        # a bool, as the node declares it
    assert "floating_base" in overrides or not floating_base
    assert overrides["robot_description"].startswith("<")             # the XML, never a path


@pytest.mark.parametrize("arguments,expected", [
    ({"floating_base": "maybe"}, "floating_base"),
    ({"use_sim_time": "1"}, "use_sim_time"),
    ({"log_level": "loud"}, "log_level"),
    ({"publish_torques": "yes"}, "publish_torques"),
    ({"urdf_file": "/no/such/robot.urdf"}, "urdf_file:='/no/such/robot.urdf' cannot be read"),
    ({"node_name": "bad name"}, "node_name:='bad name' is not a ROS node name"),
    ({"namespace": "a b"}, "namespace:='a b' is not a ROS namespace"),
    ({"params_file": "/no/such.yaml"}, "params_file:='/no/such.yaml' is not a file"),
    ({"node_name": "bad name " * 20000}, "is not a ROS node name"),  # quoted short
])
def test_launch_file_refuses_bad_arguments(arguments, expected):
    """A bad value is one clear error naming the argument, before anything starts."""
    with pytest.raises(Exception) as info:
        launch_actions(arguments)
    assert expected in str(info.value)
    assert len(str(info.value)) < 400


def test_launch_file_passes_the_urdf_content_not_the_path():
    """The node refuses a path as robot_description: the launch file reads the file itself."""
    tree = _launch_tree()
    function = next(f for f in tree.body
                    if isinstance(f, ast.FunctionDef) and f.name == "_dynamics_node")
    assigned = [node.value for node in ast.walk(function) if isinstance(node, ast.Assign)
                and any(isinstance(t, ast.Subscript) and isinstance(t.slice, ast.Constant)
                        and t.slice.value == "robot_description" for t in node.targets)]
    assert len(assigned) == 1
    value = assigned[0]              # ParameterValue(_read_urdf(value('urdf_file')), str)
    assert isinstance(value, ast.Call) and ast.unparse(value.func) == "ParameterValue"
    assert ast.unparse(value.args[0]) == "_read_urdf(value('urdf_file'))"
    assert {kw.arg: ast.unparse(kw.value) for kw in value.keywords} == {"value_type": "str"}
    reader = next(f for f in tree.body
                  if isinstance(f, ast.FunctionDef) and f.name == "_read_urdf")
    assert "return f.read()" in ast.unparse(reader)


def test_the_contact_example_file_sets_node_parameters_the_node_accepts():
    """config/contact.yaml (doc/contact.md's ready file): known names, types, valid values."""
    from rbd_ros.node.parameters import problem
    import rbd_ros
    params = node_parameters()
    with open(os.path.join(ROOT, "config", "contact.yaml"), encoding="utf-8") as f:
        data = yaml.safe_load(f)
    assert list(data) == ["/**"]
    values = data["/**"]["ros__parameters"]
    assert {"publish_external_torques", "publish_collision", "contact_frame"} <= set(values)
    for name, value in values.items():
        assert name in params, name
        default = params[name][0]
        assert type(value) is type(default), (name, value, default)
        assert problem(name, value) is None, (name, value)
    # the contact frame is a link of the arm the file is written for, with 7 dof above it
    model = rbd_ros.load_model(rbd_ros.robots.path("rbd_arm7"))
    assert values["contact_frame"] in model.link_frames
    assert np.linalg.matrix_rank(rbd_ros.frame_jacobian(
        model, model.random_configuration(0), values["contact_frame"])) == 6
    with open(os.path.join(ROOT, "doc", "contact.md"), encoding="utf-8") as f:
        assert "config/contact.yaml" in f.read()
