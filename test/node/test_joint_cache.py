"""``JointCache``: the receipt time of the joint updated least recently, kept by ``merge``."""
import math

import numpy as np
import pytest

from rbd_ros.node.joint_cache import JointCache

NAMES = ("a", "b", "c")


def merge(cache, names, now):
    n = len(names)
    return cache.merge(list(names), np.zeros(n), np.zeros(n), np.zeros(n), (1, 0), now)


def test_nothing_received_is_infinitely_old():
    assert JointCache(NAMES).oldest_received == -math.inf


@pytest.mark.parametrize("order", [NAMES, ("c", "a", "b")])
def test_a_message_of_every_joint_makes_its_receipt_the_oldest(order):
    cache = JointCache(NAMES)
    merge(cache, ("a",), 1.0)
    merge(cache, order, 2.5)                     # in model order (slices) or not (indices)
    assert cache.oldest_received == 2.5 == cache.received.min()


def test_messages_of_some_joints_leave_the_least_recent_one():
    cache = JointCache(NAMES)
    merge(cache, NAMES, 1.0)
    merge(cache, ("b", "c"), 2.0)
    assert cache.oldest_received == 1.0           # a's
    merge(cache, ("a",), 3.0)
    assert cache.oldest_received == 2.0 == cache.received.min()


def test_a_message_of_no_model_joint_changes_nothing():
    cache = JointCache(NAMES)
    merge(cache, NAMES, 1.0)
    unknown, merged = merge(cache, ("gripper",), 5.0)
    assert unknown == ("gripper",) and not merged
    assert cache.oldest_received == 1.0


def test_a_malformed_message_changes_nothing():
    cache = JointCache(NAMES)
    merge(cache, NAMES, 1.0)
    with pytest.raises(ValueError, match="not finite"):
        cache.merge(["a"], np.array([np.nan]), [], [], (1, 0), 4.0)
    assert cache.oldest_received == 1.0
