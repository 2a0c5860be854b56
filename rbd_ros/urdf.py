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


def load_model(urdf, floating_base=False, mimic="error"):
    """
    Build a :class:`Model` from a URDF file path or XML string.

    ``floating_base=True`` gives the root link a free-flyer joint (q: position + quaternion
    (x, y, z, w); v: linear and angular velocity in the base frame).

    Mimic joints are not supported yet: by default they are an error. ``mimic="independent"``
    makes each of them an ordinary joint with its own entry in q (what Pinocchio does by
    default), e.g. to study a gripper's fingers separately.
    """
    if mimic not in ("error", "independent"):
        raise ValueError(f"mimic must be 'error' or 'independent', not {mimic!r}")
    text, source = _read_text(urdf)
    robot = _parse(text, source)
    links = {link.name: link for link in robot.links}
    if not links:
        raise URDFError(f"URDF ({source}) has no <link>")

    children = {name: [] for name in links}
    parent_joint = {}
    for joint in robot.joints:
        for end in (joint.parent, joint.child):
            if end not in links:
                raise URDFError(f"joint {joint.name!r} ({source}) refers to unknown link {end!r}")
        if joint.type not in SUPPORTED and joint.type != "fixed":
            raise URDFError(f"joint {joint.name!r} ({source}): type {joint.type!r} is not "
                            "supported yet (revolute, continuous, prismatic and fixed are)")
        if joint.mimic is not None and mimic == "error":
            raise URDFError(f"joint {joint.name!r} ({source}) mimics {joint.mimic.joint!r}: "
                            "mimic joints are not supported yet (load_model(..., "
                            "mimic='independent') makes it an independent joint)")
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
    root = roots[0]

    parent, jtype, placement, axis, inertia = [], [], [], [], []
    body_names, joint_names = [], []
    lower, upper, vel, eff = [], [], [], []

    def add_body(parent_index, kind, pose, ax, body_name):
        parent.append(parent_index)
        jtype.append(kind)
        placement.append(np.concatenate([pose[0].ravel(), pose[1]]))
        axis.append(ax)
        inertia.append(np.zeros(10))
        body_names.append(body_name)
        return len(parent) - 1

    # body -1 is the world when the base is fixed: what is welded to it has no effect
    visited = set()
    placeholders = []
    if floating_base:
        root_body = add_body(-1, FREE_FLYER, (np.eye(3), np.zeros(3)), np.zeros(3), root)
    else:
        root_body = -1

    def visit(link_name, body, link_pose):
        """Depth-first, children in document order: subtrees are contiguous, parent[i] < i."""
        visited.add(link_name)
        link_inertia = _link_inertia(links[link_name], source, placeholders)
        if body >= 0:
            inertia[body] = _inertia.merge(inertia[body], link_inertia, *link_pose)
        for joint in children[link_name]:
            pose = _compose(link_pose, _pose(joint.origin))   # joint frame in the body frame
            if joint.type == "fixed":
                visit(joint.child, body, pose)
                continue
            ax = np.asarray(joint.axis if joint.axis is not None else (1.0, 0.0, 0.0), np.float64)
            norm = np.linalg.norm(ax)
            if not np.isfinite(norm) or norm < 1e-12:
                raise URDFError(f"joint {joint.name!r} ({source}) has a zero or invalid axis {ax}")
            new = add_body(body, SUPPORTED[joint.type], pose, ax / norm, joint.child)
            joint_names.append(joint.name)
            lim = joint.limit
            continuous = joint.type == "continuous"
            lower.append(-np.inf if continuous or lim is None or lim.lower is None else lim.lower)
            upper.append(np.inf if continuous or lim is None or lim.upper is None else lim.upper)
            vel.append(np.inf if lim is None or lim.velocity is None else lim.velocity)
            eff.append(np.inf if lim is None or lim.effort is None else lim.effort)
            visit(joint.child, new, (np.eye(3), np.zeros(3)))

    visit(root, root_body, (np.eye(3), np.zeros(3)))

    if placeholders:
        warnings.warn(f"{source}: links {[name for name, _ in placeholders]} have placeholder "
                      f"inertias below {PLACEHOLDER_INERTIA:g} kg m² that no body can have "
                      f"({placeholders[0][1]}); kept as given", stacklevel=2)
    unreachable = sorted(set(links) - visited)
    if unreachable:
        raise URDFError(f"URDF ({source}): links {unreachable} are not connected to the root "
                        f"{root!r} (a kinematic loop)")

    return Model(robot.name or "robot", parent, jtype, placement, axis, inertia, body_names,
                 joint_names, lower, upper, vel, eff)
