#!/usr/bin/env python3
"""
Where the time of a public single-state call goes, next to Pinocchio's call, in one process.

For each public single-state entry and robot, the per-call time of:

    full      the public call from Python (``rbd_ros.crba(model, q)``): the wrapper, its output
              allocation, numba's dispatch (unboxing every array argument) and the kernel
    dispatch  the kernel called from Python through its numba dispatcher, outputs preallocated
    entry     the kernel called through its compiled overload's ``entry_point`` (what the
              public call does where ``entries.uses_entry_point``; "-" elsewhere)
    kernel    the kernel alone: called N times from a compiled loop, divided by N
    alloc     the wrapper's output allocation (``np.empty``) alone
    pin       Pinocchio's full call from Python

so that ``wrapper = full - call - alloc``, with ``call`` the entry column where the public
call uses it and the dispatch column elsewhere, is the Python wrapper's own cost, and
``numba = call - kernel`` the cost of reaching the kernel from Python. The first robot, the
1-joint pendulum, gives each library's floor: what a call costs with almost no dynamics in
it (crba: ours ~0.41 µs, Pinocchio's ~0.23). Where Pinocchio's kernel is as fast as ours,
that difference is what keeps our call above Pinocchio's (crba on 6-7-dof arms; issue 36's
frame Jacobian, CoM Jacobian and A_G rows, ``--entries frame_jacobian,center_of_mass_jacobian,
centroidal_momentum_matrix``, the frame Jacobian in local_world_aligned at the model's last
link).
All cycle through the same 20 random states (as test/oracle.py draws them); each time is
the best of 25 timeit-style loops (gc off) of ~2 ms: short loops, many of them, so that
some run without preemption on a busy machine. Timings on a shared machine are indicative:
run it on a quiet one and read /proc/loadavg.

    python bench/bench_breakdown.py [--robots pendulum,arm7,panda,ur5,hyq,talos]
                                    [--entries crba,rnea]
"""
import argparse
import gc
import os
import sys
import time

import numba
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "test"))

from oracle import Robot, available  # noqa: E402  (also puts the checkout on sys.path)

import rbd_ros  # noqa: E402
from rbd_ros.algorithms import (aba, aba_derivatives, center_of_mass,  # noqa: E402
                                centroidal_momentum, crba, entries, frame_jacobian, minv,
                                regressor, rnea, rnea_derivatives)

DEFAULT_ROBOTS = "pendulum,arm7,panda,ur5,hyq,talos"
NSTATES = 20
REPEATS = 25
LOOP_S = 0.002


def _square(nv, count):
    return tuple(np.empty((nv, nv)) for _ in range(count))


# entry -> (public arguments, the kernel, its arguments (names: a state's entry, "@x": an
# attribute of Data, "&x": of the Model, "=x": a constant of the row's ``FRAME_ROWS``
# entry, "%k": a preallocated output of kind k), outputs the wrapper allocates,
# Pinocchio's function and arguments ("zero": zeros(nv))). Kept in step with the wrappers by
# hand: the "dispatch" column must call what the public call calls.
ENTRIES = {
    "rnea": (("q", "v", "a"), lambda: rnea.rnea_kernel,
             ("@body", "q", "v", "a", "@no_fext", "%v"), "v", ("rnea", ("q", "v", "a"))),
    "gravity_torques": (("q",), lambda: getattr(rnea, "gravity_kernel", None),
                        ("@body", "q", "%v"), "v", ("computeGeneralizedGravity", ("q",))),
    "nonlinear_effects": (("q", "v"), lambda: getattr(rnea, "nonlinear_effects_kernel", None),
                          ("@body", "q", "v", "%v"), "v", ("nonLinearEffects", ("q", "v"))),
    "crba": (("q",), lambda: crba.crba_kernel, ("@body", "q", "%m"), "m", ("crba", ("q",))),
    "aba": (("q", "v", "tau"), lambda: aba.aba_kernel,
            ("@body", "q", "v", "tau", "@no_fext", "%v"), "v", ("aba", ("q", "v", "tau"))),
    "minv": (("q",), lambda: minv.minv_kernel, ("@body", "@force_sets", "q", "%m"), "m",
             ("computeMinverse", ("q",))),
    "rnea_derivatives": (("q", "v", "a"), lambda: rnea_derivatives.rnea_derivatives_kernel,
                         ("@body", "@dof", "@body_matrix", "q", "v", "a", "@no_fext", "%m",
                          "%m", "%m"), "mmm", ("computeRNEADerivatives", ("q", "v", "a"))),
    "aba_derivatives": (("q", "v", "tau"), lambda: aba_derivatives.aba_derivatives_kernel,
                        ("@body", "@dof", "@body_matrix", "@force_sets", "@stacked", "q", "v",
                         "tau", "@no_fext", "%m", "%m", "%m"), "mmm",
                        ("computeABADerivatives", ("q", "v", "tau"))),
    "joint_torque_regressor": (("q", "v", "a"),
                               lambda: regressor.joint_torque_regressor_kernel,
                               ("@body", "@regressor_block", "q", "v", "a", "%y"), "y",
                               ("computeJointTorqueRegressor", ("q", "v", "a"))),
    # issue 36's rows: the frame Jacobian (local_world_aligned, the last link of the model,
    # as bench_core's operational rows), the CoM Jacobian, A_G
    "frame_jacobian": (("q",), lambda: frame_jacobian.frame_jacobian_kernel,
                       ("&coupling_table", "@body", "@full_q", "q", "=frame", "%6"), "6",
                       ("computeFrameJacobian", ("q",))),
    "center_of_mass_jacobian": (("q",),
                                lambda: center_of_mass.center_of_mass_jacobian_kernel,
                                ("&coupling_table", "@body", "@full_q", "q", "%3"), "3",
                                ("jacobianCenterOfMass", ("q",))),
    "centroidal_momentum_matrix": (("q",),
                                   lambda: centroidal_momentum.centroidal_momentum_matrix_kernel,
                                   ("&coupling_table", "@body", "@full_q", "q", "%6"), "6",
                                   ("ccrba", ("q", "zero"))),
}


