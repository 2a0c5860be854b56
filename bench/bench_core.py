#!/usr/bin/env python3
"""
Per-call latency from Python of the single-state calls, ours and Pinocchio's, in one process.

With ``--operational`` also the operational-space and whole-body calls at the robot's last
link, each beside its Pinocchio equivalent as a user writes it (:func:`operational_pairs`).

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


def loop_us(loop, states, calls, *arguments):
    """Return a timer: each call runs ``loop`` once over ``calls`` calls and gives µs a call."""
    rounds = max(1, calls // len(states))

    def time_it():
        t0 = time.perf_counter()
        loop(states, rounds, *arguments)
        return (time.perf_counter() - t0) / (rounds * len(states)) * 1e6
    return time_it


def arguments_loop(states, rounds, fn):
    """Call ``fn(*arguments)`` on every arguments tuple of ``states``, ``rounds`` times."""
    for _ in range(rounds):
        for arguments in states:
            fn(*arguments)


def per_call_us(fn, arglist, calls, repeats=5):
    """Best of ``repeats`` runs of ``calls`` calls of ``fn(*arguments)`` over ``arglist``, µs."""
    return interleaved_best([loop_us(arguments_loop, arglist, calls, fn)], repeats)[0]


def interleaved_best(timers, repeats):
    """
    Best (least) time of each of ``timers`` over ``repeats`` rounds, one run of each a round.

    A round runs every variant once in turn (ours, ours with ``out=``, Pinocchio's), so a
    stretch of time in which the shared VM runs slower falls on all of them alike rather
    than on whichever variant's loops it caught.
    """
    best = [float("inf")] * len(timers)
    for _ in range(repeats):
        for k, time_it in enumerate(timers):
            best[k] = min(best[k], time_it())
    return best


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


def operational_pairs(pair, pin, states):
    """
    {call: (ours, ours with data= and out=, our arguments, Pinocchio's, its arguments)}.

    At the last link of ``pair``. Pinocchio's as a user writes them: its frame calls after the
    pass each needs; Λ and the effective mass from computeMinverse (upper half mirrored) and
    computeFrameJacobian, the product and its inverse in NumPy.
    """
    m, pm, pd = pair.model, pair.pm, pair.pd
    link = [k for k, (body, _, _) in m.link_frames.items() if body >= 0][-1]
    f = pm.getFrameId(link, pin.BODY)
    lwa = pin.LOCAL_WORLD_ALIGNED
    u = np.array([0.3, -0.5, 0.8]) / np.linalg.norm([0.3, -0.5, 0.8])
    zero = np.zeros(pm.nv)

    def pin_placement(q):
        pin.framesForwardKinematics(pm, pd, q)
        return pd.oMf[f].homogeneous

    def pin_time_variation(q, v):
        pin.computeJointJacobiansTimeVariation(pm, pd, q, v)
        pin.updateFramePlacement(pm, pd, f)
        return pin.getFrameJacobianTimeVariation(pm, pd, f, lwa)

    def pin_bias(q, v):
        pin.forwardKinematics(pm, pd, q, v, zero)
        pin.updateFramePlacement(pm, pd, f)
        return pin.getFrameClassicalAcceleration(pm, pd, f, lwa).vector

    def pin_inverse_lambda(q, rows):
        Minv = pin.computeMinverse(pm, pd, q)
        Minv = np.triu(Minv) + np.triu(Minv, 1).T
        J = pin.computeFrameJacobian(pm, pd, q, f, lwa)[:rows]
        return J @ Minv @ J.T

    def pin_lambda(q):
        return np.linalg.inv(pin_inverse_lambda(q, 6 if pm.nv >= 6 else 3))

    def pin_mass(q):
        return 1.0 / (u @ pin_inverse_lambda(q, 3) @ u)

    def pin_com(q):
        return pin.centerOfMass(pm, pd, q)

    def pin_momentum(q, v):
        return pin.computeCentroidalMomentum(pm, pd, q, v).vector

    translational = m.nv < 6
    ours_q = [(m, q) for q, _, _, _ in states]
    ours_qv = [(m, q, v) for q, v, _, _ in states]
    pins_q = [(pair.q_to_pin(q),) for q, _, _, _ in states]
    pins_qv = [(pair.q_to_pin(q), pair.v_to_pin(v)) for q, v, _, _ in states]

    # each of ours twice, written out as a user would (no * or ** call: it costs ~50 ns), each
    # through one lambda as Pinocchio's: a fresh result, and into the caller's out= and data=
    lwa_ = "local_world_aligned"
    rb = rbd_ros
    ours = {
        "oMf": (lambda m, q: rb.frame_placement(m, q, link),
                lambda m, q, d, o: rb.frame_placement(m, q, link, data=d, out=o)),
        "J": (lambda m, q: rb.frame_jacobian(m, q, link, lwa_),
              lambda m, q, d, o: rb.frame_jacobian(m, q, link, lwa_, data=d, out=o)),
        "dJ": (lambda m, q, v: rb.frame_jacobian_time_variation(m, q, v, link, lwa_),
               lambda m, q, v, d, o: rb.frame_jacobian_time_variation(m, q, v, link, lwa_,
                                                                      data=d, out=o)),
        "bias": (lambda m, q, v: rb.frame_acceleration_bias(m, q, v, link, lwa_),
                 lambda m, q, v, d, o: rb.frame_acceleration_bias(m, q, v, link, lwa_, data=d,
                                                                  out=o)),
        "Λ": (lambda m, q: rb.operational_space_inertia(m, q, link,
                                                        translational=translational),
              lambda m, q, d, o: rb.operational_space_inertia(
                  m, q, link, translational=translational, data=d, out=o)),
        "m_u": (lambda m, q: rb.effective_mass(m, q, link, u),
                lambda m, q, d, o: rb.effective_mass(m, q, link, u, data=d, out=o)),
        "com": (lambda m, q: rb.center_of_mass(m, q),
                lambda m, q, d, o: rb.center_of_mass(m, q, data=d, out=o)),
        "Jcom": (lambda m, q: rb.center_of_mass_jacobian(m, q),
                 lambda m, q, d, o: rb.center_of_mass_jacobian(m, q, data=d, out=o)),
        "A_G": (lambda m, q: rb.centroidal_momentum_matrix(m, q),
                lambda m, q, d, o: rb.centroidal_momentum_matrix(m, q, data=d, out=o)),
        "h_G": (lambda m, q, v: rb.centroidal_momentum(m, q, v),
                lambda m, q, v, d, o: rb.centroidal_momentum(m, q, v, data=d, out=o)),
    }
    theirs = {
        "oMf": (pin_placement, pins_q),
        "J": (lambda q: pin.computeFrameJacobian(pm, pd, q, f, lwa), pins_q),
        "dJ": (pin_time_variation, pins_qv), "bias": (pin_bias, pins_qv),
        "Λ": (pin_lambda, pins_q), "m_u": (pin_mass, pins_q), "com": (pin_com, pins_q),
        "Jcom": (lambda q: pin.jacobianCenterOfMass(pm, pd, q), pins_q),
        "A_G": (lambda q: pin.ccrba(pm, pd, q, zero), pins_q), "h_G": (pin_momentum, pins_qv),
    }
    return {call: (*ours[call], ours_qv if theirs[call][1] is pins_qv else ours_q,
                   *theirs[call]) for call in ours}


def operational_rows(pair, pin, states, calls, repeats):
    """Time each of :func:`operational_pairs`, ours (fresh and out=) and Pinocchio's; rows."""
    rows = []
    m = pair.model
    d = rbd_ros.Data(m)
    for algo, (fn, fn_out, arglist, pfn, parglist) in operational_pairs(
            pair, pin, states).items():
        mine, ref = np.asarray(fn(*arglist[0])), np.asarray(pfn(*parglist[0]))
        if ref.ndim == 2 and ref.shape[1] == pair.pm.nv:
            ref = ref[:, pair.perm_v]
        diff = np.max(np.abs(mine - ref)) / max(1.0, np.max(np.abs(ref)))
        out = np.empty(1) if mine.ndim == 0 else fresh_outputs(mine)    # a mass: out (1,)
        t_ours, t_out, t_pin = interleaved_best(
            [loop_us(arguments_loop, arglist, calls, fn),
             loop_us(arguments_loop, [(*a, d, out) for a in arglist], calls, fn_out),
             loop_us(arguments_loop, parglist, calls, pfn)], repeats)
        print(f"{pair.name:<10} {m.nv:>3} {algo:<18} {t_ours:>9.3f} {t_out:>9.3f} "
              f"{t_pin:>9.3f} {t_ours / t_pin:>9.2f} {t_out / t_pin:>9.2f} {diff:>13.1e}")
        rows.append([pair.name, m.nv, algo, round(t_ours, 3), round(t_out, 3), round(t_pin, 3),
                     round(t_ours / t_pin, 2), round(t_out / t_pin, 2), f"{diff:.1e}"])
    return rows


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
    parser.add_argument("--operational", action="store_true",
                        help="also the frame, Λ, effective mass, CoM and centroidal calls")
    parser.add_argument("--only-operational", action="store_true",
                        help="the operational calls only (not rnea, crba, aba)")
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
          f"{args.repeats} loops of {args.calls} calls, the three of a row in turn, µs; "
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
        if args.operational or args.only_operational:
            rows += operational_rows(pair, pin, [tuple(x.values()) for x in values],
                                     args.calls, args.repeats)
        for algo in (() if args.only_operational else calls):
            inputs, pin_name, kind = CALLS[algo]
            keys = inputs.split(", ")
            states = [tuple(x[k] for k in keys) for x in values]
            pstates = [tuple(x[k] for k in keys) for x in pvalues]
            fn, pfn = getattr(rbd_ros, algo), getattr(pin, pin_name)
            mine = fn(m, *states[0])
            diff = agreement(pair, kind, mine, pfn(pm, pd, *pstates[0]))
            out = fresh_outputs(mine)
            t_ours, t_out, t_pin = interleaved_best(
                [loop_us(timed_loop(f"fn(m, {inputs})", inputs), states, args.calls,
                         fn, m, None, None),
                 loop_us(timed_loop(f"fn(m, {inputs}, data=d, out=out)", inputs), states,
                         args.calls, fn, m, d, out),
                 loop_us(timed_loop(f"fn(m, d, {inputs})", inputs), pstates, args.calls,
                         pfn, pm, pd, None)], args.repeats)
            shown = "-" if diff is None else f"{diff:.1e}"
            print(f"{name:<10} {m.nv:>3} {algo:<18} {t_ours:>9.3f} {t_out:>9.3f} "
                  f"{t_pin:>9.3f} {t_ours / t_pin:>9.2f} {t_out / t_pin:>9.2f} {shown:>13}",
                  flush=True)
            rows.append([name, m.nv, algo, round(t_ours, 3), round(t_out, 3), round(t_pin, 3),
                         round(t_ours / t_pin, 2), round(t_out / t_pin, 2), shown])
    notes = (f"rbd_ros {rbd_ros.__version__}, Pinocchio {pin.__version__}, numpy "
             f"{np.__version__}; per call from Python, best of {args.repeats} loops of "
             f"{args.calls} calls, the three of a row in turn.")
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
