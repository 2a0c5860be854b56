#!/usr/bin/env python3
"""
Throughput (states/s) of the batched functions against a Python loop of single-state calls.

For each robot and algorithm (rnea, aba, minv, rnea_derivatives, aba_derivatives), on N random
states:

    loop      a Python loop calling the single-state function (one thread)
    batch 1T  the batch function with numba.set_num_threads(1)
    batch nT  the batch function with all of numba's threads
    nT/1T     the speed-up of the batch function from threads (goal: >= 1.7x on 2 cores)

Each figure is the best of ``--repeats`` runs, the three variants taking turns within each
repeat. On a machine shared with other processes the numbers are indicative only.

    python bench/bench_batch.py [--robots arm7,talos] [--n 2000] [--repeats 7]
                                [--algorithms rnea,aba,minv,rnea_derivatives,aba_derivatives]
"""
import argparse
import os
import sys
import time

import numba
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "test"))

from oracle import Robot, available  # noqa: E402  (also puts the checkout on sys.path)

import rbd_ros  # noqa: E402

ALGORITHMS = ("rnea", "aba", "minv", "rnea_derivatives", "aba_derivatives")


def states(robot, n, seed=0):
    rng = np.random.default_rng(seed)
    m = robot.model
    q = np.array([m.random_configuration(rng) for _ in range(n)])
    v = rng.normal(size=(n, m.nv))
    a = rng.normal(size=(n, m.nv))
    tau = rng.normal(scale=5.0, size=(n, m.nv))
    return q, v, a, tau


def calls(model, name, q, v, a, tau):
    """(loop over single-state calls, batch call) for algorithm ``name``."""
    n = q.shape[0]
    if name == "rnea":
        f, b, args = rbd_ros.rnea, rbd_ros.rnea_batch, (q, v, a)
    elif name == "aba":
        f, b, args = rbd_ros.aba, rbd_ros.aba_batch, (q, v, tau)
    elif name == "minv":
        f, b, args = rbd_ros.minv, rbd_ros.minv_batch, (q,)
    elif name == "rnea_derivatives":
        f, b, args = rbd_ros.rnea_derivatives, rbd_ros.rnea_derivatives_batch, (q, v, a)
    else:
        f, b, args = rbd_ros.aba_derivatives, rbd_ros.aba_derivatives_batch, (q, v, tau)
    rows = [tuple(x[k] for x in args) for k in range(n)]

    def loop():
        for r in rows:
            f(model, *r)

    def batch():
        b(model, *args)
    return loop, batch


def best_seconds(loop, batch, nthreads, repeats):
    """
    Return the best (loop, batch 1 thread, batch nthreads) seconds.

    The three are measured in turn within each repeat, so that a burst of load from other
    processes hits them alike.
    """
    def timed(fn):
        t0 = time.perf_counter()
        fn()
        return time.perf_counter() - t0

    best = [float("inf")] * 3
    try:
        for rep in range(repeats + 1):          # the first round is a warm-up
            times = [timed(loop)]
            numba.set_num_threads(1)
            times.append(timed(batch))
            numba.set_num_threads(nthreads)
            times.append(timed(batch))
            if rep:
                best = [min(b, t) for b, t in zip(best, times)]
    finally:
        numba.set_num_threads(nthreads)
    return best


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--robots", default="arm7,talos")
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--algorithms", default=",".join(ALGORITHMS))
    args = parser.parse_args()

    nthreads = numba.get_num_threads()
    tiny = rbd_ros.load_model(os.path.join(os.path.dirname(rbd_ros.__file__), "robots",
                                           "rbd_arm7.urdf"))
    rbd_ros.minv_batch(tiny, np.zeros((2, tiny.nq)))      # starts numba's thread pool
    print(f"N = {args.n} states, numba threads: {nthreads} (threading layer: "
          f"{numba.threading_layer()}), best of {args.repeats}; states/s")
    header = (f"{'robot':<8} {'algorithm':<17} {'loop':>11} {'batch 1T':>11} "
              f"{'batch ' + str(nthreads) + 'T':>11} {'nT/1T':>7} {'1T/loop':>8}")
    print(header)
    print("-" * len(header))
    for name in args.robots.split(","):
        if not available(name):
            print(f"{name:<8} (not available: example-robot-data missing)")
            continue
        robot = Robot(name)
        q, v, a, tau = states(robot, args.n)
        for algo in args.algorithms.split(","):
            loop, batch = calls(robot.model, algo, q, v, a, tau)
            t_loop, t_1, t_n = best_seconds(loop, batch, nthreads, args.repeats)
            print(f"{name:<8} {algo:<17} {args.n / t_loop:>11.0f} {args.n / t_1:>11.0f} "
                  f"{args.n / t_n:>11.0f} {t_1 / t_n:>6.2f}x {t_loop / t_1:>7.2f}x")


if __name__ == "__main__":
    main()
