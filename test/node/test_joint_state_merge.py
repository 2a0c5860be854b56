"""
``JointCache.merge_serialized``: one compiled call does what decoding then ``merge`` does.

The oracle is the Python path the node takes for any other message (``JointStateDecoder``,
then ``JointCache.merge``), on messages serialized by rosbags (zero padding) and by the RMW
(rclpy's Fast CDR, whatever was in its buffer in the padding), with the padding bytes
scrambled too: both caches must hold the same bits afterwards, or the compiled call must
decline and leave its cache as it was.
"""
import os
import subprocess
import sys

import numpy as np
import pytest

from rbd_ros.formats import cdr
from rbd_ros.node.joint_cache import JointCache

from helpers import require_module, ros_domain_id
from messages import padding_offsets, rosbags_joint_state

hypothesis = pytest.importorskip("hypothesis") if not os.environ.get("CI") else \
    require_module("hypothesis", "hypothesis")
from hypothesis import given, strategies as st  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODEL = ("shoulder", "elbow", "wrist_1", "wrist_2", "gripper_finger_joint", "j")
ARRAYS = ("position", "velocity", "effort", "received")


def cache_state(cache):
    return ([getattr(cache, k).copy() for k in ARRAYS],
            (cache.stamp, cache.oldest_received, cache.updates, cache.disagreement))


def assert_same(a, b):
    arrays_a, rest_a = cache_state(a)
    arrays_b, rest_b = cache_state(b)
    for name, x, y in zip(ARRAYS, arrays_a, arrays_b):
        assert x.tobytes() == y.tobytes(), name          # bit for bit, NaN included
    assert rest_a == rest_b


def rmw_joint_state(names, position, velocity, effort, stamp, frame_id):
    from rclpy.serialization import serialize_message
    from sensor_msgs.msg import JointState
    msg = JointState(name=list(names), position=list(position), velocity=list(velocity),
                     effort=list(effort))
    msg.header.stamp.sec, msg.header.stamp.nanosec = stamp
    msg.header.frame_id = frame_id
    return serialize_message(msg)


def learned_pair(names, first):
    """Two caches that merged ``first`` (bytes) by the Python path; the first one learned it."""
    caches = JointCache(MODEL), JointCache(MODEL)
    decoder = cdr.JointStateDecoder()
    for cache in caches:
        decoded = decoder.decode(first)
        unknown, merged = cache.merge(decoded[0], *decoded[2:], decoded[1], 1.0)
    assert merged
    caches[0].learn(decoded[0], decoder.names_bytes)
    return caches, decoder


def python_path(cache, decoder, raw, now):
    """
    Decode then merge, the node's path for little-endian CDR; None for other bytes.

    The node deserializes those with rclpy's generic deserializer (a byte flipped in the
    encapsulation header makes them): the compiled call must decline them, untouched.
    """
    decoded = decoder.decode(raw)
    if decoded is None:
        return None
    names, stamp, position, velocity, effort = decoded
    return cache.merge(names, position, velocity, effort, stamp, now)


values = st.floats(allow_nan=True, allow_infinity=True, width=64)


@st.composite
def messages(draw):
    """(names, the learned message's bytes, a message's bytes with those names)."""
    model_names = draw(st.lists(st.sampled_from(MODEL), min_size=1, unique=True))
    unknown = draw(st.lists(st.sampled_from(["camera_tilt", "x", "finger_2_joint"]),
                            unique=True))
    names = draw(st.permutations(model_names + unknown))
    n = len(names)
    serializer = draw(st.sampled_from([rosbags_joint_state, rmw_joint_state]))
    frame_id = draw(st.text("abc_/", max_size=7))

    def message(finite_positions):
        position = draw(st.lists(st.floats(-1e3, 1e3) if finite_positions else values,
                                 min_size=n, max_size=n))
        velocity, effort = (draw(st.sampled_from([[], draw(st.lists(values, min_size=n,
                                                                    max_size=n))]))
                            for _ in range(2))
        stamp = (draw(st.integers(-2**31, 2**31 - 1)), draw(st.integers(0, 2**32 - 1)))
        return bytearray(serializer(names, position, velocity, effort, stamp, frame_id))

    first, raw = message(True), message(False)
    names_at = cdr.align(cdr.string_end(raw, 12), 4)
    for k in padding_offsets(raw, names_at, n):
        raw[k] = draw(st.integers(0, 255))
    return tuple(names), bytes(first), bytes(raw)


