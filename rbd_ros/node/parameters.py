"""
The dynamics node's parameters and the tick rule they set; no ROS here.

``config/dynamics.yaml`` documents every parameter (a test keeps it in step with
``PARAMETERS``). The ``publish_<output>`` parameters come from the outputs table
(``rbd_ros.outputs``), and so does the rule that decides each tick (:func:`tick_rule`), which
the replay tool applies with the same parameters.

Which parameters apply while the node runs, their ranges and choices (:data:`RANGES`,
:data:`CHOICES`, :data:`READ_ONLY`) and the check of a new value (:func:`problem`) are here
too; ``parameter_updates`` turns them into ROS parameter descriptors and applies what may
change live.
"""
import math

from ..actuation import joint_parameters as joint_friction
from ..actuation.command import MODES as COMMAND_MODES
from .. import outputs
from ..description.loader import MIMIC_OPTIONS
from ..description.size_limits import DEFAULT_LIMITS, DescriptionLimits
from . import EXECUTORS, check_executor
from .description_text import not_xml

# parameters of one value or one per dof (double arrays, a single double accepted)
PER_DOF = ("observer_gain", "collision_thresholds")

PARAMETERS = {
    # name: (default, description) -- config/dynamics.yaml documents each one
    "robot_description": ("", "URDF XML; empty: subscribe to robot_description_topic"),
    "robot_description_topic": ("robot_description", "std_msgs/String topic with the URDF"),
    "floating_base": (False, "the root link is a free-flyer; its state comes from odometry"),
    "odometry_topic": ("odom", "nav_msgs/Odometry of the base (floating_base only)"),
    "mimic_joints": ("coupled", "URDF mimic joints: 'coupled' to their leaders (the model's "
                     "dofs: the independent joints); 'independent': own dof; 'error': reject"),
    "strict_inertia": (False, "true: reject inertias whose principal moments violate the "
                       "triangle inequality (false: load them, with a warning)"),
    "joint_states_topic": ("joint_states", "sensor_msgs/JointState input"),
    "acceleration_topic": ("", "JointVector of commanded accelerations; empty: a = 0"),
    "rate_hz": (0.0, "0: compute on every joint_states message; >= 0.1: at this rate (Hz)"),
    "max_joint_age": (outputs.DEFAULT_MAX_JOINT_AGE,
                      "s; a joint (or odometry) not updated for longer is stale (0: never)"),
    "unknown_velocity": (outputs.UNKNOWN_VELOCITY[0],
                         "NaN/inf/absent velocity: 'skip' the tick or use 'zero'"),
    "gravity": ([0.0, 0.0, -9.81], "world-frame gravity, m/s²"),
    "joint_parameters_file": ("", "JSON of per-joint armature, friction and offset "
                              "(rbd_replay --identify --friction/--armature writes it); "
                              "every output and service includes them; empty: none"),
    "urdf_joint_dynamics": (False, "true: the URDF's <dynamics damping friction> as viscous "
                            "and Coulomb joint friction in every output and service"),
    **{o.parameter: (o.default, o.description) for o in outputs.OUTPUTS},
    # the momentum observer (rbd_ros.contact, node.contact): on with one of its outputs
    **{o.parameter: (o.default, o.description) for o in outputs.OBSERVER_OUTPUTS},
    "contact_frame": ("", "a link: ~/contact_wrench, the wrench at its frame explaining the "
                      "external torques (needs 6 dof in its chain); empty: off"),
    "observer_gain": ([outputs.DEFAULT_OBSERVER_GAIN], "1/s; the observer's bandwidth K, "
                      "one value or one per dof: r follows the external torques within ~5/K s"),
    "collision_thresholds": ([outputs.DEFAULT_COLLISION_THRESHOLD], "N·m (N for a prismatic "
                             "or base dof); |r| above: in collision. One value or one per dof, "
                             "each at least 1e-6"),
    "diagnostics_period": (1.0, "s between /diagnostics messages (0: none)"),
    "wrench_topics": ([], "geometry_msgs/WrenchStamped inputs, 'TOPIC:LINK' each: the wrench "
                      "the environment exerts on LINK, in LINK's frame or world_frame"),
    "world_frame": ("world", "the frame_id of measured wrenches given in the world frame"),
    "max_description_bytes": (DEFAULT_LIMITS.max_bytes, "the largest robot description "
                              "loaded, bytes of URDF (larger: rejected, counted)"),
    "max_description_links": (DEFAULT_LIMITS.max_links, "the most <link>s of a robot "
                              "description loaded (more: rejected, counted)"),
    "max_description_dofs": (DEFAULT_LIMITS.max_dofs, "the most degrees of freedom of a "
                             "robot description loaded: movable joints, +6 for a floating "
                             "base (more: rejected, counted)"),
    "executor": ("events", "'events': rclpy's EventsExecutor (less CPU per message); "
                 "'single_threaded': rclpy's default executor"),
    "planner_process": (True, "true: the trajectory services run in a child process (their "
                        "requests never hold the ticks); false: on a thread of the node's"),
}


