"""
rbd_replay's observer on hostile bags: the node's rules, through the command line.

arm7 simulated by Pinocchio (``contact_sim``): a contact on link3 whose torque on joint2 is
about 20 N·m from 0.3 s on. A bag whose efforts are 1e308 once and ±1.7e308 for 0.3 s: the
replay writes only finite ~/external_torques, says where the observer was reset and could
not observe, and plots r (before: a crash in matplotlib on r = inf). A bag whose messages
all come twice, or whose stamps are quantized to 10 ms: the collision on joint2 is found
(before: the observer restarted at each such message, no collision).
"""
import json

import numpy as np
import pytest

pytest.importorskip("matplotlib")

from rbd_ros.replay import bag_io, main  # noqa: E402
from contact_sim import simulated_contact  # noqa: E402

pytestmark = pytest.mark.pinocchio

FORCE, POINT = (0.0, 0.0, 69.0), (0.3, 0.0, 0.0)   # on link3: ~20 N·m on joint2
BURST = slice(400, 700)                              # samples (1 ms) of ±1.7e308 on joint2


def read(path, topic):
    store = bag_io.typestore()
    with bag_io.Reader(path) as r:
        cons = [c for c in r.connections if c.topic == topic]
        return [store.deserialize_cdr(raw, c.msgtype) for c, _, raw in r.messages(cons)]


def write(path, robot, t, q, v, tau, start=1_700_000_000):
    """Write a bag of the samples stamped start + t, logged 1 ms apart (as live)."""
    store = bag_io.typestore()
    types = store.types
    writer = bag_io.open_writer(path, "mcap")
    try:
        c = bag_io.add_connection(writer, "/robot_description", bag_io.STRING)
        writer.write(c, start * 10**9 - 10**6, store.serialize_cdr(
            types[bag_io.STRING](data=robot.xml), bag_io.STRING))
        c = bag_io.add_connection(writer, "/joint_states", bag_io.JOINT_STATE)
        for k, tk in enumerate(t):
            ns = int(round(tk * 1e9))
            header = types["std_msgs/msg/Header"](stamp=types["builtin_interfaces/msg/Time"](
                sec=start + ns // 10**9, nanosec=ns % 10**9), frame_id="")
            msg = types[bag_io.JOINT_STATE](header=header, name=list(robot.model.joint_names),
                                            position=q[k], velocity=v[k], effort=tau[k])
            writer.write(c, start * 10**9 + k * 10**6 + 500_000,
                         store.serialize_cdr(msg, bag_io.JOINT_STATE))
    finally:
        writer.close()


def replay(path, out, *args):
    assert main([str(path), "-o", str(out / "bag"), "--report-dir", str(out / "report"),
                 "--no-progress", "--collision-thresholds", "10"] + list(args)) == 0
    return json.loads((out / "report" / "report.json").read_text())["collisions"]


def test_huge_efforts_give_finite_torques_and_say_so(tmp_path):
    robot, run, _ = simulated_contact("arm7", "link3", FORCE, duration=0.8, point=POINT)
    tau = run.tau.copy()
    tau[250, 1] = 1e308
    tau[BURST, 1] = np.where(np.arange(BURST.stop - BURST.start) % 2, 1.7e308, -1.7e308)
    write(tmp_path / "in", robot, run.t, run.q, run.v, tau)
    section = replay(tmp_path / "in", tmp_path, "--outputs", "external_torques,collision")
    r = np.array([m.effort for m in read(tmp_path / "bag", "/rbd_dynamics/external_torques")])
    assert len(r) and np.isfinite(r).all()
    assert section["unobserved_ticks"]["overflow_resets"] >= 2, section
    (blind,) = section["blind"]
    assert "overflow" in blind["reason"] and BURST.start * 1e-3 < blind["start"] < 0.75
    assert blind["end"] is not None and blind["end"] > BURST.stop * 1e-3
    collisions = read(tmp_path / "bag", "/rbd_dynamics/collision")
    assert any(not m.observing and "overflow" in m.reason for m in collisions)
    assert collisions[-1].observing and collisions[-1].in_collision       # found again
    assert len(list((tmp_path / "report").glob("external_torque_*.png"))) == robot.model.nv


@pytest.mark.parametrize("stamps", ["repeated", "quantized"])
def test_stamps_that_do_not_advance_still_observe(tmp_path, stamps):
    robot, run, _ = simulated_contact("arm7", "link3", FORCE, duration=0.45, point=POINT)
    k = np.arange(len(run.t))
    if stamps == "repeated":
        k = np.repeat(k, 2)
        t = run.t[k]
    else:
        t = np.floor(run.t * 100.0 + 1e-9) / 100.0
    write(tmp_path / "in", robot, t, run.q[k], run.v[k], run.tau[k])
    section = replay(tmp_path / "in", tmp_path, "--outputs", "external_torques,collision")
    (event,) = section["events"]
    assert "joint2" in event["joints"], event
    hit = next(m for m in read(tmp_path / "bag", "/rbd_dynamics/collision") if m.in_collision)
    at = hit.header.stamp.sec - 1_700_000_000 + 1e-9 * hit.header.stamp.nanosec
    assert 0.3 <= at <= 0.33 and hit.observing, hit           # its stamp: the sample's
    assert section["unobserved_ticks"]["stamp_not_after"] > 0 and not section["blind"]