@given(messages())
def test_a_message_with_the_learned_names_merges_as_the_python_path_merges_it(case):
    names, first, raw = case
    (fast, slow), decoder = learned_pair(names, first)
    try:
        expected = python_path(slow, decoder, raw, 2.0)
    except ValueError:                          # a model joint's position is not finite
        expected = None
    got = fast.merge_serialized(raw, 2.0)
    if expected is None:
        assert got is None
        before, _ = learned_pair(names, first)
        assert_same(fast, before[0])            # declined: nothing written
    else:
        assert got == expected[0] and expected[1]
        assert_same(fast, slow)


@given(messages(), st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 255)),
                            max_size=3),
       st.integers(0, 10**6), st.binary(max_size=9))
def test_hostile_bytes_are_declined_untouched_or_merged_as_the_python_path_merges_them(
        case, flips, cut, tail):
    """Bytes flipped anywhere, cut anywhere, bytes appended: the oracle is the Python path."""
    names, first, raw = case
    raw = bytearray(raw)
    for where, value in flips:
        raw[where % len(raw)] = value
    if cut % 3 == 0:                            # a third of them cut somewhere
        raw = raw[:len(raw) - cut % (len(raw) + 1)]
    raw = bytes(raw) + tail
    (fast, slow), decoder = learned_pair(names, first)
    before = cache_state(fast)
    try:
        expected = python_path(slow, decoder, raw, 2.0)
    except ValueError:
        expected = None
    got = fast.merge_serialized(raw, 2.0)
    if got is None:                             # declined: nothing written
        after = cache_state(fast)
        assert [x.tobytes() for x in before[0]] == [x.tobytes() for x in after[0]]
        assert before[1] == after[1]
    else:
        assert expected is not None and got == expected[0] and expected[1]
        assert_same(fast, slow)


def test_a_driver_s_message_of_every_joint_in_model_order():
    first = rosbags_joint_state(MODEL, np.zeros(6), np.zeros(6), np.zeros(6))
    (fast, slow), decoder = learned_pair(MODEL, first)
    raw = rmw_joint_state(MODEL, np.arange(6.0), -np.arange(6.0), [], (7, 8), "base")
    assert fast.merge_serialized(raw, 3.0) == ()
    python_path(slow, decoder, raw, 3.0)
    assert_same(fast, slow)
    assert fast.oldest_received == 3.0 and np.isnan(fast.effort).all()


def test_two_publishers_on_one_topic_both_take_the_compiled_call():
    arm, gripper = MODEL[:4], MODEL[4:]
    cache, decoder = JointCache(MODEL), cdr.JointStateDecoder()
    messages = [rosbags_joint_state(names, np.arange(len(names), dtype=float), [], [])
                for names in (arm, gripper)]
    for names, raw in zip((arm, gripper), messages):     # each decoded and learned once
        decoded = decoder.decode(raw)
        cache.merge(decoded[0], *decoded[2:], decoded[1], 1.0)
        cache.learn(decoded[0], decoder.names_bytes)
    for k in range(6):                                   # then they alternate
        assert cache.merge_serialized(messages[k % 2], 2.0 + k) == (), k
    assert cache.updates == 2 + 6
    np.testing.assert_array_equal(cache.position, [0.0, 1.0, 2.0, 3.0, 0.0, 1.0])


def test_the_compiled_call_takes_the_usual_message():
    names = MODEL[::-1] + ("camera_tilt",)
    first = rosbags_joint_state(names, np.arange(7.0), [], [])
    (fast, slow), decoder = learned_pair(names, first)
    raw = rmw_joint_state(names, np.arange(7.0) + 0.5, np.ones(7), np.full(7, 2.0), (3, 4), "")
    assert fast.merge_serialized(raw, 2.0) == ("camera_tilt",)
    python_path(slow, decoder, raw, 2.0)
    assert_same(fast, slow)
    assert fast.stamp == (3, 4) and fast.updates == 2
    np.testing.assert_array_equal(fast.position, np.arange(6.0)[::-1] + 0.5)


