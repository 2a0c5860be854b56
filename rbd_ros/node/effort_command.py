"""
The dynamics node's ``~/effort_command``: torques for an effort controller, with its safety.

``~/effort_command`` (``std_msgs/Float64MultiArray``, one value per ``command_joints`` entry,
in that order) is meant to be remapped onto a ros2_control effort controller's commands
(``effort_controllers/JointGroupEffortController``: ``<controller>/commands``). The torques
are ``rbd_ros.actuation.command``'s (``command_mode``: gravity, gravity and friction, or
inverse dynamics at the commanded acceleration), payloads included, each clamped to
``command_effort_scale`` × the joint's effort limit.

The safety rules (doc/driving.md):

* off at start; ``~/enable_command`` (``std_srvs/SetBool``) switches it. Enabling is refused
  with the reason while the ``command_*`` parameters do not fit the model; disabling
  publishes nothing further (the controller then holds the last command it got);
* no command from joint states older than ``command_timeout`` (by their arrival), nor from a
  non-finite input or result: the command is withheld, counted, and /diagnostics says ERROR
  with the reason, at once (a message of its own). A timer finds joint states that stopped
  coming within one tick period (``rate_hz``'s; without a rate a tenth of the timeout);
* a new robot (a description, a payload, gravity, joint parameters) withholds commands until
  a tick on joint states that arrived after it was swapped in;
* the ``command_*`` parameters are refused with the reason while enabled, or where they do
  not fit the model (unknown or duplicated joints, a joint without an effort limit).
"""
import math
import time
from collections import Counter

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from rcl_interfaces.msg import SetParametersResult
from rclpy.qos import HistoryPolicy, QoSProfile, ReliabilityPolicy
from std_msgs.msg import Float64MultiArray

from ..actuation import command as commands
from .health import ERROR, OK, WARN
from .reporting import one_line

PARAMETER_NAMES = ("command_joints", "command_mode", "command_effort_scale",
                   "command_effort_limits", "command_timeout")
# the controller takes the newest command only
COMMAND_QOS = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                         history=HistoryPolicy.KEEP_LAST)
MIN_WATCH_PERIOD = 0.001     # s: the fastest the stale-input timer runs


def settings(params):
    """Return the ``command.CommandSettings`` of the node's parameter values ``params``."""
    limits = tuple(float(x) for x in params["command_effort_limits"])
    return commands.CommandSettings(tuple(params["command_joints"]), params["command_mode"],
                                    float(params["command_effort_scale"]), limits)


def parameter_problem(params):
    """Say why the ``command_*`` values of ``params`` are not valid for any robot, or None."""
    timeout = params["command_timeout"]
    if not (math.isfinite(timeout) and timeout > 0):
        return f"command_timeout must be finite and > 0 s, got {timeout!r}"
    if params["command_mode"] == "inverse_dynamics" and not params["acceleration_topic"]:
        return ("command_mode inverse_dynamics needs acceleration_topic (the commanded "
                "accelerations): set it at start-up")
    return commands.settings_problem(settings(params))


