"""
The dynamics node and the offline replay, fed the same messages, decide and compute the same.

One sequence of serialized joint_states (and, for a floating base, odometry) messages is
published to a real dynamics_node (rclpy over loopback, ``node_helpers.Harness``), then
written to a bag with the publish times as log times and replayed offline (``rbd_replay``)
with the same parameters (max_joint_age, unknown_velocity, every output, a = 0 as the node
without an acceleration_topic). The sequence has partial messages, one without velocities,
NaN and inf velocities, a joint the model lacks, a NaN position, wrong array lengths,
duplicate names, NaN and absent efforts, a message naming no joint of the model, a pause
longer than max_joint_age (stale joints, stale base odometry) and invalid odometry.

For every joint_states message the test states what the rule must decide; the node must
decide that (its skip counters by reason, its outputs by stamp) and so must the replay; where
both answer they publish the same topics with the same names and numbers (1e-9), and every
published number equals Pinocchio's (``oracle.Robot``) at the state the test merged itself.

The momentum observer's outputs (external_torques, collision, contact_wrench) are on in both:
the same messages bit for bit, the observer stepped at the messages with every effort known
(the others count "observer without efforts" in the node), restarted where the stamps jump
by more than max_joint_age (every ``JUMP_EVERY`` messages), collisions at low thresholds.
"""
import array
import dataclasses
import time

import numpy as np  # noqa: E402
import pytest  # noqa: E402

pytest.importorskip("rosbags")

from builtin_interfaces.msg import Time  # noqa: E402

from rbd_ros import outputs  # noqa: E402
from rbd_ros.outputs import whole_body  # noqa: E402
from rbd_ros.replay import bag_io, replay  # noqa: E402
from node_helpers import Harness, wait_for  # noqa: E402
from node_cases import Listener  # noqa: E402
from messages import odometry_cdr  # noqa: E402
from oracle import Robot, assert_close  # noqa: E402

MAX_AGE = 1.0           # s: max_joint_age of both
PAUSE = 2.5             # s: a pause that makes the joints (or the base) stale in both
GAP = 0.02              # s between the other messages
JUMP_EVERY = 7          # the stamps jump 1.5 s (> MAX_AGE: the observer restarts) so often
THRESHOLD = 1.0         # N·m: collision_thresholds of both (random efforts cross it)
FRAMES = {"arm7": "link7", "quadruped": "lf_shank"}       # contact_frame of both
OBSERVER = ("external_torques", "collision", "contact_wrench")
STORE = bag_io.typestore()
G = STORE.types


# -- the sequence ------------------------------------------------------------------------------
def js(names, q, v, e, expect):
    """
    Return a joint_states step.

    v or e None: that array is absent; ``expect``: the rule's decision (a key of
    rbd_ros.outputs.REASONS, None: computed).
    """
    def array(x):
        return np.empty(0) if x is None else np.ascontiguousarray(x, float)
    return ("js", list(names), array(q), array(v), array(e), expect)


def full(rng, jn, expect, *, velocity=True, effort=True, edit=None, extra=()):
    """
    Return a joint_states step of every joint, shuffled, with random values.

    ``edit(q, v, e)`` changes them in model order; ``extra``: names the model lacks,
    appended.
    """
    n = len(jn)
    q, v, e = rng.uniform(-1, 1, n), rng.uniform(-1, 1, n), rng.uniform(-5, 5, n)
    if edit is not None:
        edit(q, v, e)
    perm = rng.permutation(n)
    pad = np.full(len(extra), 0.5)
    return js([jn[i] for i in perm] + list(extra), np.r_[q[perm], pad],
              np.r_[v[perm], pad] if velocity else None,
              np.r_[e[perm], pad] if effort else None, expect)


def setter(array, k, value):
    def edit(q, v, e):
        {"q": q, "v": v, "e": e}[array][k] = value
    return edit


def odometry(rng, valid=True):
    quat = rng.normal(size=4)
    x = np.r_[rng.uniform(-1, 1, 3), quat / np.linalg.norm(quat), rng.uniform(-1, 1, 6)]
    if not valid:
        x[4] = np.nan
    return ("odom", x, valid)


