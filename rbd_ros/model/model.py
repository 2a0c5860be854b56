"""
Model (immutable, flat arrays built once from a URDF) and Data (a reusable workspace).

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
import threading
import types

import numpy as np

from . import inertia as _inertia

# joint types
REVOLUTE = 0      # also URDF "continuous": one angle in q
PRISMATIC = 1
FREE_FLYER = 2    # only as the root: q = [x, y, z, qx, qy, qz, qw], v = [v_lin, ω] (local frame)


def base_sizes(floating_base):
    """Return (nq_base, nv_base): the entries of q and v before the joints' (``Model``)."""
    return (7, 6) if floating_base else (0, 0)


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


class _Frozen:
    """
    Attributes are set once, in ``__init__`` (through ``_set``); rebinding raises.

    The kernels run without bounds checks and trust the sizes of the model's table and of
    the workspace arrays, so letting Python rebind them could reach memory out of bounds.
    """

    __slots__ = ()

    def _set(self, **attributes):
        for name, value in attributes.items():
            object.__setattr__(self, name, value)

    def __setattr__(self, name, value):
        raise AttributeError(f"{type(self).__name__} is immutable: {name!r} cannot be set "
                             "(see its docstring for how to derive a changed one)")

    def __delattr__(self, name):
        raise AttributeError(f"{type(self).__name__} is immutable: {name!r} cannot be deleted")


def _read_only(values, dtype=np.float64):
    """
    Return a read-only copy of ``values`` whose memory is an immutable bytes object.

    Clearing ``flags.writeable`` alone can be undone from Python (``flags.writeable = True``
    on an array that owns its memory); an array over a bytes object cannot be made writable,
    nor can any view of it, so the kernels' unchecked indices stay within the sizes they
    were built for.
    """
    arr = np.ascontiguousarray(values, dtype)
    return np.frombuffer(arr.tobytes(), dtype).reshape(arr.shape)


