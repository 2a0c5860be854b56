"""
Check rbd_ros.formats.cdr and the node's message encoders against two other CDR implementations.

The two: rosbags' serializer/deserializer and the RMW's own (rclpy.serialization).
"""
import numpy as np
import pytest

from rbd_ros.formats import cdr
from rbd_ros.replay import bag_io

from messages import padding_offsets, rosbags_joint_state

from rclpy import serialization as rclpy_serialization  # noqa: E402
from nav_msgs.msg import Odometry  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from geometry_msgs.msg import WrenchStamped  # noqa: E402

from rbd_ros.node import conversions  # noqa: E402
from rbd_ros_interfaces import msg as rbd_msg  # noqa: E402

STORE = bag_io.typestore()


def random_messages(rng):
    """ROS messages of every type the node writes, with varied lengths (so varied padding)."""
    out = []
    for n in (0, 1, 3, 7):
        names = [("j" * int(rng.integers(1, 9))) + str(k) for k in range(n)]
        js = JointState(name=names, effort=rng.normal(size=n).tolist())
        js.header.frame_id = "f" * int(rng.integers(0, 6))
        js.header.stamp.sec, js.header.stamp.nanosec = int(rng.integers(-5, 5)), 999_999_999
        if n:
            js.position = rng.normal(size=n).tolist()
        out.append(js)
        out.append(rbd_msg.JointVector(names=names, data=rng.normal(size=n).tolist()))
        out.append(rbd_msg.JointMatrix(names=names, rows=n, cols=n,
                                       data=rng.normal(size=n * n).tolist()))
        out.append(rbd_msg.DynamicsDerivatives(names=names, size=n,
                                               d_dq=rng.normal(size=n * n).tolist(),
                                               d_dv=rng.normal(size=n * n).tolist()))
    odom = Odometry(child_frame_id="base_link_x")
    odom.header.frame_id = "odom"
    odom.pose.pose.position.x, odom.pose.pose.orientation.w = 1.25, 1.0
    odom.pose.covariance = rng.normal(size=36)
    odom.twist.twist.angular.z = -0.5
    out.append(odom)
    return out


def rosbags_bytes(msg):
    """Serialize the same message with rosbags (built from rclpy's fields)."""
    name = type(msg).__module__.split(".")[0] + "/msg/" + type(msg).__name__
    return bytes(STORE.serialize_cdr(to_rosbags(msg, name), name))


def to_rosbags(msg, name):
    cls = STORE.types[name]
    kwargs = {}
    for field, type_name in msg.get_fields_and_field_types().items():
        value = getattr(msg, field)
        if "/" in type_name:
            sub = type_name.split("/")
            kwargs[field] = to_rosbags(value, f"{sub[0]}/msg/{sub[1]}")
        elif type_name in ("sequence<double>",) or type_name.startswith("double["):
            kwargs[field] = np.asarray(value, float)
        elif type_name == "sequence<string>":
            kwargs[field] = list(value)
        else:
            kwargs[field] = value
    return cls(**kwargs)


def test_serialize_matches_rosbags_and_the_rmw():
    for msg in random_messages(np.random.default_rng(0)):
        raw = cdr.serialize(msg)
        assert raw == rosbags_bytes(msg), type(msg).__name__
        assert rclpy_serialization.deserialize_message(raw, type(msg)) == msg


def test_serialize_refuses_unsupported_fields():
    class Bounded:
        @staticmethod
        def get_fields_and_field_types():
            return {"x": "sequence<double, 3>"}
        x = [1.0]
    with pytest.raises(ValueError, match="not supported"):
        cdr.serialize(Bounded())