def _decline_cases():
    names = ("shoulder", "elbow", "camera_tilt")
    good = rosbags_joint_state(names, [1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [], stamp=(9, 9))
    other = bytearray(good)
    other[other.index(b"elbow")] = ord("E")                   # another name, same length
    cases = {"other names": bytes(other),
             "fewer names": rosbags_joint_state(names[:2], [1.0, 2.0], [], []),
             "not little-endian": rosbags_joint_state(names, [1.0, 2.0, 3.0], [], [],
                                                      little_endian=False),
             "a velocity short": rosbags_joint_state(names, [1.0, 2.0, 3.0], [4.0, 5.0], []),
             "no position": rosbags_joint_state(names, [], [4.0, 5.0, 6.0], []),
             "NaN position": rosbags_joint_state(names, [1.0, np.nan, 3.0], [], [])}
    cases.update({f"cut at {k}": good[:k] for k in range(0, len(good), 3)})
    return names, good, cases


@pytest.mark.parametrize("case", list(_decline_cases()[2]))
def test_any_other_message_is_declined_and_changes_nothing(case):
    names, good, cases = _decline_cases()
    (fast, _), _ = learned_pair(names, good)
    before = cache_state(fast)
    assert fast.merge_serialized(cases[case], 5.0) is None
    after = cache_state(fast)
    assert [x.tobytes() for x in before[0]] == [x.tobytes() for x in after[0]]
    assert before[1] == after[1]


def test_a_non_finite_position_of_a_joint_the_model_does_not_have_is_merged():
    names = ("shoulder", "camera_tilt")
    (fast, slow), decoder = learned_pair(names, rosbags_joint_state(names, [1.0, 2.0], [], []))
    raw = rosbags_joint_state(names, [3.0, np.inf], [], [])
    assert fast.merge_serialized(raw, 2.0) == ("camera_tilt",)
    python_path(slow, decoder, raw, 2.0)
    assert_same(fast, slow)


def test_messages_with_mimic_followers_are_left_to_the_python_path():
    followers = {"j": ("shoulder", 2.0, 0.0)}
    cache = JointCache(MODEL[:-1], followers)
    decoder = cdr.JointStateDecoder()
    raw = rosbags_joint_state(("shoulder", "j"), [1.0, 2.0], [], [])
    decoded = decoder.decode(raw)
    cache.merge(decoded[0], *decoded[2:], decoded[1], 1.0)
    asked = []

    def names_bytes():
        asked.append(1)
        return decoder.names_bytes()
    for _ in range(3):                                     # as each message of such a robot
        cache.learn(decoded[0], names_bytes)
        assert cache.merge_serialized(raw, 2.0) is None    # the followers need checking
    assert asked == []                 # nothing asked of the messages: they are never taken


def test_nothing_is_taken_before_a_name_list_is_learned_or_after_one_not_decoded():
    names = ("shoulder",)
    raw = rosbags_joint_state(names, [1.0], [], [])
    cache, decoder = JointCache(MODEL), cdr.JointStateDecoder()
    assert cache.merge_serialized(raw, 1.0) is None
    decoder.decode(raw)
    cache.learn(names, decoder.names_bytes)
    assert cache.merge_serialized(raw, 1.0) == ()
    assert decoder.decode(rosbags_joint_state(names, [1.0], [], [], little_endian=False)) is None
    assert decoder.names_bytes() is None                    # that message was not decoded
    cache.learn(names, decoder.names_bytes)                 # a lane known by its names
    assert cache.merge_serialized(raw, 1.0) == ()


NODE_WARMS_THE_KERNEL = """
import rclpy
from rclpy.context import Context
from rclpy.parameter import Parameter
from rbd_ros.formats.joint_state_merge import joint_state_merge_kernel as kernel
from rbd_ros.node.dynamics_node import DynamicsNode
context = Context()
rclpy.init(context=context)
before = len(kernel.overloads)
node = DynamicsNode(context=context, parameter_overrides=[
    Parameter("robot_description", value=open({urdf!r}).read()),
    Parameter("planner_process", value=False)])
print(before, node.current_robot() is not None, len(kernel.overloads))
node.destroy_node()
rclpy.shutdown(context=context)
"""


def test_the_node_loads_the_kernel_with_its_model_before_any_message():
    urdf = os.path.join(ROOT, "rbd_ros", "robots", "rbd_arm7.urdf")
    env = dict(os.environ, ROS_DOMAIN_ID=str(ros_domain_id()))
    done = subprocess.run([sys.executable, "-c", NODE_WARMS_THE_KERNEL.format(urdf=urdf)],
                          capture_output=True, text=True, timeout=300, cwd=ROOT, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split()[-3:] == ["0", "True", "1"], done.stdout
