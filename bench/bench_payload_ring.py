#!/usr/bin/env python3
"""
Per-message cost of recording a joint state into ``~/estimate_payload``'s ring.

    python bench/bench_payload_ring.py [--before REV] [--joints 32]

The node records every joint_states message that merges a model joint
(``rbd_ros.node.estimate_payload.PayloadSamples.record``); this times one call with timeit
on a talos-sized state (32 joints) for this tree and, with ``--before``, for the
``PayloadSamples`` of an older revision side by side (its source taken with ``git show``).
State the load (/proc/loadavg).
"""
import argparse
import os
import subprocess
import sys
import threading
import timeit

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from rbd_ros.node import estimate_payload  # noqa: E402
from rbd_ros.node.joint_cache import JointCache  # noqa: E402


def older(rev):
    """Return the ``PayloadSamples`` class of revision ``rev``."""
    source = subprocess.run(["git", "-C", ROOT, "show", f"{rev}:rbd_ros/node/estimate_payload.py"],
                            capture_output=True, text=True, check=True).stdout
    names = {"np": np, "threading": threading, "CAPACITY": estimate_payload.CAPACITY}
    exec(source[source.index("class SampleRing"):                      # noqa: S102
                source.index("def create_estimate_payload_service")], names)
    return names["PayloadSamples"]


def per_message(samples, cache):
    """Return the best of 5 × 20,000 ``record`` calls, µs per call."""
    k = [0]

    def one():
        k[0] += 1
        samples.record(cache, (k[0] // 1000, (k[0] % 1000) * 1_000_000))
    one()
    return min(timeit.repeat(one, number=20_000, repeat=5)) / 20_000 * 1e6


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    p.add_argument("--before", metavar="REV", default=None)
    p.add_argument("--joints", type=int, default=32)
    args = p.parse_args()
    cache = JointCache([f"j{k}" for k in range(args.joints)])
    cache.position[:], cache.velocity[:], cache.effort[:] = 0.1, 0.2, 0.3
    print(f"load {open('/proc/loadavg').read().split()[:3]}, {args.joints} joints")
    rows = [("this tree", estimate_payload.PayloadSamples)]
    if args.before:
        rows.insert(0, (args.before, older(args.before)))
    for name, cls in rows * 2:
        print(f"{name:>12}: {per_message(cls(), cache):6.2f} µs per message")


if __name__ == "__main__":
    main()
