"""
The dynamics node's trajectory services: a whole trajectory in one call, for planners.

``~/trajectory_torques`` (τ, limits, optional ∂τ/∂q, ∂τ/∂v at every point),
``~/trajectory_effective_mass`` (a link's effective mass along the path's direction) and
``~/trajectory_forward`` (q̈ at every point, or a rollout with optional step derivatives)
take a ``trajectory_msgs/JointTrajectory`` and answer with flat row-major arrays (point after
point); the maths is the core's (the batch entries, ``rbd_ros.batch.rollout``). Joint names, the
floating base and mimic followers follow the other services (``services`` module docstring):
every joint named once in any order, followers optional (their positions and velocities are
ignored, their effort acts through the coupling), answers in the request's joint order.

Request sizes are bounded (README: request sizes): at most ``trajectory_request.MAX_POINTS``
points, and at most ``trajectory_request.MAX_DERIVATIVE_NUMBERS`` numbers of derivatives in
one answer; a bad request gets ``success: false`` with a short reason, and so does one whose
result is not finite.

With joint parameters (``rbd_ros.actuation``) τ, q̈ and their derivatives include them, and
the limits are checked on that τ (the motor's); a rollout is refused (it integrates the
rigid-body dynamics).
"""
import numpy as np

import rbd_ros
from rbd_ros.actuation import dynamics as actuation
from rbd_ros.batch import operational as _operational, rollout as _rollout
from . import conversions
from .reporting import excerpt
from .retime_service import retime_trajectory
from .services import RequestError, guarded_service
from .trajectory_request import TrajectoryRequest

MAX_DT = 1.0                             # s: a rollout step longer than this is a mistake
MODES = ("points", "rollout")


def create_trajectory_services(node, rbd_srv, worker):
    """
    Create ``~/trajectory_torques``, ``~/trajectory_forward`` and ``~/retime_trajectory``.

    Computed and answered on ``worker`` (a ``planner.worker.PlannerWorker``): off the
    executor's thread, so a long request does not hold the ticks.
    """
    for name, srv_type, handler in (
            ("trajectory_torques", rbd_srv.TrajectoryTorques, trajectory_torques),
            ("trajectory_forward", rbd_srv.TrajectoryForward, trajectory_forward),
            ("retime_trajectory", rbd_srv.RetimeTrajectory, retime_trajectory),
            ("trajectory_feedforward", rbd_srv.TrajectoryFeedforward, trajectory_feedforward),
            ("trajectory_effective_mass", rbd_srv.TrajectoryEffectiveMass,
             trajectory_effective_mass)):
        worker.create_service(node, srv_type, "~/" + name, guarded_service(node, name, handler))


def trajectory_torques(robot, req, resp):
    traj = TrajectoryRequest(robot, req.trajectory, req.derivatives, 2)
    n = traj.n
    q = traj.states("positions", req.base_q, 7, n)
    v = traj.states("velocities", req.base_v, 6, n)
    a = traj.states("accelerations", req.base_a, 6, n)
    data = rbd_ros.Data(robot.model)
    tau = rbd_ros.rnea_batch(robot.model, q, v, a, data=data)   # the core refuses NaN/inf
    results = {"tau": tau}
    if req.derivatives:
        results["dtau_dq"], results["dtau_dv"], _ = rbd_ros.rnea_derivatives_batch(
            robot.model, q, v, a, data=data)
    tau = _with_joints(robot, results, q, v, a, None)["tau"]
    resp.points = n
    resp.tau, resp.base_tau = traj.split(tau, follower_scale=0.0)
    limits = _rollout.check_limits(robot.model, v, tau)
    resp.feasible = bool(limits.feasible)
    resp.first_violation_point = limits.first_point
    resp.first_violation_joint = ("" if limits.feasible
                                  else robot.joint_names[limits.first_joint])
    resp.first_violation_limit = limits.first_limit
    resp.peak_effort_ratio = traj.per_joint(limits.peak_effort)
    resp.peak_velocity_ratio = traj.per_joint(limits.peak_velocity)
    resp.dof_names = traj.dof_names
    if req.derivatives:
        resp.dtau_dq = traj.matrices(results["dtau_dq"])
        resp.dtau_dv = traj.matrices(results["dtau_dv"])


def trajectory_effective_mass(robot, req, resp):
    """
    Answer ~/trajectory_effective_mass: the effective mass along the direction of motion.

    ``rbd_ros.batch.operational.effective_mass_along_path`` at every point of the request's
    path, for its link: velocities where the points give them (every point, or none).
    """
    model = robot.model
    if not isinstance(req.link, str) or req.link not in model.link_frames:
        raise RequestError(f"link {excerpt(req.link, 80)} is not a link of the model")
    traj = TrajectoryRequest(robot, req.trajectory, False, 0)
    n = traj.n
    q = traj.states("positions", req.base_q, 7, n)
    moving = any(len(p.velocities) for p in traj.points) or len(req.base_v)
    v = traj.states("velocities", req.base_v, 6, n) if moving else None
    try:
        path = _operational.effective_mass_along_path(model, q, req.link, v,
                                                      data=rbd_ros.Data(model))
    except ValueError as exc:
        raise RequestError(excerpt(exc, 300)) from None
    resp.points = n
    resp.effective_mass = conversions.flat_doubles(path.mass)
    resp.defined = path.defined.tolist()
    resp.direction = conversions.flat_doubles(path.direction)
    resp.speed = conversions.flat_doubles(path.speed)


