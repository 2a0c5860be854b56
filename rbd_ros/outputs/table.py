"""
The outputs table (``OUTPUTS``): each output topic, its message, its core results, its default.

Each output (``~/<name>``) has its message type, the float64[] fields that carry the numbers
and the core results (``RESULTS``) that fill them, whether it needs the measured effort, its
``publish_<name>`` parameter and default; ``CALLS`` the core calls that give the results.
"""
from typing import NamedTuple

import numpy as np

from ..algorithms.joints import motion_subspace
from ..model.joints import KINDS

BASE_DOF_NAMES = ("base_vx", "base_vy", "base_vz", "base_wx", "base_wy", "base_wz")
JOINT_STATE = "sensor_msgs/msg/JointState"
JOINT_VECTOR = "rbd_ros_interfaces/msg/JointVector"
JOINT_MATRIX = "rbd_ros_interfaces/msg/JointMatrix"
DERIVATIVES = "rbd_ros_interfaces/msg/DynamicsDerivatives"
END_EFFECTOR = "rbd_ros_interfaces/msg/EndEffector"
POINT_STAMPED = "geometry_msgs/msg/PointStamped"
CENTROIDAL_MOMENTUM = "rbd_ros_interfaces/msg/CentroidalMomentum"
# outputs switched by another parameter than publish_<name>: the end effector by the frame it
# names, the centroidal momentum with the centre of mass (floating bases only)
SWITCHES = {"end_effector": "end_effector_frame",
            "centroidal_momentum": "publish_center_of_mass"}


def dof_names(model):
    """
    Return one name per entry of v: the base's (``base_dof_names``), then the joints.

    Parameters
    ----------
    model : Model
        The robot.

    Returns
    -------
    tuple of str, length nv
        The base's (``BASE_DOF_NAMES`` on a free flyer, three of them on a planar base),
        then ``model.joint_names``: the names of the rows of the node's vector outputs.

    """
    return base_dof_names(model) + tuple(model.joint_names)


def base_dof_names(model):
    """
    Return the names of the base's entries of v: those of ``BASE_DOF_NAMES`` its S moves.

    A free flyer's six; a planar base's ``base_vx``, ``base_vy``, ``base_wz``; none on a
    fixed base.
    """
    if not model.floating_base:
        return ()
    S = motion_subspace(int(model.joint_type[0]), model.axis[0])     # unit twists, base frame
    return tuple(BASE_DOF_NAMES[int(np.argmax(np.abs(column)))] for column in S.T)


def check_base(model):
    """
    Refuse a model whose base the node and the replay cannot run; return the model.

    They read a floating base's state from nav_msgs/Odometry as a free flyer (six rows
    ``BASE_DOF_NAMES``); a planar base (a URDF planar root joint) is for the core calls only.

    Raises
    ------
    ValueError
        For a base of another number of degrees of freedom, naming it.

    """
    if model.floating_base and model.nv_base != len(BASE_DOF_NAMES):
        kind = KINDS[model.joint_type[0]].name
        raise ValueError(f"its root joint is a {model.nv_base}-dof base (a {kind} joint): the "
                         "node and the replay read a base's state from odometry as a free "
                         "flyer only; the core calls (rbd_ros.rnea, ...) take it")
    return model


class Output(NamedTuple):
    """One output topic, ``~/<name>``, enabled by the parameter ``publish_<name>``."""

    name: str
    msgtype: str              # ROS 2 message type, "package/msg/Name"
    fields: tuple             # the float64[] fields that vary, in order ...
    results: tuple            # ... and the core result (RESULTS) that fills each one
    needs_effort: bool        # forward dynamics: only for messages with every effort known
    default: bool             # published unless the parameter says otherwise
    symbol: str               # a short label (the demo's columns)
    description: str          # of the parameter

    @property
    def parameter(self):
        return SWITCHES.get(self.name, "publish_" + self.name)

    @property
    def topic(self):
        return "~/" + self.name


