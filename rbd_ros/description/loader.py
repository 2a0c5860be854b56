"""
URDF -> Model.

Fixed joints are removed: the child link's inertia is merged into the body it is welded to
(compact-inertia merge) and the placements of the joints below it are composed through it,
so the tree holds only movable bodies -- the same tree Pinocchio builds.
"""
import math
import warnings

import numpy as np

from ..model import inertia as _inertia
from .mimic_coupling import Coupling
from ..model.joints import BY_URDF_TYPE, FREE_FLYER, KINDS
from ..model import Model
from .physical_checks import (check_link_inertia, odd_inertia_warning, rotational_inertia,
                              undriven_joints)
from .size_limits import DEFAULT_LIMITS, DescriptionLimits, check_counts, check_size
from .urdf_reader import (URDFError, check_document, excerpt, parse_xml, read_robot,
                          read_source)

# URDF joint type -> the code of its joint kind (the registry rbd_ros.model.joints); "fixed"
# joints are merged away
SUPPORTED = {name: kind.code for name, kind in BY_URDF_TYPE.items()}
# the types of the kinds that may only be the tree's root ("floating": the free flyer;
# "planar": a base in a plane)
ROOT_TYPES = tuple(name for name, kind in BY_URDF_TYPE.items() if kind.root_only)


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


def _parse(text, source, limits, floating_base):
    """Parse, count (``urdf_limits``) and check the document; read its links and joints."""
    root = parse_xml(text, source)
    check_counts(root, limits, source, floating_base)
    check_document(root, source)
    return read_robot(root, source)


def _link_inertia(link, source, strict, odd):
    """
    Return the link's compact inertia in its own frame (zeros for a link without <inertial>).

    Refuses what makes the dynamics meaningless; appends a link whose moments violate the
    triangle inequality to ``odd`` (urdf_checks.check_link_inertia).
    """
    inertial = link.inertial
    if inertial is None:
        return np.zeros(10)
    mass = float(inertial.mass or 0.0)
    rot = rotational_inertia(inertial.inertia)
    check_link_inertia(link.name, mass, rot, source, strict, odd)
    R, c = _pose(inertial.origin)
    return _inertia.compact(mass, c, R @ rot @ R.T)


MIMIC_OPTIONS = ("coupled", "independent", "error")


