"""Model (immutable, flat arrays built once from a URDF) and Data (a reusable workspace).

The kernels receive the whole model as one read-only float64 table, ``packed``, so that a
call from Python passes few arguments (each array argument costs numba ~50 ns to unbox).
Row i describes body i:

    parent index (-1: the world, parent[i] < i), joint type, index of the joint's first
    entry in q and in v (small integers, exact in float64), the fixed placement of the joint
    frame in the parent body's frame (R row-major, then p: x_parent = R x_joint + p), the unit
    joint axis in the joint frame, the body inertia θ in the joint frame
    (``rbd_ros.inertia`` explains the layout).

The last row (index -1, which is also what parent = -1 points to) describes the world:
its first three numbers are gravity. Workspaces follow the same rule: their last row holds
the world's placement (identity), velocity (zero) and acceleration (-gravity).
"""
import numpy as np

from . import inertia as _inertia

# joint types
REVOLUTE = 0      # also URDF "continuous": one angle in q
PRISMATIC = 1
FREE_FLYER = 2    # only as the root: q = [x, y, z, qx, qy, qz, qw], v = [v_lin, ω] (local frame)
JOINT_TYPE_NAMES = {REVOLUTE: "revolute", PRISMATIC: "prismatic", FREE_FLYER: "free-flyer"}

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


class Model:
    """A robot's kinematic tree and inertias as flat arrays; build with ``rbd_ros.load_model``.

    Attributes: ``nq``, ``nv``, ``nbodies``, ``joint_names`` (movable joints in q order; a
    floating base adds 7 entries to q and 6 to v before them), ``body_names``, ``parent``,
    ``joint_type``, ``idx_q``, ``idx_v``, ``placement`` (nbodies, 12), ``axis`` (nbodies, 3),
    ``inertia`` (nbodies, 10, compact layout), ``theta`` (nbodies, 10), joint limits
    ``lower``, ``upper``, ``velocity_limit``, ``effort_limit`` (one per movable joint) and
    ``gravity`` (settable 3-vector, default [0, 0, -9.81]).
    """

    def __init__(self, name, parent, joint_type, placement, axis, inertia, body_names,
                 joint_names, lower=None, upper=None, velocity_limit=None, effort_limit=None):
        parent = np.asarray(parent, np.int64)
        joint_type = np.asarray(joint_type, np.int64)
        nb = len(parent)
        if np.any(parent >= np.arange(nb)) or np.any(parent < -1):
            raise ValueError("bodies must be ordered so that -1 <= parent[i] < i")
        for i in range(1, nb):
            # depth-first order: a body's parent is on the path from the previous body to the
            # root, so every subtree is the contiguous range i .. subtree_end[i] - 1
            j = i - 1
            while j != parent[i] and j != -1:
                j = parent[j]
            if j != parent[i]:
                raise ValueError(f"bodies must be in depth-first order (body {i})")
        if np.any(joint_type[1:] == FREE_FLYER) or (nb and joint_type[0] == FREE_FLYER
                                                     and parent[0] != -1):
            raise ValueError("a free-flyer joint can only be the root")
        nq_body = np.where(joint_type == FREE_FLYER, 7, 1)
        nv_body = np.where(joint_type == FREE_FLYER, 6, 1)
        idx_q = np.concatenate([[0], np.cumsum(nq_body)[:-1]]).astype(np.int64)
        idx_v = np.concatenate([[0], np.cumsum(nv_body)[:-1]]).astype(np.int64)

        # subtree_end[i]: bodies i..subtree_end[i]-1 form the subtree rooted at i (DFS order)
        subtree_end = np.arange(1, nb + 1)
        for i in range(nb - 1, -1, -1):
            if parent[i] >= 0:
                subtree_end[parent[i]] = max(subtree_end[parent[i]], subtree_end[i])
        # dof_parent[k]: the degree of freedom supporting dof k (-1 at a root); inside a free
        # flyer each dof hangs from the previous one
        dof_parent = np.empty(int(nv_body.sum()), np.int64)
        for i in range(nb):
            p = parent[i]
            dof_parent[idx_v[i]] = -1 if p < 0 else idx_v[p] + nv_body[p] - 1
            dof_parent[idx_v[i] + 1:idx_v[i] + nv_body[i]] = np.arange(idx_v[i], idx_v[i] + nv_body[i] - 1)

        inertia = np.asarray(inertia, np.float64).reshape(nb, 10)
        packed = np.zeros((nb + 1, P_COLS))
        packed[:nb, P_PARENT] = parent
        packed[:nb, P_TYPE] = joint_type
        packed[:nb, P_IQ] = idx_q[:nb]
        packed[:nb, P_IV] = idx_v[:nb]
        packed[:nb, P_PLACEMENT:P_PLACEMENT + 12] = np.asarray(placement, np.float64).reshape(nb, 12)
        packed[:nb, P_AXIS:P_AXIS + 3] = np.asarray(axis, np.float64).reshape(nb, 3)
        packed[:nb, P_THETA:P_THETA + 10] = _inertia.to_theta(inertia)
        packed[:nb, P_VEND] = (idx_v + nv_body)[subtree_end - 1] if nb else []
        packed[nb, P_GRAVITY:P_GRAVITY + 3] = (0.0, 0.0, -9.81)
        for arr in (packed, inertia, parent, joint_type, idx_q, idx_v, subtree_end, dof_parent):
            arr.flags.writeable = False

        self.name = name
        self.nbodies = nb
        self.nq = int(nq_body.sum())
        self.nv = int(nv_body.sum())
        self.floating_base = bool(nb and joint_type[0] == FREE_FLYER)
        self.body_names = tuple(body_names)
        self.joint_names = tuple(joint_names)
        njoints = len(self.joint_names)
        if njoints != self.nv - (6 if self.floating_base else 0):
            raise ValueError("one joint name per 1-dof joint is required")
        self.packed = packed
        self.subtree_end = subtree_end
        self.dof_parent = dof_parent
        self.inertia = inertia
        self.parent = parent
        self.joint_type = joint_type
        self.idx_q = idx_q[:nb]
        self.idx_v = idx_v[:nb]
        self.placement = packed[:nb, P_PLACEMENT:P_PLACEMENT + 12]
        self.axis = packed[:nb, P_AXIS:P_AXIS + 3]
        self.theta = packed[:nb, P_THETA:P_THETA + 10]

        def limits(values, default):
            out = np.full(njoints, default) if values is None else np.asarray(values, np.float64)
            out.flags.writeable = False
            return out
        self.lower = limits(lower, -np.inf)
        self.upper = limits(upper, np.inf)
        self.velocity_limit = limits(velocity_limit, np.inf)
        self.effort_limit = limits(effort_limit, np.inf)

        self.data = Data(self)

    @property
    def gravity(self):
        """Gravity in the world frame (m/s², default [0, 0, -9.81]); settable."""
        return np.array(self.packed[-1, P_GRAVITY:P_GRAVITY + 3])

    @gravity.setter
    def gravity(self, value):
        try:
            value = np.array(value, np.float64)
        except (TypeError, ValueError):
            value = None
        if value is None or value.shape != (3,) or not np.all(np.isfinite(value)):
            raise ValueError(f"gravity must be 3 finite numbers (m/s², world frame), got {value!r}")
        self.packed.flags.writeable = True
        self.packed[-1, P_GRAVITY:P_GRAVITY + 3] = value
        self.packed.flags.writeable = False

    def neutral(self):
        """The zero configuration (identity quaternion for a floating base)."""
        q = np.zeros(self.nq)
        if self.floating_base:
            q[6] = 1.0
        return q

    def random_configuration(self, rng=None):
        """A configuration within the joint limits (±π where a joint is unlimited)."""
        rng = np.random.default_rng(rng)
        lo = np.where(np.isfinite(self.lower), self.lower, -np.pi)
        hi = np.where(np.isfinite(self.upper), self.upper, np.pi)
        joints = rng.uniform(lo, hi)
        if not self.floating_base:
            return joints
        quat = rng.normal(size=4)
        return np.concatenate([rng.uniform(-1, 1, 3), quat / np.linalg.norm(quat), joints])

    def inertial_parameters(self):
        """θ per body, shape (nbodies, 10), in the order of the seeds README."""
        return np.array(self.theta)

    def with_inertial_parameters(self, theta):
        """A new Model with this one's kinematics, name, joint limits and gravity, and the
        body inertias θ (nbodies, 10) in the order of the seeds README (about each body's
        joint frame origin)."""
        theta = np.array(theta, dtype=np.float64)
        if theta.shape != (self.nbodies, 10):
            raise ValueError(f"theta must have shape ({self.nbodies}, 10), got {theta.shape}")
        if not np.all(np.isfinite(theta)):
            raise ValueError("theta contains NaN or inf")
        model = Model(self.name, self.parent, self.joint_type, self.placement, self.axis,
                      _inertia.from_theta(theta), self.body_names, self.joint_names,
                      lower=self.lower, upper=self.upper,
                      velocity_limit=self.velocity_limit, effort_limit=self.effort_limit)
        model.gravity = self.gravity
        return model

    def __repr__(self):
        base = "floating" if self.floating_base else "fixed"
        return (f"<rbd_ros.Model {self.name!r}: {self.nbodies} bodies, nq={self.nq}, "
                f"nv={self.nv}, {base} base>")