def trajectory_forward(robot, req, resp):
    mode = req.mode or "points"
    if mode not in MODES:
        raise RequestError(f"mode must be one of {MODES} (empty: points), got "
                           f"{excerpt(req.mode, 40)}")
    if mode == "points":
        _forward_points(robot, req, resp)
    else:
        _forward_rollout(robot, req, resp)


def _forward_points(robot, req, resp):
    traj = TrajectoryRequest(robot, req.trajectory, req.derivatives, 2)
    n = traj.n
    q = traj.states("positions", req.base_q, 7, n)
    v = traj.states("velocities", req.base_v, 6, n)
    tau = traj.states("effort", req.base_tau, 6, n, optional_base=True)
    if robot.joints is not None:           # the forward results at τ - f(v)
        tau = robot.joints.rigid_effort(tau, v)
    data = rbd_ros.Data(robot.model)
    results = {"qdd": rbd_ros.aba_batch(robot.model, q, v, tau, data=data)}
    if req.derivatives:
        results["dqdd_dq"], results["dqdd_dv"], _ = rbd_ros.aba_derivatives_batch(
            robot.model, q, v, tau, data=data)
    results = _with_joints(robot, results, q, v, None, tau)
    resp.points = n
    resp.qdd, resp.base_qdd = traj.split(results["qdd"])
    resp.dof_names = traj.dof_names
    if req.derivatives:
        resp.dqdd_dq = traj.matrices(results["dqdd_dq"])
        resp.dqdd_dv = traj.matrices(results["dqdd_dv"])


def trajectory_feedforward(robot, req, resp):
    """
    ``~/trajectory_feedforward``: the request's timed trajectory with effort at every point.

    τ = ID(q, v, a) with the joint parameters and payloads (as ``trajectory_torques``), in
    the request's joint order: a JointTrajectoryController's feed-forward.
    """
    if robot.model.floating_base:
        raise RequestError("fixed-base models only: a floating base's state is not part of a "
                           "JointTrajectory")
    traj = TrajectoryRequest(robot, req.trajectory, False, 0)
    times = np.array([p.time_from_start.sec + 1e-9 * p.time_from_start.nanosec
                      for p in traj.points])
    if len(times) > 1 and not np.all(np.diff(times) > 0):
        k = int(np.flatnonzero(np.diff(times) <= 0)[0]) + 1
        raise RequestError(f"time_from_start must increase strictly: point {k} is at "
                           f"{times[k]:.9g} s, point {k - 1} at {times[k - 1]:.9g} s")
    n = traj.n
    q = traj.states("positions", (), 0, n)
    v = traj.states("velocities", (), 0, n)
    a = traj.states("accelerations", (), 0, n)
    tau = rbd_ros.rnea_batch(robot.model, q, v, a, data=rbd_ros.Data(robot.model))
    tau = _with_joints(robot, {"tau": tau}, q, v, a, None)["tau"]
    joints, _ = traj.split(tau, follower_scale=0.0)
    efforts = np.frombuffer(joints, np.float64).reshape(n, len(traj.names)) if n else ()
    out = resp.trajectory
    out.header, out.joint_names = req.trajectory.header, traj.names
    out.points = list(traj.points)
    for point, effort in zip(out.points, efforts):
        point.effort = conversions.flat_doubles(effort)


def _with_joints(robot, results, q, v, a, tau_in):
    """
    Return the batch ``results`` with the robot's joint parameters (``rbd_ros.actuation``).

    The rigid body's when there are none; RequestError for a result that is not finite.
    """
    if robot.joints is None:
        return results
    tau_in = np.zeros_like(v) if tau_in is None else tau_in
    actuation.finish_batch(robot.joints, robot.model, results, q, v,
                           np.zeros_like(v) if a is None else a, tau_in)
    for key, x in results.items():
        if not np.isfinite(x).all():
            raise RequestError(f"the joint parameters' {key} is not finite (NaN or inf): "
                               "values too large")
    return results


def _forward_rollout(robot, req, resp):
    if robot.joints is not None:
        raise RequestError("a rollout integrates the rigid-body dynamics: not with joint "
                           "parameters (joint_parameters_file, urdf_joint_dynamics) yet")
    method = req.integrator or _rollout.EULER
    if method not in _rollout.METHODS:
        raise RequestError(f"integrator must be one of {_rollout.METHODS} (empty: "
                           f"{_rollout.EULER}), got {excerpt(req.integrator, 40)}")
    dt = float(req.dt)
    if not (np.isfinite(dt) and 0.0 < dt <= MAX_DT):
        raise RequestError(f"rollout needs a step dt with 0 < dt <= {MAX_DT:g} s, got {dt!r}")
    traj = TrajectoryRequest(robot, req.trajectory, req.derivatives, 6)
    if traj.n == 0:
        raise RequestError("rollout needs at least one point (the initial state)")
    q0 = traj.states("positions", req.base_q[:7], 7, 1)[0]
    v0 = traj.states("velocities", req.base_v[:6], 6, 1)[0]
    tau = traj.states("effort", req.base_tau, 6, traj.n, optional_base=True)
    r = _rollout.rollout(robot.model, q0, v0, tau, dt, method, req.derivatives,
                         data=rbd_ros.Data(robot.model))
    resp.points = traj.n
    resp.positions, resp.base_q = traj.split(r.q, positions=True)
    resp.velocities, resp.base_v = traj.split(r.v)
    resp.dof_names = traj.dof_names
    if req.derivatives:
        resp.dx_dx, resp.dx_du = traj.matrices(r.dx_dx, 2, 2), traj.matrices(r.dx_du, 2, 1)