class Model(_Frozen):
    """
    A robot's kinematic tree and inertias as flat, read-only arrays.

    Build it with ``rbd_ros.load_model``. A Model is immutable: its attributes cannot be
    rebound and its arrays are read-only; derive changed models with :meth:`with_gravity`
    and :meth:`with_inertial_parameters` (they share the constant arrays).

    Attributes: ``nq``, ``nv``, ``nbodies``, ``joint_names`` (movable joints in q order; a
    floating base adds ``nq_base`` = 7 entries to q and ``nv_base`` = 6 to v before them, both 0
    on a fixed base: the joints are ``q[nq_base:]``, ``v[nv_base:]``), ``body_names``,
    ``parent``, ``joint_type``, ``idx_q``, ``idx_v``, ``placement`` (nbodies, 12), ``axis``
    (nbodies, 3), ``inertia`` (nbodies, 10, compact layout), ``theta`` (nbodies, 10), joint
    limits ``lower``, ``upper``, ``velocity_limit``, ``effort_limit`` (one per movable joint),
    ``gravity`` (default [0, 0, -9.81]), ``link_frames`` (every link of the URDF, fixed-joint
    links included: a read-only mapping link -> (body, R, p), the body it moves with (-1: welded
    to the world of a fixed base) and its frame in the body's, x_body = R x_link + p) and
    ``data``, the model's own workspace, used when a function is called without ``data=``: it
    serves one call at a time, so threads that compute on one model concurrently each pass their
    own ``Data(model)``.

    Mimic joints, coupled (``coupling``, an :class:`rbd_ros.description.mimic_coupling.Coupling`,
    else None):
    ``nq``, ``nv``, ``joint_names`` and the limits are those of the independent joints (the
    model's degrees of freedom; a leader keeps its own limits), while the tree attributes
    (bodies, ``idx_q``, ``idx_v``, ``packed``) describe every joint, followers included:
    ``nq_full``, ``nv_full`` entries (``coupling.joint_names``). Without mimic joints
    ``nq_full == nq`` and ``nv_full == nv``.
    """

    def __init__(self, name, parent, joint_type, placement, axis, inertia, body_names,
                 joint_names, lower=None, upper=None, velocity_limit=None, effort_limit=None,
                 gravity=(0.0, 0.0, -9.81), coupling=None, link_frames=None):
        parent = np.asarray(parent, np.int64)
        joint_type = np.asarray(joint_type, np.int64)
        nb = len(parent)
        _check_tree(parent, joint_type)
        nq_free, nv_free = base_sizes(True)
        nq_body = np.where(joint_type == FREE_FLYER, nq_free, 1)
        nv_body = np.where(joint_type == FREE_FLYER, nv_free, 1)
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
            p, first, n = parent[i], idx_v[i], nv_body[i]
            dof_parent[first] = -1 if p < 0 else idx_v[p] + nv_body[p] - 1
            dof_parent[first + 1:first + n] = np.arange(first, first + n - 1)

        inertia = np.asarray(inertia, np.float64).reshape(nb, 10)
        packed = np.zeros((nb + 1, P_COLS))
        packed[:nb, P_PARENT] = parent
        packed[:nb, P_TYPE] = joint_type
        packed[:nb, P_IQ] = idx_q[:nb]
        packed[:nb, P_IV] = idx_v[:nb]
        packed[:nb, P_PLACEMENT:P_PLACEMENT + 12] = np.reshape(placement, (nb, 12))
        packed[:nb, P_AXIS:P_AXIS + 3] = np.reshape(axis, (nb, 3))
        packed[:nb, P_THETA:P_THETA + 10] = _inertia.to_theta(inertia)
        packed[:nb, P_VEND] = (idx_v + nv_body)[subtree_end - 1] if nb else []
        packed[nb, P_GRAVITY:P_GRAVITY + 3] = _gravity_vector(gravity)
        constants = (packed, inertia, parent, joint_type, idx_q, idx_v, subtree_end, dof_parent)
        packed, inertia, parent, joint_type, idx_q, idx_v, subtree_end, dof_parent = (
            _read_only(arr, arr.dtype) for arr in constants)

        nv = int(nv_body.sum())
        nq = int(nq_body.sum())
        floating_base = bool(nb and joint_type[0] == FREE_FLYER)
        nq_base, nv_base = base_sizes(floating_base)
        joint_names = tuple(joint_names)
        njoints = len(joint_names)
        if njoints != nv - nv_base:
            raise ValueError("one joint name per 1-dof joint is required")
        # the model's degrees of freedom: the independent joints (all, without mimic joints)
        dofs = np.arange(njoints)
        if coupling is not None:
            if coupling.joint_names != joint_names or coupling.floating_base != floating_base:
                raise ValueError("the coupling is of another tree (joint names or base differ)")
            dofs = np.asarray(coupling.independent_index, np.intp)

        def limits(values, default):
            values = np.full(njoints, default) if values is None else np.asarray(values)
            return _read_only(values[dofs])
        self._set(name=name, nbodies=nb, nq=nq - njoints + len(dofs),
                  nv=nv - njoints + len(dofs), nq_full=nq, nv_full=nv, coupling=coupling,
                  floating_base=floating_base, nq_base=nq_base, nv_base=nv_base,
                  body_names=tuple(body_names),
                  joint_names=tuple(joint_names[k] for k in dofs), packed=packed,
                  subtree_end=subtree_end,
                  dof_parent=dof_parent, inertia=inertia, parent=parent,
                  joint_type=joint_type, idx_q=idx_q[:nb], idx_v=idx_v[:nb],
                  placement=packed[:nb, P_PLACEMENT:P_PLACEMENT + 12],
                  axis=packed[:nb, P_AXIS:P_AXIS + 3], theta=packed[:nb, P_THETA:P_THETA + 10],
                  lower=limits(lower, -np.inf), upper=limits(upper, np.inf),
                  velocity_limit=limits(velocity_limit, np.inf),
                  effort_limit=limits(effort_limit, np.inf),
                  link_frames=_link_frames(body_names, link_frames))
        self._set(data=Data(self), _specialized=SpecializedKernels())

    @property
    def gravity(self):
        """Gravity in the world frame (m/s², default [0, 0, -9.81]); a copy."""
        return np.array(self.packed[-1, P_GRAVITY:P_GRAVITY + 3])

    def with_gravity(self, gravity):
        """
        Return this model under another gravity (3 finite numbers, m/s², world frame).

        The new model shares every constant array with this one except the packed table,
        whose last row holds the gravity, and has its own workspace.
        """
        packed = np.array(self.packed)
        packed[-1, P_GRAVITY:P_GRAVITY + 3] = _gravity_vector(gravity)
        return self._with_packed(packed)

    def _with_packed(self, packed, **changed):
        """Return this model with another packed table (and ``changed`` attributes)."""
        attributes = dict(vars(self))
        attributes.update(changed)
        return _assemble(attributes, _read_only(packed))

    def __reduce__(self):
        """
        Pickle the model's tables (another process computes on it: the node's planner).

        Not its workspace (made anew) nor the views of the packed table; unpickling makes
        every array read-only over immutable memory again (:func:`_unpickle`), whatever the
        pickle protocol, and ``link_frames`` a read-only mapping.
        """
        state = {k: v for k, v in vars(self).items() if k not in _REMADE}
        state["link_frames"] = dict(self.link_frames)
        return _unpickle, (state,)

    def neutral(self):
        """Return the zero configuration (identity quaternion for a floating base)."""
        q = np.zeros(self.nq)
        if self.floating_base:
            q[6] = 1.0
        return q

    def random_configuration(self, rng=None):
        """Return a configuration within the joint limits (±π where a joint is unlimited)."""
        rng = np.random.default_rng(rng)
        lo = np.where(np.isfinite(self.lower), self.lower, -np.pi)
        hi = np.where(np.isfinite(self.upper), self.upper, np.pi)
        joints = rng.uniform(lo, hi)
        if not self.floating_base:
            return joints
        quat = rng.normal(size=4)
        return np.concatenate([rng.uniform(-1, 1, 3), quat / np.linalg.norm(quat), joints])

    def inertial_parameters(self):
        """
        Return θ per body, shape (nbodies, 10), about each body's joint frame origin.

        The order is [m, m·cx, m·cy, m·cz, Ixx, Ixy, Iyy, Ixz, Iyz, Izz] (the convention of
        the regressor seed, "linear parametrization regressors").
        """
        return np.array(self.theta)

    def with_inertial_parameters(self, theta):
        """
        Return this model with the body inertias θ (nbodies, 10).

        θ is in the order of :meth:`inertial_parameters`; kinematics, name, joint limits,
        mimic coupling and gravity are kept (and the constant arrays shared).
        """
        theta = np.array(theta, dtype=np.float64)
        if theta.shape != (self.nbodies, 10):
            raise ValueError(f"theta must have shape ({self.nbodies}, 10), got {theta.shape}")
        if not np.all(np.isfinite(theta)):
            raise ValueError("theta contains NaN or inf")
        inertia = _inertia.from_theta(theta)
        packed = np.array(self.packed)
        packed[:-1, P_THETA:P_THETA + 10] = _inertia.to_theta(inertia)
        return self._with_packed(packed, inertia=_read_only(inertia))

    def with_payload(self, link, inertia):
        """
        Return this model with a rigid payload attached to the link ``link``.

        ``link``: any link of ``link_frames``: a body, or a link welded to one by fixed
        joints (the payload is moved into the body's frame through the fixed placement; on
        a link welded to the world of a fixed base it changes nothing).
        ``inertia``: the payload's 10 compact numbers in the link's frame
        (``rbd_ros.model.inertia.compact(mass, com, centroidal_inertia)``), merged into the body's
        inertia with the compact-inertia merge (seed ``ksl_inertia_merge``,
        compact-spatial-inertia-ksl.txt lines 221-231). A physically impossible payload
        (negative mass, an inertia that is not positive semi-definite) is a ValueError.
        """
        if link not in self.link_frames:
            raise ValueError(f"no link {_excerpt(link)} in the model (a payload attaches to "
                             f"one of its {len(self.link_frames)} links, link_frames)")
        payload = np.array(inertia, dtype=np.float64).reshape(-1)
        why = "10 numbers" if payload.shape != (10,) else _inertia.physical_violation(payload)
        if why and "triangle" not in why:       # as the loader: odd principal moments pass
            raise ValueError(f"payload inertia: {why}")
        body, R, p = self.link_frames[link]
        if body < 0:                            # welded to the world: it moves nothing
            return self._with_packed(np.array(self.packed))
        inertia = np.array(self.inertia)
        inertia[body] = _inertia.merge(inertia[body], payload, R, p)
        packed = np.array(self.packed)
        packed[body, P_THETA:P_THETA + 10] = _inertia.to_theta(inertia[body])
        return self._with_packed(packed, inertia=_read_only(inertia))

    def __repr__(self):
        base = "floating" if self.floating_base else "fixed"
        return (f"<rbd_ros.Model {self.name!r}: {self.nbodies} bodies, nq={self.nq}, "
                f"nv={self.nv}, {base} base>")


