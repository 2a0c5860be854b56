"""
What one robot description gives the dynamics node, down to each tick's publishing.

A :class:`Robot` holds the model, the merged joint states (``JointCache``), the arrays a tick
assembles q, v, a and τ in, one pre-serialized encoder per enabled output and, for a tick with
the effort known and one without, the core call and the publish steps
(``rbd_ros.outputs.computation``). The node swaps a whole Robot when the description
changes; nothing in one is edited from outside the node's callbacks.
"""
import threading

import numpy as np

from ..actuation import dynamics as actuation
from .. import outputs
from ..outputs import whole_body
from . import conversions
from .joint_cache import JointCache


class Robot:
    """
    A model and everything a tick of it needs; ``publishers``: output name -> publisher.

    ``payloads``: {link: compact inertia} attached to ``model`` (``Model.with_payload``);
    ``unloaded`` is the model without them, which a change of payloads starts from.
    ``joints``: the joint parameters (``rbd_ros.actuation.dynamics.load``) every output includes.
    """

    def __init__(self, model, xml, enabled, publishers, payloads=None, joints=None, frame=""):
        self.unloaded = model
        self.joints = joints                      # rbd_ros.actuation.dynamics.Actuation, or None
        self.payloads = dict(payloads or {})
        for link, inertia in self.payloads.items():
            model = model.with_payload(link, inertia)
        self.model = model
        self.xml = xml
        coupling = model.coupling
        self.followers = dict(coupling.followers) if coupling is not None else {}
        self.cache = JointCache(model.joint_names, self.followers)
        self.dof_names = list(outputs.dof_names(model))
        self.joint_names = list(model.joint_names)
        base_q, base_v = model.nq_base, model.nv_base
        self.q = np.zeros(model.nq)               # assembled each tick (views into these)
        self.v = np.zeros(model.nv)
        self.tau = np.zeros(model.nv)             # the base is not actuated: its τ stays 0
        self.a = np.zeros(model.nv)
        self.joint_q = self.q[base_q:]            # the joints' part of q, v and τ
        self.joint_v = self.v[base_v:]
        self.joint_tau = self.tau[base_v:]
        self.base_received = -np.inf              # time.monotonic() of the last odometry
        self.commanded = None                     # True once commanded accelerations came
        self.contact = None                       # node.contact.ContactMonitor, when on
        self.contact_problem = ""                 # why it is off although asked for
        # what the tick rule reads: views of the cache's arrays, ages set per tick
        self.state = outputs.TickState(self.cache.position, self.cache.velocity)
        # ~/end_effector's link (off, and why, where the model has no such link)
        self.frame = frame
        self.frame_problem = (whole_body.frame_problem(model, frame) if "end_effector" in enabled
                              else None)
        if self.frame_problem:
            enabled = tuple(n for n in enabled if n != "end_effector")
        self.whole_body = tuple(n for n in enabled if n in whole_body.NAMES)
        # output messages, serialized once: a tick patches in the stamp and the numbers
        # (converting the name lists each time would cost more than the dynamics)
        self.encoders = {name: conversions.output_encoder(outputs.BY_NAME[name], model, frame)
                         for name in enabled}
        self._buffers = {}                        # core call -> its outputs.ResultBuffer
        self.plans = {known: self._plan(enabled, publishers, known) for known in (True, False)}
        for buffer in self._buffers.values():
            if buffer is not None:                # a tick's call reads these arrays in place
                buffer.bind(self.q, self.v, self.a, self.tau)

    def _plan(self, enabled, publishers, effort_known):
        """
        Return (core call, publish steps, result buffer) of a tick, effort known or not.

        A step per published output: (publish, encode, its results' names). The buffer
        (``outputs.result_buffer``; None for the calls without one) is where the call writes:
        a tick allocates none, and both plans share the one of their call.
        """
        work = actuation.computation(self.joints, enabled, effort_known)
        steps = tuple((publishers[o.name].publish, self.encoders[o.name].encode, o.results)
                      for o in work.outputs if o.name in self.encoders)
        if work.call not in self._buffers:
            self._buffers[work.call] = outputs.result_buffer(work.call, self.model)
        return work.call, steps, self._buffers[work.call]

    def slow_encoders(self):
        """{output: why} of the outputs published as messages, not pre-serialized."""
        return {k: e.fallback_reason for k, e in self.encoders.items() if e.template is None}

    def keep_base_state(self, previous):
        """Take the base state of the ``previous`` robot (both floating-base)."""
        self.q[:7] = previous.q[:7]
        self.v[:6] = previous.v[:6]
        self.base_received = previous.base_received

    def take_inputs(self, previous):
        """
        Take over every input of the ``previous`` robot of the same joints.

        Its joint states merged so far, its commanded acceleration and base state: a
        parameter change rebuilds the robot without waiting for every joint again.
        """
        self.cache, self.state = previous.cache, previous.state
        self.a[:] = previous.a
        self.commanded = previous.commanded
        if self.model.floating_base:
            self.keep_base_state(previous)


def publish(steps, results, stamp, more=()):
    """
    Publish the outputs of one tick.

    ``steps``: of a :class:`Robot` plan; ``results``: of ``rbd_ros.outputs.compute``;
    ``stamp``: (sec, nanosec) of the joint_states message; ``more``: [(publish, message)]
    sent after them (the observer's). Every message is encoded before the first is sent:
    the DDS writes run back to back, their state warm (issue 35).
    """
    messages = [encode(stamp, *[results[name] for name in names]) for _, encode, names in steps]
    for (send, _, _), message in zip(steps, messages):
        send(message)
    for send, message in more:
        send(message)


class RobotSwap:
    """
    Replace the node's robot by a whole new one, under one lock (a collaborator).

    A robot description, a payload and a parameter change (gravity, outputs, joint dynamics)
    each build a new :class:`Robot` and swap it in under ``lock``. ``current()``: the
    node's robot; ``install(robot)``: the node's swap (one reference assignment);
    ``topics``: the node's ``output_topics.OutputTopics``; ``params``: its parameters;
    ``joint_model(model, xml)``: the joint parameters of a model (ValueError).
    """

    def __init__(self, current, install, topics, params, joint_model):
        self.lock = threading.Lock()
        self.current = current
        self.install = install
        self.topics = topics
        self.params = params
        self.joint_model = joint_model

    def build(self, model, xml, payloads=None, joints=None):
        """Return a :class:`Robot` of ``model`` publishing the enabled outputs."""
        return Robot(model, xml, self.topics.enabled, self.topics.publishers, payloads, joints,
                     self.topics.frame)

    def rebuild(self):
        """Replace the robot by one with the current gravity and outputs, same inputs."""
        with self.lock:
            current = self.current()
            if current is None:
                return
            model = current.unloaded.with_gravity(self.params["gravity"])
            robot = self.build(model, current.xml, current.payloads,
                               self.joint_model(model, current.xml))
            robot.take_inputs(current)
            self.install(robot)

    def with_payload(self, link, payload, no_link):
        """
        Swap in the robot with ``payload`` (compact inertia; None clears it) on ``link``.

        Return the payloads now held; ``no_link(current)``: the exception to raise when the
        model has no ``link`` (nothing is swapped).
        """
        with self.lock:
            current = self.current()
            if link not in current.model.link_frames:
                raise no_link(current)
            payloads = dict(current.payloads)
            if payload is None:
                payloads.pop(link, None)
            else:
                payloads[link] = payload
            new = self.build(current.unloaded, current.xml, payloads, current.joints)
            new.take_inputs(current)
            self.install(new)                 # the swap: one reference assignment
        return payloads
