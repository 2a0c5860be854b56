"""
numpy arrays <-> ROS messages, in bulk (rclpy float64[] fields are array.array('d')).

The node's 1 kHz path reads and writes serialized bytes (``rbd_ros.formats.cdr``): rclpy's own
conversions cost more than the dynamics (see that module). Bytes in another encoding than
little-endian CDR go through rclpy's (de)serializer instead, with the same results. rclpy and
the message packages are imported on use.
"""
import array
import importlib

import numpy as np

from ..formats import cdr
from .. import outputs
from ..outputs import whole_body


def message_class(msgtype):
    """
    Return the rclpy message class of ``msgtype`` ("package/msg/Name").

    The rclpy message class of ``msgtype`` ("package/msg/Name"); ImportError when that
    package is not installed.
    """
    package, _, name = msgtype.split("/")
    return getattr(importlib.import_module(package + ".msg"), name)


def doubles(x):
    """Make a float64[] message field from a numpy array: one memcpy, no per-element checks."""
    out = array.array("d")
    out.frombytes(memoryview(np.ascontiguousarray(x, np.float64)).cast("B"))
    return out


def flat_doubles(x):
    """Return a float64[] field of ``x`` (any shape, flattened row-major; empty too)."""
    return doubles(x) if np.size(x) else array.array("d")


def vector(values):
    """View a float64[] field (array.array) as a numpy array, without copying."""
    if getattr(values, "typecode", None) == "d":
        return np.frombuffer(values, np.float64)
    return np.asarray(values, np.float64)


def fill_joint_matrix(msg, header, names, matrix):
    msg.header = header
    msg.names = names
    msg.rows, msg.cols = (int(n) for n in matrix.shape)
    msg.data = doubles(matrix)
    return msg


def fill_derivatives(msg, header, names, d_dq, d_dv):
    msg.header = header
    msg.names = names
    msg.size = int(d_dq.shape[0])
    msg.d_dq = doubles(d_dq)
    msg.d_dv = doubles(d_dv)
    return msg


def decode_joint_state(decoder, raw):
    """
    Decode serialized sensor_msgs/JointState bytes.

    (names, (sec, nanosec), position, velocity, effort) of serialized
    sensor_msgs/JointState bytes; ``decoder``: a :class:`rbd_ros.formats.cdr.JointStateDecoder`
    kept per subscription. Raises ValueError for bytes that do not decode.
    """
    decoded = decoder.decode(raw)
    if decoded is not None:
        return decoded
    from sensor_msgs.msg import JointState
    msg = _deserialize(raw, JointState)
    return (tuple(msg.name), (msg.header.stamp.sec, msg.header.stamp.nanosec),
            vector(msg.position), vector(msg.velocity), vector(msg.effort))


def _deserialize(raw, msg_type):
    """
    Deserialize ``raw`` with rclpy (the RMW's deserializer); ValueError if it cannot.

    The RMW raises RMWError (a RuntimeError) for bytes it cannot read, e.g. an unknown
    encapsulation header: from anyone on the topic, so that is a malformed message (the
    error names the first bytes), never an exception out of a callback.
    """
    from rclpy.serialization import deserialize_message
    try:
        return deserialize_message(raw, msg_type)
    except Exception as exc:      # RMWError and whatever else the RMW raises for bad bytes
        raise ValueError(f"{len(raw)} bytes starting {bytes(raw[:8]).hex(' ')} are not a "
                         f"{msg_type.__name__} the RMW can deserialize "
                         f"({type(exc).__name__})") from None


MAX_STAMP_AHEAD = 60.0      # s: an input stamp further ahead of this host's clock is refused


def stamp_problem(stamp, wall_now):
    """
    Say what is wrong with an input's header stamp, or return None.

    ``stamp``: (sec, nanosec); ``wall_now``: ``time.time()``. Wrong: a negative ``sec`` or
    a ``nanosec`` of a second or more ("invalid"), both zero ("zero": the publisher did not
    set it), more than ``MAX_STAMP_AHEAD`` seconds ahead of this host's clock ("in the
    future"). A stamp in the past is fine (simulated time, a robot clock since boot).
    """
    sec, nanosec = stamp
    if sec < 0 or not 0 <= nanosec < 1_000_000_000:
        return "invalid"
    if sec == 0 and nanosec == 0:
        return "zero"
    if sec > wall_now + MAX_STAMP_AHEAD:
        return "in the future"
    return None


