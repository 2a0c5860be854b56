"""
Check rbd_replay on bags written with rosbags.

The bags are replayed and checked against the core message by message and against an
independent computation of the report's numbers.
"""
import filecmp
import functools
import glob
import os
import sys

import numpy as np
import pytest

from scipy.signal import savgol_filter  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "scripts"))

import rbd_ros  # noqa: E402
import rbd_ros.outputs  # noqa: E402
from rbd_ros.outputs import BY_NAME, NAMES as OUTPUTS  # noqa: E402
from rbd_ros.replay import ReplayError, bag_io, replay, savgol_derivative  # noqa: E402
from rbd_ros.replay.cli import main  # noqa: E402
from rbd_ros.replay.dynamics import templates  # noqa: E402
from rbd_ros.outputs import whole_body  # noqa: E402
from helpers import ros_domain_id  # noqa: E402
from messages import odometry_cdr  # noqa: E402
import make_example_bag as mk  # noqa: E402
from bag_records import H, STORE, T, js, read  # noqa: E402


def write_raw(path, records, urdf=None, extra=()):
    """Write a bag; records: [(log ns, raw JointState)], extra: [(topic, msgtype, [(ns, raw)])]."""
    w = bag_io.open_writer(path, "mcap")
    try:
        if urdf:
            c = bag_io.add_connection(w, "/robot_description", bag_io.STRING)
            w.write(c, 1, STORE.serialize_cdr(STORE.types[bag_io.STRING](data=urdf),
                                              bag_io.STRING))
        c = bag_io.add_connection(w, "/joint_states", bag_io.JOINT_STATE)
        items = [(ns, c, raw) for ns, raw in records]
        for topic, msgtype, recs in extra:
            ce = bag_io.add_connection(w, topic, msgtype)
            items += [(ns, ce, raw) for ns, raw in recs]
        for ns, con, raw in sorted(items, key=lambda x: x[0]):
            w.write(con, ns, raw)
    finally:
        w.close()


@pytest.fixture(scope="module")
def arm_bag(tmp_path_factory):
    path = tmp_path_factory.mktemp("bags") / "arm"
    urdf, model, t, q, v, e, _ = mk.simulate("rbd_arm7", duration=2.0, rate=100.0, seed=3)
    mk.write_bag(path, urdf, model.joint_names, t, q, v, e)
    return path, model, t, q, v, e


def test_msg_copies_are_the_interfaces():
    for f in glob.glob(os.path.join(ROOT, "rbd_ros_interfaces", "msg", "*.msg")):
        assert filecmp.cmp(f, os.path.join(bag_io.MSG_DIR, os.path.basename(f)), shallow=False)


@pytest.mark.parametrize("robot,floating", [("rbd_arm7", False), ("rbd_quadruped", True)])
def test_templates_are_rosbags_bytes(robot, floating):
    model = rbd_ros.load_model(rbd_ros.robots.path(robot), floating_base=floating)
    rng = np.random.default_rng(0)
    names = list(rbd_ros.outputs.dof_names(model))
    nv, nj = model.nv, len(model.joint_names)
    for name, tpl in templates(model, OUTPUTS).items():
        if name in whole_body.NAMES:      # built whole, not patched: test_replay_whole_body
            continue
        sec, nsec = np.array([5, -3]), np.array([7, 999999999])
        if name == "torques":
            arrays = (rng.normal(size=(2, nj)),)
        elif name == "accelerations":
            arrays = (rng.normal(size=(2, nv)),)
        elif name == "inverse_inertia":
            arrays = (rng.normal(size=(2, nv, nv)),)
        else:
            arrays = (rng.normal(size=(2, nv, nv)), rng.normal(size=(2, nv, nv)))
        raws = tpl.encode(sec, nsec, *arrays)
        cls = STORE.types[BY_NAME[name].msgtype]
        for k in range(2):
            header = H(stamp=T(sec=int(sec[k]), nanosec=int(nsec[k])), frame_id="")
            if name == "torques":
                msg = cls(header=header, name=list(model.joint_names), position=np.empty(0),
                          velocity=np.empty(0), effort=arrays[0][k])
            elif name == "accelerations":
                msg = cls(header=header, names=names, data=arrays[0][k])
            elif name == "inverse_inertia":
                msg = cls(header=header, names=names, rows=nv, cols=nv,
                          data=arrays[0][k].ravel())
            else:
                msg = cls(header=header, names=names, size=nv, d_dq=arrays[0][k].ravel(),
                          d_dv=arrays[1][k].ravel())
            assert raws[k] == bytes(STORE.serialize_cdr(msg, cls.__msgtype__)), name


