"""
``rbd_retime`` and ``rbd_excite`` on hostile arguments and paths (issue 33, C3 to C5).

Run as a user runs them (their console scripts). Each refusal is one line on stderr naming what
is wrong, exit status 2, no traceback, and comes before the work (a timeout far below what
the work took: the design ran 28 s, a 10.8 MB YAML 65 s, ``/dev/zero`` read 5.4 GB, a FIFO
hung forever). Nothing at the output path is replaced unless it is a regular file, and the
files written get the usual mode (0644 under umask 022), not 0600.
"""
import os
import stat
import subprocess
import sys

import numpy as np
import pytest
import yaml

import rbd_ros
from rbd_ros.formats import trajectory_yaml
from helpers import missing
from retime_paths import waypoints

ARM = rbd_ros.robots.path("rbd_arm7")
TIMEOUT = 120.0          # generous under load; the work refused took from 28 s to forever


def script(name):
    path = os.path.join(os.path.dirname(sys.executable), name)
    if not os.access(path, os.X_OK):
        missing(f"the console script {name} (pip install -e .)")
    return path


def run(name, *args, cwd=None):
    """Run a console script; return (status, stderr)."""
    done = subprocess.run([script(name), *map(str, args)], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, timeout=TIMEOUT, cwd=cwd,
                          preexec_fn=lambda: os.umask(0o022))
    return done.returncode, done.stderr


def assert_refused(status, err, *words):
    lines = err.strip().splitlines()
    assert status == 2 and len(lines) == 1, (status, err[-2000:])
    assert "Traceback" not in err and all(w in lines[0] for w in words), lines[0]


@pytest.fixture
def path_file(tmp_path):
    m = rbd_ros.load_model(ARM)
    doc = {"joint_names": list(m.joint_names),
           "points": [{"positions": [float(x) for x in row]} for row in waypoints(m, 3, 15)]}
    path = tmp_path / "path.yaml"
    path.write_text(yaml.safe_dump(doc))
    return path


def retime(path_file, out, *extra):
    return run("rbd_retime", ARM, path_file, "-o", out, "--grid", 100, *extra)


def test_retime_writes_the_usual_mode(path_file, tmp_path):
    out = tmp_path / "timed.yaml"
    status, err = retime(path_file, out)
    assert status == 0, err
    assert stat.S_IMODE(os.stat(out).st_mode) == 0o644          # 0o666 less umask 022
    assert sorted(os.listdir(tmp_path)) == ["path.yaml", "timed.yaml"]     # no temporary


