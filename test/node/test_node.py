"""
ROS 2 tests of the dynamics node (rbd_ros/node): real rclpy, the node in-process.

Every number the node publishes or answers is compared with the core (``rbd_ros.rnea``,
``aba``, ``minv``, ``rnea_derivatives``, ``aba_derivatives``) evaluated here on a model
loaded independently from the same URDF. Each test has its own rclpy Context, namespace
and executor thread (``node_helpers.Harness``); waits poll conditions until a deadline.
"""
import time

import numpy as np  # noqa: E402
import pytest  # noqa: E402

import rbd_ros  # noqa: E402
from rbd_ros.outputs import BASE_DOF_NAMES  # noqa: E402
from diagnostic_msgs.msg import DiagnosticStatus  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from std_msgs.msg import String  # noqa: E402

from node_helpers import (BEST_EFFORT, OUTPUTS, SERVICES, joint_state, joint_vector,  # noqa: E402
                          odometry, wait_for)
from node_cases import (ALL_OUTPUTS, ARM7, BRANCHED, FIELDS, MALFORMED,  # noqa: E402
                        NEGATIVE_MASS, QUADRUPED, TOL, _run_node_process, assert_matches_core,
                        call_inverse_dynamics, core_model, good_exchange, message, random_base,
                        random_state, service_request, shuffled, xml)


# -- 1: robot_description on the topic, every output ------------------------------------------
def test_description_topic_all_outputs(harness):
    h = harness(dict(ALL_OUTPUTS))
    model = core_model(ARM7)
    h.description.publish(String(data=xml(ARM7)))
    for seed in (1, 2):
        q, v, tau = random_state(model, seed)
        msg = message(model, q, v, tau, seed=seed)
        found = h.exchange(lambda: h.joint_states.publish(msg), msg.header.stamp,
                           topics=list(OUTPUTS))
        for out in found.values():
            assert out.header.stamp == msg.header.stamp
        assert_matches_core(h, model, found, q, v, tau)


# -- 2: floating base from odometry -----------------------------------------------------------
def test_floating_base_odometry(harness):
    h = harness(dict(ALL_OUTPUTS, robot_description=xml(QUADRUPED), floating_base=True))
    model = core_model(QUADRUPED, floating_base=True)
    for seed in (3, 4):
        base_q, base_v = random_base(seed)
        odom = odometry(base_q, base_v)
        h.odom.publish(odom)
        # the node has the new base state (odometry has no output of its own to wait on)
        wait_for(lambda: np.array_equal(h.node.current_robot().q[:7], base_q)
                 and np.array_equal(h.node.current_robot().v[:6], base_v),
                 what="the odometry to reach the node")
        q, v, tau = random_state(model, seed)
        msg = message(model, q, v, tau, seed=seed)
        found = h.exchange(lambda: h.joint_states.publish(msg), msg.header.stamp,
                           topics=list(OUTPUTS))
        assert_matches_core(h, model, found, q, v, tau, base=(base_q, base_v))


def test_floating_base_waits_for_odometry(harness):
    h = harness(dict(robot_description=xml(QUADRUPED), floating_base=True))
    model = core_model(QUADRUPED, floating_base=True)
    q, v, tau = random_state(model, 5)
    first = message(model, q, v, tau, seed=5)
    h.send_joint_states(first)                  # complete joints, but no base state yet
    base_q, base_v = random_base(5)
    odom = odometry(base_q, base_v)

    def publish():
        h.odom.publish(odom)
        h.joint_states.publish(second)
    second = message(model, q, v, tau, seed=6)
    found = h.exchange(publish, second.header.stamp, topics=["torques"])
    assert h.no_output(first.header.stamp)
    assert_matches_core(h, model, found, q, v, tau, base=(base_q, base_v))


