"""
The node's contact awareness through real DDS, against a Pinocchio simulation of a contact.

joint_states (with the commanded efforts) of arm7 simulated by Pinocchio (``contact_sim``:
forward dynamics, a known force on link7 from ON to OFF) are published one by one; the node's
~/external_torques must follow τ_ext = J_link7ᵀ [F; p × F] (Pinocchio's) as the core's tests
require (2 % of its peak once settled, < 1e-6 N·m before the contact), ~/collision must turn
true on link7 within 20 ms of the contact and false after it, ~/contact_wrench must give the
applied force within 3 %, and ~/reset_observer must restart the observer (r = 0 exactly).
Hostile: bad gains, thresholds and contact frames are refused with their reason; a message
without efforts is skipped with its reason (the other outputs are published).
"""
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from std_srvs.srv import Trigger  # noqa: E402

from node_helpers import call_service, joint_state, new_stamp, wait_for  # noqa: E402
from node_cases import Listener, send_paced, set_payload  # noqa: E402
from oracle import Robot  # noqa: E402
from rbd_ros.contact import detection as contact  # noqa: E402
from contact_sim import OFF, ON, POINT, settled, simulated_contact  # noqa: E402


GAIN = 500.0             # 1/s: the core's contact-wrench gain (force within 3 %)
# N·m per dof: joint 7 feels 0.083 N·m of the force below (Pinocchio's τ_ext), so link7 is
# isolated once r has settled
THRESHOLDS = [0.5] * 6 + [0.05]
FORCE = (6.0, 0.0, 8.0)
RESET_AT = 600           # sample (t = 0.6 s, in the contact) before which the observer resets
T0 = 5000                # s: the stamps' origin (other tests' stamps are 1000 + k)


def stamp_of(k):
    """(sec, nanosec) of sample k (1 ms apart), and its time as the node reads it."""
    ns = k * 1_000_000
    sec, nanosec = T0 + ns // 10**9, ns % 10**9
    return sec, nanosec, sec + 1e-9 * nanosec


def send_samples(h, names, run, samples, listen):
    """
    Publish the samples one by one, each once the tester has the one before's outputs.

    The test checks every ~/external_torques and ~/contact_wrench: the node publishes one of
    each per tick, but to a reader that falls behind by more than its queue (the node keeps
    the last 10) some are lost, so the test keeps up (sent all at once, then waited for,
    they timed out in CI on a 2-core machine, twice).
    """
    for k in samples:
        sec, nanosec, _ = stamp_of(k)
        msg = joint_state(names, run.q[k], run.v[k], run.tau[k])
        msg.header.stamp.sec, msg.header.stamp.nanosec = int(sec), int(nanosec)
        send_paced(h, msg, listen, ("external_torques", "contact_wrench"))


def reset_client(h):
    return h.tester.create_client(Trigger, f"{h.namespace}/rbd_dynamics/reset_observer")


