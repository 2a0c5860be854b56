"""
The dynamics node's robot description: URDF XML in, a :class:`Robot` swapped in atomically.

The description comes from the ``robot_description`` parameter or topic, that is from anyone
on the DDS domain: it is URDF XML or it is refused. A text that does not start with ``<`` is
never opened as a path (the node would read local files on request, and say in its log
whether a path exists); paths belong to the launch file's ``urdf_file`` argument, which
reads the file and passes its content, and to ``rbd_ros.load_model(path)``. A rejected
description is logged once per reason, as one bounded line that names the parameter that
would load it where there is one, and the previous model runs on; while there is no model,
the node's "no robot model yet" lines say why (the last rejection).
"""
import math
import threading

import numpy as np

import rbd_ros
from ..actuation import dynamics as actuation
from .. import outputs
from ..contact import measured_wrenches as wrench
from . import compile_notice
from .description_text import not_xml, xml_text
from .joint_cache import load_merge_kernel
from .parameters import description_limits
from .reporting import one_line


class DescriptionLoader:
    """
    The node's robot descriptions, loaded off the executor's thread (a collaborator).

    ``params``: the node's parameters; ``logger``: its logger; ``counters``: its ``Counters``
    (``descriptions_rejected``); ``log_line(key, text, period, level=...)``: its throttled
    log (``skips.Skips.log_line``); ``on_error(where, exc)``: its count of callback errors;
    ``wrenches``: its ``WrenchInputs`` (their links must be in the model); ``robots``: its
    ``robot.RobotSwap``. Owns ``loading`` (held while a description loads), the pending
    description (XML, source) and the loader thread, and ``rejected`` (why the last
    description was rejected, or "").
    """

    def __init__(self, params, logger, counters, log_line, on_error, wrenches, robots):
        self.params = params
        self.logger = logger
        self.counters = counters
        self.log_line = log_line
        self.on_error = on_error
        self.wrenches = wrenches
        self.robots = robots
        self.loading = threading.Lock()
        self._pending_lock = threading.Lock()
        self._pending = None
        self._loader = None
        self.rejected = ""                    # why the last description was rejected

    def on_description(self, msg):
        """Take a description from the ``robot_description`` topic."""
        self.submit(msg.data, f"topic {self.params['robot_description_topic']}")

    def submit(self, xml, source):
        """Load ``xml`` from ``source`` on the loader thread (the latest one wins)."""
        # parsing and warming up take milliseconds: one loader thread does it off the
        # executor thread, so ticks of the current model go on meanwhile; when descriptions
        # come faster than they load, the latest one wins
        with self._pending_lock:
            self._pending = (xml, source)
            if self._loader is None or not self._loader.is_alive():
                self._loader = threading.Thread(target=self._load_pending, daemon=True)
                self._loader.start()

    def _load_pending(self):
        while True:
            with self._pending_lock:
                pending, self._pending = self._pending, None
                if pending is None:
                    self._loader = None
                    return
            xml, source = pending
            try:
                self.load(xml, source)
            except Exception as exc:              # the loader thread goes on with the next
                self.on_error("robot_description", exc)

    def load(self, xml, source):
        """Load ``xml`` from ``source`` now, or reject it (the previous model runs on)."""
        with self.loading:
            current = self.robots.current()
            if current is not None and current.xml == xml:
                return
            kept = f"; keeping model {current.model.name!r}" if current else ""
            why = not_xml(xml)
            if why:
                self._reject(f"rejected robot description from {source}: {why}{kept}", why)
                return
            try:
                model, joints = self._model(xml)
            except Exception as exc:   # any failure keeps the previous model running
                reason = one_line(exc, 300) + parameter_hint(exc, self.params)
                self._reject(f"rejected robot description from {source} ({len(xml)} "
                             f"characters): {reason}{kept}", reason)
                return
            self._install(model, xml, current, source, joints)
            self._warm_services(model)

    def _model(self, xml):
        """Return the model of ``xml`` and its joint parameters, its tick kernels warm."""
        p = self.params
        model = rbd_ros.load_model(xml_text(xml), floating_base=p["floating_base"],
                                   mimic=p["mimic_joints"], strict_inertia=p["strict_inertia"],
                                   on_warning=self._load_warning,
                                   limits=description_limits(p))
        outputs.check_base(model)            # ValueError: rejected, as unmodelable
        self.wrenches.check_links(model)     # ValueError: rejected, as unmodelable
        joints = self.robots.joint_model(model, xml)
        with compile_notice(self.logger, "of the enabled outputs", report=True):
            warm_up(model, tick_calls(self.robots.topics.enabled, joints), joints)
            load_merge_kernel()  # the joint_states messages' (JointCache.merge_serialized)
            if self.wrenches:     # the ticks' fext kernel (own arrays: ticks may run)
                wrench.fext(model, model.neutral(), [])
        return model, joints

    def _warm_services(self, model):
        # the services' kernels, once the outputs flow, off the start-up path: a first
        # request after an install would otherwise wait for their compile
        def warm():
            try:
                with compile_notice(self.logger, "of the services"):
                    warm_up(model)
            except Exception as exc:
                self.on_error("warm-up", exc)
        threading.Thread(target=warm, daemon=True, name="rbd_warm_up").start()

    def _load_warning(self, text):
        # on the ROS log (/rosout), not Python's warnings (stderr, once per process)
        self.logger.warning("robot description: " + one_line(text, 600))

    def _reject(self, text, reason):
        # once per reason: a description re-sent (latched, or every few seconds by a
        # misconfigured publisher) does not repeat its line; another reason is logged
        self.counters.add("descriptions_rejected")
        self.rejected = reason
        self.log_line("description: " + reason, text, math.inf, level="error")

    def waiting_for_model(self):
        """Say why there is no model yet: waiting, or the last description's rejection."""
        if not self.rejected:
            return "waiting for robot_description"
        return f"the last robot description was rejected: {self.rejected}"

    def _install(self, model, xml, current, source, joints=None):
        # under the swap's lock: a parameter change (gravity, outputs) rebuilds the robot
        # there too
        with self.robots.lock:
            model = model.with_gravity(self.params["gravity"])
            robot = self.robots.build(model, xml, joints=joints)
            if current is not None and current.model.floating_base and model.floating_base:
                robot.keep_base_state(self.robots.current())
            self.robots.install(robot)            # the swap: one reference assignment
            self.rejected = ""
        if robot.frame_problem:
            self.logger.warning(f"~/end_effector is off: {robot.frame_problem}")
        slow = robot.slow_encoders()
        if slow:
            self.logger.warning(f"outputs {sorted(slow)} are published as messages, "
                                f"not pre-serialized (slower): {slow}")
        self.logger.info(one_line(
            f"model {model.name!r} from {source}: {model.nbodies} bodies, nq={model.nq}, "
            f"nv={model.nv}, {'floating' if model.floating_base else 'fixed'} base"
            + (f"; joint parameters {sorted(joints.params.values)} in every output"
               if joints is not None else "")))


