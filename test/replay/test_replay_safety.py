"""
rbd_replay under hostile and careless use (issue 12): interrupts, huge values, bad paths.

* SIGINT / SIGTERM of ``rbd_replay`` mid-run (a subprocess, a bag large enough to be half
  written): exit 130 / 143, one line on stderr and no traceback, nothing under the final
  names nor any temporary left, and the same command then completes; the same for ``--live``
  with its dynamics_node (stopped too).
* Finite but huge values in some messages (velocities 1e154 and 1e200, an effort of 1e308):
  those messages are skipped, reason "refused", the others equal the core's results, and
  nothing in the output bag or the report is NaN or inf; also with a core that raises for
  the first bad sample of a batch instead of returning NaN.
* Bad paths and arguments: exit status 2 and one short line naming the problem.
"""
import contextlib
import glob
import json
import math
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from scipy.signal import savgol_filter

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
# node_helpers (test/node) is on sys.path only once a test of that folder is collected:
# this module also runs alone (pytest test/replay)
sys.path.insert(0, os.path.join(ROOT, "test", "node"))

import rbd_ros  # noqa: E402
from helpers import ros_domain_id  # noqa: E402
from rbd_ros.outputs import BY_NAME, NAMES, whole_body  # noqa: E402
# the per-tick dynamics outputs; the whole-body ones need a link or a floating base
OUTPUTS = tuple(n for n in NAMES if n not in whole_body.NAMES)
from rbd_ros.replay import bag_io, replay  # noqa: E402
from rbd_ros.replay.cli import main  # noqa: E402
import make_example_bag as mk  # noqa: E402

