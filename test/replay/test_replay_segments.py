"""
A bag whose robot_description changes partway: each message with the model in force.

The replay evaluated the whole bag with its last description, silently: an arm that gets
heavier halfway gave "ok" rows for the first half computed with the heavy model, and a
switch to another robot failed the whole bag. Here the bags are written with ``rosbags``
(``bag_io``), the states simulated, and each output row is checked against Pinocchio with
the model of its own half (``--acceleration zero``: τ = RNEA(q, v, 0), nothing estimated).
"""
import json
import os
import re
import sys

import numpy as np
import pytest

pin = pytest.importorskip("pinocchio")

import rbd_ros  # noqa: E402
from rbd_ros.replay import ReplayError, bag_io, replay  # noqa: E402
from rbd_ros.replay.cli import main  # noqa: E402
from bag_records import STORE, js, read  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import make_example_bag as mk  # noqa: E402
ARM = open(rbd_ros.robots.path("rbd_arm7")).read()
N = 60                                          # joint_states messages per half
START = 1_700_000_000 * 10**9                    # ns: stamps and log times


def heavier(urdf, factor=1.6):
    """Return the same arm, every link's mass and inertia times ``factor`` (consistent)."""
    def scale(tag):
        return re.sub(r'="([^"]+)"', lambda m: f'="{float(m.group(1)) * factor!r}"',
                      tag.group(0))
    return re.sub(r"<(mass|inertia) [^>]*/>", scale, urdf)


def renamed(urdf, prefix="b_"):
    """Another robot: the arm with other joint names."""
    return re.sub(r'<joint name="(joint\d)"', rf'<joint name="{prefix}\1"', urdf)


def states(model, seed):
    t = np.arange(N) / 100.0
    q, v, _ = mk.trajectory(model, t, seed)
    effort = np.random.default_rng(seed).normal(size=q.shape)
    return q, v, effort


def write(path, halves):
    """Write a bag of two halves, each ``(urdf, model, q, v, effort)``, description first."""
    w = bag_io.open_writer(path, "mcap")
    try:
        desc = bag_io.add_connection(w, "/robot_description", bag_io.STRING)
        joints = bag_io.add_connection(w, "/joint_states", bag_io.JOINT_STATE)
        ns = START
        for urdf, model, q, v, e in halves:
            ns += 5 * 10**6                     # between two joint_states
            w.write(desc, ns, STORE.serialize_cdr(STORE.types[bag_io.STRING](data=urdf),
                                                  bag_io.STRING))
            for k in range(N):
                ns += 10**7
                w.write(joints, ns, js(model.joint_names, q[k], v[k], e[k], ns))
    finally:
        w.close()


def pin_torques(urdf, q, v):
    """τ = RNEA(q, v, 0) by Pinocchio, in the URDF's joint order (the arm: one dof each)."""
    model = pin.buildModelFromXML(urdf)
    data = model.createData()
    return np.array([pin.rnea(model, data, qk, vk, np.zeros(model.nv)).copy()
                     for qk, vk in zip(q, v)])


def check_rows(out, halves):
    rows = out["/rbd_dynamics/torques"]
    assert len(rows) == 2 * N
    for h, (urdf, model, q, v, _) in enumerate(halves):
        expected = pin_torques(urdf, q, v)
        for k in range(N):
            msg = rows[h * N + k][1]
            assert list(msg.name) == list(model.joint_names)
            np.testing.assert_allclose(msg.effort, expected[k], rtol=1e-9, atol=1e-9)
    return rows


def test_an_arm_that_gets_heavier_halfway(tmp_path):
    light_model = rbd_ros.load_model(ARM)
    heavy_urdf = heavier(ARM)
    heavy_model = rbd_ros.load_model(heavy_urdf)
    assert heavy_urdf.count('<mass value="6.4"/>') == ARM.count('<mass value="4"/>') > 0
    halves = [(ARM, light_model, *states(light_model, 1)),
              (heavy_urdf, heavy_model, *states(light_model, 2))]
    bag = tmp_path / "bag"
    write(bag, halves)
    rep = replay(bag, tmp_path / "out", acceleration="zero", report_dir=tmp_path / "rep",
                 progress=False, plots=False)
    check_rows(read(tmp_path / "out"), halves)
    # the heavy half's rows are not the light model's: the test tells the models apart
    _, _, q, v, _ = halves[1]
    assert np.abs(pin_torques(ARM, q, v) - pin_torques(heavy_urdf, q, v)).max() > 1.0
    assert rep["messages"] == rep["answered"] == 2 * N and len(rep["segments"]) == 2
    for h, (seg, (urdf, model, q, v, e)) in enumerate(zip(rep["segments"], halves)):
        assert seg["segment"]["first_message"] == h * N
        assert seg["segment"]["last_message"] == h * N + N - 1
        err = pin_torques(urdf, q, v) - e
        for j, row in enumerate(seg["joints"]):
            assert row["n"] == N
            assert row["rms"] == pytest.approx(np.sqrt(np.mean(err[:, j] ** 2)), rel=1e-9)
    saved = json.loads((tmp_path / "rep" / "report.json").read_text())
    assert [s["answered"] for s in saved["segments"]] == [N, N]
    text = (tmp_path / "rep" / "report.txt").read_text()
    assert "2 segments, each evaluated with the description in force" in text
    assert "segment 2: joint_states messages 60-119, description 2" in text


