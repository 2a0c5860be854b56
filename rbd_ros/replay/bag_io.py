"""rosbag2 in and out with ``rosbags``: the message types, fast CDR decoding of the inputs
and template encoding of the node's outputs.

The typestore is ROS 2 Jazzy's plus the ``rbd_ros_interfaces`` messages, registered from
their ``.msg`` definitions (``rbd_ros/replay/msg``, copies of ``rbd_ros_interfaces/msg``
that a test keeps identical), so the output bag uses exactly the node's message types.

Decoding: joint_states and odometry are parsed straight from their little-endian CDR bytes
(messages from one publisher share a layout, found once); anything else goes through
``rosbags``' own deserializer. Encoding: every output of one topic has the same layout
(same names, same sizes) except the header stamp and the float64 arrays, so one message is
serialized by ``rosbags`` as a template and N messages are filled in with numpy; a test
checks the bytes against ``rosbags``' serializer.
"""
import functools
import os
import struct
from pathlib import Path

import numpy as np
from rosbags.rosbag2 import Reader, StoragePlugin, Writer
from rosbags.typesys import Stores, get_types_from_msg, get_typestore

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
_U32 = struct.Struct("<I")
_STAMP = struct.Struct("<iI")


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


def _align(off, n):
    return off + (-(off - 4)) % n          # CDR alignment counts from after the 4-byte header


def _string_end(raw, off):
    off = _align(off, 4)
    return off + 4 + _U32.unpack_from(raw, off)[0]


class JointStateDecoder:
    """sensor_msgs/JointState CDR bytes -> (names, position, velocity, effort, stamp)."""

    def __init__(self):
        self.layouts = []            # (names bytes, names tuple), most recent first

    def names(self, raw, start):
        for k, (blob, names) in enumerate(self.layouts):
            if raw.startswith(blob, start):
                if k:
                    self.layouts.insert(0, self.layouts.pop(k))
                return names, start + len(blob)
        count = _U32.unpack_from(raw, start)[0]
        off, names = start + 4, []
        for _ in range(count):
            off = _align(off, 4)
            n = _U32.unpack_from(raw, off)[0]
            names.append(raw[off + 4:off + 3 + n].decode("utf-8"))
            off += 4 + n
        names = tuple(names)
        self.layouts.insert(0, (raw[start:off], names))
        del self.layouts[16:]
        return names, off

    def layout(self, raw):
        """(names, stamp (sec, nanosec), [(offset, count)] * 3) of one message."""
        if raw[1] != 1:
            return None                                     # not little-endian CDR
        stamp = _STAMP.unpack_from(raw, 4)
        names, off = self.names(raw, _align(_string_end(raw, 12), 4))
        arrays = []
        for _ in range(3):
            off = _align(off, 4)
            n = _U32.unpack_from(raw, off)[0]
            off = _align(off + 4, 8) if n else off + 4
            arrays.append((off, n))
            off += 8 * n
        return names, stamp, arrays

    @staticmethod
    def slow(raw):
        msg = typestore().deserialize_cdr(raw, JOINT_STATE)
        return (tuple(msg.name), (msg.header.stamp.sec, msg.header.stamp.nanosec),
                [np.asarray(a, np.float64) for a in (msg.position, msg.velocity, msg.effort)])


def decode_odometry(raw):
    """(stamp ns, [x y z qx qy qz qw vx vy vz wx wy wz]) of a nav_msgs/Odometry."""
    if raw[1] != 1:
        msg = typestore().deserialize_cdr(raw, ODOMETRY)
        p, t = msg.pose.pose, msg.twist.twist
        values = [p.position.x, p.position.y, p.position.z, p.orientation.x, p.orientation.y,
                  p.orientation.z, p.orientation.w, t.linear.x, t.linear.y, t.linear.z,
                  t.angular.x, t.angular.y, t.angular.z]
        return msg.header.stamp.sec * 10**9 + msg.header.stamp.nanosec, np.array(values)
    sec, nsec = _STAMP.unpack_from(raw, 4)
    off = _align(_string_end(raw, _string_end(raw, 12)), 8)   # frame_id, child_frame_id
    pose = np.frombuffer(raw, "<f8", 7, off)
    twist = np.frombuffer(raw, "<f8", 6, off + 8 * (7 + 36))
    return sec * 10**9 + nsec, np.concatenate([pose, twist])


def decode_odometry_many(raws):
    """(stamps ns (K,), (K, 13) arrays) of many nav_msgs/Odometry, vectorized per layout."""
    K = len(raws)
    stamp, X = np.zeros(K, np.int64), np.zeros((K, 13))
    groups = {}
    for k, raw in enumerate(raws):
        if raw[1] != 1:
            stamp[k], X[k] = decode_odometry(raw)
            continue
        off = _align(_string_end(raw, _string_end(raw, 12)), 8)
        groups.setdefault((len(raw), off), []).append(k)
    for (length, off), ks in groups.items():
        ks = np.array(ks)
        buf = np.frombuffer(b"".join(raws[k] for k in ks), np.uint8).reshape(len(ks), length)
        st = np.ascontiguousarray(buf[:, 4:12]).view(np.uint32)
        stamp[ks] = st[:, 0].view(np.int32).astype(np.int64) * 10**9 + st[:, 1]
        X[ks, :7] = np.ascontiguousarray(buf[:, off:off + 56]).view("<f8")
        X[ks, 7:] = np.ascontiguousarray(buf[:, off + 344:off + 392]).view("<f8")
    return stamp, X


def read_description(reader, topic):
    """The last std_msgs/String on ``topic`` (the URDF), or None when there is none."""
    cons = connection(reader, topic, STRING, required=False)
    text = None
    for con, _, raw in reader.messages(connections=cons):
        text = typestore().deserialize_cdr(raw, STRING).data
    return text


class Template:
    """N messages of one type from one template: only the stamps and float64 arrays vary."""

    def __init__(self, msgtype, fields, sizes, names):
        store = typestore()
        cls = store.types[msgtype]
        time_t = store.types["builtin_interfaces/msg/Time"]
        header_t = store.types["std_msgs/msg/Header"]
        values = {}
        base = 0.5
        for field, size in zip(fields, sizes):
            values[field] = base + np.arange(size, dtype=np.float64)
            base += size + 0.25
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
        kwargs.update(values)
        raw = bytes(store.serialize_cdr(cls(**kwargs), msgtype))
        self.template = np.frombuffer(raw, np.uint8)
        self.offsets = []
        for field in fields:
            off = raw.find(values[field].tobytes())
            if off < 0 or raw[4:12] != bytes(8):
                raise RuntimeError(f"template of {msgtype}: cannot place {field}")
            self.offsets.append((off, values[field].size))

    def encode(self, sec, nanosec, *arrays):
        """Rows of CDR bytes: one message per entry of sec / nanosec / arrays[k] (N, ...)."""
        n = len(sec)
        buf = np.empty((n, self.template.size), np.uint8)
        buf[:] = self.template
        stamp = np.empty((n, 2), np.uint32)
        stamp[:, 0] = np.asarray(sec, np.int64).astype(np.int32).view(np.uint32)
        stamp[:, 1] = nanosec
        buf[:, 4:12] = stamp.view(np.uint8).reshape(n, 8)
        for (off, size), arr in zip(self.offsets, arrays):
            data = np.ascontiguousarray(np.asarray(arr, "<f8").reshape(n, size))
            buf[:, off:off + 8 * size] = data.view(np.uint8)
        return [row.tobytes() for row in buf]


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
