"""
Model: a robot's tree and inertias as immutable flat arrays, built once (from a URDF).

Its table ``packed`` is laid out as :mod:`rbd_ros.model.layout` says; its workspace is a
:class:`~rbd_ros.model.data.Data`.
"""
import numpy as np

from . import inertia as _inertia
from .data import Data, Frozen
from .joints import KINDS, NQ, NV, ROOT_ONLY
from .joints.axis_joint import random_in_limits
from .model_tables import (check_tree, excerpt, gravity_vector, link_frames_mapping,
                           read_only, tree_indices)
from .model_tables import link_table  # noqa: F401  (the node's wrenches import it from here)
from .layout import (P_AXIS, P_COLS, P_GRAVITY, P_IQ, P_IV, P_PARENT, P_PLACEMENT, P_THETA,
                     P_TYPE, P_VEND)


# the coupling table of a model without mimic joints: empty, read-only
NO_COUPLING = read_only(np.zeros((0, 3)))


class Model(Frozen):
    """
    A robot's kinematic tree and inertias as flat, read-only arrays.

    Build it with :func:`rbd_ros.load_model` (the constructor is the loader's). A Model is
    immutable: its attributes cannot be rebound and its arrays are read-only; derive changed
    models with :meth:`with_gravity`, :meth:`with_inertial_parameters` and
    :meth:`with_payload` (they share the constant arrays).

    Parameters
    ----------
    name : str
        The robot's name (the URDF's ``<robot name>``).
    parent : array_like of int, shape (nbodies,)
        Each body's parent body, -1 for a root; bodies in depth-first order.
    joint_type : array_like of int, shape (nbodies,)
        Each body's joint kind, a code of ``rbd_ros.model.joints.KINDS``.
    placement : array_like, shape (nbodies, 12)
        Each joint's frame in its parent body's: the 3×3 rotation row-major, then the
        translation (m).
    axis : array_like, shape (nbodies, 3)
        Each joint's unit axis in its own frame.
    inertia : array_like, shape (nbodies, 10)
        Each body's inertia in the compact layout of :mod:`rbd_ros.inertia`.
    body_names : sequence of str
        One name per body.
    joint_names : sequence of str
        One name per 1-dof joint below the root, in q order.
    lower, upper : array_like, shape (njoints,), optional
        Position limits (rad or m); None: unlimited.
    velocity_limit : array_like, shape (njoints,), optional
        Velocity limits (rad/s or m/s); None: unlimited.
    effort_limit : array_like, shape (njoints,), optional
        Effort limits (N·m or N); None: unlimited.
    gravity : array_like, shape (3,), optional
        Gravity in the world frame, m/s² (default [0, 0, -9.81]).
    coupling : rbd_ros.description.mimic_coupling.Coupling, optional
        The mimic joints' coupling; None without mimic joints.
    link_frames : dict, optional
        Every link of the URDF: link -> (body, R, p) (see Attributes); None: each body's
        own link at the identity.

    Attributes
    ----------
    nq, nv : int
        Sizes of a configuration q and of a velocity v. A floating base adds ``nq_base`` = 7
        entries to q and ``nv_base`` = 6 to v before the joints (a planar base 4 and 3; both
        0 on a fixed base): the joints are ``q[nq_base:]``, ``v[nv_base:]``.
    nbodies : int
        Number of bodies (one per joint, the floating base included).
    joint_names : tuple of str
        The movable joints in q order.
    body_names, parent, joint_type, idx_q, idx_v, placement, axis : tuple or ndarray
        The tree: per body its name, parent, joint kind, first index in q and in v, joint
        placement (nbodies, 12) and axis (nbodies, 3).
    inertia, theta : ndarray, shape (nbodies, 10)
        Body inertias in the compact layout and as θ (:meth:`inertial_parameters`).
    lower, upper, velocity_limit, effort_limit : ndarray, shape (nv - nv_base,)
        Joint limits, one per movable joint (rad, rad/s, N·m; m, m/s, N for prismatic).
    link_frames : mapping
        Every link of the URDF, fixed-joint links included: link -> (body, R, p), the body
        it moves with (-1: welded to the world of a fixed base) and its frame in the body's,
        x_body = R x_link + p.
    data : Data
        The model's own workspace, used when a function is called without ``data=``: it
        serves one call at a time, so threads that compute on one model concurrently each
        pass their own ``Data(model)``.
    frame_lookups : dict
        The frame calls' cache of what a link and a reference frame mean to their kernels,
        ``frame_lookups[reference][link]`` (and ``[LINK_ONLY][link]``, the link alone),
        filled on first use (at most four per link).
    coupling : Coupling or None
        Mimic joints: ``nq``, ``nv``, ``joint_names`` and the limits are those of the
        independent joints (a leader keeps its own limits), while the tree attributes
        (bodies, ``idx_q``, ``idx_v``, ``packed``) describe every joint, followers included:
        ``nq_full``, ``nv_full`` entries (``coupling.joint_names``). Without mimic joints
        ``nq_full == nq`` and ``nv_full == nv``.
    coupling_table : ndarray
        The coupling's table as the kernels read it (``coupling.table``), or an empty (0, 3)
        one without mimic joints; read-only.

    Raises
    ------
    ValueError
        For a tree that is not in depth-first order, an unknown joint code, a root-only
        joint (floating base) below the root, a wrong number of joint names, a coupling of
        another tree, or a gravity that is not 3 finite numbers.

    """

    def __init__(self, name, parent, joint_type, placement, axis, inertia, body_names,
                 joint_names, lower=None, upper=None, velocity_limit=None, effort_limit=None,
                 gravity=(0.0, 0.0, -9.81), coupling=None, link_frames=None):
        parent = np.asarray(parent, np.int64)
        joint_type = np.asarray(joint_type, np.int64)
        nb = len(parent)
        check_tree(parent, joint_type)
        nq_body, nv_body = NQ[joint_type], NV[joint_type]
        idx_q, idx_v, subtree_end, dof_parent = tree_indices(parent, nq_body, nv_body)
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
        packed[nb, P_GRAVITY:P_GRAVITY + 3] = gravity_vector(gravity)
        constants = (packed, inertia, parent, joint_type, idx_q, idx_v, subtree_end, dof_parent)
        packed, inertia, parent, joint_type, idx_q, idx_v, subtree_end, dof_parent = (
            read_only(arr, arr.dtype) for arr in constants)

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
            if (coupling.joint_names != joint_names or coupling.base != (nq_base, nv_base)
                    or (coupling.nq_full, coupling.nv_full) != (nq, nv)):
                raise ValueError("the coupling is of another tree (joint names or base differ)")
            dofs = np.asarray(coupling.independent_index, np.intp)

        def limits(values, default):
            values = np.full(njoints, default) if values is None else np.asarray(values)
            return read_only(values[dofs])
        self._set(name=name, nbodies=nb, nq=nq - njoints + len(dofs),
                  nv=nv - njoints + len(dofs), nq_full=nq, nv_full=nv, coupling=coupling,
                  coupling_table=NO_COUPLING if coupling is None else coupling.table,
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
                  link_frames=link_frames_mapping(body_names, link_frames))
        self._set(data=Data(self), _specialized=SpecializedKernels(), frame_lookups={})

    @property
    def gravity(self):
        """Gravity in the world frame (m/s², default [0, 0, -9.81]); a copy."""
        return np.array(self.packed[-1, P_GRAVITY:P_GRAVITY + 3])

    def with_gravity(self, gravity):
        """
        Return this model under another gravity.

        The new model shares every constant array with this one except the packed table,
        whose last row holds the gravity, and has its own workspace.

        Parameters
        ----------
        gravity : array_like, shape (3,)
            Gravity in the world frame, m/s² (e.g. [0, 0, -9.81]).

        Returns
        -------
        Model
            The same robot under ``gravity``.

        Raises
        ------
        ValueError
            If ``gravity`` is not 3 finite numbers.

        """
        packed = np.array(self.packed)
        packed[-1, P_GRAVITY:P_GRAVITY + 3] = gravity_vector(gravity)
        return self._with_packed(packed)

    def _with_packed(self, packed, **changed):
        """Return this model with another packed table (and ``changed`` attributes)."""
        attributes = dict(vars(self))
        attributes.update(changed)
        return _assemble(attributes, read_only(packed))

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
        """
        Return the neutral configuration: every joint at 0, a floating base at the origin.

        Returns
        -------
        ndarray, shape (nq,)
            Zeros, except a floating base's quaternion, the identity (x, y, z, w = 0, 0, 0, 1),
            and a planar base's cos θ (1).

        """
        q = np.zeros(self.nq)
        if self.floating_base:
            q[:self.nq_base] = KINDS[self.joint_type[0]].neutral()
        return q

    def random_configuration(self, rng=None):
        """
        Return a random configuration within the joint limits.

        Parameters
        ----------
        rng : int, numpy.random.Generator or None, optional
            The seed of the random draw (an integer: the same configuration every time), or
            a Generator to draw from; None: a fresh, unpredictable one.

        Returns
        -------
        ndarray, shape (nq,)
            Each joint uniform between its ``lower`` and ``upper`` limit (rad or m; ±π where a
            joint is unlimited); a floating base uniform in the unit box (m) and a uniform
            unit quaternion; a planar base's x, y in the unit box and θ uniform.

        """
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
        Return the inertial parameters θ of every body, about its joint frame origin.

        Returns
        -------
        ndarray, shape (nbodies, 10)
            Per body [m, m·cx, m·cy, m·cz, Ixx, Ixy, Iyy, Ixz, Iyz, Izz] (kg, kg·m, kg·m²),
            the inertia about the joint frame's origin, in that frame: the parameters in which
            the dynamics are linear (:func:`rbd_ros.joint_torque_regressor`). A copy.

        """
        return np.array(self.theta)

    def with_inertial_parameters(self, theta):
        """
        Return this model with other body inertias.

        Kinematics, name, joint limits, mimic coupling and gravity are kept (and the
        constant arrays shared).

        Parameters
        ----------
        theta : array_like, shape (nbodies, 10)
            The inertial parameters of every body, in the order of
            :meth:`inertial_parameters` (e.g. an identification's result).

        Returns
        -------
        Model
            The same robot with these inertias.

        Raises
        ------
        ValueError
            If ``theta`` has another shape or contains NaN or inf.

        """
        theta = np.array(theta, dtype=np.float64)
        if theta.shape != (self.nbodies, 10):
            raise ValueError(f"theta must have shape ({self.nbodies}, 10), got {theta.shape}")
        if not np.all(np.isfinite(theta)):
            raise ValueError("theta contains NaN or inf")
        inertia = _inertia.from_theta(theta)
        packed = np.array(self.packed)
        packed[:-1, P_THETA:P_THETA + 10] = _inertia.to_theta(inertia)
        return self._with_packed(packed, inertia=read_only(inertia))

    def with_payload(self, link, inertia):
        """
        Return this model with a rigid payload attached to a link.

        The payload's inertia is moved into the body's frame and added to the body's own
        (the compact-inertia merge: the sum of two rigid bodies' spatial inertias, done on
        their 10 compact numbers, ``rbd_ros.model.inertia.merge``).

        Parameters
        ----------
        link : str
            Any link of ``link_frames``: a body, or a link welded to one by fixed joints (the
            payload is moved into the body's frame through the fixed placement; on a link
            welded to the world of a fixed base it changes nothing).
        inertia : array_like, shape (10,)
            The payload's 10 compact numbers in the link's frame, as
            ``rbd_ros.model.inertia.compact(mass, com, centroidal_inertia)`` makes them (kg,
            m, kg·m² about the payload's centre of mass).

        Returns
        -------
        Model
            The same robot carrying the payload.

        Raises
        ------
        ValueError
            For a link the model does not have, or a physically impossible payload (not 10
            numbers, negative mass, an inertia that is not positive semi-definite).

        """
        if link not in self.link_frames:
            raise ValueError(f"no link {excerpt(link)} in the model (a payload attaches to "
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
        return self._with_packed(packed, inertia=read_only(inertia))

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
    state = {k: read_only(v, v.dtype) if isinstance(v, np.ndarray) else v
             for k, v in state.items()}
    state["link_frames"] = link_frames_mapping(state["body_names"], state["link_frames"])
    return _assemble(state, state.pop("packed"))
