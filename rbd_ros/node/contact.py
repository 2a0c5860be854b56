"""
The dynamics node's contact awareness: one momentum observer per robot, and its outputs.

The observer (``rbd_ros.contact``) is stateful, unlike the node's other outputs: a
:class:`ContactMonitor` holds it for one :class:`~rbd_ros.node.robot.Robot`, so a new robot
description or payload (a new Robot) restarts it; so does a gap between joint_states stamps
longer than ``max_joint_age`` (the observer's ``max_gap``; 0: none) or ``~/reset_observer``.
Each tick with the measured efforts known steps it once at the input's stamp and gives r
(``~/external_torques``), the collision state (``~/collision``, on a change only) and, for
``contact_frame``, the contact wrench (``~/contact_wrench``). A tick whose stamp is not after
the newest one (repeated, late, quantized), whose efforts are unknown or non-finite, or that
would overflow the observer (then reset) publishes none of them, counted; after
``BLIND_AFTER`` such ticks in a row the observer cannot observe: ~/collision says so
(``observing`` false, ``reason``) and /diagnostics is ERROR. Each tick's outcome goes to the
rule the replay follows too (``rbd_ros.contact.observer_rule.ObserverOutcomes``: the
collision state, the counts). :class:`ObserverTicks` is the node's side (a collaborator):
attach a monitor to each new Robot, step it at each tick.
"""
import numpy as np

from ..contact import detection as contact
from ..contact import observer_rule, observer_tick
from .. import outputs
from . import conversions
from .reporting import one_line

OBSERVER_PARAMETERS = observer_rule.SETTINGS
# ~/reset_observer's queue: rclpy's default (10) lost the requests that queued while the ticks
# ran (1 kHz of requests: 976 of 2,998 answered); 1000 hold a second of them
RESET_DEPTH = 1000
WARN, ERROR = 1, 2                # diagnostic_msgs/DiagnosticStatus's levels
settings_problem = observer_rule.settings_problem


def enabled(params):
    """Whether ``params`` need the observer: one of its outputs is on."""
    return bool(params["publish_external_torques"] or params["publish_collision"]
                or params["contact_frame"])


def observer_settings(params):
    """Return the observer's settings (``ObserverSettings``) of the node's parameters."""
    return observer_rule.ObserverSettings(params["observer_gain"],
                                          params["collision_thresholds"],
                                          params["contact_frame"], params["max_joint_age"])


def wrench_encoder(frame):
    """Return the encoder of ~/contact_wrench at ``frame``; None without a frame ("": off)."""
    return conversions.WrenchEncoder(frame) if frame else None


