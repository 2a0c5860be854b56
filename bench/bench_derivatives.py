#!/usr/bin/env python3
"""
Measure the shape of the RSS 2018 paper's Table I, Fig. 2 and Fig. 3 on our robots.

Pinocchio is measured in the same process on the same states.

Table I / Fig. 2: per-call latency from Python of the dynamics, their analytical derivatives
and their central finite differences (ours), and of M⁻¹ by the analytical algorithm and by
CRBA + Cholesky, next to Pinocchio's calls where it has one. Also ``compute_all`` (everything
the node needs in one call) against the sum of Pinocchio's separate calls.

Fig. 3: ∂τ/∂q̇ and ∂q̈/∂q̇ at v = a = 0 without gravity: the analytical derivatives are exact
zeros, forward finite differences (as in the paper) are not. (Central differences happen to
give zeros here too: τ is even in q̇ at q̈ = 0, and the two rounding errors cancel.)

    python bench/bench_derivatives.py [--robots arm7,hyq,talos] [--calls 2000] [--out bench/out]
"""
import argparse
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, os.pardir, "test"))
sys.path.insert(0, HERE)

from oracle import Robot, available  # noqa: E402  (also puts the checkout on sys.path)

import rbd_ros  # noqa: E402
from bench_core import per_call_us  # noqa: E402

NSTATES = 20


