"""
A planner's torque check: a trajectory's joint torques against the URDF's effort limits.

    python examples/torque_check.py [ROBOT.urdf] [--save OUT.npz]

A planner has a trajectory (here a quintic, rest to rest, between two configurations of the
bundled 7-dof arm); the torques it needs are the inverse dynamics at each point, all points
in one call (``rbd_ros.rnea_batch``); ``rbd_ros.batch.rollout.check_limits`` compares them
(and the velocities) with the URDF's limits. The same move in a third of the time is three
times as fast and needs nine times the inertial torque: the check says which point and joint
break a limit first (here joint1's velocity limit).
``--save`` writes the trajectories and torques (for the tests' independent check).
"""
import sys

import numpy as np
import rbd_ros
from rbd_ros.batch.rollout import check_limits

args = [a for a in sys.argv[1:] if not a.startswith("--") and not a.endswith(".npz")]
urdf = args[0] if args else rbd_ros.robots.path("rbd_arm7")
model = rbd_ros.load_model(urdf)
start = np.array([0, 0.3, 0, -1.5, 0, 1.8, 0.0])[:model.nq]
goal = np.array([1.2, 0.5, -0.3, -2.0, -0.4, 2.2, -0.5])[:model.nq]


def quintic(duration, n=200):
    """Return t, q, v, a of a rest-to-rest quintic from start to goal in ``duration`` s."""
    t = np.linspace(0.0, duration, n)
    s = t / duration
    shape = 10 * s**3 - 15 * s**4 + 6 * s**5                  # 0 -> 1, zero v and a at ends
    ds = (30 * s**2 - 60 * s**3 + 30 * s**4) / duration
    dds = (60 * s - 180 * s**2 + 120 * s**3) / duration**2
    delta = goal - start
    return t, start + np.outer(shape, delta), np.outer(ds, delta), np.outer(dds, delta)


saved = {}
for duration in (3.0, 1.0):
    t, q, v, a = quintic(duration)
    tau = rbd_ros.rnea_batch(model, q, v, a)                   # (N, nv), N·m, one call
    limits = check_limits(model, v, tau)
    print(f"{duration:.1f} s move: feasible {limits.feasible}")
    print("  peak |tau| / effort limit per joint:", np.round(limits.peak_effort, 3))
    print("  peak |v| / velocity limit per joint:", np.round(limits.peak_velocity, 3))
    if not limits.feasible:
        print(f"  first violation: point {limits.first_point} (t = "
              f"{t[limits.first_point]:.3f} s), {model.joint_names[limits.first_joint]}, "
              f"{limits.first_limit} limit")
    saved[f"q_{duration:g}"], saved[f"v_{duration:g}"] = q, v
    saved[f"a_{duration:g}"], saved[f"tau_{duration:g}"] = a, tau

for arg in sys.argv[1:]:
    if arg.endswith(".npz"):
        np.savez(arg, **saved)
