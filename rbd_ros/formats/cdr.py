"""
Little-endian CDR of the few messages rbd_ros reads and writes at a high rate.

ROS 2 serializes messages as CDR (OMG XCDR1): a 4-byte encapsulation header (byte 1 is 1 for
little endian), then the fields in order, each primitive aligned to its size counted from the
end of that header; strings and sequences are a uint32 count then the elements. Nothing here
depends on ROS: the node (rclpy) and the replay tool (rosbags) hand in bytes.

Why not the generic deserializers: for a 32-joint sensor_msgs/JointState rclpy takes ~16 µs
and for a nav_msgs/Odometry ~39 µs (two 36-element covariance arrays become numpy arrays);
reading the few numbers the node needs takes ~2 µs. Output messages of one topic differ only
in their stamp and float64 arrays, so one serialized message is a template that a tick patches
in place: patching and publishing the bytes of a 38-name, 38×38 message took ~6 µs, against
~10 µs for rclpy to convert and publish the message (measured, no subscriber).

Big-endian or otherwise unexpected bytes are not guessed at: the decoders return None, or hand
them to the caller's generic deserializer (rclpy's in the node, rosbags' in the replay).
"""
import struct

import numpy as np

U32 = struct.Struct("<I")
STAMP = struct.Struct("<iI")          # builtin_interfaces/Time: int32 sec, uint32 nanosec
STAMP_OFFSET = 4                      # std_msgs/Header first: its stamp follows the encapsulation

# nav_msgs/Odometry after its two strings, in bytes from odometry_offset(): the pose (position
# xyz, orientation xyzw) first, then the 36 pose covariances, then the twist (linear xyz,
# angular xyz)
ODOM_POSE_BYTES = 8 * 7
ODOM_TWIST_OFFSET = 8 * (7 + 36)
ODOM_TWIST_BYTES = 8 * 6


def is_little_endian_cdr(raw):
    return len(raw) >= 4 and raw[0] == 0 and raw[1] == 1


def align(offset, size):
    """``offset`` rounded up to a multiple of ``size``, counted from after the 4-byte header."""
    return offset + (-(offset - 4)) % size


def string_end(raw, offset):
    """Offset just past the CDR string at ``offset`` (uint32 length incl. the NUL, bytes)."""
    offset = align(offset, 4)
    return offset + 4 + U32.unpack_from(raw, offset)[0]


