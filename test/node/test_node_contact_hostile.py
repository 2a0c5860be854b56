"""
The node's contact monitor fed hostile joint_states through real DDS: it is never blinded quietly.

arm7 simulated by Pinocchio (``contact_sim``): a contact on link3 whose torque on joint2 is
about 20 N·m (Pinocchio's τ_ext = Jᵀ F) from 0.3 s on, efforts the commanded torques.
- Stamps that repeat (each message twice), come late (pairs swapped) or are quantized to
  10 ms: the observer still observes (a stamp not after the newest is skipped and counted)
  and ~/collision turns true on joint2 (before: it restarted at each such sample, max |r|
  0.34 / 0.46 / 0 N·m, no collision, /diagnostics OK).
- Stamps that run backwards: it cannot observe, and says so: ~/collision ``observing`` false
  with the reason, /diagnostics ERROR.
- Efforts of 1e308 once, then ±1.7e308 for 0.3 s: every ~/external_torques and
  ~/contact_wrench is finite (before: NaN for 4 s), the observer resets with an ERROR, says it
  cannot observe during the burst, and observes the contact again after it.
- An exception no check foresaw in the observer's step: that tick's ~/torques still go out,
  the boundary counts it, and the observer publishes at the next sample.
- With M⁻¹ on too (compute_all, its derivatives: bench_node's case), the stamps running
  backwards, the huge efforts and the defect once more: the burst's states are the
  dynamics' refusals (their derivatives overflow), and a refused state does not step the
  observer, which observes the contact again after it.
- ~/reset_observer called at 1 kHz by a client of rclpy's default QoS, joint_states flowing,
  against the node's process (its executor): every request is answered, counted on
  /diagnostics (before: 976 of 2,998 answered, the others lost, neither refused nor counted).
"""
import time

import numpy as np
import pytest
from diagnostic_msgs.msg import DiagnosticArray
from sensor_msgs.msg import JointState
from std_srvs.srv import Trigger

from node_cases import ARM7, Listener, _run_node_process, send_once, xml  # noqa: E402
from node_helpers import RELIABLE, call_service, joint_state, probing, wait_for  # noqa: E402
from contact_sim import simulated_contact  # noqa: E402

pytestmark = pytest.mark.pinocchio

FORCE, POINT = (0.0, 0.0, 69.0), (0.3, 0.0, 0.0)   # on link3: ~20 N·m on joint2
THRESHOLD = 10.0          # N·m
FIRST = 200               # the first sample sent (0.2 s: 0.1 s before the contact)
T0 = 6000                 # s: the stamps' origin
ERROR = b"\x02"


def contact(duration):
    robot, run, _ = simulated_contact("arm7", "link3", FORCE, duration=duration,
                                      point=POINT)
    assert np.abs(run.tau_ext[:, 1]).max() == pytest.approx(20.0, rel=0.1)    # joint2: truth
    return robot, run


def start(harness, robot, inverse_inertia=False):
    """
    Start the node with the observer's outputs and ~/torques; M⁻¹ too with ``inverse_inertia``.

    With M⁻¹ the tick's call is compute_all (its derivatives too: bench_node's case), without
    it the RNEA alone.
    """
    h = harness(dict(robot_description=robot.xml, publish_external_torques=True,
                     publish_collision=True, contact_frame="link7",
                     collision_thresholds=[THRESHOLD], publish_accelerations=False,
                     publish_inverse_inertia=inverse_inertia, diagnostics_period=0.2))
    assert h.node.current_robot().plans[True][0] == (
        "compute_all" if inverse_inertia else "rnea")
    return h, Listener(h)


def stamp(ns):
    ns = int(ns)
    return T0 + ns // 10**9, ns % 10**9


def send(h, names, run, k, at_ns, effort=None):
    msg = joint_state(names, run.q[k], run.v[k], run.tau[k] if effort is None else effort)
    msg.header.stamp.sec, msg.header.stamp.nanosec = stamp(at_ns)
    send_once(h, msg)


def errors(h, *words):
    """Return the node's /diagnostics ERROR messages that contain every one of ``words``."""
    return [s.message for d in h.messages("diagnostics") for s in d.status
            if s.name.endswith("rbd_dynamics: dynamics") and s.level == ERROR
            and all(w in s.message for w in words)]


ORDERS = {
    "repeated": lambda k: [(k, k), (k, k)],                     # each message twice
    "late": lambda k: [(k + 1, k + 1), (k, k)] if k % 2 == 0 else [],   # pairs swapped
    "quantized": lambda k: [(k, k - k % 10)],                   # stamps of 10 ms
}


