"""
``rbd_retime`` and the JointTrajectory YAML files it reads and writes (issue 25).

The command's answer is checked against ``rbd_ros.retime`` on the same inputs (itself
checked against Pinocchio and toppra in ``test_retime``) and, for a mimic follower, against
the URDF's multiplier and offset; the file format round-trips exactly; hostile files and
arguments get exit status 2 and one short line; the parser is fuzzed with hypothesis.
"""
import math
import os

import numpy as np
import pytest
import yaml
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

import rbd_ros
from rbd_ros.tools import retime as retime_cli
from rbd_ros.formats import trajectory_yaml
from helpers import get_robot
from mimic_oracle import PAIR, hand_urdf
from retime_paths import waypoints

pytest.importorskip("toppra")


def write_path(tmp_path, names, w, name="path.yaml"):
    path = tmp_path / name
    doc = {"joint_names": list(names), "points": [{"positions": [float(x) for x in row]}
                                                  for row in w]}
    path.write_text(yaml.safe_dump(doc))
    return str(path)


def test_cli_matches_the_core(tmp_path, capsys):
    robot = get_robot("arm7")
    m = robot.model
    w = waypoints(m, 6, 11)
    perm = np.random.default_rng(12).permutation(m.nv)
    names = [m.joint_names[k] for k in perm]
    src = write_path(tmp_path, names, w[:, perm])
    out = str(tmp_path / "timed.yaml")
    acc = np.linspace(10.0, 30.0, m.nv)                 # per joint, in the file's order
    code = retime_cli.main([robot.path, src, "-o", out, "--effort-scale", "0.5",
                            "--sample-period", "0.01", "--grid", "300",
                            "--acceleration-limit", *map(str, acc)])
    assert code == 0, capsys.readouterr().err
    got = trajectory_yaml.read(out)
    core = rbd_ros.retime(m, w, effort_scale=0.5, grid=300, sample_period=0.01,
                          acceleration_limits=acc[np.argsort(perm)])
    assert got.joint_names == names
    assert np.allclose(got.t, core.t, rtol=0, atol=1e-9)
    for field, x in (("positions", core.q), ("velocities", core.v),
                     ("accelerations", core.a), ("effort", core.tau)):
        assert np.array_equal(got.fields[field], x[:, perm]), field
    assert not [p for p in os.listdir(tmp_path) if "partial" in p]


def test_cli_mimic_follower(tmp_path):
    xml = hand_urdf(PAIR, seed=2, name="pair").replace('effort="10"', 'effort="200"')
    urdf = tmp_path / "pair.urdf"
    urdf.write_text(xml)
    m = rbd_ros.load_model(xml)
    w = waypoints(m, 3, 13, spread=0.5)
    src = write_path(tmp_path, ["j3"] + list(m.joint_names),
                     np.hstack([np.zeros((3, 1)), w]))
    out = str(tmp_path / "timed.yaml")
    assert retime_cli.main([str(urdf), src, "-o", out, "--sample-period", "0.02"]) == 0
    got = trajectory_yaml.read(out)
    q, tau = got.fields["positions"], got.fields["effort"]
    j2 = got.joint_names.index("j2")
    assert np.allclose(q[:, 0], -0.5 * q[:, j2] + 0.2)     # PAIR: j3 = -0.5 j2 + 0.2
    assert np.all(tau[:, 0] == 0)


def test_yaml_round_trip(tmp_path):
    rng = np.random.default_rng(14)
    traj = trajectory_yaml.Trajectory(
        ["a", "b"], np.array([0.0, 0.25, 1.5, 3.000000001]),
        {f: rng.normal(size=(4, 2)) for f in trajectory_yaml.FIELDS}, "world")
    path = str(tmp_path / "t.yaml")
    trajectory_yaml.write(path, traj)
    back = trajectory_yaml.read(path)
    assert back.joint_names == traj.joint_names and back.frame_id == "world"
    assert np.allclose(back.t, traj.t, rtol=0, atol=1e-9)
    for f in trajectory_yaml.FIELDS:
        assert np.array_equal(back.fields[f], traj.fields[f])
    # the message's layout: a header and every field of every point
    doc = yaml.safe_load(open(path))
    assert set(doc) == {"header", "joint_names", "points"}
    assert set(doc["points"][0]) == set(trajectory_yaml.FIELDS) | {"time_from_start"}