class EffortCommand:
    """
    ``~/effort_command`` and ``~/enable_command`` of ``node`` (a ``DynamicsNode``).

    ``params``: its parameter values (name -> value, kept current by the node); ``guard``:
    its callback boundary. The node calls :meth:`tick` on every computed tick (after q, v
    and a are assembled), :meth:`withhold` on every skipped one and :meth:`robot_changed`
    at every swap. ValueError at start-up for ``command_*`` values that are not valid.
    """

    def __init__(self, node, params, guard):
        why = parameter_problem(params)
        if why:
            raise ValueError(why)
        self.node, self.params, self.guard = node, params, guard
        self.publisher = node.create_publisher(Float64MultiArray, "~/effort_command",
                                               COMMAND_QOS)
        self.message = Float64MultiArray()
        self.diagnostics = node.create_publisher(DiagnosticArray, "/diagnostics", 10)
        from std_srvs.srv import SetBool
        node.create_service(SetBool, "~/enable_command", guard(self.on_enable))
        node.add_on_set_parameters_callback(self.check_parameters)
        node.add_post_set_parameters_callback(self.parameters_set)
        self.enabled = self.sending = False
        self.plan = self.plan_robot = None
        self.plan_problem = ""
        self.fresh_after = math.inf               # cache.updates a command must come after
        self.counts = Counter(published=0, withheld=0, clamped=0)
        self.reasons = Counter()                  # withheld, by reason
        self.level, self.status = OK, "off: enable with ~/enable_command"
        self.stale_at_age = None                  # the input age when the timer found it stale
        self.watch = None
        period = params["diagnostics_period"]
        if period > 0:
            node.create_timer(period, guard(self.publish_diagnostics))

    # -- the node's hooks -------------------------------------------------------------------
    def robot_changed(self, robot):
        """Take a new robot: no command until a tick on joint states that came after it."""
        self.plan_robot = None
        self.fresh_after = robot.cache.updates

    def withhold(self, reason):
        """Withhold the command of a tick skipped for ``reason``."""
        if self.enabled:
            self._withhold(reason)

    def tick(self, robot, now):
        """Publish the command of this tick of ``robot`` (q, v, a assembled), or withhold it."""
        if not self.enabled:
            return
        plan = self._plan(robot)
        if plan is None:
            self._withhold(f"command_joints do not fit the model: {self.plan_problem}")
            return
        cache = robot.cache
        if cache.updates <= self.fresh_after:
            self._withhold("waiting for joint_states after the model changed or the command "
                           "was enabled")
            return
        age = now - cache.oldest_received
        timeout = self.params["command_timeout"]
        if age > timeout:
            self._withhold(f"stale input: joint_states {age:.3f} s old (command_timeout "
                           f"{timeout:g} s)")
            return
        try:
            values, clamped = plan.compute(robot.q, robot.v, robot.a)
        except ValueError as exc:
            self._withhold(f"not finite: {one_line(exc, 120)}")
            return
        if not self.enabled or robot is not self.node.current_robot():
            return                                # disabled or swapped meanwhile
        self.message.data = values.tolist()
        self.counts["published"] += 1
        self.publisher.publish(self.message)
        self.counts["clamped"] += clamped
        if not self.sending:
            self.sending = True
            self._set(OK, self._sending_text())

    def record(self):
        """Return a copy of the counts (published, withheld, clamped) and the state."""
        return {**self.counts, "enabled": self.enabled, "level": self.level,
                "status": self.status, "reasons": dict(self.reasons),
                "stale_at_age": self.stale_at_age}

    # -- the service ------------------------------------------------------------------------
    def on_enable(self, req, resp):
        """``~/enable_command``: switch the commands on (checked) or off."""
        if not req.data:
            was = self.enabled
            self._disable()
            resp.success = True
            resp.message = ("effort commands off" + ("; the controller holds the last command "
                            "it got: stop or switch it on its side" if was else ""))
            return resp
        robot = self.node.current_robot()
        plan = None if robot is None else self._plan(robot)
        if plan is None:
            resp.success = False
            resp.message = one_line("cannot enable the effort commands: " + (
                "no robot model yet" if robot is None else self.plan_problem), 300)
            self.node.request_refused("enable_command")
            return resp
        if not self.enabled:
            self.enabled, self.sending = True, False
            self.fresh_after = robot.cache.updates
            self.stale_at_age = None
            self._start_watch()
            self._set(OK, "enabled: waiting for joint_states")
        resp.success = True
        resp.message = one_line(f"effort commands on: {plan.mode} for {len(plan.names)} "
                                f"joints, clamped to {self.params['command_effort_scale']:g} "
                                "x the effort limits", 300)
        return resp

    def _disable(self):
        self.enabled = self.sending = False
        if self.watch is not None:
            self.node.destroy_timer(self.watch)
            self.watch = None
        self._set(OK, "off: enable with ~/enable_command")

    # -- parameters -------------------------------------------------------------------------
    def check_parameters(self, changed):
        """Refuse ``command_*`` values while enabled or that do not fit; other names pass."""
        mine = {p.name: p.value for p in changed if p.name in PARAMETER_NAMES}
        if not mine:
            return SetParametersResult(successful=True)
        if self.enabled:
            return SetParametersResult(successful=False, reason=(
                "the effort commands are enabled: disable them (~/enable_command false) "
                "before changing " + ", ".join(sorted(mine))))
        values = {**self.params, **{k: list(v) if isinstance(v, (list, tuple)) else v
                                    for k, v in mine.items()}}
        try:
            why = parameter_problem(values)
            robot = self.node.current_robot()
            if why is None and robot is not None:
                commands.plan(robot.model, settings(values), robot.joints)
        except ValueError as exc:
            why = str(exc)
        if why:
            return SetParametersResult(successful=False, reason=one_line(why, 300))
        return SetParametersResult(successful=True)

    def parameters_set(self, changed):
        """Plan again at the next tick after new ``command_*`` values (stored by the node)."""
        if any(p.name in PARAMETER_NAMES for p in changed):
            self.plan_robot = None

    # -- internals --------------------------------------------------------------------------
    def _plan(self, robot):
        """Return the plan of ``robot`` (made once per robot and settings), or None."""
        if self.plan_robot is not robot:
            try:
                self.plan = commands.plan(robot.model, settings(self.params), robot.joints)
                self.plan_problem = ""
            except ValueError as exc:
                self.plan, self.plan_problem = None, one_line(exc, 300)
            self.plan_robot = robot
        return self.plan

    def _withhold(self, reason):
        self.sending = False
        self.counts["withheld"] += 1
        key = reason.split(":")[0]
        self.reasons[key] += 1
        if self.level != ERROR or self.status != f"withheld: {reason}":
            changed = self.level != ERROR or not self.status.startswith(f"withheld: {key}")
            self.level, self.status = ERROR, f"withheld: {reason}"
            if changed:
                self.publish_diagnostics()

    def _set(self, level, status):
        changed = (level, status) != (self.level, self.status)
        self.level, self.status = level, status
        if changed:
            self.publish_diagnostics()

    def _sending_text(self):
        plan = self.plan
        return f"sending {plan.mode} commands for {len(plan.names)} joints"

    def _start_watch(self):
        """Start the timer that finds joint states that stopped coming (no tick does)."""
        rate = self.params["rate_hz"]
        timeout = self.params["command_timeout"]
        period = 1.0 / rate if rate > 0 else timeout / 10
        self.watch = self.node.create_timer(max(MIN_WATCH_PERIOD, period),
                                            self.guard(self._check_stale))

    def _check_stale(self):
        robot = self.node.current_robot()
        if not self.enabled or robot is None:
            return
        age = time.monotonic() - robot.cache.oldest_received
        timeout = self.params["command_timeout"]
        if age > timeout and not (self.level == ERROR and self.status.startswith(
                "withheld: stale input")):
            self.stale_at_age = age
            self._withhold(f"stale input: no joint_states for {age:.3f} s (command_timeout "
                           f"{timeout:g} s)")

    def publish_diagnostics(self):
        """Publish the command's status on /diagnostics (a status of its own)."""
        status = DiagnosticStatus()
        status.name = f"{self.node.get_name()}: effort command"
        robot = self.node.current_robot()
        status.hardware_id = robot.model.name if robot is not None else ""
        level = self.level
        text = self.status
        if not self.enabled and self.plan_problem:
            level, text = WARN, f"{text}; command_joints do not fit: {self.plan_problem}"
        status.level, status.message = bytes([level]), one_line(text, 300)
        values = {"enabled": self.enabled, "mode": self.params["command_mode"],
                  "joints": ", ".join(self.params["command_joints"])[:200], **self.counts,
                  **{f"withheld: {k}": n for k, n in self.reasons.items()},
                  "stale detected at input age [s]": self.stale_at_age}
        status.values = [KeyValue(key=str(k), value=str(v)) for k, v in values.items()]
        msg = DiagnosticArray()
        msg.header.stamp = self.node.get_clock().now().to_msg()
        msg.status = [status]
        self.diagnostics.publish(msg)
