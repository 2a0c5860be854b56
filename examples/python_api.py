"""
The Python API on a URDF: load a robot, then inverse and forward dynamics and derivatives.

    python examples/python_api.py [ROBOT.urdf]      # default: the bundled 7-dof arm
"""
import sys

import numpy as np
import rbd_ros

urdf = sys.argv[1] if len(sys.argv) > 1 else rbd_ros.robots.path("rbd_arm7")
model = rbd_ros.load_model(urdf)                 # a path or the URDF's XML
q = model.random_configuration(0)                # a valid configuration (seeded)
v, a = np.full(model.nv, 0.1), np.zeros(model.nv)

tau = rbd_ros.rnea(model, q, v, a)               # inverse dynamics: tau = ID(q, v, a)
qdd = rbd_ros.aba(model, q, v, tau)              # forward dynamics: gives a back
M = rbd_ros.crba(model, q)                       # joint-space inertia matrix
dtau_dq, dtau_dv, _ = rbd_ros.rnea_derivatives(model, q, v, a)
print("joints:", ", ".join(model.joint_names))
print("gravity torques [N m]:", np.round(rbd_ros.gravity_torques(model, q), 3))
print("ABA(RNEA(a)) == a:", np.allclose(qdd, a, atol=1e-9))
print("M symmetric positive definite:", bool(np.all(np.linalg.eigvalsh(M) > 0)))