def test_savgol_derivative():
    rng = np.random.default_rng(1)
    dt = 0.01
    t = 3.0 + dt * np.arange(200)
    y = np.sin(3 * t)[:, None] + rng.normal(0, 1e-3, (200, 2))
    for window, order in ((11, 3), (7, 2), (21, 4)):
        ref = savgol_filter(y, window, order, deriv=1, delta=dt, axis=0, mode="interp")
        np.testing.assert_allclose(savgol_derivative(t, y, window, order), ref, atol=1e-8)
    # non-uniform times: exact on a cubic
    t = np.cumsum(rng.uniform(0.005, 0.015, 100))
    y = (1 + 2 * t - t ** 2 + 0.5 * t ** 3)[:, None]
    np.testing.assert_allclose(savgol_derivative(t, y, 11, 3)[:, 0],
                               2 - 2 * t + 1.5 * t ** 2, rtol=1e-7, atol=1e-7)


def test_offline_matches_core_and_report(arm_bag, tmp_path):
    path, model, t, q, v, e = arm_bag
    rep = replay(path, tmp_path / "out", outputs=OUTPUTS, report_dir=tmp_path / "r",
                 progress=False)
    assert rep["answered"] == len(t) and rep["skipped_total"] == 0
    assert len(glob.glob(str(tmp_path / "r" / "torque_*.png"))) == 7
    out, inp = read(tmp_path / "out"), read(path)
    for topic in inp:                                           # inputs copied as they were
        assert [s for s, _ in out[topic]] == [s for s, _ in inp[topic]]
    # independent: scipy's Savitzky-Golay on the recorded velocities, the core per message
    a = savgol_filter(v, 11, 3, deriv=1, delta=0.01, axis=0, mode="interp")
    names = list(rbd_ros.outputs.dof_names(model))
    tau_all = []
    for k in range(len(t)):
        stamp_k = inp["/joint_states"][k][1].header.stamp
        tau = rbd_ros.rnea(model, q[k], v[k], a[k])
        tau_all.append(tau)
        msg = out["/rbd_dynamics/torques"][k][1]
        assert (msg.header.stamp.sec, msg.header.stamp.nanosec) == (stamp_k.sec,
                                                                    stamp_k.nanosec)
        assert list(msg.name) == list(model.joint_names)
        np.testing.assert_allclose(msg.effort, tau, atol=1e-8 * (1 + np.abs(tau).max()))
        acc = out["/rbd_dynamics/accelerations"][k][1]
        assert list(acc.names) == names
        np.testing.assert_allclose(acc.data, rbd_ros.aba(model, q[k], v[k], e[k]), atol=1e-9)
        np.testing.assert_allclose(out["/rbd_dynamics/inverse_inertia"][k][1].data,
                                   rbd_ros.minv(model, q[k]).ravel(), atol=1e-9)
        dq, dv, _ = rbd_ros.rnea_derivatives(model, q[k], v[k], a[k])
        d = out["/rbd_dynamics/rnea_derivatives"][k][1]
        np.testing.assert_allclose(d.d_dq, dq.ravel(), atol=1e-8)
        np.testing.assert_allclose(d.d_dv, dv.ravel(), atol=1e-8)
        dq, dv, _ = rbd_ros.aba_derivatives(model, q[k], v[k], e[k])
        d = out["/rbd_dynamics/aba_derivatives"][k][1]
        np.testing.assert_allclose(d.d_dq, dq.ravel(), atol=1e-7)
        assert d.size == model.nv
    tau_all = np.array(tau_all)
    for j, row in enumerate(rep["joints"]):
        err = tau_all[:, j] - e[:, j]
        assert row["n"] == len(t)
        assert row["rms"] == pytest.approx(np.sqrt(np.mean(err ** 2)), rel=1e-6)
        assert row["max"] == pytest.approx(np.abs(err).max(), rel=1e-6)
        assert row["corr"] == pytest.approx(np.corrcoef(tau_all[:, j], e[:, j])[0, 1],
                                            rel=1e-6)
        assert row["rms"] > 1e-3                     # the inertias differ: a real error


