"""
Pinocchio computations that tests of more than one layer compare with (core and node).

Each is written here from Pinocchio's own functions, independently of rbd_ros: rollouts
(``pin.aba`` and ``pin.integrate``), the joint forces of link wrenches, RNEA along a
trajectory, and an arm carrying a payload simulated with Pinocchio's inverse dynamics.
``oracle.Robot`` maps our q / v / τ to Pinocchio's layout and back.
"""
import os
import sys

import numpy as np

import rbd_ros
from rbd_ros.actuation import joint_parameters as jf
from rbd_ros.batch import rollout as rl
from oracle import ROOT


def pin_rollout(robot, q0, v0, tau, dt, method):
    """
    Run ``rbd_ros.batch.rollout``'s schemes, written with Pinocchio's aba and integrate.

    Semi-implicit Euler (v first, then q ⊕ h v') or RK4 (stages c = 0, ½, ½, 1); returns
    the lists of Pinocchio-layout q and v, the start included.
    """
    pin, pm, pd = robot.pin, robot.pm, robot.pd
    q, v = robot.q_to_pin(q0), robot.v_to_pin(v0)
    qs, vs = [q], [v]
    for u in tau:
        u = robot.v_to_pin(u)
        if method == rl.EULER:
            v = v + dt * pin.aba(pm, pd, q, v, u)
            q = pin.integrate(pm, q, dt * v)
        else:
            stages, vi, a = [], v, None
            for c in (0.0, 0.5, 0.5, 1.0):
                qi = q if c == 0 else pin.integrate(pm, q, c * dt * vi)
                vi = v if c == 0 else v + c * dt * a
                a = pin.aba(pm, pd, qi, vi, u).copy()
                stages.append((vi, a))
            w = (1.0, 2.0, 2.0, 1.0)
            dq = dt / 6 * sum(wi * s[0] for wi, s in zip(w, stages))
            v = v + dt / 6 * sum(wi * s[1] for wi, s in zip(w, stages))
            q = pin.integrate(pm, q, dq)
        qs.append(q)
        vs.append(v)
    return qs, vs


def pin_fext(robot, qp, wrenches):
    """
    Pinocchio's per-joint forces of ``wrenches`` (link, frame, six numbers).

    A wrench in a link's frame is moved to its parent joint with the frame's placement
    (``pin.Frame.placement.act``), one in the world frame with the joint's world placement
    after ``pin.forwardKinematics`` (``oMi.actInv``).
    """
    pin, pm, pd = robot.pin, robot.pm, robot.pd
    pin.forwardKinematics(pm, pd, qp)
    forces = [pin.Force.Zero() for _ in range(pm.njoints)]
    for link, frame, w in wrenches:
        f = pm.frames[pm.getFrameId(link, pin.BODY)]
        jid = f.parentJoint
        force = pin.Force(np.asarray(w[:3]), np.asarray(w[3:]))
        if frame == "link":
            forces[jid] = forces[jid] + f.placement.act(force)
        else:
            forces[jid] = forces[jid] + pd.oMi[jid].actInv(force)
    return forces


def pin_effort(robot, pm, q, v, a):
    """Pinocchio's RNEA of every sample, in our joint order."""
    pd = pm.createData()
    import pinocchio as pin
    return np.array([robot.v_from_pin(pin.rnea(pm, pd, robot.q_to_pin(x), robot.v_to_pin(y),
                                               robot.v_to_pin(z))) for x, y, z in zip(q, v, a)])


# -- an arm carrying a payload (issue 24): the truth the payload estimate meets --------------

PAYLOAD_MASS = 1.5
PAYLOAD_COM = np.array([0.04, 0.0, 0.05])            # 4 cm off the flange's z axis
PAYLOAD_INERTIA = np.diag([4e-3, 5e-3, 3e-3])
PAYLOAD_ARM_JOINTS = {"armature": np.linspace(0.3, 0.03, 7),
                      "viscous": np.linspace(0.8, 0.1, 7)}
"""The rotor inertia and viscous friction of the simulated arm (the estimate knows them)."""


def simulate_payload_arm(pin, model, seconds=20.0, rate=100.0, noise=0.05, seed=3):
    """
    Return (q, v, a, measured τ, joint parameters) of rbd_arm7 with the payload on ``tool``.

    Pinocchio's model of rbd_arm7, the payload added to the inertia of ``tool``'s joint; the
    trajectory is scripts/make_example_bag.py's; τ is Pinocchio's RNEA plus the joint
    parameters' torques, with Gaussian noise of deviation ``noise``.
    """
    if os.path.join(ROOT, "scripts") not in sys.path:
        sys.path.insert(0, os.path.join(ROOT, "scripts"))
    import make_example_bag
    pm = pin.buildModelFromUrdf(rbd_ros.robots.path("rbd_arm7"))
    frame = pm.frames[pm.getFrameId("tool")]
    payload = pin.Inertia(PAYLOAD_MASS, PAYLOAD_COM, PAYLOAD_INERTIA)
    pm.inertias[frame.parentJoint] = pm.inertias[frame.parentJoint] + \
        frame.placement.act(payload)
    pd = pm.createData()
    t = np.arange(int(seconds * rate)) / rate
    q, v, a = make_example_bag.trajectory(model, t, seed)
    params = jf.JointParameters(tuple(model.joint_names), dict(PAYLOAD_ARM_JOINTS))
    tau = np.array([pin.rnea(pm, pd, *x) for x in zip(q, v, a)]) + params.torques(v, a)
    rng = np.random.default_rng(seed)
    return q, v, a, tau + rng.normal(0, noise, tau.shape), params


def random_payload(rng):
    """
    Return (mass, com, rotational inertia about the com) of a random solid box.

    0.3 .. 3 kg, its centre of mass within 8 cm of the link origin, sides 2 .. 20 cm,
    turned by a random rotation: a rigid body by construction.
    """
    mass = rng.uniform(0.3, 3.0)
    com = rng.uniform(-0.08, 0.08, 3)
    a, b, c = rng.uniform(0.02, 0.2, 3)
    box = mass / 12 * np.diag([b * b + c * c, a * a + c * c, a * a + b * b])
    R, _ = np.linalg.qr(rng.normal(size=(3, 3)))
    return mass, com, R @ box @ R.T


def simulate_payload(pin, model, link, payload, t, noise, seed):
    """
    Return (q, v, measured τ) of ``model`` carrying ``payload`` on ``link`` at the stamps t.

    ``payload``: (mass, com, inertia about the com) in the link's frame; Pinocchio's model of
    the URDF with the payload added to the inertia of the link's joint, τ by Pinocchio's
    RNEA at the trajectory of scripts/make_example_bag.py, plus Gaussian noise ``noise``.
    """
    if os.path.join(ROOT, "scripts") not in sys.path:
        sys.path.insert(0, os.path.join(ROOT, "scripts"))
    import make_example_bag
    pm = pin.buildModelFromUrdf(rbd_ros.robots.path("rbd_arm7"))
    frame = pm.frames[pm.getFrameId(link)]
    pm.inertias[frame.parentJoint] = pm.inertias[frame.parentJoint] + \
        frame.placement.act(pin.Inertia(*payload))
    pd = pm.createData()
    q, v, a = make_example_bag.trajectory(model, t, seed)
    tau = np.array([pin.rnea(pm, pd, *x) for x in zip(q, v, a)])
    return q, v, tau + np.random.default_rng(seed).normal(0, noise, tau.shape)
