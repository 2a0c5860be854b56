#!/usr/bin/env python3
"""
Write a simulated fleet: several rbd_arm7 bags from a robot with joint friction and rotors.

    python scripts/make_fleet_bags.py OUT [--bags 6] [--duration 20] [--rate 100] [--seed 1]
                                          [--noise-free] [--replay-acceleration]

The "real robot" is the one of ``make_example_bag.py`` (the URDF's inertias, each body's
scaled by 1 + U(-0.2, 0.2)) plus the joint parameters below: its measured effort is

    τ = RNEA_true(q, v, a) + Ia a + Fv v + Fc tanh(v / ε) + τ0      (+ noise)

Bag k (OUT/arm7_k) is a different multi-sine trajectory (seed + k), lasts ``duration``
times 1, 1.5, 0.75, 1.25, ... and starts 3 days after bag k - 1. Noise as in
``make_example_bag.NOISE`` unless ``--noise-free``. ``--replay-acceleration`` computes the
efforts at the acceleration ``rbd_replay`` will estimate from the recorded velocities
(Savitzky-Golay, 11 samples, cubic) instead of the trajectory's own: with ``--noise-free``
the identification then sees exactly the model that made the data (the tests' case).
"""
import argparse
import os
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "scripts"))

import make_example_bag as example  # noqa: E402
import rbd_ros  # noqa: E402
from rbd_ros.actuation.joint_parameters import EPSILON, JointParameters  # noqa: E402
from rbd_ros.replay.recorded_ticks import savgol_derivative  # noqa: E402

# the simulated robot's joints, base to tip: N·m·s²/rad, N·m·s/rad, N·m, N·m
ARMATURE = (0.30, 0.25, 0.20, 0.15, 0.08, 0.05, 0.03)
VISCOUS = (0.80, 0.70, 0.60, 0.50, 0.30, 0.20, 0.10)
COULOMB = (0.60, 0.50, 0.45, 0.40, 0.25, 0.15, 0.10)
OFFSET = (0.05, -0.04, 0.03, -0.02, 0.02, -0.01, 0.01)
DURATION_FACTORS = (1.0, 1.5, 0.75, 1.25)
START = 1_700_000_000.0
DAY = 86400.0


def joint_parameters(model):
    """Return the simulated robot's joint friction and armature (the tables above)."""
    nv = model.nv
    return JointParameters(tuple(model.joint_names), {
        "armature": np.array(ARMATURE[:nv]), "viscous": np.array(VISCOUS[:nv]),
        "coulomb": np.array(COULOMB[:nv]), "offset": np.array(OFFSET[:nv])}, EPSILON)


def simulate(k, duration, rate, seed, noise=True, replay_acceleration=False):
    """(URDF, model, t, measured q, v, effort) of bag ``k``."""
    with open(rbd_ros.robots.path("rbd_arm7")) as f:
        urdf = f.read()
    model = rbd_ros.load_model(urdf)
    t = np.arange(int(round(duration * rate))) / rate
    q, v, a = example.trajectory(model, t, seed + k)
    if replay_acceleration:
        a = savgol_derivative(t, v, 11, 3)
    truth = example.true_model(model, seed)
    tau = rbd_ros.rnea_batch(truth, q, v, a) + joint_parameters(model).torques(v, a)
    if noise:
        rng = np.random.default_rng(seed + 2000 + k)
        q, v, tau = (x + rng.normal(0, example.NOISE[name], x.shape)
                     for name, x in (("position", q), ("velocity", v), ("effort", tau)))
    return urdf, model, t, q, v, tau


def write_fleet(out, bags=6, duration=20.0, rate=100.0, seed=1, noise=True,
                replay_acceleration=False, storage="mcap"):
    """Write the bags OUT/arm7_0 ... and return their paths."""
    os.makedirs(out, exist_ok=True)
    paths = []
    for k in range(bags):
        length = duration * DURATION_FACTORS[k % len(DURATION_FACTORS)]
        urdf, model, t, q, v, tau = simulate(k, length, rate, seed, noise, replay_acceleration)
        path = os.path.join(out, f"arm7_{k}")
        example.write_bag(path, urdf, model.joint_names, t, q, v, tau,
                          start=START + 3 * DAY * k, storage=storage)
        paths.append(path)
    return paths


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    p.add_argument("out")
    p.add_argument("--bags", type=int, default=6)
    p.add_argument("--duration", type=float, default=20.0)
    p.add_argument("--rate", type=float, default=100.0)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--noise-free", action="store_true")
    p.add_argument("--replay-acceleration", action="store_true")
    p.add_argument("--storage", choices=("mcap", "sqlite3"), default="mcap")
    args = p.parse_args(argv)
    paths = write_fleet(args.out, args.bags, args.duration, args.rate, args.seed,
                        not args.noise_free, args.replay_acceleration, args.storage)
    print(f"wrote {len(paths)} bags of rbd_arm7 into {args.out}")


if __name__ == "__main__":
    main()
