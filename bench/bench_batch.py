#!/usr/bin/env python3
"""
Throughput (states/s) of the batched functions against a Python loop of single-state calls.

For each robot and algorithm (rnea, aba, minv, rnea_derivatives, aba_derivatives, regressor),
on N random states:

    loop      a Python loop calling the single-state function (one thread), each result
              dropped at once: every call writes into the same few cache-hot pages
    kept      the same loop keeping every result, as a batch call returns every result: the
              like-for-like loop of a fresh batch call (its results go to memory too)
    1T, nT    the batch function with numba.set_num_threads(1), and with all of numba's threads
    fresh     the batch function allocating its outputs (as a plain call does): the kernel's
              threads fault in every page of them
    out=      the batch function writing into the same arrays, passed as ``out=``, every call
    nT/1T     the speed-up from threads (goal: >= 1.7x on 2 cores), for each kind of output
    flt/st    minor page faults per state of one fresh call (getrusage, all threads; an
              out= call has none): the first-touch cost, whatever the load of the machine
    1T/kept   batch 1T (fresh) against the loop that keeps its results
    o/loop    batch 1T with out= (the same arrays every call) against the loop that drops
              them: the batch writes N results where the loop rewrites one
    MB        the size of the outputs of one batch call
    wr fresh, wr out=
              the floor set by memory: states/s of only writing outputs of that size with all
              threads (fresh arrays, or the same arrays every call), no dynamics at all. A
              batch near it is bound by the memory bus, not by its kernel or its threads

Each figure is the best of ``--repeats`` runs, the variants taking turns within each repeat.
On a machine shared with other processes the numbers are indicative only (the load is
printed before and after).

    python bench/bench_batch.py [--robots arm7,panda,hyq,talos] [--n 2000] [--repeats 7]
                                [--algorithms rnea,aba,minv,rnea_derivatives,aba_derivatives,
                                              regressor]
"""
import argparse
import os
import resource
import sys
import time

import numba
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "test"))

from oracle import Robot, available  # noqa: E402  (also puts the checkout on sys.path)

import rbd_ros  # noqa: E402

ALGORITHMS = ("rnea", "aba", "minv", "rnea_derivatives", "aba_derivatives", "regressor")
ROBOTS = ("arm7", "panda", "hyq", "talos")


def states(robot, n, seed=0):
    rng = np.random.default_rng(seed)
    m = robot.model
    q = np.array([m.random_configuration(rng) for _ in range(n)])
    v = rng.normal(size=(n, m.nv))
    a = rng.normal(size=(n, m.nv))
    tau = rng.normal(scale=5.0, size=(n, m.nv))
    return q, v, a, tau


def calls(model, name, q, v, a, tau):
    """
    Return the timed variants of one call and the arrays its ``out=`` variant writes.

    (loop dropping its results, loop keeping them, fresh batch call, batch call with out=,
    the out= arrays).
    """
    n = q.shape[0]
    if name == "rnea":
        f, b, args = rbd_ros.rnea, rbd_ros.rnea_batch, (q, v, a)
    elif name == "aba":
        f, b, args = rbd_ros.aba, rbd_ros.aba_batch, (q, v, tau)
    elif name == "minv":
        f, b, args = rbd_ros.minv, rbd_ros.minv_batch, (q,)
    elif name == "rnea_derivatives":
        f, b, args = rbd_ros.rnea_derivatives, rbd_ros.rnea_derivatives_batch, (q, v, a)
    elif name == "aba_derivatives":
        f, b, args = rbd_ros.aba_derivatives, rbd_ros.aba_derivatives_batch, (q, v, tau)
    else:
        f, b, args = (rbd_ros.joint_torque_regressor, rbd_ros.joint_torque_regressor_batch,
                      (q, v, a))
    rows = [tuple(x[k] for x in args) for k in range(n)]
    out = b(model, *args)          # arrays of the result's shapes, written again by each call

    def loop():
        for r in rows:
            f(model, *r)

    def kept():
        return [f(model, *r) for r in rows]

    def fresh():
        b(model, *args)

    def reused():
        b(model, *args, out=out)
    return loop, kept, fresh, reused, out


