"""
The JointTrajectory YAML reader and writer on hostile files (issue 33, C4).

Bounds checked before the work: the file's size, its nesting and number of values (libyaml's
event stream, before any object is built), names × points (before an array is allocated);
libyaml's loader where PyYAML has it; the writer's output rule and mode. The reader is
fuzzed with hypothesis on text (fixed seed, bounded): a Trajectory or one short ValueError.
"""
import math
import os
import stat

import numpy as np
import pytest
import yaml
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

from rbd_ros.formats import text_files, trajectory_yaml


def read_text(tmp_path, text, name="t.yaml"):
    path = tmp_path / name
    path.write_text(text)
    return trajectory_yaml.read(path)


def test_libyaml_loads_where_pyyaml_has_it():
    if yaml.__with_libyaml__:
        assert trajectory_yaml.LOADER is yaml.CSafeLoader
        assert trajectory_yaml.DUMPER is yaml.CSafeDumper


@pytest.mark.parametrize("text, words", [
    ("- " * 100_000 + "x\n", "nested deeper than 16"),                      # block
    ("[" * 20 + "]" * 20, "nested deeper than 16"),                         # flow
    ("[" * 100_000 + "]" * 100_000, "nesting depth"),                       # libyaml's own
    ("joint_names: [a]\npoints:\n" + "- {}\n" * 600_001, "values and collections"),
    ("joint_names: [" + ", ".join(f"j{i}" for i in range(1001)) + "]\npoints: []\n",
     "1001 joint_names: at most 1000"),
    ("joint_names: [" + ", ".join(f"j{i}" for i in range(1000)) + "]\npoints:\n"
     + "- {}\n" * 2001, "2001000 numbers per field"),
    ("joint_names: [a]\npoints:\n- positions: [" + "9" * 400 + "]\n", "not a finite number"),
    ("joint_names: [a]\npoints:\n- positions: [" + "9" * 5000 + "]\n", "cannot construct"),
    ("joint_names: [a]\npoints:\n- positions: [!!float ]\n", "explicit YAML tag"),
    ("joint_names: [a]\npoints:\n- positions: [2001-13-99]\n", "cannot construct"),
])
def test_hostile_documents_refused_in_one_line(tmp_path, text, words):
    with pytest.raises(ValueError) as err:
        read_text(tmp_path, text)
    assert words in str(err.value) and len(str(err.value)) < 200, str(err.value)


def test_size_refused_before_reading(tmp_path):
    path = tmp_path / "big.yaml"
    with open(path, "wb") as f:
        f.truncate(trajectory_yaml.MAX_BYTES + 1)            # sparse: nothing to read
    with pytest.raises(ValueError, match="larger than 8 MiB"):
        trajectory_yaml.read(path)


def test_a_file_at_the_size_limit_reads(tmp_path):
    """The limits leave room for what rbd_excite writes: 6,000 points of 7 joints, all fields."""
    n = 6000
    rng = np.random.default_rng(3)
    traj = trajectory_yaml.Trajectory([f"joint{j}" for j in range(7)], np.arange(n) * 0.01,
                                      {f: rng.normal(size=(n, 7)) for f in trajectory_yaml.FIELDS})
    path = tmp_path / "t.yaml"
    trajectory_yaml.write(path, traj)
    assert os.path.getsize(path) < trajectory_yaml.MAX_BYTES
    back = trajectory_yaml.read(path)
    assert all(np.array_equal(back.fields[f], traj.fields[f]) for f in trajectory_yaml.FIELDS)


def test_writer_mode_and_output_rule(tmp_path):
    traj = trajectory_yaml.Trajectory(["a"], np.zeros(1), {"positions": np.zeros((1, 1))})
    old = os.umask(0o027)
    try:
        trajectory_yaml.write(tmp_path / "t.yaml", traj)
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(tmp_path / "t.yaml").st_mode) == 0o640    # 0o666 & ~0o027
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(ValueError, match="FIFO"):
        trajectory_yaml.write(fifo, traj)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    with pytest.raises(ValueError, match="names a directory"):
        text_files.check_output(str(tmp_path) + os.sep)
    assert sorted(os.listdir(tmp_path)) == ["fifo", "t.yaml"]     # no temporary left


# text built from the layout's own tokens, so that the fuzz reaches the checks past YAML
_TOKENS = ["joint_names:", "points:", "positions:", "velocities:", "effort:",
           "time_from_start:", "sec:", "nanosec:", "header:", "frame_id:", "- ", "[", "]",
           "{", "}", ", ", "\n", "  ", "a", "b", "0", "1.5", "-2", ".nan", ".inf", "1e400",
           "true", "null", "'x'", "&r ", "*r", "!!float ", "!!binary ", "? ", "#", "\t"]


@seed(33)
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=st.one_of(st.lists(st.sampled_from(_TOKENS), max_size=60).map("".join),
                      st.text(max_size=80)))
def test_read_fuzz(tmp_path_factory, text):
    """Any text: a Trajectory of finite numbers and unique names, or one short ValueError."""
    path = tmp_path_factory.mktemp("fuzz") / "t.yaml"
    path.write_text(text, encoding="utf-8", errors="surrogatepass")   # a lone surrogate too
    try:
        traj = trajectory_yaml.read(path)
    except ValueError as exc:
        assert len(str(exc)) < 200 and "\n" not in str(exc), str(exc)
        return
    assert len(set(traj.joint_names)) == len(traj.joint_names)
    assert all(np.isfinite(x).all() for x in traj.fields.values())
    assert all(math.isfinite(t) for t in traj.t)
