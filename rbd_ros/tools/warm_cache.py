"""
Compile every dynamics kernel into the disk cache ahead of use, in parallel, with progress.

Kernels compile at their first call (``rbd_ros._jit``): after an install or an update, the
first calls of a process pay numba's compile (a minute or more for the derivative kernels).
``rbd_warm_cache`` (also ``python -m rbd_ros.tools.warm_cache``, ``ros2 run rbd_ros warm_cache``)
does it once for every kernel, one worker process per core by default, so that the node's
first start and the tests find them cached. ``./dev.sh setup`` runs it. A kernel already in
the cache loads in milliseconds: a second run is quick.
"""
import argparse
import concurrent.futures
import multiprocessing
import os
import re
import shutil
import sys
import threading
import time
import typing

STALE_DAYS = 30
WORKER_START_S = 60      # how long a worker waits for the others to start
# what the cache held before it was keyed by content: <folder>_<sha1 of its path>, warm-<hash>
_OLD_LAYOUT = re.compile(r"^(\w+_[0-9a-f]{40}|warm-[0-9a-f]{16})$")


def define_kernels():
    """Import every module that defines kernels (the contact ones: not the package's)."""
    import rbd_ros  # noqa: F401
    import rbd_ros.contact.detection  # noqa: F401
    import rbd_ros.contact.measured_wrenches  # noqa: F401
    import rbd_ros.contact.observer_tick  # noqa: F401
    import rbd_ros.formats.joint_state_merge  # noqa: F401


class Compiled(typing.NamedTuple):
    """One kernel compiled (or loaded) by a worker: when, how long, on which process."""

    name: str
    seconds: float          # wall time of the compile
    cpu_seconds: float      # the worker's CPU time during it (the load does not change it)
    started: float          # time.time() at its start and end: intervals comparable across
    ended: float            # the workers
    pid: int


def _start_worker(ready):
    """Import the kernels, then wait for the other workers: every one starts compiling at once."""
    define_kernels()
    try:
        ready.wait(WORKER_START_S)
    except threading.BrokenBarrierError:    # a worker late or gone: compile without it
        pass


def _compile(index):
    """Compile kernel ``index`` of ``rbd_ros._jit.KERNELS`` in this worker; a ``Compiled``."""
    define_kernels()
    from rbd_ros import _jit
    kernel = _jit.KERNELS[index]
    started, cpu, wall = time.perf_counter(), time.process_time(), time.time()
    kernel.compile_declared()
    return Compiled(kernel.py_func.__name__, time.perf_counter() - started,
                    time.process_time() - cpu, wall, time.time(), os.getpid())


def compile_kernels(names=None, jobs=None, out=sys.stdout):
    """
    Compile the kernels ``names`` (default: every one) in ``jobs`` worker processes.

    Return their ``Compiled`` records in the order they finished. Processes, not threads:
    numba compiles under one lock per process. Workers are spawned, not forked (a fork of a
    process that has initialised LLVM is not safe), and share the disk cache: a kernel that
    calls another loads it from there once a worker has written it.
    """
    define_kernels()
    from rbd_ros import _jit
    indices = [k for k, kernel in enumerate(_jit.KERNELS)
               if names is None or kernel.py_func.__name__ in names]
    jobs = max(1, min(jobs or os.cpu_count() or 1, len(indices)))
    print(f"rbd_ros: compiling {len(indices)} dynamics kernels into "
          f"{_jit.version_cache_dir()} with {jobs} processes (cached ones load at once)",
          file=out, flush=True)
    started, done = time.perf_counter(), []
    context = multiprocessing.get_context("spawn")
    ready = context.Barrier(jobs)
    with concurrent.futures.ProcessPoolExecutor(jobs, mp_context=context,
                                                initializer=_start_worker,
                                                initargs=(ready,)) as pool:
        futures = [pool.submit(_compile, k) for k in indices]
        for future in concurrent.futures.as_completed(futures):
            done.append(future.result())
            r = done[-1]
            print(f"  [{len(done):>2}/{len(indices)}] {r.name:<40} {r.seconds:6.1f} s "
                  f"{r.cpu_seconds:6.1f} s CPU   ({time.perf_counter() - started:5.0f} s)",
                  file=out, flush=True)
    return done


def _marker():
    """Return the file that says every kernel of these sources is in the cache."""
    from rbd_ros import _jit
    return os.path.join(_jit.version_cache_dir(), "warm")


def _newest_change(path):
    """Return the latest modification time of ``path`` or of anything under it."""
    newest = os.path.getmtime(path)
    for folder, _, files in os.walk(path):
        for name in files:
            newest = max(newest, os.path.getmtime(os.path.join(folder, name)))
    return newest


def prune_stale_versions(now=None):
    """Remove other source versions' caches unchanged for ``STALE_DAYS``; return their names."""
    from rbd_ros import _jit
    root, current = _jit.cache_dir(), os.path.basename(_jit.version_cache_dir())
    limit = (time.time() if now is None else now) - STALE_DAYS * 86400
    removed = []
    for name in sorted(os.listdir(root)) if os.path.isdir(root) else []:
        path = os.path.join(root, name)
        if name == current or not (name.startswith(_jit.VERSION_PREFIX)
                                   or _OLD_LAYOUT.match(name)):
            continue
        try:
            if _newest_change(path) >= limit:
                continue
            shutil.rmtree(path) if os.path.isdir(path) else os.remove(path)
        except OSError:       # in use or removed by another process: left for the next run
            continue
        removed.append(name)
    return removed


def warm(jobs=None, out=sys.stdout):
    """Compile every kernel with ``jobs`` processes (default: one per core); seconds taken."""
    define_kernels()
    from rbd_ros import _jit
    removed = prune_stale_versions()
    if removed:
        print(f"rbd_ros: removed {len(removed)} cached kernel versions unused for {STALE_DAYS} "
              "days", file=out)
    if os.path.exists(_marker()):
        try:
            os.utime(_marker())      # in use: not stale for another version's run
        except OSError:
            pass
        print(f"rbd_ros: every dynamics kernel is in the cache ({_jit.version_cache_dir()})",
              file=out)
        return 0.0
    started = time.perf_counter()
    compile_kernels(jobs=jobs, out=out)
    os.makedirs(os.path.dirname(_marker()), exist_ok=True)
    with open(_marker(), "w", encoding="utf-8") as f:     # empty: written whole or not at all
        f.write("")
    return time.perf_counter() - started


def main(argv=None):
    """Console entry: ``rbd_warm_cache [--jobs N]``; exit status 0, or 1 with the reason."""
    parser = argparse.ArgumentParser(prog="rbd_warm_cache", description=__doc__.splitlines()[1])
    parser.add_argument("--jobs", type=int, default=None,
                        help="worker processes (default: one per core)")
    args = parser.parse_args(argv)
    if args.jobs is not None and args.jobs < 1:
        parser.error(f"--jobs must be at least 1, got {args.jobs}")
    try:
        seconds = warm(args.jobs)
    except KeyboardInterrupt:
        print("rbd_warm_cache: interrupted (what was compiled stays cached)", file=sys.stderr)
        return 130
    print(f"rbd_ros: every kernel is in the cache ({seconds:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
