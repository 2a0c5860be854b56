"""rosbag2 in and out with ``rosbags``: the message types, fast CDR decoding of the inputs
and template encoding of the node's outputs.

The typestore is ROS 2 Jazzy's plus the ``rbd_ros_interfaces`` messages, registered from
their ``.msg`` definitions (``rbd_ros/replay/msg``, copies of ``rbd_ros_interfaces/msg``
that a test keeps identical), so the output bag uses exactly the node's message types.

Decoding: joint_states and odometry are parsed straight from their little-endian CDR bytes
(``rbd_ros.cdr``, shared with the node); anything else goes through ``rosbags``' own
deserializer. Encoding: every output of one topic has the same layout (same names, same
sizes) except the header stamp and the float64 arrays, so one message is serialized by
``rosbags`` as a ``cdr.Template`` and N messages are filled in with numpy; a test checks the
bytes against ``rosbags``' serializer.
"""
import functools
import os
from pathlib import Path

import numpy as np
from rosbags.rosbag2 import Reader, StoragePlugin, Writer
from rosbags.typesys import Stores, get_types_from_msg, get_typestore

from .. import cdr

MSG_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "msg")
INTERFACES = ("JointVector", "JointMatrix", "DynamicsDerivatives")
JOINT_STATE = "sensor_msgs/msg/JointState"
ODOMETRY = "nav_msgs/msg/Odometry"
STRING = "std_msgs/msg/String"
OUTPUT_TYPES = {"torques": JOINT_STATE,
                "accelerations": "rbd_ros_interfaces/msg/JointVector",
                "inverse_inertia": "rbd_ros_interfaces/msg/JointMatrix",
                "rnea_derivatives": "rbd_ros_interfaces/msg/DynamicsDerivatives",
                "aba_derivatives": "rbd_ros_interfaces/msg/DynamicsDerivatives"}


class ReplayError(ValueError):
    """Bad input (bag, topic, URDF): the message says what and how to fix it."""


@functools.lru_cache(maxsize=None)
def typestore():
    store = get_typestore(Stores.ROS2_JAZZY)
    types = {}
    for name in INTERFACES:
        with open(os.path.join(MSG_DIR, name + ".msg"), encoding="utf-8") as f:
            types.update(get_types_from_msg(f.read(), f"rbd_ros_interfaces/msg/{name}"))
    store.register(types)
    return store


def open_reader(path):
    path = Path(path)
    if not path.exists():
        raise ReplayError(f"no such bag: {path}")
    try:
        reader = Reader(path)
        reader.open()
    except Exception as exc:
        raise ReplayError(f"cannot open {path} as a rosbag2 (sqlite3 or mcap): {exc}") from exc
    return reader


def connection(reader, topic, msgtype, required=True):
    """The reader's connections of ``topic``, checked to carry ``msgtype``."""
    cons = [c for c in reader.connections if c.topic == topic]
    if not cons:
        if not required:
            return []
        listing = ", ".join(f"{c.topic} ({c.msgtype})" for c in reader.connections) or "none"
        raise ReplayError(f"the bag has no topic {topic!r}; its topics: {listing}")
    bad = [c.msgtype for c in cons if c.msgtype != msgtype]
    if bad:
        raise ReplayError(f"topic {topic!r} carries {bad[0]}, expected {msgtype}")
    return cons


def deserialize_joint_state(raw):
    """(names, (sec, nanosec), [position, velocity, effort]) through rosbags' deserializer:
    for bytes the fast decoder does not take (big-endian CDR)."""
    msg = typestore().deserialize_cdr(raw, JOINT_STATE)
    return (tuple(msg.name), (msg.header.stamp.sec, msg.header.stamp.nanosec),
            [np.asarray(a, np.float64) for a in (msg.position, msg.velocity, msg.effort)])


def decode_odometry(raw):
    """(stamp ns, [x y z qx qy qz qw vx vy vz wx wy wz]) of a nav_msgs/Odometry."""
    decoded = cdr.decode_odometry(raw)
    if decoded is not None:
        (sec, nsec), values = decoded
        return sec * 10**9 + nsec, values
    msg = typestore().deserialize_cdr(raw, ODOMETRY)
    return msg.header.stamp.sec * 10**9 + msg.header.stamp.nanosec, cdr.odometry_values(msg)