def test_a_change_of_robot_starts_a_new_segment(tmp_path):
    arm = rbd_ros.load_model(ARM)
    other_urdf = renamed(ARM)
    other = rbd_ros.load_model(other_urdf)
    assert set(other.joint_names).isdisjoint(arm.joint_names)
    halves = [(ARM, arm, *states(arm, 3)), (other_urdf, other, *states(arm, 4))]
    bag = tmp_path / "bag"
    write(bag, halves)
    assert main([str(bag), "-o", str(tmp_path / "out"), "--acceleration", "zero",
                 "--no-plots", "--no-progress"]) == 0
    check_rows(read(tmp_path / "out"), halves)
    rep = json.loads((tmp_path / "out_report" / "report.json").read_text())
    assert rep["model"] == f"{arm.name} -> {other.name}"
    assert [[j["name"] for j in s["joints"]] for s in rep["segments"]] == \
        [list(arm.joint_names), list(other.joint_names)]


def test_what_needs_one_description_is_refused_with_the_reason(tmp_path):
    arm = rbd_ros.load_model(ARM)
    heavy = heavier(ARM)
    bag = tmp_path / "bag"
    write(bag, [(ARM, arm, *states(arm, 5)), (heavy, arm, *states(arm, 6))])
    for options, why in (({"identify": "least-squares"}, "--identify fits the parameters "
                          "of one model"),
                         ({"live": True}, "--live plays the bag into one node")):
        with pytest.raises(ReplayError, match=f"'/robot_description' changes 1 times: {why}"):
            replay(bag, tmp_path / "out", progress=False, **options)
        assert not (tmp_path / "out").exists()
    reader = bag_io.open_reader(bag)            # a fleet task's windows: one model, refused
    try:
        with pytest.raises(ReplayError, match="changes 1 times"):
            bag_io.single_description(reader, "/robot_description")
    finally:
        reader.close()
    # --urdf: one description for the whole bag, as asked
    rep = replay(bag, tmp_path / "out", urdf=heavy, acceleration="zero", progress=False,
                 plots=False)
    assert "segments" not in rep and rep["answered"] == 2 * N


def test_the_observer_restarts_with_each_description(tmp_path):
    """A new description restarts the observer (the node's new Robot): r per segment."""
    light, heavy_urdf = rbd_ros.load_model(ARM), heavier(ARM)
    heavy = rbd_ros.load_model(heavy_urdf)
    halves = [(ARM, light, *states(light, 7)), (heavy_urdf, heavy, *states(light, 8))]
    write(tmp_path / "bag", halves)
    rep = replay(tmp_path / "bag", tmp_path / "out", acceleration="zero", progress=False,
                 plots=False, outputs=["external_torques", "collision"],
                 collision_thresholds=1e3, report_dir=tmp_path / "rep")
    rows = read(tmp_path / "out")["/rbd_dynamics/external_torques"]
    assert len(rows) == 2 * N
    for h, (_, model, q, v, e) in enumerate(halves):
        msgs = [m for _, m in rows[h * N:(h + 1) * N]]
        # each segment's observer is new: its times run from the segment's first stamp,
        # differences taken in integer nanoseconds
        # (rbd_ros.contact.detection.MomentumObserver.seconds)
        ns = np.array([m.header.stamp.sec * 10 ** 9 + m.header.stamp.nanosec for m in msgs])
        t = (ns - ns[0]) * 1e-9
        r, restarted, _ = rbd_ros.contact.detection.observe(model, t, q, v, e, 50.0, max_gap=0.5)
        assert restarted[0] and not restarted[1:].any()
        np.testing.assert_allclose([m.effort for m in msgs], r, rtol=1e-12, atol=1e-12)
        assert not np.any(msgs[0].effort)                 # r = 0: (re)started
    assert [s["collisions"]["events"] for s in rep["segments"]] == [[], []]
    assert "/rbd_dynamics/collision" not in read(tmp_path / "out")


def test_identify_payload_on_a_changing_description_is_refused(tmp_path, capsys):
    """--identify-payload needs one model, as --identify: refused (59296e2: exit 0, no entry)."""
    arm = rbd_ros.load_model(ARM)
    bag = tmp_path / "bag"
    write(bag, [(ARM, arm, *states(arm, 5)), (heavier(ARM), arm, *states(arm, 6))])
    with pytest.raises(ReplayError, match="changes 1 times: --identify-payload estimates the "
                       "payload of one model"):
        replay(bag, tmp_path / "out", progress=False, identify_payload="link7")
    assert not (tmp_path / "out").exists()
    assert main([str(bag), "-o", str(tmp_path / "out"), "--no-progress",
                 "--identify-payload", "link7"]) == 2
    assert "--identify-payload estimates the payload of one model" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()