# -- 3: joints split over two publishers -----------------------------------------------------
def test_split_publishers_merged_by_name(harness):
    h = harness(dict(ALL_OUTPUTS, robot_description=xml(ARM7)))
    best_effort = h.tester.create_publisher(JointState, "joint_states", BEST_EFFORT)
    model = core_model(ARM7)
    q, v, tau = random_state(model, 7)
    names, perm = shuffled(list(model.joint_names), 7)
    part_a, part_b = perm[:3], perm[3:][::-1]
    jn = list(model.joint_names)

    def part(idx, q, v, tau):
        return joint_state([jn[i] for i in idx], q[idx], v[idx], tau[idx])

    first = part(part_a, q, v, tau)
    h.send_joint_states(first, best_effort)     # 3 of 7 joints known: nothing to publish
    second = part(part_b, q, v, tau)
    found = h.exchange(lambda: h.joint_states.publish(second), second.header.stamp,
                       topics=list(OUTPUTS))
    # the node's publishers are reliable and ordered: an output for the first message
    # would have arrived before the one for the second
    assert h.no_output(first.header.stamp)
    assert_matches_core(h, model, found, q, v, tau)

    # update one part only: the other keeps its last values
    q2, v2, tau2 = random_state(model, 8)
    q[part_a], v[part_a], tau[part_a] = q2[part_a], v2[part_a], tau2[part_a]
    third = part(part_a, q, v, tau)
    found = h.exchange(lambda: best_effort.publish(third), third.header.stamp,
                       topics=list(OUTPUTS))
    assert_matches_core(h, model, found, q, v, tau)


# -- 4: services -------------------------------------------------------------------------------
def expected_response(service, model, x, resp, names):
    """Check ``resp`` against the core; ``x``: the full model-order q, v, a / tau."""
    nb = model.nv_base
    jn = list(model.joint_names)
    idx = np.concatenate([np.arange(nb), nb + np.array([jn.index(n) for n in names])])
    dofs = list(BASE_DOF_NAMES[:nb]) + list(names)
    q = x["q"]
    if service in ("inverse_dynamics", "forward_dynamics"):
        if service == "inverse_dynamics":
            y, got, got_base = rbd_ros.rnea(model, q, x["v"], x["a"]), resp.tau, resp.base_tau
        else:
            y, got, got_base = rbd_ros.aba(model, q, x["v"], x["tau"]), resp.qdd, resp.base_qdd
        np.testing.assert_allclose(got, y[idx[nb:]], **TOL)
        np.testing.assert_allclose(got_base, y[:nb], **TOL)
        assert len(got_base) == nb
        return
    if service == "inverse_inertia":
        m = resp.minv
        assert list(m.names) == dofs and (m.rows, m.cols) == (len(idx), len(idx))
        np.testing.assert_allclose(np.reshape(m.data, (m.rows, m.cols)),
                                   rbd_ros.minv(model, q)[np.ix_(idx, idx)], **TOL)
        return
    if service == "inverse_dynamics_derivatives":
        d_dq, d_dv, _ = rbd_ros.rnea_derivatives(model, q, x["v"], x["a"])
    else:
        d_dq, d_dv, _ = rbd_ros.aba_derivatives(model, q, x["v"], x["tau"])
    d, n = resp.derivatives, len(idx)
    assert list(d.names) == dofs and d.size == n
    np.testing.assert_allclose(np.reshape(d.d_dq, (n, n)), d_dq[np.ix_(idx, idx)], **TOL)
    np.testing.assert_allclose(np.reshape(d.d_dv, (n, n)), d_dv[np.ix_(idx, idx)], **TOL)


