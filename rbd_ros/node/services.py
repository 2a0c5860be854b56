"""
The dynamics node's services: dynamics of the caller's own state, not the measured one.

Each request names the joints (in any order) and gives q, v and a or τ (plus the base state
for a floating base); the answer comes in the request's joint order, base first. A bad
request gets ``success: false`` and a message naming the problem (quoting at most short
excerpts of the request), and so does one whose result is not finite (values too large):
an answer is never NaN or inf. The core raises ValueError for a result that is not finite
(``rbd_ros.outputs.compute``); the one number computed here, a named follower's value from
its leader's, is checked in :func:`_split`. Any other failure answers ``success: false`` too, and is
counted and logged by the node: a request never ends the node.

With joint parameters (``joint_parameters_file``, ``urdf_joint_dynamics``) every answer
includes them, as the topics do (``rbd_ros.actuation``: τ with Ia a + friction + offset, q̈
and M⁻¹ with M + diag(Ia), the derivatives of both).

Mimic joints (coupled): a request may name the followers or not. Their positions,
velocities and accelerations are ignored (their leaders' define them); a follower's τ in a
forward-dynamics request acts through the coupling (τ_r = Gᵀ τ: added to its leader's,
times the multiplier). Answers list every joint the request named, in its order: a
follower's q̈ is its leader's times the multiplier, its τ 0 (its load is in its leader's τ,
so that a forward-dynamics request with that τ gives back the accelerations); matrices
name the model's degrees of freedom only.
"""
import numpy as np

import rbd_ros
from ..actuation import dynamics as actuation
from .. import outputs
from . import conversions
from .reporting import excerpt, names_excerpt, one_line


class RequestError(ValueError):
    """A service request the node cannot answer; the message says why."""


def create_services(node, rbd_srv):
    """Create the five services on ``node`` (whose ``current_robot()`` they answer with)."""
    for name, srv_type, handler in (
            ("inverse_dynamics", rbd_srv.InverseDynamics, inverse_dynamics),
            ("forward_dynamics", rbd_srv.ForwardDynamics, forward_dynamics),
            ("inverse_inertia", rbd_srv.InverseInertia, inverse_inertia),
            ("inverse_dynamics_derivatives", rbd_srv.InverseDynamicsDerivatives,
             inverse_dynamics_derivatives),
            ("forward_dynamics_derivatives", rbd_srv.ForwardDynamicsDerivatives,
             forward_dynamics_derivatives)):
        node.create_service(srv_type, "~/" + name, guarded_service(node, name, handler))


def inverse_dynamics(robot, req, resp):
    q, v, a, order = _request_state(robot, req, ("v", "a"))
    if robot.joints is None:
        tau = rbd_ros.rnea(robot.model, q, v, a)
    else:
        tau = with_joints(robot, ("tau",), q, v, a=a)[0]
    resp.tau, resp.base_tau = _split(robot, tau, order, follower_scale=0.0)


def forward_dynamics(robot, req, resp):
    q, v, tau, order = _request_state(robot, req, ("v", "tau"))
    if robot.joints is None:
        qdd = rbd_ros.aba(robot.model, q, v, tau)
    else:
        qdd = with_joints(robot, ("qdd",), q, v, tau=tau)[0]
    resp.qdd, resp.base_qdd = _split(robot, qdd, order)


def inverse_inertia(robot, req, resp):
    q, order = _request_state(robot, req, ())
    if robot.joints is None:
        Minv = rbd_ros.minv(robot.model, q)
    else:
        Minv = with_joints(robot, ("Minv",), q, np.zeros(robot.model.nv))[0]
    names, idx = request_dofs(robot, req, order)
    conversions.fill_joint_matrix(resp.minv, resp.minv.header, names, Minv[np.ix_(idx, idx)])


def inverse_dynamics_derivatives(robot, req, resp):
    _derivatives(robot, req, resp, rbd_ros.rnea_derivatives, "a")


def forward_dynamics_derivatives(robot, req, resp):
    _derivatives(robot, req, resp, rbd_ros.aba_derivatives, "tau")


def _derivatives(robot, req, resp, function, third):
    """Answer a derivatives request: ∂/∂q, ∂/∂v of ``function`` at (q, v, ``third``)."""
    q, v, u, order = _request_state(robot, req, ("v", third))
    if robot.joints is None:
        dq, dv, _ = function(robot.model, q, v, u)
    elif third == "a":
        dq, dv = with_joints(robot, ("dtau_dq", "dtau_dv"), q, v, a=u)
    else:
        dq, dv = with_joints(robot, ("dqdd_dq", "dqdd_dv"), q, v, tau=u)
    names, idx = request_dofs(robot, req, order)
    conversions.fill_derivatives(resp.derivatives, resp.derivatives.header, names,
                                 dq[np.ix_(idx, idx)], dv[np.ix_(idx, idx)])


def with_joints(robot, keys, q, v, a=None, tau=None):
    """
    Return the core results ``keys`` at one state with the robot's joint parameters.

    The cheapest call of ``outputs.CALLS`` that gives them and what ``rbd_ros.actuation``
    needs besides; ``a`` and ``tau`` default to zero. ValueError for a result not finite.
    """
    act, model = robot.joints, robot.model
    needed = set(keys) | set(act.extra_results(keys))
    call = next(name for name, results in outputs.CALLS if needed <= set(results))
    z = np.zeros(model.nv)
    results = actuation.compute(act, call, model, q, v, z if a is None else a,
                                z if tau is None else tau)
    return [results[k] for k in keys]


