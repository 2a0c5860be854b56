"""
The observer's outputs tick by tick: the one rule the node and the replay follow.

A tick (a joint_states message whose dynamics were published) gives the observer one sample
or none. The node steps it at each tick (``rbd_ros.node.contact``); the replay steps it over a
batch of ticks with the same kernel (``rbd_ros.replay.observing``). Either then hands each
tick's outcome, in order, to one :class:`ObserverOutcomes`: r and whether it is an estimate, or
the code of why there is none. It keeps the collision state (``isolation.CollisionState``:
when ~/collision is published, and what it says) and counts the ticks by outcome (the
replay's report gives those counts; the node's /diagnostics its texts from them).
:func:`settings_problem` and :func:`new_observer` are the checks of the observer's settings
and its construction, shared the same way; :class:`ObserverSettings` holds those settings.
"""
import math
from dataclasses import dataclass

from . import detection
from .isolation import (EFFORTS_UNKNOWN, OVERFLOWED, REFUSED, STAMP_SKIPPED, CollisionState,
                        collision_thresholds, per_dof)

# a tick's outcome: the observer stepped (r given), or why it gave no r: the efforts of the
# tick unknown (the observer was not given it), the observer's STAMP_NOT_AFTER and OVERFLOW
# codes, and the sample refused: REFUSED_CODE, or any other code (a status > 0 of the core's
# checks), or the step failed: FAILED_CODE (the node's, for an exception). STEPPED is the
# observer's own status of a stepped sample (``run``'s), which the replay hands on as it is
STEPPED = 0
EFFORTS_UNKNOWN_CODE = -100
REFUSED_CODE = -101
FAILED_CODE = -102        # an exception no check foresaw (a defect), counted as refused
FAILED = "the observer's step failed (an error in rbd_ros: see the node's log)"
# the counts of ticks without r, by their outcome (the report's unobserved_ticks)
UNOBSERVED = {EFFORTS_UNKNOWN_CODE: "efforts_unknown",
              detection.STAMP_NOT_AFTER: "stamp_not_after",
              detection.OVERFLOW: "overflow_resets"}
REFUSED_KEY = "refused"
# ... and what ~/collision says of the last one (CollisionState.reason)
REASONS = {EFFORTS_UNKNOWN_CODE: EFFORTS_UNKNOWN, detection.STAMP_NOT_AFTER: STAMP_SKIPPED,
           detection.OVERFLOW: OVERFLOWED, FAILED_CODE: FAILED}
# the settings, named as the node's parameters (the replay's options: --observer-gain, ...)
SETTINGS = ("observer_gain", "collision_thresholds", "contact_frame")


@dataclass(frozen=True)
class ObserverSettings:
    """
    The observer's settings, named as the node's parameters (the replay's options).

    Parameters
    ----------
    observer_gain : float or array_like, shape ``(nv,)``
        K, 1/s: one number or one per dof, finite and > 0.
    collision_thresholds : float or array_like, shape ``(nv,)``
        The ``|r|`` over which a dof is in collision, N·m (N): one number or one per dof.
    contact_frame : str
        The link whose contact wrench the observer gives; "": none.
    max_joint_age : float
        The observer's max_gap (s; 0: none): the longest stamp gap it steps over without
        restarting.

    """

    observer_gain: object
    collision_thresholds: object
    contact_frame: str
    max_joint_age: float = 0.0


def settings_problem(model, name, value):
    """
    Say why ``value`` of the setting ``name`` does not fit ``model``, or return None.

    Parameters
    ----------
    model : Model
        The robot.
    name : str
        One of ``SETTINGS``.
    value : object
        Its value.

    Returns
    -------
    str or None
        The reason, starting with ``name``; None when the value fits.

    """
    if name == "contact_frame":
        return detection.frame_problem(model, value)
    try:
        if name == "collision_thresholds":
            collision_thresholds(model, value)
        else:
            per_dof(model, value, name)
    except ValueError as exc:
        return str(exc)
    return None


def max_gap(max_joint_age):
    """Return the observer's max_gap of a ``max_joint_age`` (0: none, an infinite gap)."""
    return max_joint_age if max_joint_age > 0 else math.inf


def new_observer(model, joints, settings, wrench=True):
    """
    Return the momentum observer of ``settings``, checked.

    Parameters
    ----------
    model : Model
        The robot.
    joints : JointParameters or None
        Its joints' friction and armature (``MomentumObserver``'s ``joint_parameters``).
    settings : ObserverSettings
        The settings, each checked by :func:`settings_problem`.
    wrench : bool
        Whether it gives the contact wrench at ``settings.contact_frame`` (when one).

    Returns
    -------
    MomentumObserver
        The observer, at its start.

    Raises
    ------
    ValueError
        For the first setting that does not fit ``model``, naming it.

    """
    for name in SETTINGS:
        why = settings_problem(model, name, getattr(settings, name))
        if why:
            raise ValueError(why)
    frame = settings.contact_frame if wrench and settings.contact_frame else None
    return detection.MomentumObserver(model, settings.observer_gain, joints,
                                      max_gap(settings.max_joint_age), frame=frame)


class ObserverOutcomes:
    """
    The collision state and the counts over one stream of ticks, fed each tick's outcome.

    ``counts``: ``samples`` (the ticks fed, with or without r), ``tracked`` (those whose r is
    an estimate), ``blind`` (those at which it could not observe), and those without r by
    outcome (``UNOBSERVED``'s names and ``refused``).
    """

    def __init__(self, model, thresholds):
        self.collision = CollisionState(model, thresholds)
        self.counts = dict.fromkeys(("samples", "tracked", "blind", *UNOBSERVED.values(),
                                     REFUSED_KEY), 0)

    def stepped(self, r, tracking):
        """Take a tick the observer stepped: r, whether it is an estimate; return if it changed."""
        self.counts["tracked"] += bool(tracking)
        return self._counted(self.collision.update(r, bool(tracking)))

    def isolated(self, n, tracking):
        """
        Take a tick the observer stepped and isolated in one call; return if it changed.

        ``n``: the isolation's return (``CollisionState.isolated``); ``tracking``: whether r
        is an estimate. Counts as :meth:`stepped`.
        """
        self.counts["tracked"] += bool(tracking)
        return self._counted(self.collision.isolated(n, bool(tracking)))

    def unobserved(self, code):
        """Take a tick without r (``code``: see ``STEPPED``); return whether it changed."""
        self.counts[UNOBSERVED.get(code, REFUSED_KEY)] += 1
        return self._counted(self.collision.unobserved(REASONS.get(code, REFUSED)))

    def outcome(self, code, r=None, tracking=False):
        """Take a tick's outcome: :meth:`stepped` for ``code`` STEPPED, else :meth:`unobserved`."""
        return self.stepped(r, tracking) if code == STEPPED else self.unobserved(code)

    def _counted(self, changed):
        """Count a tick fed (and one at which it could not observe); return ``changed``."""
        self.counts["samples"] += 1
        self.counts["blind"] += not self.collision.observing
        return changed
