"""
~/estimate_payload with real DDS: a payload simulated by Pinocchio, estimated by the node.

The first test publishes 20 s of joint states of the arm carrying a 1.5 kg object on ``tool``
(its centre of mass 4 cm off the flange axis; efforts by Pinocchio plus the joint parameters
the node is given, noise 0.05 N·m), asks for the payload with ``apply: true``, and checks the
estimate and that ~/torques then include it. The others: a 300 ms hole in the stamps (the
truth within 3 stated std), and a large window estimated while ~/torques go on.
"""
import numpy as np  # noqa: E402
import pytest  # noqa: E402

import time  # noqa: E402

from builtin_interfaces.msg import Time  # noqa: E402
from rbd_ros_interfaces.srv import EstimatePayload  # noqa: E402

import rbd_ros  # noqa: E402
from node_helpers import call_service, joint_state, new_stamp, wait_for  # noqa: E402
from pinocchio_oracles import (PAYLOAD_COM as COM, PAYLOAD_INERTIA,  # noqa: E402
                               PAYLOAD_MASS as MASS, simulate_payload,
                               simulate_payload_arm as simulate)
from rbd_ros.identification import payload as payload_identification  # noqa: E402

pytestmark = pytest.mark.pinocchio


def estimate(h, link, window, apply):
    client = h.tester.create_client(EstimatePayload, f"{h.namespace}/rbd_dynamics/"
                                    "estimate_payload")
    return call_service(client, EstimatePayload.Request(link=link, window=window, apply=apply),
                        "the estimate_payload response", 60.0)


def stamp_of(seconds):
    return Time(sec=int(seconds), nanosec=int(round((seconds % 1) * 1e9)) % 1_000_000_000)


def send_all(h, names, t, q, v, tau):
    """Publish each sample and wait until the node took it (again after 0.3 s: best effort)."""
    for k in range(len(t)):
        msg = joint_state(names, q[k], v[k], tau[k], stamp=stamp_of(t[k]))
        before = h.node.stats()["joint_states"]
        while True:
            h.joint_states.publish(msg)
            resend = time.monotonic() + 0.3
            while h.node.stats()["joint_states"] == before and time.monotonic() < resend:
                time.sleep(0.0002)
            if h.node.stats()["joint_states"] > before:
                break


