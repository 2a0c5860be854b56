"""
A ``trajectory_msgs/JointTrajectory`` in a YAML file: what ``rbd_retime`` reads and writes.

The layout is the message's as ROS writes messages to YAML (``ros2 topic echo``,
``rosidl_runtime_py.message_to_yaml``), so a file can be published or sent as it is::

    header:                      # optional
      stamp: {sec: 0, nanosec: 0}
      frame_id: ''
    joint_names: [joint1, joint2]
    points:
    - positions: [0.0, 0.5]      # one number per joint name
      velocities: [0.0, 0.0]     # each of these four: empty (or absent) or one per joint
      accelerations: []
      effort: []
      time_from_start: {sec: 0, nanosec: 0}     # optional (absent: 0)

:func:`read` returns a :class:`Trajectory` (numpy arrays, NaN-free: a file with NaN, inf,
a non-number, a duplicate or empty joint name or a point of the wrong length is refused with
a short ValueError saying where); :func:`write` writes one through a temporary file renamed
into place (``text_files.write_atomic``). ``rbd_excite`` writes this layout.

A file comes from outside, so :func:`read` bounds the work before doing it: a regular file
of at most :data:`MAX_BYTES` (8 MiB: about 12,000 points of 7 joints with every field, or
50,000 with positions only), checked on libyaml's event stream before any object is built
(nested at most :data:`MAX_DEPTH` levels: the layout needs 4, a deeper document would
recurse in the loader; at most :data:`MAX_NODES` values and collections: a million empty
points took 25 s and 843 MB to load), loaded with libyaml's ``CSafeLoader`` where PyYAML
has it (its pure-Python loader took 65 s and 981 MB for 10.8 MB), and at most
:data:`MAX_JOINTS` names, :data:`MAX_POINTS` points and :data:`MAX_VALUES` numbers per field
(names × points), checked before an array is allocated.
"""
import math
from dataclasses import dataclass, field

import numpy as np
import yaml

from .text_files import read_text, write_atomic

FIELDS = ("positions", "velocities", "accelerations", "effort")
MAX_BYTES = 8 << 20
MAX_DEPTH = 16
MAX_NODES = 600_000
MAX_JOINTS = 1_000
MAX_POINTS = 100_000
MAX_VALUES = 2_000_000
LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)     # libyaml's, where PyYAML has it
DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


@dataclass
class Trajectory:
    """joint_names (J,), t (N,) seconds, and per field of :data:`FIELDS` an (N, J) array or None."""

    joint_names: list
    t: np.ndarray
    fields: dict = field(default_factory=dict)
    frame_id: str = ""


def read(path):
    """Return the :class:`Trajectory` of the YAML file ``path``; ValueError saying why not."""
    text = read_text(path, MAX_BYTES)
    try:
        _check_events(text)
        doc = yaml.load(text, Loader=LOADER)
    except (ValueError, TypeError, IndexError, OverflowError) as exc:
        if isinstance(exc, _Refused):
            raise
        # PyYAML's constructors on what its resolver took for a number or a date ("2001-13-
        # 99", an integer of 5,000 digits) raise these rather than a YAMLError
        raise ValueError(f"a value YAML cannot construct ({_short(exc, 60)})") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problem = getattr(exc, "problem", None)          # libyaml's nesting limit, say
        where = [f"line {mark.line + 1}"] if mark is not None else []
        where += [_short(problem, 60)] if problem else []
        raise ValueError(f"not YAML ({': '.join(where)})" if where else "not YAML") from None
    return parse(doc)


def _check_events(text):
    """
    Refuse a document too deep, too large or tagged, from libyaml's events: nothing built.

    _Refused (a ValueError): nested deeper than :data:`MAX_DEPTH`, more than
    :data:`MAX_NODES` values and collections, an explicit tag (``!!float``: PyYAML's
    constructors fail on some with an IndexError; the layout has none).
    """
    depth = nodes = 0
    for event in yaml.parse(text, Loader=LOADER):
        if getattr(event, "tag", None) not in (None, "!"):
            raise _Refused(f"an explicit YAML tag ({_short(event.tag)}): not part of a "
                           "JointTrajectory")
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            if depth > MAX_DEPTH:
                line = event.start_mark.line + 1 if event.start_mark else "?"
                raise _Refused(f"nested deeper than {MAX_DEPTH} levels (line {line}): not "
                               "a JointTrajectory")
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1
            continue
        elif not isinstance(event, (yaml.ScalarEvent, yaml.AliasEvent)):
            continue
        nodes += 1
        if nodes > MAX_NODES:
            raise _Refused(f"more than {MAX_NODES} values and collections: too large for a "
                           "JointTrajectory file")


