"""
config/dynamics.yaml and launch/dynamics.launch.py against the node's PARAMETERS.

The launch file is loaded with launch's own loader only where launch_ros is installed (a ROS 2
install; not the pip venv): elsewhere that test skips and the ``ast`` tests still check it.
"""
import ast
import os
import re

import pytest

yaml = pytest.importorskip("yaml")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CONFIG = os.path.join(ROOT, "config", "dynamics.yaml")
LAUNCH = os.path.join(ROOT, "launch", "dynamics.launch.py")
LAUNCH_ARGUMENTS = {"urdf_file", "robot_description_topic", "params_file", "floating_base"}


def node_parameters():
    """Return the node's PARAMETERS, {name: (default, description)} (a module without ROS)."""
    from rbd_ros.node.parameters import PARAMETERS
    return PARAMETERS


def config_parameters():
    with open(CONFIG, encoding="utf-8") as f:
        data = yaml.safe_load(f)
    assert list(data) == ["rbd_dynamics"], "one node section, named as the launch file's node"
    return data["rbd_dynamics"]["ros__parameters"]


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
    declared, node_calls = set(), []
    for call in ast.walk(tree):
        if not isinstance(call, ast.Call):
            continue
        func = call.func.id if isinstance(call.func, ast.Name) else getattr(call.func, "attr", "")
        if func == "DeclareLaunchArgument":
            declared.add(ast.literal_eval(call.args[0]))
        elif func == "Node":
            node_calls.append({kw.arg: kw.value for kw in call.keywords})
    assert declared == LAUNCH_ARGUMENTS
    assert len(node_calls) == 1
    node = node_calls[0]
    assert ast.literal_eval(node["package"]) == "rbd_ros"
    assert ast.literal_eval(node["executable"]) == "dynamics_node"
    assert ast.literal_eval(node["name"]) == "rbd_dynamics"
    assert "parameters" in node
    text = ast.unparse(tree)
    assert "get_package_share_directory('rbd_ros')" in text
    assert "'dynamics.yaml'" in text


def test_launch_file_loads_with_launch(tmp_path):
    pytest.importorskip("launch_ros")
    from launch import LaunchContext
    from launch.actions import DeclareLaunchArgument, OpaqueFunction
    from launch.launch_description_sources import get_launch_description_from_python_launch_file
    from launch_ros.actions import Node

    import rbd_ros.robots

    ld = get_launch_description_from_python_launch_file(LAUNCH)
    args = [e for e in ld.entities if isinstance(e, DeclareLaunchArgument)]
    assert {a.name for a in args} == LAUNCH_ARGUMENTS
    context = LaunchContext()
    context.launch_configurations["urdf_file"] = rbd_ros.robots.path("rbd_arm7")
    context.launch_configurations["floating_base"] = "false"
    for arg in args:                     # the others take their defaults, as ros2 launch does
        arg.execute(context)
    params_file = context.launch_configurations["params_file"]
    assert params_file.endswith(os.path.join("config", "dynamics.yaml"))
    assert os.path.isfile(params_file)
    actions = []
    for entity in ld.entities:
        if isinstance(entity, OpaqueFunction):
            actions += entity.execute(context) or []
    nodes = [a for a in actions if isinstance(a, Node)]
    assert len(nodes) == 1
    node = nodes[0]
    assert node.node_package == "rbd_ros"
    assert node.node_executable == "dynamics_node"


def test_launch_file_passes_the_urdf_content_not_the_path():
    """The node refuses a path as robot_description: the launch file reads the file itself."""
    tree = _launch_tree()
    function = next(f for f in tree.body
                    if isinstance(f, ast.FunctionDef) and f.name == "_dynamics_node")
    assigned = [node.value for node in ast.walk(function) if isinstance(node, ast.Assign)
                and any(isinstance(t, ast.Subscript) and isinstance(t.slice, ast.Constant)
                        and t.slice.value == "robot_description" for t in node.targets)]
    assert len(assigned) == 1
    value = assigned[0]                      # ParameterValue(f.read(), value_type=str)
    assert isinstance(value, ast.Call) and ast.unparse(value.func) == "ParameterValue"
    assert ast.unparse(value.args[0]).endswith(".read()")
    assert {kw.arg: ast.unparse(kw.value) for kw in value.keywords} == {"value_type": "str"}
    opened = [ast.unparse(c) for c in ast.walk(function)
              if isinstance(c, ast.Call) and ast.unparse(c.func) == "open"]
    assert any("urdf_file" in c for c in opened), opened
