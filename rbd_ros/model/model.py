"""
Model: a robot's tree and inertias as immutable flat arrays, built once (from a URDF).

Its table ``packed`` is laid out as :mod:`rbd_ros.model.layout` says; its workspace is a
:class:`~rbd_ros.model.data.Data`.
"""
import types

import numpy as np

from . import inertia as _inertia
from .data import Data, _Frozen
from .joints import KINDS, NQ, NV, ROOT_ONLY
from .joints.axis_joint import random_in_limits
from .layout import (P_AXIS, P_COLS, P_GRAVITY, P_IQ, P_IV, P_PARENT, P_PLACEMENT, P_THETA,
                     P_TYPE, P_VEND)


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
    own ``Data(model)``; ``frame_lookups``, the frame calls' cache of what a link and a reference
    frame mean to their kernels, filled on first use (at most three entries per link).

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
        nq_body, nv_body = NQ[joint_type], NV[joint_type]
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
        floating_base = bool(nb and ROOT_ONLY[joint_type[0]])
        nq_base, nv_base = (int(nq_body[0]), int(nv_body[0])) if floating_base else (0, 0)
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
        self._set(data=Data(self), _specialized=SpecializedKernels(), frame_lookups={})

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
        """Return the zero configuration (the root kind's neutral, e.g. identity quaternion)."""
        q = np.zeros(self.nq)
        if self.floating_base:
            q[:self.nq_base] = KINDS[self.joint_type[0]].neutral()
        return q

    def random_configuration(self, rng=None):
        """Return a configuration within the joint limits (±π where a joint is unlimited)."""
        rng = np.random.default_rng(rng)
        # the joints (all of 1-dof kinds below the root) first, then the root's own draw
        joints = random_in_limits(rng, self.lower, self.upper, np.pi)
        if not self.floating_base:
            return joints
        unbounded = np.full(self.nq_base, np.inf)
        return np.concatenate([KINDS[self.joint_type[0]].random(rng, -unbounded, unbounded),
                               joints])

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
_REMADE = ("placement", "axis", "theta", "data", "_specialized", "frame_lookups")


def _assemble(attributes, packed):
    """Return a Model of ``attributes`` with the (read-only) table ``packed``, its views set."""
    model = object.__new__(Model)
    model._set(**attributes)
    model._set(packed=packed, placement=packed[:-1, P_PLACEMENT:P_PLACEMENT + 12],
               axis=packed[:-1, P_AXIS:P_AXIS + 3], theta=packed[:-1, P_THETA:P_THETA + 10])
    model._set(data=Data(model), _specialized=SpecializedKernels(), frame_lookups={})
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
    if np.any((joint_type < 0) | (joint_type >= len(KINDS))):
        raise ValueError(f"joint types must be codes of rbd_ros.model.joints.KINDS "
                         f"(0 .. {len(KINDS) - 1})")
    root_only = ROOT_ONLY[joint_type]
    if np.any(root_only[1:]) or (nb and root_only[0] and parent[0] != -1):
        names = sorted({KINDS[k].name for k in joint_type[root_only]})
        raise ValueError(f"a {' or '.join(names)} joint can only be the root")


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


def link_table(model, links):
    """
    Return (bodies, placements) of ``links`` for the kernels taking link frames.

    bodies: each link's body index; placements: its 3x3 rotation then 3-vector in that body
    (the wrench and frame Jacobian kernels read both). ValueError for a link the model does not
    have.
    """
    bodies = np.empty(len(links), np.int64)
    placements = np.zeros((len(links), 12))
    for k, link in enumerate(links):
        if link not in model.link_frames:
            raise ValueError(f"no link {link!r} in the model")
        body, R, p = model.link_frames[link]
        bodies[k] = body
        placements[k, :9] = np.asarray(R, np.float64).reshape(9)
        placements[k, 9:] = p
    return bodies, placements