class _Refused(ValueError):
    """A document refused by :func:`_check_events` (not an error of PyYAML's constructors)."""


def parse(doc):
    """Return the :class:`Trajectory` of a loaded YAML document; ValueError saying why not."""
    if not isinstance(doc, dict):
        raise ValueError("not a JointTrajectory: a mapping with joint_names and points")
    names, points = doc.get("joint_names"), doc.get("points")
    if not isinstance(names, list) or not all(isinstance(n, str) and n for n in names):
        raise ValueError("joint_names must be a list of non-empty names")
    if len(set(names)) != len(names):
        raise ValueError("joint_names has duplicates")
    if not isinstance(points, list):
        raise ValueError("points must be a list")
    _check_sizes(len(names), len(points))
    frame = ((doc.get("header") or {}).get("frame_id", "")
             if isinstance(doc.get("header") or {}, dict) else None)
    if not isinstance(frame, str):
        raise ValueError("header must be a mapping with a frame_id string")
    n, nj = len(points), len(names)
    present = {f: None for f in FIELDS}
    out = {}
    t = np.zeros(n)
    for k, p in enumerate(points):
        if not isinstance(p, dict):
            raise ValueError(f"point {k} is not a mapping")
        for f in FIELDS:
            values = p.get(f) or []
            if not isinstance(values, list) or (values and len(values) != nj):
                raise ValueError(f"point {k}: {f} must have {nj} numbers (or none)")
            if present[f] is None:
                present[f] = bool(values)
                if values:
                    out[f] = np.empty((n, nj))
            elif present[f] != bool(values):
                raise ValueError(f"point {k}: {f} given for some points only")
            for j, x in enumerate(values):
                out[f][k, j] = _number(x, f"point {k}: {f} of {_short(names[j])}")
        t[k] = _time(p.get("time_from_start"), k)
    return Trajectory(list(names), t, out, frame)


def _check_sizes(joints, points):
    """Refuse (ValueError) more names, points or numbers per field than the limits."""
    for count, limit, what in ((joints, MAX_JOINTS, "joint_names"),
                               (points, MAX_POINTS, "points"),
                               (joints * points, MAX_VALUES, "numbers per field (names x points)")):
        if count > limit:
            raise ValueError(f"{count} {what}: at most {limit}")


def _number(x, where):
    try:
        ok = not isinstance(x, bool) and isinstance(x, (int, float)) and math.isfinite(x)
    except OverflowError:                 # an integer beyond float's range
        ok = False
    if not ok:
        raise ValueError(f"{where} is not a finite number ({_short(x)})")
    return float(x)


def _time(value, k):
    if value is None:
        return 0.0
    if not isinstance(value, dict) or set(value) - {"sec", "nanosec"}:
        raise ValueError(f"point {k}: time_from_start must be {{sec, nanosec}}")
    sec, nanosec = value.get("sec", 0), value.get("nanosec", 0)
    for x in (sec, nanosec):
        if isinstance(x, bool) or not isinstance(x, int):
            raise ValueError(f"point {k}: time_from_start's sec and nanosec must be integers")
    if not (-2 ** 31 <= sec < 2 ** 31 and 0 <= nanosec < 10 ** 9):
        raise ValueError(f"point {k}: time_from_start out of range")
    return sec + 1e-9 * nanosec


def _short(value, limit=40):
    try:
        text = str(value)
    except ValueError:                    # an integer of more than 4,300 digits
        text = f"a {type(value).__name__} too long to show"
    return text if len(text) <= limit else text[:limit - 3] + "..."


def dump(traj):
    """Return the YAML text of a :class:`Trajectory` (the message's layout, every field)."""
    sec = np.floor(traj.t).astype(np.int64)
    nanosec = np.minimum(np.rint((traj.t - sec) * 1e9), 999_999_999).astype(np.int64)
    points = []
    for k in range(len(traj.t)):
        p = {f: (traj.fields[f][k].tolist() if traj.fields.get(f) is not None else [])
             for f in FIELDS}
        p["time_from_start"] = {"sec": int(sec[k]), "nanosec": int(nanosec[k])}
        points.append(p)
    doc = {"header": {"stamp": {"sec": 0, "nanosec": 0}, "frame_id": traj.frame_id},
           "joint_names": list(traj.joint_names), "points": points}
    return yaml.dump(doc, Dumper=DUMPER, sort_keys=False, default_flow_style=None)


def write(path, traj):
    """Write ``traj`` to ``path`` through a temporary file beside it, renamed into place."""
    write_atomic(path, dump(traj))
