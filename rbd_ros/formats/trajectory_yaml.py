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
a non-number, a duplicate or empty joint name, a point of the wrong length or more than
:data:`MAX_POINTS` points is refused with a short ValueError saying where); :func:`write`
writes one through a temporary file renamed into place. ``rbd_excite`` writes this layout.
"""
import math
import os
import tempfile
from dataclasses import dataclass, field

import numpy as np
import yaml

from .text_files import read_text

FIELDS = ("positions", "velocities", "accelerations", "effort")
MAX_POINTS = 1_000_000
MAX_BYTES = 256 << 20


@dataclass
class Trajectory:
    """joint_names (J,), t (N,) seconds, and per field of :data:`FIELDS` an (N, J) array or None."""

    joint_names: list
    t: np.ndarray
    fields: dict = field(default_factory=dict)
    frame_id: str = ""


def read(path):
    """Return the :class:`Trajectory` of the YAML file ``path``; ValueError saying why not."""
    try:
        doc = yaml.safe_load(read_text(path, MAX_BYTES))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1})" if mark is not None else ""
        raise ValueError(f"not YAML{where}") from None
    return parse(doc)


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
    if len(points) > MAX_POINTS:
        raise ValueError(f"{len(points)} points: at most {MAX_POINTS}")
    frame = ((doc.get("header") or {}).get("frame_id", "")
             if isinstance(doc.get("header") or {}, dict) else None)
    if not isinstance(frame, str):
        raise ValueError("header must be a mapping with a frame_id string")
    n, nj = len(points), len(names)
    out = {f: np.empty((n, nj)) for f in FIELDS}
    present = {f: None for f in FIELDS}
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
            elif present[f] != bool(values):
                raise ValueError(f"point {k}: {f} given for some points only")
            for j, x in enumerate(values):
                out[f][k, j] = _number(x, f"point {k}: {f} of {_short(names[j])}")
        t[k] = _time(p.get("time_from_start"), k)
    return Trajectory(list(names), t, {f: out[f] for f in FIELDS if present[f]}, frame)


def _number(x, where):
    if isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x):
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
    text = str(value)
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
    return yaml.safe_dump(doc, sort_keys=False, default_flow_style=None)


def write(path, traj):
    """Write ``traj`` to ``path`` through a temporary file beside it, renamed into place."""
    text = dump(traj)
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.partial-", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
