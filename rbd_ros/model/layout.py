"""
The layout of the kernels' arrays: the model's table ``packed``, the workspaces, the joint types.

The kernels receive the whole model as one read-only float64 table, ``packed``, so that a
call from Python passes few arguments (each array argument costs numba ~50 ns to unbox).
Row i describes body i:

    parent index (-1: the world, parent[i] < i), joint type, index of the joint's first
    entry in q and in v (small integers, exact in float64), the fixed placement of the joint
    frame in the parent body's frame (R row-major, then p: x_parent = R x_joint + p), the unit
    joint axis in the joint frame, the body inertia θ in the joint frame
    (``rbd_ros.model.inertia`` explains the layout).

The last row (index -1, which is also what parent = -1 points to) describes the world:
its first three numbers are gravity. Workspaces follow the same rule: their last row holds
the world's placement (identity), velocity (zero) and acceleration (-gravity).
"""

# The joint types (the numbers in the P_TYPE column) are the codes of the joint kinds'
# registry, rbd_ros.model.joints.


# columns of ``packed``
P_PARENT, P_TYPE, P_IQ, P_IV = range(4)
P_PLACEMENT = 4   # 12 numbers
P_AXIS = 16       # 3
P_THETA = 19      # 10
P_VEND = 29       # 1: end of the v range of the body's subtree (DFS: [idx_v, vend) )
P_COLS = 30
P_GRAVITY = 0     # in the world row (-1)
# workspace columns (one row per body)
W_OM = 0          # 12: placement of the body in the world
W_OS = 12         # 6: joint motion subspace in the world frame (1-dof joints)
W_OV = 18         # 6: spatial velocity, world frame
W_OA = 24         # 6: spatial acceleration, world frame (gravity included as a base acceleration)
W_OF = 30         # 6: spatial force, world frame
W_OI = 36         # 10: body inertia θ in the world frame (composite inertia in CRBA)
W_IA = 46         # 36: articulated inertia (ABA), 6×6 row-major
W_U = 82          # 6: U = I^A S
W_DINV = 88       # 1: 1 / D
W_UU = 89         # 1: u = τ - Sᵀ p^A
W_OC = 90         # 6: velocity-product acceleration ċ = v_parent × S q̇
W_COLS = 96
# per-dof workspace columns (analytical derivatives, one row per entry of v)
D_S = 0           # 6: S_j, world motion subspace column
D_DV = 6          # 6: dV_j = v_λ × S_j
D_DA = 12         # 6: dA_j = a_λ × S_j + v_λ × dV_j
D_DW = 18         # 6: dW_j = v_j × S_j + v_λ × S_j
D_COLS = 24
# compute_all's extra per-body columns
X_FA = 0          # 6: body force at the given a, then summed over the subtree (F at a)
X_FQ = 6          # 6: bias force, + I a at q̈ in pass 3, then summed over the subtree (F at q̈)
X_COLS = 12
