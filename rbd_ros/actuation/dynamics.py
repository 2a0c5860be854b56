"""
The outputs with the joint parameters: friction, rotor inertia and offset on the rigid body.

The per-joint parameters of :class:`~rbd_ros.actuation.joint_parameters.JointParameters`
(armature Ia, viscous Fv and Coulomb Fc friction, offset τ0, the smooth sign's ε) make the
joint-space dynamics

    τ = M(q) q̈ + b(q, v) + D q̈ + f(v),   D = diag(Ia),   f(v) = Fv v + Fc tanh(v/ε) + τ0

(nothing on a floating base's six dofs). Every output of ``rbd_ros.outputs`` follows exactly
from the rigid-body results, the forward ones taken at the effort τ' = τ - f(v):

* torques: τ = RNEA(q, v, a) + D a + f(v);
* ∂τ/∂q = ∂RNEA/∂q, ∂τ/∂v = ∂RNEA/∂v + diag f'(v), f'(v) = Fv + Fc (1 - tanh²(v/ε)) / ε;
* accelerations: q̈ = (M + D)⁻¹ (τ' - b) = K⁻¹ ABA(q, v, τ'), K = I + M⁻¹ D. The eigenvalues
  of K are those of I + D½ M⁻¹ D½ (similar matrices), all >= 1: the solve is well
  conditioned whatever the armature;
* M⁻¹ becomes (M + D)⁻¹ = K⁻¹ M⁻¹;
* ∂q̈/∂q = K⁻¹ ∂ABA/∂q and ∂q̈/∂v = K⁻¹ (∂ABA/∂v - M⁻¹ diag f'(v)), the ABA derivatives taken
  at τ'' = τ' - D q̈, the effort at which the rigid body alone has the acceleration q̈
  (differentiating M q̈ + D q̈ + b + f = τ: (M + D) ∂q̈ = -∂ID(q, v, q̈) - ∂f). Without
  armature τ'' = τ' and the results of the same call serve; with armature it is a second
  call.

The dynamics node (``~/<output>`` and its services) and ``rbd_replay --model-params`` /
``--urdf-dynamics`` (offline and over a fleet) compute through :func:`compute` and
:func:`compute_batch`: the same numbers for the same messages and parameters.
"""
import numpy as np

from ..algorithms.calls import aba, aba_derivatives
from ..batch import aba_batch, aba_derivatives_batch, minv_batch
from . import joint_parameters
from .. import outputs as table

FORWARD = ("qdd", "dqdd_dq", "dqdd_dv")       # the results taken at the measured effort