@pytest.mark.parametrize("robot", ["arm7", "quadruped"])
def test_services(harness, robot):
    path, floating = (ARM7, False) if robot == "arm7" else (QUADRUPED, True)
    h = harness(dict(robot_description=xml(path), floating_base=floating))
    model = core_model(path, floating_base=floating)
    jn = list(model.joint_names)
    nj = len(jn)
    rng = np.random.default_rng(11)
    names, perm = shuffled(jn, 11)
    base_q, base_v = random_base(11)
    joint = {f: rng.uniform(-1, 1, nj) for f in ("q", "v", "a", "tau")}  # model order
    base = {"q": base_q, "v": base_v, "a": rng.uniform(-1, 1, 6), "tau": rng.uniform(-1, 1, 6)}
    full = {f: np.concatenate([base[f], joint[f]]) if floating else joint[f] for f in joint}
    in_request_order = {f: joint[f][perm] for f in joint}
    base_arg = base if floating else None

    for service in SERVICES:
        resp = h.call(service, service_request(service, names, in_request_order, base_arg))
        assert resp.success, f"{service}: {resp.message}"
        expected_response(service, model, full, resp, names)

    def refused(service, names, values, base, *words):
        resp = h.call(service, service_request(service, names, values, base))
        assert not resp.success, f"{service} accepted a bad request ({words})"
        for word in words:
            assert word in resp.message, f"{service}: {resp.message!r} lacks {word!r}"

    for service, fields in FIELDS.items():
        bad_names = list(names)
        bad_names[2] = "no_such_joint"
        refused(service, bad_names, in_request_order, base_arg, "no_such_joint")
        dup = list(names)
        dup[3] = dup[1]
        refused(service, dup, in_request_order, base_arg, "duplicate")
        refused(service, names[:-1], {f: x[:-1] for f, x in in_request_order.items()},
                base_arg, "missing", names[-1])
        for field in fields:
            short = dict(in_request_order, **{field: in_request_order[field][:-1]})
            refused(service, names, short, base_arg, field, str(nj - 1))
            long = dict(in_request_order, **{field: np.append(in_request_order[field], 0.0)})
            refused(service, names, long, base_arg, field, str(nj + 1))
            nan = dict(in_request_order, **{field: in_request_order[field].copy()})
            nan[field][1] = np.nan
            refused(service, names, nan, base_arg, field, "NaN")
        if floating:
            refused(service, names, in_request_order,
                    dict(base, q=np.array([])), "base_q", "7")
            for field in fields[1:]:
                refused(service, names, in_request_order,
                        dict(base, **{field: base[field][:5]}), "base_" + field, "6")
        else:
            refused(service, names, in_request_order,
                    {f: np.zeros(7 if f == "q" else 6) for f in fields}, "base_q", "0")
    # the node still answers after all that
    resp = h.call("inverse_dynamics",
                  service_request("inverse_dynamics", names, in_request_order, base_arg))
    assert resp.success
    expected_response("inverse_dynamics", model, full, resp, names)


# -- 5: bad inputs on the topics ---------------------------------------------------------------
def test_bad_joint_states_are_rejected(harness):
    h = harness(dict(ALL_OUTPUTS, robot_description=xml(ARM7)))
    model = core_model(ARM7)
    topics = list(OUTPUTS)
    q, v, tau = good_exchange(h, model, 20, topics)
    jn = list(model.joint_names)

    nan_q = q.copy()
    nan_q[2] = np.nan
    inf_q = q.copy()
    inf_q[4] = np.inf
    dup = jn[:-1] + [jn[0]]
    bad = {
        "NaN position": joint_state(jn, nan_q, v, tau),
        "inf position": joint_state(jn, inf_q, v, tau),
        "short position": joint_state(jn, q[:-1], v, tau),
        "long velocity": joint_state(jn, q, np.append(v, 1.0), tau),
        "short effort": joint_state(jn, q, v, tau[:3]),
        "no position": joint_state(jn, (), v, tau),
        "duplicate names": joint_state(dup, q, v, tau),
        "names but fewer values": joint_state(jn + ["extra"], q, v, tau),
    }
    for seed, (label, msg) in enumerate(bad.items(), start=21):
        h.send_joint_states(msg)
        good_exchange(h, model, seed, topics)      # the node keeps running, correctly
        assert h.no_output(msg.header.stamp), f"{label}: an output was published"
    assert h.node.stats()["bad_messages"] >= len(bad)

    # unknown names are ignored; the known joints of the message are used
    q, v, tau = random_state(model, 40)
    msg = joint_state(jn[:3] + ["not_a_joint"] + jn[3:], np.insert(q, 3, 1.0),
                      np.insert(v, 3, 1.0), np.insert(tau, 3, 1.0))
    found = h.exchange(lambda: h.joint_states.publish(msg), msg.header.stamp, topics=topics)
    assert_matches_core(h, model, found, q, v, tau)


