#!/usr/bin/env python3
"""
What a fresh machine compiles: every kernel from an empty cache, and the node's first output.

``--kernels``: ``rbd_warm_cache``'s compile of every kernel into a new, empty numba cache, in
a fresh process with ``--jobs`` worker processes (2 by default, as on a 2-core machine): per
kernel the wall time and the worker's CPU time (which the machine's load does not inflate),
the five slowest kernels, the total CPU time and the wall time, and how busy the workers
were (the per-kernel wall times summed, over the wall time: 1.0 is one kernel at a time).
``--tree PATH`` (repeatable) measures other checkouts the same way, one after the other
(e.g. a ``git worktree`` of the revision before a change); a tree whose ``rbd_warm_cache``
predates ``compile_kernels`` is compiled as that version did it (a process pool, every
kernel in definition order).

Without ``--kernels``: what the dynamics node runs before its first output, each robot and
output set in a fresh process, twice on one new numba cache: first empty (the kernels the
ticks need compile), then warm. Timed: ``import rbd_ros``, ``load_model`` and the node's
warm-up of its tick kernels (``rbd_ros.node.description.warm_up`` with ``tick_calls``), the
same calls the node makes before it publishes; ROS itself is not started. "default" is the
node's default outputs, "all" every output (``compute_all``). ``--node`` adds the real node
(``bench_first_output.py``'s start, default outputs) on an empty cache: seconds from its
spawn to its first ``~/torques``.

    python bench/bench_cold_start.py [--robots arm7,talos] [--node]
    python bench/bench_cold_start.py --kernels [--jobs 2] [--tree PATH ...]
"""
import argparse
import concurrent.futures
import json
import multiprocessing
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

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

# compiles every kernel of the tree on PYTHONPATH into NUMBA_CACHE_DIR; prints JSON records
KERNELS_CHILD = r"""
import json, sys, time
import bench_cold_start
if __name__ == "__main__":
    started = time.perf_counter()
    records = bench_cold_start.compile_every_kernel(int(sys.argv[1]))
    print(json.dumps({"wall": time.perf_counter() - started, "records": records}))
"""


def timed_compile(index):
    """Compile kernel ``index`` in this worker as ``rbd_warm_cache`` does; its record (dict)."""
    from rbd_ros.tools import warm_cache
    warm_cache.define_kernels()
    from rbd_ros import _jit
    kernel = _jit.KERNELS[index]
    started, cpu, wall = time.perf_counter(), time.process_time(), time.time()
    kernel.compile_declared()
    return {"name": kernel.py_func.__name__, "seconds": time.perf_counter() - started,
            "cpu_seconds": time.process_time() - cpu, "started": wall, "ended": time.time(),
            "pid": os.getpid()}


def compile_every_kernel(jobs):
    """Compile every kernel with the tree's own ``compile_kernels``, or as older trees did."""
    from rbd_ros.tools import warm_cache
    if hasattr(warm_cache, "compile_kernels"):
        with open(os.devnull, "w") as quiet:
            return [r._asdict() for r in warm_cache.compile_kernels(jobs=jobs, out=quiet)]
    warm_cache.define_kernels()
    from rbd_ros import _jit
    context = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(jobs, mp_context=context) as pool:
        futures = [pool.submit(timed_compile, k) for k in range(len(_jit.KERNELS))]
        return [f.result() for f in concurrent.futures.as_completed(futures)]


def git_description(tree):
    """Return the tree's commit (short) and whether it has uncommitted changes."""
    try:
        sha = subprocess.run(["git", "-C", tree, "rev-parse", "--short", "HEAD"], check=True,
                             capture_output=True, text=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", tree, "status", "--porcelain",
                                "--untracked-files=no"], check=True, capture_output=True,
                               text=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "not a git checkout"
    return sha + (" with uncommitted changes" if dirty else "")


