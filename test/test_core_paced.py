"""``bench/core_paced.py``: its pacing, and a real run on talos held at the pelvis."""
import os
import sys
import time

import numpy as np
import pytest

from oracle import available

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "bench"))
import core_paced  # noqa: E402


def test_an_output_that_is_not_a_dynamics_output_is_refused(capsys):
    with pytest.raises(SystemExit) as exc:
        core_paced.parse_args(["--outputs", "torques,bogus"])
    assert exc.value.code == 2
    assert "--outputs: bogus not among the dynamics outputs" in capsys.readouterr().err


@pytest.mark.parametrize("option, value", [("--evict-mb", "0"), ("--evict-mb", "inf"),
                                           ("--evict-mb", "nan"), ("--evict-mb", "-64"),
                                           ("--evicted-messages", "0"),
                                           ("--evicted-messages", "x")])
def test_a_bad_eviction_option_ends_in_argparse_s_one_line(option, value, capsys):
    with pytest.raises(SystemExit) as exc:
        core_paced.parse_args([option, value])
    assert exc.value.code == 2
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert f": error: argument {option}: " in last and value in last.split(": ")[-1]


@pytest.mark.skipif(not available("talos_fixed"), reason="example-robot-data is not installed")
def test_a_link_talos_does_not_have_is_refused_in_one_line():
    with pytest.raises(SystemExit) as exc:
        core_paced.main(["--messages", "5", "--observer", "nosuchlink"])
    assert str(exc.value).startswith("core_paced.py: --observer: contact_frame 'nosuchlink' "
                                     "is not a link of the model")


@pytest.mark.parametrize("way", ["hot", "sleep", "spin"])
def test_each_way_times_only_the_call_and_waits_as_it_says(way):
    """Hot: back to back; sleep and spin: no call before its time, spin on the CPU meanwhile."""
    made = []

    def call(*message):
        made.append((time.perf_counter(), message))
    messages = [(k,) for k in range(5)]
    start, cpu = time.perf_counter(), time.thread_time()
    spent = core_paced.run(call, messages, way, 0.05)
    cpu = time.thread_time() - cpu
    assert [m for _, m in made] == messages
    assert np.all(spent < 25000), spent            # the call, not the 50 ms wait before it
    since = np.array([t for t, _ in made]) - start
    if way == "hot":
        assert since[-1] < 4 * 0.05, since
    else:
        assert np.all(since >= np.arange(5) * 0.05), since
    # the four waits, 0.2 s: on the CPU spinning (a share of it on a busy machine), asleep
    # otherwise (~1 ms)
    if way == "spin":
        assert cpu > 0.02, cpu
    elif way == "sleep":
        assert cpu < 0.02, cpu


def test_each_evicted_call_follows_a_write_over_the_whole_buffer_and_is_timed_alone():
    evict = np.zeros(4 << 20)                         # 32 MiB: ~5-20 ms a write
    seen = []

    def call(k):
        seen.append((k, evict[0], evict[evict.size // 2], evict[-1]))
    start = time.perf_counter()
    spent = core_paced.run(call, [(k,) for k in range(5)], "evicted", 10.0, evict)
    assert time.perf_counter() - start < 5.0          # no 10 s period waited for
    # before call k, every element written k + 1 times
    assert seen == [(k, k + 1.0, k + 1.0, k + 1.0) for k in range(5)], seen
    assert np.all(evict == 5.0)
    write = time.perf_counter()
    np.add(evict, 1.0, out=evict)
    write = time.perf_counter() - write
    # the figures are the calls' (~1 µs), not the writes before them (ms)
    assert np.median(spent) < 0.5 * write * 1e6, (spent, write)


def test_a_late_call_still_leaves_a_wait_before_the_next():
    made = []

    def call(k):
        made.append(time.perf_counter())
        if k == 1:
            time.sleep(0.12)                          # past the next two messages' times
    core_paced.run(call, [(k,) for k in range(4)], "sleep", 0.05)
    # call 2 a full period after call 1 ended, call 3 a period after call 2's time
    assert made[2] - made[1] >= 0.12 + 0.05 and made[3] - made[1] >= 0.12 + 0.05 + 0.05, made


@pytest.mark.skipif(not available("talos_fixed"), reason="example-robot-data is not installed")
@pytest.mark.parametrize("observer", ["arm_right_7_link", ""])
def test_a_run_times_every_call_every_way(observer, capsys):
    best = core_paced.main(["--messages", "20", "--rounds", "1", "--rate", "2000",
                            "--observer", observer, "--evict-mb", "4",
                            "--evicted-messages", "5"])
    names = ["dynamics"] + (["observer step"] if observer else []) + ["both (CoreCalls.run)"]
    assert sorted(best) == sorted((n, w) for n in names for w in core_paced.WAYS)
    assert all(0 < median < 1e5 and 0 < mean < 1e5 for median, mean in best.values())
    rows = capsys.readouterr().out.splitlines()[2:]
    assert [row[:22].strip() for row in rows] == names
