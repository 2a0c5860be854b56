"""
The dynamics node's ``~/retime_trajectory``: the time-optimal timing of a planner's path.

A ``trajectory_msgs/JointTrajectory`` of waypoints (positions) in, the same joints timed by
``rbd_ros.retime`` (TOPP-RA under the velocity, acceleration and effort limits, with the node's
dynamics: payloads, joint parameters, mimic coupling) out, with per point the limit that
binds. Served beside the other trajectory services (``trajectories``: the planner process or
worker thread, never the ticks); joint names and mimic followers as there (every joint once,
any order, followers optional and ignored on the way in, filled from their leaders on the
way out, their effort 0).

Sizes are bounded as the other trajectory services: at most ``trajectory_request.MAX_POINTS``
waypoints and answer points, at most :data:`MAX_GRID` grid points. A bad request gets
``success: false`` with a short reason (``services.guarded_service``): fewer than two waypoints,
NaN, duplicate or unknown names, a waypoint outside the joint limits, a path where standing
still breaks an effort limit (the joint named), one TOPP-RA cannot time.
"""
import array

import numpy as np
from builtin_interfaces.msg import Duration
from trajectory_msgs.msg import JointTrajectoryPoint

import rbd_ros
from rbd_ros.retiming import retimer as retiming
from . import conversions
from .reporting import excerpt
from .services import RequestError
from .trajectory_request import MAX_POINTS, TrajectoryRequest

MAX_GRID = 10_000
DEFAULT_GRID = retiming.DEFAULT_GRID
LIMIT_NAMES = ("", "velocity", "acceleration", "effort")     # retiming.KINDS, "none" as ""


def retime_trajectory(robot, req, resp, timings=None):
    """
    Fill ``resp`` with the retimed ``req.trajectory``; RequestError or ValueError saying why not.

    ``timings``: a dict that gets the core's breakdown (``Retimed.timings``) and "messages"
    (the request read and the answer written, seconds), for ``bench/bench_services.py``.
    """
    import time
    started = time.perf_counter()
    if robot.model.floating_base:
        raise RequestError("a floating-base model has no joint path to retime")
    traj = TrajectoryRequest(robot, req.trajectory, False, 0)
    if traj.n < 2:
        raise RequestError(f"at least two waypoints are needed, got {traj.n}")
    waypoints = traj.states("positions", (), 0, traj.n)
    acc = _acceleration_limits(robot, traj, req.acceleration_limits)
    grid = int(req.grid_points) or DEFAULT_GRID
    if not 2 <= grid <= MAX_GRID:
        raise RequestError(f"grid_points must be 2 to {MAX_GRID} (0: {DEFAULT_GRID}), got {grid}")
    period = float(req.sample_period)
    if not (np.isfinite(period) and period >= 0):
        raise RequestError(f"sample_period must be >= 0 s (0: the grid points), got {period!r}")
    read = time.perf_counter() - started
    r = rbd_ros.retime(robot.model, waypoints, velocity_scale=req.velocity_scale or 1.0,
                       acceleration_limits=acc, effort_scale=req.effort_scale or 1.0,
                       joint_parameters=robot.joints, grid=grid,
                       sample_period=period or None, max_samples=MAX_POINTS)
    started = time.perf_counter()
    _answer(robot, traj, req, resp, r)
    if timings is not None:
        timings.update(r.timings, messages=read + time.perf_counter() - started)


def _acceleration_limits(robot, traj, values):
    """Return the model-order acceleration limits (None: none) of the request's field."""
    values = np.asarray(values, np.float64)
    if len(values) == 0:
        return None
    if len(values) != len(traj.names):
        raise RequestError(f"acceleration_limits has {len(values)} values for "
                           f"{len(traj.names)} joint_names (or none)")
    limits = values[traj.order.model]
    bad = np.flatnonzero(~(limits > 0))
    if len(bad):
        name = robot.joint_names[bad[0]]
        raise RequestError(f"acceleration limit of {excerpt(name)} must be > 0 (inf: none), "
                           f"got {limits[bad[0]]}")
    return limits


def _answer(robot, traj, req, resp, r):
    """Write the :class:`rbd_ros.Retimed` ``r`` into ``resp`` in the request's joint order."""
    n = len(r.t)
    fields = [np.frombuffer(traj.split(x, follower_scale=scale, positions=positions)[0],
                            np.float64).reshape(n, -1)
              for x, scale, positions in ((r.q, 1.0, True), (r.v, 1.0, False),
                                          (r.a, 1.0, False), (r.tau, 0.0, False))]
    sec = np.floor(r.t)
    nanosec = np.minimum(np.rint((r.t - sec) * 1e9), 999_999_999).astype(np.int64)
    resp.trajectory.points = _points(fields, sec.astype(np.int64), nanosec)
    resp.trajectory.header = req.trajectory.header
    resp.trajectory.joint_names = traj.names
    resp.duration = r.duration
    resp.time_scale = r.time_scale
    names = robot.joint_names
    resp.binding_limit = [LIMIT_NAMES[k] for k in r.binding]
    resp.binding_joint = [names[j] if j >= 0 else "" for j in r.binding_joint]
    resp.binding_ratio = conversions.flat_doubles(r.binding_ratio)


_SLOTS = {JointTrajectoryPoint: {"_positions", "_velocities", "_accelerations", "_effort",
                                 "_time_from_start", "_check_fields"},
          Duration: {"_sec", "_nanosec", "_check_fields"}}


def _points(fields, sec, nanosec):
    """
    Return the answer's JointTrajectoryPoints: rows of ``fields`` (4 (N, J) arrays), times.

    Made without their ``__init__`` where the generated classes have the slots written here
    (checked): rclpy's message constructors take 10-20 µs per point (10 ms of a 500-point
    answer, a third of the service's budget), filling the slots directly 2 µs; the values
    are what the setters would store (float64 ``array.array``, ints within range).
    Otherwise, the constructors.
    """
    n = len(sec)
    width = 8 * fields[0].shape[1]               # bytes per row
    rows = []
    for f in fields:                             # an array.array per row, from one buffer
        data = np.ascontiguousarray(f, np.float64).tobytes()
        rows.append([array.array("d", data[k * width:(k + 1) * width]) for k in range(n)])
    fast = all(set(getattr(cls, "__slots__", ())) == slots for cls, slots in _SLOTS.items())
    points = []
    for k in range(n):
        if fast:
            p = JointTrajectoryPoint.__new__(JointTrajectoryPoint)
            d = Duration.__new__(Duration)
            d._sec, d._nanosec, d._check_fields = int(sec[k]), int(nanosec[k]), False
            (p._positions, p._velocities, p._accelerations, p._effort) = (f[k] for f in rows)
            p._time_from_start, p._check_fields = d, False
        else:
            p = JointTrajectoryPoint(positions=rows[0][k], velocities=rows[1][k],
                                     accelerations=rows[2][k], effort=rows[3][k],
                                     time_from_start=Duration(sec=int(sec[k]),
                                                              nanosec=int(nanosec[k])))
        points.append(p)
    return points