@pytest.mark.parametrize("order", sorted(ORDERS))
def test_stamps_that_do_not_advance_still_observe(harness, order):
    robot, run = contact(0.45)
    names = list(robot.model.joint_names)
    h, listen = start(harness, robot)
    for k in range(FIRST, len(run.t) - 1):
        for sample, at_ms in ORDERS[order](k):
            send(h, names, run, sample, at_ms * 1_000_000)
    hit = wait_for(lambda: [m for m in listen.received["collision"] if m.in_collision],
                   what=f"a collision with {order} stamps")[0]
    assert "joint2" in list(hit.joints) and hit.observing, hit
    assert not [m for m in listen.received["collision"] if not m.observing]
    assert h.node.skips().counts.get("observer stamp", 0) > 0


@pytest.mark.parametrize("inverse_inertia", [False, True])
def test_stamps_running_backwards_say_the_observer_cannot_observe(harness, inverse_inertia):
    robot, run = contact(0.45)
    names = list(robot.model.joint_names)
    h, listen = start(harness, robot, inverse_inertia)
    for k in range(FIRST, len(run.t)):
        send(h, names, run, k, (len(run.t) - k) * 1_000_000)       # each before the last
    blind = wait_for(lambda: [m for m in listen.received["collision"] if not m.observing],
                     what="~/collision saying the observer cannot observe")[0]
    assert "stamp" in blind.reason, blind
    wait_for(lambda: errors(h, "cannot observe", "stamp"), what="an ERROR on /diagnostics")
    assert h.node.skips().counts["observer stamp"] >= len(run.t) - FIRST - 3


@pytest.mark.parametrize("inverse_inertia", [False, True])
def test_huge_efforts_never_make_the_outputs_non_finite(harness, inverse_inertia):
    robot, run = contact(0.8)
    names = list(robot.model.joint_names)
    h, listen = start(harness, robot, inverse_inertia)
    burst = range(400, 700)                                      # 0.3 s, in the contact
    for k in range(FIRST, len(run.t)):
        effort = None
        if k == 250 or k in burst:
            effort = run.tau[k].copy()
            effort[1] = 1e308 if k == 250 else (1.7e308 if k % 2 else -1.7e308)
        send(h, names, run, k, k * 1_000_000, effort)
    last = stamp((len(run.t) - 1) * 1_000_000)
    wait_for(lambda: listen.has("external_torques", last) and listen.has("contact_wrench", last),
             what="the last sample's outputs")
    r = np.array([m.effort for m in listen.received["external_torques"]])
    w = np.array([[m.wrench.force.x, m.wrench.force.y, m.wrench.force.z, m.wrench.torque.x,
                   m.wrench.torque.y, m.wrench.torque.z]
                  for m in listen.received["contact_wrench"]])
    assert np.isfinite(r).all() and np.isfinite(w).all()
    assert np.isfinite([m.peak_ratio for m in listen.received["collision"]]).all()
    counts = h.node.skips().counts
    if inverse_inertia:   # compute_all's derivatives overflow: the dynamics refuse those ticks,
        # and a state they refuse does not step the observer
        assert counts["refused"] >= len(burst) and "observer overflow" not in counts
    else:                 # ~/torques' RNEA takes them: the observer overflows
        assert counts["observer overflow"] >= 1
        wait_for(lambda: errors(h, "overflow") and errors(h, "cannot observe"),
                 what="ERRORs on /diagnostics")
        # ~/collision: off during the burst (with why), on again after it, in the contact
        changes = [(m.header.stamp.sec + 1e-9 * m.header.stamp.nanosec - T0, m)
                   for m in listen.received["collision"]]
        off = [t for t, m in changes if not m.observing and "overflow" in m.reason]
        assert off and burst.start * 1e-3 < off[0] < burst.stop * 1e-3, changes
        back = [t for t, m in changes
                if m.observing and m.in_collision and t > burst.stop * 1e-3]
        assert back, changes
    # the torque on joint2 is observed again: r meets Pinocchio's τ_ext 90 ms after it
    k = 790
    got = next(m for m in listen.received["external_torques"]
               if (m.header.stamp.sec, m.header.stamp.nanosec) == stamp(k * 1_000_000))
    assert got.effort[1] == pytest.approx(run.tau_ext[k][1], abs=0.05 * 20.0)


