"""
Launch the rbd_ros dynamics node.

    ros2 launch rbd_ros dynamics.launch.py                                # URDF from the topic
    ros2 launch rbd_ros dynamics.launch.py urdf_file:=/path/robot.urdf    # URDF from a file
    ros2 launch rbd_ros dynamics.launch.py floating_base:=true params_file:=my.yaml

Launch arguments:
  urdf_file                a URDF path; when given, this file reads it and passes its
                           content as the robot_description parameter (the node takes URDF
                           XML only, never a path; otherwise it subscribes to
                           robot_description_topic, e.g. robot_state_publisher's)
  robot_description_topic  std_msgs/String topic with the URDF (default robot_description)
  params_file              parameters file (default: the installed config/dynamics.yaml)
  floating_base            true / false; empty (default): as params_file says
The arguments given here override params_file.
"""
import os

from ament_index_python.packages import PackageNotFoundError, get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node
from launch_ros.parameter_descriptions import ParameterValue

ARGUMENTS = ("urdf_file", "robot_description_topic", "params_file", "floating_base")


def _default_params_file():
    try:
        share = get_package_share_directory("rbd_ros")
    except (PackageNotFoundError, OSError):   # not installed, no AMENT_PREFIX_PATH: source tree
        share = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    return os.path.join(share, "config", "dynamics.yaml")


def _dynamics_node(context):
    urdf_file = LaunchConfiguration("urdf_file").perform(context)
    floating_base = LaunchConfiguration("floating_base").perform(context)
    overrides = {"robot_description_topic": LaunchConfiguration("robot_description_topic")}
    if urdf_file:
        with open(urdf_file, encoding="utf-8") as f:
            # value_type=str: the XML is passed as is, never parsed as YAML
            overrides["robot_description"] = ParameterValue(f.read(), value_type=str)
    if floating_base:
        overrides["floating_base"] = ParameterValue(floating_base, value_type=bool)
    return [Node(package="rbd_ros", executable="dynamics_node", name="rbd_dynamics",
                 output="screen",
                 parameters=[LaunchConfiguration("params_file"), overrides])]


def generate_launch_description():
    return LaunchDescription([
        DeclareLaunchArgument("urdf_file", default_value="",
                              description="URDF file whose content becomes the "
                                          "robot_description parameter; empty: use the topic"),
        DeclareLaunchArgument("robot_description_topic", default_value="robot_description",
                              description="std_msgs/String topic with the URDF"),
        DeclareLaunchArgument("params_file", default_value=_default_params_file(),
                              description="ROS 2 parameters file of the node"),
        DeclareLaunchArgument("floating_base", default_value="",
                              description="true: free-flyer root (base state from odometry); "
                                          "empty: as params_file says"),
        OpaqueFunction(function=_dynamics_node),
    ])