def decode_odometry_many(raws):
    """(stamps ns (K,), (K, 13) arrays) of many nav_msgs/Odometry, vectorized per layout."""
    K = len(raws)
    stamp, X = np.zeros(K, np.int64), np.zeros((K, 13))
    groups = {}
    for k, raw in enumerate(raws):
        if not cdr.is_little_endian_cdr(raw):
            stamp[k], X[k] = decode_odometry(raw)
            continue
        groups.setdefault((len(raw), cdr.odometry_offset(raw)), []).append(k)
    for (length, off), ks in groups.items():
        ks = np.array(ks)
        buf = np.frombuffer(b"".join(raws[k] for k in ks), np.uint8).reshape(len(ks), length)
        st = np.ascontiguousarray(buf[:, cdr.STAMP_OFFSET:cdr.STAMP_OFFSET + 8]).view("<u4")
        stamp[ks] = st[:, 0].view("<i4").astype(np.int64) * 10**9 + st[:, 1]
        X[ks, :7] = np.ascontiguousarray(buf[:, off:off + cdr.ODOM_POSE_BYTES]).view("<f8")
        twist = off + cdr.ODOM_TWIST_OFFSET
        X[ks, 7:] = np.ascontiguousarray(buf[:, twist:twist + cdr.ODOM_TWIST_BYTES]).view("<f8")
    return stamp, X


def read_description(reader, topic):
    """The last std_msgs/String on ``topic`` (the URDF), or None when there is none."""
    cons = connection(reader, topic, STRING, required=False)
    text = None
    for con, _, raw in reader.messages(connections=cons):
        text = typestore().deserialize_cdr(raw, STRING).data
    return text


def output_template(msgtype, fields, sizes, names):
    """A :class:`rbd_ros.cdr.Template` of one output type, serialized by rosbags: the
    float64[] ``fields`` have ``sizes`` elements, the name list is ``names``."""
    store = typestore()
    cls = store.types[msgtype]
    time_t = store.types["builtin_interfaces/msg/Time"]
    header_t = store.types["std_msgs/msg/Header"]
    marks = cdr.sentinels(sizes)
    kwargs = {"header": header_t(stamp=time_t(sec=0, nanosec=0), frame_id="")}
    if msgtype == JOINT_STATE:
        kwargs.update(name=list(names), position=np.empty(0), velocity=np.empty(0))
    else:
        kwargs["names"] = list(names)
        if msgtype.endswith("JointMatrix"):
            n = int(round(np.sqrt(sizes[0])))
            kwargs.update(rows=n, cols=n)
        elif msgtype.endswith("DynamicsDerivatives"):
            kwargs["size"] = int(round(np.sqrt(sizes[0])))
    kwargs.update(zip(fields, marks))
    return cdr.Template(store.serialize_cdr(cls(**kwargs), msgtype), marks)


def open_writer(path, storage):
    path = Path(path)
    if path.exists():
        raise ReplayError(f"output {path} exists: remove it or choose another -o")
    plugin = {"mcap": StoragePlugin.MCAP, "sqlite3": StoragePlugin.SQLITE3}[storage]
    writer = Writer(path, version=9, storage_plugin=plugin)
    writer.open()
    return writer


def add_connection(writer, topic, msgtype):
    return writer.add_connection(topic, msgtype, typestore=typestore())


def copy_connection(writer, con):
    """A writer connection like the reader's ``con`` (same type, definition and QoS)."""
    ext = con.ext
    kwargs = {"serialization_format": getattr(ext, "serialization_format", "cdr"),
              "offered_qos_profiles": getattr(ext, "offered_qos_profiles", ())}
    msgdef = getattr(con.msgdef, "data", None)
    if msgdef and con.digest:
        return writer.add_connection(con.topic, con.msgtype, msgdef=msgdef, rihs01=con.digest,
                                     **kwargs)
    return writer.add_connection(con.topic, con.msgtype, typestore=typestore(), **kwargs)