class JointStateDecoder:
    """
    sensor_msgs/JointState bytes -> names, stamp and the three float64 arrays, zero-copy.

    A publisher sends the same name list every time: the bytes of the last few distinct lists
    are kept, and a message whose bytes start the same way reuses the decoded names (the CDR
    strings carry their lengths, so equal bytes mean equal lists). Equal but for the padding
    between the strings counts too: serializers need not zero it (Fast CDR's, behind
    rclpy's, leaves what was in its buffer there), so it differs from message to message.
    """

    def __init__(self, keep=16):
        self.keep = keep
        # (names bytes, names tuple, their bytes as a little-endian integer with the padding
        # zeroed, the mask of the bytes that are not padding), most recent first
        self.layouts = []
        self.last_names = None    # the last message's entry of layouts (None: not decoded)

    def names_bytes(self):
        """
        Return the last decoded message's name list as bytes, and which are not padding.

        Returns
        -------
        tuple of ndarray of uint8, or None
            (its CDR bytes, 0xFF where a byte is not padding), or None when the last
            message was not decoded (not little-endian CDR, or malformed).

        """
        if self.last_names is None:
            return None
        blob, _, _, mask = self.last_names
        return (np.frombuffer(blob, np.uint8),
                np.frombuffer(mask.to_bytes(len(blob), "little"), np.uint8))

    def names(self, raw, start):
        """(names tuple, offset after the list) of the string sequence at ``start``."""
        for k, (blob, names, content, mask) in enumerate(self.layouts):
            end = start + len(blob)
            if raw.startswith(blob, start) or (
                    end <= len(raw)
                    and (int.from_bytes(raw[start:end], "little") ^ content) & mask == 0):
                if k:
                    self.layouts.insert(0, self.layouts.pop(k))
                self.last_names = self.layouts[0]
                return names, end
        count = U32.unpack_from(raw, start)[0]
        if count > len(raw):
            raise ValueError(f"JointState claims {count} names in {len(raw)} bytes")
        offset, names, padding = start + 4, [], []
        for _ in range(count):
            aligned = align(offset, 4)
            padding.extend(range(offset - start, aligned - start))
            offset = aligned
            n = U32.unpack_from(raw, offset)[0]
            if n == 0 or offset + 4 + n > len(raw):
                raise ValueError("JointState name runs past the end of the message")
            names.append(bytes(raw[offset + 4:offset + 3 + n]).decode("utf-8"))
            offset += 4 + n
        names = tuple(names)
        blob = bytes(raw[start:offset])
        kept = bytearray(b"\xff") * len(blob)     # built once: linear in the list's length
        for k in padding:
            kept[k] = 0
        mask = int.from_bytes(kept, "little")
        self.layouts.insert(0, (blob, names, int.from_bytes(blob, "little") & mask, mask))
        del self.layouts[self.keep:]
        self.last_names = self.layouts[0]
        return names, offset

    def layout(self, raw):
        """
        Find the names, the stamp and where the three arrays are.

        (names, (sec, nanosec), [(offset, count)] for position, velocity, effort), or None
        for bytes that are not little-endian CDR. Raises ValueError for truncated bytes.
        """
        self.last_names = None
        if not is_little_endian_cdr(raw):
            return None
        try:
            stamp = STAMP.unpack_from(raw, STAMP_OFFSET)
            names, offset = self.names(raw, align(string_end(raw, 12), 4))
            arrays = []
            for _ in range(3):
                offset = align(offset, 4)
                n = U32.unpack_from(raw, offset)[0]
                offset = align(offset + 4, 8) if n else offset + 4
                arrays.append((offset, n))
                offset += 8 * n
        except struct.error as exc:
            self.last_names = None
            raise ValueError(f"truncated JointState ({len(raw)} bytes): {exc}") from None
        if offset > len(raw):
            self.last_names = None
            raise ValueError(f"JointState arrays run past the end of its {len(raw)} bytes")
        return names, stamp, arrays

    def decode(self, raw):
        """
        Decode JointState bytes without copying the arrays.

        (names, (sec, nanosec), position, velocity, effort) as read-only float64 views of
        ``raw``, or None (not little-endian CDR).
        """
        layout = self.layout(raw)
        if layout is None:
            return None
        names, stamp, arrays = layout
        return (names, stamp, *(np.frombuffer(raw, "<f8", n, off) for off, n in arrays))


def odometry_offset(raw):
    """Offset of the pose in nav_msgs/Odometry bytes (after header.frame_id, child_frame_id)."""
    return align(string_end(raw, string_end(raw, 12)), 8)


def decode_odometry(raw, deserialize=None):
    """
    Decode the stamp, pose and twist of nav_msgs/Odometry bytes.

    ((sec, nanosec), [x y z qx qy qz qw vx vy vz wx wy wz]) of nav_msgs/Odometry bytes: the
    pose in the odometry frame, the twist in the child (base) frame, as Odometry defines them.

    Bytes that are not little-endian CDR go through ``deserialize`` (the caller's generic
    deserializer, rclpy's or rosbags': bytes -> message), or give None without one. Raises
    ValueError for truncated bytes.
    """
    if not is_little_endian_cdr(raw):
        if deserialize is None:
            return None
        msg = deserialize(raw)
        return (msg.header.stamp.sec, msg.header.stamp.nanosec), odometry_values(msg)
    try:
        stamp = STAMP.unpack_from(raw, STAMP_OFFSET)
        offset = odometry_offset(raw)
    except struct.error as exc:
        raise ValueError(f"truncated Odometry ({len(raw)} bytes): {exc}") from None
    if offset + ODOM_TWIST_OFFSET + ODOM_TWIST_BYTES > len(raw):
        raise ValueError(f"truncated Odometry ({len(raw)} bytes)")
    values = np.empty(13)
    values[:7] = np.frombuffer(raw, "<f8", 7, offset)
    values[7:] = np.frombuffer(raw, "<f8", 6, offset + ODOM_TWIST_OFFSET)
    return stamp, values


