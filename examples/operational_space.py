"""
Operational-space and whole-body quantities of a 7-dof arm, one short block per call.

Run: python examples/operational_space.py [URDF] (default: the bundled rbd_arm7). Each block
prints one quantity; doc/operational_space.md shows them beside Pinocchio's calls.
"""
import sys

import numpy as np
import rbd_ros

urdf = sys.argv[1] if len(sys.argv) > 1 else rbd_ros.robots.path("rbd_arm7")
model = rbd_ros.load_model(urdf)
q = model.random_configuration(0)
v = np.full(model.nv, 0.2)
tool = list(model.link_frames)[-1]                 # the last link: the arm's flange or tool
np.set_printoptions(precision=4, suppress=True)

# --- frame_placement
oMf = rbd_ros.frame_placement(model, q, tool)      # 4 × 4 [R p; 0 1] in the root frame
print("tool position:", oMf[:3, 3])

# --- frame_jacobian
J = rbd_ros.frame_jacobian(model, q, tool, "local_world_aligned")   # 6 × nv
print("tool velocity (linear, angular):", J @ v)

# --- frame_jacobian_time_variation
dJ = rbd_ros.frame_jacobian_time_variation(model, q, v, tool, "local_world_aligned")
print("J̇ v:", dJ @ v)

# --- frame_acceleration_bias
qdd = np.zeros(model.nv)
bias = rbd_ros.frame_acceleration_bias(model, q, v, tool, "local_world_aligned")
print("tool acceleration at q̈ = 0 (J q̈ + bias):", J @ qdd + bias)

# --- operational_space_inertia
Lam = rbd_ros.operational_space_inertia(model, q, tool)              # 6 × 6, needs 6 dof
Lam_t = rbd_ros.operational_space_inertia(model, q, tool, translational=True)   # 3 × 3
print("Λ_t (kg):", Lam_t.round(4).tolist())
print("Λ symmetric positive definite:", bool(np.all(np.linalg.eigvalsh(Lam) > 0)))

# --- effective_mass
for axis, u in zip("xyz", np.eye(3)):
    mass = rbd_ros.effective_mass(model, q, tool, u)
    print(f"effective mass along {axis}: {mass:.4f} kg "
          f"(1 / uᵀ Λ_t⁻¹ u = {1 / (u @ np.linalg.solve(Lam_t, u)):.4f})")

# --- center_of_mass
c, c_dot = rbd_ros.center_of_mass(model, q, v)
print("centre of mass:", c, "its velocity:", c_dot)

# --- center_of_mass_jacobian
Jc = rbd_ros.center_of_mass_jacobian(model, q)                       # 3 × nv
print("J_c v == ċ:", bool(np.allclose(Jc @ v, c_dot)))

# --- centroidal_momentum_matrix
Ag = rbd_ros.centroidal_momentum_matrix(model, q)                    # 6 × nv
print("A_G v:", Ag @ v)

# --- centroidal_momentum
print("h_G (linear, angular about c):", rbd_ros.centroidal_momentum(model, q, v))
