#!/usr/bin/env python3
"""
The physically consistent fit: convex (pseudo-inertia LMIs, Clarabel) against log-Cholesky.

    python bench/bench_identification_consistent.py

For each case (simulated data, torque noise 0.05 N·m): the fit's residual RMS relative to
the least-squares one (the floor; 0 when the fit reaches the data), whether every body is
physical, and the time of the fit. Pinocchio has no consistent identification to compare
with. State the load (/proc/loadavg) with any figure.
"""
import os
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "scripts"))

import make_example_bag  # noqa: E402
import rbd_ros  # noqa: E402
from rbd_ros.identification import statistics as ist  # noqa: E402
from rbd_ros.actuation import joint_parameters as jf  # noqa: E402


def case_arm(kinds, seconds):
    """rbd_arm7 with rotors and friction, three multi-sine bags at 50 Hz."""
    model = rbd_ros.load_model(rbd_ros.robots.path("rbd_arm7"))
    truth = make_example_bag.true_model(model)
    params = jf.JointParameters(tuple(model.joint_names), {
        "armature": np.linspace(0.3, 0.03, 7), "viscous": np.linspace(0.8, 0.1, 7)})
    rng = np.random.default_rng(0)
    stats = None
    for seed in (1, 2, 3):
        t = np.arange(int(seconds * 50)) / 50
        q, v, a = make_example_bag.trajectory(model, t, seed)
        tau = rbd_ros.rnea_batch(truth, q, v, a) + params.torques(v, a)
        s = ist.statistics(model, q, v, a, tau + rng.normal(0, 0.05, tau.shape), kinds)
        stats = s if stats is None else stats.merge(s)
    return model, stats, kinds


def main():
    cases = {"arm7 inertias, 3x4 s": case_arm((), 4.0),
             "arm7 + armature, viscous, 3x4 s": case_arm(("armature", "viscous"), 4.0),
             "arm7 + all joint kinds, 3x10 s": case_arm(jf.KINDS, 10.0)}
    print(f"load: {open('/proc/loadavg').read().split()[:3]}")
    print(f"{'case':<34} {'formulation':<13} {'rms/lsq - 1':>12} {'physical':>9} "
          f"{'time s':>8}")
    for name, (model, stats, kinds) in cases.items():
        lsq = ist.least_squares(model, stats, kinds)
        for form in ("convex", "log-cholesky"):
            t0 = time.perf_counter()
            res = ist.consistent(model, stats, kinds, formulation=form)
            dt = time.perf_counter() - t0
            print(f"{name:<34} {form:<13} {res.rms_after / lsq.rms_after - 1:>12.3g} "
                  f"{str(res.consistent):>9} {dt:>8.3f}")


if __name__ == "__main__":
    main()