OUTPUTS = (
    Output("torques", JOINT_STATE, ("effort",), ("joint_tau",), False, True, "τ",
           "~/torques: RNEA at the commanded (or zero) acceleration"),
    Output("accelerations", JOINT_VECTOR, ("data",), ("qdd",), True, True, "q̈",
           "~/accelerations: ABA at the measured effort"),
    Output("inverse_inertia", JOINT_MATRIX, ("data",), ("Minv",), False, False, "M⁻¹",
           "~/inverse_inertia: M⁻¹"),
    Output("rnea_derivatives", DERIVATIVES, ("d_dq", "d_dv"), ("dtau_dq", "dtau_dv"), False,
           False, "∂τ", "~/rnea_derivatives: ∂τ/∂q, ∂τ/∂v"),
    Output("aba_derivatives", DERIVATIVES, ("d_dq", "d_dv"), ("dqdd_dq", "dqdd_dv"), True,
           False, "∂q̈", "~/aba_derivatives: ∂q̈/∂q, ∂q̈/∂v"),
    # operational-space and whole-body outputs (``whole_body``): messages built whole
    Output("end_effector", END_EFFECTOR, ("pose", "twist", "translational_inertia", "inertia",
                                          "effective_mass", "defined"),
           ("ee_pose", "ee_twist", "ee_inertia_t", "ee_inertia", "ee_mass", "ee_defined"),
           False, "", "Λ", "a link: ~/end_effector, its frame's pose, twist, operational-space "
           "inertia Λ and effective masses along the root frame's x, y, z; empty: off"),
    Output("center_of_mass", POINT_STAMPED, ("point",), ("com",), False, False, "c",
           "~/center_of_mass (frame_id: the root link), and for a floating base "
           "~/centroidal_momentum"),
    Output("centroidal_momentum", CENTROIDAL_MOMENTUM, ("center_of_mass", "momentum"),
           ("momentum",), False, False, "h_G",
           "~/center_of_mass (frame_id: the root link), and for a floating base "
           "~/centroidal_momentum"),
)
BY_NAME = {o.name: o for o in OUTPUTS}
NAMES = tuple(BY_NAME)
DEFAULTS = tuple(o.name for o in OUTPUTS if o.default)

# The momentum observer's outputs (``rbd_ros.contact``): stateful, so not in the per-state
# computation above: r depends on every sample before it. The node steps one observer per
# robot (``rbd_ros.node.contact``); ~/collision is published on a change of state only and
# ~/contact_wrench for the ``contact_frame`` parameter (no publish_ switch of its own).
COLLISION = "rbd_ros_interfaces/msg/Collision"
WRENCH_STAMPED = "geometry_msgs/msg/WrenchStamped"
OBSERVER_OUTPUTS = (
    Output("external_torques", JOINT_STATE, ("effort",), ("external_tau",), True, False,
           "τ_ext", "~/external_torques: the momentum observer's external torques r (needs "
           "the measured efforts)"),
    Output("collision", COLLISION, (), (), True, False, "⚠",
           "~/collision: on every change of the collision state (r against "
           "collision_thresholds)"),
)
OBSERVER_BY_NAME = {o.name: o for o in OBSERVER_OUTPUTS}
DEFAULT_OBSERVER_GAIN = 50.0          # 1/s: settled in 0.1 s, noise filtered above ~8 Hz
DEFAULT_COLLISION_THRESHOLD = 10.0    # N·m
CONTACT_WRENCH = Output("contact_wrench", WRENCH_STAMPED, (), (), True, False, "F̂",
                        "~/contact_wrench: the wrench at contact_frame explaining r")

# The core results an output can carry; q, v, a, τ in model order (a floating base's first),
# τ_measured the joints' measured efforts (the base's τ is 0: it is not actuated).
RESULTS = {
    "tau": "ID(q, v, a), every dof",
    "joint_tau": "ID(q, v, a), the joints only (without a floating base's six dofs)",
    "qdd": "FD(q, v, τ_measured)",
    "Minv": "M(q)⁻¹, nv × nv",
    "dtau_dq": "∂ID/∂q at (q, v, a)", "dtau_dv": "∂ID/∂v at (q, v, a)",
    "dqdd_dq": "∂FD/∂q at (q, v, τ_measured)", "dqdd_dv": "∂FD/∂v at (q, v, τ_measured)",
}
# ... and those of the whole-body outputs (``whole_body.compute``, from q and v alone): size
WHOLE_BODY_RESULTS = {"ee_pose": 7, "ee_twist": 6, "ee_inertia_t": 9, "ee_inertia": 36,
                      "ee_mass": 3, "ee_defined": 5, "com": 3, "momentum": 9}
# one tick's core call, the cheapest that gives the results needed: (name, its results)
CALLS = (("rnea", ("tau", "joint_tau")),
         ("inverse_and_forward_dynamics", ("tau", "joint_tau", "qdd")),
         ("compute_all", tuple(RESULTS)))


def check_outputs(names):
    """Return ``names`` in table order; ValueError for a name that is not an output."""
    bad = sorted(set(names) - set(NAMES))
    if bad:
        raise ValueError(f"unknown outputs {bad}; choose from {', '.join(NAMES)}")
    return tuple(n for n in NAMES if n in set(names))


def message_fields(output, model):
    """Return the fields of ``output``'s messages that ``model`` fixes: names and sizes."""
    nv = model.nv
    if output.msgtype == JOINT_STATE:
        return {"name": list(model.joint_names)}
    fields = {"names": list(dof_names(model))}
    if output.msgtype == JOINT_MATRIX:
        fields.update(rows=nv, cols=nv)
    elif output.msgtype == DERIVATIVES:
        fields["size"] = nv
    return fields


def array_sizes(output, model):
    """Return the number of values of each of ``output.fields`` for ``model``."""
    nv, nj = model.nv, len(model.joint_names)
    sizes = {"tau": nv, "joint_tau": nj, "external_tau": nj, "qdd": nv, **WHOLE_BODY_RESULTS}
    return tuple(sizes.get(r, nv * nv) for r in output.results)