def fixed_base_steps(jn, rng):
    q, v, e = rng.uniform(-1, 1, (3, len(jn)))
    dup = full(rng, jn, "malformed")
    dup[1][-1] = dup[1][0]
    short = full(rng, jn, "malformed")
    return [
        js(jn[:3], q[:3], v[:3], e[:3], "incomplete"),
        js(jn[3:][::-1], q[3:][::-1], v[3:][::-1], e[3:][::-1], None),
        full(rng, jn, None),
        full(rng, jn, "velocity unknown", velocity=False),
        full(rng, jn, "velocity unknown", edit=setter("v", 2, np.nan)),
        full(rng, jn, "velocity unknown", edit=setter("v", 0, np.inf)),
        full(rng, jn, None, extra=("not_a_joint",)),
        full(rng, jn, "malformed", edit=setter("q", 1, np.nan)),
        short[:4] + (short[4][:3], "malformed"),
        full(rng, jn, None, edit=setter("e", 0, np.nan)),
        full(rng, jn, None, effort=False),
        js(["gripper_finger"], [0.01], [0.0], [0.0], "no model joint"),
        dup,
        full(rng, jn, None),
        ("pause", PAUSE),
        js(jn[:3], q[:3], v[:3], e[:3], "stale"),
        js(jn[3:], q[3:], v[3:], e[3:], None),
        full(rng, jn, None),
    ]


def floating_base_steps(jn, rng):
    half = len(jn) // 2
    q, v, e = rng.uniform(-1, 1, (3, len(jn)))
    return [
        full(rng, jn, "no base state"),
        odometry(rng, valid=False),
        full(rng, jn, "no base state"),
        odometry(rng),
        full(rng, jn, None),
        full(rng, jn, None, velocity=False),                   # unknown_velocity: zero
        full(rng, jn, None, edit=setter("v", 3, np.nan)),
        odometry(rng, valid=False),
        full(rng, jn, None, extra=("not_a_joint",)),
        full(rng, jn, "malformed", edit=setter("q", 0, np.inf)),
        full(rng, jn, None, edit=setter("e", 5, np.nan)),
        js(["gripper_finger"], [0.01], [0.0], [0.0], "no model joint"),
        ("pause", PAUSE),
        full(rng, jn, "stale base"),
        odometry(rng),
        js(jn[:half], q[:half], v[:half], e[:half], None),
        full(rng, jn, None),
    ]