HOSTILE = {
    "not YAML": "joint_names: [a\npoints: {",
    "not a JointTrajectory": "[1, 2, 3]",
    "joint_names": "joint_names: 5\npoints: []",
    "duplicates": "joint_names: [joint1, joint1]\npoints: []",
    "must have 7": "joint_names: [joint1, joint2, joint3, joint4, joint5, joint6, joint7]\n"
                   "points:\n- positions: [1, 2]\n",
    "not a finite number": "joint_names: [joint1, joint2, joint3, joint4, joint5, joint6, "
                           "joint7]\npoints:\n- positions: [.nan, 0, 0, -1, 0, 1, 0]\n",
    "time_from_start": "joint_names: [joint1]\npoints:\n- positions: [0]\n"
                       "  time_from_start: {sec: true}\n",
    "missing": "joint_names: [joint1]\npoints:\n- positions: [0]\n- positions: [1]\n",
    "unknown": "joint_names: [joint1, joint2, joint3, joint4, joint5, joint6, joint7, "
               "nope]\npoints: []\n",
    "at least two": "joint_names: [joint1, joint2, joint3, joint4, joint5, joint6, joint7]\n"
                    "points:\n- positions: [0, 0, 0, -1, 0, 1, 0]\n",
    "same configuration": "joint_names: [joint1, joint2, joint3, joint4, joint5, joint6, "
                          "joint7]\npoints:\n- positions: [0, 0, 0, -1, 0, 1, 0]\n"
                          "- positions: [0, 0, 0, -1, 0, 1, 0]\n",
    "some points only": "joint_names: [joint1]\npoints:\n- positions: [0]\n"
                        "  velocities: [1]\n- positions: [1]\n",
}


@pytest.mark.parametrize("word", sorted(HOSTILE))
def test_hostile_files(tmp_path, capsys, word):
    src = tmp_path / "bad.yaml"
    src.write_text(HOSTILE[word])
    out = tmp_path / "out.yaml"
    code = retime_cli.main([get_robot("arm7").path, str(src), "-o", str(out)])
    err = capsys.readouterr().err.strip()
    assert code == retime_cli.EXIT_BAD_INPUT and word in err and len(err) < 300, err
    assert "\n" not in err and not out.exists()


def test_hostile_arguments(tmp_path, capsys):
    m = get_robot("arm7").model
    src = write_path(tmp_path, m.joint_names, waypoints(m, 3, 15))
    out = str(tmp_path / "out.yaml")
    urdf = get_robot("arm7").path
    for args, word in (([str(tmp_path / "none.urdf"), src], "none.urdf"),
                       ([urdf, src, "--effort-scale", "0"], "--effort-scale"),
                       ([urdf, src, "--effort-scale", "0.01"], "infeasible"),
                       ([urdf, src, "--acceleration-limit", "1", "2"], "acceleration"),
                       ([urdf, src, "--sample-period", "1e-9"], "at most"),
                       ([urdf, src, "--joint-parameters", str(tmp_path / "x.json")],
                        "cannot read")):
        assert retime_cli.main(args + ["-o", out]) == 2, args
        assert word in capsys.readouterr().err
    assert not os.path.exists(out)


_scalars = st.one_of(st.none(), st.booleans(), st.integers(-3, 3),
                     st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=3))
_values = st.recursive(_scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.sampled_from(
        ["joint_names", "points", "positions", "velocities", "effort", "time_from_start",
         "sec", "nanosec", "header", "frame_id"]), inner, max_size=4)), max_leaves=12)


@seed(25)
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(doc=_values)
def test_parse_fuzz(doc):
    """Any document: a Trajectory of finite numbers and unique names, or a short ValueError."""
    try:
        traj = trajectory_yaml.parse(doc)
    except ValueError as exc:
        assert len(str(exc)) < 200
        return
    assert len(set(traj.joint_names)) == len(traj.joint_names)
    assert all(np.isfinite(x).all() for x in traj.fields.values())
    assert all(math.isfinite(t) for t in traj.t)
