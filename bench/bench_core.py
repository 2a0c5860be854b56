#!/usr/bin/env python3
"""
Per-call latency from Python of rnea, crba and aba, ours and Pinocchio's, in one process.

With ``--operational`` also the operational-space and whole-body calls at the robot's last
link, each beside its Pinocchio equivalent as a user writes it (:func:`operational_pairs`).

Both libraries get the same states (cycled through a set of random ones) and the same loop,
so the per-call times differ only by the call itself. Also measured: the first-call time with
an empty numba cache (compile) and with a warm one (start), in fresh processes.

    python bench/bench_core.py [--robots arm7,panda,ur5,hyq,talos] [--calls 20000]
                               [--json doc/bench/core.json]

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


def per_call_us(fn, args_list, calls, repeats=5):
    """Best of ``repeats`` runs of ``calls`` calls cycling through ``args_list``, in µs."""
    rounds = max(1, calls // len(args_list))
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(rounds):
            for args in args_list:
                fn(*args)
        best = min(best, (time.perf_counter() - t0) / (rounds * len(args_list)))
    return best * 1e6


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
    {call: (ours, our arguments, Pinocchio's, its arguments)} at the last link of ``pair``.

    Pinocchio's as a user writes them: its frame calls after the pass each needs; Λ and the
    effective mass from computeMinverse (upper half mirrored) and computeFrameJacobian, the
    product and its inverse in NumPy.
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
    return {
        "oMf": (lambda m, q: rbd_ros.frame_placement(m, q, link), ours_q, pin_placement, pins_q),
        "J": (lambda m, q: rbd_ros.frame_jacobian(m, q, link, "local_world_aligned"), ours_q,
              lambda q: pin.computeFrameJacobian(pm, pd, q, f, lwa), pins_q),
        "dJ": (lambda m, q, v: rbd_ros.frame_jacobian_time_variation(
            m, q, v, link, "local_world_aligned"), ours_qv, pin_time_variation, pins_qv),
        "bias": (lambda m, q, v: rbd_ros.frame_acceleration_bias(
            m, q, v, link, "local_world_aligned"), ours_qv, pin_bias, pins_qv),
        "Λ": (lambda m, q: rbd_ros.operational_space_inertia(
            m, q, link, translational=translational), ours_q, pin_lambda, pins_q),
        "m_u": (lambda m, q: rbd_ros.effective_mass(m, q, link, u), ours_q, pin_mass, pins_q),
        "com": (rbd_ros.center_of_mass, ours_q, pin_com, pins_q),
        "Jcom": (rbd_ros.center_of_mass_jacobian, ours_q,
                 lambda q: pin.jacobianCenterOfMass(pm, pd, q), pins_q),
        "A_G": (rbd_ros.centroidal_momentum_matrix, ours_q,
                lambda q: pin.ccrba(pm, pd, q, zero), pins_q),
        "h_G": (rbd_ros.centroidal_momentum, ours_qv, pin_momentum, pins_qv),
    }


def operational_rows(pair, pin, states, calls):
    """Time each of :func:`operational_pairs`, ours and Pinocchio's; print and return rows."""
    rows = []
    m = pair.model
    for algo, (fn, arglist, pfn, parglist) in operational_pairs(pair, pin, states).items():
        mine, ref = np.asarray(fn(*arglist[0])), np.asarray(pfn(*parglist[0]))
        if ref.ndim == 2 and ref.shape[1] == pair.pm.nv:
            ref = ref[:, pair.perm_v]
        diff = np.max(np.abs(mine - ref)) / max(1.0, np.max(np.abs(ref)))
        t_ours = per_call_us(fn, arglist, calls)
        t_pin = per_call_us(pfn, parglist, calls)
        print(f"{pair.name:<10} {m.nv:>3} {algo:<6} {t_ours:>9.3f} {t_pin:>9.3f} "
              f"{t_ours / t_pin:>9.2f} {diff:>13.1e}")
        rows.append([pair.name, m.nv, algo, round(t_ours, 3), round(t_pin, 3),
                     round(t_ours / t_pin, 2), f"{diff:.1e}"])
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--robots", default=",".join(DEFAULT_ROBOTS))
    parser.add_argument("--calls", type=int, default=20000)
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
          f"python {sys.version.split()[0]}; per-call latency from Python, best of 5, µs")
    header = f"{'robot':<10} {'nv':>3} {'algorithm':<6} {'ours µs':>9} {'pin µs':>9} " \
             f"{'ours/pin':>9} {'max rel diff':>13}"
    print(header)
    print("-" * len(header))
    for name in names:
        pair = Robot(name)
        m, pm, pd = pair.model, pair.pm, pair.pd
        states = [pair.random_state(seed)[:4] for seed in range(NSTATES)]
        ours = {"rnea": (rbd_ros.rnea, [(m, q, v, a) for q, v, a, _ in states]),
                "crba": (rbd_ros.crba, [(m, q) for q, _, _, _ in states]),
                "aba": (rbd_ros.aba, [(m, q, v, t) for q, v, _, t in states])}
        pstates = [(pair.q_to_pin(q), pair.v_to_pin(v), pair.v_to_pin(a), pair.v_to_pin(t))
                   for q, v, a, t in states]
        theirs = {"rnea": (pin.rnea, [(pm, pd, q, v, a) for q, v, a, _ in pstates]),
                  "crba": (pin.crba, [(pm, pd, q) for q, _, _, _ in pstates]),
                  "aba": (pin.aba, [(pm, pd, q, v, t) for q, v, _, t in pstates])}
        if args.operational or args.only_operational:
            rows += operational_rows(pair, pin, states, args.calls)
        for algo in (() if args.only_operational else ("rnea", "crba", "aba")):
            fn, arglist = ours[algo]
            pfn, parglist = theirs[algo]
            # agreement on the first state (Pinocchio's crba fills the upper triangle)
            mine = fn(*arglist[0])
            ref = np.array(pfn(*parglist[0]))
            if algo == "crba":
                ref = pair.matrix_from_pin(np.triu(ref) + np.triu(ref, 1).T)
            else:
                ref = pair.v_from_pin(ref)
            diff = np.max(np.abs(mine - ref)) / max(1.0, np.max(np.abs(ref)))
            t_ours = per_call_us(fn, arglist, args.calls)
            t_pin = per_call_us(pfn, parglist, args.calls)
            print(f"{name:<10} {m.nv:>3} {algo:<6} {t_ours:>9.3f} {t_pin:>9.3f} "
                  f"{t_ours / t_pin:>9.2f} {diff:>13.1e}")
            rows.append([name, m.nv, algo, round(t_ours, 3), round(t_pin, 3),
                         round(t_ours / t_pin, 2), f"{diff:.1e}"])
    notes = (f"rbd_ros {rbd_ros.__version__}, Pinocchio {pin.__version__}, numpy "
             f"{np.__version__}; per call from Python, best of 5 loops of {args.calls} calls.")
    if not args.no_start_times:
        cold, warm = start_times(names[0])
        line = (f"import + load {names[0]} + first rnea/crba/aba, fresh process: "
                f"empty numba cache {cold:.2f} s (compile), warm cache {warm:.2f} s")
        print("\n" + line)
        notes += " " + line[0].upper() + line[1:] + "."
    if args.json:
        bench_record.write(args.json, bench_record.record(
            begun, "Single calls against Pinocchio", ("robot", "nv", "algorithm", "ours µs",
                                                      "Pinocchio µs", "ours/Pinocchio",
                                                      "max rel diff"), rows, notes))
        print(f"record: {args.json}")


if __name__ == "__main__":
    main()