def test_nan_velocity_skips_the_tick(harness):
    h = harness(dict(robot_description=xml(ARM7)))          # unknown_velocity: skip
    model = core_model(ARM7)
    q, v, tau = good_exchange(h, model, 50)
    v[3] = np.nan
    msg = message(model, q, v, tau, seed=51)
    h.send_joint_states(msg)
    no_velocity = message(model, q, None, tau, seed=52)      # no velocity array at all
    h.send_joint_states(no_velocity)
    good_exchange(h, model, 53)
    assert h.no_output(msg.header.stamp) and h.no_output(no_velocity.header.stamp)


def test_skip_warnings_are_throttled(harness):
    """
    A tick skipped for every message of a stream logs its reason once per 2 s.

    Not once per message.
    """
    h = harness(dict(robot_description=xml(ARM7)))          # unknown_velocity: skip
    model = core_model(ARM7)
    good_exchange(h, model, 55)
    q, v, tau = random_state(model, 56)
    before = h.node.stats()["skipped"]
    t0 = time.monotonic()
    msg = message(model, q, None, tau, seed=56)            # no velocities: every tick skips

    def thirty_skipped():
        h.joint_states.publish(msg)
        return h.node.stats()["skipped"] - before >= 30
    wait_for(thirty_skipped, what="30 skipped ticks")
    h.wait_log("joint velocities unknown")
    lines = [m for m in h.messages("rosout") if "joint velocities unknown" in m.msg]
    assert len(lines) <= 1 + int((time.monotonic() - t0) / 2.0), [m.msg for m in lines]


def test_nan_velocity_as_zero(harness):
    h = harness(dict(robot_description=xml(ARM7), unknown_velocity="zero"))
    model = core_model(ARM7)
    good_exchange(h, model, 60)
    q, v, tau = random_state(model, 61)
    v[[1, 5]] = np.nan
    msg = message(model, q, v, tau, seed=61)
    found = h.exchange(lambda: h.joint_states.publish(msg), msg.header.stamp,
                       topics=["torques", "accelerations"])
    assert_matches_core(h, model, found, q, np.nan_to_num(v), tau)
    msg = message(model, q, None, tau, seed=62)              # no velocity array: v = 0
    found = h.exchange(lambda: h.joint_states.publish(msg), msg.header.stamp,
                       topics=["torques", "accelerations"])
    assert_matches_core(h, model, found, q, np.zeros_like(q), tau)
    good_exchange(h, model, 63)


def test_nan_effort_publishes_torques_only(harness):
    h = harness(dict(ALL_OUTPUTS, robot_description=xml(ARM7)))
    model = core_model(ARM7)
    good_exchange(h, model, 70, list(OUTPUTS))
    q, v, tau = random_state(model, 71)
    tau[0] = np.nan
    msg = message(model, q, v, tau, seed=71)
    # torques, M^-1 and the RNEA derivatives need no effort
    found = h.exchange(lambda: h.joint_states.publish(msg), msg.header.stamp,
                       topics=["torques", "inverse_inertia", "rnea_derivatives"])
    assert_matches_core(h, model, found, q, v, tau)
    no_effort = message(model, q, v, None, seed=72)
    found = h.exchange(lambda: h.joint_states.publish(no_effort), no_effort.header.stamp,
                       topics=["torques"])
    assert_matches_core(h, model, found, q, v, tau)
    good_exchange(h, model, 73, list(OUTPUTS))
    for m in (msg, no_effort):
        for topic in ("accelerations", "aba_derivatives"):
            assert h.find(topic, m.header.stamp) is None, f"{topic} without efforts"