def test_partial_messages_and_bad_input(tmp_path):
    model = rbd_ros.load_model(rbd_ros.robots.path("rbd_arm7"))
    names = model.joint_names
    with open(rbd_ros.robots.path("rbd_arm7")) as f:
        urdf = f.read()
    rng = np.random.default_rng(5)
    n = 60
    t = 0.01 * np.arange(n)
    q, v, a = mk.trajectory(model, t, seed=2)
    e = rng.normal(size=(n, 7))
    recs, ns0 = [], 10**18
    for k in range(n):
        ns = ns0 + int(t[k] * 1e9)
        qk, vk = q[k].copy(), v[k].copy()
        if k == 20:
            qk[1] = np.nan                                   # malformed: skipped
        if k == 30:
            vk[2] = np.nan                                   # velocity unknown: skipped
        recs.append((ns, js(names[:4], qk[:4], vk[:4], e[k, :4], ns)))      # two publishers
        recs.append((ns + 1000, js(names[4:] + ("extra",), np.r_[qk[4:], 0], np.r_[vk[4:], 0],
                                   np.r_[e[k, 4:], 0], ns + 1000)))
    recs.append((ns0 + 10**9, js(names, q[0], q[0][:3], e[0], ns0 + 10**9)))   # bad lengths
    path = tmp_path / "split"
    write_raw(path, recs, urdf)
    rep = replay(path, tmp_path / "o", progress=False, plots=False)
    assert rep["messages"] == 2 * n + 1
    assert rep["skipped"]["incomplete"] == 1                     # the first half message
    assert rep["skipped"]["malformed"] == 2
    assert rep["skipped"]["velocity unknown"] == 2
    assert rep["unknown_joint_names"] == ["extra"]
    assert rep["answered"] + rep["skipped_total"] == rep["messages"]
    # independent merge: the latest value of each joint, message by message
    latest, expected = {}, []
    for _, msg in read(path)["/joint_states"]:
        if len(msg.velocity) != len(msg.name) or not np.isfinite(msg.position).all():
            continue                                         # malformed: nothing merged
        latest.update({nm: (p, vv) for nm, p, vv in zip(msg.name, msg.position, msg.velocity)})
        if all(nm in latest and np.isfinite(latest[nm][1]) for nm in names):
            expected.append([latest[nm][0] for nm in names])
    ticks = rep["ticks"]
    np.testing.assert_array_equal(ticks.q, np.array(expected))
    out = read(tmp_path / "o")["/rbd_dynamics/torques"]
    assert len(out) == rep["answered"] == len(expected)
    for i in range(len(out)):
        tau = rbd_ros.rnea(model, ticks.q[i], ticks.v[i], ticks.a[i])
        np.testing.assert_allclose(out[i][1].effort, tau, atol=1e-9)


def test_errors(arm_bag, tmp_path, capsys):
    path = arm_bag[0]
    with pytest.raises(ReplayError, match="no topic '/nope'.*joint_states"):
        replay(path, tmp_path / "a", topic="/nope")
    with pytest.raises(ReplayError, match="never appear|no joint of the URDF"):
        replay(path, tmp_path / "b", urdf=rbd_ros.robots.path("rbd_quadruped"))
    with pytest.raises(ReplayError, match="Odometry"):
        replay(path, tmp_path / "c", floating_base=True)
    planar = os.path.join(ROOT, "test", "urdf", "branched_planar.urdf")
    with pytest.raises(ReplayError, match="cannot load the URDF: .*3-dof base .*planar"):
        replay(path, tmp_path / "p", urdf=planar)
    with pytest.raises(ReplayError, match="no such bag"):
        replay(tmp_path / "missing", tmp_path / "d")
    assert main([str(path), "-o", str(tmp_path / "e"), "--topic", "/x"]) == 2
    assert "no topic '/x'" in capsys.readouterr().err
    assert main([str(path), "-o", str(tmp_path / "f"), "--no-plots"]) == 0