def joint_model(model, xml, joint_text, params):
    """
    Return the joint parameters of ``model`` (``rbd_ros.actuation.dynamics.load``), or None.

    From ``joint_parameters_file`` (``joint_text``, read at start-up) or, with the parameter
    ``urdf_joint_dynamics`` of ``params``, the description's ``<dynamics>``; ValueError
    naming the parameter when they do not fit the model (a joint it lacks, a negative
    damping): the description is rejected.
    """
    try:
        return actuation.load(model, xml_text(xml), joint_text, params["urdf_joint_dynamics"])
    except ValueError as exc:
        which = "joint_parameters_file" if joint_text else "urdf_joint_dynamics"
        raise ValueError(f"{which}: {exc}") from None


def parameter_hint(exc, params):
    """Return the node parameter that would load a description refused with ``exc`` ('')."""
    if (isinstance(exc, rbd_ros.URDFError) and "mimic" in str(exc)
            and params["mimic_joints"] == "error"):
        return (" (parameter mimic_joints: 'coupled', the default, or 'independent' loads "
                "mimic joints)")
    return ""


def tick_calls(enabled, joints=None):
    """Return the core calls (``rbd_ros.outputs.CALLS``) of ticks with the outputs ``enabled``."""
    return tuple(dict.fromkeys(actuation.computation(joints, enabled, known).call
                               for known in (True, False)))


SERVICE_CALLS = ("rnea", "aba", "minv", "rnea_derivatives", "aba_derivatives")


def warm_up(model, calls=None, joints=None):
    """
    Run each core call once so that no tick or request pays numba's compile or cache load.

    ``calls``: names of ``rbd_ros`` functions (default: the ticks' and the services');
    ``joints``: the joint parameters, whose tick path (``actuation.compute``) runs once too
    (before the model is installed: it uses the model's own workspace).
    """
    calls = (tuple(c for c, _ in outputs.CALLS) + SERVICE_CALLS) if calls is None else calls
    data = rbd_ros.Data(model)               # its own workspace: ticks may run meanwhile
    q = model.neutral()
    z = np.zeros(model.nv)
    arguments = {"minv": ((q,), {}),
                 "compute_all": ((q, z), {"a": z, "tau": z}),
                 "inverse_and_forward_dynamics": ((q, z), {"a": z, "tau": z})}
    for call in dict.fromkeys(calls):
        args, keywords = arguments.get(call, ((q, z, z), {}))
        getattr(rbd_ros, call)(model, *args, data=data, **keywords)
        if joints is not None and call in dict(outputs.CALLS):
            actuation.compute(joints, call, model, q, z, z, z)