class Actuation:
    """
    Joint parameters applied to the dofs of a model (zero on a floating base's six).

    Built by :func:`load`.

    Parameters
    ----------
    params : JointParameters
        The per-joint values (:class:`~rbd_ros.actuation.joint_parameters.JointParameters`),
        in the model's joint order.
    nbase : int
        The floating base's dofs, 6, or 0 on a fixed base.

    Attributes
    ----------
    armature, viscous, coulomb, offset : ndarray, shape (nv,)
        Ia (kg·m²), Fv (N·m·s/rad), Fc (N·m) and τ0 (N·m) per dof, 0 on the base's.
    epsilon : float
        ε of the smooth sign tanh(v/ε), rad/s.

    """

    def __init__(self, params, nbase):
        self.params, self.nbase = params, nbase
        zeros = np.zeros(len(params.joints))

        def dofs(kind):
            return np.r_[np.zeros(nbase), np.asarray(params.values.get(kind, zeros), float)]
        self.armature, self.viscous = dofs("armature"), dofs("viscous")
        self.coulomb, self.offset = dofs("coulomb"), dofs("offset")
        self.epsilon = float(params.epsilon)
        self.has_armature = bool(self.armature.any())
        self.has_slope = bool(self.viscous.any() or self.coulomb.any())

    def friction(self, v):
        """
        Return the friction and offset torques f(v) = Fv v + Fc tanh(v/ε) + τ0.

        Parameters
        ----------
        v : array_like, shape (..., nv)
            Velocities (rad/s or m/s).

        Returns
        -------
        ndarray, shape (..., nv)
            f(v), N·m (N).

        """
        return self.viscous * v + self.coulomb * np.tanh(v / self.epsilon) + self.offset

    def rigid_effort(self, tau, v):
        """
        Return τ − f(v): the effort left to the rigid body, at which the forward results are taken.

        Parameters
        ----------
        tau : array_like, shape (..., nv)
            Measured efforts (N·m or N).
        v : array_like, shape (..., nv)
            Velocities.

        Returns
        -------
        ndarray, shape (..., nv)
            τ − f(v).

        """
        with np.errstate(over="ignore", invalid="ignore"):    # huge inputs: checked later
            return tau - self.friction(v)

    def slope(self, v):
        """
        Return f'(v) = ∂f/∂v, the diagonal of the friction's derivative.

        Parameters
        ----------
        v : array_like, shape (..., nv)
            Velocities.

        Returns
        -------
        ndarray, shape (..., nv)
            Fv + Fc (1 − tanh²(v/ε)) / ε.

        """
        t = np.tanh(v / self.epsilon)
        return self.viscous + self.coulomb * (1.0 - t * t) / self.epsilon

    def extra_results(self, results):
        """
        Return the results the core call must give as well, for these joint parameters.

        Parameters
        ----------
        results : iterable of str
            Keys of ``rbd_ros.outputs.RESULTS`` wanted.

        Returns
        -------
        tuple of str
            ``("Minv",)`` when armature or friction needs M⁻¹ for them, else empty.

        """
        needs = (self.has_armature and bool(set(results) & {"qdd", "Minv", *FORWARD})) or \
            (self.has_slope and "dqdd_dv" in results)
        return ("Minv",) if needs else ()

    def finish(self, results, model, q, v, a, tau_in, batch=False, fext=None):
        """
        Turn the rigid-body ``results`` into those with the joint parameters, in place.

        ``results``: {RESULTS key: array} of one state or of N (``batch``; arrays (N, ·)),
        the forward ones computed at ``tau_in`` = τ - f(v) (and under ``fext``, one state's
        measured wrenches); "Minv" there whenever :meth:`extra_results` asked for it.

        Parameters
        ----------
        results : dict
            {``RESULTS`` key: array}, changed in place.
        model : Model
            The robot.
        q, v, a : ndarray
            The state(s): (nq,), (nv,), (nv,), or (N, ·) with ``batch``.
        tau_in : ndarray
            τ − f(v) (:meth:`rigid_effort`).
        batch : bool, optional
            Whether the arrays hold N states.
        fext : ndarray, shape (nbodies, 6), optional
            One state's measured wrenches.

        Returns
        -------
        None

        """
        nb = self.nbase
        with np.errstate(over="ignore", invalid="ignore"):
            if "tau" in results or "joint_tau" in results:
                full = results.get("tau")
                if full is None:
                    full = np.concatenate([np.zeros(np.shape(v)[:-1] + (nb,)),
                                           results["joint_tau"]], axis=-1)
                full = full + self.armature * a + self.friction(v)
                results["tau"], results["joint_tau"] = full, full[..., nb:]
            if "dtau_dv" in results and self.has_slope:
                results["dtau_dv"] = _add_diagonal(results["dtau_dv"], self.slope(v))
            if set(results) & {"qdd", "Minv", *FORWARD}:
                self._inertial(results, model, q, v, tau_in, batch, fext)

    def _inertial(self, results, model, q, v, tau_in, batch, fext):
        """Set the results that see M + D (armature) and f'(v) (the ABA derivatives)."""
        minv = results.get("Minv")
        solve = _identity
        if self.has_armature:
            K = _add_diagonal(minv * self.armature[..., None, :], np.ones(model.nv))
            solve = _solver(K)
            if "qdd" in results:
                results["qdd"] = solve(results["qdd"][..., None])[..., 0]
            results["Minv"] = solve(minv)
        if "dqdd_dq" in results or "dqdd_dv" in results:
            if self.has_armature:
                qdd = results.get("qdd")
                if qdd is None:
                    qdd = solve(_aba(model, q, v, tau_in, batch, fext)[..., None])[..., 0]
                tau_rigid = tau_in - self.armature * qdd
                again = (aba_derivatives_batch(model, q, v, tau_rigid) if batch else
                         aba_derivatives(model, q, v, tau_rigid, fext))
                dq, dv = again[0], again[1]
            else:
                dq, dv = results["dqdd_dq"], results["dqdd_dv"]
            if self.has_slope:
                dv = dv - minv * self.slope(v)[..., None, :]
            results["dqdd_dq"], results["dqdd_dv"] = solve(dq), solve(dv)