def load_model(urdf, floating_base=False, mimic="coupled", strict_inertia=False,
               allow_massless=False, on_warning=None, limits=None):
    """
    Build a :class:`Model` from a URDF file path, XML string or urdf-parser-py ``Robot``.

    Only links, inertials and joints are read: visual, collision, material, transmission and
    gazebo content never makes a robot unloadable. xacro is not expanded: run ``xacro``
    first. Units are the URDF's: m, kg, kg·m², rad.

    Parameters
    ----------
    urdf : str, os.PathLike or urdf_parser_py.urdf.Robot
        A path to a URDF file, the URDF's XML itself, or a ``Robot`` (any object with
        ``to_xml_string()``, read through its XML: the same checks and numbers).
    floating_base : bool
        True: the root link gets a free-flyer joint; q then starts with the base position and
        quaternion (x, y, z, w) in the world (7 numbers), v with its linear and angular
        velocity in the base frame (6 numbers). Default False: the root is fixed to the world.
        A URDF ``floating`` joint is that same free flyer, read where the model can have it:
        as the only joint of the root link (a massless "world", as Pinocchio loads it), at an
        identity origin, with ``floating_base=False``; anywhere else it is refused. A URDF
        ``planar`` joint there (at any origin, its axis z) is a planar base: q starts with
        x, y, cos θ, sin θ, v with v_x, v_y, ω in the base frame.
    mimic : str
        ``"coupled"``, ``"independent"`` or ``"error"``: mimic joints (q_m = multiplier ·
        q_leader + offset). ``"coupled"`` (default): each follows its leader, the model's
        degrees of freedom are the independent joints and every algorithm works on that
        reduced system (``rbd_ros.description.mimic_coupling``;
        a follower of a follower resolves to the end of the chain). ``"independent"``: each is
        an ordinary joint with its own entry in q (Pinocchio's default). ``"error"``: refused.
        A mimic tag on a fixed joint couples nothing and is ignored.
    strict_inertia : bool
        True: principal moments that violate the triangle inequality are refused; default
        False: kept, with one warning.
    allow_massless : bool
        True: accept a movable joint that drives no mass or inertia (M then singular).
    on_warning : callable or None
        Given each warning's text (the node gives it to its ROS logger); None: Python's
        ``warnings``.
    limits : rbd_ros.description.size_limits.DescriptionLimits or None
        Size limits (bytes, links, degrees of freedom); None: its defaults.

    Returns
    -------
    Model
        The immutable model: ``nq``, ``nv`` (= nq, or nq - 1 with a floating base),
        ``joint_names`` (the order of every array the algorithms take and return),
        ``link_frames``.

    Raises
    ------
    URDFError
        Duplicate or empty names, NaN or inf in an origin, axis or inertial, a negative mass,
        a rotational inertia that is not positive semi-definite, a massless movable joint
        (unless ``allow_massless``); ``DescriptionTooLarge`` (a
        URDFError) for a description over ``limits``, with the numbers, before its model is
        built.
    ValueError
        ``mimic`` not one of its choices.

    """
    limits = DEFAULT_LIMITS if limits is None else DescriptionLimits(*limits).check()
    if mimic not in MIMIC_OPTIONS:
        raise ValueError(f"mimic must be one of {', '.join(map(repr, MIMIC_OPTIONS))}, "
                         f"not {mimic!r}")
    text, source = read_source(urdf, limits.max_bytes)
    check_size(text, limits, source)
    robot = _parse(text, source, limits, floating_base)
    links = {link.name: link for link in robot.links}
    if not links:
        raise URDFError(f"URDF ({source}) has no <link>")
    children, root = _tree(robot, links, source, mimic)
    root_joint = _root_joint(children, root, source, floating_base)
    floats = floating_base or root_joint is not None
    followers = _mimic_followers(robot, source) if mimic == "coupled" else {}
    bodies = _Bodies(links, source, strict_inertia)
    # body -1 is the world when the base is fixed: what is welded to it has no effect
    root_body = bodies.add(-1, FREE_FLYER, _IDENTITY, np.zeros(3), root) if floating_base else -1
    visited = bodies.build(children, root, root_body)
    unreachable = sorted(set(links) - visited)
    if unreachable:
        raise URDFError(f"URDF ({source}): {len(unreachable)} links ({_names(unreachable)}) "
                        f"are not connected to the root {root!r} (a kinematic loop)")
    if not allow_massless:
        _refuse_undriven(bodies, source)
    if bodies.odd:
        if on_warning is None:
            warnings.warn(odd_inertia_warning(bodies.odd, source), stacklevel=2)
        else:
            on_warning(odd_inertia_warning(bodies.odd, source))
    coupling = None
    if followers:
        try:
            root = KINDS[bodies.joint_type[0]]
            coupling = Coupling(bodies.joint_names, (root.nq, root.nv) if floats else (0, 0),
                                followers)
        except ValueError as exc:          # a cycle of mimic joints
            raise URDFError(f"URDF ({source}): {exc}") from None
    return Model(robot.name or "robot", bodies.parent, bodies.joint_type, bodies.placement,
                 bodies.axis, bodies.inertia, bodies.body_names, bodies.joint_names,
                 bodies.lower, bodies.upper, bodies.velocity, bodies.effort, coupling=coupling,
                 link_frames=bodies.frames)


def _names(names, count=5):
    """Return the first ``count`` names, quoted, and how many more there are."""
    shown = ", ".join(excerpt(n) for n in names[:count])
    return shown + (f" and {len(names) - count} more" if len(names) > count else "")


def _refuse_undriven(bodies, source):
    """Refuse a model with movable joints that drive nothing (M would be singular)."""
    idle = undriven_joints(bodies.parent, bodies.joint_type, bodies.placement, bodies.axis,
                           bodies.inertia)
    if idle:
        first = len(bodies.parent) - len(bodies.joint_names)    # the root's free flyer has no name
        joints = ["the floating base" if i < first else bodies.joint_names[i - first]
                  for i in idle]
        raise URDFError(f"URDF ({source}): joint(s) {_names(joints)} move no mass or inertia "
                        "(nothing below them, or all of it on the joint axis), so the "
                        "joint-space inertia matrix is singular; load_model(..., "
                        "allow_massless=True) loads it anyway")


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
                            f"supported yet ({', '.join(SUPPORTED)} and fixed are)")
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