@pytest.mark.parametrize("little_endian", [True, False])
def test_joint_state_decoder(little_endian):
    rng = np.random.default_rng(1)
    dec = cdr.JointStateDecoder(keep=2)
    for trial in range(30):
        n = int(rng.integers(0, 6))
        names = [f"joint_{'x' * int(rng.integers(0, 4))}{k}" for k in range(n)]
        pos = rng.normal(size=n)
        vel = rng.normal(size=n) if rng.random() < 0.7 else np.empty(0)
        eff = rng.normal(size=n) if rng.random() < 0.7 else np.empty(0)
        stamp = (int(rng.integers(-10, 10)), int(rng.integers(0, 10**9)))
        raw = rosbags_joint_state(names, pos, vel, eff, stamp, "x" * int(rng.integers(0, 7)),
                                  little_endian)
        if little_endian:
            decoded = dec.decode(raw)
        else:                           # not ours to parse: the node's fallback, the RMW's
            assert dec.decode(raw) is None
            decoded = conversions.decode_joint_state(dec, raw)
        got_names, got_stamp, *arrays = decoded
        assert got_names == tuple(names) and got_stamp == stamp
        for got, want in zip(arrays, (pos, vel, eff)):
            np.testing.assert_array_equal(got, want)
    if little_endian:
        assert len(dec.layouts) == 2                   # the name-list cache stays bounded


def test_the_names_are_reused_whatever_the_padding_between_them():
    """
    Two messages whose name lists differ only in their padding bytes share one decoding.

    Fast CDR (rclpy's serializer) leaves garbage in the padding, so a publisher's messages
    differ there; every other byte of the list counts: a changed letter or length is a new
    list, decoded anew.
    """
    names = ["a", "bb", "ccc", "dddd", "eeeee", "joint_7"]       # every padding 0..3 bytes
    raw = bytearray(rosbags_joint_state(names, np.arange(6.0), [], []))
    start = cdr.align(cdr.string_end(raw, 12), 4)
    padding = padding_offsets(raw, start, len(names))
    assert len(padding) >= 6
    dec = cdr.JointStateDecoder()
    assert dec.decode(bytes(raw))[0] == tuple(names)
    rng = np.random.default_rng(2)
    for _ in range(20):
        for k in padding:
            raw[k] = int(rng.integers(1, 256))
        decoded = dec.decode(bytes(raw))
        assert decoded[0] == tuple(names) and len(dec.layouts) == 1
        np.testing.assert_array_equal(decoded[2], np.arange(6.0))
    other = bytearray(raw)
    other[other.index(b"dddd")] = ord("x")                     # a letter: another list
    assert dec.decode(bytes(other))[0] == ("a", "bb", "ccc", "xddd", "eeeee", "joint_7")
    assert len(dec.layouts) == 2
    assert dec.decode(bytes(raw))[0] == tuple(names)


def test_decoders_refuse_truncated_bytes():
    raw = rosbags_joint_state(["a", "b"], [1.0, 2.0], [3.0, 4.0], [5.0, 6.0])
    dec = cdr.JointStateDecoder()
    for cut in (6, 20, 30, len(raw) - 8):
        with pytest.raises(ValueError):
            cdr.JointStateDecoder().decode(raw[:cut])
    assert dec.decode(raw)[0] == ("a", "b")
    odom = cdr.serialize(Odometry())
    with pytest.raises(ValueError):
        cdr.decode_odometry(odom[:100])


def test_decode_odometry():
    msg = random_messages(np.random.default_rng(2))[-1]
    stamp, values = cdr.decode_odometry(rosbags_bytes(msg))
    p, t = msg.pose.pose, msg.twist.twist
    want = [p.position.x, p.position.y, p.position.z, p.orientation.x, p.orientation.y,
            p.orientation.z, p.orientation.w, t.linear.x, t.linear.y, t.linear.z,
            t.angular.x, t.angular.y, t.angular.z]
    np.testing.assert_array_equal(values, want)
    # big endian: the node's fallback (the RMW's deserializer) and the replay's (rosbags')
    # give the same numbers and stamp
    name = "nav_msgs/msg/Odometry"
    big = bytes(STORE.serialize_cdr(to_rosbags(msg, name), name, little_endian=False))
    assert cdr.decode_odometry(big) is None
    for fallback in (conversions.odometry_deserializer(), bag_io.deserialize_odometry):
        big_stamp, big_values = cdr.decode_odometry(big, fallback)
        assert big_stamp == stamp
        np.testing.assert_array_equal(big_values, want)
    # many at once: the same numbers as one by one, in either byte order
    stamps, many = cdr.decode_odometry_many([rosbags_bytes(msg), big], bag_io.deserialize_odometry)
    assert [tuple(s) for s in stamps] == [tuple(stamp)] * 2
    np.testing.assert_array_equal(many, [want, want])