def test_estimate_payload_service_applies_it(harness, pin, tmp_path):
    arm = rbd_ros.load_model(rbd_ros.robots.path("rbd_arm7"))
    q, v, _, tau, params = simulate(pin, arm, seconds=20.0, rate=50.0)
    path = tmp_path / "joints.json"
    path.write_text(params.to_json())
    with open(rbd_ros.robots.path("rbd_arm7")) as f:
        h = harness(dict(robot_description=f.read(), joint_parameters_file=str(path)))
    names = list(arm.joint_names)
    resp = estimate(h, "tool", 25.0, True)         # nothing kept yet: refused
    assert not resp.success and "too few" in resp.message
    for k in range(len(q)):
        stamp = Time(sec=5000 + k // 50, nanosec=(k % 50) * 20_000_000)
        h.send_joint_states(joint_state(names, q[k], v[k], tau[k], stamp=stamp))
    resp = estimate(h, "tool", 1e-3, False)        # a 1 ms window: too few samples
    assert not resp.success and "too few" in resp.message
    resp = estimate(h, "no_link", 25.0, False)
    assert not resp.success and "no link" in resp.message
    for bad in (float("nan"), -1.0, float("inf")):
        resp = estimate(h, "tool", bad, True)
        assert not resp.success and "window must be" in resp.message and len(resp.message) < 300
    assert h.node.current_robot().payloads == {}
    resp = estimate(h, "tool", 25.0, True)
    assert resp.success, resp.message
    assert resp.samples >= 0.95 * len(q)
    values, stds = np.array(resp.parameters), np.array(resp.stds)
    assert values[0] == pytest.approx(MASS, rel=0.02)
    assert np.linalg.norm(values[1:4] - COM) < 5e-3
    assert np.all(stds > 0) and stds[0] < 0.02 * MASS
    assert list(h.node.current_robot().payloads) == ["tool"]
    # ~/torques now include it: the core's model with that payload (and the joint terms)
    from rbd_ros.model import inertia
    rot = np.array([[values[4], values[5], values[6]], [values[5], values[7], values[8]],
                    [values[6], values[8], values[9]]])
    loaded = arm.with_payload("tool", inertia.compact(values[0], values[1:4], rot))
    qs, vs = q[7], v[7]
    stamp = new_stamp()
    msg = joint_state(names, qs, vs, stamp=stamp)
    out = h.exchange(lambda: h.joint_states.publish(msg), stamp)["torques"]
    zero = np.zeros(arm.nv)
    want = rbd_ros.rnea(loaded, qs, vs, zero) + params.torques(vs[None], zero[None])[0]
    np.testing.assert_allclose(out.effort, want, atol=1e-9)
    unloaded = rbd_ros.rnea(arm, qs, vs, zero) + params.torques(vs[None], zero[None])[0]
    assert np.max(np.abs(np.array(out.effort) - unloaded)) > 0.5      # the payload's weight


def test_estimate_payload_across_a_hole_in_the_stamps(harness, pin, tmp_path):
    """300 ms without joint_states: the truth within 3 stated std (1.363 ± 0.009 kg before)."""
    arm = rbd_ros.load_model(rbd_ros.robots.path("rbd_arm7"))
    q, v, _, tau, params = simulate(pin, arm, seconds=20.0, rate=50.0)
    t = 5000.0 + np.arange(len(q)) / 50.0
    keep = (t < 5008.0) | (t >= 5008.3)
    path = tmp_path / "joints.json"
    path.write_text(params.to_json())
    with open(rbd_ros.robots.path("rbd_arm7")) as f:
        h = harness(dict(robot_description=f.read(), joint_parameters_file=str(path)))
    send_all(h, list(arm.joint_names), t[keep], q[keep], v[keep], tau[keep])
    resp = estimate(h, "tool", 25.0, False)
    assert resp.success, resp.message
    values, stds = np.array(resp.parameters), np.array(resp.stds)
    assert abs(values[0] - MASS) < 3 * stds[0], (values[0], stds[0])
    assert np.all(np.abs(values[1:4] - COM) < 3 * stds[1:4]), (values[1:4], stds[1:4])
    assert "hole" in resp.message


def test_estimate_payload_off_the_ticks(harness, pin):
    """
    A large window: ~/torques go on while the node estimates, and the answer is the core's.

    Before, the estimate ran on the executor's thread: no tick until it answered.
    """
    arm = rbd_ros.load_model(rbd_ros.robots.path("rbd_arm7"))
    t = 3000.0 + np.arange(8000) / 100.0
    payload = (MASS, COM, PAYLOAD_INERTIA)
    q, v, tau = simulate_payload(pin, arm, "tool", payload, t, 0.05, 11)
    with open(rbd_ros.robots.path("rbd_arm7")) as f:
        h = harness(dict(robot_description=f.read()))
    names = list(arm.joint_names)
    send_all(h, names, t, q, v, tau)
    client = h.tester.create_client(EstimatePayload, f"{h.namespace}/rbd_dynamics/"
                                    "estimate_payload")
    assert client.wait_for_service(timeout_sec=30.0)
    future = client.call_async(EstimatePayload.Request(link="tool", window=5000.0))
    answered = []                           # the torques received when the answer came
    future.add_done_callback(lambda _: answered.append(h.messages("torques")))
    sent, k = set(), 0                      # the joint_states sent once the estimate began
    deadline = time.monotonic() + 120.0
    while not future.done() and time.monotonic() < deadline:
        k += 1                              # no effort: not a sample of the estimate
        stamp = stamp_of(4000.0 + k * 0.01)
        h.joint_states.publish(joint_state(names, q[k], v[k], stamp=stamp))
        if any("estimating the payload on tool" in m.msg for m in h.messages("rosout")):
            sent.add((stamp.sec, stamp.nanosec))
        time.sleep(0.002)
    assert future.done(), "no answer in 120 s"
    wait_for(lambda: answered, what="the done callback")
    during = [m for m in answered[0] if (m.header.stamp.sec, m.header.stamp.nanosec) in sent]
    resp = future.result()
    assert resp.success, resp.message
    print(f"{len(during)} ~/torques of {len(sent)} joint_states sent while estimating")
    assert len(during) > 0, f"no ~/torques while estimating ({len(sent)} joint_states sent)"
    assert resp.samples == len(t)
    stamps = [stamp_of(x) for x in t]       # the node's stamps, to the nanosecond
    t = np.array([x.sec + 1e-9 * x.nanosec for x in stamps])
    oracle = payload_identification.estimate_from_stamps(arm, "tool", t, q, v, tau)
    np.testing.assert_allclose(resp.parameters, oracle.values, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(resp.stds, oracle.stds, rtol=1e-6, atol=1e-12)


def test_sample_ring_keeps_the_last_samples_in_order():
    """The ring: bounded, oldest overwritten, out-of-order stamps skipped, NaN rows left out."""
    from rbd_ros.node.estimate_payload import SampleRing
    ring = SampleRing(("a", "b"), capacity=5)
    for k in range(7):
        ring.add(float(k), [[k, k], [k, -k], [np.nan if k == 5 else 1.0, 2.0]])
    ring.add(3.5, np.full((3, 2), 9.0))             # before the last stamp: not kept
    t, q, v, effort, clipped = ring.last(1e9)
    assert clipped                                 # the window reaches past the 5 kept
    np.testing.assert_array_equal(t, [2.0, 3.0, 4.0, 6.0])      # 5 has an unknown effort
    np.testing.assert_array_equal(q[:, 0], t)
    np.testing.assert_array_equal(v[:, 1], -t)
    t, *_, clipped = ring.last(1.5)
    assert list(t) == [6.0] and not clipped        # 5.0 and 6.0 in the window; 5 left out


def _resident(array):
    """Return the fraction of ``array``'s pages that are mapped (mincore(2))."""
    import ctypes
    import os
    libc = ctypes.CDLL(None, use_errno=True)
    page = os.sysconf("SC_PAGE_SIZE")
    start = array.ctypes.data // page * page
    length = array.ctypes.data + array.nbytes - start
    pages = (ctypes.c_ubyte * ((length + page - 1) // page))()
    assert libc.mincore(ctypes.c_void_p(start), ctypes.c_size_t(length), pages) == 0, \
        os.strerror(ctypes.get_errno())
    return sum(p & 1 for p in pages) / len(pages)


def test_the_ring_is_written_through_when_it_is_made():
    """
    No page of the ring is mapped by a tick: they are all mapped when the ring is made.

    np.zeros' pages were mapped at their first write, so the ticks' first pass through a
    talos-sized ring (3 × 5 MB, huge pages where the kernel finds them) took ≥ 49 page faults,
    some of them milliseconds long. Asked of the kernel (mincore) right after the ring is
    made: every page of its arrays is resident, where a fresh mapping of the same size has
    almost none. (Counting the adds' page faults instead failed once in a CI run, 5 in 20,000 adds,
    from memory the ring does not own: the test process is large and the kernel compacts it.)
    """
    import mmap
    from rbd_ros.node.estimate_payload import CAPACITY, SampleRing
    ring = SampleRing([f"j{k}" for k in range(32)])
    for array in (ring.t, ring.samples):
        assert _resident(array) == 1.0
    # what the check tells apart: a mapping never written (np.zeros of the same size may
    # reuse pages the process freed before, already mapped)
    untouched = mmap.mmap(-1, ring.samples.nbytes)
    assert _resident(np.frombuffer(untouched, np.uint8)) < 0.5
    row = np.linspace(0.0, 1.0, 32)
    for k in range(CAPACITY):
        ring.add(1.0 + 1e-3 * k, (row, row, row))
    assert ring.count == CAPACITY and ring.q[-1, -1] == 1.0


def test_a_robot_swap_keeps_the_samples_of_the_same_joints_only():
    """
    The ring follows the joints: kept for the same ones, new for others (even as many).

    A tick that began before a swap to other joints (its cache the old robot's) records
    nothing into the new robot's ring; a new cache of the same joints (the description
    again) is taken on, and so is a last sample of the old one: the same joints.
    """
    from rbd_ros.node.estimate_payload import PayloadSamples
    from rbd_ros.node.joint_cache import JointCache

    def merged(names, value):
        cache = JointCache(names)
        n = len(names)
        cache.merge(names, np.full(n, value), np.zeros(n), np.zeros(n), (1, 0), 0.0)
        return cache

    samples = PayloadSamples()
    arm = merged(("a", "b"), 0.5)
    samples.prepare(arm.joint_names)
    ring = samples.ring
    samples.record(arm, (1, 0))
    samples.prepare(arm.joint_names)                # a parameter change: the same cache
    assert samples.ring is ring and ring.count == 1
    again = merged(("a", "b"), 0.25)                # the description again: the same joints
    samples.prepare(again.joint_names)
    assert samples.ring is ring
    samples.record(arm, (2, 0))                     # the old cache's tick: the same joints
    samples.record(again, (3, 0))
    assert ring.count == 3 and list(ring.q[:3, 0]) == [0.5, 0.5, 0.25]
    other = merged(("c", "d"), 1.0)                 # another robot with as many joints
    samples.prepare(other.joint_names)
    assert samples.ring is not ring and samples.ring.count == 0
    samples.record(again, (4, 0))                   # a sample of the robot swapped out
    assert samples.ring.count == 0
    samples.record(other, (5, 0))
    assert samples.ring.count == 1 and samples.ring.names == ("c", "d")
