"""
Read and write rosbag2 with ``rosbags``.

rosbag2 in and out with ``rosbags``: the message types, fast CDR decoding of the inputs
and template encoding of the node's outputs (``rbd_ros.outputs.OUTPUTS``).

The typestore is ROS 2 Jazzy's plus the ``rbd_ros_interfaces`` messages, registered from
their ``.msg`` definitions (``rbd_ros/replay/msg``, copies of ``rbd_ros_interfaces/msg``
that a test keeps identical), so the output bag uses exactly the node's message types.

Decoding: joint_states and odometry are parsed straight from their little-endian CDR bytes
(``rbd_ros.formats.cdr``, shared with the node); anything else goes through ``rosbags``' own
deserializer (:func:`deserialize_joint_state`, :func:`deserialize_odometry`). Encoding: every
output of one topic has the same layout (same names, same sizes) except the header stamp and
the float64 arrays, so one message is serialized by ``rosbags`` as a ``cdr.Template`` and N
messages are filled in with numpy; a test checks the
bytes against ``rosbags``' serializer.
"""
import functools
import os
from pathlib import Path

import numpy as np
from rosbags.rosbag2 import Reader, StoragePlugin, Writer
from rosbags.typesys import Stores, get_types_from_msg, get_typestore

from ..formats import cdr
from .. import outputs
from ..outputs import whole_body
from .errors import ReplayError, excerpt, shorten  # noqa: F401 (ReplayError: re-exported)

MSG_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "msg")
INTERFACES = ("JointVector", "JointMatrix", "DynamicsDerivatives", "Collision")
INTERFACES += ("EndEffector", "CentroidalMomentum")      # the whole-body outputs
JOINT_STATE = outputs.JOINT_STATE
ODOMETRY = "nav_msgs/msg/Odometry"
STRING = "std_msgs/msg/String"


@functools.lru_cache(maxsize=None)
def typestore():
    """ROS 2 Jazzy's message types plus those of rbd_ros_interfaces."""
    store = get_typestore(Stores.ROS2_JAZZY)
    types = {}
    for name in INTERFACES:
        with open(os.path.join(MSG_DIR, name + ".msg"), encoding="utf-8") as f:
            types.update(get_types_from_msg(f.read(), f"rbd_ros_interfaces/msg/{name}"))
    store.register(types)
    return store


def open_reader(path):
    """Open a rosbags Reader of the bag at ``path``; ReplayError when it cannot be."""
    path = Path(path)
    if not os.path.exists(path):                  # False, not OSError, for a name too long
        raise ReplayError(f"no such bag: {excerpt(path)}")
    try:
        reader = Reader(path)
        reader.open()
    except Exception as exc:
        raise ReplayError(f"cannot open {excerpt(path)} as a rosbag2 (sqlite3 or mcap): "
                          f"{shorten(exc, 200)}") from exc
    return reader


def connection(reader, topic, msgtype, required=True):
    """Return the reader's connections of ``topic``, checked to carry ``msgtype``."""
    cons = [c for c in reader.connections if c.topic == topic]
    if not cons:
        if not required:
            return []
        topics = sorted({(c.topic, c.msgtype) for c in reader.connections})
        listing = ", ".join(f"{shorten(t, 60)} ({shorten(m, 60)})"
                            for t, m in topics[:10]) or "none"
        if len(topics) > 10:
            listing += f" and {len(topics) - 10} more"
        raise ReplayError(f"the bag has no topic {excerpt(topic)}; its topics: {listing}")
    bad = [c.msgtype for c in cons if c.msgtype != msgtype]
    if bad:
        raise ReplayError(f"topic {excerpt(topic)} carries {shorten(bad[0], 60)}, "
                          f"expected {msgtype}")
    return cons


def deserialize_joint_state(raw):
    """
    Decode a sensor_msgs/JointState with rosbags' deserializer.

    (names, (sec, nanosec), [position, velocity, effort]) through rosbags' deserializer:
    for bytes the fast decoder does not take (big-endian CDR).
    """
    msg = typestore().deserialize_cdr(raw, JOINT_STATE)
    return (tuple(msg.name), (msg.header.stamp.sec, msg.header.stamp.nanosec),
            [np.asarray(a, np.float64) for a in (msg.position, msg.velocity, msg.effort)])


def deserialize_odometry(raw):
    """
    Deserialize a nav_msgs/Odometry with rosbags.

    A nav_msgs/Odometry through rosbags' deserializer: the fallback of
    ``rbd_ros.formats.cdr.decode_odometry`` for bytes it does not read itself.
    """
    return typestore().deserialize_cdr(raw, ODOMETRY)


def read_descriptions(reader, topic):
    """
    Return the descriptions on ``topic`` in log-time order: [(log time ns, URDF text)].

    A message that repeats the description in force (a latched one re-sent) is left out:
    each entry is a change.
    """
    cons = connection(reader, topic, STRING, required=False)
    out = []
    for con, stamp, raw in reader.messages(connections=cons):
        text = typestore().deserialize_cdr(raw, STRING).data
        if not out or out[-1][1] != text:
            out.append((stamp, text))
    return out


def single_description(reader, topic):
    """
    Return the one description on ``topic`` (None: none); ReplayError when it changes.

    For what evaluates a bag with one model (a fleet task's windows): a bag whose robot
    changes is refused with the reason, never evaluated with one of its descriptions.
    """
    found = read_descriptions(reader, topic)
    if len(found) > 1:
        raise ReplayError(f"the bag's {excerpt(topic)} changes {len(found) - 1} times: a single "
                          "rbd_replay of it evaluates each part with its own description "
                          "(segments), or pass --urdf to use one for the whole bag")
    return found[0][1] if found else None


