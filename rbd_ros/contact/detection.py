"""
Contact awareness: external torques, collision detection and isolation, the contact wrench.

The external torques come from the generalized-momentum observer (De Luca & Mattone 2003;
Haddadin, De Luca, Albu-Schäffer, "Robot Collisions: A Survey on Detection, Isolation, and
Identification", T-RO 2017): from q, v and the measured efforts τ_m only,

    r = K [p − p(0) − ∫ (τ_m + Cᵀ v − g + τ_w − f(v) + r) ds],   p = (M + D) v,

so that ṙ = K (τ_ext − r) (``algorithms/momentum_observer.py``: the kernel, the derivation
and the discretization). :class:`MomentumObserver` (``observer``) steps it sample by sample
(the node), :func:`observe` over whole arrays (the replay): both run that one kernel, the
same numbers.
On a floating base (its pose and twist in q, v) r covers every dof: the base rows are the
external wrench on the base coordinates.

Collision detection and isolation (:func:`isolate`, :class:`CollisionState`) are in
``isolation``; which samples are stepped, and the runs over N of them, in ``samples``;
:func:`contact_wrench`, the wrench at a link's frame that explains r, F̂ = (J_linkᵀ)⁺ r, in
``wrench`` (their public names given here too). :class:`MomentumObserver` given a ``frame``
computes the wrench in the same compiled call as r (the node's tick: one call).
"""
import numpy as np

from .isolation import (BLIND_AFTER, EFFORTS_UNKNOWN, MIN_THRESHOLD, OVERFLOWED,  # noqa: F401
                        REFUSED, STAMP_SKIPPED, CollisionState, Isolation, body_depths,
                        collision_thresholds, dof_bodies, isolate, per_dof)
from .samples import (OVERFLOW, R_LIMIT, STAMP_NOT_AFTER, SampleSkipped,  # noqa: F401
                      bounded, overflow_text)
from .observer import MomentumObserver
from .wrench import (contact_wrench, frame_problem, link_jacobian_transpose,  # noqa: F401
                     wrench_refusal)


def observe(model, t, q, v, tau, gain, fext=None, joint_parameters=None, max_gap=np.inf):
    """
    Run the momentum observer over N samples from rest; return r, restarted and status.

    The same numbers as :class:`MomentumObserver` stepped sample by sample (the replay
    uses this, the node the class).

    Parameters
    ----------
    model : Model
        The robot.
    t : array_like, shape (N,)
        Times, s, increasing.
    q : array_like, shape (N, nq)
        Configurations.
    v : array_like, shape (N, nv)
        Velocities.
    tau : array_like, shape (N, nv)
        Measured joint efforts (N·m or N).
    gain : float or array_like, shape (nv,)
        K, 1/s, > 0.
    fext : array_like, shape (N, nbodies, 6), optional
        Measured external wrenches; None: none.
    joint_parameters : Actuation or JointParameters, optional
        The robot's armature, friction and offsets; None: none.
    max_gap : float, optional
        Seconds; a gap larger than it restarts the observer.

    Returns
    -------
    r : ndarray, shape (N, nv)
        External torque estimates, N·m (the last value where a sample is refused).
    restarted : ndarray of bool, shape (N,)
        Where a sample (re)started the observer.
    status : ndarray of int, shape (N,)
        Nonzero for a sample not stepped (``rbd_ros._checks.input_error`` explains a
        positive one).

    Raises
    ------
    ValueError
        As :class:`MomentumObserver` and :meth:`MomentumObserver.run`.

    """
    return MomentumObserver(model, gain, joint_parameters, max_gap).run(t, q, v, tau, fext)
