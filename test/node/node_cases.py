"""
The robots, states, requests and checks the node tests share (``harness``: conftest.py).

Every number the node publishes or answers is compared with the core evaluated on a model
loaded independently from the same URDF (:func:`assert_matches_core`, :func:`answers`) or
with Pinocchio (:func:`pin_each`). Importing this module imports rclpy and the messages:
only tests of this folder do (node/conftest.py first checks the ROS environment and sets the
DDS domain).
"""
import json
import os
import time

import numpy as np
from geometry_msgs.msg import WrenchStamped
from rbd_ros_interfaces.msg import Collision
from sensor_msgs.msg import JointState
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

import rbd_ros
from rbd_ros.outputs import BASE_DOF_NAMES

from node_helpers import (OUTPUTS, PLANNER_SERVICES, RELIABLE, SERVICES, STARTUP,
                          call_service, joint_state, wait_for)
from oracle import BAD_DIR, URDF_DIR

TOL = dict(rtol=1e-9, atol=1e-9)
ARM7 = rbd_ros.robots.path("rbd_arm7")
QUADRUPED = rbd_ros.robots.path("rbd_quadruped")
BRANCHED = os.path.join(URDF_DIR, "branched.urdf")
MALFORMED = os.path.join(BAD_DIR, "malformed.urdf")
NEGATIVE_MASS = os.path.join(BAD_DIR, "negative_mass.urdf")
ALL_OUTPUTS = {"publish_" + k: True for k in OUTPUTS}


def xml(path):
    with open(path) as f:
        return f.read()


def core_model(path, floating_base=False):
    return rbd_ros.load_model(path, floating_base=floating_base)


def random_state(model, seed):
    """Joint positions, velocities and efforts in model joint order."""
    rng = np.random.default_rng(seed)
    n = len(model.joint_names)
    return rng.uniform(-1, 1, n), rng.uniform(-1, 1, n), rng.uniform(-5, 5, n)


def random_base(seed):
    rng = np.random.default_rng(seed)
    quat = rng.normal(size=4)
    quat /= np.linalg.norm(quat)
    return np.concatenate([rng.uniform(-1, 1, 3), quat]), rng.uniform(-1, 1, 6)


def diagnostics_values(h):
    """Return the values of the dynamics node's latest /diagnostics status, or {}."""
    for arr in reversed(h.messages("diagnostics")):
        for status in arr.status:
            if status.name.endswith("rbd_dynamics: dynamics"):
                return {kv.key: kv.value for kv in status.values}
    return {}


def shuffled(names, seed):
    """Return a permutation of ``names`` that is not the identity, and its index array."""
    rng = np.random.default_rng(seed)
    while True:
        perm = rng.permutation(len(names))
        if len(names) < 2 or (perm != np.arange(len(names))).any():
            return [names[i] for i in perm], perm


def message(model, q, v=None, tau=None, seed=0, stamp=None):
    """Make a JointState with the joints in a shuffled order."""
    names, perm = shuffled(list(model.joint_names), seed)
    return joint_state(names, q[perm], () if v is None else v[perm],
                       () if tau is None else tau[perm], stamp=stamp)


def assert_matches_core(h, model, found, q, v, tau, a=None, base=None):
    """
    Assert that the messages in ``found`` (topic -> message) equal the core's results.

    The core is evaluated at the joint state (q, v, tau) in model order (plus the base
    pose/twist ``base`` on a floating base).
    """
    nb = model.nv_base
    if base is not None:
        q = np.concatenate([base[0], q])
        v = np.concatenate([base[1], v])
    tau_full = np.concatenate([np.zeros(nb), tau])
    a = np.zeros(model.nv) if a is None else a
    dofs = list(BASE_DOF_NAMES[:nb]) + list(model.joint_names)
    n = model.nv
    if "torques" in found:
        msg = found["torques"]
        assert list(msg.name) == list(model.joint_names)
        np.testing.assert_allclose(msg.effort, rbd_ros.rnea(model, q, v, a)[nb:], **TOL)
    if "accelerations" in found:
        msg = found["accelerations"]
        assert list(msg.names) == dofs
        np.testing.assert_allclose(msg.data, rbd_ros.aba(model, q, v, tau_full), **TOL)
    if "inverse_inertia" in found:
        msg = found["inverse_inertia"]
        assert list(msg.names) == dofs and (msg.rows, msg.cols) == (n, n)
        np.testing.assert_allclose(np.reshape(msg.data, (msg.rows, msg.cols)),
                                   rbd_ros.minv(model, q), **TOL)
    for key, fn, u in (("rnea_derivatives", rbd_ros.rnea_derivatives, a),
                       ("aba_derivatives", rbd_ros.aba_derivatives, tau_full)):
        if key in found:
            msg = found[key]
            assert list(msg.names) == dofs and msg.size == n
            d_dq, d_dv, _ = fn(model, q, v, u)
            np.testing.assert_allclose(np.reshape(msg.d_dq, (n, n)), d_dq, **TOL)
            np.testing.assert_allclose(np.reshape(msg.d_dv, (n, n)), d_dv, **TOL)