# what a Model remakes rather than pickles: the views of ``packed`` and the workspace
_REMADE = ("placement", "axis", "theta", "data", "_specialized")


def _assemble(attributes, packed):
    """Return a Model of ``attributes`` with the (read-only) table ``packed``, its views set."""
    model = object.__new__(Model)
    model._set(**attributes)
    model._set(packed=packed, placement=packed[:-1, P_PLACEMENT:P_PLACEMENT + 12],
               axis=packed[:-1, P_AXIS:P_AXIS + 3], theta=packed[:-1, P_THETA:P_THETA + 10])
    model._set(data=Data(model), _specialized=SpecializedKernels())
    return model


class SpecializedKernels:
    """
    The kernels generated for one model (``rbd_ros.specialized``), None until ready.

    The public wrappers read one attribute and run the generic kernel while it is None.
    Each model, derived ones included, has its own (a derived model has another table).
    """

    __slots__ = ("rnea", "nonlinear_effects", "gravity_torques", "crba", "minv", "status")

    def __init__(self):
        self.rnea = self.nonlinear_effects = self.gravity_torques = self.crba = self.minv = None
        self.status = None           # rbd_ros.specialized.Status once asked for


def _unpickle(state):
    """Return the Model pickled as ``state`` (``Model.__reduce__``)."""
    state = {k: _read_only(v, v.dtype) if isinstance(v, np.ndarray) else v
             for k, v in state.items()}
    state["link_frames"] = _link_frames(state["body_names"], state["link_frames"])
    return _assemble(state, state.pop("packed"))


