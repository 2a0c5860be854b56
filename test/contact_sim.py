"""
Robots simulated by Pinocchio for the contact-awareness tests: the truth the observer meets.

Forward dynamics is Pinocchio's ``aba`` (armature in its model when asked), integrated with
RK4 on the configuration manifold (``pin.integrate``) in ``substeps`` steps per 1 ms sample.
The motors follow a smooth sinusoidal reference with a PD controller evaluated continuously
(gains scaled by each joint's inertia at rest)
(in every RK stage), plus the reference's inverse dynamics on a fixed base; the efforts
recorded are those commanded torques at the sample times. Joint friction
f(v) = Fv v + Fc tanh(v/ε) + τ0 opposes the motors when given. A contact force F (constant in
the link's axes, at a point of the link) acts on the link between two sample times; its
joint torques τ_ext = J_linkᵀ [F; p × F] (Pinocchio's LOCAL frame Jacobian) are recorded.

The contact of the observer's tests (``test_contact``, ``test_node_contact``):
:func:`simulated_contact` (a force from ON to OFF at POINT) and :func:`settled`.
"""
import functools
from collections import namedtuple

import numpy as np

from oracle import Robot

Contact = namedtuple("Contact", "link point force t_on t_off")
Friction = namedtuple("Friction", "armature viscous coulomb offset epsilon")
Run = namedtuple("Run", "t q v tau tau_ext wrench")


class Simulation:
    """One robot (an ``oracle.Robot``) and its Pinocchio model for simulating it."""

    def __init__(self, robot, friction=None, amplitude=0.3, frequency=0.4):
        pin = robot.pin
        self.robot, self.pin = robot, pin
        if robot.floating:
            self.pm = pin.buildModelFromUrdf(robot.path, pin.JointModelFreeFlyer())
        else:
            self.pm = pin.buildModelFromUrdf(robot.path)
        self.pd = self.pm.createData()
        self.base = 6 if robot.floating else 0
        nv = self.pm.nv
        self.friction = None
        if friction is not None:             # per joint in our order -> Pinocchio's
            self.friction = Friction(*(robot.v_to_pin(np.r_[np.zeros(self.base), x])
                                       if k < 4 else x for k, x in enumerate(friction)))
            self.pm.armature = self.friction.armature
        self.actuated = robot.v_to_pin(np.r_[np.zeros(self.base), np.ones(nv - self.base)])
        rng = np.random.default_rng(7)
        self.phase = rng.uniform(0, 2 * np.pi, nv)
        self.amp, self.w = amplitude, 2 * np.pi * frequency
        self.q0 = robot.q_to_pin(robot.model.neutral())
        # gains scaled by the inertia each joint sees at rest: light links stay non-stiff
        M0 = pin.crba(self.pm, self.pd, self.q0)
        self.scale = np.diag(M0) * self.actuated
        self.kp, self.kd = 100.0, 20.0

    def reference(self, t):
        """(q_d, v_d, a_d), Pinocchio layout: the neutral pose plus sinusoids on the joints."""
        s = self.actuated * self.amp
        dq = s * np.sin(self.w * t + self.phase)
        q = self.pin.integrate(self.pm, self.q0, dq)
        return q, s * self.w * np.cos(self.w * t + self.phase), \
            -s * self.w ** 2 * np.sin(self.w * t + self.phase)

    def control(self, t, q, v):
        qd, vd, ad = self.reference(t)
        tau = self.scale * (self.kp * self.pin.difference(self.pm, q, qd) + self.kd * (vd - v))
        if not self.robot.floating:      # the reference's inverse dynamics (armature too)
            tau = tau + self.pin.rnea(self.pm, self.pd, qd, vd, ad)
        return tau * self.actuated

    def joint_friction(self, v):
        f = self.friction
        if f is None:
            return np.zeros_like(v)
        return f.viscous * v + f.coulomb * np.tanh(v / f.epsilon) + f.offset

    def contact_forces(self, contact, on):
        """Pinocchio's fext (per joint, local) and the wrench at the link frame [F; p × F]."""
        pin, pm = self.pin, self.pm
        forces = [pin.Force.Zero() for _ in range(pm.njoints)]
        if contact is None:
            return forces, np.zeros(6)
        F = np.asarray(contact.force, np.float64)
        wrench = np.r_[F, np.cross(contact.point, F)]
        if on:
            frame = pm.frames[pm.getFrameId(contact.link)]
            forces[frame.parentJoint] = frame.placement.act(pin.Force(wrench))
        return forces, wrench

    def acceleration(self, t, q, v, fext):
        tau = self.control(t, q, v)
        return self.pin.aba(self.pm, self.pd, q, v, tau - self.joint_friction(v), fext)

    def run(self, duration, contact=None, dt=1e-3, substeps=2):
        """Return a :data:`Run` sampled every ``dt`` (our layout: q, v, tau, tau_ext)."""
        pin, pm, robot = self.pin, self.pm, self.robot
        n = int(round(duration / dt)) + 1
        q, v = self.reference(0.0)[:2]
        h = dt / substeps
        out = Run(np.arange(n) * dt, np.empty((n, robot.model.nq)),
                  np.empty((n, robot.model.nv)), np.empty((n, robot.model.nv)),
                  np.zeros((n, robot.model.nv)), np.zeros(6))
        wrench = np.zeros(6)
        for k in range(n):
            t = out.t[k]
            on = contact is not None and contact.t_on <= t + 1e-9 < contact.t_off
            fext, wrench = self.contact_forces(contact, on)
            out.q[k] = self.q_from_pin(q)
            out.v[k] = robot.v_from_pin(v)
            out.tau[k] = robot.v_from_pin(self.control(t, q, v))
            if on:
                fid = pm.getFrameId(contact.link)
                J = pin.computeFrameJacobian(pm, self.pd, q, fid, pin.LOCAL)
                out.tau_ext[k] = robot.v_from_pin(J.T @ wrench)
            for s in range(substeps):
                q, v = self.rk4(t + s * h, q, v, h, fext)
        return out._replace(wrench=wrench)

    def rk4(self, t, q, v, h, fext):
        pin, pm = self.pin, self.pm
        a1 = self.acceleration(t, q, v, fext)
        q2, v2 = pin.integrate(pm, q, 0.5 * h * v), v + 0.5 * h * a1
        a2 = self.acceleration(t + 0.5 * h, q2, v2, fext)
        q3, v3 = pin.integrate(pm, q, 0.5 * h * v2), v + 0.5 * h * a2
        a3 = self.acceleration(t + 0.5 * h, q3, v3, fext)
        q4, v4 = pin.integrate(pm, q, h * v3), v + h * a3
        a4 = self.acceleration(t + h, q4, v4, fext)
        return (pin.integrate(pm, q, h / 6 * (v + 2 * v2 + 2 * v3 + v4)),
                v + h / 6 * (a1 + 2 * a2 + 2 * a3 + a4))

    def q_from_pin(self, qp):
        """Our q of a Pinocchio configuration (a continuous joint's (cos, sin): its angle)."""
        robot = self.robot
        robot.pin
        joints, off_q = robot._pin[3], robot._pin[6]
        q = np.empty(robot.model.nq)
        if robot.floating:
            q[:7] = qp[robot._root_q:robot._root_q + 7]
        for k, (iq, nq, _) in enumerate(joints):
            q[off_q + k] = np.arctan2(qp[iq + 1], qp[iq]) if nq == 2 else qp[iq]
        return q