def stamp_of(m):
    ns = m * 10_000_000 + (m // JUMP_EVERY) * 1_500_000_000 + 1000 * (m + 1)
    return 100 + ns // 10**9, ns % 10**9


def js_bytes(step, m):
    _, names, q, v, e, _ = step
    sec, nsec = stamp_of(m)
    header = G["std_msgs/msg/Header"](stamp=G["builtin_interfaces/msg/Time"](
        sec=sec, nanosec=nsec), frame_id="")
    msg = G[bag_io.JOINT_STATE](header=header, name=names, position=q, velocity=v, effort=e)
    return bytes(STORE.serialize_cdr(msg, bag_io.JOINT_STATE))


def odom_bytes(x, k):
    return odometry_cdr(STORE, x, 50 + k, 7)


# -- the node ----------------------------------------------------------------------------------
def wait_decision(h, m, expect, skips, count):
    """
    Wait until the node has decided joint_states message ``m`` as ``expect``.

    Decided: its skip counters equal ``skips`` and, computed, ~/torques carries the stamp.
    """
    node = h.node
    sec, nsec = stamp_of(m)

    def decided():
        return (node.stats()["joint_states"] == count and node.skips().counts == skips
                and (expect is not None or h.find("torques", Time(sec=sec, nanosec=nsec))))
    try:
        wait_for(decided, what=f"message {m}: {expect or 'computed'}")
    except AssertionError as exc:
        raise AssertionError(f"{exc}; node skips {node.skips().counts}, expected {skips}, "
                             f"stats {node.stats()}") from None


def feed(h, steps):
    """
    Publish ``steps`` to the node one at a time, each once it decided the one before.

    Returns [(kind, log time ns, bytes)] in publish order.
    """
    node = h.node
    floating = node.params["floating_base"]
    wait_for(lambda: h.joint_states.get_subscription_count() > 0
             and (not floating or h.odom.get_subscription_count() > 0),
             what="the node's input subscriptions")
    records, skips, m, k = [], {}, -1, 0
    efforts = {}                          # the latest effort of each joint (the merge)
    for step in steps:
        if step[0] == "pause":
            time.sleep(step[1])
            continue
        if step[0] == "odom":
            raw, before = odom_bytes(step[1], k), node.current_robot().base_received
            k += 1
            records.append(("odom", time.monotonic_ns(), raw))
            h.odom.publish(raw)
            if step[2]:
                wait_for(lambda: node.current_robot().base_received != before, what="the odometry")
            else:
                skips["invalid odometry"] = skips.get("invalid odometry", 0) + 1
                wait_for(lambda: node.skips().counts == skips, what="the odometry ignored")
            continue
        m += 1
        raw, expect = js_bytes(step, m), step[-1]
        if expect is not None and outputs.REASONS[expect] is not None:
            skips[expect] = skips.get(expect, 0) + 1
        if expect != "malformed":
            efforts.update(zip(step[1], step[4] if len(step[4]) else [np.nan] * len(step[1])))
        if expect is None and not np.isfinite([efforts[n] for n in h.node.current_robot().model
                                               .joint_names]).all():
            skips["observer without efforts"] = skips.get("observer without efforts", 0) + 1
        records.append(("js", time.monotonic_ns(), raw))
        h.joint_states.publish(raw)
        wait_decision(h, m, expect, dict(skips), m + 1)
        time.sleep(GAP)
    assert node.skips().counts == skips and node.stats()["joint_states"] == m + 1
    return records


# -- the replay --------------------------------------------------------------------------------
def write_bag(path, records):
    w = bag_io.open_writer(path, "mcap")
    try:
        cons = {"js": bag_io.add_connection(w, "/joint_states", bag_io.JOINT_STATE),
                "odom": bag_io.add_connection(w, "/odom", bag_io.ODOMETRY)}
        for kind, log, raw in records:
            w.write(cons[kind], log, raw)
    finally:
        w.close()


def by_stamp(messages):
    return {(m.header.stamp.sec, m.header.stamp.nanosec): m for m in messages}


def read_outputs(path):
    out = {name: [] for name in outputs.NAMES + OBSERVER}
    with bag_io.Reader(path) as r:
        for con, _, raw in r.messages():
            name = con.topic.rsplit("/", 1)[-1]
            if con.topic.startswith("/rbd_dynamics/"):
                out[name].append(STORE.deserialize_cdr(raw, con.msgtype))
    return {name: by_stamp(msgs) for name, msgs in out.items()}


# -- the oracle --------------------------------------------------------------------------------
class Merged:
    """The test's own merge: the latest q, v, effort of each joint, the latest valid base."""

    def __init__(self, robot):
        self.robot, self.latest, self.base = robot, {}, None

    def take(self, step):
        if step[0] == "odom":
            if step[2]:
                self.base = step[1]
            return
        _, names, q, v, e, expect = step
        if expect == "malformed":
            return
        for k, name in enumerate(names):
            self.latest[name] = (q[k], v[k] if len(v) else np.nan, e[k] if len(e) else np.nan)

    def state(self):
        """
        Return (q, v, τ, effort known) of the node's computation.

        Unknown velocities 0 (where they are not skipped), an unknown effort 0.
        """
        values = np.array([self.latest[n] for n in self.robot.model.joint_names])
        q, v, e = values.T
        v = np.where(np.isfinite(v), v, 0.0)
        known = bool(np.isfinite(e).all())
        e = e if known else np.zeros_like(e)
        if self.robot.floating:
            q, v, e = np.r_[self.base[:7], q], np.r_[self.base[7:], v], np.r_[np.zeros(6), e]
        return q, v, e, known


def check_with_pinocchio(robot, found, q, v, tau):
    """Check the messages in ``found`` (output -> message) against Pinocchio at (q, v, a = 0, τ)."""
    pin, pm, pd = robot.pin, robot.pm, robot.pd
    qp, vp, taup, zero = robot.q_to_pin(q), robot.v_to_pin(v), robot.v_to_pin(tau), np.zeros(pm.nv)
    nb, n = (6 if robot.floating else 0), robot.model.nv

    def sym(A):
        A = np.asarray(A)
        return robot.matrix_from_pin(np.triu(A) + np.triu(A, 1).T)
    assert_close(found["torques"].effort, robot.v_from_pin(pin.rnea(pm, pd, qp, vp, zero))[nb:],
                 1e-9, "torques")
    if "accelerations" in found:
        assert_close(found["accelerations"].data, robot.v_from_pin(pin.aba(pm, pd, qp, vp, taup)),
                     1e-9, "accelerations")
    assert_close(np.reshape(found["inverse_inertia"].data, (n, n)),
                 sym(pin.computeMinverse(pm, pd, qp)), 1e-9, "inverse_inertia")
    pin.computeRNEADerivatives(pm, pd, qp, vp, zero)
    d = found["rnea_derivatives"]
    assert_close(np.reshape(d.d_dq, (n, n)), robot.matrix_from_pin(pd.dtau_dq), 1e-9, "dtau_dq")
    assert_close(np.reshape(d.d_dv, (n, n)), robot.matrix_from_pin(pd.dtau_dv), 1e-9, "dtau_dv")
    if "aba_derivatives" in found:
        pin.computeABADerivatives(pm, pd, qp, vp, taup)
        d = found["aba_derivatives"]
        assert_close(np.reshape(d.d_dq, (n, n)), robot.matrix_from_pin(pd.ddq_dq), 1e-9,
                     "dqdd_dq")
        assert_close(np.reshape(d.d_dv, (n, n)), robot.matrix_from_pin(pd.ddq_dv), 1e-9,
                     "dqdd_dv")


def check_whole_body_with_pinocchio(robot, found, q, v, link):
    """Check ~/end_effector, ~/center_of_mass (and ~/centroidal_momentum) against Pinocchio."""
    pin, pm, pd = robot.pin, robot.pm, robot.pd
    qp, vp = robot.q_to_pin(q), robot.v_to_pin(v)
    pin.centerOfMass(pm, pd, qp, vp)
    point = found["center_of_mass"].point
    assert_close([point.x, point.y, point.z], pd.com[0], 1e-9, "center_of_mass")
    if robot.floating:
        pin.computeCentroidalMomentum(pm, pd, qp, vp)
        h = found["centroidal_momentum"]
        assert_close([h.linear.x, h.linear.y, h.linear.z, h.angular.x, h.angular.y,
                      h.angular.z], pd.hg.vector, 1e-9, "centroidal_momentum")
    e = found["end_effector"]
    assert e.link == link
    frame = pm.getFrameId(link, pin.BODY)
    pin.framesForwardKinematics(pm, pd, qp)
    p = e.pose.position
    assert_close([p.x, p.y, p.z], pd.oMf[frame].translation, 1e-9, "end_effector position")
    J = np.asarray(pin.computeFrameJacobian(pm, pd, qp, frame, pin.LOCAL_WORLD_ALIGNED))
    Minv = np.asarray(pin.computeMinverse(pm, pd, qp))
    Minv = np.triu(Minv) + np.triu(Minv, 1).T
    t = e.twist
    assert_close([t.linear.x, t.linear.y, t.linear.z, t.angular.x, t.angular.y, t.angular.z],
                 J @ vp, 1e-9, "end_effector twist")
    inverse_t = J[:3] @ Minv @ J[:3].T
    assert e.translational_inertia_defined
    assert_close(np.reshape(e.translational_inertia, (3, 3)), np.linalg.inv(inverse_t), 1e-8,
                 "Λ_t")
    assert list(e.effective_mass_defined) == [True] * 3
    assert_close(e.effective_mass, 1.0 / np.diag(inverse_t), 1e-8, "effective masses")


# -- the test ----------------------------------------------------------------------------------
def assert_same(a, b, what):
    """Assert the same message: every field equal, floats bit for bit (NaN equal to NaN)."""
    def fields(msg):
        if hasattr(msg, "get_fields_and_field_types"):           # rclpy's
            return {k: fields(getattr(msg, k)) for k in msg.get_fields_and_field_types()}
        if dataclasses.is_dataclass(msg):                         # rosbags'
            return {f.name: fields(getattr(msg, f.name)) for f in dataclasses.fields(msg)
                    if not f.name.startswith("__")}
        if isinstance(msg, (list, tuple, np.ndarray, array.array)):
            return [fields(x) for x in msg]
        if isinstance(msg, (float, np.floating)):
            return np.float64(msg).tobytes()
        return msg
    assert fields(a) == fields(b), what


def numbers(msg):
    return [np.asarray(getattr(msg, f), float) for f in ("effort", "data", "d_dq", "d_dv")
            if hasattr(msg, f)]


def names_of(msg):
    return list(msg.name) if hasattr(msg, "name") else list(msg.names)


@pytest.mark.pinocchio
@pytest.mark.parametrize("name,unknown_velocity", [("arm7", "skip"), ("quadruped", "zero")])
def test_node_and_replay_agree(tmp_path, name, unknown_velocity):
    robot = Robot(name)
    model = robot.model
    rng = np.random.default_rng(17)
    steps = (floating_base_steps if robot.floating else fixed_base_steps)(
        list(model.joint_names), rng)
    params = {"robot_description": robot.xml, "floating_base": robot.floating,
              "max_joint_age": MAX_AGE, "unknown_velocity": unknown_velocity,
              "diagnostics_period": 0.0, **{o.parameter: True for o in outputs.OUTPUTS
                                            if o.name not in whole_body.NAMES},
              "end_effector_frame": FRAMES[name], "publish_center_of_mass": True,
              "publish_external_torques": True, "publish_collision": True,
              "contact_frame": FRAMES[name], "collision_thresholds": [THRESHOLD]}
    h = Harness(params)
    try:
        listen = Listener(h)
        records = feed(h, steps)
        write_bag(tmp_path / "in", records)
        rep = replay(tmp_path / "in", tmp_path / "out", urdf=robot.path,
                     floating_base=robot.floating, outputs=outputs.NAMES + OBSERVER,
                     max_joint_age=MAX_AGE, unknown_velocity=unknown_velocity,
                     acceleration="zero", progress=False, plots=False,
                     collision_thresholds=THRESHOLD, contact_frame=FRAMES[name],
                     end_effector_frame=FRAMES[name])
        replay_out = read_outputs(tmp_path / "out")

        def received():
            """Return the node's outputs by name once it has as many of each as the replay."""
            got = {name: h.messages(name) for name in outputs.NAMES}
            got.update({k: list(listen.received[k]) for k in OBSERVER})
            return all(len(got[k]) >= len(replay_out[k]) for k in got) and got
        # feed waited for each message's ~/torques only: the node's other outputs of the
        # last messages may still be on their way (a fixed sleep here raced them)
        got = wait_for(received, what="the node's outputs of every message")
        node_out = {name: by_stamp(msgs) for name, msgs in got.items()}
    finally:
        h.close()
    ticks = rep["ticks"]
    merged = Merged(robot)
    m, answered = -1, 0
    seen = {k: 0 for k in OBSERVER}
    for step in steps:
        if step[0] == "pause":
            continue
        merged.take(step)
        if step[0] == "odom":
            continue
        m += 1
        expect = step[-1]
        assert ticks.reason(m) == expect, f"message {m}: the replay decided {ticks.reason(m)}"
        stamp = stamp_of(m)
        node_found = {k: node_out[k][stamp] for k in outputs.NAMES + OBSERVER
                      if stamp in node_out[k]}
        replay_found = {k: replay_out[k][stamp] for k in outputs.NAMES + OBSERVER
                        if stamp in replay_out[k]}
        want = set()
        if expect is None:
            q, v, tau, effort_known = merged.state()
            want = {o.name for o in outputs.computation(outputs.NAMES, effort_known).outputs}
            if not robot.floating:                # ~/centroidal_momentum: floating bases only
                want.discard("centroidal_momentum")
        assert set(node_found) - set(OBSERVER) == set(replay_found) - set(OBSERVER) == want, \
            f"message {m} ({expect})"
        observed = sorted(k for k in OBSERVER if k in node_found)
        assert observed == sorted(k for k in OBSERVER if k in replay_found), f"message {m}"
        for k in observed:
            assert_same(node_found[k], replay_found[k], f"message {m} {k}")
            seen[k] += 1
        for k in want & set(whole_body.NAMES):   # the same calls, state by state
            assert_same(node_found[k], replay_found[k], f"message {m} {k}")
        for k in want - set(whole_body.NAMES):
            a, b = node_found[k], replay_found[k]
            assert names_of(a) == names_of(b) == list(
                model.joint_names if k == "torques" else outputs.dof_names(model))
            for x, y in zip(numbers(a), numbers(b), strict=True):
                np.testing.assert_allclose(x, y, rtol=1e-9, atol=1e-9, err_msg=f"{m} {k}")
        if expect is None:
            check_with_pinocchio(robot, node_found, q, v, tau)
            check_whole_body_with_pinocchio(robot, node_found, q, v, FRAMES[name])
            answered += 1
    assert m + 1 == rep["messages"] and answered == rep["answered"] >= 6
    assert rep["skipped"] == {key: sum(1 for s in steps if s[0] == "js" and s[-1] == key)
                              for key in outputs.REASON_KEYS
                              if any(s[0] == "js" and s[-1] == key for s in steps)}
    assert rep["odometry_ignored"] == sum(1 for s in steps if s[0] == "odom" and not s[2])
    known = answered - h.node.skips().counts.get("observer without efforts", 0)
    assert seen["external_torques"] == seen["contact_wrench"] == known >= 4
    assert seen["collision"] >= 1, "no collision message: the rule is not exercised"
    assert len(rep["collisions"]["events"]) >= 1
