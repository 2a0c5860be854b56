"""
``bench/bench_core.py``'s timing helpers, as the benchmark scripts call them.

``bench_derivatives``, ``bench_contact`` and ``bench_specialized`` call ``per_call_us(fn,
states, calls)``; for a while its name stood for another function (a loop, then the model,
workspace and output), and those three scripts failed at their first figure without a test
noticing. The row's variants take turns (``interleaved_best``), so that a slower stretch of
the shared VM falls on ours and Pinocchio's alike.
"""
import importlib
import inspect
import math
import os
import sys

import pytest

BENCH = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "bench")
sys.path.insert(0, BENCH)
import bench_core  # noqa: E402


def test_per_call_us_calls_fn_on_every_arguments_tuple():
    seen = []
    us = bench_core.per_call_us(lambda a, b: seen.append((a, b)), [(1, 2), (3, 4)], 6,
                                repeats=2)
    assert seen == [(1, 2), (3, 4)] * 6            # 3 rounds of 2 states, twice
    assert us > 0


def test_a_round_runs_each_variant_once_in_turn_and_keeps_each_ones_least_time():
    order = []
    times = {"ours": iter([5.0, 3.0, 4.0]), "out": iter([2.0, 6.0, 1.0]),
             "pin": iter([7.0, 8.0, 9.0])}

    def timer(name):
        def time_it():
            order.append(name)
            return next(times[name])
        return time_it

    best = bench_core.interleaved_best([timer("ours"), timer("out"), timer("pin")], 3)
    assert order == ["ours", "out", "pin"] * 3
    assert best == [3.0, 1.0, 7.0]


def test_loop_us_gives_the_loop_its_states_rounds_and_arguments():
    calls = []

    def loop(states, rounds, *arguments):
        calls.append((states, rounds, arguments))

    time_it = bench_core.loop_us(loop, ["s1", "s2"], 10, "fn", "m")
    assert math.isfinite(time_it())
    assert calls == [(["s1", "s2"], 5, ("fn", "m"))]


@pytest.mark.parametrize("script", ["bench_derivatives", "bench_contact", "bench_specialized",
                                    "bench_mimic"])
def test_the_scripts_import_what_they_call(script):
    """The scripts' per_call_us is bench_core's, and takes (fn, arglist, calls, repeats)."""
    module = importlib.import_module(script)
    assert module.per_call_us is bench_core.per_call_us
    parameters = list(inspect.signature(module.per_call_us).parameters)
    assert parameters == ["fn", "arglist", "calls", "repeats"]