# -- the contact of the observer's tests (core and node) ------------------------------------

K = 100.0                       # 1/s: the core tests' observer gain, settled after 5/K = 50 ms
SETTLE = 5.0 / K
ON, OFF, END = 0.3, 0.8, 1.1    # s: the contact's start and end, the run's end
POINT = np.array([0.02, 0.03, 0.05])       # m, in the link's frame: not on a joint axis


@functools.lru_cache(maxsize=None)
def simulated_contact(name, link, force, friction=False, duration=END, substeps=2,
                      point=tuple(POINT)):
    """
    Return (robot, :data:`Run`, friction) of robot ``name`` with ``force`` on ``link``.

    The force acts from ON to OFF at ``point`` (the link's frame; ``link`` None: no contact);
    ``friction``: the joints have armature and friction (returned, else None). Cached.
    """
    robot = Robot(name)
    params = None
    if friction:
        n = len(robot.model.joint_names)
        # ε = 0.1 rad/s: a Coulomb term that turns within 0.01 rad/s changes faster than 1 kHz
        # samples resolve (1.8e-5 N·m without contact from its quadrature alone)
        params = Friction(np.full(n, 0.05), np.full(n, 0.4), np.full(n, 0.3), np.full(n, 0.1),
                          0.1)
    sim = Simulation(robot, params)
    hit = None if link is None else Contact(link, np.array(point), np.array(force), ON, OFF)
    return robot, sim.run(duration, hit, substeps=substeps), params


def settled(t):
    """Settled samples: before the contact, in it after 5/K, after it after 5/K."""
    return (t < ON) | ((t >= ON + SETTLE) & (t < OFF)) | (t >= OFF + SETTLE)