FIELDS = {"inverse_dynamics": ("q", "v", "a"), "forward_dynamics": ("q", "v", "tau"),
          "inverse_inertia": ("q",), "inverse_dynamics_derivatives": ("q", "v", "a"),
          "forward_dynamics_derivatives": ("q", "v", "tau")}


def service_request(service, names, values, base=None):
    """Make a request naming ``names`` with ``values[field]`` already in that order."""
    req = SERVICES[service].Request()
    req.joint_names = list(names)
    for field in FIELDS[service]:
        setattr(req, field, [float(x) for x in values[field]])
        if base is not None:
            setattr(req, "base_" + field, [float(x) for x in base[field]])
    return req


def good_exchange(h, model, seed, topics=("torques", "accelerations")):
    q, v, tau = random_state(model, seed)
    msg = message(model, q, v, tau, seed=seed)
    found = h.exchange(lambda: h.joint_states.publish(msg), msg.header.stamp, topics=topics)
    assert_matches_core(h, model, found, q, v, tau)
    return q, v, tau


def _run_node_process(tmp_path, params, without_interfaces=False, ros_args=()):
    """
    Start dynamics_node in a process of its own; return (namespace, Popen, log file).

    Optionally as if rbd_ros_interfaces were not installed; ``ros_args``: more of
    ``--ros-args`` (``ns`` in them is replaced by the namespace, dots for its slashes).
    """
    import subprocess
    import sys
    import yaml
    ns = f"/rbd_process_test_{os.getpid()}_{tmp_path.name}"
    params_file = tmp_path / "params.yaml"
    params_file.write_text(yaml.safe_dump({"/**": {"ros__parameters": params}}))
    log = open(tmp_path / "node.log", "w+")
    blocked = "import sys; sys.modules['rbd_ros_interfaces'] = None; " if without_interfaces \
        else ""
    code = f"{blocked}from rbd_ros.node.dynamics_node import main; main()"
    proc = subprocess.Popen([sys.executable, "-c", code, "--ros-args", "-r", f"__ns:={ns}",
                             "--params-file", str(params_file)]
                            + [a.replace("{ns}", ns[1:].replace("/", ".")) for a in ros_args],
                            stdout=log, stderr=subprocess.STDOUT, env=dict(os.environ))
    return ns, proc, log


def call_inverse_dynamics(client, model, q, v):
    """
    Assert the node's inverse_dynamics answer at (q, v, a = 1) is RNEA's.

    The callers make it a node's first request: it may wait for the services' compile on an
    empty kernel cache (``Harness.call``).
    """
    a = np.ones(len(q))
    req = SERVICES["inverse_dynamics"].Request(joint_names=list(model.joint_names),
                                               q=q.tolist(), v=v.tolist(), a=a.tolist())
    resp = call_service(client, req, "the inverse_dynamics response", STARTUP)
    assert resp.success, resp.message
    np.testing.assert_allclose(resp.tau, rbd_ros.rnea(model, q, v, a), **TOL)


def answers(h, model, seed, base=None):
    """Assert the node answers an inverse_dynamics call correctly (``base``: its pose, twist)."""
    names, perm = shuffled(list(model.joint_names), seed)
    rng = np.random.default_rng(seed)
    q, v, a = (rng.uniform(-1, 1, len(names)) for _ in range(3))      # model order
    request_base = None if base is None else {"q": base[0], "v": base[1], "a": np.zeros(6)}
    resp = h.call("inverse_dynamics", service_request(
        "inverse_dynamics", names, {"q": q[perm], "v": v[perm], "a": a[perm]}, request_base))
    assert resp.success, resp.message
    if base is not None:
        q, v, a = (np.concatenate([b, x]) for b, x in zip((base[0], base[1], np.zeros(6)),
                                                          (q, v, a)))
    tau = rbd_ros.rnea(model, q, v, a)
    np.testing.assert_allclose(resp.tau, tau[model.nv - len(names):][perm], **TOL)


GARBAGE = [b"\x00\x00\x00\x00" + b"junk" * 8,                 # big-endian CDR header, junk
           b"\x00\x00\x00\x00" + bytes(range(256)) * 2,
           b"\x00\x03\x00\x00" + b"\xff" * 64,                 # an unknown encapsulation
           b"\x00\x01\x00\x00" + b"\xff" * 64,                 # little-endian, nonsense counts
           b"\x00\x01\x00\x00\x01"]                             # truncated
"""Serialized messages that are no message: what a hostile publisher sends raw."""


# -- payloads, joint parameters, trajectories -----------------------------------------------