class Data:
    """Preallocated workspace of one model; the kernels write into it and allocate nothing.

    One Data serves one call at a time: threads each need their own (``Data(model)``).
    """

    def __init__(self, model):
        nb, nv = model.nbodies, model.nv
        self.body = np.zeros((nb + 1, W_COLS))   # last row: the world
        self.body[-1, W_OM:W_OM + 9] = np.eye(3).ravel()
        # inputs standing for "none" (no external force, zero velocity); kernels never write them
        self.no_fext = np.zeros((0, 6))
        self.zeros_v = np.zeros(nv)
        self.matrix = np.zeros((nv, nv))             # nv×nv: M, factorized in place (Cholesky)
        self.force_sets = np.zeros((nb, nv, 6))     # F_i / P_i force and motion sets (minv)
        self.dof = np.zeros((nv, D_COLS))           # per-dof columns (derivatives)
        self.body_matrix = np.zeros((nb + 1, 36))   # per-body 6×6 (derivatives: B^c)
        self.stacked = np.zeros((3 * nv + 1, nv))   # ∂τ/∂q, ∂τ/∂q̇, M and q̈ (ABA derivatives)
        self.regressor_block = np.zeros((6, 10))    # one body's 6×10 regressor (regressors)
        self.all_body = np.zeros((nb + 1, X_COLS))  # compute_all: forces at a and at q̈
        self.all_dof = np.zeros((nv, 6))            # compute_all: dA columns at q̈
        self.all_stacked = np.zeros((2 * nv, nv))   # compute_all: ∂ID/∂q at q̈, -M⁻¹