def _check_tree(parent, joint_type):
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
    root_is_free = nb and joint_type[0] == FREE_FLYER
    if np.any(joint_type[1:] == FREE_FLYER) or (root_is_free and parent[0] != -1):
        raise ValueError("a free-flyer joint can only be the root")


def _link_frames(body_names, frames):
    """
    Return the read-only ``link_frames`` mapping: link -> (body, R, p).

    ``frames`` as the loader gives it (every link of the URDF), or None: each body's own
    link at the identity.
    """
    if frames is None:
        frames = {name: (i, np.eye(3), np.zeros(3)) for i, name in enumerate(body_names)}
    return types.MappingProxyType({
        name: (int(body), _read_only(np.array(R, np.float64).reshape(3, 3)),
               _read_only(np.array(p, np.float64).reshape(3)))
        for name, (body, R, p) in frames.items()})


def _gravity_vector(value):
    try:
        g = np.array(value, np.float64)
    except (TypeError, ValueError):
        g = None
    if g is None or g.shape != (3,) or not np.all(np.isfinite(g)):
        raise ValueError(f"gravity must be 3 finite numbers (m/s², world frame), got "
                         f"{_excerpt(value)}")
    return g


def _excerpt(value, limit=60):
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "..."


class Data(_Frozen):
    """
    Preallocated workspace of one model; the kernels write into it and allocate nothing.

    A Data serves one call at a time and is not thread-safe: threads that compute on one
    model concurrently each pass their own (``rbd_ros.rnea(model, q, v, a, data=Data(model))``).
    It fits every model of the same sizes (``nbodies``, ``nq``, ``nv``, and ``nq_full``,
    ``nv_full`` of a model with mimic joints), e.g. ``model.with_gravity``;
    a call refuses a Data of another size before any kernel runs. Its arrays cannot be
    rebound. The batch entries run their chunks in per-chunk copies held here
    (:meth:`batch_workspace`), under ``lock``.
    """

    def __init__(self, model):
        # the tree's kernels work on every joint (nv_full), the public calls on the model's
        # degrees of freedom (nv); they differ with mimic joints only
        nb, nv, nr = model.nbodies, model.nv_full, model.nv
        body = np.zeros((nb + 1, W_COLS))            # last row: the world
        body[-1, W_OM:W_OM + 9] = np.eye(3).ravel()
        self._set(
            nbodies=nb, nv=nr, sizes=_sizes(model), body=body,
            # inputs standing for "none" (no external force, zero velocity); never written.
            # Writable like any input array: the kernels are compiled for writable arrays,
            # and a read-only one would take the slow converting path on every call.
            no_fext=np.zeros((0, 6)), zeros_v=np.zeros(nr),
            matrix=np.zeros((nv, nv)),               # M, factorized in place (minv_cholesky)
            force_sets=np.zeros((nb, nv, 6)),        # F_i / P_i force and motion sets (minv)
            dof=np.zeros((nv, D_COLS)),              # per-dof columns (derivatives)
            body_matrix=np.zeros((nb + 1, 36)),      # per-body 6×6 (derivatives: B^c)
            stacked=np.zeros((3 * nv + 1, nv)),      # ∂τ/∂q, ∂τ/∂q̇, M and q̈ (ABA derivatives)
            regressor_block=np.zeros((6, 10)),       # one body's 6×10 regressor (regressors)
            all_body=np.zeros((nb + 1, X_COLS)),     # compute_all: forces at a and at q̈
            all_dof=np.zeros((nv, 6)),               # compute_all: dA columns at q̈
            all_stacked=np.zeros((nv, nv)),          # compute_all: ∂ID/∂q at q̈
            lock=threading.Lock(), _batch=[None])
        # mimic joints (algorithms/coupled.py): the full state, matrices and regressor, and
        # the reduced matrices and vectors; empty without mimic joints
        coupled = model.coupling is not None
        nf, nq, nr = (nv, model.nq_full, nr) if coupled else (0, 0, 0)
        self._set(full_q=np.zeros(nq), full_v=np.zeros((3, nf)),
                  full_matrices=np.zeros((3, nf, nf)), reduced_matrices=np.zeros((3, nr, nr)),
                  reduced_v=np.zeros((3, nr)), full_regressor=np.zeros((nf, 10 * nb * coupled)))

    def fits(self, model):
        """Whether this workspace has the sizes of ``model``."""
        return self.sizes == _sizes(model)

    def batch_workspace(self, nchunks):
        """
        Return per-chunk copies of this workspace's arrays for ``nchunks`` chunks (or more).

        Each array gets a leading axis of slots, ``BATCH_SLOT_STRIDE`` per chunk (chunk c
        works in ``body[BATCH_SLOT_STRIDE * c]``, ...; the slots between are never used).
        Made on first use and grown when more chunks are asked for; call it under ``lock``.
        """
        batch = self._batch[0]
        if batch is None or batch.nchunks < nchunks:
            batch = _BatchWorkspace(self, nchunks)
            self._batch[0] = batch
        return batch


