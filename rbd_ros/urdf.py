"""
URDF -> Model.

Fixed joints are removed: the child link's inertia is merged into the body it is welded to
(compact-inertia merge) and the placements of the joints below it are composed through it,
so the tree holds only movable bodies -- the same tree Pinocchio builds.
"""
import math
import os
import warnings

import numpy as np

from . import inertia as _inertia
from .coupling import Coupling
from .model import FREE_FLYER, PRISMATIC, REVOLUTE, Model

SUPPORTED = {"revolute": REVOLUTE, "continuous": REVOLUTE, "prismatic": PRISMATIC}

# Many URDFs give dummy links a placeholder inertia such as ixx = ixy = ... = 1e-6, which is
# not that of any body (rank one) but too small to matter. Below this size (kg m²) an
# invalid inertia is kept with a warning; above it, it is an error.
PLACEHOLDER_INERTIA = 1e-5


class URDFError(ValueError):
    """The robot description cannot be turned into a model; the message says why."""


def rpy_to_matrix(roll, pitch, yaw):
    """URDF convention: R = Rz(yaw) Ry(pitch) Rx(roll)."""
    cr, sr = math.cos(roll), math.sin(roll)
    cp, sp = math.cos(pitch), math.sin(pitch)
    cy, sy = math.cos(yaw), math.sin(yaw)
    return np.array([[cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
                     [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
                     [-sp, cp * sr, cp * cr]])


def _pose(origin):
    """(R, p) of a URDF <origin>; identity when absent."""
    if origin is None:
        return np.eye(3), np.zeros(3)
    xyz = np.zeros(3) if origin.xyz is None else np.asarray(origin.xyz, np.float64)
    rpy = (0.0, 0.0, 0.0) if origin.rpy is None else origin.rpy
    return rpy_to_matrix(*rpy), xyz


def _compose(a, b):
    (Ra, pa), (Rb, pb) = a, b
    return Ra @ Rb, Ra @ pb + pa


def _read_text(urdf):
    if not isinstance(urdf, (str, bytes, os.PathLike)):
        raise URDFError(f"expected a URDF path or XML string, got {type(urdf).__name__}")
    if isinstance(urdf, bytes):
        urdf = urdf.decode("utf-8", errors="replace")
    text = os.fspath(urdf)
    if text.lstrip().startswith("<"):
        return text, "<string>"
    if not os.path.isfile(text):
        raise URDFError(f"{text!r} is neither URDF XML nor an existing file")
    with open(text, encoding="utf-8") as f:
        return f.read(), text


def _parse(text, source):
    from urdf_parser_py import urdf as up
    from urdf_parser_py.xml_reflection import core

    warnings = []
    saved = core.on_error
    core.on_error = warnings.append   # unknown tags (gazebo, transmission...) are not errors
    try:
        robot = up.URDF.from_xml_string(text)
    except Exception as exc:  # the parser raises assorted types for bad XML
        raise URDFError(f"malformed URDF ({source}): {exc}") from None
    finally:
        core.on_error = saved
    return robot


def _link_inertia(link, source, placeholders):
    """
    Return the link's compact inertia in its own frame (zeros for a link without <inertial>).

    Tolerated placeholder inertias are appended to ``placeholders`` as (link, reason).
    """
    inertial = link.inertial
    if inertial is None:
        return np.zeros(10)
    mass = float(inertial.mass or 0.0)
    if not math.isfinite(mass):
        raise URDFError(f"link {link.name!r} ({source}): mass {mass} is not finite")
    if mass < 0:
        raise URDFError(f"link {link.name!r} ({source}): negative mass {mass:g}")
    t = inertial.inertia
    rot = np.zeros((3, 3)) if t is None else np.array(
        [[t.ixx, t.ixy, t.ixz], [t.ixy, t.iyy, t.iyz], [t.ixz, t.iyz, t.izz]], np.float64)
    R, c = _pose(inertial.origin)
    compact = _inertia.compact(mass, c, R @ rot @ R.T)
    why = _inertia.physical_violation(compact, rtol=1e-6)
    if why:
        if np.max(np.abs(np.linalg.eigvalsh(rot))) > PLACEHOLDER_INERTIA:
            raise URDFError(f"link {link.name!r} ({source}): inertia is not physically valid: "
                            f"{why}")
        placeholders.append((link.name, why))
    return compact


MIMIC_OPTIONS = ("coupled", "independent", "error")


def load_model(urdf, floating_base=False, mimic="coupled"):
    """
    Build a :class:`Model` from a URDF file path or XML string.

    ``floating_base=True`` gives the root link a free-flyer joint (q: position + quaternion
    (x, y, z, w); v: linear and angular velocity in the base frame).

    Mimic joints (q_m = multiplier · q_leader + offset): ``mimic="coupled"`` (default)
    couples each to its leader, so the model's degrees of freedom are the independent joints
    and every algorithm works on that reduced system (``rbd_ros.coupling``); a follower of a
    follower is resolved to the independent joint at the end of the chain. ``"independent"``
    makes each an ordinary joint with its own entry in q (what Pinocchio does by default),
    e.g. to study a gripper's fingers separately; ``"error"`` refuses them. A mimic tag on a
    fixed joint couples nothing and is ignored.
    """
    if mimic not in MIMIC_OPTIONS:
        raise ValueError(f"mimic must be one of {', '.join(map(repr, MIMIC_OPTIONS))}, "
                         f"not {mimic!r}")
    text, source = _read_text(urdf)
    robot = _parse(text, source)
    links = {link.name: link for link in robot.links}
    if not links:
        raise URDFError(f"URDF ({source}) has no <link>")
    children, root = _tree(robot, links, source, mimic)
    followers = _mimic_followers(robot, source) if mimic == "coupled" else {}
    bodies = _Bodies(links, source)
    # body -1 is the world when the base is fixed: what is welded to it has no effect
    root_body = bodies.add(-1, FREE_FLYER, _IDENTITY, np.zeros(3), root) if floating_base else -1
    visited = bodies.build(children, root, root_body)
    if bodies.placeholders:
        names = [name for name, _ in bodies.placeholders]
        warnings.warn(f"{source}: links {names} have placeholder inertias below "
                      f"{PLACEHOLDER_INERTIA:g} kg m² that no body can have "
                      f"({bodies.placeholders[0][1]}); kept as given", stacklevel=2)
    unreachable = sorted(set(links) - visited)
    if unreachable:
        raise URDFError(f"URDF ({source}): links {unreachable} are not connected to the root "
                        f"{root!r} (a kinematic loop)")
    coupling = None
    if followers:
        try:
            coupling = Coupling(bodies.joint_names, floating_base, followers)
        except ValueError as exc:          # a cycle of mimic joints
            raise URDFError(f"URDF ({source}): {exc}") from None
    return Model(robot.name or "robot", bodies.parent, bodies.joint_type, bodies.placement,
                 bodies.axis, bodies.inertia, bodies.body_names, bodies.joint_names,
                 bodies.lower, bodies.upper, bodies.velocity, bodies.effort, coupling=coupling)


_IDENTITY = (np.eye(3), np.zeros(3))


def _tree(robot, links, source, mimic):
    """Return (children joints per link in document order, the root link), or refuse."""
    children = {name: [] for name in links}
    parent_joint = {}
    for joint in robot.joints:
        for end in (joint.parent, joint.child):
            if end not in links:
                raise URDFError(f"joint {joint.name!r} ({source}) refers to unknown link {end!r}")
        if joint.type not in SUPPORTED and joint.type != "fixed":
            raise URDFError(f"joint {joint.name!r} ({source}): type {joint.type!r} is not "
                            "supported yet (revolute, continuous, prismatic and fixed are)")
        if joint.mimic is not None and joint.type != "fixed" and mimic == "error":
            raise URDFError(f"joint {joint.name!r} ({source}) mimics {joint.mimic.joint!r}: "
                            "mimic joints are refused with mimic='error' (load_model(..., "
                            "mimic='coupled'), the default, couples it to its leader)")
        if joint.child in parent_joint:
            raise URDFError(f"link {joint.child!r} ({source}) has two parent joints "
                            f"({parent_joint[joint.child].name!r}, {joint.name!r}): kinematic "
                            "loops are not supported")
        parent_joint[joint.child] = joint
        children[joint.parent].append(joint)
    roots = [name for name in links if name not in parent_joint]
    if not roots:
        raise URDFError(f"URDF ({source}) has no root link: its joints form a loop")
    if len(roots) > 1:
        raise URDFError(f"URDF ({source}) has several root links {roots}: it must be one tree")
    return children, roots[0]


def _mimic_followers(robot, source):
    """
    Return {follower: (leader, multiplier, offset)} of the movable joints with a <mimic>.

    A fixed joint's tag is ignored (it couples nothing); a leader that is missing or fixed,
    and a multiplier or offset that is not finite, are refused.
    """
    joints = {joint.name: joint for joint in robot.joints}
    followers = {}
    for joint in robot.joints:
        tag = joint.mimic
        if tag is None or joint.type == "fixed":
            continue
        leader = joints.get(tag.joint)
        where = f"mimic joint {joint.name!r} ({source})"
        if leader is None:
            raise URDFError(f"{where} mimics {tag.joint!r}, which is not a joint of the URDF")
        if leader.type == "fixed":
            raise URDFError(f"{where} mimics the fixed joint {tag.joint!r}: a fixed joint has "
                            "no motion to follow")
        multiplier = 1.0 if tag.multiplier is None else float(tag.multiplier)
        offset = 0.0 if tag.offset is None else float(tag.offset)
        if not (math.isfinite(multiplier) and math.isfinite(offset)):
            raise URDFError(f"{where}: multiplier {multiplier} and offset {offset} must be "
                            "finite")
        followers[joint.name] = (tag.joint, multiplier, offset)
    return followers


class _Bodies:
    """The movable bodies of a URDF tree as the lists a :class:`Model` is built from."""

    def __init__(self, links, source):
        self.links, self.source = links, source
        self.parent, self.joint_type, self.placement, self.axis = [], [], [], []
        self.inertia, self.body_names, self.joint_names = [], [], []
        self.lower, self.upper, self.velocity, self.effort = [], [], [], []
        self.placeholders = []

    def add(self, parent, kind, pose, axis, name):
        """Append a body moved by a joint of ``kind`` at ``pose`` in its parent's frame."""
        self.parent.append(parent)
        self.joint_type.append(kind)
        self.placement.append(np.concatenate([pose[0].ravel(), pose[1]]))
        self.axis.append(axis)
        self.inertia.append(np.zeros(10))
        self.body_names.append(name)
        return len(self.parent) - 1

    def add_movable(self, joint, parent, pose):
        """Append the body of a movable joint, with its axis and limits."""
        ax = np.asarray(joint.axis if joint.axis is not None else (1.0, 0.0, 0.0), np.float64)
        norm = np.linalg.norm(ax)
        if not np.isfinite(norm) or norm < 1e-12:
            raise URDFError(f"joint {joint.name!r} ({self.source}) has a zero or invalid "
                            f"axis {ax}")
        body = self.add(parent, SUPPORTED[joint.type], pose, ax / norm, joint.child)
        self.joint_names.append(joint.name)
        lim = joint.limit
        continuous = joint.type == "continuous"
        self.lower.append(-np.inf if continuous or lim is None or lim.lower is None
                          else lim.lower)
        self.upper.append(np.inf if continuous or lim is None or lim.upper is None
                          else lim.upper)
        self.velocity.append(np.inf if lim is None or lim.velocity is None else lim.velocity)
        self.effort.append(np.inf if lim is None or lim.effort is None else lim.effort)
        return body

    def build(self, children, root, root_body):
        """
        Walk the tree and return the set of links reached.

        Depth-first, children in document order, so that subtrees are contiguous and
        parent[i] < i; a fixed joint merges its child link into the body above
        (compact-inertia merge). Iterative: a chain of any depth loads.
        """
        visited = set()
        stack = [(None, root, root_body, _IDENTITY)]
        while stack:
            joint, link_name, body, pose = stack.pop()
            if joint is not None and joint.type != "fixed":
                body = self.add_movable(joint, body, pose)
                pose = _IDENTITY                      # the link frame is the joint frame
            visited.add(link_name)
            link_inertia = _link_inertia(self.links[link_name], self.source, self.placeholders)
            if body >= 0:
                self.inertia[body] = _inertia.merge(self.inertia[body], link_inertia, *pose)
            for child in reversed(children[link_name]):   # popped in document order
                stack.append((child, child.child, body, _compose(pose, _pose(child.origin))))
        return visited
