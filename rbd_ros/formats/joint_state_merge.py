"""
A serialized sensor_msgs/JointState merged into a joint cache's arrays in one compiled call.

The node's usual message is the last one again with new numbers: the same names, in the same
order, from the same driver. ``JointCache`` then knows where each array goes, and the message
needs no Python-level decoding: this kernel checks that the bytes carry those names (their
CDR bytes but the padding between strings, as ``JointStateDecoder.names`` compares them), reads
where the three arrays are and how long (as ``JointStateDecoder.layout``), and copies them
into the cache as ``JointCache.merge`` would. Anything else (other names, a size that does not
fit, a position that is not finite, bytes that are not little-endian CDR or end too soon) is
declined before anything is written, and the caller decodes the message in Python, which
merges it or says what is wrong with it.

Why: decoding in Python then merging costs ~18 µs a message at 1 kHz on talos (32 joints,
paced: the caches cold), of a node that must stay within 1.3× its messaging floor (issue 35).
"""
import math

import numpy as np

from .._jit import f64_1d, float64, helper, i64_1d, i64_1d_ro, int64, kernel, u8_1d, u8_1d_ro

# what the kernel returns: MERGED, or why the caller must decode the message itself
MERGED, NOT_LITTLE_ENDIAN_CDR, OTHER_NAMES, TRUNCATED, SIZES, POSITION_NOT_FINITE = range(6)
HEADER = 4                  # the encapsulation header: alignment counts from its end
FRAME_ID = 12               # header.frame_id follows the stamp (int32 sec, uint32 nanosec)


@helper
def uint32_at(raw, offset):
    """Read the little-endian uint32 at ``offset``."""
    return (np.int64(raw[offset]) | np.int64(raw[offset + 1]) << 8
            | np.int64(raw[offset + 2]) << 16 | np.int64(raw[offset + 3]) << 24)


@helper
def aligned(offset, size):
    """``offset`` rounded up to a multiple of ``size``, counted from after the header."""
    return offset + (-(offset - HEADER)) % size


@kernel(int64(u8_1d_ro, u8_1d_ro, u8_1d_ro, i64_1d_ro, i64_1d_ro, f64_1d, f64_1d, f64_1d,
              f64_1d, float64, i64_1d, f64_1d, u8_1d))
def joint_state_merge_kernel(raw, names, kept, ours, theirs, position, velocity, effort,
                             received, now, stamp, oldest, scratch):
    """
    Merge the message ``raw`` if it lists ``names``; return MERGED or why it declined.

    ``names``: the CDR bytes of the name list (count, then the strings), ``kept`` 0xFF where
    they are not padding; ``ours[k]``, ``theirs[k]``: the model index and the message index
    of each joint merged (``JointCache``'s map of these names). Written when MERGED only:
    the model joints' ``position``, ``velocity`` and ``effort`` (NaN for an empty array),
    ``received`` = ``now`` for them, ``stamp`` (sec, nanosec), ``oldest[0]`` =
    min(received) (``now`` when the message lists every joint: the receipt times are
    monotonic). ``scratch``: at least 8 bytes per name, 8-aligned.
    """
    size = raw.shape[0]
    if size < FRAME_ID + 4 or raw[0] != 0 or raw[1] != 1:
        return NOT_LITTLE_ENDIAN_CDR
    start = aligned(FRAME_ID + 4 + uint32_at(raw, FRAME_ID), 4)
    offset = start + names.shape[0]
    if offset > size:                       # too short for those names: not them
        return OTHER_NAMES
    for k in range(names.shape[0]):
        if (raw[start + k] ^ names[k]) & kept[k]:
            return OTHER_NAMES
    count = uint32_at(raw, start)
    position_at, offset, status = array_at(raw, offset, count, size)
    velocity_at, offset, status_v = array_at(raw, offset, count, size) if not status else (
        -1, offset, status)
    effort_at, offset, status_e = array_at(raw, offset, count, size) if not status_v else (
        -1, offset, status_v)
    if status_e:
        return status_e
    if position_at < 0 or scratch.shape[0] < 8 * count:
        return SIZES
    values = scratch.view(np.float64)
    read_array(raw, position_at, count, scratch)
    for k in range(theirs.shape[0]):
        if not math.isfinite(values[theirs[k]]):
            return POSITION_NOT_FINITE
    for k in range(ours.shape[0]):
        position[ours[k]] = values[theirs[k]]
        received[ours[k]] = now
    scatter(raw, velocity_at, count, scratch, ours, theirs, velocity)
    scatter(raw, effort_at, count, scratch, ours, theirs, effort)
    stamp[0] = np.int32(np.uint32(uint32_at(raw, HEADER)))      # int32 sec
    stamp[1] = uint32_at(raw, HEADER + 4)
    least = np.inf
    for k in range(received.shape[0]):
        least = min(least, received[k])
    oldest[0] = least
    return MERGED


@helper
def read_array(raw, begin, count, scratch):
    """Copy the ``count`` float64 at ``begin`` into ``scratch`` (aligned, unlike ``raw``)."""
    for k in range(8 * count):
        scratch[k] = raw[begin + k]


@helper
def array_at(raw, offset, count, size):
    """
    Find the float64 sequence at ``offset``.

    Returns (where its values begin, or -1 when it is empty; the offset after it; MERGED,
    or TRUNCATED, or SIZES when it is neither empty nor ``count`` long).
    """
    offset = aligned(offset, 4)
    if offset + 4 > size:
        return -1, offset, TRUNCATED
    n = uint32_at(raw, offset)
    if n == 0:
        return -1, offset + 4, MERGED
    if n != count:
        return -1, offset, SIZES
    begin = aligned(offset + 4, 8)
    return begin, begin + 8 * n, MERGED if begin + 8 * n <= size else TRUNCATED


@helper
def scatter(raw, begin, count, scratch, ours, theirs, target):
    """target[ours] = the message's array at ``begin``[theirs]; NaN (unknown) for none (-1)."""
    if begin >= 0:
        read_array(raw, begin, count, scratch)
    values = scratch.view(np.float64)
    for k in range(ours.shape[0]):
        target[ours[k]] = values[theirs[k]] if begin >= 0 else np.nan