@numba.njit(parallel=True, cache=False)
def _write(flat):
    chunk = 4096
    for c in numba.prange((flat.size + chunk - 1) // chunk):
        for k in range(c * chunk, min(flat.size, (c + 1) * chunk)):
            flat[k] = 1.0


def writes(out):
    """Return (write fresh arrays shaped as ``out``, write ``out`` itself): the memory floor."""
    arrays = out if isinstance(out, tuple) else (out,)

    def fresh():
        for x in arrays:
            _write(np.empty(x.size))

    def reused():
        for x in arrays:
            _write(x.reshape(-1))
    return fresh, reused, sum(x.nbytes for x in arrays) / 1e6


def minor_faults():
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


def best_seconds(variants, repeats):
    """
    Return the best seconds of each (function, number of threads) of ``variants``.

    Also the minor page faults of each variant's last run. The variants are measured in
    turn within each repeat, so that a burst of load from other processes hits them alike.
    """
    saved = numba.get_num_threads()
    best = [float("inf")] * len(variants)
    faults = [0] * len(variants)
    try:
        for rep in range(repeats + 1):          # the first round is a warm-up
            for j, (fn, nthreads) in enumerate(variants):
                numba.set_num_threads(nthreads)
                f0 = minor_faults()
                t0 = time.perf_counter()
                fn()
                t = time.perf_counter() - t0
                faults[j] = minor_faults() - f0
                if rep:
                    best[j] = min(best[j], t)
    finally:
        numba.set_num_threads(saved)
    return best, faults


def load():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--robots", default=",".join(ROBOTS))
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--algorithms", default=",".join(ALGORITHMS))
    args = parser.parse_args()

    nthreads = numba.get_num_threads()
    tiny = rbd_ros.load_model(os.path.join(os.path.dirname(rbd_ros.__file__), "robots",
                                           "rbd_arm7.urdf"))
    rbd_ros.minv_batch(tiny, np.zeros((2, tiny.nq)))      # starts numba's thread pool
    print(f"N = {args.n} states, numba threads: {nthreads} (threading layer: "
          f"{numba.threading_layer()}), best of {args.repeats}; states/s; load {load()}")
    nt = f"{nthreads}T"
    header = (f"{'robot':<8} {'algorithm':<17} {'loop':>9} {'kept':>9} {'1T fresh':>9} "
              f"{nt + ' fresh':>9} {'nT/1T':>6} {'1T out=':>9} {nt + ' out=':>9} {'nT/1T':>6} "
              f"{'flt/st':>6} {'1T/kept':>7} {'o/loop':>7} {'MB':>5} {'wr fresh':>9} "
              f"{'wr out=':>9}")
    print(header)
    print("-" * len(header))
    for name in args.robots.split(","):
        if not available(name):
            print(f"{name:<8} (not available: example-robot-data missing)")
            continue
        robot = Robot(name)
        q, v, a, tau = states(robot, args.n)
        for algo in args.algorithms.split(","):
            loop, kept, fresh, reused, out = calls(robot.model, algo, q, v, a, tau)
            write_fresh, write_out, megabytes = writes(out)
            (t_loop, t_kept, t_1, t_n, t_1o, t_no, t_wf, t_wo), faults = best_seconds(
                [(loop, 1), (kept, 1), (fresh, 1), (fresh, nthreads), (reused, 1),
                 (reused, nthreads), (write_fresh, nthreads), (write_out, nthreads)],
                args.repeats)
            n = args.n
            print(f"{name:<8} {algo:<17} {n / t_loop:>9.0f} {n / t_kept:>9.0f} {n / t_1:>9.0f} "
                  f"{n / t_n:>9.0f} {t_1 / t_n:>5.2f}x {n / t_1o:>9.0f} {n / t_no:>9.0f} "
                  f"{t_1o / t_no:>5.2f}x {faults[2] / n:>6.2f} {t_kept / t_1:>6.2f}x "
                  f"{t_loop / t_1o:>6.2f}x {megabytes:>5.0f} {n / t_wf:>9.0f} {n / t_wo:>9.0f}",
                  flush=True)
    print(f"load after: {load()}")


if __name__ == "__main__":
    main()