class ContactMonitor:
    """
    The observer of one robot and the state of its collision output.

    ``params``: the node's parameters (observer_gain, collision_thresholds, contact_frame,
    max_joint_age); ValueError naming the parameter when one does not fit ``model``.
    """

    def __init__(self, model, joints, params):
        self.model = model
        self.observer = observer_rule.new_observer(model, joints, observer_settings(params))
        zeros = np.zeros((1, model.nv))         # its kernel loaded now, not at the first tick
        self.observer.run(np.zeros(1), model.neutral()[None], zeros, zeros)
        self.observer.reset()
        observer_tick.warm_up()
        # the collision state and the counts (samples, tracked, blind, the ticks without r by
        # outcome), the replay's rule; the counts at the last /diagnostics report
        self.outcomes = observer_rule.ObserverOutcomes(model, params["collision_thresholds"])
        self.collision = self.outcomes.collision
        self.counts = self.outcomes.counts
        self._reported = dict(self.counts)
        self.frame = params["contact_frame"]
        self.names = outputs.dof_names(model)
        self.base = model.nv_base
        self.encoder = (conversions.output_encoder(
            outputs.OBSERVER_BY_NAME["external_torques"], model)
            if params["publish_external_torques"] else None)
        self.message_classes = {}      # output name -> its message class (built when needed)
        # built with the frame, not at its first tick (the first one imports the message's
        # type support: ~0.2 s)
        self._wrench_encoder = wrench_encoder(self.frame)
        self._bound = (None, None, None)

    def set(self, name, value):
        """Apply a new (checked) value of the parameter ``name``; the state is kept."""
        if name == "observer_gain":
            self.observer.set_gain(value)
        elif name == "collision_thresholds":
            self.collision.thresholds = value           # checked by the setter
        elif name == "contact_frame":
            self.frame = value
            self.observer.set_frame(value)
            self._wrench_encoder = wrench_encoder(value)
        elif name == "max_joint_age":
            self.observer.settings[1] = observer_rule.max_gap(value)

    def reset(self):
        """Restart the observer at the next sample (r = 0), out of collision."""
        self.observer.reset()

    def bind(self, q, v, tau):
        """Read ``q``, ``v`` and ``tau`` where they are when :meth:`step` is given them."""
        self.observer.bind(q, v, tau)
        self._bound = (q, v, tau)

    def step(self, stamp, q, v, tau, fext):
        """
        Step at the input's ``stamp`` (sec, nanosec); return (r (nv), whether ~/collision changed).

        The tick's outcome goes to ``outcomes`` (the collision state, the counts). r is
        overwritten by the next step when ``q``, ``v``, ``tau`` are the arrays bound
        (:meth:`bind`: the robot's, read in place); without fext, the step and the
        isolation of r are then one compiled call (``observer_tick.step``).
        ValueError (the core's) for a sample the observer refuses; its state is unchanged.
        ``contact.SampleSkipped`` for a stamp not after the newest (unchanged) or an
        overflow (reset). Neither is counted: the caller hands it to :meth:`unobserved`.
        """
        observer = self.observer
        t = observer.seconds(*stamp)
        bound = self._bound
        if q is bound[0] and v is bound[1] and tau is bound[2]:
            if fext is None:
                return observer_tick.step(observer, t, self.outcomes)
            r = observer.step_bound(t, fext)
        else:
            r = observer.step(t, q, v, tau, fext)
        return r, self.outcomes.stepped(r, observer.tracking)

    def unobserved(self, pubs, stamp, code):
        """Count a tick without r (``code``: ``observer_rule``'s); publish a ~/collision change."""
        if self.outcomes.unobserved(code) and "collision" in pubs:
            pubs["collision"].publish(self.collision_message(self._message("collision"),
                                                             stamp))

    @property
    def in_collision(self):
        return self.collision.state[0]

    @property
    def observing(self):
        return self.collision.observing

    @property
    def isolation(self):
        return self.collision.isolation

    @property
    def thresholds(self):
        return self.collision.thresholds

    def collision_message(self, msg, stamp):
        """Fill ``msg`` (rbd_ros_interfaces/Collision) with the last isolation."""
        msg.header.stamp.sec, msg.header.stamp.nanosec = stamp
        for field, value in self.collision.message_fields(self.names).items():
            if hasattr(msg, field):            # rbd_ros_interfaces built before "observing"
                setattr(msg, field, value)
        return msg

    def diagnostic(self):
        """
        Return the /diagnostics (level, text) of the period since the last call (0, "": none).

        ERROR while the observer cannot observe, or when it could not at some tick of the
        period or gave no estimate at any of its ticks; WARN in collision.
        """
        counts, before = self.counts, self._reported
        d = {k: counts[k] - before[k] for k in counts}
        self._reported = dict(counts)
        reason = self.collision.reason
        if not self.observing:
            return ERROR, (f"the observer cannot observe: its last "
                           f"{self.collision.unobserved_run} samples gave no estimate, the "
                           f"last because {reason}")
        if d["overflow_resets"]:
            return ERROR, (f"the observer's state would have overflowed at "
                           f"{d['overflow_resets']} "
                           "samples since the last report (reset each time)")
        if d["blind"]:
            return ERROR, (f"the observer could not observe at {d['blind']} of the "
                           f"{d['samples']} samples since the last report")
        if d["samples"] and not d["tracked"]:
            return ERROR, (f"the observer gave no estimate at any of the {d['samples']} "
                           f"samples since the last report, the last because {reason}")
        if not self.in_collision:
            return 0, ""
        iso = self.isolation
        joints = ", ".join(self.names[j] for j in iso.joints[:6])
        return WARN, (f"in collision: {joints} over threshold, isolated link {iso.link!r}, "
                      f"peak |r|/threshold {iso.peak_ratio:.3g}")

    def messages(self, pubs, stamp, q, v, tau, fext=None):
        """
        Step at one tick; return its outputs for ``pubs`` (output name -> publisher).

        Return ([(publish, message)], why the contact wrench is not among them: "" when it
        is, or is off). The caller publishes them after the tick's other outputs, all in one
        run: the DDS writes of a message cost ~1.5x as much each when a kernel ran between
        them (issue 35). ValueError when the observer refuses the sample (nothing to send).
        """
        r, changed = self.step(stamp, q, v, tau, fext)
        sends = []
        if self.encoder is not None and "external_torques" in pubs:
            sends.append((pubs["external_torques"].publish,
                          self.encoder.encode(stamp, r[self.base:])))
        # /diagnostics tells a collision without ~/collision too
        if changed and "collision" in pubs:
            sends.append((pubs["collision"].publish,
                          self.collision_message(self._message("collision"), stamp)))
        if self.frame and "contact_wrench" in pubs:
            if self.observer.wrench_refusal:   # a singular pose of the chain: this tick only
                return sends, self.observer.wrench_refusal
            sends.append((pubs["contact_wrench"].publish,
                          self._wrench_encoder.encode(stamp, self.observer.wrench)))
        return sends, ""

    def _message(self, name):
        if name not in self.message_classes:
            output = outputs.OBSERVER_BY_NAME.get(name, outputs.CONTACT_WRENCH)
            self.message_classes[name] = conversions.message_class(output.msgtype)
        return self.message_classes[name]()


