"""
The planner process's rclpy node (``child``): the trajectory services on the newest robot.

Imported by ``child`` once it has set its signal handlers (rclpy's import comes after them).
"""
import gc
import pickle
import time

import rclpy.logging
from rclpy.node import Node
from rclpy.parameter import Parameter

from rbd_ros_interfaces import srv as rbd_srv
from ..reporting import one_line
from ..retime_service import retime_trajectory
from ..services import guarded_service
from ..trajectories import (trajectory_effective_mass, trajectory_feedforward, trajectory_forward,
                            trajectory_torques)
from .process import VERSION

CATCH_UP_TIMEOUT = 5.0     # s: the longest a request waits for the robot the node swapped in


class PlannerNode(Node):
    """
    The services; ``_robot``: the newest robot received (a ``PlannerRobot``).

    ``args``: the child's command line (``child.parse_args``); ``conn``: the socket to the
    node; ``shared``: the shared memory holding the node's robot version; ``gone``: the
    event set when the node is gone (``child.ParentWatch.gone``).
    """

    def __init__(self, args, conn, shared, gone):
        super().__init__(args.name, namespace=args.namespace, parameter_overrides=[
            Parameter("use_sim_time", value=bool(args.settings[0]))])
        self.conn, self.shared, self.gone = conn, shared, gone
        self.take_settings(args.settings)
        self._robot = None
        self._version = 0
        for name, srv_type, handler in (
                ("trajectory_torques", rbd_srv.TrajectoryTorques, trajectory_torques),
                ("trajectory_forward", rbd_srv.TrajectoryForward, trajectory_forward),
                ("retime_trajectory", rbd_srv.RetimeTrajectory, retime_trajectory),
                ("trajectory_feedforward", rbd_srv.TrajectoryFeedforward,
                 trajectory_feedforward),
                ("trajectory_effective_mass", rbd_srv.TrajectoryEffectiveMass,
                 trajectory_effective_mass)):
            self.create_service(srv_type, getattr(args, name),
                                self._current(name, guarded_service(self, name, handler)))

    def current_robot(self):
        """Return the newest robot received (None before the first)."""
        return self._robot

    @property
    def parent_gone(self):
        """Whether the node is gone (or a signal came): ``ParentWatch.gone``."""
        return self.gone.is_set()

    def callback_failed(self, where, exc):
        """Report an unexpected exception to the node (which counts and logs it)."""
        self._tell_node("error", where, one_line(f"{type(exc).__name__}: {exc}", 300))

    def request_refused(self, service):
        """Tell the node a request was refused (it counts them in /diagnostics)."""
        self._tell_node("refused", service)

    def _tell_node(self, *message):
        try:
            self.conn.send(message)
        except OSError:                   # the node is gone: nobody to tell
            pass

    def _current(self, name, callback):
        def serve(req, resp):
            try:
                current = self.catch_up()
            except Exception as exc:      # a robot that does not unpickle: the node's bug
                self.callback_failed("planner robot", exc)
                current = False
            if not current:
                resp.success = False
                resp.message = ("the planner process has not received the node's current "
                                "robot model yet: try again")
                return resp
            started = time.perf_counter()
            resp = callback(req, resp)
            self.get_logger().debug(
                f"{name}: {len(req.trajectory.points)} points answered in "
                f"{1e3 * (time.perf_counter() - started):.2f} ms (success {resp.success})")
            return resp
        return serve

    def take_settings(self, settings):
        """Take the node's ``use_sim_time`` and log levels (default, the node's logger)."""
        use_sim_time, default_level, level = settings
        rclpy.logging.set_logger_level("", default_level)
        self.get_logger().set_level(level)
        if self.get_parameter("use_sim_time").value != bool(use_sim_time):
            self.set_parameters([Parameter("use_sim_time", value=bool(use_sim_time))])

    def catch_up(self):
        """Take robots until the node's current one; whether it came in time."""
        wanted = VERSION.unpack_from(self.shared, 0)[0]
        deadline = time.monotonic() + CATCH_UP_TIMEOUT
        while self._version < wanted and not self.parent_gone:
            self.take_robots(max(0.0, deadline - time.monotonic()))
            if time.monotonic() >= deadline:
                break
        return self._version >= wanted

    def take_robots(self, timeout=0.0):
        """Take the robots and settings sent (waiting up to ``timeout`` s for the first)."""
        try:
            while self.conn.poll(timeout):
                message = pickle.loads(self.conn.recv_bytes())
                timeout = 0.0
                if message[0] == "settings":
                    self.take_settings(message[1])
                    continue
                _, version, robot = message
                if version > self._version:
                    if self._robot is None:
                        warm_up(robot.model)
                        # as the node (its _set_robot): the imports' ~130,000 objects
                        # out of the collector's reach; a full collection, which each
                        # 1,000-point request's objects bring about, scanned them all
                        gc.freeze()
                    self._robot, self._version = robot, version
        except (EOFError, OSError):
            self.gone.set()


def warm_up(model):
    """
    Load the services' kernels (from numba's cache) before the first request needs them.

    Only a head start: a failure here is the request's to report, if it fails again there.
    """
    import numpy as np

    import rbd_ros
    from rbd_ros.batch import rollout
    q = model.neutral()[None, :]
    z = np.zeros((1, model.nv))
    data = rbd_ros.Data(model)
    try:
        rbd_ros.rnea_batch(model, q, z, z, data=data)
        rbd_ros.rnea_derivatives_batch(model, q, z, z, data=data)
        rbd_ros.aba_batch(model, q, z, z, data=data)
        rbd_ros.aba_derivatives_batch(model, q, z, z, data=data)
        rollout.rollout(model, q[0], z[0], z, 0.001, rollout.EULER, True, data=data)
    except ValueError:
        pass
    try:                   # toppra's import (matplotlib's pyplot with it): a second or more
        from rbd_ros.retiming import toppra_problem as retiming_toppra  # noqa: F401
    except ImportError:    # the request will say so
        pass