def test_floating_base_from_odometry(tmp_path):
    model = rbd_ros.load_model(rbd_ros.robots.path("rbd_quadruped"), floating_base=True)
    n, dt = 40, 0.01
    rng = np.random.default_rng(7)
    recs, odoms, base = [], [], []
    for k in range(n):
        ns = 10**18 + int(k * dt * 1e9)
        quat = np.r_[0.1 * np.sin(k * dt), 0, 0, 1]
        quat /= np.linalg.norm(quat)
        x = np.r_[rng.normal(size=3), quat, np.sin(k * dt) * np.ones(6)]
        base.append(x)
        odoms.append((ns, odometry_cdr(STORE, x, ns // 10**9, ns % 10**9)))
        recs.append((ns + 10, js(model.joint_names, rng.normal(size=12), np.cos(k * dt) *
                                 np.ones(12), rng.normal(size=12), ns + 10)))
    path = tmp_path / "quad"
    write_raw(path, recs, extra=[("/odom", bag_io.ODOMETRY, odoms)])
    rep = replay(path, tmp_path / "o", urdf=rbd_ros.robots.path("rbd_quadruped"),
                 floating_base=True, progress=False, plots=False)
    assert rep["answered"] == n
    t = rep["ticks"]
    base = np.array(base)
    np.testing.assert_array_equal(t.q[:, :7], base[:, :7])
    np.testing.assert_array_equal(t.v[:, :6], base[:, 7:])
    a_ref = savgol_filter(base[:, 7:], 11, 3, deriv=1, delta=dt, axis=0, mode="interp")
    np.testing.assert_allclose(t.a[:, :6], a_ref, atol=1e-8)
    out = read(tmp_path / "o")["/rbd_dynamics/torques"]
    for i in range(n):
        tau = rbd_ros.rnea(model, t.q[i], t.v[i], t.a[i])
        np.testing.assert_allclose(out[i][1].effort, tau[6:], atol=1e-9)


def test_live_matches_offline(tmp_path, monkeypatch):
    pytest.importorskip("rclpy")
    pytest.importorskip("rbd_ros_interfaces.msg")
    monkeypatch.setenv("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    monkeypatch.setenv("ROS_DOMAIN_ID", ros_domain_id())
    # the player waits for every answer, one message at a time (the node answers each):
    # its 2 s per message is a user's default, too short a deadline on a loaded machine
    from rbd_ros.replay import live
    monkeypatch.setattr(live, "play", functools.partial(live.play, timeout=30.0))
    urdf, model, t, q, v, e, _ = mk.simulate("rbd_arm7", duration=0.4, rate=100.0, seed=4)
    path = tmp_path / "live_in"
    mk.write_bag(path, urdf, model.joint_names, t, q, v, e)
    rep = replay(path, tmp_path / "live_out", outputs=OUTPUTS, live=True, rate=4,
                 progress=False, plots=False)
    live = rep["live"]
    assert live["expected"] == 5 * len(t)
    assert live["unanswered"] == 0 and live["unexpected"] == 0
    assert live["agree"] and live["max_diff"] <= 1e-9
    out = read(tmp_path / "live_out")
    assert len(out["/rbd_dynamics/torques"]) == len(t)
    offline = replay(path, tmp_path / "off_out", outputs=OUTPUTS, progress=False,
                     plots=False)
    off = read(tmp_path / "off_out")
    # the live bag has the node's dynamics outputs; the offline one also the whole-body ones
    assert {x for x in out if x.startswith("/rbd_dynamics/")} <= set(off)
    for topic in out:
        if topic.startswith("/rbd_dynamics/"):
            for (_, a), (_, b) in zip(out[topic], off[topic]):
                for f in ("effort", "data", "d_dq", "d_dv"):
                    if hasattr(a, f):
                        np.testing.assert_allclose(getattr(a, f), getattr(b, f), atol=1e-9,
                                                   rtol=1e-9)
    assert offline["answered"] == rep["answered"]


def test_mimic_followers_in_the_bag(tmp_path):
    # joint_state_publisher records every joint, the followers too: they are the model's
    # coupled joints, not unknown ones, and never fill a leader's value (as in the node)
    from mimic_oracle import coupling_from_xml, hand_urdf
    urdf = hand_urdf()
    model = rbd_ros.load_model(urdf)
    followers, _ = coupling_from_xml(urdf)              # read from the XML, not by rbd_ros
    assert followers and set(followers).isdisjoint(model.joint_names)
    names = model.joint_names + tuple(followers)
    rng = np.random.default_rng(8)
    n = 40
    q = np.array([model.random_configuration(rng) for _ in range(n)])
    v, e = rng.uniform(-1, 1, (n, model.nv)), rng.uniform(-2, 2, (n, model.nv))
    col = {name: k for k, name in enumerate(model.joint_names)}
    off = {5: 0.01, 17: -0.2}                            # messages whose first follower is off
    recs, ns0 = [], 10**18
    for k in range(n):
        fq = [m * q[k, col[lead]] + o for lead, m, o in followers.values()]
        fv = [m * v[k, col[lead]] for lead, m, _ in followers.values()]
        fq[0] += off.get(k, 0.0)
        ns = ns0 + k * 10**7
        effort = np.r_[e[k], np.zeros(len(fq))]
        recs.append((ns, js(names, np.r_[q[k], fq], np.r_[v[k], fv], effort, ns)))
    recs.append((ns0 + n * 10**7, js(tuple(followers), fq, fv, fv, ns0 + n * 10**7)))
    write_raw(tmp_path / "hand", recs, urdf)
    rep = replay(tmp_path / "hand", tmp_path / "o", progress=False, plots=False,
                 acceleration="zero")
    assert rep["unknown_joint_names"] == []
    assert rep["skipped"] == {"no model joint": 1}      # the message of followers only
    np.testing.assert_array_equal(rep["ticks"].q, q)    # the leaders' values, never a follower's
    mimic = rep["mimic_followers"]
    assert mimic["messages"] == len(off)
    first = next(iter(followers))
    assert mimic["max"][first] == pytest.approx(0.2, rel=1e-9)
    assert set(mimic["max"]) == set(followers)
    assert max(v for name, v in mimic["max"].items() if name != first) < 1e-12
    out = read(tmp_path / "o")["/rbd_dynamics/torques"]
    assert len(out) == n
    for k in (0, 17, n - 1):
        tau = rbd_ros.rnea(model, q[k], v[k], np.zeros(model.nv))
        np.testing.assert_allclose(out[k][1].effort, tau, rtol=1e-12, atol=1e-12)


def test_options_are_one_frozen_object(arm_bag, tmp_path):
    """replay(bag, out, ReplayOptions(...)) is replay(bag, out, **the same settings)."""
    import dataclasses
    from rbd_ros.replay import ReplayOptions
    path = arm_bag[0]
    options = ReplayOptions(window=15, order=2, plots=False)
    with pytest.raises(dataclasses.FrozenInstanceError):
        options.window = 21
    with pytest.raises(TypeError, match="windw"):
        replay(path, tmp_path / "typo", windw=15)
    given = replay(path, tmp_path / "options", options, progress=False)
    keywords = replay(path, tmp_path / "keywords", progress=False, window=15, order=2,
                      plots=False)
    over = replay(path, tmp_path / "over", options, progress=False, window=11)
    np.testing.assert_array_equal(given["torques"], keywords["torques"])
    np.testing.assert_array_equal(given["ticks"].a, keywords["ticks"].a)
    assert not np.array_equal(over["ticks"].a, given["ticks"].a)    # window 11 over 15
    assert options.window == 15                                       # unchanged by it