# -- 6: robot_description replaced at run time -------------------------------------------------
def test_description_swap(harness):
    h = harness({})
    arm = core_model(ARM7)
    branched = core_model(BRANCHED)
    h.description.publish(String(data=xml(ARM7)))
    good_exchange(h, arm, 80)

    rejected = h.messages("rosout")
    for k, bad in enumerate((xml(MALFORMED), xml(NEGATIVE_MASS), "")):
        h.description.publish(String(data=bad))
        if bad:
            wait_for(lambda: sum("rejected robot description" in m.msg
                                 for m in h.messages("rosout")[len(rejected):]) >= k + 1,
                     what="the node to reject the bad description")
        good_exchange(h, arm, 81 + k)           # the previous model runs on

    h.description.publish(String(data=xml(BRANCHED)))
    q, v, tau = random_state(branched, 85)
    bnames = list(branched.joint_names)
    msg = message(branched, q, v, tau, seed=85)
    found = h.exchange(lambda: h.joint_states.publish(msg), msg.header.stamp,
                       topics=["torques", "accelerations"],
                       accept=lambda m: list(getattr(m, "name", None) or m.names) == bnames)
    assert_matches_core(h, branched, found, q, v, tau)
    good_exchange(h, branched, 86)
    assert h.node.current_robot().model.name == branched.name


# -- 7: diagnostics ----------------------------------------------------------------------------
def test_diagnostics(harness):
    h = harness(dict(robot_description=xml(ARM7), diagnostics_period=0.1))
    model = core_model(ARM7)
    keys = ("tick latency p50 [us]", "tick latency p99 [us]", "tick latency max [us]")

    def ours():
        for arr in h.messages("diagnostics"):
            for status in arr.status:
                values = {kv.key: kv.value for kv in status.values}
                if status.hardware_id == model.name and all(k in values for k in keys):
                    return status, values
        return None
    seed = 90
    while not ours():                            # ticks inside one diagnostics window
        good_exchange(h, model, seed)
        seed += 1
        assert seed < 200, "no /diagnostics with latencies"
    status, values = ours()
    assert status.name.endswith("rbd_dynamics: dynamics")
    assert status.level == DiagnosticStatus.OK and status.message.startswith("computing")
    assert values["model"] == model.name and values["nv"] == str(model.nv)
    assert int(values["published"]) >= 1
    for k in keys:
        assert float(values[k]) > 0


# -- 8: commanded accelerations -----------------------------------------------------------------
def test_commanded_acceleration(harness):
    h = harness(dict(robot_description=xml(ARM7), acceleration_topic="commanded_accelerations"))
    model = core_model(ARM7)
    q, v, tau = random_state(model, 100)
    waiting = message(model, q, v, tau, seed=100)
    h.send_joint_states(waiting)                # no commanded acceleration yet: no output
    dofs = list(model.joint_names)
    for seed in (101, 102):
        a = np.random.default_rng(seed).uniform(-2, 2, model.nv)
        names, perm = shuffled(dofs, seed)
        h.accel.publish(joint_vector(names, a[perm]))
        wait_for(lambda: h.node.current_robot().commanded
                 and np.array_equal(h.node.current_robot().a, a), what="the commanded acceleration")
        msg = message(model, q, v, tau, seed=seed)
        found = h.exchange(lambda: h.joint_states.publish(msg), msg.header.stamp,
                           topics=["torques", "accelerations"])
        assert_matches_core(h, model, found, q, v, tau, a=a)
    assert h.no_output(waiting.header.stamp)

    # a commanded acceleration that does not name every dof is refused: no output then
    h.accel.publish(joint_vector(dofs[:-1], np.zeros(len(dofs) - 1)))
    wait_for(lambda: not h.node.current_robot().commanded, what="the bad command to be refused")
    refused = message(model, q, v, tau, seed=103)
    h.send_joint_states(refused)
    a = np.zeros(model.nv)
    h.accel.publish(joint_vector(dofs, a))
    wait_for(lambda: h.node.current_robot().commanded and not h.node.current_robot().a.any(),
             what="a = 0 to be commanded")
    msg = message(model, q, v, tau, seed=104)
    found = h.exchange(lambda: h.joint_states.publish(msg), msg.header.stamp)
    assert_matches_core(h, model, found, q, v, tau, a=a)
    assert h.no_output(refused.header.stamp)


def test_zero_acceleration_without_acceleration_topic(harness):
    h = harness(dict(robot_description=xml(ARM7)))
    model = core_model(ARM7)
    q, v, tau = random_state(model, 110)
    msg = message(model, q, v, tau, seed=110)
    found = h.exchange(lambda: h.joint_states.publish(msg), msg.header.stamp)
    np.testing.assert_allclose(found["torques"].effort,
                               rbd_ros.rnea(model, q, v, np.zeros(model.nv)), **TOL)


