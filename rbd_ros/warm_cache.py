"""
Compile every dynamics kernel into the disk cache ahead of use, in parallel, with progress.

Kernels compile at their first call (``rbd_ros._jit``): after an install or an update, the
first calls of a process pay numba's compile (a minute or more for the derivative kernels).
``rbd_warm_cache`` (also ``python -m rbd_ros.warm_cache``, ``ros2 run rbd_ros warm_cache``)
does it once for every kernel, one worker process per core by default, so that the node's
first start and the tests find them cached. ``./dev.sh setup`` runs it. A kernel already in
the cache loads in milliseconds: a second run is quick.
"""
import argparse
import concurrent.futures
import multiprocessing
import os
import sys
import time


def _define_kernels():
    """Import every module that defines kernels (``rbd_ros.wrench`` is not in the package's)."""
    import rbd_ros  # noqa: F401
    import rbd_ros.wrench  # noqa: F401


def _compile(index):
    """Compile kernel ``index`` of ``rbd_ros._jit.KERNELS`` in this worker; (name, seconds)."""
    _define_kernels()
    from rbd_ros import _jit
    kernel = _jit.KERNELS[index]
    started = time.perf_counter()
    kernel.compile_declared()
    return kernel.py_func.__name__, time.perf_counter() - started


def _marker():
    """Return the file that says every kernel of these sources is in the cache."""
    from rbd_ros import _jit
    return os.path.join(_jit.cache_dir(), f"warm-{_jit.SOURCE_HASH[:16]}")


def warm(jobs=None, out=sys.stdout):
    """Compile every kernel with ``jobs`` processes (default: one per core); seconds taken."""
    _define_kernels()
    from rbd_ros import _jit
    if os.path.exists(_marker()):
        print(f"rbd_ros: every dynamics kernel is in the cache ({_jit.cache_dir()})", file=out)
        return 0.0
    count = len(_jit.KERNELS)
    jobs = max(1, min(jobs or os.cpu_count() or 1, count))
    print(f"rbd_ros: compiling {count} dynamics kernels into {_jit.cache_dir()} with {jobs} "
          "processes (cached ones load at once)", file=out, flush=True)
    started = time.perf_counter()
    # spawned, not forked: a fork of a process that has initialised LLVM is not safe
    context = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(jobs, mp_context=context) as pool:
        futures = [pool.submit(_compile, k) for k in range(count)]
        for done, future in enumerate(concurrent.futures.as_completed(futures), 1):
            name, seconds = future.result()
            print(f"  [{done:>2}/{count}] {name:<40} {seconds:6.1f} s   "
                  f"({time.perf_counter() - started:5.0f} s)", file=out, flush=True)
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
