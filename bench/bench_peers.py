#!/usr/bin/env python3
"""
rbd_ros beside every rigid-body dynamics library a user could pick instead, from Python.

The same robots and the same random states through rbd_ros, Pinocchio, iDynTree, MuJoCo,
Drake and adam (``bench/peers.py`` says what each is given and how states are converted), for
RNEA, M (CRBA), forward dynamics (ABA), M⁻¹ and ∂τ/∂(q, v, a), where each library has the
call. Per call, fastest of 5 loops of at least ``--budget`` seconds; next to each time, the
largest difference from Pinocchio on the first state (relative to max(1, |Pinocchio's|)). A
library that cannot load a robot or lacks a call gets a dash and the reason. One table on
stdout; ``--png`` saves it as a chart; ``--json`` writes it as a record
(``bench/bench_record.py``: date, machine, load, commit, command) that the manual's benchmarks
page renders as a table and a chart.

    pip install -e '.[peers]'          # iDynTree, MuJoCo, Drake, adam (benchmark only)
    python bench/bench_peers.py [--robots arm7,ur5,panda,hyq,talos] [--png peers.png]
                                [--json doc/bench/peers.json]
"""
import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "test"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from oracle import Robot, available  # noqa: E402  (also puts the checkout on sys.path)
from peers import PEERS, short_reason  # noqa: E402

import bench_record  # noqa: E402
import rbd_ros  # noqa: E402

ALGORITHMS = ("rnea", "crba", "aba", "minv", "rnea_derivatives")
NSTATES = 20


def time_per_call(fn, arglists, budget):
    """Fastest of 5 loops, each of at least ``budget`` s, cycling through ``arglists``; µs."""
    n = len(arglists)
    t0 = time.perf_counter()
    for args in arglists:
        fn(*args)
    rounds = max(1, int(budget / max(time.perf_counter() - t0, 1e-9)))
    best = float("inf")
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(rounds):
            for args in arglists:
                fn(*args)
        best = min(best, (time.perf_counter() - t0) / (rounds * n))
    return best * 1e6


def ours_and_pinocchio(pair, states):
    """{algorithm: {library: (fn, arglists, result in our layout)}} for rbd_ros and Pinocchio."""
    m, pin, pm, pd = pair.model, pair.pin, pair.pm, pair.pd
    ps = [(pair.q_to_pin(q), pair.v_to_pin(v), pair.v_to_pin(a), pair.v_to_pin(t))
          for q, v, a, t in states]
    sym = lambda M: np.triu(M) + np.triu(M, 1).T               # noqa: E731 (upper filled)
    mat, vec = pair.matrix_from_pin, pair.v_from_pin
    ours = {"rnea": (rbd_ros.rnea, [(m, q, v, a) for q, v, a, _ in states]),
            "crba": (rbd_ros.crba, [(m, q) for q, _, _, _ in states]),
            "aba": (rbd_ros.aba, [(m, q, v, t) for q, v, _, t in states]),
            "minv": (rbd_ros.minv, [(m, q) for q, _, _, _ in states]),
            "rnea_derivatives": (rbd_ros.rnea_derivatives,
                                 [(m, q, v, a) for q, v, a, _ in states])}
    theirs = {"rnea": (pin.rnea, [(pm, pd, q, v, a) for q, v, a, _ in ps], vec),
              "crba": (pin.crba, [(pm, pd, q) for q, _, _, _ in ps], lambda M: mat(sym(M))),
              "aba": (pin.aba, [(pm, pd, q, v, t) for q, v, _, t in ps], vec),
              "minv": (pin.computeMinverse, [(pm, pd, q) for q, _, _, _ in ps],
                       lambda M: mat(sym(M))),
              "rnea_derivatives": (pin.computeRNEADerivatives,
                                   [(pm, pd, q, v, a) for q, v, a, _ in ps],
                                   lambda out: mat(out[0]))}
    table = {}
    for algorithm in ALGORITHMS:
        fn, args = ours[algorithm]
        mine = fn(*args[0])
        pfn, pargs, convert = theirs[algorithm]
        ref = convert(np.array(pfn(*pargs[0])) if algorithm != "rnea_derivatives"
                      else pfn(*pargs[0]))
        mine = mine[0] if algorithm == "rnea_derivatives" else mine
        table[algorithm] = {"rbd_ros": (fn, args, mine), "Pinocchio": (pfn, pargs, ref)}
    return table


