"""``bench/node_perf.py``: its labels, its sums per message, and perf's own report parsed."""
import argparse
import os
import shutil
import subprocess
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "bench"))
import node_perf  # noqa: E402


def test_a_process_is_named_by_its_command_line():
    assert node_perf.label("python node_floor.py --urdf x --contact-frame arm") == "floor"
    assert node_perf.label("python -m rbd_ros.node.dynamics_node --ros-args -p "
                           "contact_frame:=arm_right_7_link -p x:=1") == "observer"
    assert node_perf.label("python -m rbd_ros.node.dynamics_node --ros-args -p "
                           "contact_frame:= -p x:=1") == "node"
    assert node_perf.label("python -m rbd_ros.node.dynamics_node --ros-args") == "node"


def test_the_table_sums_the_processes_of_a_kind_per_message(capsys):
    args = argparse.Namespace(rate=1000.0, seconds=2.0, top=5)
    f = node_perf.FREQUENCY
    # two floor processes: 2 x 2000 messages; 4 f samples of libpython are 4 s of CPU
    results = [("floor", 1, {"libpython": 2 * f, "[kernel]": f}),
               ("floor", 2, {"libpython": 2 * f, "[kernel]": f}),
               ("observer", 3, {"libpython": 3 * f, "[kernel]": f})]
    node_perf.print_table(args, results)
    rows = {line.split()[0]: line.split()[1:] for line in capsys.readouterr().out.splitlines()
            if line.startswith(("libpython", "[kernel]", "(all)"))}
    # floor: 4 s / 4000 messages = 1000 µs; observer: 3 s / 2000 = 1500 µs, +500
    assert [float(x) for x in rows["libpython"]] == pytest.approx([1000.0, 1500.0, 500.0])
    assert [float(x) for x in rows["[kernel]"]] == pytest.approx([500.0, 500.0, 0.0])
    assert [float(x) for x in rows["(all)"]] == pytest.approx([1500.0, 2000.0, 500.0])


def test_perf_s_own_report_is_read_by_library(tmp_path):
    """A real ``perf record`` of a Python loop: its samples are the interpreter's."""
    if shutil.which("perf") is None:
        pytest.skip("no perf on PATH")
    data = tmp_path / "loop.data"
    done = subprocess.run(["perf", "record", "-q", "-e", "cpu-clock", "-F", "999", "-o",
                           str(data), "--", sys.executable, "-c",
                           "import time\nt = time.process_time()\n"
                           "while time.process_time() - t < 0.5: sum(range(1000))"],
                          capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"perf record is not allowed here: {done.stderr.strip()[:100]}")
    samples = node_perf.by_library(str(data))
    top, count = samples.most_common(1)[0]
    assert "python" in top and count > 100, samples
    assert sum(samples.values()) >= 0.8 * 0.5 * 999
