"""
The layout of the kernels' arrays: the model's table ``packed``, the workspaces, the joint types.

The kernels receive the whole model as one read-only float64 table, ``packed``, so that a
call from Python passes few arguments (each array argument costs numba ~50 ns to unbox).
Row i describes body i (:data:`PACKED`). The last row (index -1, which is also what parent =
-1 points to) describes the world: its first three numbers are gravity. Workspaces follow
the same rule: their last row holds the world's placement (identity), velocity (zero) and
acceleration (-gravity).

Every array's columns are named in one table of (name, width, what it holds), in order, as
MuJoCo names its buffers in ``mjxmacro.h``: a field's first column is the sum of the widths
before it (:func:`columns`), never a number written by hand, and the table is what this
docstring's readers and ``test_layout`` read. Each name is bound below to its first column
(the kernels read them as constants: ``ws[i, W_OV + k]``), and the tables' last entry is
the array's width (``*_COLS``).
"""

# The joint types (the numbers in the P_TYPE column) are the codes of the joint kinds'
# registry, rbd_ros.model.joints.


def columns(table):
    """Return each field's first column, in the order of ``table``, then the total width."""
    first, starts = 0, []
    for _, width, _ in table:
        starts.append(first)
        first += width
    return (*starts, first)


# ``packed``: one row per body (the world's last)
PACKED = (
    ("P_PARENT", 1, "parent index (-1: the world; parent[i] < i)"),
    ("P_TYPE", 1, "joint type: its kind's code"),
    ("P_IQ", 1, "index of the joint's first entry in q (small integers, exact in float64)"),
    ("P_IV", 1, "index of the joint's first entry in v"),
    ("P_PLACEMENT", 12, "fixed placement of the joint frame in the parent body's frame (R "
                        "row-major, then p: x_parent = R x_joint + p)"),
    ("P_AXIS", 3, "unit joint axis in the joint frame"),
    ("P_THETA", 10, "body inertia θ in the joint frame (rbd_ros.model.inertia's layout)"),
    ("P_VEND", 1, "end of the v range of the body's subtree (DFS: [idx_v, vend) )"),
)
P_PARENT, P_TYPE, P_IQ, P_IV, P_PLACEMENT, P_AXIS, P_THETA, P_VEND, P_COLS = columns(PACKED)
P_GRAVITY = 0     # in the world row (-1): gravity, 3 numbers

# ``Data.body``: one row per body (the world's last)
BODY = (
    ("W_OM", 12, "placement of the body in the world"),
    ("W_OS", 6, "joint motion subspace in the world frame (1-dof joints; ABA and M⁻¹: a "
                "multi-dof joint's first column)"),
    ("W_OV", 6, "spatial velocity, world frame"),
    ("W_OA", 6, "spatial acceleration, world frame (gravity included as a base acceleration)"),
    ("W_OF", 6, "spatial force, world frame"),
    ("W_OI", 10, "body inertia θ in the world frame (composite inertia in CRBA)"),
    ("W_IA", 36, "articulated inertia (ABA), 6×6 row-major"),
    ("W_U", 6, "U = I^A S"),
    ("W_DINV", 1, "1 / D"),
    ("W_UU", 1, "u = τ - Sᵀ p^A"),
    ("W_OC", 6, "velocity-product acceleration ċ = v_parent × S q̇"),
    # last, so that a 1-dof body never loads them: dofs 1..5 of a multi-dof joint other than
    # the free-flyer root (its dof 0 has W_U, W_DINV, W_UU; rbd_ros.algorithms.aba says why)
    ("W_UK", 30, "U of the joint's dof k ≥ 1 at W_UK + 6 (k - 1)"),
    ("W_DINVK", 5, "1 / D of dof k ≥ 1 at W_DINVK + k - 1"),
    ("W_UUK", 5, "u of dof k ≥ 1 at W_UUK + k - 1"),
)
(W_OM, W_OS, W_OV, W_OA, W_OF, W_OI, W_IA, W_U, W_DINV, W_UU, W_OC, W_UK, W_DINVK, W_UUK,
 W_COLS) = columns(BODY)

# ``Data.dof``: one row per entry of v (the analytical derivatives)
DOF = (
    ("D_S", 6, "S_j, world motion subspace column"),
    ("D_DV", 6, "dV_j = v_λ × S_j"),
    ("D_DA", 6, "dA_j = a_λ × S_j + v_λ × dV_j"),
    ("D_DW", 6, "dW_j = v_j × S_j + v_λ × S_j"),
)
D_S, D_DV, D_DA, D_DW, D_COLS = columns(DOF)

# ``Data.all_body``: compute_all's extra per-body columns
ALL_BODY = (
    ("X_FA", 6, "body force at the given a, then summed over the subtree (F at a)"),
    ("X_FQ", 6, "bias force, + I a at q̈ in pass 3, then summed over the subtree (F at q̈)"),
)
X_FA, X_FQ, X_COLS = columns(ALL_BODY)
