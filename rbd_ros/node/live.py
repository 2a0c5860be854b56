"""
The dynamics node's parameters the ROS 2 way: described, checked, applied while it runs.

Each parameter is declared with a ``ParameterDescriptor`` (its description, type, range,
choices, ``read_only`` where a change cannot apply while the node runs), so
``ros2 param describe`` tells a user what it does. A ``ros2 param set`` is checked first
(:meth:`LiveParameters._check_parameters`: rclpy has checked type, range and read-only from
the descriptor; the choices, finiteness, the gravity's length and the description's XML are
checked here) and refused with the reason, which ``ros2 param set`` prints; an accepted value
is then applied (:meth:`LiveParameters._apply_parameters`): an output switch creates or
destroys its publisher, gravity and the outputs rebuild the robot (the joint states merged so
far are kept), the timers are made again, the tick rule is remade, a new robot_description
is loaded like one from the topic, ``urdf_joint_dynamics`` rebuilds the robot with (or
without) its URDF's joint friction (refused while its ``<dynamics>`` do not fit).
"""
import threading

from rcl_interfaces.msg import (FloatingPointRange, IntegerRange, ParameterDescriptor,
                                SetParametersResult)
from rclpy.parameter import Parameter

from ..actuation import dynamics as actuation
from .. import outputs
from . import contact, conversions, parameters
from .description import xml_text
from .reporting import one_line
from .robot import Robot

_TYPES = {bool: Parameter.Type.BOOL, float: Parameter.Type.DOUBLE, str: Parameter.Type.STRING,
          list: Parameter.Type.DOUBLE_ARRAY, int: Parameter.Type.INTEGER}
_OUTPUT_PARAMETERS = {o.parameter for o in outputs.OUTPUTS + outputs.OBSERVER_OUTPUTS}


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