def _aba(model, q, v, tau, batch, fext=None):
    return aba_batch(model, q, v, tau) if batch else aba(model, q, v, tau, fext)


def _identity(x):
    return x


def _solver(K):
    """Return X -> K⁻¹ X for K (..., n, n) (one LU per state, used for every right side)."""
    from scipy.linalg import lu_factor, lu_solve
    if K.ndim == 2:
        lu = lu_factor(K, check_finite=False)
        return lambda X: lu_solve(lu, X, check_finite=False)
    return lambda X: np.linalg.solve(K, X)


def _add_diagonal(m, d):
    """Return ``m`` (..., n, n) plus diag(``d``) ((..., n)), a new array."""
    out = np.array(m, dtype=np.float64, copy=True)
    idx = np.arange(out.shape[-1])
    out[..., idx, idx] += d
    return out


def load(model, xml=None, file_text=None, urdf_dynamics=False):
    """
    Return the joint parameters of a model, from a parameter file or from its URDF.

    Joints are matched by name: a file may leave joints out (zero for them) but not name a
    joint the model lacks.

    Parameters
    ----------
    model : Model
        The robot.
    xml : str, optional
        The URDF's text, read with ``urdf_dynamics``.
    file_text : str, optional
        A joint parameter file's text (JSON, as ``JointParameters.to_json`` writes it, e.g.
        ``rbd_replay --identify``'s).
    urdf_dynamics : bool, optional
        Read the URDF's ``<dynamics damping friction>`` (viscous and Coulomb friction)
        instead of a file.

    Returns
    -------
    Actuation or None
        None when neither is given or every value is zero.

    Raises
    ------
    ValueError
        Saying what does not fit: both sources, an unparsable URDF or file, an unknown
        joint, a negative friction or armature.

    """
    if file_text and urdf_dynamics:
        raise ValueError("a joint parameter file and the URDF's <dynamics>: choose one")
    names = tuple(model.joint_names)
    if file_text:
        params = joint_parameters.JointParameters.from_json(file_text, names)
    elif urdf_dynamics:
        try:
            params = joint_parameters.JointParameters.from_urdf(xml, names)
        except SyntaxError as exc:                 # ElementTree's ParseError
            raise ValueError(f"the URDF does not parse: {exc}") from None
    else:
        return None
    if not any(np.any(x) for x in params.values.values()):
        return None
    return Actuation(params, model.nv_base)


def computation(act, enabled, effort_known):
    """
    Return the computation of a tick: ``outputs.computation``, its call covering ``act`` too.

    Parameters
    ----------
    act : Actuation or None
        The joint parameters (None: the rigid body's).
    enabled : iterable of str
        The enabled output names.
    effort_known : bool
        Whether the measured efforts are known (the outputs that need them are left out
        otherwise).

    Returns
    -------
    rbd_ros.outputs.Computation
        The core call and the outputs it fills.

    """
    work = table.computation(enabled, effort_known)
    if act is None:
        return work
    needed = {r for o in work.outputs for r in o.results}
    extra = set(act.extra_results(needed))
    call = next(name for name, results in table.CALLS if needed | extra <= set(results))
    return table.Computation(call, work.outputs)


