#!/usr/bin/env python3
"""
Fleet evaluation on Dask: messages/s with 1 and 2 workers, identification cost vs messages.

    python bench/bench_fleet.py [--bags 8] [--duration 60] [--workers 1 2] [--split 20000]
                                [--identify-sizes 1000 10000 100000] [--repeat 2]

1. ``--bags`` simulated rbd_arm7 bags (``scripts/make_fleet_bags.py``, 100 Hz) are evaluated by
   ``rbd_replay BAGS -o DIR --no-bag`` on a LocalCluster of k single-threaded worker
   processes, for each k of ``--workers``: the same bags each time. The cluster is started
   and its workers have imported rbd_ros (the compiled kernels, from the disk cache) before
   the clock starts; that start is timed separately. Rate = joint_states messages / wall time.
2. The identification's map step (``identification_stats.statistics``, with friction and
   armature columns) on N random samples: time and peak traced memory (tracemalloc sees
   numpy's buffers), against the dense stacked regressor a single-process fit would hold.
"""
import argparse
import contextlib
import io
import os
import sys
import tempfile
import time
import tracemalloc

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "scripts"))

import make_fleet_bags  # noqa: E402
import rbd_ros  # noqa: E402
from rbd_ros.identification import statistics as identification_stats  # noqa: E402
from rbd_ros.actuation import joint_parameters as joint_friction  # noqa: E402
from rbd_ros.replay import cli  # noqa: E402


def _warm():
    import rbd_ros as r
    model = r.load_model(r.robots.path("rbd_arm7"))
    r.rnea_batch(model, np.zeros((2, model.nq)), np.zeros((2, model.nv)),
                 np.zeros((2, model.nv)))
    return os.getpid()


def evaluate(paths, workers, split, out, repeat):
    """(seconds to start the cluster, best seconds to evaluate, messages) with ``workers``."""
    from dask.distributed import Client, LocalCluster
    t0 = time.perf_counter()
    cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                           dashboard_address=None)
    client = Client(cluster)
    client.run(_warm)
    start = time.perf_counter() - t0
    try:
        wall = float("inf")
        for k in range(repeat):               # best of: the VM is shared with other jobs
            t0 = time.perf_counter()
            with contextlib.redirect_stdout(io.StringIO()):
                status = cli.main(paths + ["-o", f"{out}_{k}", "--no-bag", "--no-plots",
                                           "--no-progress", "--scheduler",
                                           cluster.scheduler_address,
                                           "--split-messages", str(split)])
            wall = min(wall, time.perf_counter() - t0)
            out_k = f"{out}_{k}"
    finally:
        client.close()
        cluster.close()
    if status != 0:
        raise SystemExit(f"rbd_replay failed ({status})")
    import json
    with open(os.path.join(out_k, "fleet_report", "fleet.json")) as f:
        messages = sum(r["messages"] for r in json.load(f)["bags"])
    return start, wall, messages


def identification_cost(n, kinds):
    """
    (seconds, peak MiB) of the statistics of n random samples, and the dense Y's MiB.

    Run on a Dask worker, as in ``rbd_replay --identify``: one BLAS thread.
    """
    model = rbd_ros.load_model(rbd_ros.robots.path("rbd_arm7"))
    rng = np.random.default_rng(0)
    q = np.array([model.random_configuration(rng) for _ in range(n)])
    v, a = rng.normal(size=(n, model.nv)), rng.normal(size=(n, model.nv))
    tau = rng.normal(size=(n, model.nv))
    tracemalloc.start()
    t0 = time.perf_counter()
    stats = identification_stats.statistics(model, q, v, a, tau, kinds)
    seconds = time.perf_counter() - t0
    peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    dense = n * model.nv * stats.R.shape[1] * 8 / 2**20
    return seconds, peak, dense


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    p.add_argument("--bags", type=int, default=8)
    p.add_argument("--duration", type=float, default=60.0)
    p.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    p.add_argument("--split", type=int, default=20000)
    p.add_argument("--identify-sizes", type=int, nargs="+", default=[1000, 10000, 100000])
    p.add_argument("--repeat", type=int, default=2, help="evaluations per worker count (best)")
    args = p.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        paths = [str(x) for x in make_fleet_bags.write_fleet(
            os.path.join(tmp, "bags"), args.bags, args.duration)]
        print(f"{args.bags} bags, {args.duration:g} s base duration, 100 Hz; "
              f"{os.cpu_count()} cores\n")
        print("| workers | cluster start (s) | evaluation (s) | messages | messages/s |"
              " speed-up | load average before |")
        print("| --- | --- | --- | --- | --- | --- | --- |")
        first = None
        for k in args.workers:
            load = os.getloadavg()[0]
            start, wall, messages = evaluate(paths, k, args.split,
                                             os.path.join(tmp, f"out{k}"), args.repeat)
            rate = messages / wall
            first = first or rate
            print(f"| {k} | {start:.1f} | {wall:.2f} | {messages} | {rate:,.0f} | "
                  f"{rate / first:.2f}x | {load:.1f} |", flush=True)
    kinds = joint_friction.kinds(friction=True, armature=True)
    print("\n| samples (messages) | statistics time (s) | peak memory (MiB) |"
          " dense stacked Y (MiB) |")
    print("| --- | --- | --- | --- |")
    from dask.distributed import Client, LocalCluster
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        for n in args.identify_sizes:
            seconds, peak, dense = client.submit(identification_cost, n, kinds,
                                                 pure=False).result()
            print(f"| {n} | {seconds:.2f} | {peak:.1f} | {dense:.1f} |", flush=True)


if __name__ == "__main__":
    main()