# -- timing parameters -------------------------------------------------------------------------
def test_stale_joints_publish_nothing(harness):
    h = harness(dict(robot_description=xml(ARM7), max_joint_age=0.5))
    model = core_model(ARM7)
    jn = list(model.joint_names)
    q, v, tau = random_state(model, 120)
    first = joint_state(jn[:3], q[:3], v[:3], tau[:3])
    h.send_joint_states(first)
    # The first part's receipt must be older than max_joint_age when the second arrives. A
    # copy send_joint_states sent again may be taken in late and renew it (on a loaded
    # machine the second part was then computed, not skipped), and a copy may be lost (best
    # effort): so wait until the receipt time has stayed put past the age, whatever came.
    received = h.node.current_robot().cache.received[:3]        # model order: jn[:3]

    def stale_and_settled():
        last = received.max()
        wait_for(lambda: time.monotonic() > last + 0.6, what="the first part to go stale")
        return received.max() == last
    wait_for(stale_and_settled, what="the first part's receipt to settle, then go stale")
    second = joint_state(jn[3:], q[3:], v[3:], tau[3:])
    h.send_joint_states(second)                 # completes the joints, but 3 are stale
    good_exchange(h, model, 121)               # a full, fresh message is computed
    assert h.no_output(first.header.stamp) and h.no_output(second.header.stamp)
    assert any("older than" in r for r in h.node.skips().reasons)


def test_rate_hz(harness):
    h = harness(dict(robot_description=xml(ARM7), rate_hz=50.0))
    model = core_model(ARM7)
    for seed in (130, 131):
        good_exchange(h, model, seed)
    stamps = [(m.header.stamp.sec, m.header.stamp.nanosec) for m in h.messages("torques")]
    assert len(stamps) == len(set(stamps)), "the timer recomputed an unchanged state"


def test_rate_hz_limits_the_outputs_to_the_rate(harness):
    """joint_states at ~200 Hz, rate_hz 20: about 20 outputs a second, the latest state's."""
    rate, window = 20.0, 2.0
    h = harness(dict(robot_description=xml(ARM7), rate_hz=rate))
    model = core_model(ARM7)
    good_exchange(h, model, 132)
    q, v, tau = random_state(model, 133)
    messages = [message(model, q + 1e-3 * k, v, tau, seed=k) for k in range(int(window * 200))]
    received, before = h.node.stats()["joint_states"], len(h.messages("torques"))
    start = time.monotonic()
    for k, msg in enumerate(messages):            # ~200 Hz, whatever the load lets through
        h.joint_states.publish(msg)
        time.sleep(max(0.0, start + (k + 1) / 200.0 - time.monotonic()))
    last = messages[-1]
    # the timer computes the latest state at its next tick: that output ends the window
    found = wait_for(lambda: h.find("torques", last.header.stamp), what="the last state's output")
    elapsed = time.monotonic() - start
    assert_matches_core(h, model, {"torques": found}, q + 1e-3 * (len(messages) - 1), v, tau)
    outputs = h.messages("torques")[before:]
    received = h.node.stats()["joint_states"] - received
    published = {(m.header.stamp.sec, m.header.stamp.nanosec) for m in messages}
    stamps = [(m.header.stamp.sec, m.header.stamp.nanosec) for m in outputs]
    assert set(stamps) <= published and len(stamps) == len(set(stamps)), stamps
    # a timer of period 1/rate ticks at most elapsed·rate + 1 times; without the rate each
    # message taken in would have been computed
    assert len(outputs) <= elapsed * rate + 2, (len(outputs), elapsed, received)
    assert received >= 3 * len(outputs), (received, len(outputs))
    # and it keeps ticking while messages come (a loaded machine delays ticks: a fifth)
    assert len(outputs) >= 0.2 * window * rate, (len(outputs), elapsed, received)


