#!/usr/bin/env python3
"""
Write the bundled example bag: a simulated rbd_arm7 recording (data/example_arm7/).

    python scripts/make_example_bag.py [OUT] [--duration 10] [--rate 100] [--seed 1]

The arm follows smooth multi-sine joint trajectories (q, v, a analytic). The "measured"
efforts come from a model whose inertias differ from the URDF's (each body's 10 inertial
parameters scaled by 1 + U(-0.2, 0.2), which keeps them physically consistent), plus
noise; positions and velocities carry sensor noise too. So replaying the bag against the
URDF shows a real, nonzero prediction error. The bag (rosbag2, mcap) holds /robot_description
(std_msgs/String, the URDF) and /joint_states (sensor_msgs/JointState).
"""
import argparse
import os
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

import rbd_ros  # noqa: E402
from rbd_ros.replay import bag_io  # noqa: E402

NOISE = {"position": 1e-4, "velocity": 2e-3, "effort": 0.05}   # standard deviations


def trajectory(model, t, seed=1):
    """(q, v, a), each (N, nv): a sum of three sines per joint, within the joint limits."""
    rng = np.random.default_rng(seed)
    nj = model.nv
    freq = rng.uniform(0.1, 0.6, (3, nj))
    amp = rng.uniform(0.1, 0.35, (3, nj))
    phase = rng.uniform(0, 2 * np.pi, (3, nj))
    lo = np.where(np.isfinite(model.lower), model.lower, -np.pi)
    hi = np.where(np.isfinite(model.upper), model.upper, np.pi)
    mid = 0.5 * (lo + hi)
    w = 2 * np.pi * freq[:, None, :]
    arg = w * t[None, :, None] + phase[:, None, :]
    q = mid + (amp[:, None, :] * np.sin(arg)).sum(0)
    v = (amp[:, None, :] * w * np.cos(arg)).sum(0)
    a = (-amp[:, None, :] * w ** 2 * np.sin(arg)).sum(0)
    return q, v, a


def true_model(model, seed=1, spread=0.2):
    """Make the "real robot": the URDF's inertias, each scaled by 1 + U(-spread, spread)."""
    rng = np.random.default_rng(seed + 1000)
    theta = model.inertial_parameters()
    scale = 1 + rng.uniform(-spread, spread, (model.nbodies, 1))
    return model.with_inertial_parameters(theta * scale)


def simulate(robot="rbd_arm7", duration=10.0, rate=100.0, seed=1):
    """(URDF text, model, t, measured q, v, effort, true τ)."""
    path = rbd_ros.robots.path(robot)
    with open(path) as f:
        urdf = f.read()
    model = rbd_ros.load_model(urdf)
    t = np.arange(int(round(duration * rate))) / rate
    q, v, a = trajectory(model, t, seed)
    tau = rbd_ros.rnea_batch(true_model(model, seed), q, v, a)
    rng = np.random.default_rng(seed + 2000)
    noisy = [x + rng.normal(0, NOISE[k], x.shape)
             for k, x in (("position", q), ("velocity", v), ("effort", tau))]
    return urdf, model, t, *noisy, tau


def write_bag(out, urdf, joint_names, t, q, v, effort, start=1_700_000_000.0,
              storage="mcap", description_topic="/robot_description", topic="/joint_states"):
    """Write a rosbag2 with the URDF and one JointState per sample (``bag_io``)."""
    bag_io.write_joint_states(out, urdf, joint_names, t, q, v, effort, start, storage,
                              description_topic, topic)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out", nargs="?", default=os.path.join(ROOT, "data", "example_arm7"))
    p.add_argument("--duration", type=float, default=10.0)
    p.add_argument("--rate", type=float, default=100.0)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--storage", choices=("mcap", "sqlite3"), default="mcap")
    args = p.parse_args(argv)
    urdf, model, t, q, v, effort, _ = simulate("rbd_arm7", args.duration, args.rate, args.seed)
    write_bag(args.out, urdf, model.joint_names, t, q, v, effort, storage=args.storage)
    print(f"wrote {args.out}: {len(t)} joint_states of {model.name}")


if __name__ == "__main__":
    main()
