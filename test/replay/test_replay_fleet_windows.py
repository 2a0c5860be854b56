"""
Time windows of a bag (``rbd_replay --no-bag`` splitting) on harder recordings (issue 15).

The oracle is the unsplit evaluation of the same bag (and the serial replay): a floating
base with odometry, joint_states split over two publishers with jittered stamps, and a
joint whose last value is older than any window's overlap (the window must say so, and the
fleet then evaluates the bag unsplit).
"""
import json
import os
import sys

import numpy as np
import pytest

import rbd_ros
from rbd_ros.replay import bag_io, cli, fleet_inputs, fleet_tasks

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "test"))

from messages import odometry_cdr  # noqa: E402

STORE = bag_io.typestore()
JS = STORE.types[bag_io.JOINT_STATE]


def js(names, q, v, e, ns):
    T, H = STORE.types["builtin_interfaces/msg/Time"], STORE.types["std_msgs/msg/Header"]
    return STORE.serialize_cdr(JS(header=H(stamp=T(sec=ns // 10**9, nanosec=ns % 10**9),
                                           frame_id=""), name=list(names),
                                  position=np.asarray(q, float), velocity=np.asarray(v, float),
                                  effort=np.asarray(e, float)), bag_io.JOINT_STATE)


def write(path, urdf, records, odometry=(), description_at=None):
    w = bag_io.open_writer(path, "mcap")
    try:
        c = bag_io.add_connection(w, "/robot_description", bag_io.STRING)
        at = records[0][0] - 10**6 if description_at is None else description_at
        w.write(c, at,                              # latched: just before the first state
                STORE.serialize_cdr(STORE.types[bag_io.STRING](data=urdf), bag_io.STRING))
        cj = bag_io.add_connection(w, "/joint_states", bag_io.JOINT_STATE)
        items = [(ns, cj, raw) for ns, raw in records]
        if odometry:
            co = bag_io.add_connection(w, "/odom", bag_io.ODOMETRY)
            items += [(ns, co, raw) for ns, raw in odometry]
        for ns, con, raw in sorted(items, key=lambda x: x[0]):
            w.write(con, ns, raw)
    finally:
        w.close()


def spec_of(bag, floating_base=False):
    info = fleet_inputs.survey(bag, "/joint_states")
    return info, {"bag": str(bag), "topic": "/joint_states", "urdf": None,
                  "description_topic": "/robot_description", "floating_base": floating_base,
                  "odom_topic": "/odom", "mimic": "coupled", "window": 11, "order": 3,
                  "acceleration": "estimate", "batch_size": 50,
                  "rule": {"max_joint_age": 0.5, "unknown_velocity": "skip"},
                  "identify": not floating_base, "kinds": ("viscous", "coulomb", "offset"),
                  "epsilon": 0.01, "start": info["start"], "end": info["end"]}


def split(bag, size, floating_base=False):
    """(whole, [window partials]) of the bag cut into windows of about ``size`` messages."""
    info, spec = spec_of(bag, floating_base)
    spans, overlap = fleet_inputs.windows(info, size, 11, 0.5)
    assert len(spans) > 2
    return fleet_tasks.evaluate(spec), [fleet_tasks.evaluate(dict(spec, lo=lo, hi=hi,
                                                                  overlap=overlap))
                                        for lo, hi in spans]


def assert_same(whole, parts):
    assert not any(p.retry for p in parts)
    merged = parts[0]
    for p in parts[1:]:
        merged = merged.merge(p)
    assert (merged.messages, merged.answered, merged.skipped) == \
        (whole.messages, whole.answered, whole.skipped)
    for mine, theirs in zip(merged.errors.joints(whole.joints),
                            whole.errors.joints(whole.joints)):
        for key in ("n", "rms", "max", "corr", "rms_meas"):
            np.testing.assert_allclose(mine[key], theirs[key], rtol=1e-12, err_msg=key)
    if whole.stats is not None:
        np.testing.assert_allclose(merged.stats.gram, whole.stats.gram, rtol=0,
                                   atol=1e-11 * np.abs(whole.stats.gram).max())


def test_floating_base_windows(tmp_path):
    path = rbd_ros.robots.path("rbd_quadruped")
    model = rbd_ros.load_model(path, floating_base=True)
    with open(path) as f:
        urdf = f.read()
    rng = np.random.default_rng(1)
    records, odometry = [], []
    for k in range(300):
        ns = 10**18 + k * 10**7
        quat = np.r_[0.1 * np.sin(0.01 * k), 0, 0, 1]
        x = np.r_[0.1 * np.sin(0.02 * k) * np.ones(3), quat / np.linalg.norm(quat),
                  np.sin(0.01 * k) * np.ones(6)]
        odometry.append((ns, odometry_cdr(STORE, x, ns // 10**9, ns % 10**9)))
        n = len(model.joint_names)
        records.append((ns + 10, js(model.joint_names, rng.normal(0, 0.3, n),
                                    np.cos(0.01 * k) * np.ones(n), rng.normal(size=n),
                                    ns + 10)))
    write(tmp_path / "quad", urdf, records, odometry)
    whole, parts = split(tmp_path / "quad", 60, floating_base=True)
    assert whole.answered > 250
    assert_same(whole, parts)


def test_two_publishers_jittered_stamps(tmp_path):
    model = rbd_ros.load_model(rbd_ros.robots.path("rbd_arm7"))
    with open(rbd_ros.robots.path("rbd_arm7")) as f:
        urdf = f.read()
    rng = np.random.default_rng(2)
    names, records, ns = list(model.joint_names), [], 10**18
    for k in range(400):
        ns += int(rng.uniform(4e6, 6e6))                         # 200 Hz, jittered
        part = slice(0, 4) if k % 2 else slice(4, 7)
        t = ns * 1e-9 - 1e9
        q = np.sin(t * np.arange(1, 8) * 0.7)
        v = 0.7 * np.arange(1, 8) * np.cos(t * np.arange(1, 8) * 0.7)
        records.append((ns, js(names[part], q[part], v[part], rng.normal(size=7)[part], ns)))
    write(tmp_path / "arm", urdf, records)
    whole, parts = split(tmp_path / "arm", 70)
    assert whole.answered > 350
    assert_same(whole, parts)


def test_quiet_windows_add_nothing(tmp_path):
    """A description logged long before the states: windows start with the states."""
    model = rbd_ros.load_model(rbd_ros.robots.path("rbd_arm7"))
    with open(rbd_ros.robots.path("rbd_arm7")) as f:
        urdf = f.read()
    n, records = len(model.joint_names), []
    for k in range(200):
        ns = 10**12 + k * 10**7
        records.append((ns, js(model.joint_names, np.full(n, np.sin(0.05 * k)),
                               np.full(n, np.cos(0.05 * k)), np.ones(n), ns)))
    write(tmp_path / "arm", urdf, records, description_at=1)
    whole, parts = split(tmp_path / "arm", 40)
    assert min(p.messages for p in parts) > 30 and whole.answered == 200
    assert_same(whole, parts)


def test_a_window_without_a_joints_value_runs_unsplit(tmp_path):
    """A joint last heard of long before a window: the window asks, the fleet runs it whole."""
    model = rbd_ros.load_model(rbd_ros.robots.path("rbd_arm7"))
    with open(rbd_ros.robots.path("rbd_arm7")) as f:
        urdf = f.read()
    names, records = list(model.joint_names), []
    for k in range(300):
        ns = 10**18 + k * 10**7
        carried = names if k < 20 else names[:6]         # joint7 stops being published
        n = len(carried)
        records.append((ns, js(carried, np.full(n, 0.01 * k), np.full(n, 1.0),
                               np.zeros(n), ns)))
    bag = tmp_path / "arm"
    write(bag, urdf, records)
    _, parts = split(bag, 60)
    assert any(p.retry for p in parts)
    out = tmp_path / "fleet"
    assert cli.main([str(bag), str(bag / ".." / "arm"), "-o", str(out), "--no-bag",
                     "--workers", "1", "--split-messages", "60", "--no-progress",
                     "--no-plots", "--max-joint-age", "0"]) == 0
    with open(out / "fleet_report" / "fleet.json") as f:
        (row,) = json.load(f)["bags"]                    # the same bag named twice: once
    rep = cli.replay(bag, tmp_path / "serial", progress=False, max_joint_age=0)
    assert row["messages"] == rep["messages"] and row["skipped"] == rep["skipped"]
    assert row["answered"] == rep["answered"] == 300
    for mine, theirs in zip(row["joints"], rep["joints"]):
        np.testing.assert_allclose(mine["max"], theirs["max"], rtol=1e-12)


pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")