# inclusive (low, high) of the double parameters; rclpy refuses a value outside with the range
RANGES = {"rate_hz": (0.0, 10000.0), "max_joint_age": (0.0, 86400.0),
          "diagnostics_period": (0.0, 3600.0)}
# the least positive value of a double parameter whose 0 means "off" or "every message": a
# descriptor's range cannot leave a gap above 0, so problem() refuses 0 < value < least (a
# rate of 1e-9 Hz ticked once in 31 years; 1e-300 overflowed the timer's period)
LEAST_POSITIVE = {"rate_hz": 0.1, "diagnostics_period": 0.01}
# inclusive (low, high) of the integer parameters
INTEGER_RANGES = {"max_description_bytes": (1024, 1 << 30),
                  "max_description_links": (1, 1_000_000),
                  "max_description_dofs": (1, 100_000)}
CHOICES = {"unknown_velocity": outputs.UNKNOWN_VELOCITY, "mimic_joints": MIMIC_OPTIONS,
           "executor": EXECUTORS}
# why a parameter cannot change while the node runs: what it sets up is made once at start-up
_SUBSCRIPTION = "the subscription is made at start-up: restart the node to change it"
_LOADER = ("the loaded model was built with it and a changed model would be another robot: "
           "restart the node to change it")
READ_ONLY = {
    "robot_description_topic": _SUBSCRIPTION,
    "joint_states_topic": _SUBSCRIPTION,
    "odometry_topic": _SUBSCRIPTION,
    "acceleration_topic": _SUBSCRIPTION,
    "floating_base": "the base's odometry subscription and model kind are set at start-up: "
                     "restart the node to change it",
    "mimic_joints": _LOADER,
    "strict_inertia": _LOADER,
    "executor": "the executor spins from start-up: restart the node to change it",
    "planner_process": "the trajectory services are created at start-up: restart the node "
                       "to change it",
    "wrench_topics": _SUBSCRIPTION,
    "world_frame": "the wrench subscriptions are made at start-up: restart the node to "
                   "change it",
    **dict.fromkeys(("max_description_bytes", "max_description_links", "max_description_dofs"),
                    "a limit any DDS peer could raise would not limit what it publishes: "
                    "restart the node to change it"),
    "joint_parameters_file": "the file is read once at start-up (a path settable by any DDS "
                             "peer would make the node read local files on request): restart "
                             "the node to change it",
}
# string-array parameters (declared with their type: an empty list would be a byte array)
STRING_ARRAYS = ("wrench_topics",)

# ~/effort_command (node.effort_command, doc/driving.md): off until ~/enable_command
PARAMETERS.update({
    "command_joints": ([], "~/effort_command's joints, in the controller's order (every "
                       "one a joint of the model, once); empty: no command"),
    "command_mode": ("gravity", "~/effort_command's torque: 'gravity' g(q), "
                     "'gravity_friction' g(q) + joint friction and offset at the measured v, "
                     "'inverse_dynamics' ID(q, v, commanded a) with armature and friction"),
    "command_effort_scale": (1.0, "each command is clamped to this x the joint's effort "
                             "limit, in (0, 1]"),
    "command_effort_limits": ([0.0], "N·m (N): effort limits of the command joints, one "
                              "value or one per joint; 0: the URDF's (a joint without one "
                              "is refused)"),
    "command_timeout": (0.1, "s; no command from joint_states older than this (by "
                        "arrival): withheld, /diagnostics ERROR"),
})
STRING_ARRAYS += ("command_joints",)
RANGES.update({"command_effort_scale": (0.0, 1.0), "command_timeout": (0.0, 60.0)})
CHOICES["command_mode"] = COMMAND_MODES


