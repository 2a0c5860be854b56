#!/usr/bin/env python3
"""
Per-call latency from Python of the single-state calls, ours and Pinocchio's, in one process.

Both libraries get the same states (cycled through a set of random ones) and the same loop,
so the per-call times differ only by the call itself. Ours is measured twice: returning fresh
arrays, and like for like with Pinocchio, whose call writes into its ``Data``: ours with
``out=`` (the caller's arrays, reused) and ``data=`` (its own workspace). Also measured: the
first-call time with an empty numba cache (compile) and with a warm one (start), in fresh
processes.

    python bench/bench_core.py [--robots arm7,panda,ur5,hyq,talos] [--calls 20000]
                               [--algorithms rnea,crba,...|all] [--json doc/bench/core.json]

``--json`` also writes the table as a record (``bench/bench_record.py``: date, machine, load,
commit, command) that the manual's benchmarks page renders.
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "test"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from oracle import ROBOTS, Robot, available  # noqa: E402  (also puts the checkout on sys.path)

import bench_record  # noqa: E402
import rbd_ros  # noqa: E402

DEFAULT_ROBOTS = ["arm7", "panda", "ur5", "hyq", "talos"]
NSTATES = 50

# call -> (its inputs, Pinocchio's call that writes the same results into its Data, what
# our result is compared with: "v" a vector in Pinocchio's order, "M" its upper triangle)
CALLS = {
    "rnea": ("q, v, a", "rnea", "v"),
    "crba": ("q", "crba", "M"),
    "aba": ("q, v, tau", "aba", "v"),
    "minv": ("q", "computeMinverse", "M"),
    "gravity_torques": ("q", "computeGeneralizedGravity", "v"),
    "nonlinear_effects": ("q, v", "nonLinearEffects", "v"),
    "coriolis_matrix": ("q, v", "computeCoriolisMatrix", None),
    "rnea_derivatives": ("q, v, a", "computeRNEADerivatives", None),
    "aba_derivatives": ("q, v, tau", "computeABADerivatives", None),
}


def timed_loop(call, inputs):
    """
    Return ``loop(states, rounds, fn, m, d, out)``: ``call`` (source) on every state, rounds.

    Each side's call is written out as a user writes it (``rbd_ros.crba(m, q, data=d,
    out=out)``, ``pin.crba(pm, pd, q)``): no ``*args``/``**kwargs`` unpacking in the loop.
    """
    source = (f"def loop(states, rounds, fn, m, d, out):\n"
              f"    for _ in range(rounds):\n"
              f"        for {inputs}, in states:\n"
              f"            {call}\n")
    namespace = {}
    exec(source, namespace)
    return namespace["loop"]


def per_call_us(loop, states, calls, fn, m, d=None, out=None, repeats=5):
    """Best of ``repeats`` runs of ``calls`` calls of ``loop`` cycling through ``states``, µs."""
    rounds = max(1, calls // len(states))
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        loop(states, rounds, fn, m, d, out)
        best = min(best, (time.perf_counter() - t0) / (rounds * len(states)))
    return best * 1e6


def fresh_outputs(result):
    """Return ``out=`` for a call whose fresh result is ``result`` (an array or a tuple)."""
    if isinstance(result, tuple):
        return tuple(np.empty_like(x) for x in result)
    return np.empty_like(result)


def agreement(pair, kind, mine, theirs):
    """Max relative difference of our result and Pinocchio's, or None (not compared)."""
    if kind is None:
        return None
    ref = np.array(theirs)
    if kind == "M":                 # Pinocchio fills the upper triangle
        ref = pair.matrix_from_pin(np.triu(ref) + np.triu(ref, 1).T)
    else:
        ref = pair.v_from_pin(ref)
    return float(np.max(np.abs(mine - ref)) / max(1.0, np.max(np.abs(ref))))


