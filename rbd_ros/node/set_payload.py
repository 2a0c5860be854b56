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

from rbd_ros.model import inertia as _inertia
from .reporting import excerpt, names_excerpt
from .services import RequestError, _guarded


def create_payload_service(node, rbd_srv, robots):
    """Create ``~/set_payload`` on ``node`` (a ``DynamicsNode``; ``robots``: its swap)."""
    node.create_service(rbd_srv.SetPayload, "~/set_payload", _guarded(
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
    assignment; ``~/set_payload`` and ``~/estimate_payload`` with ``apply``).
    """
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