def problem(name, value):
    """
    Say why ``value`` is not a valid value of the parameter ``name``, or return None.

    The checks rclpy does not make from the descriptor (types and ranges it does): choices,
    finiteness, the gravity's length and robot_description being XML.
    """
    if name in CHOICES and value not in CHOICES[name]:
        return f"{name} must be one of {list(CHOICES[name])}, got {str(value)[:40]!r}"
    if name in RANGES and not math.isfinite(value):
        return f"{name} must be finite, got {value}"
    if name in LEAST_POSITIVE and 0 < value < LEAST_POSITIVE[name]:
        return (f"{name} must be 0 or at least {LEAST_POSITIVE[name]:g}, got {value:g}")
    if name == "gravity":
        if len(value) != 3 or not all(math.isfinite(x) for x in value):
            return f"gravity must be 3 finite numbers (m/s², world frame), got {list(value)[:6]}"
    if name in PER_DOF:
        values = [value] if isinstance(value, (int, float, str)) else list(value)
        if not values or not all(isinstance(x, (int, float)) and not isinstance(x, bool)
                                 and math.isfinite(x) and x > 0 for x in values):
            return (f"{name} must be one or one per dof finite numbers > 0, got "
                    f"{str(values)[:60]}")
    if name == "wrench_topics":
        from .wrenches import parse_wrench_topics
        try:
            parse_wrench_topics(value)
        except ValueError as exc:
            return str(exc)
    if name == "robot_description" and value:
        return not_xml(value)
    return None


def description_limits(params):
    """Return the :class:`rbd_ros.DescriptionLimits` of the ``max_description_*`` values."""
    return DescriptionLimits(params["max_description_bytes"], params["max_description_links"],
                             params["max_description_dofs"])


def joint_parameters_text(params):
    """
    Return the text of ``joint_parameters_file`` ('' when empty), checked on its own.

    ValueError, one line naming the parameter, for a file that cannot be read, is too
    large or is not a joint parameter file, and with ``urdf_joint_dynamics`` as well: the
    node does not start without the joint parameters it was told to use.
    """
    path = params["joint_parameters_file"]
    if not path:
        return ""
    if params["urdf_joint_dynamics"]:
        raise ValueError("joint_parameters_file and urdf_joint_dynamics: choose one")
    try:
        text = joint_friction.read_file(path)
        joint_friction.check_text(text)
    except ValueError as exc:
        raise ValueError(f"joint_parameters_file {path[:120]!r}: {str(exc)[:200]}") from None
    return text


def tick_rule(params):
    """
    Return the :class:`rbd_ros.outputs.TickRule` of the parameter values ``params``.

    ``params``: a dict. ValueError for a bad ``unknown_velocity`` or ``executor``.
    """
    check_executor(params["executor"])       # spin_node uses it; a typo fails here, early
    return outputs.TickRule(floating_base=bool(params["floating_base"]),
                            max_joint_age=params["max_joint_age"],
                            unknown_velocity=params["unknown_velocity"],
                            commanded_acceleration=bool(params["acceleration_topic"]),
                            wrenches=bool(params["wrench_topics"]))


def available_outputs(interfaces=True):
    """
    Return the names of the outputs the node can publish, in table order.

    Without rbd_ros_interfaces (``interfaces`` False) only those of standard message types.
    """
    return tuple(o.name for o in outputs.OUTPUTS
                 if interfaces or not o.msgtype.startswith("rbd_ros_interfaces/"))


def enabled_outputs(params, interfaces=True):
    """Return the names of the available outputs the parameters ``params`` turn on."""
    return tuple(n for n in available_outputs(interfaces) if params[outputs.BY_NAME[n].parameter]
                 and (n != "centroidal_momentum" or params["floating_base"]))