def decode_wrench_stamped(raw, deserialize=None):
    """
    Decode geometry_msgs/WrenchStamped bytes: ((sec, nanosec), frame_id, [fx fy fz tx ty tz]).

    Bytes that are not little-endian CDR go through ``deserialize`` (as
    :func:`decode_odometry`), or give None without one. Raises ValueError for truncated
    bytes or a frame_id that is not UTF-8.
    """
    if not is_little_endian_cdr(raw):
        if deserialize is None:
            return None
        msg = deserialize(raw)
        w = msg.wrench
        return ((msg.header.stamp.sec, msg.header.stamp.nanosec), msg.header.frame_id,
                np.array([w.force.x, w.force.y, w.force.z,
                          w.torque.x, w.torque.y, w.torque.z]))
    try:
        stamp = STAMP.unpack_from(raw, STAMP_OFFSET)
        end = string_end(raw, 12)
        frame = bytes(raw[16:end]).rstrip(b"\0").decode("utf-8")
    except (struct.error, UnicodeDecodeError) as exc:
        raise ValueError(f"malformed WrenchStamped ({len(raw)} bytes): {exc}") from None
    offset = align(end, 8)
    if end > len(raw) or offset + 48 > len(raw):
        raise ValueError(f"truncated WrenchStamped ({len(raw)} bytes)")
    return stamp, frame, np.frombuffer(raw, "<f8", 6, offset).astype(np.float64)


def decode_odometry_many(raws, deserialize):
    """
    Decode many nav_msgs/Odometry messages at once.

    (stamps (K, 2) [sec, nanosec], values (K, 13)) of K nav_msgs/Odometry messages, as
    :func:`decode_odometry` gives them one by one, read with numpy once per layout (length
    and frame names) instead of message by message. Bytes that do not decode give NaN
    values (an odometry message the node ignores).
    """
    K = len(raws)
    stamps, values = np.zeros((K, 2), np.int64), np.zeros((K, 13))
    groups = {}
    for k, raw in enumerate(raws):
        try:
            if not is_little_endian_cdr(raw):
                stamps[k], values[k] = decode_odometry(raw, deserialize)
                continue
            offset = odometry_offset(raw)
            if offset + ODOM_TWIST_OFFSET + ODOM_TWIST_BYTES > len(raw):
                raise ValueError(f"truncated Odometry ({len(raw)} bytes)")
        except Exception:        # struct.error, ValueError, the deserializer's own errors
            values[k] = np.nan
            continue
        groups.setdefault((len(raw), offset), []).append(k)
    for (length, off), ks in groups.items():
        ks = np.array(ks)
        buf = np.frombuffer(b"".join(raws[k] for k in ks), np.uint8).reshape(len(ks), length)
        st = np.ascontiguousarray(buf[:, STAMP_OFFSET:STAMP_OFFSET + 8]).view("<u4")
        stamps[ks, 0] = st[:, 0].view("<i4")
        stamps[ks, 1] = st[:, 1]
        values[ks, :7] = np.ascontiguousarray(buf[:, off:off + ODOM_POSE_BYTES]).view("<f8")
        twist = off + ODOM_TWIST_OFFSET
        values[ks, 7:] = np.ascontiguousarray(buf[:, twist:twist + ODOM_TWIST_BYTES]).view("<f8")
    return stamps, values


def odometry_values(msg):
    """
    Return the 13 numbers of :func:`decode_odometry` from a deserialized message.

    The 13 numbers of :func:`decode_odometry` from a deserialized nav_msgs/Odometry
    (rclpy's or rosbags').
    """
    p, t = msg.pose.pose, msg.twist.twist
    return np.array([p.position.x, p.position.y, p.position.z, p.orientation.x,
                     p.orientation.y, p.orientation.z, p.orientation.w, t.linear.x, t.linear.y,
                     t.linear.z, t.angular.x, t.angular.y, t.angular.z])


# rosidl primitive type -> struct format (little endian)
_PRIMITIVES = {"boolean": "?", "octet": "B", "uint8": "B", "int8": "b", "int16": "h",
               "uint16": "H", "int32": "i", "uint32": "I", "float": "f", "int64": "q",
               "uint64": "Q", "double": "d"}


def serialize(msg):
    """
    Serialize a ROS 2 Python message as little-endian CDR.

    Little-endian CDR bytes of a ROS 2 Python message (anything with rosidl's
    ``get_fields_and_field_types``), for building a :class:`Template` once.

    Not rclpy's ``serialize_message``: with rmw_fastrtps 8.4.3 that returns 8 bytes past the
    end of the message and leaves the alignment padding uninitialized (measured), and a
    template is sent thousands of times a second. Covers primitives, strings, unbounded
    sequences, fixed arrays and nested messages; anything else raises ValueError.
    """
    out = bytearray(b"\x00\x01\x00\x00")
    _write_message(out, msg)
    return bytes(out)


