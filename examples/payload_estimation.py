"""
Payload estimation from Python: simulate the arm with a known payload, then estimate it.

    python examples/payload_estimation.py

The bundled 7-dof arm carries 1.5 kg on ``link7`` (centre of mass 6 cm along its z axis).
An exciting motion (a sum of sines on every joint, 20 s at 100 Hz) gives q, v, a; its torques
are the loaded arm's inverse dynamics plus 0.05 N·m of noise (seeded), as a torque sensor
would measure them. ``rbd_ros.identification.payload.estimate`` takes the URDF's arm (without
the payload) and those samples and fits the payload's ten inertial parameters: the torque the
model misses is the payload's. Each value comes with its standard deviation; the node's
``~/estimate_payload`` runs the same fit on its recent joint states (doc/node.md).
"""
import numpy as np
import rbd_ros
from rbd_ros.identification import payload
from rbd_ros.model.inertia import compact

model = rbd_ros.load_model(rbd_ros.robots.path("rbd_arm7"))
LINK = "link7"
MASS, COM = 1.5, np.array([0.0, 0.0, 0.06])                     # kg, m in link7's frame
INERTIA = np.diag([4e-3, 4e-3, 2e-3])                           # kg·m² about the centre of mass
loaded = model.with_payload(LINK, compact(MASS, COM, INERTIA))

# an exciting motion about a valid configuration: each joint a sum of two sines
t = np.arange(0.0, 20.0, 0.01)
centre = np.array([0, 0.3, 0, -1.5, 0, 1.8, 0.0])
amplitude = np.array([0.8, 0.5, 0.8, 0.6, 1.0, 0.8, 1.2])
w1 = 2 * np.pi * np.array([0.11, 0.17, 0.13, 0.19, 0.23, 0.29, 0.31])  # rad/s
w2 = 2.3 * w1
q = centre + amplitude * (np.sin(np.outer(t, w1)) + 0.5 * np.sin(np.outer(t, w2))) / 1.5
v = amplitude * (w1 * np.cos(np.outer(t, w1)) + 0.5 * w2 * np.cos(np.outer(t, w2))) / 1.5
a = -amplitude * (w1**2 * np.sin(np.outer(t, w1)) + 0.5 * w2**2 * np.sin(np.outer(t, w2))) / 1.5
rng = np.random.default_rng(0)
tau = rbd_ros.rnea_batch(loaded, q, v, a) + rng.normal(0.0, 0.05, (len(t), model.nv))

est = payload.estimate(model, LINK, q, v, a, tau)
print(est.message)
print(f"mass [kg]: {est.values[0]:.4f} ± {est.stds[0]:.4f} (true {MASS})")
print("centre of mass [m]:", np.round(est.values[1:4], 4), "±", np.round(est.stds[1:4], 4),
      f"(true {COM.tolist()})")
print(f"residual torque std [N m]: {est.sigma:.4f} (simulated noise 0.05)")
