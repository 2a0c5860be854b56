"""
The dynamics node's inputs beside joint_states: the base's odometry, commanded accelerations.

:class:`AuxiliaryInputs` (a collaborator of the node) writes them into the current robot's
arrays (q and v of a floating base, a), refusing what does not fit with a counted skip.
"""
import time

import numpy as np

from ..formats import cdr
from .. import outputs
from . import conversions
from .reporting import one_line


class AuxiliaryInputs:
    """
    The odometry and commanded-acceleration callbacks of the node.

    ``current()``: the node's robot (None before a model); ``counters``: its ``Counters``;
    ``skips``: its ``skips.Skips``.
    """

    def __init__(self, current, counters, skips):
        self.current = current
        self.counters = counters
        self.skips = skips
        self.odometry_fallback = None         # rclpy's deserializer, made at the first

    def on_odometry(self, raw):
        """Take a serialized nav_msgs/Odometry: the base's pose and twist."""
        self.counters.add("odometry")
        robot = self.current()
        if robot is None:
            return
        if self.odometry_fallback is None:
            self.odometry_fallback = conversions.odometry_deserializer()
        try:
            _, values = cdr.decode_odometry(raw, self.odometry_fallback)
        except ValueError as exc:
            self.counters.add("bad_messages")
            self.skips.skip("malformed odometry", error=one_line(exc, 300))
            return
        if not outputs.valid_odometry(values):
            self.skips.skip("invalid odometry")
            return
        robot.q[:7] = values[:7]
        robot.v[:6] = values[7:]                  # Odometry's twist is in the child (base) frame
        robot.base_received = time.monotonic()

    def on_commanded_acceleration(self, msg):
        """Take a rbd_ros_interfaces/JointVector naming every degree of freedom once."""
        robot = self.current()
        if robot is None:
            return
        names = list(msg.names)
        data = conversions.vector(msg.data)
        if len(names) != len(data) or sorted(names) != sorted(robot.dof_names):
            self.skips.skip("bad command", count=len(robot.dof_names),
                            names=robot.dof_names[:6])
            robot.commanded = None
            return
        index = {n: k for k, n in enumerate(names)}
        a = data[[index[n] for n in robot.dof_names]]
        if not np.all(np.isfinite(a)):
            self.skips.skip("bad command values")
            robot.commanded = None
            return
        robot.a[:] = a
        robot.commanded = True
