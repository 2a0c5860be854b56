#!/usr/bin/env python3
"""
Contact awareness in the core: the Coriolis matrix and the momentum observer per sample.

Side by side in one run: ``rbd_ros.coriolis_matrix`` and Pinocchio's
``computeCoriolisMatrix`` (per call from Python, best of 5, µs), the batch form per state,
the frame Jacobian of the robot's last link (``algorithms.frame_jacobian`` and Pinocchio's
``computeFrameJacobian``, LOCAL), and the observer's cost per sample:
``MomentumObserver.step`` (the node's path: one sample per call), the same with the contact
wrench at the last link computed in the same call (``frame=``: the node's tick with
``contact_frame``) and ``contact.observe`` over 1000 samples (the replay's), next to
``rbd_ros.rnea`` for scale (a tick of ``~/torques`` costs about one RNEA).

    python bench/bench_contact.py [--calls 5000]
"""
import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "test"))

from bench_core import per_call_us  # noqa: E402
from oracle import Robot, available  # noqa: E402  (puts the checkout on sys.path)

import rbd_ros  # noqa: E402
from rbd_ros.contact import detection as contact  # noqa: E402
from rbd_ros.algorithms.calls import frame_jacobian  # noqa: E402

NSTATES = 50
ROBOTS = ("arm7", "panda", "hyq", "talos")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=5000)
    args = parser.parse_args()
    print(f"load: {open('/proc/loadavg').read().split()[:3]}")
    print(f"{'robot':8} {'nv':>3} | {'C ours':>8} {'C pin':>8} {'C batch':>8} | "
          f"{'J ours':>7} {'J pin':>7} | {'obs step':>9} {'+ wrench':>9} {'obs array':>9} "
          f"{'rnea':>7}   (µs)")
    for name in ROBOTS:
        if not available(name):
            continue
        robot = Robot(name)
        m, pin = robot.model, robot.pin
        states = [robot.random_state(seed)[:2] for seed in range(NSTATES)]
        ours = per_call_us(lambda q, v: rbd_ros.coriolis_matrix(m, q, v), states, args.calls)
        pstates = [(robot.q_to_pin(q), robot.v_to_pin(v)) for q, v in states]
        theirs = per_call_us(lambda q, v: pin.computeCoriolisMatrix(robot.pm, robot.pd, q, v),
                             pstates, args.calls)
        Q = np.array([s[0] for s in states] * 20)
        V = np.array([s[1] for s in states] * 20)
        out = np.empty((len(Q), m.nv, m.nv))
        rbd_ros.coriolis_matrix_batch(m, Q, V, out=out)
        t0 = time.perf_counter()
        rbd_ros.coriolis_matrix_batch(m, Q, V, out=out)
        batch = (time.perf_counter() - t0) / len(Q) * 1e6
        observer = contact.MomentumObserver(m, 100.0)
        tau = np.zeros(m.nv)
        clock = iter(np.arange(10 ** 7) * 1e-3)
        step = per_call_us(lambda q, v: observer.step(next(clock), q, v, tau), states,
                           args.calls)
        link = [k for k, (body, _, _) in m.link_frames.items() if body >= 0][-1]
        jac = per_call_us(lambda q, v: frame_jacobian(m, q, link), states, args.calls)
        frame = robot.pm.getFrameId(link, pin.BODY)
        jac_pin = per_call_us(lambda q, v: pin.computeFrameJacobian(robot.pm, robot.pd, q, frame,
                                                                    pin.LOCAL),
                              pstates, args.calls)
        observer = contact.MomentumObserver(m, 100.0, frame=link)
        wrench = per_call_us(lambda q, v: observer.step(next(clock), q, v, tau), states,
                             args.calls)
        t = np.arange(len(Q)) * 1e-3
        taus = np.zeros_like(V)
        contact.observe(m, t[:10], Q[:10], V[:10], taus[:10], 100.0)
        t0 = time.perf_counter()
        contact.observe(m, t, Q, V, taus, 100.0)
        array = (time.perf_counter() - t0) / len(Q) * 1e6
        zero = np.zeros(m.nv)
        rnea = per_call_us(lambda q, v: rbd_ros.rnea(m, q, v, zero), states, args.calls)
        print(f"{name:8} {m.nv:3d} | {ours:8.2f} {theirs:8.2f} {batch:8.2f} | "
              f"{jac:7.2f} {jac_pin:7.2f} | {step:9.2f} {wrench:9.2f} {array:9.2f} {rnea:7.2f}")


if __name__ == "__main__":
    main()
