"""
Retiming: the fastest timing of a path through waypoints, within velocity and torque limits.

    python examples/retime_path.py [--save OUT.npz]

Three waypoints of the bundled 7-dof arm (those of doc/planner.md), the URDF's velocity
limits and half its effort limits: ``rbd_ros.retime`` returns every sample's time, q, v, a
and τ and which limit binds there. ``--save`` writes the samples (for the tests' independent
check).
"""
import sys

import numpy as np
import rbd_ros

model = rbd_ros.load_model(rbd_ros.robots.path("rbd_arm7"))
waypoints = [[0, 0.3, 0, -1.5, 0, 1.8, 0],
             [0.8, -0.2, 0.4, -1.0, 0.5, 1.5, 0.6],
             [1.2, 0.5, -0.3, -2.0, -0.4, 2.2, -0.5]]
r = rbd_ros.retime(model, waypoints, effort_scale=0.5, sample_period=0.01)

print(f"{len(r.t)} samples, duration {r.duration:.4f} s")
print("max |v| / velocity limit:", round(float(np.max(np.abs(r.v) / model.velocity_limit)), 4))
print("max |tau| / (0.5 x effort limit):",
      round(float(np.max(np.abs(r.tau) / (0.5 * model.effort_limit))), 4))
kinds = rbd_ros.retiming.retimer.KINDS
binding = [kinds[k] for k in r.binding]
print("samples where a limit binds:",
      {kind: binding.count(kind) for kind in kinds if kind != "none"})

for arg in sys.argv[1:]:
    if arg.endswith(".npz"):
        np.savez(arg, t=r.t, q=r.q, v=r.v, a=r.a, tau=r.tau)
