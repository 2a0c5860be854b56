"""
bench_node's tables: one run's figures, every run side by side, and the node against its floor.

``print_run`` prints a run as it ends; ``print_table`` the whole bench at its end, with
``print_threads`` (where the CPU goes: the main thread, Fast DDS's, the others, the planner
process), and when the floor ran ``print_floor`` (each node against the floor's run of its
round, and the goals of issue 35) and ``print_core_split`` (the core's and Pinocchio's calls
over the floor, the node's own work over the floor + core). ``runs``: [(label, results of
``node_run.run_once``)] in the order run; ``configs``: [(label, tree, outputs)].
"""
import os

import numpy as np

from node_trees import FLOOR_CORE, FLOOR_PINOCCHIO
from proc_cpu import THREAD_GROUPS
from rbd_ros.outputs import NAMES as OUTPUTS  # (every output; no ROS)

GOAL_P99_MS = 2.0
GOAL_P99_OBSERVER_MS = 1.0            # issue 23: talos at 1 kHz with the observer's outputs
REFERENCES = ("floor", FLOOR_CORE, FLOOR_PINOCCHIO)   # the reference runs: no goal of their own
GOAL_FLOOR_CPU = 1.3                  # issue 35: the node's CPU per message against the floor's
GOAL_FLOOR_P99_MS = 0.2               # ... and its p99 latency


def fmt(x, spec):
    return "-" if x is None else format(x, spec)


def print_run(args, label, r):
    """Print one run's table: per topic, then the node's figures."""
    print(f"\n{label}: {r['elapsed']:.1f} s measured; load average {r['load']}; "
          f"CPU steal {r['steal']:.1f} % of {os.cpu_count()} CPUs (shared machine)")
    print(f"{'topic':<22} {'messages':>9} {'dropped':>8} {'lat p50 [ms]':>13} "
          f"{'lat p99 [ms]':>13} {'lat max [ms]':>13}")
    print(f"{'joint_states (in)':<22} {r['n_in']:>9} {'':>8}   published at {r['rate']:.1f} Hz "
          f"({r['late']} late cycles)")
    for name, (n, missing, p50, p99, mx) in r["topics"].items():
        print(f"{'~/' + name:<22} {n:>9} {missing:>8} {fmt(p50, '.3f'):>13} "
              f"{fmt(p99, '.3f'):>13} {fmt(mx, '.3f'):>13}")
    print(f"node CPU (with its planner process): {r['node_cpu']:.0f} % of one core; bench "
          f"publisher: {r['bench_cpu']:.0f} %, receiver: {r['recv_cpu']:.0f} %")
    print(f"node tick (compute + publish, /diagnostics): p50 {fmt(r['tick_p50'], '.0f')} µs, "
          f"p99 {fmt(r['tick_p99'], '.0f')} µs (worst 1 s window); input messages lost "
          f"(node's count): {r['lost']}; node counters (whole run): {r['counters']}")
    if "hammer" in r:
        print(f"planner beside it (--hammer {args.hammer}): {r['hammer']}")


