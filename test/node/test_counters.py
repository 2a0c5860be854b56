"""The node's counters (``rbd_ros.node.counters``): exact under threads, read as a snapshot."""
import threading

import pytest

from rbd_ros.node.counters import Counters


def test_counts_from_many_threads_are_all_kept():
    counters = Counters(("ticks", "published"))
    start = threading.Barrier(4)

    def count():
        start.wait()
        for _ in range(20000):
            counters.add("ticks")
            counters.add("published", 2)
    threads = [threading.Thread(target=count) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert dict(counters.snapshot()) == {"ticks": 80000, "published": 160000}


def test_a_snapshot_is_read_only_and_does_not_move():
    counters = Counters(("ticks", "skipped"))
    counters.add("ticks")
    snapshot = counters.snapshot()
    counters.add("ticks")
    assert snapshot["ticks"] == 1 and counters["ticks"] == 2
    assert list(snapshot) == ["ticks", "skipped"]           # the order of the names
    with pytest.raises(TypeError):
        snapshot["ticks"] = 5


def test_an_unknown_name_is_refused():
    counters = Counters(("ticks",))
    with pytest.raises(KeyError):
        counters.add("tick")
    with pytest.raises(KeyError):
        counters.set("exits", 3)
    counters.set("ticks", 7)
    assert counters["ticks"] == 7