def odometry_deserializer():
    """
    Return rclpy's deserializer of nav_msgs/Odometry bytes.

    rclpy's deserializer of nav_msgs/Odometry bytes: the fallback of
    :func:`rbd_ros.formats.cdr.decode_odometry` for bytes it does not read itself. ValueError for
    bytes that do not deserialize.
    """
    from nav_msgs.msg import Odometry

    def deserialize(raw):
        return _deserialize(raw, Odometry)
    return deserialize


def output_encoder(output, model, frame=""):
    """
    Return the :class:`OutputEncoder` of one ``rbd_ros.outputs.Output`` for ``model``.

    A whole-body output's is a :class:`MessageEncoder` (``frame``: ~/end_effector's link).
    """
    if output.name in whole_body.NAMES:
        return MessageEncoder(output, model, frame)
    msg = message_class(output.msgtype)(**outputs.message_fields(output, model))
    return OutputEncoder(msg, output.fields, outputs.array_sizes(output, model))


class MessageEncoder:
    """
    A whole-body output's messages (``rbd_ros.outputs.whole_body``), each built whole.

    Their flags vary from tick to tick, which patched bytes cannot carry; they are not
    reported as slow (``template``: what they are built from).
    """

    fallback_reason = None

    def __init__(self, output, model, frame):
        self.output, self.model, self.frame = output, model, frame
        self.msg_class = message_class(output.msgtype)
        self.template = "message"

    def encode(self, stamp, *arrays):
        """Return the message of one tick: header stamp ``stamp`` = (sec, nanosec)."""
        msg = self.msg_class()
        fill_message(msg, whole_body.message_values(self.output.name, self.model, self.frame,
                                                    arrays))
        msg.header.stamp.sec, msg.header.stamp.nanosec = stamp
        return msg


def fill_message(msg, values):
    """Set the fields of the rclpy message ``msg`` from nested plain ``values`` (dicts)."""
    for name, value in values.items():
        if isinstance(value, dict):
            fill_message(getattr(msg, name), value)
        else:
            setattr(msg, name, value)


class OutputEncoder:
    """
    One output topic's messages, ready for ``Publisher.publish``.

    One output topic's messages, ready for ``Publisher.publish``: a message whose names
    and sizes are set once; a tick gives the stamp and the float64 arrays.

    ``fields``: the names of the float64[] fields that change, ``sizes`` their lengths.
    The message is serialized once (``cdr.serialize``) with marker numbers in those fields
    and checked by the RMW's own deserializer; ``encode`` then patches stamp and numbers
    into those bytes, which rclpy publishes as they are. Should the check fail (an RMW that
    does not speak little-endian CDR), ``encode`` fills and returns the message instead.
    """

    def __init__(self, msg, fields, sizes):
        from rclpy.serialization import deserialize_message
        self.msg = msg
        self.fields = tuple(fields)
        marks = cdr.sentinels(sizes)
        for field, mark in zip(self.fields, marks):
            self.set_field(msg, field, mark)
        self.fallback_reason = None
        try:
            raw = cdr.serialize(msg)
            self.template = cdr.Template(raw, marks)
            if deserialize_message(raw, type(msg)) != msg:
                raise ValueError("the RMW deserializes the template differently")
        except Exception as exc:   # any failure: publish messages, slower but the same
            self.template = None
            self.fallback_reason = f"{type(exc).__name__}: {exc}"

    def encode(self, stamp, *arrays):
        """
        Return the bytes (or the message) of one tick's output.

        Bytes (or the message) with header stamp ``stamp`` = (sec, nanosec) and one array
        per field, in the order of ``fields``.
        """
        if self.template is not None:
            return self.template.fill(stamp, *arrays)
        msg = self.msg
        msg.header.stamp.sec, msg.header.stamp.nanosec = stamp
        for field, values in zip(self.fields, arrays):
            self.set_field(msg, field, values)
        return msg

    @staticmethod
    def set_field(msg, field, values):
        """Set the float64[] ``field`` of ``msg`` to ``values``."""
        setattr(msg, field, doubles(values))


class WrenchEncoder(OutputEncoder):
    """
    ``geometry_msgs/WrenchStamped`` messages at one frame: ``encode(stamp, wrench)``.

    The six numbers (force, then torque) are patched into bytes serialized once, as the
    other outputs' arrays are: rclpy's conversion of the message cost ~20 µs a tick.
    """

    def __init__(self, frame):
        from geometry_msgs.msg import WrenchStamped
        msg = WrenchStamped()
        msg.header.frame_id = frame
        super().__init__(msg, ("wrench",), (6,))

    @staticmethod
    def set_field(msg, field, values):
        """Set the force and torque of ``msg`` from the six ``values``."""
        f, n = msg.wrench.force, msg.wrench.torque
        f.x, f.y, f.z, n.x, n.y, n.z = (float(x) for x in values)