def frame_constants(pair, pin):
    """
    Return (public call's extra arguments, the kernel's "=x" constants, Pinocchio's extra).

    The frame Jacobian of the model's last link in local_world_aligned, as bench_core's
    operational rows time it.
    """
    m = pair.model
    link = [k for k, (body, _, _) in m.link_frames.items() if body >= 0][-1]
    frame, _ = frame_jacobian.frame_in(m, link, "local_world_aligned")
    pin_extra = ((pair.pm.getFrameId(link, pin.BODY), pin.LOCAL_WORLD_ALIGNED) if pin
                 else ())
    constants = {"frame": frame}
    return (link, "local_world_aligned"), constants, pin_extra


# the rows whose calls take more than the state: their constants (``frame_constants``)
FRAME_ROWS = {"frame_jacobian": frame_constants}
# the outputs' shapes by kind
SHAPES = {"v": lambda nv: (nv,), "m": lambda nv: (nv, nv), "y": None,
          "3": lambda nv: (3, nv), "6": lambda nv: (6, nv)}
# an older tree without the dedicated kernels: RNEA at zero v and a
FALLBACK = {"gravity_torques": ("@body", "q", "@zeros_v", "@zeros_v", "@no_fext", "%v"),
            "nonlinear_effects": ("@body", "q", "v", "@zeros_v", "@no_fext", "%v")}

_LOOPS = {}


def kernel_loop(kernel, nargs, state_slots):
    """
    Return a compiled ``loop(n, *args)`` calling ``kernel`` n times (the sum of its statuses).

    Arguments at ``state_slots`` are (nstates, size) arrays, row k % nstates passed at call k.
    """
    key = (kernel, nargs, state_slots)
    if key not in _LOOPS:
        names = [f"x{k}" for k in range(nargs)]
        passed = [f"{n}[k % ns]" if k in state_slots else n for k, n in enumerate(names)]
        source = (f"def loop(n, {', '.join(names)}):\n"
                  f"    ns = x{state_slots[0]}.shape[0]\n"
                  "    s = 0\n"
                  "    for k in range(n):\n"
                  f"        s += kernel({', '.join(passed)})\n"
                  "    return s\n")
        scope = {"kernel": kernel}
        exec(source, scope)
        _LOOPS[key] = numba.njit(scope["loop"])
    return _LOOPS[key]


def best_us(run, count):
    """Best of REPEATS timings of ``run()``, which makes ``count`` calls; µs per call."""
    gc_was_on = gc.isenabled()
    gc.disable()
    try:
        best = float("inf")
        for _ in range(REPEATS):
            t0 = time.perf_counter()
            run()
            best = min(best, time.perf_counter() - t0)
    finally:
        if gc_was_on:
            gc.enable()
    return best / count * 1e6


def python_loop(fn, arglists):
    """Return a ``run`` over ``arglists`` sized to ~LOOP_S, and its number of calls."""
    t0 = time.perf_counter()
    for args in arglists:
        fn(*args)
    per_pass = max(time.perf_counter() - t0, 1e-7)
    reps = max(1, int(LOOP_S / per_pass))

    def run():
        for _ in range(reps):
            for args in arglists:
                fn(*args)
    return run, reps * len(arglists)


