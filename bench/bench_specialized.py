#!/usr/bin/env python3
"""
Per-call latency of the generic and the specialized kernels beside Pinocchio, in one process.

``rbd_ros.specialize`` (``rbd_ros/specialized``) generates, for one fixed-base model, kernels
with the model's constants written in and the loops unrolled, compiled by numba in a child
process. This prints, per robot and call (rnea, nonlinear_effects, gravity_torques, crba,
minv):
the time per call from Python of the generic kernels (a plain model), of the specialized
ones (the same URDF, specialized) and of Pinocchio, with the same states and loop; the
ratios to Pinocchio; the largest difference between the two of ours (relative). Then per
robot: the child's compile time (into an empty cache, a temporary folder), the time to load
the compiled kernels from numba's disk cache in a later specialization, and the bytes on
disk (generated source + numba cache), and the longest the calling thread was held up
(ticking every 1 ms) while the kernels were generated, compiled elsewhere and loaded.

    python bench/bench_specialized.py [--robots arm7,panda,ur5] [--calls 20000]

The machine's load changes the numbers: compare columns of one run only.
"""
import argparse
import os
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "test"))

from oracle import ROBOTS, Robot, available, load_quietly, rel_err  # noqa: E402

import rbd_ros  # noqa: E402
from bench_core import NSTATES, per_call_us  # noqa: E402  (the same loop as bench_core's)

CALLS = ("rnea", "nonlinear_effects", "gravity_torques", "crba", "minv")


def pinocchio_calls(robot):
    """Return {call: (function, argument maker)} for Pinocchio."""
    pin, pm, pd = robot.pin, robot.pm, robot.pd
    return {"rnea": (lambda q, v, a: pin.rnea(pm, pd, q, v, a)),
            "nonlinear_effects": (lambda q, v, a: pin.nonLinearEffects(pm, pd, q, v)),
            "gravity_torques": (lambda q, v, a: pin.computeGeneralizedGravity(pm, pd, q)),
            "crba": (lambda q, v, a: pin.crba(pm, pd, q)),
            "minv": (lambda q, v, a: pin.computeMinverse(pm, pd, q))}


def ours(name, model):
    fn = getattr(rbd_ros, name)
    if name == "rnea":
        return lambda q, v, a: fn(model, q, v, a)
    if name == "nonlinear_effects":
        return lambda q, v, a: fn(model, q, v)
    return lambda q, v, a: fn(model, q)


def specialize_cold(path, mimic, cache):
    """
    Specialize a fresh model into an empty kernel cache, then another one from that cache.

    Return (the second model, both statuses, the caller's longest stall in the first).
    """
    saved = os.environ.get("NUMBA_CACHE_DIR")
    os.environ["NUMBA_CACHE_DIR"] = cache          # rbd_ros._jit.cache_dir() reads it per call
    try:
        model = load_quietly(path, mimic=mimic)
        stall = caller_stall_ms(model)
        later = load_quietly(path, mimic=mimic)    # a later specialization: from the cache
        rbd_ros.specialize(later, wait=True)
    finally:
        if saved is None:
            del os.environ["NUMBA_CACHE_DIR"]
        else:
            os.environ["NUMBA_CACHE_DIR"] = saved
    return later, rbd_ros.specialized.status(model), rbd_ros.specialized.status(later), stall


def caller_stall_ms(model):
    """Specialize ``model``, ticking every 1 ms meanwhile; return the longest tick gap, ms."""
    rbd_ros.specialize(model)
    done, longest = rbd_ros.specialized.status(model).done, 0.0
    last = time.perf_counter()
    while not done.is_set():
        time.sleep(0.001)
        now = time.perf_counter()
        longest, last = max(longest, now - last), now
    return longest * 1e3


def measure(name, calls, cache):
    robot = Robot(name)
    generic = robot.model
    rng = np.random.default_rng(0)
    states = [(generic.random_configuration(rng), *rng.normal(size=(2, generic.nv)))
              for _ in range(NSTATES)]
    for call in CALLS:                          # the generic kernels, loaded from the cache
        ours(call, generic)(*states[0])
    model, cold, warm, stall = specialize_cold(robot.path, robot.mimic, cache)
    if warm.state != "ready":
        print(f"{name}: not specialized: {warm.reason}")
        return
    pin_states = [(robot.q_to_pin(q), robot.v_to_pin(v), robot.v_to_pin(a))
                  for q, v, a in states]
    pin_fns = pinocchio_calls(robot)
    for call in CALLS:
        diff = max(rel_err(ours(call, model)(*s), ours(call, generic)(*s)) for s in states)
        t_generic = per_call_us(ours(call, generic), states, calls)
        t_special = per_call_us(ours(call, model), states, calls)
        t_pin = per_call_us(pin_fns[call], pin_states, calls)
        print(f"{name:<6} {generic.nv:>3} {call:<18} {t_generic:>8.3f} {t_special:>8.3f} "
              f"{t_pin:>8.3f} {t_generic / t_pin:>8.2f} {t_special / t_pin:>8.2f} "
              f"{diff:>9.1e}", flush=True)
    print(f"{name:<6} compile {cold.compile_s:.1f} s (child process), load from the cache "
          f"{warm.load_s * 1e3:.0f} ms, on disk {warm.cache_bytes / 1e3:.0f} kB; the caller's "
          f"longest stall (1 ms ticks) while it compiled {stall:.0f} ms", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument("--robots", default="arm7,panda,ur5")
    parser.add_argument("--calls", type=int, default=20000)
    args = parser.parse_args()
    import pinocchio as pin
    with open("/proc/loadavg") as f:
        load = f.read().split()[:3]
    print(f"rbd_ros {rbd_ros.__version__}, Pinocchio {pin.__version__}; per call from Python, "
          f"best of 5, µs; load average {' '.join(load)}")
    print(f"{'robot':<6} {'nv':>3} {'call':<18} {'generic':>8} {'special':>8} {'pin':>8} "
          f"{'gen/pin':>8} {'spec/pin':>8} {'max diff':>9}")
    with tempfile.TemporaryDirectory() as cache:
        for name in args.robots.split(","):
            if available(name) and not ROBOTS[name][1]:
                measure(name, args.calls, cache)
            else:
                print(f"{name}: not available or floating-base (not specialized)")


if __name__ == "__main__":
    main()
