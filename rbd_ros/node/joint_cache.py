"""
Joint states by name, merged from several publishers, as the arrays the core takes.

ROS joint_states messages name their joints and need not carry all of them (one publisher
per arm, a gripper driver, ...): positions, velocities and efforts are stored per joint of
the model, and a message's name list is mapped to model indices once and cached, so a tick
costs a few numpy fancy-index copies, never a Python loop over joints.

Mimic joints (a model with coupled followers): joint_state_publisher publishes the followers'
positions too. They are accepted (not "unknown"), never stored: a follower's position is its
leader's times the multiplier plus the offset, so its value never overrides its leader's.
Each message's followers are checked against that coupling (``MIMIC_TOLERANCE``) and the
disagreement, if any, is left in ``disagreement`` for the node to log.
"""
import numpy as np

from .. import outputs
from ..algorithms.entries import first_entry
from ..description.mimic_coupling import MIMIC_TOLERANCE
from ..formats.joint_state_merge import MERGED, OTHER_NAMES, joint_state_merge_kernel
from .reporting import names_excerpt

_EVERY_JOINT = slice(None)      # the indices of a message that lists every joint in model order
_UNSEEN = object()              # names JointCache.learn has not been given yet


class JointCache:
    """
    Latest position, velocity and effort of every joint of a model, by name.

    ros2_control fills interfaces it does not have with NaN; a message without a velocity
    or effort array says nothing about them. Both leave that joint's value NaN ("unknown"),
    and the caller decides what an unknown value means for each output.
    """

    def __init__(self, joint_names, followers=None):
        """``followers``: {follower: (leader, multiplier, offset)} (``model.coupling``)."""
        self.joint_names = tuple(joint_names)
        self.index = {name: k for k, name in enumerate(self.joint_names)}
        self.followers = {name: (self.index[leader], multiplier, offset)
                          for name, (leader, multiplier, offset) in (followers or {}).items()}
        self.disagreement = None          # followers of the last message off their coupling
        n = len(self.joint_names)
        # the rows of one block: the payload ring keeps a merged state in one copy
        self.values = np.full((3, n), np.nan)
        self.position, self.velocity, self.effort = self.values
        self.received = np.full(n, -np.inf)   # time.monotonic() of each joint's last update
        # received.min(), kept by merge: a numpy reduction per tick (~1 µs) where nearly every
        # message updates every joint, which makes it the message's receipt time
        self.oldest_received = -np.inf
        self.stamp = None                 # stamp of the latest message merged
        self.updates = 0                  # messages merged since the last take()
        self._maps = {}                   # names tuple -> (model, message indices, unknown)
        # merge_serialized's lanes: the name lists it takes now (the last two learned: two
        # publishers on one topic, e.g. an arm and its gripper, alternate) and each learned
        # one's by names tuple: (names bytes, which are not padding, model indices, message
        # indices, unknown names)
        self._lane, self._previous_lane, self._lanes = None, None, {}
        # what the kernel writes besides the cache: the stamp, min(received), the arrays' bytes
        self._read = (np.zeros(2, np.int64), np.zeros(1), np.zeros(0, np.uint8))

    def _map(self, names):
        """
        Map a message's names to model indices (cached per name list).

        (model indices, message indices, unknown names, followers) for a message's names;
        the indices are slices when the message lists every joint in model order; followers
        is None or (message indices, leader indices, multipliers, offsets) of the message's
        mimic joints. Duplicate names are an error.
        """
        key = tuple(names)
        cached = self._maps.get(key)
        if cached is not None:
            return cached
        dup = outputs.duplicate_names(key)
        if dup:
            raise ValueError(f"joint_states names {names_excerpt(dup)} more than once")
        ours, theirs, unknown, followers = [], [], [], []
        n = len(self.joint_names)
        for k, name in enumerate(key):
            i = self.index.get(name)
            if i is not None:
                ours.append(i)
                theirs.append(k)
            elif name in self.followers:
                followers.append((k,) + self.followers[name])
            else:
                unknown.append(name)
        if followers:
            k, leader, multiplier, offset = (np.array(column) for column in zip(*followers))
            followers = (k.astype(np.intp), leader.astype(np.intp), multiplier, offset)
        else:
            followers = None
        if ours == list(range(n)) and len(key) == n:
            # the message lists every joint in model order (the usual driver): slices, no
            # index arrays, so a merge copies three arrays and nothing else
            result = (_EVERY_JOINT, _EVERY_JOINT, (), None)
        else:
            result = (np.array(ours, np.intp), np.array(theirs, np.intp), tuple(unknown),
                      followers)
        if len(self._maps) > 64:          # a publisher that reorders names every message
            self._maps.clear()
        self._maps[key] = result
        return result

    def merge(self, names, position, velocity, effort, stamp, now):
        """
        Merge one message's arrays into the latest state of each joint.

        Merge one message's arrays (any sequence; lengths must be 0 or len(names));
        ``now``: the receipt time (time.monotonic()) of the message.

        Returns (names the model does not know, whether any joint of the model was merged).
        Raises ValueError for a malformed message (nothing is merged then).
        """
        n = len(names)
        pos, vel, eff = (np.frombuffer(values, np.float64) if _is_double_buffer(values)
                         else np.asarray(values, np.float64)
                         for values in (position, velocity, effort))
        error = outputs.size_error(n, (pos.size, vel.size, eff.size))
        if error:
            raise ValueError(error)
        ours, theirs, unknown, followers = self._map(names)
        pos_ours = pos[theirs]
        if not outputs.finite_vector(pos_ours):
            bad = [names[k] for k in np.arange(n)[theirs][~np.isfinite(pos_ours)]]
            raise ValueError(f"joint_states position of {names_excerpt(bad)} is not finite")
        if len(pos_ours) == 0:
            self.disagreement = self._check_followers(names, pos, followers)
            return unknown, False             # e.g. a gripper on a shared topic: nothing new
        self.position[ours] = pos_ours
        self.disagreement = self._check_followers(names, pos, followers)
        self.velocity[ours] = vel[theirs] if vel.size else np.nan
        self.effort[ours] = eff[theirs] if eff.size else np.nan
        self.received[ours] = now
        self.oldest_received = now if ours is _EVERY_JOINT else float(self.received.min())
        self.stamp = stamp
        self.updates += 1
        return unknown, True

    def learn(self, names, names_bytes):
        """
        Let :meth:`merge_serialized` take the messages that list ``names`` as the last did.

        Parameters
        ----------
        names : tuple of str
            The name list of a message :meth:`merge` has just merged.
        names_bytes : callable
            Returns its CDR bytes and which are not padding, or None
            (``rbd_ros.formats.cdr.JointStateDecoder.names_bytes``); called only for names
            not seen before.

        Returns
        -------
        None

        """
        lane = self._lanes.get(names, _UNSEEN)
        if lane is _UNSEEN:
            lane = self._new_lane(names, names_bytes)
        if lane is not self._lane:
            self._lane, self._previous_lane = lane, self._lane

    def _new_lane(self, names, names_bytes):
        """
        Return the lane of ``names``, or None for names it cannot take.

        Kept by names, None too for mimic followers: a robot whose every message lists them
        (merged by merge()) asks nothing more of each.
        """
        ours, theirs, unknown, followers = self._map(names)
        if len(self._lanes) > 16:             # a publisher that reorders names every message
            self._lanes.clear()
        if followers is not None:             # mimic joints to check: merge() only
            self._lanes[names] = None
            return None
        found = names_bytes()
        if found is None:                     # not decoded by the decoder: ask again later
            return None
        if ours is _EVERY_JOINT:
            ours = theirs = np.arange(len(self.joint_names))
        ours, theirs = ours.copy(), theirs.copy()
        for index in (ours, theirs):
            index.setflags(write=False)
        lane = (*found, ours, theirs, unknown)
        self._lanes[names] = lane
        if self._read[2].size < 8 * len(names):
            self._read = (*self._read[:2], np.zeros(len(names)).view(np.uint8))
        return lane

    def merge_serialized(self, raw, now):
        """
        Merge a serialized message in one compiled call, if it lists names learned last.

        As :meth:`merge` would, for a message whose name list is that of one of the last two
        :meth:`learn` calls (their bytes, but the padding between the strings). Any other
        message is declined, nothing merged: the caller decodes it and calls :meth:`merge`,
        which merges it or says what is wrong with it.

        Parameters
        ----------
        raw : bytes
            A serialized sensor_msgs/JointState.
        now : float
            Its receipt time (``time.monotonic()``).

        Returns
        -------
        tuple of str, or None
            The names the model does not know (merged), or None (declined).

        """
        message = np.frombuffer(raw, np.uint8)
        stamp, oldest, scratch = self._read
        for lane in (self._lane, self._previous_lane):
            if lane is None:
                continue
            names, kept, ours, theirs, unknown = lane
            status = _merge_entry(message, names, kept, ours, theirs, self.position,
                                  self.velocity, self.effort, self.received, now, stamp,
                                  oldest, scratch)
            if status == MERGED:
                break
            if status != OTHER_NAMES:         # its names, but not mergeable: merge() says why
                return None
        else:
            return None
        if lane is not self._lane:
            self._lane, self._previous_lane = lane, self._lane
        self.oldest_received = float(oldest[0])
        self.stamp = (int(stamp[0]), int(stamp[1]))
        self.disagreement = None
        self.updates += 1
        return unknown

    def _check_followers(self, names, position, followers):
        """
        Return which followers of a message are off their leaders' coupling, or None.

        Compared with the leaders' latest positions (this message's, if it has them); a
        leader never received (NaN) or a non-finite follower compares as agreeing.
        """
        if followers is None:
            return None
        k, leader, multiplier, offset = followers
        expected = multiplier * self.position[leader] + offset
        off = np.flatnonzero(np.abs(position[k] - expected) > MIMIC_TOLERANCE)
        if len(off) == 0:
            return None
        return ", ".join(f"{names[k[i]]} = {position[k[i]]:.6g} (its leader "
                         f"{self.joint_names[leader[i]]} gives {expected[i]:.6g})"
                         for i in off[:4]) + (" ..." if len(off) > 4 else "")

    def missing(self):
        """Names of the joints whose position has never been received."""
        return [self.joint_names[i] for i in np.flatnonzero(np.isnan(self.position))]

    def older_than(self, max_age, now):
        """Names of the joints not updated for more than ``max_age`` seconds."""
        return [self.joint_names[i] for i in np.flatnonzero(now - self.received > max_age)]


def _is_double_buffer(values):
    """Tell whether ``values`` is rclpy's float64[] field (array.array('d'))."""
    return getattr(values, "typecode", None) == "d"


def load_merge_kernel():
    """
    Compile, or load from the cache, the kernel of :meth:`JointCache.merge_serialized`.

    With the tick's kernels (``description.warm_up``): else the first message it takes
    would wait for it.

    Returns
    -------
    None

    """
    no_bytes, no_index, no_values = np.frombuffer(b"", np.uint8), np.zeros(0, np.int64), np.zeros(0)
    no_index.setflags(write=False)
    _merge_entry(no_bytes, no_bytes, no_bytes, no_index, no_index, no_values, no_values,
                 no_values, no_values, 0.0, np.zeros(2, np.int64), np.zeros(1),
                 np.zeros(0, np.uint8))      # bytes that are not CDR: declined at once


_merge_entry = first_entry(joint_state_merge_kernel, globals(), "_merge_entry")