def _write_message(out, msg):
    for name, type_name in msg.get_fields_and_field_types().items():
        _write(out, type_name, getattr(msg, name))


def _write(out, type_name, value):
    fmt = _PRIMITIVES.get(type_name)
    if fmt is not None:
        size = struct.calcsize(fmt)
        out.extend(bytes(align(len(out), size) - len(out)))
        out.extend(struct.pack("<" + fmt, value))
    elif type_name == "string":
        data = value.encode("utf-8") + b"\x00"
        out.extend(bytes(align(len(out), 4) - len(out)))
        out.extend(U32.pack(len(data)) + data)
    elif type_name.startswith("sequence<") and "," not in type_name:
        out.extend(bytes(align(len(out), 4) - len(out)))
        out.extend(U32.pack(len(value)))
        for item in value:
            _write(out, type_name[9:-1], item)
    elif type_name.endswith("]") and "<=" not in type_name:
        for item in value:                          # T[N]: the elements, no count
            _write(out, type_name[:type_name.index("[")], item)
    elif "/" in type_name:
        _write_message(out, value)
    else:
        raise ValueError(f"cdr.serialize: field type {type_name!r} is not supported")


def sentinels(sizes):
    """
    Return marker arrays of the given sizes for a :class:`Template`.

    Distinct float64 arrays of the given sizes whose bytes occur nowhere else in a message
    (non-integer, increasing): serialized into a template, they mark where each array goes.
    """
    out, start = [], 0.5
    for size in sizes:
        out.append(start + np.arange(size, dtype=np.float64))
        start += size + 0.25
    return out


class Template:
    """
    Messages of one topic made from one serialized example.

    Messages of one topic from one serialized example: only the header stamp and some
    float64 arrays vary (same names, same sizes).

    ``raw``: the example serialized with a zero stamp and ``marks`` (see :func:`sentinels`)
    as its float64 arrays. Raises ValueError when the bytes are not little-endian CDR or
    a mark cannot be found, so the caller can fall back to building messages.
    """

    def __init__(self, raw, marks):
        raw = bytes(raw)
        if not is_little_endian_cdr(raw) or raw[STAMP_OFFSET:STAMP_OFFSET + 8] != bytes(8):
            raise ValueError("not little-endian CDR with a zero header stamp")
        self.template = np.frombuffer(raw, np.uint8)
        self.offsets = []
        for mark in marks:
            offset = raw.find(np.asarray(mark, "<f8").tobytes())
            if offset < 0:
                raise ValueError(f"an array of {len(mark)} float64 is not in the template")
            self.offsets.append((offset, len(mark)))
        self._buffer = bytearray(raw)      # fill() patches this one in place
        self._views = [np.frombuffer(self._buffer, "<f8", n, off) for off, n in self.offsets]

    def fill(self, stamp, *arrays):
        """
        Return one message's bytes.

        One message's bytes: ``stamp`` (sec, nanosec), then one array per mark, in order
        (any shape with the mark's number of elements).
        """
        STAMP.pack_into(self._buffer, STAMP_OFFSET, *stamp)
        for view, values in zip(self._views, arrays):
            view[:] = values.reshape(-1)
        return bytes(self._buffer)

    def encode(self, sec, nanosec, *arrays):
        """
        Return many messages' bytes.

        Many messages' bytes: one per entry of ``sec``, ``nanosec`` and ``arrays[k]``
        (N, ...).
        """
        n = len(sec)
        buf = np.empty((n, self.template.size), np.uint8)
        buf[:] = self.template
        stamp = np.empty((n, 2), np.uint32)
        stamp[:, 0] = np.asarray(sec, np.int64).astype(np.int32).view(np.uint32)
        stamp[:, 1] = nanosec
        buf[:, STAMP_OFFSET:STAMP_OFFSET + 8] = stamp.view(np.uint8).reshape(n, 8)
        for (offset, size), values in zip(self.offsets, arrays):
            data = np.ascontiguousarray(np.asarray(values, "<f8").reshape(n, size))
            buf[:, offset:offset + 8 * size] = data.view(np.uint8)
        return [row.tobytes() for row in buf]
