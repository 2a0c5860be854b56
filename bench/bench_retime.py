#!/usr/bin/env python3
"""
rbd_ros.retime: the torque constraint's discretization, per-point callback against vectorized.

toppra's ``JointTorqueConstraint`` evaluates the inverse dynamics 3 (N+1) times, one Python
call per grid point and term (c, a, b: ``compute_constraint_params``); ``rbd_ros.retime``
evaluates the same a, b, c in one ``rnea_batch`` call over the 3 (N+1) states
(``retiming.path_dynamics``). This times, on the 7-dof arm, --waypoints random waypoints and
--grid points:

  * the discretization alone: toppra's with ``rbd_ros.rnea`` as its callback, with
    ``pinocchio.rnea`` as its callback, and ours;
  * the whole retiming: toppra (callback ``rbd_ros.rnea``) through ``compute_trajectory``
    and ``rbd_ros.retime`` (grid samples), with its own breakdown (dynamics, toppra, samples).

Medians of --repeat runs. A benchmark, not a test: run it on a quiet machine.

    python bench/bench_retime.py [--grid 500] [--waypoints 20] [--repeat 11]
"""
import argparse
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, os.pardir, "test"))

from oracle import Robot  # noqa: E402  (also puts the checkout on sys.path)

import rbd_ros  # noqa: E402
from rbd_ros.retiming import retimer as retiming  # noqa: E402


def median_ms(fn, repeat):
    fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return 1e3 * float(np.median(times))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--grid", type=int, default=500)
    ap.add_argument("--waypoints", type=int, default=20)
    ap.add_argument("--repeat", type=int, default=11)
    args = ap.parse_args()
    import pinocchio as pin
    import toppra
    from toppra import algorithm, constraint

    robot = Robot("arm7")
    m = robot.model
    rng = np.random.default_rng(0)
    mid = 0.5 * (m.lower + m.upper)
    w = rng.uniform(mid + 0.3 * (m.lower - mid), mid + 0.3 * (m.upper - mid),
                    (args.waypoints, m.nq))
    s = np.concatenate([[0.0], np.cumsum(np.linalg.norm(np.diff(w, axis=0), axis=1))])
    path = toppra.SplineInterpolator(s / s[-1], w)
    grid = np.linspace(0.0, 1.0, args.grid)
    effort = 0.5 * m.effort_limit
    tau_lim = np.stack([-effort, effort], 1)
    interp = constraint.DiscretizationType.Interpolation
    pm, pd = robot.pm, robot.pm.createData()

    def ours_rnea(q, v, a):
        return rbd_ros.rnea(m, q, v, a)

    def pin_rnea(q, v, a):
        return robot.v_from_pin(pin.rnea(pm, pd, robot.q_to_pin(q), robot.v_to_pin(v),
                                         robot.v_to_pin(a)))

    def callback(inv_dyn):
        c = constraint.JointTorqueConstraint(inv_dyn, tau_lim, np.zeros(m.nv), interp)
        return lambda: c.compute_constraint_params(path, grid)

    def vectorized():
        retiming.path_dynamics(m, path(grid), path(grid, 1), path(grid, 2))

    def toppra_whole():
        cons = [constraint.JointVelocityConstraint(m.velocity_limit),
                constraint.JointTorqueConstraint(ours_rnea, tau_lim, np.zeros(m.nv), interp)]
        algorithm.TOPPRA(cons, path, gridpoints=grid, solver_wrapper="seidel",
                         parametrizer="ParametrizeConstAccel").compute_trajectory(0, 0)

    breakdown = []

    def ours_whole():
        breakdown.append(rbd_ros.retime(m, w, effort_scale=0.5, grid=grid).timings)

    rows = [("discretization, toppra callback rbd_ros.rnea", callback(ours_rnea)),
            ("discretization, toppra callback pinocchio.rnea", callback(pin_rnea)),
            ("discretization, rbd_ros one rnea_batch", vectorized),
            ("whole retiming, toppra + callback rbd_ros.rnea", toppra_whole),
            ("whole retiming, rbd_ros.retime", ours_whole)]
    with open("/proc/loadavg") as f:
        load = f.read().split()[:3]
    print(f"arm7, {args.waypoints} waypoints, {args.grid} grid points, median of "
          f"{args.repeat}; load {' '.join(load)}")
    for name, fn in rows:
        print(f"  {name:<50} {median_ms(fn, args.repeat):8.2f} ms")
    parts = {k: 1e3 * float(np.median([b[k] for b in breakdown])) for k in breakdown[0]}
    print("  rbd_ros.retime breakdown: " + ", ".join(f"{k} {v:.2f} ms"
                                                     for k, v in parts.items()))


if __name__ == "__main__":
    main()