def start_times(robot):
    """(cold, warm) seconds for import + load + first rnea/crba/aba, in fresh processes."""
    script = (
        "import time; t0 = time.perf_counter()\n"
        "import numpy as np, rbd_ros\n"
        f"m = rbd_ros.load_model({ROBOTS[robot][0]!r}, floating_base={ROBOTS[robot][1]})\n"
        "q = m.neutral(); z = np.zeros(m.nv)\n"
        "rbd_ros.rnea(m, q, z, z); rbd_ros.crba(m, q); rbd_ros.aba(m, q, z, z)\n"
        "print(time.perf_counter() - t0)\n")
    out = []
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache)
        for _ in range(2):
            res = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                                 text=True, check=True)
            out.append(float(res.stdout.strip().splitlines()[-1]))
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--robots", default=",".join(DEFAULT_ROBOTS))
    parser.add_argument("--calls", type=int, default=20000)
    parser.add_argument("--repeats", type=int, default=5,
                        help="loops of --calls calls per figure, the best one kept (5); on a "
                        "busy machine many short loops (--calls 1000 --repeats 60) find "
                        "unpreempted ones")
    parser.add_argument("--algorithms", default="all",
                        help=f"comma-separated calls of {', '.join(CALLS)}, or all (default)")
    parser.add_argument("--no-start-times", action="store_true")
    parser.add_argument("--json", help="also write the table as a JSON record there")
    args = parser.parse_args()
    begun = bench_record.start()
    rows = []
    names = [n for n in args.robots.split(",") if available(n)]
    if len(names) < len(args.robots.split(",")):
        print("example-robot-data not installed: only the bundled robots are measured")
    try:
        import pinocchio as pin
    except ImportError:
        sys.exit("Pinocchio (pip install pin) is needed for the comparison")

    print(f"rbd_ros {rbd_ros.__version__}, Pinocchio {pin.__version__}, numpy {np.__version__}, "
          f"python {sys.version.split()[0]}; per-call latency from Python, best of "
          f"{args.repeats} loops of {args.calls} calls, µs; "
          f"ours: a fresh result; out=: ours into the caller's arrays (out=, data=), like "
          f"Pinocchio's call into its Data; load average {bench_record.load_average()}")
    header = f"{'robot':<10} {'nv':>3} {'algorithm':<18} {'ours µs':>9} {'out= µs':>9} " \
             f"{'pin µs':>9} {'ours/pin':>9} {'out=/pin':>9} {'max rel diff':>13}"
    print(header)
    print("-" * len(header))
    calls = args.algorithms.split(",") if args.algorithms != "all" else list(CALLS)
    for name in names:
        pair = Robot(name)
        m, pm, pd = pair.model, pair.pm, pair.pd
        d = rbd_ros.Data(m)
        values = [dict(zip(("q", "v", "a", "tau"), pair.random_state(seed)[:4]))
                  for seed in range(NSTATES)]
        pvalues = [dict(q=pair.q_to_pin(x["q"]), v=pair.v_to_pin(x["v"]),
                        a=pair.v_to_pin(x["a"]), tau=pair.v_to_pin(x["tau"])) for x in values]
        for algo in calls:
            inputs, pin_name, kind = CALLS[algo]
            keys = inputs.split(", ")
            states = [tuple(x[k] for k in keys) for x in values]
            pstates = [tuple(x[k] for k in keys) for x in pvalues]
            fn, pfn = getattr(rbd_ros, algo), getattr(pin, pin_name)
            mine = fn(m, *states[0])
            diff = agreement(pair, kind, mine, pfn(pm, pd, *pstates[0]))
            out = fresh_outputs(mine)
            t_ours = per_call_us(timed_loop(f"fn(m, {inputs})", inputs), states, args.calls,
                                 fn, m, repeats=args.repeats)
            t_out = per_call_us(timed_loop(f"fn(m, {inputs}, data=d, out=out)", inputs),
                                states, args.calls, fn, m, d, out, args.repeats)
            t_pin = per_call_us(timed_loop(f"fn(m, d, {inputs})", inputs), pstates,
                                args.calls, pfn, pm, pd, repeats=args.repeats)
            shown = "-" if diff is None else f"{diff:.1e}"
            print(f"{name:<10} {m.nv:>3} {algo:<18} {t_ours:>9.3f} {t_out:>9.3f} "
                  f"{t_pin:>9.3f} {t_ours / t_pin:>9.2f} {t_out / t_pin:>9.2f} {shown:>13}",
                  flush=True)
            rows.append([name, m.nv, algo, round(t_ours, 3), round(t_out, 3), round(t_pin, 3),
                         round(t_ours / t_pin, 2), round(t_out / t_pin, 2), shown])
    notes = (f"rbd_ros {rbd_ros.__version__}, Pinocchio {pin.__version__}, numpy "
             f"{np.__version__}; per call from Python, best of {args.repeats} loops of "
             f"{args.calls} calls.")
    if not args.no_start_times:
        cold, warm = start_times(names[0])
        line = (f"import + load {names[0]} + first rnea/crba/aba, fresh process: "
                f"empty numba cache {cold:.2f} s (compile), warm cache {warm:.2f} s")
        print("\n" + line)
        notes += " " + line[0].upper() + line[1:] + "."
    if args.json:
        bench_record.write(args.json, bench_record.record(
            begun, "Single calls against Pinocchio", (
                "robot", "nv", "algorithm", "ours µs", "ours out= µs", "Pinocchio µs",
                "ours/Pinocchio", "out=/Pinocchio", "max rel diff"), rows, notes))
        print(f"record: {args.json}")


if __name__ == "__main__":
    main()
