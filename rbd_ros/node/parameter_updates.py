"""
The dynamics node's parameters the ROS 2 way: described, checked, applied while it runs.

Each parameter is declared with a ``ParameterDescriptor`` (its description, type, range,
choices, ``read_only`` where a change cannot apply while the node runs), so
``ros2 param describe`` tells a user what it does. A ``ros2 param set`` is checked first
(:meth:`ParameterUpdates.check`: rclpy has checked type, range and read-only from
the descriptor; the choices, finiteness, the gravity's length and the description's XML are
checked here, and by the node what depends on its robot) and refused with the reason, which
``ros2 param set`` prints; an accepted value is then applied (the node's, handed over by
:meth:`ParameterUpdates.apply`): an output switch creates or
destroys its publisher, gravity and the outputs rebuild the robot (the joint states merged so
far are kept), the timers are made again, the tick rule is remade, a new robot_description
is loaded like one from the topic, ``urdf_joint_dynamics`` rebuilds the robot with (or
without) its URDF's joint friction (refused while its ``<dynamics>`` do not fit).
"""
from rcl_interfaces.msg import (FloatingPointRange, IntegerRange, ParameterDescriptor,
                                SetParametersResult)
from rclpy.parameter import Parameter

from ..actuation import dynamics as actuation
from .. import outputs
from . import contact, parameters
from .description_text import xml_text
from .reporting import one_line

_TYPES = {bool: Parameter.Type.BOOL, float: Parameter.Type.DOUBLE, str: Parameter.Type.STRING,
          list: Parameter.Type.DOUBLE_ARRAY, int: Parameter.Type.INTEGER}
OUTPUT_PARAMETERS = {o.parameter for o in outputs.OUTPUTS + outputs.OBSERVER_OUTPUTS}


def descriptor(name, default, description):
    """Return the ``ParameterDescriptor`` of the node's parameter ``name``."""
    kind = (Parameter.Type.STRING_ARRAY if name in parameters.STRING_ARRAYS
            else _TYPES[type(default)])
    d = ParameterDescriptor(name=name, type=kind.value, description=description)
    if name in parameters.RANGES:
        low, high = parameters.RANGES[name]
        d.floating_point_range = [FloatingPointRange(from_value=low, to_value=high, step=0.0)]
    if name in parameters.INTEGER_RANGES:
        low, high = parameters.INTEGER_RANGES[name]
        d.integer_range = [IntegerRange(from_value=low, to_value=high, step=1)]
    constraints = []
    if name in parameters.LEAST_POSITIVE:
        constraints.append(f"0 or at least {parameters.LEAST_POSITIVE[name]:g}")
    if name in parameters.CHOICES:
        constraints.append(f"one of {list(parameters.CHOICES[name])}")
    if name == "gravity":
        constraints.append("3 finite numbers")
    if name in parameters.PER_DOF:
        d.dynamic_typing = True              # one double, or a double array
        constraints.append("finite, > 0; one value or one per dof")
    if name in parameters.READ_ONLY:
        d.read_only = True
        constraints.append(f"read-only: {parameters.READ_ONLY[name]}")
    d.additional_constraints = "; ".join(constraints)
    return d


class ParameterUpdates:
    """
    The node's parameters: declared with their descriptors, checked, handed over when set.

    A collaborator of ``DynamicsNode``. ``node``: the rclpy node they belong to;
    ``current()``: its robot (None before a model), which some new values must fit;
    ``apply(changed)``: applies accepted values ({name: value}, already in ``values``);
    ``on_error(where, exc)``: the node's count of callback errors. ``values`` (name ->
    value) is what every callback reads, ``joint_text`` the joint parameters file's text
    (read once); ValueError for a value a parameters file set that is not valid, or a
    joint parameters file that cannot be read.
    """

    def __init__(self, node, current, apply, on_error):
        self.node = node
        self.current = current
        self.node_apply = apply
        self.on_error = on_error
        for name, (default, description) in parameters.PARAMETERS.items():
            node.declare_parameter(name, Parameter.Type.STRING_ARRAY
                                   if name in parameters.STRING_ARRAYS else default,
                                   descriptor(name, default, description))
        self.values = {name: self._initial_value(name) for name in parameters.PARAMETERS}
        for name, value in self.values.items():        # what a parameters file set
            why = parameters.problem(name, value)
            if why:
                raise ValueError(why)
        self.joint_text = parameters.joint_parameters_text(self.values)
        node.add_on_set_parameters_callback(self.check)
        node.add_post_set_parameters_callback(self.apply)

    def _initial_value(self, name):
        """Return the parameter ``name``'s value at start-up (an unset string array: [])."""
        if name in parameters.STRING_ARRAYS and \
                self.node.get_parameter_or(name).type_ == Parameter.Type.NOT_SET:
            return []
        return self.node.get_parameter(name).value

    def check(self, changed):
        """
        Refuse (with the reason) a set of new values of which one is not valid.

        Never raises: an unexpected exception refuses the set with its reason (counted as a
        callback error), so ``ros2 param set`` always gets an answer to print.
        """
        try:
            for param in changed:
                if param.name in self.values:
                    robot = self.current()
                    why = (parameters.problem(param.name, param.value)
                           or joint_dynamics_problem(param, robot, self.joint_text)
                           or observer_problem(param, robot))
                    if why:
                        return SetParametersResult(successful=False, reason=why)
            return SetParametersResult(successful=True)
        except Exception as exc:
            self.on_error("parameters", exc)
            return SetParametersResult(successful=False, reason=one_line(
                f"could not check the value ({type(exc).__name__}: {exc})", 300))

    def apply(self, changed):
        """Apply accepted new values (after rclpy stored them); an exception is counted."""
        try:
            changed = {p.name: p.value for p in changed if p.name in self.values}
            if changed:
                self.values.update(changed)
                self.node_apply(changed)
        except Exception as exc:               # the service still answers (the value is set)
            self.on_error("parameters", exc)


def joint_dynamics_problem(param, robot, joint_text):
    """Say why ``urdf_joint_dynamics`` cannot be turned on now, or return None."""
    if param.name != "urdf_joint_dynamics" or not param.value:
        return None
    if joint_text:
        return "joint_parameters_file is set: urdf_joint_dynamics would replace it"
    if robot is None:
        return None
    try:
        actuation.load(robot.unloaded, xml_text(robot.xml), None, True)
    except ValueError as exc:
        return f"urdf_joint_dynamics: {str(exc)[:200]}"
    return None


def observer_problem(param, robot):
    """Say why an observer parameter does not fit the running model, or return None."""
    if param.name not in contact.OBSERVER_PARAMETERS or robot is None:
        return None
    return contact.settings_problem(robot.model, param.name, param.value)


class Timers:
    """
    The node's timers by key, made again when their rate changes.

    ``node``: the rclpy node; ``guard(callback)``: its callback boundary.
    """

    def __init__(self, node, guard):
        self.node = node
        self.guard = guard
        self.timers = {}

    def set(self, key, rate_hz, callback):
        """Replace the timer ``key`` by one at ``rate_hz`` (none at 0)."""
        timer = self.timers.pop(key, None)
        if timer is not None:
            self.node.destroy_timer(timer)
        if rate_hz > 0:
            self.timers[key] = self.node.create_timer(1.0 / rate_hz, self.guard(callback))
