#!/usr/bin/env python3
"""
The payload estimate's calibration: whether its stated std covers its error.

    python bench/bench_payload_calibration.py [--payloads 50] [--rate 100]

Random rigid payloads on rbd_arm7's ``tool`` (``test/pinocchio_oracles.random_payload``),
efforts simulated with Pinocchio, noise σ ∈ {0, 0.01, 0.05} N·m, windows of 10 s with and
without a 300 ms hole in the stamps (``test/core/payload_cases.py``, which the test
``test/core/test_payload_calibration.py`` runs on 3 payloads). Per σ and hole: the fraction of
reported values within 3 stated std of the truth, the largest |error| / std, and the largest
relative error of the mass. Needs Pinocchio (``pin``). State the load (/proc/loadavg).
"""
import argparse
import os
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [ROOT, os.path.join(ROOT, "test"), os.path.join(ROOT, "test", "core")]

import pinocchio as pin  # noqa: E402

import rbd_ros  # noqa: E402
from payload_cases import run  # noqa: E402


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    p.add_argument("--payloads", type=int, default=50)
    p.add_argument("--rate", type=float, default=100.0, help="samples per second")
    args = p.parse_args()
    arm = rbd_ros.load_model(rbd_ros.robots.path("rbd_arm7"))
    rows, refused, clock = {}, 0, time.perf_counter()
    for _, noise, hole, est, truth in run(pin, arm, args.payloads, rate=args.rate):
        if not est.ok:
            refused += 1
            continue
        z = np.abs(est.values - truth) / est.stds
        rows.setdefault((noise, hole), []).append((z, abs(est.values[0] / truth[0] - 1)))
    seconds = time.perf_counter() - clock
    print(f"{args.payloads} payloads, {args.rate:g} Hz, 10 s windows; {refused} refused; "
          f"{seconds:.1f} s; load {open('/proc/loadavg').read().split()[:3]}")
    print(f"{'noise N·m':>10} {'hole':>5} {'cases':>6} {'within 3 std':>13} {'max |z|':>8} "
          f"{'beyond 5':>9} {'max mass err':>13}")
    every = []
    for (noise, hole), cases in sorted(rows.items()):
        z = np.array([c[0] for c in cases])
        every.append(z.ravel())
        print(f"{noise:>10g} {str(hole):>5} {len(cases):>6} {100 * np.mean(z < 3):>12.2f}% "
              f"{z.max():>8.2f} {int(np.sum(z > 5)):>9} {max(c[1] for c in cases):>13.1e}")
    every = np.concatenate(every)
    print(f"all: {every.size} values, {100 * np.mean(every < 3):.2f} % within 3 std, "
          f"{int(np.sum(every > 5))} beyond 5 std, max {every.max():.2f}")


if __name__ == "__main__":
    main()