# -- messages without the model's joints -----------------------------------------------------
def test_message_without_model_joints_publishes_nothing(harness):
    """
    A message without the model's joints publishes nothing.

    A gripper driver sharing the topic, or an empty message, must not re-emit the previous
    state stamped as new.
    """
    h = harness(dict(robot_description=xml(ARM7)))
    model = core_model(ARM7)
    good_exchange(h, model, 140)
    gripper = joint_state(["gripper_finger"], [0.01], [0.0], [0.0])
    h.send_joint_states(gripper)
    empty = joint_state([], [], [], [])
    h.send_joint_states(empty)
    good_exchange(h, model, 141)
    assert h.no_output(gripper.header.stamp), "output for a message with no model joint"
    assert h.no_output(empty.header.stamp), "output for an empty message"


# -- the console script: a process of its own, each executor ----------------------------------
@pytest.mark.parametrize("executor,without_interfaces,rate_hz",
                         [("events", False, 0.0), ("single_threaded", False, 0.0),
                          ("events", False, 200.0), ("events", True, 0.0)])
def test_node_process(tmp_path, executor, without_interfaces, rate_hz):
    """
    Run dynamics_node as users run it.

    The URDF on the robot_description topic (loaded on the node's own thread), topics and a
    service through each executor, and Ctrl-C (SIGINT) or SIGTERM is a clean stop. With
    rate_hz the executor's timer drives the ticks. Without rbd_ros_interfaces: ~/torques
    still, no services, and it says so.
    """
    import signal

    from rclpy.node import NodeNameNonExistentError
    from node_helpers import LATCHED, RELIABLE, probing, same_stamp, stop_process
    model = core_model(ARM7)
    ns, proc, log = _run_node_process(tmp_path, {"executor": executor, "rate_hz": rate_hz,
                                                 "diagnostics_period": 0.0},
                                      without_interfaces)
    with probing(ns, proc) as probe:
        tester = probe.node
        got = probe.subscribe(JointState, f"{ns}/rbd_dynamics/torques")
        pub = tester.create_publisher(JointState, f"{ns}/joint_states", RELIABLE)
        tester.create_publisher(String, f"{ns}/robot_description", LATCHED).publish(
            String(data=xml(ARM7)))
        client = tester.create_client(SERVICES["inverse_dynamics"],
                                      f"{ns}/rbd_dynamics/inverse_dynamics")
        q, v, tau = random_state(model, 150)
        msg = message(model, q, v, tau, seed=150)

        def answered():
            assert proc.poll() is None, open(log.name).read()
            pub.publish(msg)
            time.sleep(0.05)
            return any(same_stamp(m.header.stamp, msg.header.stamp) for m in got)
        wait_for(answered, timeout=60.0, what="~/torques from the node process")
        out = next(m for m in got if same_stamp(m.header.stamp, msg.header.stamp))
        assert_matches_core(None, model, {"torques": out}, q, v, tau)

        if without_interfaces:
            wait_for(lambda: "rbd_ros_interfaces is not installed: services are off"
                     in open(log.name).read(), what="the services-off warning")

            def services():           # the node's parameter services show it is discovered
                try:
                    names = [n for n, _ in
                             tester.get_service_names_and_types_by_node("rbd_dynamics", ns)]
                except NodeNameNonExistentError:     # not discovered yet
                    return None
                return names if any(n.endswith("/get_parameters") for n in names) else None
            assert not any(n.endswith("/inverse_dynamics") for n in wait_for(services))
        else:
            assert client.wait_for_service(timeout_sec=30.0)
            call_inverse_dynamics(client, model, q, v)

        # both a clean stop
        assert stop_process(proc, signal.SIGTERM if rate_hz else signal.SIGINT) == 0, \
            open(log.name).read()
        assert "Traceback" not in open(log.name).read()


def test_node_process_refuses_a_bad_executor(tmp_path):
    ns, proc, log = _run_node_process(tmp_path, {"robot_description": xml(ARM7),
                                                 "executor": "threads"})
    assert proc.wait(timeout=60) == 1
    text = open(log.name).read()
    assert "executor must be one of" in text and "threads" in text, text