def measure(pair, entry, pin):
    """Return the row's times (full, dispatch, entry, kernel, alloc, pin) in µs."""
    m, d = pair.model, pair.model.data
    pos, get_kernel, slots, outputs, (pin_name, pin_pos) = ENTRIES[entry]
    kernel = get_kernel()
    if kernel is None:
        kernel, slots = rnea.rnea_kernel, FALLBACK[entry]
    states = [dict(zip(("q", "v", "a", "tau"), pair.random_state(seed)[:4]))
              for seed in range(NSTATES)]
    public = getattr(rbd_ros, entry)
    extra, constants, pin_extra = (FRAME_ROWS[entry](pair, pin) if entry in FRAME_ROWS
                                   else ((), {}, ()))
    full = best_us(*python_loop(public, [(m,) + tuple(s[k] for k in pos) + extra
                                         for s in states]))
    shapes = {kind: (shape(m.nv) if shape else (m.nv, 10 * m.nbodies))
              for kind, shape in SHAPES.items()}

    def kernel_args(s):
        args = [m.packed]
        for slot in slots:
            if slot[0] == "@":
                args.append(getattr(d, slot[1:]))
            elif slot[0] == "&":
                args.append(getattr(m, slot[1:]))
            elif slot[0] == "=":
                args.append(constants[slot[1:]])
            elif slot[0] == "%":
                args.append(np.empty(shapes[slot[1]]))
            else:
                args.append(s[slot])
        return tuple(args)
    arglists = [kernel_args(s) for s in states]
    assert kernel(*arglists[0]) == 0
    dispatch = best_us(*python_loop(kernel, arglists))
    entry_us = float("nan")
    if entries.uses_entry_point(entry):
        entry_point = kernel.overloads[kernel.signatures[0]].entry_point
        entry_us = best_us(*python_loop(entry_point, arglists))
    state_slots = tuple(k + 1 for k, slot in enumerate(slots) if slot[0] not in "@&=%")
    stacked = list(arglists[0])
    for k in state_slots:
        stacked[k] = np.ascontiguousarray([a[k] for a in arglists])
    loop = kernel_loop(kernel, len(stacked), state_slots)
    loop(1, *stacked)                                       # compile
    n = max(1, int(LOOP_S / (dispatch * 1e-6)))
    inner = best_us(lambda: loop(n, *stacked), n)
    alloc = sum(best_us(*python_loop(np.empty, [(shapes[kind],)] * NSTATES))
                for kind in outputs)
    pin_us = float("nan")
    if pin is not None:
        pin_fn = getattr(pin, pin_name)
        pstates = [(pair.q_to_pin(s["q"]), pair.v_to_pin(s["v"]), pair.v_to_pin(s["a"]),
                    pair.v_to_pin(s["tau"])) for s in states]
        index = {"q": 0, "v": 1, "a": 2, "tau": 3}
        zero = np.zeros(pair.pm.nv)
        pin_us = best_us(*python_loop(pin_fn, [(pair.pm, pair.pd)
                                               + tuple(zero if k == "zero" else p[index[k]]
                                                       for k in pin_pos) + pin_extra
                                               for p in pstates]))
    return full, dispatch, entry_us, inner, alloc, pin_us


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument("--robots", default=DEFAULT_ROBOTS)
    parser.add_argument("--entries", default=",".join(ENTRIES))
    args = parser.parse_args()
    names = [n for n in args.robots.split(",") if available(n)]
    try:
        import pinocchio as pin
    except ImportError:
        pin = None
        print("Pinocchio not installed: no reference column")
    print(f"rbd_ros {rbd_ros.__version__}, numba {numba.__version__}, "
          f"Pinocchio {getattr(pin, '__version__', '-')}; µs per call, best of {REPEATS}; "
          f"load {open('/proc/loadavg').read().split()[0]}")
    header = (f"{'entry':<23} {'robot':<8} {'nv':>3} {'full':>7} {'dispatch':>8} "
              f"{'entry':>6} {'kernel':>7} {'alloc':>6} {'wrapper':>7} {'numba':>6} "
              f"{'pin':>7} {'full/pin':>8} {'kern/pin':>8}")
    print(header)
    print("-" * len(header))
    for entry in args.entries.split(","):
        for name in names:
            pair = Robot(name)
            full, dispatch, entry_us, inner, alloc, pin_us = measure(pair, entry, pin)
            call = dispatch if np.isnan(entry_us) else entry_us
            shown = "-" if np.isnan(entry_us) else f"{entry_us:.3f}"
            print(f"{entry:<23} {name:<8} {pair.model.nv:>3} {full:>7.3f} {dispatch:>8.3f} "
                  f"{shown:>6} {inner:>7.3f} {alloc:>6.3f} {full - call - alloc:>7.3f} "
                  f"{call - inner:>6.3f} {pin_us:>7.3f} {full / pin_us:>8.2f} "
                  f"{inner / pin_us:>8.2f}", flush=True)
    print(f"\nwrapper = full - call - alloc; numba = call - kernel (call: entry where the public "
          f"call uses it, else dispatch); load {open('/proc/loadavg').read().split()[0]}")


if __name__ == "__main__":
    main()
