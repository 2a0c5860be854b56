"""The record every joint kind gives the registry (``rbd_ros.model.joints``)."""
from typing import Callable, NamedTuple


class JointKind(NamedTuple):
    """
    What the model, the loader, the size limits and the generators know of one joint kind.

    ``code``: its number in ``Model.joint_type`` and the kernels' table (0, 1, ... in the
    registry's order); ``urdf_types``: the URDF ``<joint type>`` names read as this kind;
    ``nq``, ``nv``: its entries of q and v; ``root_only``: only the tree's root may be of this
    kind, the model's base (the free flyer, whose six accelerations the algorithms solve in
    the world frame; the planar joint, whose state no JointState carries);
    ``axis_motion``: a 1-dof motion along or about the joint axis ("rotate", "slide") that the
    generated kernels (``rbd_ros.specialized``) write out, or None; ``neutral()``: its q at
    rest, Pinocchio's ``neutral``; ``random(rng, lower, upper)``: a q drawn within the limits
    (each an array of nq), unbounded entries from a unit box or a uniform rotation;
    ``unit_part``: (first, count, what) of its q entries that hold a unit vector (a
    "quaternion", a "direction (cos θ, sin θ)"), which the kernels normalize and refuse all
    zero, or None;
    ``position_left_out``: its world placement leaves out its position q[0:3] (the world-frame
    kernels run in the world translated to it: the free-flyer root, whose module says why);
    ``only_axis``: the one URDF ``<axis>`` it reads as it is (a unit vector; another given is
    refused), or None where any axis is read.
    The kernels' pieces (jcalc and the others) are the functions of the kind's own module,
    dispatched by ``rbd_ros.algorithms.joints``.
    """

    code: int
    name: str
    urdf_types: tuple
    nq: int
    nv: int
    root_only: bool
    axis_motion: object
    neutral: Callable
    random: Callable
    unit_part: tuple = None
    position_left_out: bool = False
    only_axis: tuple = None