@pytest.mark.pinocchio
def test_observer_outputs_follow_the_simulated_contact(harness):
    robot, run, _ = simulated_contact("arm7", "link7", FORCE)
    m = robot.model
    names = list(m.joint_names)
    h = harness(dict(robot_description=robot.xml, publish_external_torques=True,
                     publish_collision=True, contact_frame="link7", observer_gain=[GAIN],
                     collision_thresholds=THRESHOLDS, publish_accelerations=False,
                     diagnostics_period=0.2))
    listen = Listener(h)
    n = len(run.t)
    send_samples(h, names, run, range(RESET_AT), listen)
    # in the contact: /diagnostics is WARN and names the isolated link

    def warned():
        return any(s.level == b"\x01" and "in collision" in s.message and "link7" in s.message
                   for d in h.messages("diagnostics") for s in d.status
                   if s.name.endswith("rbd_dynamics: dynamics"))
    wait_for(warned, what="a WARN in collision on /diagnostics")
    response = call_service(reset_client(h), Trigger.Request(), "the reset_observer response")
    assert response.success, response.message
    send_samples(h, names, run, range(RESET_AT, n), listen)
    t = np.array([stamp_of(k)[2] for k in range(n)])
    # every ~/external_torques and ~/contact_wrench came (send_samples waited for each)
    got = listen.by_time("external_torques")
    assert len(got) == n, "one ~/external_torques per joint_states message"
    r = np.array([got[x].effort for x in t])
    assert list(got[t[0]].name) == names
    # the oracle: Pinocchio's τ_ext, as the core's tests check it
    peak = np.abs(run.tau_ext).max()
    restarting = (run.t >= run.t[RESET_AT]) & (run.t < run.t[RESET_AT] + 5.0 / GAIN)
    err = np.abs(r - run.tau_ext)[settled(run.t) & ~restarting].max()
    assert err <= 0.02 * peak, f"max |r - τ_ext| = {err:.3g} > 2 % of {peak:.3g}"
    assert np.abs(r[run.t < ON]).max() < 1e-6
    # the reset: the sample after it restarts the observer (r = 0); it then tracks again
    assert np.all(r[RESET_AT] == 0.0) and np.abs(r[RESET_AT - 1]).max() > 0.1
    after = (run.t >= run.t[RESET_AT] + 5.0 / GAIN) & (run.t < OFF)
    assert np.abs(r - run.tau_ext)[after].max() <= 0.02 * peak
    # one observer, stepped as the core's array function over the same samples, its times
    # counted from the first stamp since the start or the reset
    for part in (slice(0, RESET_AT), slice(RESET_AT, n)):
        observer = contact.MomentumObserver(m, GAIN, max_gap=5.0)
        sec, nanosec = zip(*(stamp_of(k)[:2] for k in range(n)[part]))
        ref = observer.run(observer.seconds(sec, nanosec), run.q[part], run.v[part],
                           run.tau[part])[0]
        np.testing.assert_array_equal(r[part], ref)
    # ~/collision: on each change of state (in collision, isolated link) only: true within
    # 20 ms of the contact, on link7 once settled, false after it; the reset in the contact
    # drops it for the samples until r rises again
    changes = sorted(listen.by_time("collision").items())
    states = [msg.in_collision for _, msg in changes]
    collapsed = [x for k, x in enumerate(states) if k == 0 or x != states[k - 1]]
    assert collapsed == [True, False, True, False], states
    falls = [x for x, msg in changes if not msg.in_collision]
    assert 0 <= changes[0][0] - (T0 + ON) <= 0.020 and falls[0] == t[RESET_AT]
    assert T0 + OFF <= falls[1] <= T0 + OFF + 0.050
    for end in (t[RESET_AT], T0 + OFF):    # the state at the end of each contact: settled
        x, msg = max((x, msg) for x, msg in changes if x < end)
        assert msg.in_collision and msg.isolated_link == "link7", (x, msg)
        assert names[-1] in list(msg.joints) and msg.peak_ratio > 1.0
    clear = changes[-1][1]
    assert clear.isolated_link == "" and not list(clear.joints) and clear.peak_ratio <= 1.0
    # ~/contact_wrench: the applied force within 3 %, in link7's frame
    wrenches = listen.by_time("contact_wrench")
    assert len(wrenches) == n
    inside = np.flatnonzero((run.t >= ON + 5.0 / GAIN) & (run.t < OFF) & ~restarting)
    worst = 0.0
    for k in inside:
        msg = wrenches[t[k]]
        assert msg.header.frame_id == "link7"
        f = msg.wrench.force
        worst = max(worst, np.linalg.norm(np.array([f.x, f.y, f.z]) - FORCE)
                    / np.linalg.norm(FORCE))
    assert worst <= 0.03, f"contact force off by {100 * worst:.1f} %"
    torque = wrenches[t[inside[len(inside) // 2]]].wrench.torque
    np.testing.assert_allclose([torque.x, torque.y, torque.z], np.cross(POINT, FORCE),
                               atol=0.03 * np.linalg.norm(np.cross(POINT, FORCE)) + 0.01)


def test_observer_parameters_are_checked(harness):
    robot = Robot("arm7")
    m = robot.model
    h = harness(dict(robot_description=robot.xml, publish_external_torques=True))
    monitor = wait_for(lambda: getattr(h.node.current_robot(), "contact", None),
                       what="the observer")
    bad = {"observer_gain": [(-1.0, "> 0"), ([1.0, 2.0], "per dof (7)"),
                             ([float("nan")], "finite"), ([], "finite")],
           "collision_thresholds": [(0.0, "> 0"), ([1.0] * 8, "per dof (7)"),
                                    # r / 5e-324 was inf: ~/collision's peak_ratio
                                    (5e-324, "at least 1e-06 N·m"),
                                    ([1.0] * 6 + [1e-7], "at least 1e-06 N·m")],
           "contact_frame": [("no_such_link", "not a link"), ("link3", "fewer than 6 dof")]}
    for name, cases in bad.items():
        for value, words in cases:
            result, = h.set_parameters(**{name: value})
            assert not result.successful and words in result.reason, (name, value, result)
    assert h.node.current_robot().contact is monitor            # nothing applied
    np.testing.assert_array_equal(monitor.observer.gain, np.full(m.nv, 50.0))
    # good values: a double or one per dof, applied live without a restart
    result, = h.set_parameters(observer_gain=200.0)
    assert result.successful, result.reason
    gains = [float(10 + k) for k in range(m.nv)]
    result, = h.set_parameters(collision_thresholds=gains)
    assert result.successful, result.reason
    wait_for(lambda: list(h.node.current_robot().contact.thresholds) == gains,
             what="new thresholds")
    assert h.node.current_robot().contact is monitor
    np.testing.assert_array_equal(monitor.observer.gain, np.full(m.nv, 200.0))
    # a gap between stamps longer than max_joint_age (5 s here) restarts the observer
    listen = Listener(h, ("external_torques",))
    rng = np.random.default_rng(5)
    q, v, _, tau, _ = robot.random_state(3)
    stamps = ((7000, 1_000_000), (7000, 2_000_000), (7000, 3_000_000), (7010, 0))
    for sec, nanosec in stamps:
        msg = joint_state(m.joint_names, q, v, tau + rng.normal(size=m.nv))
        msg.header.stamp.sec, msg.header.stamp.nanosec = sec, nanosec
        send_paced(h, msg, listen, ("external_torques",))
    r = [np.array(x.effort) for x in listen.received["external_torques"]]
    assert len(r) == len(stamps) and np.all(r[0] == 0) and np.abs(r[2]).max() > 0
    assert np.all(r[3] == 0), "the gap of 10 s did not restart the observer"
    # a payload is a new robot: its observer starts afresh
    response = set_payload(h, "link7", 1.5, (0.0, 0.0, 0.05), 0.01 * np.eye(3))
    assert response.success, response.message
    contact = h.node.current_robot().contact
    assert contact is not monitor and contact is not None
    np.testing.assert_array_equal(contact.observer.gain, np.full(m.nv, 200.0))
    assert not contact.observer.state.any()
    # contact_frame set live: ~/contact_wrench advertised, the robot's observer on link7
    result, = h.set_parameters(contact_frame="link7")
    assert result.successful, result.reason
    wait_for(lambda: "contact_wrench" in h.node._pub
             and h.node.current_robot().contact.frame == "link7", what="~/contact_wrench on link7")
    # a message without efforts: the observer's outputs are skipped with the reason
    q, v, _, _, _ = robot.random_state(2)
    stamp = new_stamp()
    h.exchange(lambda: h.joint_states.publish(joint_state(m.joint_names, q, v, stamp=stamp)),
               stamp)
    wait_for(lambda: h.node.skips().counts.get("observer without efforts", 0) > 0,
             what="the observer's skip")
    assert "efforts unknown" in h.node.skips().last


def test_reset_observer_when_off_says_why(harness):
    robot = Robot("arm7")
    h = harness(dict(robot_description=robot.xml))
    response = call_service(reset_client(h), Trigger.Request(), "the reset_observer response")
    assert not response.success and "observer is off" in response.message


def test_the_monitor_steps_its_bound_arrays_in_one_call_and_others_as_before():
    """ContactMonitor.step: bound arrays without fext (one call), with fext, other arrays."""
    from rbd_ros.node.contact import ContactMonitor
    robot, run, _ = simulated_contact("arm7", "link7", FORCE)
    m = robot.model
    params = {"observer_gain": GAIN, "collision_thresholds": THRESHOLDS,
              "contact_frame": "link7", "max_joint_age": 0.05,
              "publish_external_torques": False}
    monitors = [ContactMonitor(m, None, params) for _ in range(3)]
    arrays = [(np.empty(m.nq), np.empty(m.nv), np.empty(m.nv)) for _ in monitors]
    for monitor, bound in zip(monitors, arrays):
        monitor.bind(*bound)
    no_wrench = np.zeros((m.nbodies, 6))
    end = int(np.searchsorted(run.t, ON + 0.3))
    changes = 0
    for k in range(end):
        stamp = divmod(T0 * 10**9 + round(run.t[k] * 1e9), 10**9)
        state = run.q[k], run.v[k], run.tau[k]
        for bound in arrays:
            for array, value in zip(bound, state):
                array[:] = value
        one = monitors[0].step(stamp, *arrays[0], None)                  # one compiled call
        with_fext = monitors[1].step(stamp, *arrays[1], no_wrench)       # step_bound
        others = monitors[2].step(stamp, *(x.copy() for x in state), None)   # step
        np.testing.assert_array_equal(one[0], others[0])
        np.testing.assert_allclose(with_fext[0], one[0], rtol=0, atol=1e-12)
        assert one[1] == with_fext[1] == others[1]
        changes += one[1]
        np.testing.assert_array_equal(monitors[0].observer.wrench, monitors[2].observer.wrench)
    assert changes >= 1 and monitors[0].in_collision          # link7 isolated in the contact
    assert monitors[0].counts == monitors[1].counts == monitors[2].counts
    assert monitors[0].counts["tracked"] == end - 2
