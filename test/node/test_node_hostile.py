"""
The dynamics node against hostile and careless input (issue 12): real rclpy, over loopback.

Anyone on the DDS domain can publish to the node and call its services. Whatever they send,
the node runs on and answers correctly afterwards; it never publishes or answers a NaN or
inf; it never opens a file named on robot_description; what it logs stays short; Ctrl-C
during start-up is a clean stop. In-process nodes (``node_helpers.Harness``) unless the
case is about the process itself (``test_node_process_hostile.py``).
"""
import math
import os
import time

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from rclpy.serialization import serialize_message  # noqa: E402
from std_msgs.msg import String  # noqa: E402

import rbd_ros  # noqa: E402
from rbd_ros_interfaces import srv as rbd_srv  # noqa: E402
from node_helpers import (OUTPUTS, SERVICES, call_service, joint_state, odometry,  # noqa: E402
                          wait_for)
from node_cases import (ALL_OUTPUTS, ARM7, BRANCHED, GARBAGE, QUADRUPED,  # noqa: E402
                        answers, assert_matches_core, core_model, diagnostics_values,
                        good_exchange, message, random_base, random_state, service_request,
                        shuffled, xml)
from oracle import URDF_DIR  # noqa: E402

MAX_LOG_LINE = 1000          # characters: any line the node logs (it quotes excerpts only)


def node_lines(h, text=""):
    """Return the /rosout lines of the dynamics node (containing ``text``)."""
    return [m.msg for m in h.messages("rosout")
            if m.name.endswith("rbd_dynamics") and text in m.msg]


def all_published_finite(h):
    """Tell whether every number of every output message received so far is finite."""
    fields = ("effort", "data", "d_dq", "d_dv")
    return all(math.isfinite(x) for topic in OUTPUTS for msg in h.messages(topic)
               for f in fields if hasattr(msg, f) for x in getattr(msg, f))


# -- 1: garbage bytes on joint_states and odometry ------------------------------------------
def test_garbage_bytes_on_joint_states_and_odometry(harness):
    h = harness(dict(ALL_OUTPUTS, robot_description=xml(QUADRUPED), floating_base=True,
                     diagnostics_period=0.2))
    model = core_model(QUADRUPED, floating_base=True)
    base = random_base(1)
    h.odom.publish(odometry(*base))
    wait_for(lambda: np.array_equal(h.node.current_robot().q[:7], base[0]), what="the odometry")
    good_exchange_base(h, model, 2, base)
    t0 = time.monotonic()
    for raw in GARBAGE:
        h.send_joint_states(raw)                  # each one taken in, the node still there
    odom_before = h.node.stats()["odometry"]
    for raw in GARBAGE:
        h.odom.publish(raw)
    wait_for(lambda: h.node.stats()["odometry"] >= odom_before + len(GARBAGE),
             what="the garbage odometry to reach the node")
    assert h.node.stats()["bad_messages"] >= 2 * len(GARBAGE) - 1
    # the base state is the last good odometry's; the node answers and computes correctly
    np.testing.assert_array_equal(h.node.current_robot().q[:7], base[0])
    answers(h, model, 3, base)
    good_exchange_base(h, model, 4, base)
    wait_for(lambda: int(diagnostics_values(h).get("skipped: malformed", 0)) >= len(GARBAGE)
             and int(diagnostics_values(h).get("skipped: malformed odometry", 0)) >= 1,
             what="/diagnostics to count the malformed messages")
    assert h.node.stats()["callback_errors"] == 0
    # a stream of different malformed messages logs a line per 2 s, not one per message
    lines = node_lines(h, "malformed joint_states")
    assert 1 <= len(lines) <= 1 + (time.monotonic() - t0) / 2.0, lines