def compute(act, call, model, q, v, a, tau, fext=None, buffer=None):
    """
    Return the results of one state's core call, with the joint parameters.

    Parameters
    ----------
    act : Actuation or None
        The joint parameters (None: the rigid body's, ``outputs.compute``).
    call : str
        The core call (``Computation.call``).
    model : Model
        The robot.
    q : array_like, shape (nq,)
        Configuration.
    v : array_like, shape (nv,)
        Velocity.
    a : array_like, shape (nv,)
        Acceleration.
    tau : array_like, shape (nv,)
        Measured effort (N·m or N).
    fext : array_like, shape (nbodies, 6), optional
        The measured wrenches, acting on every result.
    buffer : rbd_ros.outputs.ResultBuffer, optional
        Where the core call writes its results (``outputs.result_buffer``): those the joint
        parameters do not change are its views, overwritten by the next call with it.

    Returns
    -------
    dict
        {``RESULTS`` key: array}.

    Raises
    ------
    ValueError
        For any result that is not finite, as ``outputs.compute`` does.

    """
    if act is None:
        return table.compute(call, model, q, v, a, tau, fext, buffer)
    tau_in = act.rigid_effort(tau, v)
    results = table.compute(call, model, q, v, a, tau_in, fext, buffer)
    act.finish(results, model, q, v, a, tau_in, fext=fext)
    bad = [k for k, x in results.items() if not np.isfinite(x).all()]
    if bad:
        raise ValueError(f"the joint parameters' {bad[0]} is not finite (NaN or inf): the "
                         "inputs are too large")
    return results


def compute_batch(act, model, enabled, q, v, a, tau, effort_known):
    """
    Return the outputs of N states (the replay), with the joint parameters.

    A result that is not finite is left as it is (the replay refuses those states).

    Parameters
    ----------
    act : Actuation or None
        The joint parameters (None: the rigid body's, ``outputs.compute_batch``).
    model : Model
        The robot.
    enabled : iterable of str
        The enabled output names.
    q : ndarray, shape (N, nq)
        Configurations.
    v, a : ndarray, shape (N, nv)
        Velocities and accelerations.
    tau : ndarray, shape (N, nv)
        Measured efforts.
    effort_known : ndarray of bool, shape (N,)
        Where the efforts are known.

    Returns
    -------
    dict
        {output name: (rows, results)} as ``outputs.compute_batch``'s.

    """
    if act is None:
        return table.compute_batch(model, enabled, q, v, a, tau, effort_known)
    tau_in = act.rigid_effort(tau, v)
    out = table.compute_batch(model, enabled, q, v, a, tau_in, effort_known)
    for forward in (False, True):
        names = [k for k in out if table.BY_NAME[k].needs_effort == forward]
        if not names:
            continue
        rows = out[names[0]][0]
        results = {r: x for k in names
                   for r, x in zip(table.BY_NAME[k].results, out[k][1])}
        if len(rows):
            finish_batch(act, model, results, q[rows], v[rows], a[rows], tau_in[rows])
        for k in names:
            out[k] = (rows, tuple(results[r] for r in table.BY_NAME[k].results))
    return out


def finish_batch(act, model, results, q, v, a, tau_in):
    """
    Apply ``Actuation.finish`` to N states, M⁻¹ computed first when it needs it.

    Parameters
    ----------
    act : Actuation
        The joint parameters.
    model : Model
        The robot.
    results : dict
        {``RESULTS`` key: (N, ·) array}, changed in place.
    q : ndarray, shape (N, nq)
        Configurations.
    v, a : ndarray, shape (N, nv)
        Velocities and accelerations.
    tau_in : ndarray, shape (N, nv)
        τ − f(v).

    Returns
    -------
    dict
        ``results``.

    """
    if act.extra_results(results) and "Minv" not in results:
        results["Minv"] = minv_batch(model, q)
    act.finish(results, model, q, v, a, tau_in, batch=True)
    return results
