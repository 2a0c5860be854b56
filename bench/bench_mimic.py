#!/usr/bin/env python3
"""
The cost of coupling mimic joints: the same robot with its followers welded vs coupled.

"Welded": each follower becomes a fixed joint (its link merged into its parent, as a
gripper held shut): the same bodies and mass, the independent joints as dofs, no coupling.
"Coupled": ``load_model``'s default, the reduced system (``rbd_ros/algorithms/coupled.py``).
"Independent": ``mimic="independent"``, every follower its own dof (Pinocchio's default
model), for scale. Per call from Python, best of 5, µs; batch calls per state.

    python bench/bench_mimic.py [--calls 20000] [--batch 1000]
"""
import argparse
import os
import re
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "test"))

from bench_core import per_call_us  # noqa: E402
from mimic_oracle import HAND, WELDED, hand_urdf  # noqa: E402
from oracle import ROBOTS, available, load_quietly  # noqa: E402  (puts the checkout on sys.path)

import rbd_ros  # noqa: E402

NSTATES = 50


def weld_followers(text):
    """Return the URDF ``text`` with every joint that carries a <mimic> made fixed."""
    def weld(match):
        joint = match.group(0)
        if "<mimic" not in joint:
            return joint
        return re.sub(r'type="(revolute|continuous|prismatic)"', 'type="fixed"', joint, count=1)
    return re.sub(r"<joint\b.*?</joint>", weld, text, flags=re.S)


def robots():
    """Yield (name, {variant: model}) for the robots with mimic joints."""
    yield "hand (9 joints, 5 followers)", {
        "welded": rbd_ros.load_model(hand_urdf(WELDED)),
        "coupled": rbd_ros.load_model(hand_urdf(HAND)),
        "independent": rbd_ros.load_model(hand_urdf(HAND), mimic="independent")}
    if available("panda"):
        with open(ROBOTS["panda"][0], encoding="utf-8") as f:
            text = f.read()
        yield "panda (fingers: 1 follower)", {
            "welded": load_quietly(weld_followers(text)), "coupled": load_quietly(text),
            "independent": load_quietly(text, mimic="independent")}


def calls(model, rng):
    """Return {function: (callable, argument tuples)} over NSTATES random states."""
    states = []
    for _ in range(NSTATES):
        q = model.random_configuration(rng)
        v, a, tau = (rng.normal(size=model.nv) for _ in range(3))
        states.append((q, v, a, tau))
    r = rbd_ros
    return {
        "rnea": (r.rnea, [(model, q, v, a) for q, v, a, _ in states]),
        "crba": (r.crba, [(model, q) for q, *_ in states]),
        "aba": (r.aba, [(model, q, v, t) for q, v, _, t in states]),
        "minv": (r.minv, [(model, q) for q, *_ in states]),
        "rnea_derivatives": (r.rnea_derivatives, [(model, q, v, a) for q, v, a, _ in states]),
        "aba_derivatives": (r.aba_derivatives, [(model, q, v, t) for q, v, _, t in states]),
        "compute_all": (lambda m, q, v, a, t: r.compute_all(m, q, v, a=a, tau=t),
                        [(model,) + s for s in states]),
        "inverse_and_forward": (lambda m, q, v, a, t: r.inverse_and_forward_dynamics(
            m, q, v, a=a, tau=t), [(model,) + s for s in states]),
        "regressor": (r.joint_torque_regressor, [(model, q, v, a) for q, v, a, _ in states]),
    }


def batch_us(model, n, rng):
    """Per-state µs of rnea_batch and aba_batch over n states."""
    Q = np.array([model.random_configuration(rng) for _ in range(n)])
    V, A = rng.normal(size=(n, model.nv)), rng.normal(size=(n, model.nv))
    return {name: per_call_us(f, [(model, Q, V, A)], 1, 5) / n
            for name, f in (("rnea_batch", rbd_ros.rnea_batch), ("aba_batch", rbd_ros.aba_batch))}


def dispatch_cost(calls):
    """
    Print what routing costs a model without mimic joints: its one test per call.

    The public rnea and aba (which test ``model.coupling`` first) against the path they took
    before coupling existed (``_checks.state_call`` on the kernel), same states, same process.
    """
    from rbd_ros import _checks
    from rbd_ros.algorithms.aba import aba_kernel
    from rbd_ros.algorithms.rnea import rnea_kernel
    print("\nmodels without mimic joints: public call vs the kernel path without the routing "
          "test, µs")
    for name in ("arm7", "talos"):
        if not available(name):
            continue
        model = load_quietly(ROBOTS[name][0], ROBOTS[name][1])
        rng = np.random.default_rng(0)
        states = [(model, model.random_configuration(rng), rng.normal(size=model.nv),
                   rng.normal(size=model.nv)) for _ in range(NSTATES)]
        for label, public, kernel in (("rnea", rbd_ros.rnea, rnea_kernel),
                                      ("aba", rbd_ros.aba, aba_kernel)):
            def direct(m, q, v, u, kernel=kernel, label=label):
                return _checks.state_call(label, kernel, ("q", "v", "u", "fext"), m, q, v, u,
                                          None, None)
            ours, before = (per_call_us(f, states, calls, 5) for f in (public, direct))
            print(f"{name:<6} {label:<5} public {ours:7.3f}   without routing {before:7.3f}   "
                  f"difference {ours - before:+.3f}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument("--calls", type=int, default=20000)
    parser.add_argument("--batch", type=int, default=1000)
    args = parser.parse_args()
    print(f"rbd_ros {rbd_ros.__version__}, numpy {np.__version__}; per call from Python, "
          "best of 5, µs (batch: per state)")
    for name, models in robots():
        sizes = ", ".join(f"{k} nv={m.nv}" for k, m in models.items())
        print(f"\n{name}: {sizes}")
        print(f"{'function':<22} {'welded':>9} {'coupled':>9} {'coupled/welded':>15} "
              f"{'independent':>12}")
        timings = {}
        for variant, model in models.items():
            rng = np.random.default_rng(0)
            timings[variant] = {k: per_call_us(f, a, args.calls, 5)
                                for k, (f, a) in calls(model, rng).items()}
            timings[variant].update(batch_us(model, args.batch, rng))
        for function in timings["welded"]:
            w, c, i = (timings[v][function] for v in ("welded", "coupled", "independent"))
            print(f"{function:<22} {w:9.2f} {c:9.2f} {c / w:15.2f} {i:12.2f}")
    dispatch_cost(args.calls)


if __name__ == "__main__":
    main()