def rows_for(robot, calls):
    """[(label, ours µs, Pinocchio µs or None)] for one robot."""
    pin, pm, pd = robot.pin, robot.pm, robot.pd
    m = robot.model
    states = [robot.random_state(seed)[:4] for seed in range(NSTATES)]
    P = [(robot.q_to_pin(q), robot.v_to_pin(v), robot.v_to_pin(a), robot.v_to_pin(t))
         for q, v, a, t in states]
    ours_q = [(m, q) for q, _, _, _ in states]
    ours_qva = [(m, q, v, a) for q, v, a, _ in states]
    ours_qvt = [(m, q, v, t) for q, v, _, t in states]
    pin_q = [(pm, pd, q) for q, _, _, _ in P]
    pin_qva = [(pm, pd, q, v, a) for q, v, a, _ in P]
    pin_qvt = [(pm, pd, q, v, t) for q, v, _, t in P]
    fd_calls = max(50, calls // (4 * m.nv))          # finite differences are slow
    table = [
        ("ID (RNEA)", per_call_us(rbd_ros.rnea, ours_qva, calls),
         per_call_us(pin.rnea, pin_qva, calls)),
        ("analytical derivatives of ID", per_call_us(rbd_ros.rnea_derivatives, ours_qva, calls),
         per_call_us(pin.computeRNEADerivatives, pin_qva, calls)),
        ("finite differences of ID", per_call_us(rbd_ros.rnea_derivatives_fd, ours_qva,
                                                 fd_calls, repeats=3), None),
        ("FD (ABA)", per_call_us(rbd_ros.aba, ours_qvt, calls),
         per_call_us(pin.aba, pin_qvt, calls)),
        ("analytical derivatives of FD", per_call_us(rbd_ros.aba_derivatives, ours_qvt, calls),
         per_call_us(pin.computeABADerivatives, pin_qvt, calls)),
        ("finite differences of FD", per_call_us(rbd_ros.aba_derivatives_fd, ours_qvt,
                                                 fd_calls, repeats=3), None),
        ("M⁻¹ analytical algorithm", per_call_us(rbd_ros.minv, ours_q, calls),
         per_call_us(pin.computeMinverse, pin_q, calls)),
        ("M⁻¹ CRBA + Cholesky", per_call_us(rbd_ros.minv_cholesky, ours_q, calls), None),
    ]
    if hasattr(rbd_ros, "compute_all"):
        # a and τ by keyword (compute_all's signature): the same work as Pinocchio's five
        ours_all = [(m, q, v, a, t) for q, v, a, t in states]

        def ours_compute_all(m, q, v, a, t):
            rbd_ros.compute_all(m, q, v, a=a, tau=t)

        def pin_separate(pm, pd, q, v, a, t):
            pin.rnea(pm, pd, q, v, a)
            pin.aba(pm, pd, q, v, t)
            pin.computeMinverse(pm, pd, q)
            pin.computeRNEADerivatives(pm, pd, q, v, a)
            pin.computeABADerivatives(pm, pd, q, v, t)
        table.append(("compute_all vs Pinocchio's 5 calls",
                      per_call_us(ours_compute_all, ours_all, calls),
                      per_call_us(pin_separate, [(pm, pd, q, v, a, t) for q, v, a, t in P],
                                  calls)))
    return table


def fig3(robot):
    """∂/∂q̇ at v = a = 0, zero gravity: analytical and forward finite differences."""
    m = robot.model.with_gravity([0.0, 0.0, 0.0])
    q = robot.random_state(0)[0]
    z = np.zeros(m.nv)
    _, dtau_dv, _ = rbd_ros.rnea_derivatives(m, q, z, z)
    _, dtau_dv_fd, _ = rbd_ros.rnea_derivatives_fd(m, q, z, z, central=False)
    _, dqdd_dv, _ = rbd_ros.aba_derivatives(m, q, z, z)
    _, dqdd_dv_fd, _ = rbd_ros.aba_derivatives_fd(m, q, z, z, central=False)
    return dtau_dv, dtau_dv_fd, dqdd_dv, dqdd_dv_fd


def plot(results, fig3_data, out):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = [label for label, _, _ in next(iter(results.values()))]
    fig, axes = plt.subplots(1, len(results), figsize=(5.5 * len(results), 5.5), squeeze=False)
    for ax, (name, rows) in zip(axes[0], results.items()):
        y = np.arange(len(rows))
        ax.barh(y - 0.2, [r[1] for r in rows], 0.4, label="rbd_ros")
        ax.barh(y + 0.2, [r[2] or 0 for r in rows], 0.4, label="Pinocchio")
        ax.set_yticks(y, labels if ax is axes[0][0] else [""] * len(rows))
        ax.invert_yaxis()
        ax.set_xscale("log")
        ax.set_xlabel("µs per call from Python (log)")
        ax.set_title(name)
        ax.legend(loc="lower right")
    fig.tight_layout()
    fig.savefig(os.path.join(out, "fig2_timings.png"), dpi=110)

    name, (dtau_dv, dtau_dv_fd, dqdd_dv, dqdd_dv_fd) = fig3_data
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.5))
    for ax, exact, fd, title in ((axes[0], dtau_dv, dtau_dv_fd, "∂τ/∂q̇"),
                                 (axes[1], dqdd_dv, dqdd_dv_fd, "∂q̈/∂q̇")):
        floor = 1e-20
        ax.semilogy(np.maximum(np.abs(fd).ravel(), floor), ".", ms=3,
                    label=f"forward finite differences (max {np.max(np.abs(fd)):.1e})")
        ax.semilogy(np.maximum(np.abs(exact).ravel(), floor), ".", ms=3,
                    label=f"analytical (max {np.max(np.abs(exact)):.0e}; 0 drawn at 1e-20)")
        ax.set_title(f"{title} at v = a = 0, no gravity ({name})")
        ax.set_xlabel("matrix entry")
        ax.legend(loc="center right", fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "fig3_rounding.png"), dpi=110)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--robots", default="arm7,hyq,talos")
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--out", default=os.path.join(HERE, "out"))
    args = parser.parse_args()
    names = [n for n in args.robots.split(",") if available(n)]
    os.makedirs(args.out, exist_ok=True)
    import pinocchio as pin
    print(f"rbd_ros {rbd_ros.__version__}, Pinocchio {pin.__version__}: per-call latency from "
          "Python, best of 5 (finite differences: best of 3), µs")
    results = {}
    for name in names:
        robot = Robot(name)
        rows = rows_for(robot, args.calls)
        results[f"{name} (nv = {robot.model.nv})"] = rows
        print(f"\n{name}, nv = {robot.model.nv}")
        print(f"  {'':<36} {'ours':>9} {'Pinocchio':>10} {'ours/pin':>9}")
        for label, ours, theirs in rows:
            ratio = f"{ours / theirs:9.2f}" if theirs else f"{'':>9}"
            theirs_s = f"{theirs:10.2f}" if theirs else f"{'-':>10}"
            print(f"  {label:<36} {ours:9.2f} {theirs_s} {ratio}")
        by = {label: ours for label, ours, _ in rows}
        print(f"  finite differences / analytical: ID "
              f"{by['finite differences of ID'] / by['analytical derivatives of ID']:.1f}×, FD "
              f"{by['finite differences of FD'] / by['analytical derivatives of FD']:.1f}×; "
              f"Cholesky / analytical M⁻¹ "
              f"{by['M⁻¹ CRBA + Cholesky'] / by['M⁻¹ analytical algorithm']:.2f}×")
    last = names[-1]
    data = fig3(Robot(last))
    print(f"\nFig. 3 ({last}, v = a = 0, gravity 0): max |∂τ/∂q̇| analytical "
          f"{np.max(np.abs(data[0])):.1e}, forward differences {np.max(np.abs(data[1])):.1e}; "
          f"max |∂q̈/∂q̇| analytical {np.max(np.abs(data[2])):.1e}, forward differences "
          f"{np.max(np.abs(data[3])):.1e}")
    plot(results, (last, data), args.out)
    print(f"plots: {os.path.join(args.out, 'fig2_timings.png')}, "
          f"{os.path.join(args.out, 'fig3_rounding.png')}")


if __name__ == "__main__":
    main()