def good_exchange_base(h, model, seed, base):
    q, v, tau = random_state(model, seed)
    msg = message(model, q, v, tau, seed=seed)
    found = h.exchange(lambda: h.joint_states.publish(msg), msg.header.stamp,
                       topics=list(OUTPUTS))
    assert_matches_core(h, model, found, q, v, tau, base=base)


def test_unexpected_exceptions_in_callbacks_are_counted(harness, monkeypatch):
    """
    An exception no check foresaw, in a topic, service or timer callback, ends nothing.

    Injected into the node's own code (the joint cache, the core, the diagnostics window):
    each is counted in /diagnostics and logged, and the node answers correctly afterwards.
    """
    h = harness(dict(robot_description=xml(ARM7), diagnostics_period=0.1, rate_hz=100.0))
    model = core_model(ARM7)
    good_exchange(h, model, 7)

    def boom(*args, **kwargs):
        raise RuntimeError("injected failure")
    cache = h.node.current_robot().cache
    monkeypatch.setattr(cache, "merge", boom)
    h.send_joint_states(message(model, *random_state(model, 8), seed=8))
    # taken in is not yet merged: the merge may run after the callback was counted, and an
    # undo before it would let the message through (CI at 8af027b, once)
    wait_for(lambda: h.node.stats()["callback_errors"] >= 1, what="the injected failure")
    monkeypatch.undo()
    good_exchange(h, model, 9)                  # the node runs on
    assert h.node.stats()["callback_errors"] == 1

    monkeypatch.setattr(rbd_ros, "rnea", boom)
    names = list(model.joint_names)
    zeros = {f: np.zeros(len(names)) for f in ("q", "v", "a")}
    resp = h.call("inverse_dynamics", service_request("inverse_dynamics", names, zeros))
    monkeypatch.undo()
    assert not resp.success and "internal error" in resp.message, resp.message
    answers(h, model, 10)

    window = h.node._window
    monkeypatch.setattr(window, "rates", boom)
    errors = h.node.stats()["callback_errors"]
    wait_for(lambda: h.node.stats()["callback_errors"] > errors, what="the diagnostics error")
    monkeypatch.undo()
    wait_for(lambda: int(diagnostics_values(h).get("callback_errors", 0)) >= 3,
             what="/diagnostics to count the callback errors")
    assert h.node.skips().counts["callback error"] >= 3
    h.wait_log("unexpected exception in the joint_states callback: RuntimeError")
    good_exchange(h, model, 11)


@pytest.mark.parametrize("planner_process", [False, True])
def test_refused_requests_are_counted(harness, planner_process):
    """
    Every refused request is counted in /diagnostics (``requests_refused``); answers are not.

    In the node's own services and in the trajectory services, served by the planner child
    process (which reports its refusals to the node) or by a thread of the node.
    """
    h = harness(dict(robot_description=xml(ARM7), diagnostics_period=0.1,
                     planner_process=planner_process))
    model = core_model(ARM7)
    names = list(model.joint_names)
    good = {f: np.zeros(len(names)) for f in ("q", "v", "a")}
    refused = h.node.stats()["requests_refused"]
    assert h.call("inverse_dynamics", service_request("inverse_dynamics", names, good)).success
    assert h.node.stats()["requests_refused"] == refused
    bad_names = service_request("inverse_dynamics", ["no_such_joint"] + names[1:], good)
    nan = service_request("inverse_dynamics", names, dict(good, q=np.full(len(names), np.nan)))
    for req in (bad_names, nan):
        resp = h.call("inverse_dynamics", req)
        assert not resp.success, resp.message
    wait_for(lambda: h.node.stats()["requests_refused"] >= refused + 2,
             what="the node's refusals to be counted")
    refused = h.node.stats()["requests_refused"]
    req = rbd_srv.TrajectoryTorques.Request()
    req.trajectory.joint_names = ["no_such_joint"]
    resp = h.call("trajectory_torques", req, timeout=60.0)
    assert not resp.success and "no_such_joint" in resp.message, resp.message
    wait_for(lambda: h.node.stats()["requests_refused"] >= refused + 1,
             what="the planner's refusal to be counted")
    client = h.tester.create_client(rbd_srv.EstimatePayload,
                                    f"{h.namespace}/rbd_dynamics/estimate_payload")
    resp = call_service(client, rbd_srv.EstimatePayload.Request(link="no_such_link", window=1.0),
                        "the estimate_payload response")
    assert not resp.success and "no link 'no_such_link'" in resp.message, resp.message
    assert h.node.stats()["requests_refused"] >= refused + 2
    wait_for(lambda: int(diagnostics_values(h).get("requests_refused", 0)) >= refused + 2,
             what="/diagnostics to show the refusals")


