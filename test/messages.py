"""Serialized ROS messages the tests feed to the node, the replay and the decoders."""
import functools

import numpy as np

from rbd_ros.formats import cdr
from rbd_ros.replay import bag_io


def odometry_cdr(store, x, sec, nanosec):
    """
    Return nav_msgs/Odometry bytes (little-endian CDR) made by rosbags' ``store``.

    ``x``: [x y z qx qy qz qw vx vy vz wx wy wz], the pose in the odom frame and the twist in
    the base frame; the header stamp is (sec, nanosec).
    """
    types = store.types
    header = types["std_msgs/msg/Header"](
        stamp=types["builtin_interfaces/msg/Time"](sec=sec, nanosec=nanosec), frame_id="odom")
    pose = types["geometry_msgs/msg/PoseWithCovariance"](
        pose=types["geometry_msgs/msg/Pose"](
            position=types["geometry_msgs/msg/Point"](x=x[0], y=x[1], z=x[2]),
            orientation=types["geometry_msgs/msg/Quaternion"](x=x[3], y=x[4], z=x[5], w=x[6])),
        covariance=np.zeros(36))
    vector = types["geometry_msgs/msg/Vector3"]
    twist = types["geometry_msgs/msg/TwistWithCovariance"](
        twist=types["geometry_msgs/msg/Twist"](linear=vector(*x[7:10]), angular=vector(*x[10:])),
        covariance=np.zeros(36))
    msg = types[bag_io.ODOMETRY](header=header, child_frame_id="base_link", pose=pose,
                                 twist=twist)
    return bytes(store.serialize_cdr(msg, bag_io.ODOMETRY))


def rosbags_joint_state(names, position, velocity, effort, stamp=(0, 0), frame_id="",
                        little_endian=True):
    """Return sensor_msgs/JointState bytes made by rosbags (zero padding between strings)."""
    store = typestore()
    cls = store.types[bag_io.JOINT_STATE]
    header = store.types["std_msgs/msg/Header"](
        stamp=store.types["builtin_interfaces/msg/Time"](sec=stamp[0], nanosec=stamp[1]),
        frame_id=frame_id)
    msg = cls(header=header, name=list(names), position=np.asarray(position, float),
              velocity=np.asarray(velocity, float), effort=np.asarray(effort, float))
    return bytes(store.serialize_cdr(msg, bag_io.JOINT_STATE, little_endian=little_endian))


@functools.cache
def typestore():
    """Return rosbags' type store of Jazzy and rbd_ros_interfaces (``bag_io.typestore``), once."""
    return bag_io.typestore()


def padding_offsets(raw, count_offset, count):
    """Return the offsets of the padding bytes between the strings of a CDR string sequence."""
    offset, padding = count_offset + 4, []
    for _ in range(count):
        aligned = cdr.align(offset, 4)
        padding += range(offset, aligned)
        offset = aligned + 4 + int.from_bytes(raw[aligned:aligned + 4], "little")
    return padding