class LiveParameters:
    """
    The parameter half of the dynamics node (a mixin of ``DynamicsNode``).

    Owns ``params`` (name -> value, what every callback reads), ``_swap`` (held while the
    robot is replaced), the output publishers ``_pub`` and the timers; uses the node's
    ``_robot``, ``_set_robot``, ``_interfaces`` (whether rbd_ros_interfaces is installed),
    ``_on_timer``, ``_publish_diagnostics`` and ``_submit_description``.
    """

    def _declare_parameters(self):
        """Declare every parameter with its descriptor; return {name: value}."""
        for name, (default, description) in parameters.PARAMETERS.items():
            self.declare_parameter(name, Parameter.Type.STRING_ARRAY
                                   if name in parameters.STRING_ARRAYS else default,
                                   descriptor(name, default, description))
        self.params = {name: self._initial_value(name) for name in parameters.PARAMETERS}
        for name, value in self.params.items():        # what a parameters file set
            why = parameters.problem(name, value)
            if why:
                raise ValueError(why)
        self._swap = threading.Lock()
        self._pub, self._live_timers = {}, {}
        self.add_on_set_parameters_callback(self._check_parameters)
        self.add_post_set_parameters_callback(self._apply_parameters)
        return self.params

    def _initial_value(self, name):
        """Return the parameter ``name``'s value at start-up (an unset string array: [])."""
        if name in parameters.STRING_ARRAYS and \
                self.get_parameter_or(name).type_ == Parameter.Type.NOT_SET:
            return []
        return self.get_parameter(name).value

    def _check_parameters(self, changed):
        """
        Refuse (with the reason) a set of new values of which one is not valid.

        Never raises: an unexpected exception refuses the set with its reason (counted as a
        callback error), so ``ros2 param set`` always gets an answer to print.
        """
        try:
            return self._check_values(changed)
        except Exception as exc:
            self.callback_failed("parameters", exc)
            return SetParametersResult(successful=False, reason=one_line(
                f"could not check the value ({type(exc).__name__}: {exc})", 300))

    def _check_values(self, changed):
        for param in changed:
            if param.name in self.params:
                why = parameters.problem(param.name, param.value) or \
                    self._joint_dynamics_problem(param) or self._observer_problem(param)
                if why:
                    return SetParametersResult(successful=False, reason=why)
        return SetParametersResult(successful=True)

    def _joint_dynamics_problem(self, param):
        """Say why ``urdf_joint_dynamics`` cannot be turned on now, or return None."""
        if param.name != "urdf_joint_dynamics" or not param.value:
            return None
        if self._joint_text:
            return "joint_parameters_file is set: urdf_joint_dynamics would replace it"
        robot = self._robot
        if robot is None:
            return None
        try:
            actuation.load(robot.unloaded, xml_text(robot.xml), None, True)
        except ValueError as exc:
            return f"urdf_joint_dynamics: {str(exc)[:200]}"
        return None

    def _observer_problem(self, param):
        """Say why an observer parameter does not fit the running model, or return None."""
        robot = self._robot
        if param.name not in contact.OBSERVER_PARAMETERS or robot is None:
            return None
        return contact.settings_problem(robot.model, param.name, param.value)

    def _apply_parameters(self, changed):
        """Apply accepted new values (after rclpy stored them); an exception is counted."""
        try:
            self._apply_values(changed)
        except Exception as exc:               # the service still answers (the value is set)
            self.callback_failed("parameters", exc)

    def _apply_values(self, changed):
        changed = {p.name: p.value for p in changed if p.name in self.params}
        if not changed:
            return
        self.params.update(changed)
        names = set(changed)
        if names & {"max_joint_age", "unknown_velocity"}:
            self._rule = parameters.tick_rule(self.params)
        if "rate_hz" in names:
            self._set_timer("rate", self.params["rate_hz"], self._on_timer)
        if "diagnostics_period" in names:
            self._set_timer("diagnostics", 1.0 / self.params["diagnostics_period"]
                            if self.params["diagnostics_period"] > 0 else 0.0,
                            self._publish_diagnostics)
        robot = self._robot
        if robot is not None and robot.contact is not None:
            for name in names & {"observer_gain", "collision_thresholds", "max_joint_age"}:
                robot.contact.set(name, changed[name])        # the state is kept
        if names & (_OUTPUT_PARAMETERS | {"contact_frame"}):
            self._set_outputs()               # a new robot: its observer restarts
        elif names & {"gravity", "urdf_joint_dynamics"}:
            self._rebuild_robot()
        if changed.get("robot_description"):
            self._submit_description(changed["robot_description"],
                                     "the robot_description parameter")
        self.get_logger().info(f"parameters set: {sorted(names)}")

    def _set_timer(self, key, rate_hz, callback):
        """Replace the timer ``key`` by one at ``rate_hz`` (none at 0)."""
        timer = self._live_timers.pop(key, None)
        if timer is not None:
            self.destroy_timer(timer)
        if rate_hz > 0:
            self._live_timers[key] = self.create_timer(1.0 / rate_hz, self._guarded(callback))

    def _set_outputs(self):
        """
        Advertise exactly the enabled outputs, then rebuild the robot to publish them.

        A publisher is destroyed only after the robot that published on it is replaced.
        """
        enabled = parameters.enabled_outputs(self.params, self._interfaces)
        for name in enabled:
            if name not in self._pub:
                o = outputs.BY_NAME[name]
                self._pub[name] = self.create_publisher(
                    conversions.message_class(o.msgtype), o.topic, 10)
        observing = contact.observer_outputs(self.params, self._interfaces)
        for name in observing:
            if name not in self._pub:
                o = outputs.OBSERVER_BY_NAME.get(name, outputs.CONTACT_WRENCH)
                self._pub[name] = self.create_publisher(
                    conversions.message_class(o.msgtype), o.topic, 10)
        self._enabled = enabled
        self._observing = observing
        self.outputs = {name: name in enabled for name in outputs.NAMES}
        self._fd_enabled = any(outputs.BY_NAME[k].needs_effort for k in enabled)
        self._rebuild_robot()
        for name in [n for n in self._pub if n not in enabled + observing]:
            self.destroy_publisher(self._pub.pop(name))

    def _rebuild_robot(self):
        """Replace the robot by one with the current gravity and outputs, same inputs."""
        with self._swap:
            current = self._robot
            if current is None:
                return
            model = current.unloaded.with_gravity(self.params["gravity"])
            robot = Robot(model, current.xml, self._enabled, self._pub, current.payloads,
                          self._joint_model(model, current.xml))
            robot.take_inputs(current)
            self._set_robot(robot)