# Chunk c of a batch call works in slot BATCH_SLOT_STRIDE * c of each per-chunk array: the
# unused slot between two chunks keeps each thread's rows out of the cache lines that the
# other thread writes (numpy aligns arrays to 16 bytes, not to the 64 of a line, so the
# last row of one chunk and the first of the next could share one; the talos
# rnea_derivatives batch ran at 143,000 states/s on 2 threads with adjacent slots and
# 188,000 with spaced ones, in one run at load 2.4).
BATCH_SLOT_STRIDE = 2


class _BatchWorkspace:
    def __init__(self, data, nchunks):
        def stack(arr):
            slots = BATCH_SLOT_STRIDE * nchunks
            return np.ascontiguousarray(np.repeat(arr[np.newaxis], slots, axis=0))
        self.nchunks = nchunks
        self.body = stack(data.body)                  # world row included (identity placement)
        self.dof = stack(data.dof)
        self.body_matrix = stack(data.body_matrix)
        self.force_sets = stack(data.force_sets)
        self.stacked = stack(data.stacked)
        self.regressor_block = stack(data.regressor_block)
        for name in _COUPLED_SCRATCH:
            setattr(self, name, stack(getattr(data, name)))


_COUPLED_SCRATCH = ("full_q", "full_v", "full_matrices", "reduced_matrices", "reduced_v",
                    "full_regressor")


def _sizes(model):
    """Return what a workspace's arrays are sized by."""
    return (model.nbodies, model.nq, model.nv, model.nq_full, model.nv_full,
            model.coupling is not None)
