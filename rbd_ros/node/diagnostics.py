"""
The dynamics node's /diagnostics message: its status and counters, once a period.

:class:`DiagnosticsReport` (a collaborator of the node) publishes it: the level and message
of the period (``health.Health``), the collision state, the counters, the input rates over
the period (``reporting.Window``), the tick latencies since the last message, the skips by
reason, the lost input messages, the wrench inputs and the planner's state.
"""
import time
from collections import deque

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue

from .health import LOST, OK, PLANNER_EXITS, Health
from .reporting import Window, latency_values, one_line

RATES = ("joint_states", "odometry")


class DiagnosticsReport:
    """
    Publish /diagnostics for ``node`` (the rclpy node: its name, clock and publisher).

    ``counters``: its ``Counters``; ``skips``: its ``skips.Skips``; ``losses``: its
    ``lost_messages.LostMessageCounter``; ``wrenches``: its ``WrenchInputs``. ``latency``: the
    ticks' latencies (seconds, compute + publish), appended by the node.
    """

    def __init__(self, node, counters, skips, losses, wrenches):
        self.node = node
        self.counters = counters
        self.skips = skips
        self.losses = losses
        self.wrenches = wrenches
        self.health = Health()
        self.window = Window()
        self.latency = deque(maxlen=5000)
        self.publisher = node.create_publisher(DiagnosticArray, "/diagnostics", 10)

    def publish(self, robot, planner_process, planner_worker, rejected, outputs_enabled):
        """Publish the message of the period since the last one."""
        status = DiagnosticStatus()
        status.name = f"{self.node.get_name()}: dynamics"
        status.hardware_id = robot.model.name if robot else ""
        if planner_process is not None:
            self.counters.set(PLANNER_EXITS, planner_process.exits)
        s = self.counters.snapshot()
        level, message = self.health.assess(
            s, self.skips.counts, robot.model.name if robot else None, rejected,
            outputs_enabled, planner_process.problem() if planner_process else "")
        # the observer: ERROR while it cannot observe, WARN in collision
        observer, text = robot.contact.diagnostic() if robot and robot.contact else (OK, "")
        if text:
            level, message = max(level, observer), f"{text}; {message}"
        status.level, status.message = bytes([level]), one_line(message)
        values = {"model": robot.model.name if robot else "",
                  "nv": robot.model.nv if robot else 0, **s,
                  **self.window.rates(s, RATES), **latency_values(self.latency)}
        self.latency.clear()
        values.update({f"skipped: {key}": n for key, n in self.skips.counts.items()})
        values["last skip reason"] = self.skips.last[:200]
        values[LOST] = self.losses.value()
        values.update(self.wrenches.diagnostics(time.monotonic()))
        values["planner"] = (planner_process.state if planner_process is not None else
                             "in the node's process" if planner_worker is not None else "off")
        status.values = [KeyValue(key=str(k), value=str(v)) for k, v in values.items()]
        msg = DiagnosticArray()
        msg.header.stamp = self.node.get_clock().now().to_msg()
        msg.status = [status]
        self.publisher.publish(msg)
