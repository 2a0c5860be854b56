"""
Launch the rbd_ros dynamics node.

    ros2 launch rbd_ros dynamics.launch.py                                # URDF from the topic
    ros2 launch rbd_ros dynamics.launch.py urdf_file:=/path/robot.urdf    # URDF from a file
    ros2 launch rbd_ros dynamics.launch.py floating_base:=true params_file:=my.yaml
    ros2 launch rbd_ros dynamics.launch.py --show-args                    # every argument

Every argument is checked before anything starts: a value that is not one of an argument's
choices, or a urdf_file that cannot be read, stops the launch with one line naming it. The
arguments given here override params_file; those whose default is empty leave it be.
"""
import os
import re

from ament_index_python.packages import PackageNotFoundError, get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node
from launch_ros.parameter_descriptions import ParameterValue

BOOL = ("true", "false")
OPTIONAL_BOOL = ("", "true", "false")          # "": as params_file says
OUTPUTS = ("torques", "accelerations", "inverse_inertia", "rnea_derivatives",
           "aba_derivatives")
LOG_LEVELS = ("debug", "info", "warn", "error", "fatal")


def _default_params_file():
    try:
        share = get_package_share_directory("rbd_ros")
    except (PackageNotFoundError, OSError):   # not installed, no AMENT_PREFIX_PATH: source tree
        share = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    return os.path.join(share, "config", "dynamics.yaml")


# name: (default, choices or None, description): what --show-args prints
ARGUMENTS = {
    "urdf_file": ("", None, "URDF file whose content becomes the robot_description parameter "
                            "(the node takes XML, never a path); empty: the URDF comes on "
                            "robot_description_topic"),
    "robot_description_topic": ("robot_description", None,
                                "std_msgs/String topic with the URDF (robot_state_publisher's)"),
    "params_file": (_default_params_file(), None, "ROS 2 parameters file of the node"),
    "floating_base": ("", OPTIONAL_BOOL, "true: the root link is a free-flyer whose state "
                                         "comes from odometry; empty: as params_file says"),
    "namespace": ("", None, "namespace of the node (its topics, e.g. joint_states, resolve "
                            "there)"),
    "node_name": ("rbd_dynamics", None, "name of the node (its ~/ topics and services)"),
    "use_sim_time": ("false", BOOL, "true: stamp with /clock (simulated time)"),
    "log_level": ("info", LOG_LEVELS, "the node's log level"),
    **{f"publish_{name}": ("", OPTIONAL_BOOL, f"publish ~/{name}; empty: as params_file says")
       for name in OUTPUTS},
}


def _quoted(text, limit=120):
    """Quote a value given on the command line, at most ``limit`` characters of it."""
    return repr(text[:limit]) + ("..." if len(text) > limit else "")


def _read_urdf(path):
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except (OSError, UnicodeDecodeError) as exc:
        # launch prints this one line ("Caught exception in launch ...") and stops
        raise RuntimeError(f"urdf_file:={_quoted(path)} cannot be read: "
                           f"{getattr(exc, 'strerror', None) or exc}") from None


NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*$")
NAMESPACE = re.compile(r"(/?[A-Za-z_][A-Za-z0-9_]*)*/?$")


def _check_names(node_name, namespace, params_file):
    """Raise the one line launch prints for a bad node name, namespace or params_file."""
    if not NAME.match(node_name):
        raise RuntimeError(f"node_name:={_quoted(node_name)} is not a ROS node name (letters, "
                           "digits and underscores, not starting with a digit)")
    if not NAMESPACE.match(namespace):
        raise RuntimeError(f"namespace:={_quoted(namespace)} is not a ROS namespace "
                           "(e.g. /robot1)")
    if not os.path.isfile(params_file):
        raise RuntimeError(f"params_file:={_quoted(params_file)} is not a file")


def _dynamics_node(context):
    def value(name):
        return LaunchConfiguration(name).perform(context)
    _check_names(value("node_name"), value("namespace"), value("params_file"))
    overrides = {"robot_description_topic": value("robot_description_topic"),
                 "use_sim_time": value("use_sim_time") == "true"}
    if value("urdf_file"):
        # value_type=str: the XML is passed as is, never parsed as YAML
        overrides["robot_description"] = ParameterValue(_read_urdf(value("urdf_file")),
                                                        value_type=str)
    for name in ["floating_base"] + [f"publish_{o}" for o in OUTPUTS]:
        if value(name):                       # a Python bool: the node's type
            overrides[name] = value(name) == "true"
    return [Node(package="rbd_ros", executable="dynamics_node", name=value("node_name"),
                 namespace=value("namespace"), output="screen",
                 ros_arguments=["--log-level", value("log_level")],
                 parameters=[value("params_file"), overrides])]


def generate_launch_description():
    return LaunchDescription([
        *(DeclareLaunchArgument(name, default_value=default, description=description,
                                **({"choices": list(choices)} if choices else {}))
          for name, (default, choices, description) in ARGUMENTS.items()),
        OpaqueFunction(function=_dynamics_node),
    ])