def test_bad_parameter_requests_end_nothing(harness):
    """The parameter services (rclpy's own) get the boundary: an unknown type ended the node."""
    from rcl_interfaces.msg import Parameter as ParameterMsg, ParameterValue
    from rcl_interfaces.srv import SetParameters, SetParametersAtomically
    h = harness(dict(robot_description=xml(ARM7)))
    model = core_model(ARM7)
    good_exchange(h, model, 12)
    base = f"{h.namespace}/rbd_dynamics/"
    for srv_type, name in ((SetParameters, "set_parameters"),
                           (SetParametersAtomically, "set_parameters_atomically")):
        client = h.tester.create_client(srv_type, base + name)
        assert client.wait_for_service(timeout_sec=10.0)
        request = srv_type.Request(parameters=[ParameterMsg(
            name="rate_hz", value=ParameterValue(type=99))])
        future = client.call_async(request)
        wait_for(future.done, what=f"the {name} response")
    answers(h, model, 13)
    good_exchange(h, model, 14)
    assert h.node.stats()["callback_errors"] == 2
    assert h.node.get_parameter("rate_hz").value == 0.0


# -- 2: huge finite inputs: nothing non-finite published or answered --------------------------
def test_huge_finite_inputs_publish_nothing_non_finite(harness):
    h = harness(dict(ALL_OUTPUTS, robot_description=xml(ARM7), diagnostics_period=0.2))
    model = core_model(ARM7)
    good_exchange(h, model, 10, list(OUTPUTS))
    q, v, tau = random_state(model, 11)
    huge = {"velocities 1e154": message(model, q, np.full_like(v, 1e154), tau, seed=11),
            "efforts 1e308": message(model, q, v, np.full_like(tau, 1e308), seed=12),
            "velocities -1e200": message(model, q, np.full_like(v, -1e200), tau, seed=13)}
    for label, msg in huge.items():
        h.send_joint_states(msg)
        good_exchange(h, model, 14, list(OUTPUTS))      # the node runs on, correctly
        assert h.no_output(msg.header.stamp), f"{label}: an output was published"
    assert all_published_finite(h)
    assert h.node.skips().counts.get("refused", 0) >= len(huge)
    wait_for(lambda: int(diagnostics_values(h).get("skipped: refused", 0)) >= len(huge),
             what="/diagnostics to count the refused ticks")

    names, perm = shuffled(list(model.joint_names), 15)
    nj = len(names)
    values = {"q": q[perm], "v": np.full(nj, 1e154), "a": np.zeros(nj), "tau": np.zeros(nj)}
    for service in SERVICES:
        resp = h.call(service, service_request(service, names, values))
        if service == "inverse_inertia":        # q only: finite, a real answer
            assert resp.success, resp.message
            continue
        assert not resp.success, f"{service} answered success with values of 1e154"
        assert resp.message and len(resp.message) < 500, resp.message
    resp = h.call("forward_dynamics", service_request(
        "forward_dynamics", names, dict(values, v=np.zeros(nj), tau=np.full(nj, 1e308))))
    assert not resp.success and resp.message
    answers(h, model, 16)