STORE = bag_io.typestore()
ENV = dict(os.environ, PYTHONPATH=os.pathsep.join(
    [ROOT] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
BATCH = ("rnea_batch", "aba_batch", "minv_batch", "rnea_derivatives_batch",
         "aba_derivatives_batch")


def command(*args):
    return [sys.executable, "-m", "rbd_ros.replay", *map(str, args), "--no-progress"]


def leftovers(directory, keep):
    """Entries of ``directory`` other than ``keep`` (outputs, temporaries)."""
    return sorted(set(os.listdir(directory)) - set(keep))


def wait_for_file(directory, pattern, size, proc, timeout=180):
    """
    Wait for a file ``pattern`` under ``directory`` (hidden directories too) to grow.

    Until it has at least ``size`` bytes, while ``proc`` runs; returns its path.
    """
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        for f in glob.glob(os.path.join(directory, "**", pattern), recursive=True,
                           include_hidden=True):
            try:
                if os.path.getsize(f) >= size:
                    return f
            except OSError:
                pass
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.01)
    proc.kill()
    pytest.fail(f"no {pattern} of {size} bytes within {timeout} s")


@contextlib.contextmanager
def sigint_not_ignored():
    """
    Start processes with SIGINT at its default, even where this one was started ignoring it.

    A shell's background job (``cmd &``, ``nohup``) ignores SIGINT, and an ignored signal stays
    ignored across exec: rbd_replay then rightly keeps ignoring it (as under nohup) and runs
    to the end, which is not the Ctrl-C at a terminal these tests are about.
    """
    ignored = signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    if ignored:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        if ignored:
            signal.signal(signal.SIGINT, signal.SIG_IGN)


def assert_stopped(proc, status, timeout=60):
    out, err = proc.communicate(timeout=timeout)
    assert proc.returncode == status, err[-2000:]
    assert "Traceback" not in err and "Error" not in err, err[-2000:]
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("rbd_replay: interrupted by "), err


@pytest.fixture(scope="module")
def big_bag(tmp_path_factory):
    """30,000 joint_states of the arm at 1 kHz: with every output, ~100 MB to write."""
    path = tmp_path_factory.mktemp("big") / "arm_1khz"
    urdf, model, t, q, v, e, _ = mk.simulate("rbd_arm7", duration=30.0, rate=1000.0, seed=5)
    mk.write_bag(path, urdf, model.joint_names, t, q, v, e)
    return path, len(t)


@pytest.mark.parametrize("signum,status", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_interrupt_leaves_nothing_and_a_rerun_completes(big_bag, tmp_path, signum, status):
    bag, n = big_bag
    out = tmp_path / "out"
    args = command(bag, "-o", out, "--all", "--no-plots")
    with sigint_not_ignored():
        proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, env=ENV)
    wait_for_file(str(tmp_path), "*.mcap", 2_000_000, proc)     # the output bag, half written
    proc.send_signal(signum)
    assert_stopped(proc, status)
    assert leftovers(tmp_path, []) == []             # no out, no out_report, no temporaries

    done = subprocess.run(args, capture_output=True, text=True, env=ENV, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert leftovers(tmp_path, []) == ["out", "out_report"]
    with bag_io.Reader(out) as r:
        counts = {c.topic: c.msgcount for c in r.connections}
    assert counts["/joint_states"] == n
    assert all(counts[f"/rbd_dynamics/{k}"] == n for k in OUTPUTS)
    assert json.loads((tmp_path / "out_report" / "report.json").read_text())["answered"] == n


def test_live_interrupt_stops_the_node(tmp_path):
    pytest.importorskip("rclpy")
    pytest.importorskip("rbd_ros_interfaces.msg")
    os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    from node_helpers import Probe
    from sensor_msgs.msg import JointState
    env = dict(ENV, ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST", ROS_DOMAIN_ID=ros_domain_id())
    urdf, model, t, q, v, e, _ = mk.simulate("rbd_arm7", duration=30.0, rate=100.0, seed=6)
    bag = tmp_path / "in"
    mk.write_bag(bag, urdf, model.joint_names, t, q, v, e)
    with sigint_not_ignored():
        proc = subprocess.Popen(command(bag, "-o", tmp_path / "out", "--live", "--no-plots"),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                env=env, start_new_session=True)
    probe = Probe(f"/rbd_replay_{proc.pid}")           # rbd_replay's namespace
    try:
        # playing: the node answers the joint_states rbd_replay plays into it
        answers = probe.subscribe(JointState, f"/rbd_replay_{proc.pid}/rbd_dynamics/torques")
        deadline = time.monotonic() + 180
        while len(answers) < 20:
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "rbd_replay --live never played"
            time.sleep(0.01)
        os.killpg(proc.pid, signal.SIGINT)                        # a terminal's Ctrl-C
        assert_stopped(proc, 130)
    finally:
        probe.close()
        if proc.poll() is None:
            proc.kill()
    assert leftovers(tmp_path, ["in"]) == []
    node = f"rbd_replay_{proc.pid}"
    running = [p for p in glob.glob("/proc/[0-9]*/cmdline")
               if node.encode() in _read(p)]
    assert running == [], "the dynamics_node outlived rbd_replay"


def _read(path):
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError:
        return b""


# -- huge values -------------------------------------------------------------------------------
HUGE = {50: ("v", 2, 1e154), 100: ("e", 1, 1e308), 150: ("v", 0, 1e200)}


@pytest.fixture(scope="module")
def huge_bag(tmp_path_factory):
    path = tmp_path_factory.mktemp("huge") / "arm"
    urdf, model, t, q, v, e, _ = mk.simulate("rbd_arm7", duration=2.0, rate=100.0, seed=3)
    for m, (which, j, value) in HUGE.items():
        {"v": v, "e": e}[which][m, j] = value
    mk.write_bag(path, urdf, model.joint_names, t, q, v, e)
    a = savgol_filter(v, 11, 3, deriv=1, delta=0.01, axis=0, mode="interp")
    return path, model, q, v, a, e


def core_results(model, q, v, a, e):
    """Every output of one message by the single-state core, or None: refused."""
    try:
        res = {"torques": (rbd_ros.rnea(model, q, v, a),),
               "accelerations": (rbd_ros.aba(model, q, v, e),),
               "inverse_inertia": (rbd_ros.minv(model, q),),
               "rnea_derivatives": rbd_ros.rnea_derivatives(model, q, v, a)[:2],
               "aba_derivatives": rbd_ros.aba_derivatives(model, q, v, e)[:2]}
    except ValueError:
        return None
    return res if all(np.isfinite(x).all() for xs in res.values() for x in xs) else None


def strict_json(text):
    def refuse(name):
        raise AssertionError(f"{name} in report.json")
    return json.loads(text, parse_constant=refuse)


def numbers(x):
    if isinstance(x, dict):
        return [n for v in x.values() for n in numbers(v)]
    if isinstance(x, list):
        return [n for v in x for n in numbers(v)]
    return [x] if isinstance(x, (int, float)) and not isinstance(x, bool) else []


def raising_core(monkeypatch):
    """
    Make the batch API raise for the first sample with a non-finite result.

    As the core of issue 12 does, whatever the core in this tree does.
    """
    for name in BATCH:
        real = getattr(rbd_ros, name)

        def batch(model, *args, _real=real, _name=name, **kw):
            res = _real(model, *args, **kw)
            rows = np.zeros(len(args[0]), bool)
            for x in res if isinstance(res, tuple) else (res,):
                rows |= ~np.isfinite(x.reshape(len(x), -1)).all(axis=1)
            if rows.any():
                raise ValueError(f"{_name}: sample {np.flatnonzero(rows)[0]}: the result "
                                 "overflows")
            return res
        monkeypatch.setattr(rbd_ros, name, batch)


@pytest.mark.parametrize("core", ["as is", "raising"])
def test_huge_values_are_refused_and_nothing_non_finite_is_written(
        huge_bag, tmp_path, monkeypatch, core):
    path, model, q, v, a, e = huge_bag
    if core == "raising":
        raising_core(monkeypatch)
    expected = [core_results(model, q[m], v[m], a[m], e[m]) for m in range(len(q))]
    refused = [m for m, r in enumerate(expected) if r is None]
    assert set(HUGE) <= set(refused) and len(refused) < len(q) // 2
    rep = replay(path, tmp_path / "out", outputs=OUTPUTS, report_dir=tmp_path / "rep",
                 progress=False, batch_size=64)
    assert rep["skipped"] == {"refused": len(refused)}
    assert rep["answered"] == len(q) - len(refused)
    assert rep["first_refused"]["message"] == refused[0]

    out = {}
    with bag_io.Reader(tmp_path / "out") as r:
        for con, _, raw in r.messages():
            out.setdefault(con.topic, []).append(STORE.deserialize_cdr(raw, con.msgtype))
    stamps = [(msg.header.stamp.sec, msg.header.stamp.nanosec) for msg in out["/joint_states"]]
    kept = [m for m in range(len(q)) if m not in refused]
    for name in OUTPUTS:
        msgs = out[f"/rbd_dynamics/{name}"]
        assert [(x.header.stamp.sec, x.header.stamp.nanosec) for x in msgs] == \
            [stamps[m] for m in kept]
        for msg, m in zip(msgs, kept):
            for field, want in zip(BY_NAME[name].fields, expected[m][name]):
                got = np.asarray(getattr(msg, field))
                assert np.isfinite(got).all()
                want = np.ravel(want)
                np.testing.assert_allclose(got, want, rtol=1e-7,
                                           atol=1e-8 * (1 + np.abs(want).max()))

    data = strict_json((tmp_path / "rep" / "report.json").read_text())
    assert data["skipped"] == {"refused": len(refused)}
    values = numbers(data["joints"]) + numbers(data["timing_s"])
    assert values and all(math.isfinite(x) for x in values)
    text = (tmp_path / "rep" / "report.txt").read_text()
    table = text.split("rms meas\n")[1].split("timing:")[0]           # the joints' rows
    assert "refused: " in text and not re.search(r"nan|inf|n/a", table.lower()), table
    assert len(glob.glob(str(tmp_path / "rep" / "torque_*.png"))) == 7


def test_compute_finite_splits_a_raising_batch(huge_bag, monkeypatch):
    from rbd_ros.replay.dynamics import compute_finite
    path, model, q, v, a, e = huge_bag
    tau = np.where(np.isfinite(e), e, 0.0)
    known = np.ones(len(q), bool)
    clean, refused, error = compute_finite(model, OUTPUTS, q, v, a, tau, known)
    raising_core(monkeypatch)
    split, refused2, error2 = compute_finite(model, OUTPUTS, q, v, a, tau, known)
    assert refused.any() and np.array_equal(refused, refused2)
    # the core's own message where it raises itself, else the stand-in's
    assert error2 is not None and "sample" not in error2
    assert "not finite" in error2 or "overflows" in error2
    for name in OUTPUTS:
        rows, arrays = clean[name]
        rows2, arrays2 = split[name]
        np.testing.assert_array_equal(rows, np.flatnonzero(~refused))
        np.testing.assert_array_equal(rows2, rows)
        for x, y in zip(arrays, arrays2):
            np.testing.assert_array_equal(x, y)


# -- bad paths and arguments -------------------------------------------------------------------
def read_only_directory(tmp):
    """
    Return a directory this process may not create entries in.

    A mode 555 directory of ``tmp``; as root, who writes there anyway, sysfs's root, where
    no one creates a directory (EPERM, EACCES or EROFS: the same refusal of mkdir).
    """
    if os.geteuid() == 0:
        return Path("/sys")
    readonly = tmp / "readonly"
    readonly.mkdir()
    readonly.chmod(0o555)
    return readonly


def bad_cases(tmp, bag):
    (tmp / "a_file").write_text("x")
    readonly = read_only_directory(tmp)
    (tmp / "exists").mkdir()
    long = "n" * 300                                       # longer than a file name may be
    return {
        "-o under a file": ([bag, "-o", tmp / "a_file" / "out"], "not a directory"),
        "-o in a read-only directory": ([bag, "-o", readonly / "out"], "cannot write"),
        "-o name too long": ([bag, "-o", tmp / long], "cannot write"),
        "-o exists": ([bag, "-o", tmp / "exists"], "exists"),
        "--report-dir exists": ([bag, "-o", tmp / "o2", "--report-dir", tmp / "exists"],
                                "exists"),
        "missing bag": ([tmp / "missing", "-o", tmp / "o3"], "no such bag"),
        "missing bag, long name": ([tmp / long, "-o", tmp / "o4"], "no such bag"),
        "no such topic": ([bag, "-o", tmp / "o5", "--topic", "/" + "t" * 5000], "no topic"),
        "missing --urdf": ([bag, "-o", tmp / "o6", "--urdf", tmp / "nope.urdf"],
                           "no such file"),
        "--urdf a directory": ([bag, "-o", tmp / "o7", "--urdf", tmp], "cannot read"),
        "--urdf long text": ([bag, "-o", tmp / "o8", "--urdf", "robot " * 2000],
                             "no such file"),
        "--batch-size 0": ([bag, "-o", tmp / "o9", "--batch-size", "0"], "--batch-size"),
        "--rate nan": ([bag, "-o", tmp / "o10", "--rate", "nan"], "--rate"),
    }


def test_bad_paths_and_arguments(huge_bag, tmp_path, capsys):
    bag = huge_bag[0]
    cases = bad_cases(tmp_path, bag)
    before = sorted(os.listdir(tmp_path))
    for case, (args, words) in cases.items():
        assert main([str(a) for a in args] + ["--no-plots"]) == 2, case
        err = capsys.readouterr().err
        lines = err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("rbd_replay: "), (case, err)
        assert words in err and len(err) < 400, (case, err)
        assert sorted(os.listdir(tmp_path)) == before, case       # nothing created
    assert not os.listdir(tmp_path / "exists")
    if (tmp_path / "readonly").exists():
        (tmp_path / "readonly").chmod(0o755)


def test_unwritable_output_from_the_command_line(huge_bag, tmp_path):
    (tmp_path / "a_file").write_text("x")
    done = subprocess.run(command(huge_bag[0], "-o", tmp_path / "a_file" / "out"),
                          capture_output=True, text=True, env=ENV, timeout=300)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.strip().splitlines() == [
        f"rbd_replay: cannot write the output bag {str(tmp_path / 'a_file' / 'out')!r} (-o): "
        f"{str(tmp_path / 'a_file')!r} is not a directory"]