def print_table(args, runs, configs):
    """Print every run side by side, then the median of each tree's runs."""
    head = (f"{'run':<4} {'node':<20} {'rate [Hz]':>9} {'late':>5} {'dropped':>7} "
            f"{'p50 [ms]':>8} {'p99 [ms]':>8} {'max [ms]':>8} {'CPU [%]':>7} {'[us/msg]':>8} "
            f"{'tick p50/p99 [us]':>17} {'lost':>5} {'steal [%]':>9} {'load':>5}")
    what = {label: ",".join(outputs) if outputs != OUTPUTS else "every output"
            for label, _, outputs in configs}
    print(f"\n{args.robot}, {args.rate:g} Hz, {args.duration:g} s per run, outputs: "
          f"{'; '.join(f'{k}: {v}' for k, v in what.items())};\n"
          f"latency over all outputs; CPU: the node's (with its planner process), % of one "
          f"core, and per message answered (on every output); tick: the node's own compute + "
          f"publish; steal: the host's, % "
          f"of all CPUs; load: 1-min load average at the window's start ({os.cpu_count()} "
          f"CPUs):")
    print(head)
    for k, (label, r) in enumerate(runs):
        ticks = f"{fmt(r['tick_p50'], '.0f')}/{fmt(r['tick_p99'], '.0f')}"
        print(f"{k + 1:<4} {label:<20} {r['rate']:>9.1f} {r['late']:>5} {r['dropped']:>7} "
              f"{fmt(r['lat_p50'], '.3f'):>8} {fmt(r['lat_p99'], '.3f'):>8} "
              f"{fmt(r['lat_max'], '.3f'):>8} {r['node_cpu']:>7.0f} {r['cpu_per_answer']:>8.0f} "
              f"{ticks:>17} "
              f"{str(r['lost']):>5} {r['steal']:>9.1f} {r['load']:>5}")
    for label in dict.fromkeys(label for label, _ in runs):
        rs = [r for lab, r in runs if lab == label]

        def med(key, rs=rs):
            xs = [r[key] for r in rs if r[key] is not None]
            return float(np.median(xs)) if xs else None
        print(f"{'med':<4} {label:<20} {med('rate'):>9.1f} {'':>5} {med('dropped'):>7.0f} "
              f"{fmt(med('lat_p50'), '.3f'):>8} {fmt(med('lat_p99'), '.3f'):>8} "
              f"{fmt(med('lat_max'), '.3f'):>8} {med('node_cpu'):>7.0f} "
              f"{med('cpu_per_answer'):>8.0f} "
              f"{fmt(med('tick_p50'), '.0f') + '/' + fmt(med('tick_p99'), '.0f'):>17} "
              f"{'':>5} {med('steal'):>9.1f}")
    print_threads(runs)
    if args.floor:
        print_floor(runs, configs)
    goal = GOAL_P99_OBSERVER_MS if args.observer else GOAL_P99_MS
    worst_p99 = max((r["lat_p99"] or 0.0) for _, r in runs)
    drops = sum(r["dropped"] for _, r in runs)
    print(f"goals: no drops at {args.rate:g} Hz: {'met' if not drops else 'NOT met'} "
          f"({drops} missing outputs in all); p99 < {goal:g} ms: "
          f"{'met' if worst_p99 < goal else 'NOT met'} (worst p99 {worst_p99:.3f} ms)")
    if args.observer:
        ticks = {label: [r["tick_p50"] for lab, r in runs if lab == label
                         and r["tick_p50"] is not None] for label in ("no observer", "observer")}
        if all(ticks.values()):
            cost = np.median(ticks["observer"]) - np.median(ticks["no observer"])
            print(f"the observer's cost per tick (median tick p50, observer - no observer): "
                  f"{cost:.0f} µs")


def print_threads(runs):
    """
    Print where each run's CPU per answered message goes (``proc_cpu.cpu_by_thread``).

    Medians of each label's runs, µs; beside the floor's, when it ran, the difference.
    """
    medians = {}
    for label in dict.fromkeys(label for label, _ in runs):
        parts = [r["cpu_by_thread"] for lab, r in runs if lab == label]
        medians[label] = [float(np.median(column)) for column in zip(*parts)]
    floor = medians.get("floor")
    print(f"\nCPU per answered message by thread, µs (medians of the runs"
          f"{'; - floor: the difference' if floor else ''}):")
    print(f"{'run':<20} " + " ".join(f"{group:>17}" for group in THREAD_GROUPS))
    for label, parts in medians.items():
        cells = [f"{x:.0f}" + ("" if floor is None or label == "floor" else f" ({x - f:+.0f})")
                 for x, f in zip(parts, floor or parts)]
        print(f"{label:<20} " + " ".join(f"{cell:>17}" for cell in cells))