# -- 3: robot_description is XML only: a path is never opened ----------------------------------
def test_path_on_robot_description_is_not_opened(harness, tmp_path):
    """A path on the topic changes nothing; the log is the same whether the file exists."""
    arm = core_model(ARM7)
    existing = tmp_path / ("a" * 30 + "_robot.urdf")
    existing.write_text(xml(BRANCHED))                  # a valid URDF of another robot
    missing = tmp_path / ("b" * 30 + "_robot.urdf")     # same length, does not exist
    lines = []
    for path in (existing, missing):                    # a node each: its first rejection
        h = harness({})
        h.description.publish(String(data=xml(ARM7)))
        good_exchange(h, arm, 20)
        h.description.publish(String(data=str(path)))
        wait_for(lambda: node_lines(h, "rejected robot description")
                 or h.node.current_robot().model.name != arm.name,
                 what=f"the node to reject the path {path}")
        assert h.node.current_robot().model.name == arm.name, \
            "the node loaded the file it was named"
        good_exchange(h, arm, 21)                       # the model did not change
        assert h.node.stats()["descriptions_rejected"] == 1
        lines.append(node_lines(h, "rejected robot description")[-1])
    # the log says the same for an existing file and a missing one: it never looked
    assert "not URDF XML" in lines[0]
    assert lines[0] == lines[1]

    # a path as the robot_description parameter: refused at start-up, for either path alike
    errors = []
    for path in (existing, missing):
        with pytest.raises(ValueError) as exc:
            harness({"robot_description": str(path)})
        errors.append(str(exc.value))
    assert "not URDF XML" in errors[0] and errors[0] == errors[1]


# -- 3b: a planar base: rejected by name, the model kept ----------------------------------------
def test_a_planar_base_is_rejected_and_the_model_kept(harness):
    """The node reads a base's state from odometry as a free flyer: a planar root is refused."""
    h = harness({})
    arm = core_model(ARM7)
    h.description.publish(String(data=xml(ARM7)))
    good_exchange(h, arm, 22)
    h.description.publish(String(data=xml(os.path.join(URDF_DIR, "branched_planar.urdf"))))
    wait_for(lambda: node_lines(h, "rejected robot description"), what="the rejection")
    line = node_lines(h, "rejected robot description")[-1]
    assert "3-dof base" in line and "planar" in line, line
    assert h.node.stats()["descriptions_rejected"] == 1
    assert h.node.current_robot().model.name == arm.name
    good_exchange(h, arm, 23)                           # the model did not change


# -- 4: a 5 MB garbage description: one short log line, the node answers ----------------------
def test_huge_garbage_description_logs_one_short_line(harness):
    h = harness({})
    arm = core_model(ARM7)
    h.description.publish(String(data=xml(ARM7)))
    good_exchange(h, arm, 30)
    rng = np.random.default_rng(31)
    alphabet = np.frombuffer(b"abcdef/\n\x1b[31m", np.uint8)
    garbage = {"text": alphabet[rng.integers(0, len(alphabet), 5_000_000)].tobytes().decode(),
               "xml-like": "<robot name='x'>" + "<link " * 800_000}
    for k, (label, text) in enumerate(garbage.items()):
        before = len(node_lines(h, "rejected robot description"))
        h.description.publish(String(data=text))
        wait_for(lambda: len(node_lines(h, "rejected robot description")) > before,
                 timeout=60.0, what=f"the node to reject the {label} description")
        answers(h, arm, 32 + k)
        good_exchange(h, arm, 34 + k)
    lines = node_lines(h)
    assert max(len(line) for line in lines) < MAX_LOG_LINE, max(lines, key=len)[:200]
    assert not any("\x1b" in line or "\n" in line for line in lines)