@pytest.mark.parametrize("inverse_inertia", [False, True])
def test_a_defect_in_the_observer_leaves_the_tick_s_torques_published(harness, monkeypatch,
                                                                      inverse_inertia):
    """
    An exception no check foresaw in the observer's step does not silence the dynamics.

    The tick steps the observer before it sends anything; a defect there is counted by the
    callback's boundary after that tick's ~/torques went out, and the observer publishes
    again at the next sample.
    """
    robot, run = contact(0.45)
    names = list(robot.model.joint_names)
    h, listen = start(harness, robot, inverse_inertia)
    ticks = iter(range(FIRST, len(run.t)))

    def next_sample():
        k = next(ticks)
        send(h, names, run, k, k * 1_000_000)
        return stamp(k * 1_000_000)

    first = next_sample()
    wait_for(lambda: listen.has("external_torques", first), what="the observer's output")

    def boom(*args, **kwargs):
        raise RuntimeError("injected failure")
    monkeypatch.setattr(h.node.current_robot().contact, "messages", boom)
    broken = next_sample()
    wait_for(lambda: h.node.stats()["callback_errors"] == 1, what="the defect counted")
    monkeypatch.undo()
    torques = wait_for(lambda: [m for m in h.messages("torques")
                                if (m.header.stamp.sec, m.header.stamp.nanosec) == broken],
                       what="the torques of the tick whose observer failed")
    pin, k = robot.pin, FIRST + 1                 # its torques are Pinocchio's at a = 0
    expected = robot.v_from_pin(pin.rnea(robot.pm, robot.pd, robot.q_to_pin(run.q[k]),
                                         robot.v_to_pin(run.v[k]), np.zeros(robot.model.nv)))
    np.testing.assert_allclose(torques[0].effort, expected, rtol=1e-9, atol=1e-9)
    assert not listen.has("external_torques", broken)
    after = next_sample()
    wait_for(lambda: listen.has("external_torques", after), what="the observer again")
    assert h.node.stats()["callback_errors"] == 1


def test_a_defect_that_persists_makes_the_observer_blind(harness, monkeypatch):
    """
    Every tick whose observer step fails is a tick without r, so the observer goes blind.

    Else ~/collision and /diagnostics would keep the observer's last state (observing, in
    collision or not) standing for as long as the defect lasts.
    """
    from rbd_ros.contact.isolation import BLIND_AFTER
    from rbd_ros.contact.observer_rule import FAILED
    robot, run = contact(0.45)
    names = list(robot.model.joint_names)
    h, listen = start(harness, robot)
    send(h, names, run, FIRST, FIRST * 1_000_000)
    wait_for(lambda: listen.has("external_torques", stamp(FIRST * 1_000_000)),
             what="the observer's output")
    monitor = h.node.current_robot().contact
    monitor.diagnostic()                           # the period so far reported

    def boom(*args, **kwargs):
        raise RuntimeError("injected failure")
    monkeypatch.setattr(monitor, "step", boom)
    for k in range(FIRST + 1, FIRST + 1 + BLIND_AFTER):
        send(h, names, run, k, k * 1_000_000)
        wait_for(lambda k=k: h.node.stats()["callback_errors"] == k - FIRST,
                 what="the defect counted")
    assert not monitor.observing and monitor.collision.reason == FAILED
    level, text = monitor.diagnostic()
    assert level == ERROR[0] and FAILED in text, text       # the level as a number


def test_reset_observer_at_1khz_answers_every_request(tmp_path):
    ns, proc, log = _run_node_process(tmp_path, {"robot_description": xml(ARM7),
                                                 "publish_external_torques": True,
                                                 "diagnostics_period": 0.5})
    with probing(ns, proc) as probe:
        diagnostics = probe.subscribe(DiagnosticArray, "/diagnostics")
        client = probe.node.create_client(Trigger, f"{ns}/rbd_dynamics/reset_observer")
        assert client.wait_for_service(timeout_sec=120.0), open(log.name).read()[-2000:]
        states = probe.node.create_publisher(JointState, f"{ns}/joint_states", RELIABLE)
        names = [f"joint{k}" for k in range(1, 8)]

        def counted():
            """Return the node's last /diagnostics counts: resets answered, requests refused."""
            for d in reversed(list(diagnostics)):
                for s in d.status:
                    values = {v.key: v.value for v in s.values}
                    if s.name.endswith("rbd_dynamics: dynamics") and "observer_resets" in values:
                        return int(values["observer_resets"]), int(values["requests_refused"])
            return None

        # the robot loaded first (a reset before it is refused: "no robot model yet")
        wait_for(lambda: call_service(client, Trigger.Request(), "a first reset").success,
                 timeout=120.0, what="a first reset answered")
        before = wait_for(lambda: counted() if counted() and counted()[0] >= 1 else None,
                          what="the first reset counted")
        n, start, futures = 2000, time.monotonic(), []
        for k in range(n):                                  # 1 kHz, a joint_states each
            msg = joint_state(names, np.full(7, 0.1), np.zeros(7), np.ones(7))
            msg.header.stamp.sec, msg.header.stamp.nanosec = 100 + k // 1000, k % 1000 * 10**6
            states.publish(msg)
            futures.append(client.call_async(Trigger.Request()))
            while time.monotonic() < start + (k + 1) * 1e-3:
                time.sleep(0.0001)
        total = sum(before) + n
        counts = wait_for(lambda: sum(counted()) >= total and counted(), timeout=120.0,
                          what=f"the node to answer or refuse {n} resets")
        assert counts == (before[0] + n, before[1]), (before, counts)
        # the answers the client took are all successes (its own queue of 10 may drop some)
        assert all(f.result().success for f in futures if f.done())
        assert proc.poll() is None, open(log.name).read()[-2000:]