class RequestOrder:
    """Where a request's joints are: ``model`` (model joint -> request index) and followers."""

    def __init__(self, model, followers):
        self.model = model
        # the followers the request names: request indices, leader joints, multipliers
        self.follower_index = np.array([k for k, _, _ in followers], np.intp)
        self.follower_leader = np.array([j for _, j, _ in followers], np.intp)
        self.follower_multiplier = np.array([m for _, _, m in followers], np.float64)


def request_order(robot, names):
    """
    Return the request's :class:`RequestOrder`.

    RequestError unless ``names`` names each joint of the model once (followers may be
    named too).
    """
    if len(set(names)) != len(names):
        raise RequestError("joint_names has duplicates")
    unknown = sorted(set(names) - set(robot.joint_names) - set(robot.followers))
    missing = sorted(set(robot.joint_names) - set(names))
    if unknown or missing:
        raise RequestError(f"joint_names must name each joint of the model once; unknown: "
                           f"{names_excerpt(unknown)}, missing: {names_excerpt(missing)}")
    index = {n: k for k, n in enumerate(names)}
    joint = {n: k for k, n in enumerate(robot.joint_names)}
    followers = [(index[n], joint[leader], multiplier)
                 for n, (leader, multiplier, _) in robot.followers.items() if n in index]
    return RequestOrder(np.array([index[n] for n in robot.joint_names], np.intp), followers)


def _request_state(robot, req, fields):
    """(q, *fields, order) in model order from a service request, or RequestError."""
    names = list(req.joint_names)
    order = request_order(robot, names)
    nj = len(names)
    floating = robot.model.floating_base
    out = []
    for field in ("q",) + tuple(fields):
        values = conversions.vector(getattr(req, field))
        if len(values) != nj:
            raise RequestError(f"{field} has {len(values)} values for {nj} joint_names")
        base = conversions.vector(getattr(req, "base_" + field))
        nbase = (7 if field == "q" else 6) if floating else 0
        if len(base) != nbase:
            raise RequestError(f"base_{field} must have {nbase} values for this "
                               f"{'floating' if nbase else 'fixed'}-base model, got {len(base)}")
        bad = np.flatnonzero(~np.isfinite(values))
        if len(bad):
            raise RequestError(f"{field} of {excerpt(names[bad[0]])} is NaN or inf "
                               f"({values[bad[0]]})")
        if not np.all(np.isfinite(base)):
            raise RequestError(f"base_{field} contains NaN or inf")
        joints = values[order.model]
        if field == "tau":       # a follower's force acts through the coupling: τ_r = Gᵀ τ
            np.add.at(joints, order.follower_leader,
                      order.follower_multiplier * values[order.follower_index])
        out.append(np.concatenate([base, joints]))
    return (*out, order)


def request_dofs(robot, req, order):
    """(names, indices) of the v entries in the request's joint order (base first)."""
    nbase = robot.model.nv_base
    inverse = np.argsort(order.model)                  # the model joints in request order
    idx = np.concatenate([np.arange(nbase), nbase + inverse]).astype(np.intp)
    return [robot.dof_names[i] for i in idx], idx


def _split(robot, x, order, follower_scale=1.0):
    """
    Split a v-sized result into (joints in request order, base part).

    A follower the request names gets its leader's value times its multiplier, times
    ``follower_scale``.
    """
    nbase = robot.model.nv_base
    joints = np.empty(len(order.model) + len(order.follower_index))
    joints[order.model] = x[nbase:]
    joints[order.follower_index] = follower_values(x[nbase:][order.follower_leader],
                                                   order.follower_multiplier, follower_scale)
    return conversions.doubles(joints), conversions.doubles(x[:nbase])


def follower_values(leader, multiplier, scale=1.0):
    """
    Return the answers for named mimic followers: their leaders' values times multipliers.

    The one number of an answer the node computes itself, not the core (which refuses a
    non-finite result of its own): a huge multiplier (the URDF's) can overflow it.
    """
    with np.errstate(over="ignore", invalid="ignore"):     # refused just below
        values = scale * multiplier * leader
    if not np.isfinite(values).all():
        raise RequestError(f"the answer for a mimic joint is not finite: its leader's value "
                           f"(up to {float(np.max(np.abs(leader), initial=0.0)):.3g}) times "
                           "its multiplier overflows")
    return values


def guarded_service(node, name, handler):
    """
    Wrap ``handler(robot, req, resp)`` in a service callback that never fails.

    Every service of the node answers through it: no robot yet is a refusal; after the
    handler, ``success`` true (the message the handler set, if any, is kept); a ValueError
    (RequestError, the core's refusal) is the answer's message, counted
    (``request_refused``); any other exception is the node's to count and log
    (``callback_failed``), and the answer says so.
    """
    def callback(req, resp):
        robot = node.current_robot()
        if robot is None:
            node.request_refused(name)
            resp.success, resp.message = False, "no robot model yet"
            return resp
        try:
            handler(robot, req, resp)
            resp.success = True
        except ValueError as exc:              # RequestError and the core's input errors
            node.request_refused(name)
            resp.success, resp.message = False, one_line(f"{name}: {exc}")
        except Exception as exc:
            node.callback_failed(name, exc)
            resp.success = False
            resp.message = one_line(f"{name}: internal error ({type(exc).__name__}: {exc})")
        return resp
    return callback