def set_payload(h, link, mass, com=(0, 0, 0), rot=np.zeros((3, 3))):
    """Ask the node's payload service for ``mass`` at ``com`` on ``link``; return its response."""
    req = PLANNER_SERVICES["set_payload"].Request(link=link)
    i = req.inertia
    i.m = float(mass)
    i.com.x, i.com.y, i.com.z = (float(x) for x in com)
    i.ixx, i.ixy, i.ixz, i.iyy, i.iyz, i.izz = (float(rot[r, c]) for r, c in (
        (0, 0), (0, 1), (0, 2), (1, 1), (1, 2), (2, 2)))
    return h.call("set_payload", req)


JOINT_EPS = 0.05
"""rad/s: the Coulomb friction's ε (tanh(v/ε)) of the joint parameter files written here."""


def random_joint_parameters(model, seed=0):
    """Return random armature, viscous, Coulomb and offset values, one per joint."""
    rng = np.random.default_rng(seed)
    n = len(model.joint_names)
    return {"armature": rng.uniform(0.1, 0.5, n), "viscous": rng.uniform(0.1, 1.0, n),
            "coulomb": rng.uniform(0.1, 1.0, n), "offset": rng.uniform(-0.3, 0.3, n)}


def write_joint_file(path, model, values, eps=JOINT_EPS):
    """Write ``values`` as a joint parameters file (JSON) at ``path``; return its name."""
    doc = {"format": "rbd_ros joint parameters 1", "epsilon": eps,
           "joints": {name: {k: float(x[j]) for k, x in values.items()}
                      for j, name in enumerate(model.joint_names)}}
    path.write_text(json.dumps(doc))
    return str(path)


def trajectory(names, perm, **fields):
    """Return a JointTrajectory naming ``names``; ``fields``: (N, joints), model order."""
    msg = JointTrajectory()
    msg.joint_names = list(names)
    n = len(next(iter(fields.values())))
    for k in range(n):
        p = JointTrajectoryPoint()
        for attr, x in fields.items():
            setattr(p, attr, [float(y) for y in x[k][perm]])
        msg.points.append(p)
    return msg


def random_states(robot, n, seed):
    """Return ``n`` random configurations, velocities and a third vector (accelerations or τ)."""
    rng = np.random.default_rng(seed)
    m = robot.model
    q = np.array([m.random_configuration(rng) for _ in range(n)])
    return q, rng.normal(scale=0.5, size=(n, m.nv)), rng.normal(size=(n, m.nv))


def pin_each(robot, function, *arrays):
    """Stack Pinocchio's ``function(pm, pd, q, x, y)`` over the points, in our v order."""
    out = []
    for q, x, y in zip(*arrays):
        out.append(robot.v_from_pin(function(robot.pm, robot.pd, robot.q_to_pin(q),
                                             robot.v_to_pin(x), robot.v_to_pin(y))))
    return np.array(out)


# -- the contact observer's outputs ---------------------------------------------------------

OBSERVER_TOPICS = {"external_torques": JointState, "collision": Collision,
                   "contact_wrench": WrenchStamped}


class Listener:
    """The tester's subscriptions to the observer's outputs, messages kept by stamp."""

    def __init__(self, h, topics=tuple(OBSERVER_TOPICS)):
        self.h = h
        base = f"{h.namespace}/rbd_dynamics/"
        self.received = {name: [] for name in topics}
        self.subs = [h.tester.create_subscription(OBSERVER_TOPICS[name], base + name,
                                                  self.received[name].append, RELIABLE)
                     for name in topics]
        wait_for(lambda: all(h.node._pub[n].get_subscription_count() > 0 for n in topics)
                 and all(s.get_publisher_count() > 0 for s in self.subs),
                 what="discovery of the observer's outputs")

    def by_time(self, name):
        return {m.header.stamp.sec + 1e-9 * m.header.stamp.nanosec: m
                for m in list(self.received[name])}

    def has(self, name, stamp):
        """Whether a message on ``name`` stamped ``stamp`` (sec, nanosec) came (the last few)."""
        return any((m.header.stamp.sec, m.header.stamp.nanosec) == tuple(stamp)
                   for m in self.received[name][-8:])


def send_once(h, msg):
    """
    Publish ``msg`` and wait for the node to take it (a copy taken twice counts twice).

    Resent only when the node did not take it within 5 s (best effort may lose it).
    """
    before = h.node.stats()["joint_states"]
    deadline = time.monotonic() + 5.0
    h.joint_states.publish(msg)
    while h.node.stats()["joint_states"] == before:
        if time.monotonic() > deadline:
            h.joint_states.publish(msg)
            deadline = time.monotonic() + 5.0
        time.sleep(0.0002)


def send_paced(h, msg, listen, topics):
    """
    :func:`send_once`, then wait until ``listen`` has the outputs ``topics`` of ``msg``.

    The node publishes each output once per tick to a reliable reader whose queue is
    bounded (the node's publishers keep the last 10): a test that needs every message
    waits for each before sending the next, or a slow test process loses some.
    """
    send_once(h, msg)
    stamp = (msg.header.stamp.sec, msg.header.stamp.nanosec)
    wait_for(lambda: all(listen.has(name, stamp) for name in topics),
             what=f"the outputs {topics} stamped {stamp}")