def _root_joint(children, root, source, floating_base):
    """
    Return the root link's joint of a root-only kind ("floating", "planar"), or None.

    Such a joint anywhere else is refused.

    The model has such a joint as its first body only (``rbd_ros.model.joints``): the only
    joint of the root link, a free flyer at an identity origin (its q is the base's placement
    in the world), a planar joint at any (its plane), and not with ``floating_base=True`` (a
    second base).
    """
    found = None
    for link, joints in children.items():
        for joint in joints:
            if joint.type not in ROOT_TYPES:
                continue
            where = f"{joint.type} joint {joint.name!r} ({source})"
            if link != root or len(joints) != 1:
                raise URDFError(f"{where}: only the root link's only joint may be "
                                f"{joint.type} (the root link here is {root!r})")
            if floating_base:
                raise URDFError(f"{where}: with floating_base=True the root already floats")
            R, p = _pose(joint.origin)
            kind = KINDS[SUPPORTED[joint.type]]
            if kind.position_left_out and not (np.array_equal(R, np.eye(3)) and not p.any()):
                raise URDFError(f"{where}: its origin must be the identity (the base's "
                                "placement is its q)")
            if joint.mimic is not None:
                raise URDFError(f"{where}: it cannot mimic another joint")
            axis = None if joint.axis is None else np.asarray(joint.axis, float)
            norm = 0.0 if axis is None else float(np.linalg.norm(axis))
            if kind.only_axis is not None and axis is not None and not (
                    norm > 0.0 and np.allclose(axis / norm, kind.only_axis, rtol=0.0, atol=1e-9)):
                only = " ".join(f"{x:g}" for x in kind.only_axis)
                raise URDFError(f"{where}: its axis must be {only}, the only one Pinocchio "
                                f"reads for a {joint.type} joint")
            found = joint
    return found


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
        if leader.type == "fixed" or leader.type in ROOT_TYPES:
            raise URDFError(f"{where} mimics the {leader.type} joint {tag.joint!r}: it has "
                            "no single motion to follow")
        multiplier = 1.0 if tag.multiplier is None else float(tag.multiplier)
        offset = 0.0 if tag.offset is None else float(tag.offset)
        if not (math.isfinite(multiplier) and math.isfinite(offset)):
            raise URDFError(f"{where}: multiplier {multiplier} and offset {offset} must be "
                            "finite")
        followers[joint.name] = (tag.joint, multiplier, offset)
    return followers


class _Bodies:
    """The movable bodies of a URDF tree as the lists a :class:`Model` is built from."""

    def __init__(self, links, source, strict_inertia=False):
        self.links, self.source, self.strict_inertia = links, source, strict_inertia
        self.parent, self.joint_type, self.placement, self.axis = [], [], [], []
        self.inertia, self.body_names, self.joint_names = [], [], []
        self.lower, self.upper, self.velocity, self.effort = [], [], [], []
        self.odd = []                  # links whose inertia violates the triangle inequality
        self.frames = {}               # link -> (body, R, p): its frame in the body's

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
            if joint is not None and KINDS[SUPPORTED.get(joint.type, 0)].root_only:
                body = self.add(body, SUPPORTED[joint.type], pose, np.zeros(3), joint.child)
                pose = _IDENTITY
            elif joint is not None and joint.type != "fixed":
                body = self.add_movable(joint, body, pose)
                pose = _IDENTITY                      # the link frame is the joint frame
            visited.add(link_name)
            self.frames[link_name] = (body, pose[0], pose[1])
            link_inertia = _link_inertia(self.links[link_name], self.source,
                                         self.strict_inertia, self.odd)
            if body >= 0 and pose is _IDENTITY and not self.inertia[body].any():
                self.inertia[body] = link_inertia     # the body's own link: nothing to merge
            elif body >= 0:
                self.inertia[body] = _inertia.merge(self.inertia[body], link_inertia, *pose)
            for child in reversed(children[link_name]):   # popped in document order
                stack.append((child, child.child, body, _compose(pose, _pose(child.origin))))
        return visited
