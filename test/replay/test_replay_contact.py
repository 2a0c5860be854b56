"""
rbd_replay's momentum-observer outputs and collision events on a bag simulated by Pinocchio.

arm7 (``contact_sim``): a 10 N force on link7 from 0.3 to 0.8 s, efforts the commanded motor
torques, joint_states at 1 kHz, noise-free. The replay's ~/external_torques must follow the
simulation's τ_ext = Jᵀ F (2 % of its peak once settled), its ~/contact_wrench the applied
force (3 %) (``test_contact``'s tracking case), and, for a force that torques joint 7 above
its threshold (``test_contact``'s isolation case), its report must hold one collision event
starting within 20 ms of the contact, ending soon after it, isolated on link7. The
node-vs-replay equality is ``test_node_replay``'s.
"""
import json

import numpy as np
import pytest

pytest.importorskip("matplotlib")

from rbd_ros.replay import bag_io, main, replay  # noqa: E402
from contact_sim import Contact, Simulation  # noqa: E402
from oracle import Robot  # noqa: E402

pytestmark = pytest.mark.pinocchio

GAIN = 500.0                      # 1/s: settled after 5/GAIN = 10 ms
THRESHOLD = 0.25                  # N·m: 5 σ of test_contact's effort noise
ON, OFF, END = 0.3, 0.8, 1.1
CASES = {"track": ((6.0, 0.0, 8.0), (0.02, 0.03, 0.05)),
         "isolate": ((0.0, 10.0, 0.0), (0.1, 0.0, 0.05))}        # (force N, point m)
OBSERVER = "external_torques,collision,contact_wrench"


def simulate(tmp_path_factory, case):
    robot = Robot("arm7")
    force, point = (np.array(x) for x in CASES[case])
    run = Simulation(robot).run(END, Contact("link7", point, force, ON, OFF))
    path = tmp_path_factory.mktemp(case) / "in"
    bag_io.write_joint_states(path, robot.xml, robot.model.joint_names, run.t, run.q, run.v,
                              run.tau)
    return robot, run, path


@pytest.fixture(scope="module")
def tracked(tmp_path_factory):
    return simulate(tmp_path_factory, "track")


@pytest.fixture(scope="module")
def isolated(tmp_path_factory):
    return simulate(tmp_path_factory, "isolate")


def read(path, topic):
    store = bag_io.typestore()
    with bag_io.Reader(path) as r:
        cons = [c for c in r.connections if c.topic == topic]
        return [store.deserialize_cdr(raw, c.msgtype) for c, _, raw in r.messages(cons)]


def test_replay_external_torques_and_contact_wrench(tracked, tmp_path):
    robot, run, path = tracked
    replay(path, tmp_path / "out", outputs=["external_torques"], observer_gain=GAIN,
           contact_frame="link7", progress=False)
    t0 = 1_700_000_000.0
    r = read(tmp_path / "out", "/rbd_dynamics/external_torques")
    assert len(r) == len(run.t)
    times = np.array([m.header.stamp.sec + 1e-9 * m.header.stamp.nanosec - t0 for m in r])
    np.testing.assert_allclose(times, run.t, atol=1e-6)
    r = np.array([m.effort for m in r])
    settled = (run.t < ON) | ((run.t >= ON + 5 / GAIN) & (run.t < OFF)) \
        | (run.t >= OFF + 5 / GAIN)
    peak = np.abs(run.tau_ext).max()
    assert np.abs(r - run.tau_ext)[settled].max() <= 0.02 * peak
    wrenches = read(tmp_path / "out", "/rbd_dynamics/contact_wrench")
    assert len(wrenches) == len(run.t) and wrenches[0].header.frame_id == "link7"
    force = np.array([[w.wrench.force.x, w.wrench.force.y, w.wrench.force.z]
                      for w in wrenches])
    inside = (run.t >= ON + 5 / GAIN) & (run.t < OFF)
    applied = np.array(CASES["track"][0])
    assert np.linalg.norm(force[inside] - applied, axis=1).max() <= \
        0.03 * np.linalg.norm(applied)


def test_replay_collision_events(isolated, tmp_path):
    robot, run, path = isolated
    rep = replay(path, tmp_path / "out", outputs=OBSERVER.split(","), observer_gain=GAIN,
                 collision_thresholds=THRESHOLD, contact_frame="link7", progress=False,
                 report_dir=tmp_path / "report")
    t0 = 1_700_000_000.0
    events = rep["collisions"]["events"]
    assert len(events) == 1, events
    (event,) = events
    assert ON <= event["start"] <= ON + 0.020
    assert OFF < event["end"] <= OFF + 0.050
    assert event["isolated_link"] == "link7" and "joint7" in event["joints"]
    ratio = np.abs(run.tau_ext).max(axis=0) / THRESHOLD       # the truth's peak over threshold
    assert event["peak_ratio"] == pytest.approx(ratio.max(), rel=0.05)
    collisions = read(tmp_path / "out", "/rbd_dynamics/collision")
    assert collisions[0].in_collision and not collisions[-1].in_collision
    start = collisions[0].header.stamp
    assert start.sec + 1e-9 * start.nanosec - t0 == pytest.approx(event["start"], abs=1e-6)

    saved = json.loads((tmp_path / "report" / "report.json").read_text())
    assert saved["collisions"]["events"] == json.loads(json.dumps(events))
    text = (tmp_path / "report" / "report.txt").read_text()
    assert "collisions: 1 events" in text and "link7" in text
    plots = [p for p in rep["plots"] if "external_torque_" in p]
    assert len(plots) == robot.model.nv


def test_replay_observer_arguments_refused(tracked, tmp_path, capsys):
    _, _, path = tracked
    for args, what in ((["--outputs", "contact_wrench"], "--contact-frame"),
                       (["--outputs", "external_torques", "--observer-gain", "0"], "gain"),
                       (["--outputs", "collision", "--collision-thresholds", "1,2"],
                        "--collision-thresholds"),
                       (["--contact-frame", "no_link"], "no_link"),
                       (["--outputs", "collision", "--live"], "--live")):
        out = tmp_path / f"out{len(what)}"
        assert main([str(path), "-o", str(out), "--no-progress"] + args) == 2, args
        assert what in capsys.readouterr().err, args
        assert not out.exists()


def test_the_dynamics_are_computed_once(tracked, tmp_path, monkeypatch):
    """With the observer's outputs on, each message's dynamics are computed once, not twice."""
    from rbd_ros.replay import dynamics
    robot, run, path = tracked
    computed = []
    original = dynamics.compute_finite

    def counting(model, outputs, q, *args, **kwargs):
        computed.append(len(q))
        return original(model, outputs, q, *args, **kwargs)
    monkeypatch.setattr(dynamics, "compute_finite", counting)
    replay(path, tmp_path / "out", outputs=OBSERVER.split(","), observer_gain=GAIN,
           contact_frame="link7", progress=False, batch_size=300)
    assert sum(computed) == len(run.t) and len(computed) == -(-len(run.t) // 300), computed
    assert len(read(tmp_path / "out", "/rbd_dynamics/external_torques")) == len(run.t)
