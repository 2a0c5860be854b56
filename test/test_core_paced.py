"""``bench/core_paced.py``: its pacing, and a real run on talos held at the pelvis."""
import os
import sys
import time

import numpy as np
import pytest

from oracle import available

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "bench"))
import core_paced  # noqa: E402


@pytest.mark.parametrize("way", core_paced.WAYS)
def test_each_way_times_only_the_call_and_paces_all_but_hot(way):
    made = []

    def call(*message):
        made.append((time.perf_counter(), message))
        time.sleep(0.002)
    messages = [(k,) for k in range(5)]
    start = time.perf_counter()
    spent = core_paced.run(call, messages, way, 0.02)
    assert [m for _, m in made] == messages
    assert np.all((spent >= 2000) & (spent < 15000)), spent     # the call's 2 ms, not the wait
    since = np.array([t for t, _ in made]) - start
    if way == "hot":
        assert since[-1] < 4 * 0.02, since                       # back to back
    else:
        assert np.all(since >= np.arange(5) * 0.02), since       # none before its time


@pytest.mark.skipif(not available("talos_fixed"), reason="example-robot-data is not installed")
@pytest.mark.parametrize("observer", ["arm_right_7_link", ""])
def test_a_run_times_every_call_every_way(observer, capsys):
    best = core_paced.main(["--messages", "20", "--rounds", "1", "--rate", "2000",
                            "--observer", observer])
    names = ["dynamics"] + (["observer step"] if observer else []) + ["both (CoreCalls.run)"]
    assert sorted(best) == sorted((n, w) for n in names for w in core_paced.WAYS)
    assert all(0 < median < 1e5 and 0 < mean < 1e5 for median, mean in best.values())
    rows = capsys.readouterr().out.splitlines()[2:]
    assert [row[:22].strip() for row in rows] == names
