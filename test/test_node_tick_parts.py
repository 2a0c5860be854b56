"""``bench/node_tick_parts.py``: its arguments, its timers, its pacing, and a real run."""
import os
import sys
import time

import pytest

from helpers import ros_domain_id

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "bench"))
import node_tick_parts  # noqa: E402


@pytest.mark.parametrize("argv", [["--messages", "0"], ["--rounds", "-1"], ["--rate", "0"],
                                  ["--rate", "inf"], ["--rate", "fast"]])
def test_a_count_or_rate_that_is_not_positive_is_refused(argv, capsys):
    with pytest.raises(SystemExit) as exc:
        node_tick_parts.parse_args(argv)
    assert exc.value.code == 2
    assert "argument --" in capsys.readouterr().err


def test_a_timed_function_adds_its_seconds_and_passes_on_what_it_returns_or_raises():
    totals = {}

    def sleeper(seconds, fail=False):
        time.sleep(seconds)
        if fail:
            raise KeyError("x")
        return seconds

    timed = node_tick_parts.timed(totals, "part", sleeper)
    assert timed(0.02) == 0.02
    with pytest.raises(KeyError):
        timed(0.01, fail=True)
    assert 0.03 <= totals["part"] < 0.5


def test_a_paced_run_waits_for_each_message_and_counts_only_the_calls():
    calls = []
    start = time.perf_counter()
    busy = node_tick_parts.run(lambda raw: calls.append(time.perf_counter()), range(11), 0.01)
    elapsed = time.perf_counter() - start
    assert len(calls) == 11
    assert calls[-1] - start >= 0.1                   # the last waits for its time: 10 periods
    assert busy < elapsed / 5                         # the waits are not counted


def test_the_rest_is_the_callback_less_its_outermost_parts(capsys):
    parts = {"decode": 1.0, "observer": 4.0, "  its step and messages": 3.5,
             "    its step": 3.0}
    best = {"hot": (10.0, parts), "paced": (20.0, {k: 2 * v for k, v in parts.items()})}
    node_tick_parts.print_table(best, ["torques"])
    rows = {line[:26].strip(): line[26:].split() for line in capsys.readouterr().out.splitlines()}
    assert rows["the rest"] == ["5.0", "10.0", "2.00"]      # 10 - 1 - 4, 20 - 2 - 8
    assert rows["its step"] == ["3.0", "6.0", "2.00"]


@pytest.mark.pinocchio                 # its --floor-pinocchio relay makes Pinocchio's calls
def test_a_real_run_times_every_part_and_restores_the_node(capsys):
    from rbd_ros.node.joint_cache import JointCache
    merge = JointCache.merge_serialized
    ros_domain_id()
    best, received = node_tick_parts.main(["--robot", "arm7", "--messages", "150", "--rounds",
                                           "1", "--observer", "link7", "--outputs",
                                           "torques,accelerations", "--floor",
                                           "--floor-core", "--floor-pinocchio",
                                           "--evict-mb", "4", "--evicted-messages", "20"])
    assert JointCache.merge_serialized is merge       # the timers are taken off again
    for mode in ("hot", "paced", "evicted"):
        assert best["floor"][mode][0] > 0 and best["floor"][mode][1] == {}   # no parts
        callback, parts = best["node"][mode]
        for label in ("merge serialized", "dynamics", "publish outputs", "observer",
                      "    its step"):
            assert parts[label] > 0, (mode, label)
        top = sum(v for k, v in parts.items() if not node_tick_parts.nested(k))
        assert top <= callback
        assert parts["    its step"] <= parts["  its step and messages"] <= parts["observer"]
    assert best["node"]["paced, untimed"][1] == {}    # no timers in that run
    assert received > 0
    out = capsys.readouterr().out
    assert "the rest" in out and "paced/hot" in out and "node / floor" in out
    assert "evicted/hot" in out
    for relay in ("floor + core", "floor + Pinocchio"):     # each relay timed, its row printed
        assert best[relay]["hot"][0] > 0 and best[relay]["paced"][0] > 0
        assert f"node / {relay}" in out


def test_each_relay_s_callback_is_printed_beside_the_node_s(capsys):
    node = {"hot": (10.0, {}), "paced": (20.0, {})}
    references = {"floor": {"hot": (5.0, {}), "paced": (8.0, {})},
                  "floor + Pinocchio": {"hot": (20.0, {}), "paced": (40.0, {})}}
    node_tick_parts.print_table(node, ["torques"], references)
    rows = {line[:26].strip(): line[26:].split() for line in capsys.readouterr().out.splitlines()}
    assert rows["floor callback"] == ["5.0", "8.0", "1.60"]
    assert rows["node / floor"] == ["2.00", "2.50"]
    assert rows["floor + Pinocchio callback"] == ["20.0", "40.0", "2.00"]
    assert rows["node / floor + Pinocchio"] == ["0.50", "0.50"]


def test_the_evicted_run_gets_its_columns_and_its_ratio_to_each_relay(capsys):
    parts = {"decode": 1.0, "observer": 4.0}
    node = {"hot": (10.0, parts), "paced": (20.0, parts),
            "evicted": (50.0, {"decode": 3.0, "observer": 12.0})}
    references = {"floor": {"hot": (5.0, {}), "paced": (8.0, {}), "evicted": (25.0, {})}}
    node_tick_parts.print_table(node, ["torques"], references)
    rows = {line[:26].strip(): line[26:].split() for line in capsys.readouterr().out.splitlines()}
    assert rows["decode"] == ["1.0", "1.0", "1.00", "3.0", "3.00"]
    assert rows["the rest"] == ["5.0", "15.0", "3.00", "35.0", "7.00"]   # 50 - 3 - 12
    assert rows["callback"] == ["10.0", "20.0", "2.00", "50.0", "5.00"]
    assert rows["floor callback"] == ["5.0", "8.0", "1.60", "25.0", "5.00"]
    assert rows["node / floor"] == ["2.00", "2.50", "2.00"]


def test_the_evicted_ratio_to_a_relay_takes_the_untimed_evicted_run(capsys):
    """The relays run without timers: the node's untimed evicted run is set against theirs."""
    node = {"hot": (10.0, {}), "paced": (20.0, {}), "paced, untimed": (18.0, {}),
            "evicted": (50.0, {}), "evicted, untimed": (40.0, {})}
    references = {"floor": {"hot": (5.0, {}), "paced": (8.0, {}), "evicted": (25.0, {})}}
    node_tick_parts.print_table(node, ["torques"], references)
    rows = {line[:26].strip(): line[26:].split() for line in capsys.readouterr().out.splitlines()}
    assert rows["without timers"] == ["18.0", "40.0"]
    assert rows["node / floor"] == ["2.00", "2.25", "1.60"]          # 18 / 8, 40 / 25
