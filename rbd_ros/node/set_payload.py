"""
The dynamics node's ``~/set_payload``: a rigid payload (a grasped object) on a link.

The request names a link of the model (a body, or a link welded to one by fixed joints:
``Model.with_payload`` moves the payload through the fixed placement) and gives the
payload's mass, centre of mass and inertia about it (``geometry_msgs/Inertia``, in the
link's frame); a mass of zero clears that link's payload. The node keeps the model without
payloads (``Robot.unloaded``) and the payloads ({link: compact inertia}), and swaps in a
whole new :class:`Robot` built from them, as for a new robot description
(``robot.RobotSwap``: one reference assignment), taking over the joint states merged so far:
every output and service uses the payload from the next tick on, and the model stays immutable
(``Model.with_payload``). A gravity or output change keeps the payloads; a new robot
description clears them (its bodies may differ).
"""
import functools

import numpy as np

import rbd_ros
from rbd_ros.model import inertia as _inertia
from .reporting import excerpt, names_excerpt
from .services import RequestError, guarded_service


def create_payload_service(node, rbd_srv, robots):
    """Create ``~/set_payload`` on ``node`` (a ``DynamicsNode``; ``robots``: its swap)."""
    node.create_service(rbd_srv.SetPayload, "~/set_payload", guarded_service(
        node, "set_payload", functools.partial(set_payload, robots, node.get_logger())))


def set_payload(robots, logger, robot, req, resp):
    """Attach (or clear, mass 0) the payload of ``req.link``; answer the payloads now held."""
    payloads = install(robots, req.link, payload_inertia(req.inertia))
    resp.links = sorted(payloads)
    resp.masses = [float(payloads[link][0]) for link in resp.links]
    logger.info(f"payloads now: {dict(zip(resp.links, resp.masses))} kg")


def install(robots, link, payload):
    """
    Swap in the robot with ``payload`` (compact inertia; None clears it) on ``link``.

    Return the payloads now held. ``robots``: the node's ``robot.RobotSwap`` (one reference
    assignment; ``~/set_payload`` and ``~/estimate_payload`` with ``apply``). RequestError
    for a payload the dynamics cannot take (:func:`check_payload`).
    """
    if payload is not None:
        check_payload(robots.current(), link, payload)

    def no_link(current):
        return RequestError(f"no link {excerpt(link)} in the model (its links: "
                            f"{names_excerpt(list(current.model.link_frames))})")
    return robots.with_payload(link, payload, no_link)


def payload_inertia(msg):
    """
    Return the compact inertia of a ``geometry_msgs/Inertia``, or None for a mass of zero.

    RequestError for NaN or inf, a negative mass, or a rotational inertia that is not
    positive semi-definite (a rigid body has none of these).
    """
    values = np.array([msg.m, msg.com.x, msg.com.y, msg.com.z, msg.ixx, msg.ixy, msg.ixz,
                       msg.iyy, msg.iyz, msg.izz], np.float64)
    if not np.all(np.isfinite(values)):
        raise RequestError("the payload inertia contains NaN or inf")
    if msg.m < 0:
        raise RequestError(f"the payload mass must be >= 0 (0 clears it), got {msg.m:g}")
    if msg.m == 0:
        return None
    rot = np.array([[msg.ixx, msg.ixy, msg.ixz], [msg.ixy, msg.iyy, msg.iyz],
                    [msg.ixz, msg.iyz, msg.izz]])
    compact = _inertia.compact(msg.m, values[1:4], rot)
    why = _inertia.physical_violation(compact)
    if why and "triangle" not in why:       # as the loader: odd principal moments pass
        raise RequestError(f"the payload inertia is not that of a rigid body: {why}")
    return compact


def check_payload(robot, link, payload):
    """
    Raise RequestError unless ``payload`` on ``link`` of ``robot`` suits the dynamics.

    Refused: a link welded to the world of a fixed base (a payload there moves nothing: the
    request would change nothing while answering success), and a payload whose merged model
    has a non-finite inertia or non-finite torques at the neutral configuration, v = a = 1
    (1e308 kg: every tick would be refused).
    """
    frames = robot.model.link_frames
    if link not in frames:
        return                                  # the swap says so, with the model's links
    if frames[link][0] < 0:
        raise RequestError(f"link {excerpt(link)} is welded to the world (the fixed base): a "
                           "payload on it moves nothing")
    model = robot.unloaded
    for other, inertia in robot.payloads.items():
        if other != link:
            model = model.with_payload(other, inertia)
    with np.errstate(over="ignore", invalid="ignore"):
        model = model.with_payload(link, payload)
        ones = np.ones(model.nv)
        try:
            finite = np.all(np.isfinite(model.inertia)) and np.all(np.isfinite(
                rbd_ros.rnea(model, model.neutral(), ones, ones)))
        except ValueError:                      # the core refuses a result not finite
            finite = False
    if not finite:
        raise RequestError("with this payload the dynamics are not finite (its mass and "
                           "moments overflow them)")