def peer_rows(pair, states, table):
    """Add every peer's (fn, arglists, result) or its reason to ``table``."""
    for cls in PEERS:
        try:
            peer = cls(pair.model, pair.xml)
        except Exception as exc:                       # a dash and the reason in the table
            for algorithm in ALGORITHMS:
                table[algorithm][cls.name] = short_reason(exc)
            continue
        for algorithm in ALGORITHMS:
            if algorithm not in peer.ALGORITHMS:
                table[algorithm][cls.name] = peer.missing.get(algorithm, "no such call")
                continue
            try:
                fn, args = peer.calls(algorithm, states)
                table[algorithm][cls.name] = (fn, args, peer.result(algorithm, states[0]))
            except Exception as exc:
                table[algorithm][cls.name] = short_reason(exc)


def measure(name, budget):
    """Rows (robot, nv, algorithm, library, µs or None, difference or reason) of one robot."""
    pair = Robot(name)
    states = []
    for seed in range(NSTATES):
        q, v, a, t, _ = pair.random_state(seed)
        if pair.floating:
            t[:6] = 0.0                   # an unactuated base: adam's ABA takes no base force
        states.append((q, v, a, t))
    table = ours_and_pinocchio(pair, states)
    peer_rows(pair, states, table)
    rows = []
    for algorithm in ALGORITHMS:
        ref = table[algorithm]["Pinocchio"][2]
        for library, entry in table[algorithm].items():
            if isinstance(entry, str):
                rows.append((name, pair.model.nv, algorithm, library, None, entry))
                continue
            fn, args, result = entry
            diff = float(np.max(np.abs(np.asarray(result) - ref)) / max(1.0, np.max(np.abs(ref))))
            rows.append((name, pair.model.nv, algorithm, library,
                         time_per_call(fn, args, budget), diff))
    return rows


def print_table(rows):
    print(f"{'robot':<7} {'nv':>3} {'algorithm':<17} {'library':<10} {'µs/call':>10} "
          f"{'× rbd_ros':>10}  {'vs Pinocchio'}")
    ours = {(r[0], r[2]): r[4] for r in rows if r[3] == "rbd_ros"}
    last = None
    for robot, nv, algorithm, library, us, diff in rows:
        if last is not None and (robot, algorithm) != last:
            print()
        last = (robot, algorithm)
        if us is None:
            print(f"{robot:<7} {nv:>3} {algorithm:<17} {library:<10} {'—':>10} {'':>10}  {diff}")
            continue
        print(f"{robot:<7} {nv:>3} {algorithm:<17} {library:<10} {us:>10.2f} "
              f"{us / ours[robot, algorithm]:>10.2f}  {diff:.1e}")


COLUMNS = ("robot", "nv", "algorithm", "library", "us_per_call", "vs_pinocchio")


def record_rows(rows):
    """Return the rows as the JSON record holds them: µs rounded, the difference or reason."""
    return [[robot, nv, algorithm, library, None if us is None else round(us, 3),
             diff if us is None else f"{diff:.1e}"]
            for robot, nv, algorithm, library, us, diff in rows]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument("--robots", default="arm7,ur5,panda,hyq,talos")
    parser.add_argument("--budget", type=float, default=0.02,
                        help="seconds per timed loop (the fastest of 5 loops counts)")
    parser.add_argument("--png", help="save the table as a chart there")
    parser.add_argument("--json", help="also write the table as a JSON record there")
    args = parser.parse_args()
    begun = bench_record.start()
    names = [n for n in args.robots.split(",") if available(n)]
    print(f"rbd_ros {rbd_ros.__version__}; " + ", ".join(_versions()))
    rows = []
    for name in names:
        rows += measure(name, args.budget)
    print_table(rows)
    if args.png:
        bench_record.peers_png(COLUMNS, record_rows(rows), args.png)
        print(f"\nchart: {args.png}")
    if args.json:
        notes = (f"rbd_ros {rbd_ros.__version__}; " + ", ".join(_versions())
                 + f"; per call from Python, fastest of 5 loops of at least {args.budget} s; "
                 "vs_pinocchio: the largest difference from Pinocchio on the first state "
                 "(relative to max(1, |Pinocchio's|)), or why the library has no figure.")
        bench_record.write(args.json, bench_record.record(
            begun, "rbd_ros beside its peers", COLUMNS, record_rows(rows), notes))
        print(f"record: {args.json}")


def _versions():
    from importlib.metadata import PackageNotFoundError, version
    out = []
    for dist in ("pin", "idyntree", "mujoco", "drake", "adam-robotics"):
        try:
            out.append(f"{dist} {version(dist)}")
        except PackageNotFoundError:
            out.append(f"{dist} not installed")
    return out


if __name__ == "__main__":
    main()