# -- 5: input stamps -------------------------------------------------------------------------
def test_bad_stamps_are_replaced_by_the_node_clock(harness):
    from builtin_interfaces.msg import Time
    h = harness(dict(robot_description=xml(ARM7)))
    model = core_model(ARM7)
    good_exchange(h, model, 40)
    far = int(time.time()) + 10 * 365 * 86400
    stamps = {"zero": Time(sec=0, nanosec=0), "negative": Time(sec=-5, nanosec=0),
              "nanosec too large": Time(sec=1000, nanosec=2_000_000_000),
              "far future": Time(sec=far, nanosec=0)}
    for seed, (label, stamp) in enumerate(stamps.items(), start=41):
        q, v, tau = random_state(model, seed)
        want = rbd_ros.rnea(model, q, v, np.zeros(model.nv))
        msg = joint_state(model.joint_names, q, v, tau, stamp=stamp)
        t0 = time.time()

        def published():
            h.joint_states.publish(msg)
            time.sleep(0.05)
            return [m for m in h.messages("torques") if np.allclose(m.effort, want)]
        out = wait_for(published, what=f"~/torques for the {label} stamp")[-1]
        got = out.header.stamp.sec + out.header.stamp.nanosec * 1e-9
        assert t0 - 5.0 < got < time.time() + 1.0, (label, out.header.stamp)
    assert h.node.stats()["stamps_replaced"] >= len(stamps)
    # the first second of simulated time is a valid stamp: echoed
    q, v, tau = random_state(model, 50)
    sim = joint_state(model.joint_names, q, v, tau, stamp=Time(sec=0, nanosec=5000))
    h.exchange(lambda: h.joint_states.publish(sim), sim.header.stamp)


def test_serialized_garbage_is_what_the_rmw_refuses():
    """The garbage above is what reaches the fallback deserializer: the RMW refuses it."""
    from rbd_ros.node import conversions
    from rbd_ros.formats.cdr import JointStateDecoder
    dec = JointStateDecoder()
    for raw in GARBAGE:
        with pytest.raises(ValueError):
            conversions.decode_joint_state(dec, raw)
    # a valid message still decodes, with the same decoder
    msg = joint_state(["a", "b"], [1.0, 2.0])
    assert conversions.decode_joint_state(dec, serialize_message(msg))[0] == ("a", "b")


def test_a_follower_answer_that_overflows_is_refused():
    """A named follower's answer is its leader's times the multiplier: checked there."""
    from types import SimpleNamespace
    from rbd_ros.node import services
    robot = SimpleNamespace(model=SimpleNamespace(floating_base=False, nq_base=0, nv_base=0))
    order = services.RequestOrder(np.array([0, 1]), [(2, 1, 1e300)])     # follower of joint 1
    joints, base = services._split(robot, np.array([1.0, 2.0]), order)
    assert list(joints) == [1.0, 2.0, 2e300] and list(base) == []
    with pytest.raises(services.RequestError, match="mimic joint is not finite"):
        services._split(robot, np.array([1.0, 1e10]), order)


def test_tick_rule_vector_checks_match_numpy():
    """The tick's one-sum checks of q, v and τ (1-D) say what numpy says, edge cases included."""
    from rbd_ros.outputs import tick_rule as outputs
    rng = np.random.default_rng(60)
    cases = [np.array([]), rng.normal(size=7), np.full(5, 1e308), np.full(3, -1e308)]
    for bad in (np.nan, np.inf, -np.inf):
        for position in (0, 3, 6):
            x = rng.normal(size=7)
            x[position] = bad
            cases.append(x)
    for x in cases:
        finite = bool(np.isfinite(x).all())
        assert outputs.finite_vector(x) == finite
        assert bool(outputs.effort_known(x)) == finite
        state = outputs.TickState(x, x)
        assert bool(outputs._incomplete(state)) == bool(np.isnan(x).any())
        assert bool(outputs._velocity_unknown(state)) == (not finite)
    many = np.stack([c for c in cases if c.size == 7])      # (M, nj): the replay's path
    np.testing.assert_array_equal(outputs.effort_known(many), np.isfinite(many).all(axis=-1))