def test_template_fill_and_encode():
    rng = np.random.default_rng(3)
    names = ["a", "bb", "ccc"]
    marks = cdr.sentinels((9, 9))
    msg = rbd_msg.DynamicsDerivatives(names=names, size=3, d_dq=marks[0].tolist(),
                                      d_dv=marks[1].tolist())
    tpl = cdr.Template(cdr.serialize(msg), marks)
    for _ in range(3):
        stamp = (int(rng.integers(-100, 100)), int(rng.integers(0, 10**9)))
        dq, dv = rng.normal(size=(3, 3)), rng.normal(size=(3, 3))
        want = rbd_msg.DynamicsDerivatives(names=names, size=3, d_dq=dq.ravel().tolist(),
                                           d_dv=dv.ravel().tolist())
        want.header.stamp.sec, want.header.stamp.nanosec = stamp
        raw = tpl.fill(stamp, dq, dv)
        assert raw == cdr.serialize(want)
        assert tpl.encode([stamp[0]], [stamp[1]], dq[None], dv[None]) == [raw]
    with pytest.raises(ValueError, match="not in the template"):
        cdr.Template(cdr.serialize(msg), [np.array([1e6 + 0.125, 7.0])])


@pytest.fixture(params=[False, True], ids=["bytes", "messages"])
def fallback(request, monkeypatch):
    """Make ``cdr.serialize`` refuse (param True), so that the encoders fill messages."""
    if request.param:
        def refuse(msg):
            raise ValueError("refused for the test")
        monkeypatch.setattr(cdr, "serialize", refuse)
    return request.param


def test_output_encoder(fallback):
    """Both ways of publishing give the message the subscriber expects."""
    rng = np.random.default_rng(4)
    names = ["j1", "j2"]
    enc = conversions.OutputEncoder(JointState(name=names), ("effort",), (2,))
    assert (enc.template is None) == fallback
    assert (enc.fallback_reason is not None) == fallback
    for _ in range(2):
        effort = rng.normal(size=2)
        stamp = (int(rng.integers(0, 100)), int(rng.integers(0, 10**9)))
        out = enc.encode(stamp, effort)
        got = out if fallback else rclpy_serialization.deserialize_message(out, JointState)
        assert list(got.name) == names and list(got.position) == []
        assert (got.header.stamp.sec, got.header.stamp.nanosec) == stamp
        np.testing.assert_array_equal(np.asarray(got.effort), effort)


def test_wrench_encoder(fallback):
    """~/contact_wrench's bytes: the RMW deserializes the frame, stamp, force and torque."""
    rng = np.random.default_rng(5)
    enc = conversions.WrenchEncoder("arm_right_7_link")
    assert (enc.template is None) == fallback
    for _ in range(3):
        wrench = rng.normal(size=6) * 10.0 ** rng.integers(-3, 4)
        stamp = (int(rng.integers(0, 2**31)), int(rng.integers(0, 10**9)))
        out = enc.encode(stamp, wrench)
        got = out if fallback else rclpy_serialization.deserialize_message(out, WrenchStamped)
        assert got.header.frame_id == "arm_right_7_link"
        assert (got.header.stamp.sec, got.header.stamp.nanosec) == stamp
        f, n = got.wrench.force, got.wrench.torque
        np.testing.assert_array_equal([f.x, f.y, f.z, n.x, n.y, n.z], wrench)