def _fifo(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    return fifo


def _device_link(tmp_path):
    link = tmp_path / "null-link"        # a link to /dev/null: safe to try, refused the same
    os.symlink(os.devnull, link)
    return link


def _under_a_file(tmp_path):
    (tmp_path / "plain").write_text("x")
    return tmp_path / "plain" / "out.yaml"


@pytest.mark.parametrize("where, words", [
    (_fifo, ("FIFO", "refusing to replace")),
    (_device_link, ("character device", "refusing to replace")),
    (lambda tmp: tmp, ("directory",)),
    (_under_a_file, ("is not a directory",)),
    (lambda tmp: tmp / "missing" / "out.yaml", ("does not exist",)),
    (lambda tmp: "/proc/rbd_ros_out.yaml", ("cannot write",)),
])
def test_retime_refuses_an_output_it_cannot_put_a_file_at(path_file, tmp_path, where, words):
    out = where(tmp_path)
    before = os.lstat(out).st_mode if os.path.lexists(out) else None
    status, err = retime(path_file, out)
    assert_refused(status, err, "-o", *words)
    if before is not None:
        assert os.lstat(out).st_mode == before             # not replaced by a regular file


def test_retime_refuses_hostile_yaml_before_loading_it(tmp_path):
    deep = tmp_path / "deep.yaml"
    deep.write_text("[" * 100_000 + "]" * 100_000)          # was a 2,999-line traceback
    nested = tmp_path / "nested.yaml"
    nested.write_text("- " * 100_000 + "x\n")
    big = tmp_path / "big.yaml"
    with open(big, "wb") as f:                              # sparse: 11 MB, nothing written
        f.truncate(11 << 20)
    many = tmp_path / "many.yaml"                           # 30k names x 700k points
    many.write_text("joint_names: [" + ", ".join(f"j{i}" for i in range(30_000)) + "]\n"
                    "points:\n" + "- {}\n" * 700_000)
    out = tmp_path / "out.yaml"
    for src, words in ((deep, ("nesting depth",)), (nested, ("nested deeper than 16",)),
                       (big, ("larger than 8 MiB",)),
                       (many, ("values and collections",))):
        status, err = retime(src, out)
        assert_refused(status, err, src.name, *words)
    assert not out.exists()


@pytest.mark.parametrize("args, words", [
    (("--velocity-substeps", "0"), ("velocity_substeps", "1 to 32")),
    (("--velocity-substeps", "-3"), ("velocity_substeps",)),
    (("--velocity-substeps", "1000000"), ("velocity_substeps",)),
    (("--velocity-scale", "1e-300"), ("--velocity-scale", "1e-06")),
    (("--acceleration-limit", "1e-300"), ("acceleration", "0.001")),
    (("--grid", "10000000"), ("--grid",)),
    (("--velocity-scale", "abc"), ("--velocity-scale",)),
])
def test_retime_refuses_numbers_out_of_range(path_file, tmp_path, args, words):
    out = tmp_path / "out.yaml"
    status, err = retime(path_file, out, *args)
    assert_refused(status, err, *words)
    assert not out.exists()


def test_excite_refuses_a_urdf_that_is_not_a_regular_file(tmp_path):
    fifo = _fifo(tmp_path)
    for urdf, word in (("/dev/zero", "character device"), (fifo, "FIFO")):
        status, err = run("rbd_excite", urdf, "-o", tmp_path / "x.yaml")
        assert_refused(status, err, word)
    assert os.listdir(tmp_path) == ["fifo"]


@pytest.mark.parametrize("args, words", [
    (("--rate", "1e9"), ("--rate", "10000")),
    (("--period", "1e-9"), ("--period", "0.5")),
    (("--rate", "nan"), ("--rate",)),
    (("--rate", "0.5", "--period", "10", "--harmonics", "5"), ("--rate",)),
    (("--periods", "1000", "--period", "3600"), ("samples", "100000")),
    (("--harmonics", "100000"), ("--harmonics", "20")),
    (("--max-iter", "-1"), ("--max-iter",)),
    (("--seed", "-1"), ("--seed",)),
])
def test_excite_refuses_numbers_out_of_range(tmp_path, args, words):
    status, err = run("rbd_excite", ARM, "-o", tmp_path / "x.yaml", *args)
    assert_refused(status, err, *words)
    assert os.listdir(tmp_path) == []


def test_excite_checks_its_outputs_before_the_design(tmp_path):
    (tmp_path / "taken_bag").mkdir()
    status, err = run("rbd_excite", ARM, "-o", tmp_path / "x.yaml", "--bag",
                      tmp_path / "taken_bag")
    assert_refused(status, err, "taken_bag", "exists")
    assert sorted(os.listdir(tmp_path)) == ["taken_bag"]    # the YAML was written anyway
    fifo = _fifo(tmp_path)
    status, err = run("rbd_excite", ARM, "-o", fifo)
    assert_refused(status, err, "FIFO")
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert sorted(os.listdir(tmp_path)) == ["fifo", "taken_bag"]


def test_excite_writes_both_outputs_with_the_usual_mode(tmp_path):
    status, err = run("rbd_excite", ARM, "-o", tmp_path / "x.yaml", "--max-iter", 0,
                      "--harmonics", 2, "--period", 2, "--rate", 20, "--periods", 1)
    assert status == 0, err
    assert sorted(os.listdir(tmp_path)) == ["x.yaml", "x_bag"]
    assert stat.S_IMODE(os.stat(tmp_path / "x.yaml").st_mode) == 0o644
    traj = trajectory_yaml.read(tmp_path / "x.yaml")
    assert len(traj.t) == 40 and np.isfinite(traj.fields["effort"]).all()