def output_template(output, model):
    """
    Serialize the :class:`rbd_ros.formats.cdr.Template` of one output with rosbags.

    A :class:`rbd_ros.formats.cdr.Template` of one ``rbd_ros.outputs.Output`` for ``model``,
    serialized by rosbags.
    """
    store = typestore()
    cls = store.types[output.msgtype]
    time_t = store.types["builtin_interfaces/msg/Time"]
    header_t = store.types["std_msgs/msg/Header"]
    marks = cdr.sentinels(outputs.array_sizes(output, model))
    kwargs = {"header": header_t(stamp=time_t(sec=0, nanosec=0), frame_id=""),
              **outputs.message_fields(output, model)}
    if output.msgtype == JOINT_STATE:             # rosbags wants every field
        kwargs.update(position=np.empty(0), velocity=np.empty(0))
    kwargs.update(zip(output.fields, marks))
    return cdr.Template(store.serialize_cdr(cls(**kwargs), output.msgtype), marks)


class MessageTemplate:
    """
    A whole-body output's messages (``rbd_ros.outputs.whole_body``), each built by rosbags.

    Their flags vary from message to message, which a :class:`cdr.Template` cannot patch;
    ``encode`` has the template's signature. ``frame``: ~/end_effector's link.
    """

    def __init__(self, output, model, frame):
        self.output, self.model, self.frame = output, model, frame
        self.store = typestore()

    def encode(self, sec, nanosec, *arrays):
        """Return many messages' bytes: one per entry of ``sec``, ``nanosec``, ``arrays[k]``."""
        encoded = []
        for k in range(len(sec)):
            values = whole_body.message_values(self.output.name, self.model, self.frame,
                                               [x[k] for x in arrays])
            values["header"]["stamp"] = {"sec": int(sec[k]), "nanosec": int(nanosec[k])}
            msg = _build(self.store, self.output.msgtype, values)
            encoded.append(self.store.serialize_cdr(msg, self.output.msgtype))
        return encoded


# the message type of each nested field of the whole-body messages, by field name
_NESTED = {"header": "std_msgs/msg/Header", "stamp": "builtin_interfaces/msg/Time",
           "point": "geometry_msgs/msg/Point", "position": "geometry_msgs/msg/Point",
           "center_of_mass": "geometry_msgs/msg/Point",
           "orientation": "geometry_msgs/msg/Quaternion", "linear": "geometry_msgs/msg/Vector3",
           "angular": "geometry_msgs/msg/Vector3", "pose": "geometry_msgs/msg/Pose",
           "twist": "geometry_msgs/msg/Twist"}


def _build(store, msgtype, values):
    """Return the rosbags message ``msgtype`` of nested plain ``values``."""
    fields = {}
    for name, value in values.items():
        if isinstance(value, dict):
            fields[name] = _build(store, _NESTED[name], value)
        elif isinstance(value, list):
            fields[name] = np.array(value, bool)
        elif isinstance(value, np.ndarray):
            fields[name] = np.asarray(value, np.float64)
        else:
            fields[name] = value
    return store.types[msgtype](**fields)


def open_writer(path, storage):
    """Open a new rosbags Writer at ``path`` (which must not exist)."""
    path = Path(path)
    if path.exists():
        raise ReplayError(f"output {excerpt(path)} exists: remove it or choose another -o")
    plugin = {"mcap": StoragePlugin.MCAP, "sqlite3": StoragePlugin.SQLITE3}[storage]
    writer = Writer(path, version=9, storage_plugin=plugin)
    writer.open()
    return writer


def write_joint_states(out, urdf, joint_names, t, q, v, effort, start=1_700_000_000.0,
                       storage="mcap", description_topic="/robot_description",
                       topic="/joint_states"):
    """
    Write a new rosbag2 ``out``: the URDF, then one JointState per sample.

    Each stamped at start + t (s), logged 0.5 ms later; the URDF 1 ms before the first.
    """
    store = typestore()
    T = store.types["builtin_interfaces/msg/Time"]
    H = store.types["std_msgs/msg/Header"]
    JS = store.types[JOINT_STATE]
    writer = open_writer(out, storage)
    try:
        if description_topic:
            c_desc = add_connection(writer, description_topic, STRING)
            writer.write(c_desc, int(start * 1e9) - 1_000_000,
                         store.serialize_cdr(store.types[STRING](data=urdf), STRING))
        c_js = add_connection(writer, topic, JOINT_STATE)
        names = list(joint_names)
        for k, tk in enumerate(t):
            ns = int(round(start * 1e9)) + int(round(tk * 1e9))
            msg = JS(header=H(stamp=T(sec=ns // 10 ** 9, nanosec=ns % 10 ** 9), frame_id=""),
                     name=names, position=np.asarray(q[k], float),
                     velocity=np.asarray(v[k], float), effort=np.asarray(effort[k], float))
            writer.write(c_js, ns + 500_000, store.serialize_cdr(msg, JOINT_STATE))
    finally:
        writer.close()


def add_connection(writer, topic, msgtype):
    """Add a writer connection of ``topic`` with the type from :func:`typestore`."""
    return writer.add_connection(topic, msgtype, typestore=typestore())


def copy_connection(writer, con):
    """Add a writer connection like the reader's ``con`` (same type, definition and QoS)."""
    ext = con.ext
    kwargs = {"serialization_format": getattr(ext, "serialization_format", "cdr"),
              "offered_qos_profiles": getattr(ext, "offered_qos_profiles", ())}
    msgdef = getattr(con.msgdef, "data", None)
    if msgdef and con.digest:
        return writer.add_connection(con.topic, con.msgtype, msgdef=msgdef, rihs01=con.digest,
                                     **kwargs)
    return writer.add_connection(con.topic, con.msgtype, typestore=typestore(), **kwargs)
