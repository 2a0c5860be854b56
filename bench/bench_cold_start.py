#!/usr/bin/env python3
"""
What the dynamics node runs before its first output, with an empty and a warm kernel cache.

Each robot and output set in a fresh process, twice on one new numba cache: first empty (the
kernels the ticks need compile), then warm. Timed: ``import rbd_ros``, ``load_model`` and the
node's warm-up of its tick kernels (``rbd_ros.node.description.warm_up`` with
``tick_calls``), the same calls the node makes before it publishes; ROS itself is not
started. "default" is the node's default outputs, "all" every output (``compute_all``).

    python bench/bench_cold_start.py [--robots arm7,talos]
"""
import argparse
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "test"))

from oracle import ROBOTS, available  # noqa: E402  (also puts the checkout on sys.path)

CHILD = r"""
import sys, time
t0 = time.perf_counter()
import rbd_ros
from rbd_ros import outputs
from rbd_ros.node.description import tick_calls, warm_up
t1 = time.perf_counter()
model = rbd_ros.load_model(sys.argv[1], floating_base=sys.argv[2] == "1")
t2 = time.perf_counter()
enabled = set(outputs.DEFAULTS) if sys.argv[3] == "default" else set(outputs.NAMES)
warm_up(model, tick_calls(enabled))
t3 = time.perf_counter()
print(t1 - t0, t2 - t1, t3 - t2)
"""


def run(path, floating, outputs, cache):
    """Return (import, load, warm-up) seconds of one fresh process on the cache ``cache``."""
    env = dict(os.environ, NUMBA_CACHE_DIR=cache)
    done = subprocess.run([sys.executable, "-c", CHILD, path, "1" if floating else "0",
                           outputs], env=env, capture_output=True, text=True, check=True)
    return tuple(float(x) for x in done.stdout.split())


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument("--robots", default="arm7,talos")
    args = parser.parse_args()
    print(f"{'robot':<7} {'outputs':<8} {'cache':<6} {'import s':>9} {'load s':>8} "
          f"{'warm-up s':>10} {'total s':>8}")
    for robot in [r for r in args.robots.split(",") if available(r)]:
        path, floating = ROBOTS[robot]
        for outputs in ("default", "all"):
            with tempfile.TemporaryDirectory() as cache:
                for kind in ("empty", "warm"):
                    imp, load, warm = run(path, floating, outputs, cache)
                    print(f"{robot:<7} {outputs:<8} {kind:<6} {imp:>9.2f} {load:>8.3f} "
                          f"{warm:>10.2f} {imp + load + warm:>8.2f}", flush=True)


if __name__ == "__main__":
    main()