def measure_kernels(tree, jobs):
    """Compile every kernel of ``tree`` into an empty cache in a fresh process; its report."""
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache,
                   PYTHONPATH=os.pathsep.join([tree, HERE] + [
                       p for p in [os.environ.get("PYTHONPATH")] if p]))
        done = subprocess.run([sys.executable, "-c", KERNELS_CHILD, str(jobs)], env=env,
                              capture_output=True, text=True, cwd=tree)
    if done.returncode:
        raise SystemExit(f"compiling the kernels of {tree} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def print_kernels(tree, jobs, report):
    records = sorted(report["records"], key=lambda r: -r["cpu_seconds"])
    wall = report["wall"]
    cpu = sum(r["cpu_seconds"] for r in records)
    busy = sum(r["seconds"] for r in records) / wall
    print(f"\n{tree} ({git_description(tree)}): {len(records)} kernels, {jobs} worker "
          f"processes, empty cache")
    print(f"  wall {wall:.1f} s, CPU {cpu:.1f} s in all, workers busy {busy:.2f} "
          f"(kernel wall times summed / wall; 1.0: one at a time), "
          f"{len({r['pid'] for r in records})} worker processes used")
    print(f"  {'kernel':<36} {'CPU s':>7} {'wall s':>7} {'start s':>8} {'end s':>7}")
    t0 = min(r["started"] for r in records)
    for r in records:
        print(f"  {r['name']:<36} {r['cpu_seconds']:>7.1f} {r['seconds']:>7.1f} "
              f"{r['started'] - t0:>8.1f} {r['ended'] - t0:>7.1f}")
    print("  five slowest (CPU s): " + ", ".join(f"{r['name']} {r['cpu_seconds']:.1f}"
                                                 for r in records[:5]))


def run(path, floating, outputs, cache):
    """Return (import, load, warm-up) seconds of one fresh process on the cache ``cache``."""
    env = dict(os.environ, NUMBA_CACHE_DIR=cache)
    done = subprocess.run([sys.executable, "-c", CHILD, path, "1" if floating else "0",
                           outputs], env=env, capture_output=True, text=True, check=True)
    return tuple(float(x) for x in done.stdout.split())


def node_first_output(robots):
    """Start the node (default outputs) on an empty cache per robot; seconds to ~/torques."""
    import rclpy
    from rclpy.executors import SingleThreadedExecutor

    import bench_first_output
    from oracle import ROBOTS, available, load_quietly
    rclpy.init()
    bench = rclpy.create_node("rbd_bench_cold_start")
    executor = SingleThreadedExecutor()
    executor.add_node(bench)
    print(f"\n{'robot':<7} {'node first output, empty cache [s]':>35}")
    for robot in [r for r in robots if available(r)]:
        path, floating = ROBOTS[robot]
        with open(path, encoding="utf-8") as f:
            params = bench_first_output.parameters_file(f.read(), floating)
        model = load_quietly(path, floating, mimic="independent")
        publish = bench_first_output.publisher(bench, model, floating)
        with tempfile.TemporaryDirectory() as cache:
            os.environ["NUMBA_CACHE_DIR"] = cache       # the node process inherits it
            seconds = bench_first_output.one_start(bench, executor, params, publish, 600)[0]
            del os.environ["NUMBA_CACHE_DIR"]
        print(f"{robot:<7} {seconds:>35.1f}", flush=True)
        os.unlink(params)
    bench.destroy_node()
    rclpy.shutdown()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument("--robots", default="arm7,talos")
    parser.add_argument("--kernels", action="store_true",
                        help="compile every kernel into an empty cache, per kernel times")
    parser.add_argument("--jobs", type=int, default=2, help="worker processes (--kernels)")
    parser.add_argument("--tree", action="append",
                        help="checkout to measure (--kernels; default: this one)")
    parser.add_argument("--node", action="store_true",
                        help="also start the node on an empty cache (needs ROS)")
    args = parser.parse_args()
    with open("/proc/loadavg", encoding="ascii") as f:
        print(f"load average at the start: {f.read().strip()}")
    if args.kernels:
        for tree in args.tree or [ROOT]:
            tree = os.path.realpath(tree)
            print_kernels(tree, args.jobs, measure_kernels(tree, args.jobs))
        return
    sys.path.insert(0, os.path.join(ROOT, "test"))
    from oracle import ROBOTS, available  # also puts the checkout on sys.path
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
    if args.node:
        node_first_output(args.robots.split(","))


if __name__ == "__main__":
    main()