class ObserverTicks:
    """
    The observer half of the dynamics node's tick (a collaborator of ``DynamicsNode``).

    ``params``: the node's parameters; ``skips``: its ``skips.Skips``; ``logger``: its
    logger; ``publishers``: output name -> publisher (the node's, kept up to date there).
    """

    def __init__(self, params, skips, logger, publishers):
        self.params = params
        self.skips = skips
        self.logger = logger
        self.publishers = publishers

    def attach(self, robot, observing):
        """Give ``robot`` a new observer (restarted) when ``observing`` is not empty."""
        if not observing:
            return
        try:
            monitor = ContactMonitor(robot.model, robot.joints, self.params)
            monitor.bind(robot.q, robot.v, robot.tau)
        except ValueError as exc:                 # parameters that do not fit this model
            robot.contact_problem = one_line(exc, 300)
            self.logger.error(f"the observer's outputs are off: {robot.contact_problem}")
            return
        robot.contact = monitor                   # only a bound monitor reaches the robot

    def observe(self, robot, effort_known, stamp, fext):
        """
        Step the observer at a tick (efforts known only); return its outputs to publish.

        [(publish, message)] (``ContactMonitor.messages``): the caller sends them after
        its own outputs. A tick without r publishes a change of ~/collision at once.
        """
        monitor = robot.contact
        if not effort_known:
            self.skips.skip("observer without efforts")
            monitor.unobserved(self.publishers, stamp, observer_rule.EFFORTS_UNKNOWN_CODE)
            return ()
        try:
            sends, why = monitor.messages(self.publishers, stamp, robot.q, robot.v, robot.tau,
                                          fext)
        except contact.SampleSkipped as exc:
            if exc.status == contact.OVERFLOW:
                self.skips.skip("observer overflow", error=one_line(exc, 300))
                self.skips.log_line("observer overflow error", one_line(exc, 300), 5.0,
                                    level="error")
            else:
                self.skips.skip("observer stamp", error=one_line(exc, 300))
            monitor.unobserved(self.publishers, stamp, exc.status)
            return ()
        except ValueError as exc:
            self.skips.skip("observer refused", error=one_line(exc, 300))
            monitor.unobserved(self.publishers, stamp, observer_rule.REFUSED_CODE)
            return ()
        except Exception as exc:
            # a defect: a tick without r all the same, so that one that persists makes the
            # observer blind (~/collision, /diagnostics) instead of leaving its last state
            # standing; the tick's boundary counts and logs the exception (this one, even
            # if counting it fails too)
            try:
                monitor.unobserved(self.publishers, stamp, observer_rule.FAILED_CODE)
            except Exception as also:
                exc.add_note(f"counting the tick without r failed too: {also!r}")
            raise
        if why:
            self.skips.warn(f"~/contact_wrench not published: {one_line(why, 300)}", 5.0,
                            key="contact wrench")
        return sends


def observer_outputs(params, interfaces=True):
    """Return the names of the observer's outputs ``params`` turn on."""
    names = [o.name for o in outputs.OBSERVER_OUTPUTS if params[o.parameter]
             and (interfaces or not o.msgtype.startswith("rbd_ros_interfaces/"))]
    return tuple(names) + (("contact_wrench",) if params["contact_frame"] else ())


def create_reset_service(node):
    """Create ``~/reset_observer`` (std_srvs/Trigger) on ``node``, a ``DynamicsNode``."""
    from rclpy.qos import HistoryPolicy, QoSProfile, ReliabilityPolicy
    from .services import RequestError, guarded_service
    try:
        from std_srvs.srv import Trigger
    except ImportError:                       # an install from before it was a dependency
        node.get_logger().warning("std_srvs is not installed (pip: ros-jazzy-std-srvs): "
                                  "no ~/reset_observer service")
        return

    def reset(robot, req, resp):
        if robot.contact is None:
            raise RequestError("the observer is off: set publish_external_torques, "
                               "publish_collision or contact_frame"
                               + (f" ({robot.contact_problem})" if robot.contact_problem
                                  else ""))
        robot.contact.reset()
        node.observer_reset()
    node.create_service(Trigger, "~/reset_observer", guarded_service(node, "reset_observer", reset),
                        qos_profile=QoSProfile(depth=RESET_DEPTH, history=HistoryPolicy.KEEP_LAST,
                                               reliability=ReliabilityPolicy.RELIABLE))