def print_floor(runs, configs):
    """
    Print each node's medians beside the floor's, and the goals against it.

    The ratio and the p99 difference are also taken round by round (each run against the
    floor's run of the same round) and their median decides the goals: the machine's speed
    drifts between rounds (the floor's CPU per message moved by 10 % between two rounds of
    one bench), and a run compared with the floor of its own round drifts with it.
    """
    def med(label, key):
        xs = [r[key] for lab, r in runs if lab == label and r[key] is not None]
        return float(np.median(xs)) if xs else None

    def paired(label, key, combine):
        return paired_by_round(runs, label, "floor", key, combine)
    print(f"\nagainst the floor (medians of the runs; 'x floor' and 'p99 - floor' also round "
          f"by round, each run against the floor's run of its round: median [each]): CPU per "
          f"answered message, latency, outputs missing; goals: CPU <= {GOAL_FLOOR_CPU:g}x the "
          f"floor's, p99 within {GOAL_FLOOR_P99_MS:g} ms of it, 0 missing")
    print(f"{'run':<20} {'[us/msg]':>9} {'x floor':>8} {'p50 [ms]':>9} {'p99 [ms]':>9} "
          f"{'p99 - floor':>12} {'missing':>8}  {'by round: x floor':<22} {'p99 - floor':<22}")
    floor = {key: med("floor", key) for key in ("cpu_per_answer", "lat_p50", "lat_p99")}
    for label in dict.fromkeys(label for label, _ in runs):
        cpu, p50, p99 = (med(label, key) for key in ("cpu_per_answer", "lat_p50", "lat_p99"))
        ratio = cpu / floor["cpu_per_answer"] if floor["cpu_per_answer"] else None
        delta = p99 - floor["lat_p99"] if None not in (p99, floor["lat_p99"]) else None
        ratios = paired(label, "cpu_per_answer", lambda x, f: x / f)
        deltas = paired(label, "lat_p99", lambda x, f: x - f)
        missing = sum(r["dropped"] for lab, r in runs if lab == label)
        verdict = "" if label in REFERENCES or not ratios or not deltas else (
            "  goals " + ("met" if np.median(ratios) <= GOAL_FLOOR_CPU
                          and np.median(deltas) <= GOAL_FLOOR_P99_MS
                          and not missing else "NOT met"))
        rounds = "" if label == "floor" else (
            f"  {_median_and_each(ratios, '.2f'):<22} {_median_and_each(deltas, '+.3f'):<22}")
        print(f"{label:<20} {cpu:>9.0f} {fmt(ratio, '.2f'):>8} {fmt(p50, '.3f'):>9} "
              f"{fmt(p99, '.3f'):>9} {fmt(delta, '+.3f'):>12} {missing:>8}{rounds}{verdict}")
    print_core_split(runs, configs)


def print_core_split(runs, configs):
    """
    With a "floor + core" run: print each node's CPU per message over it, round by round.

    With a "floor + Pinocchio" run, first what Pinocchio's calls cost over the floor.

    What the node's own work costs per message over the core's calls, and what those cost
    over the floor: the two parts of a node's excess over its floor. Only a node with the
    floor + core's outputs is compared (the other makes other core calls).
    """
    def paired(label, reference):
        return paired_by_round(runs, label, reference, "cpu_per_answer", lambda x, f: x - f)
    core, pinocchio = paired(FLOOR_CORE, "floor"), paired(FLOOR_PINOCCHIO, "floor")
    if pinocchio:
        print(f"Pinocchio's calls over the floor (floor + Pinocchio - floor, µs per message, "
              f"by round): {_median_and_each(pinocchio, '.0f')}")
    if not core:
        return
    print(f"the core's calls over the floor (floor + core - floor, µs per message, by round): "
          f"{_median_and_each(core, '.0f')}")
    outputs = {label: tuple(names) for label, _, names in configs}
    for label in dict.fromkeys(lab for lab, _ in runs if lab not in REFERENCES):
        if outputs.get(label) != outputs[FLOOR_CORE]:
            print(f"{label}: other outputs than the floor + core's, not compared")
            continue
        print(f"{label}: its own work over the core's calls (node - floor + core, µs per "
              f"message, by round): {_median_and_each(paired(label, FLOOR_CORE), '.0f')}")


def paired_by_round(runs, label, reference, key, combine):
    """
    Return ``combine(x, ref)`` of ``label``'s runs against ``reference``'s, round by round.

    ``key``: the figure of each run's results compared; a round without it (or a reference
    of 0) is left out.
    """
    refs = [r[key] for lab, r in runs if lab == reference]
    mine = [r[key] for lab, r in runs if lab == label]
    return [combine(x, f) for x, f in zip(mine, refs) if x is not None and f]


def _median_and_each(xs, spec):
    """Return "median [x1 x2 ...]" of ``xs`` ("-" when empty)."""
    if not xs:
        return "-"
    return f"{format(float(np.median(xs)), spec)} [{' '.join(format(x, spec) for x in xs)}]"
