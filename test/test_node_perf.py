"""``bench/node_perf.py``: its labels, its sums per message, and a real ``perf record``."""
import argparse
import os
import shutil
import signal
import subprocess
import sys
import threading
import time

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "bench"))
import node_perf  # noqa: E402
import proc_cpu  # noqa: E402

NODE = "python -m rbd_ros.node.dynamics_node --ros-args -r __node:=rbd_dynamics"


def test_a_process_is_named_by_its_command_line_and_tree(tmp_path):
    here = str(tmp_path / "repo")
    assert node_perf.label("python node_floor.py --urdf x --contact-frame arm", here,
                           here) == "floor"
    assert node_perf.label(f"{NODE} -p contact_frame:=arm_right_7_link", here,
                           here) == "observer"
    # the observer's torques without its wrench: no frame, still the observer
    assert node_perf.label(f"{NODE} -p contact_frame:= -p publish_external_torques:=true",
                           here, here) == "observer"
    assert node_perf.label(f"{NODE} -p contact_frame:= -p publish_torques:=true", here,
                           here) == "node"
    # bench_node's tree of a revision (node_trees.SourceTree): .../bench_node/<sha>/tree
    before = str(tmp_path / "bench_node" / "8f66d75a1b2c" / "tree")
    assert node_perf.label(f"{NODE} -p publish_torques:=true", before,
                           here) == "before 8f66d75a1b2c"


def test_bench_node_s_rate_is_read_from_its_arguments():
    assert node_perf.bench_rate(["--fixed-base", "--floor"]) == 1000.0
    assert node_perf.bench_rate(["--rate", "500", "--floor"]) == 500.0
    assert node_perf.bench_rate(["--rate=2000"]) == 2000.0


@pytest.mark.parametrize("argv", [["--", "--rate", "fast"], ["--", "--rate=0"],
                                  ["--seconds", "0", "--", "--floor"],
                                  ["--delay", "-1", "--", "--floor"]])
def test_bad_arguments_are_refused_with_a_message(argv, capsys):
    with pytest.raises(SystemExit) as exit_:
        node_perf.parse_args(argv)
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert "error:" in err and ("--rate" in err or "--seconds" in err), err


def test_the_table_sums_the_processes_of_a_kind_per_message(capsys):
    args = argparse.Namespace(rate=1000.0, seconds=2.0, top=5)
    # two floor processes: 2 x 2000 messages; 4 s of libpython is 1000 µs a message
    results = [("floor", 1, {"libpython": 2e9, "[kernel]": 1e9}),
               ("floor", 2, {"libpython": 2e9, "[kernel]": 1e9}),
               ("observer", 3, {"libpython": 3e9, "[kernel]": 1e9})]
    node_perf.print_table(args, results)
    rows = {line.split()[0]: line.split()[1:] for line in capsys.readouterr().out.splitlines()
            if line.startswith(("libpython", "[kernel]", "(all)"))}
    # floor: 4 s / 4000 messages = 1000 µs; observer: 3 s / 2000 = 1500 µs, +500
    assert [float(x) for x in rows["libpython"]] == pytest.approx([1000.0, 1500.0, 500.0])
    assert [float(x) for x in rows["[kernel]"]] == pytest.approx([500.0, 500.0, 0.0])
    assert [float(x) for x in rows["(all)"]] == pytest.approx([1500.0, 2000.0, 500.0])


def _perf_problem(tmp_path):
    """Why perf cannot record here (no perf, not allowed), or ''."""
    if shutil.which("perf") is None:
        return "no perf on PATH"
    done = subprocess.run(["perf", "record", "-q", "-e", "cpu-clock", "-o",
                           str(tmp_path / "probe.data"), "--", "true"],
                          capture_output=True, text=True)
    return f"perf cannot record here: {done.stderr.strip()[:100]}" if done.returncode else ""


def test_a_running_process_is_sampled_and_one_that_leaves_is_said(tmp_path):
    """``sample`` on a real process: its time is the interpreter's; a process gone is named."""
    problem = _perf_problem(tmp_path)
    if problem:
        pytest.skip(problem)
    args = argparse.Namespace(delay=0.0, seconds=0.6)
    busy = subprocess.Popen([sys.executable, "-c", "while True: sum(range(1000))"])
    brief = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(0.3)"])
    results, failures, recordings = [], [], node_perf.Recordings()
    try:                       # the brief one first: it leaves while it is being recorded
        node_perf.sample(brief.pid, "floor", args, recordings, results, failures,
                         str(tmp_path))
        node_perf.sample(busy.pid, "node", args, recordings, results, failures, str(tmp_path))
    finally:
        busy.kill()
        brief.kill()
        busy.wait()
        brief.wait()
    assert [r[0] for r in results] == ["node"], failures
    period = results[0][2]
    top, ns = period.most_common(1)[0]
    assert "python" in top, period
    assert ns > 0.05e9          # a busy loop: on a CPU for some of the 0.6 s (a busy machine)
    assert len(failures) == 1 and failures[0].startswith("floor") and "left" in failures[0]


def test_a_sample_waiting_for_its_delay_starts_nothing_once_stopped(tmp_path):
    recordings = node_perf.Recordings()
    args = argparse.Namespace(delay=30.0, seconds=1.0)
    results, failures = [], []
    waiting = threading.Thread(target=node_perf.sample, args=(
        os.getpid(), "node", args, recordings, results, failures, str(tmp_path)))
    waiting.start()
    recordings.stop()
    waiting.join(5)
    assert not waiting.is_alive()
    assert recordings.processes == [] and results == [] and failures == []
    assert recordings.start(["true"]) is None           # and none starts after


def test_a_perf_that_ignores_sigint_is_killed_with_what_it_runs(monkeypatch):
    """Stop's fallback: the SIGKILL reaches the process's whole group, its workload too."""
    monkeypatch.setattr(node_perf, "PERF_STOP_S", 0.5)
    recordings = node_perf.Recordings()
    # ignored signals stay ignored across exec: sleep, its workload, ignores SIGINT too
    stubborn = recordings.start(["sh", "-c", "trap '' INT; sleep 600; true"])
    deadline = time.monotonic() + 10
    while not (workload := proc_cpu.children(stubborn.pid)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert workload
    try:
        recordings.stop()
        assert stubborn.poll() is not None
        deadline = time.monotonic() + 5
        while proc_cpu.running(workload[0]) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not proc_cpu.running(workload[0])
    finally:
        for pid in [stubborn.pid, *workload]:
            if proc_cpu.running(pid):
                os.kill(pid, signal.SIGKILL)
