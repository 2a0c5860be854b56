"""
The robots, states and checks the node tests share (the ``harness`` fixture: conftest.py).

Every number the node publishes or answers is compared with the core evaluated on a model
loaded independently from the same URDF (:func:`assert_matches_core`). Importing this module
imports rclpy and the messages: only tests of this folder do (node/conftest.py first checks
the ROS environment and sets the DDS domain).
"""
import os

import numpy as np

import rbd_ros
from rbd_ros.outputs import BASE_DOF_NAMES

from node_helpers import OUTPUTS, SERVICES, call_service, joint_state
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
    a = np.ones(len(q))
    req = SERVICES["inverse_dynamics"].Request(joint_names=list(model.joint_names),
                                               q=q.tolist(), v=v.tolist(), a=a.tolist())
    resp = call_service(client, req, "the inverse_dynamics response")
    assert resp.success, resp.message
    np.testing.assert_allclose(resp.tau, rbd_ros.rnea(model, q, v, a), **TOL)
