"""
Effort commands for a robot's controller: which joints, which torque, within which bound.

No ROS here: the node (``rbd_ros.node.effort_command``) publishes what :class:`CommandPlan`
computes, and refuses what :func:`plan` refuses. The modes (``MODES``):

* ``gravity``: τ = g(q), the torque that holds the robot still against gravity;
* ``gravity_friction``: τ = g(q) + f(v), f the joint friction and offset of the joint
  parameters (``rbd_ros.actuation.dynamics``: Fv v + Fc tanh(v/ε) + τ0): the compensation
  of a backdrivable arm;
* ``inverse_dynamics``: τ = RNEA(q, v, a) + D a + f(v), ``a`` the commanded acceleration,
  D the armature.

Payloads act through the model (``Model.with_payload``). Each value is clamped to
``scale`` × the joint's effort limit (the URDF's, or the limits the user gives); a joint
without a limit is refused. Only the commanded joints' values are sent, in their order.
"""
import math
from typing import NamedTuple

import numpy as np

from ..algorithms.calls import gravity_torques, rnea

MODES = ("gravity", "gravity_friction", "inverse_dynamics")


class CommandSettings(NamedTuple):
    """
    What the user asks for (the node's ``command_*`` parameters).

    Parameters
    ----------
    joints : tuple of str
        The controller's joints, in its order.
    mode : str, optional
        One of ``MODES`` (module docstring).
    effort_scale : float, optional
        In (0, 1]: each torque is clamped to this fraction of the joint's effort limit.
    effort_limits : tuple of float, optional
        One value, or one per joint, N·m (N); 0: the URDF's.

    """

    joints: tuple             # the controller's joint order
    mode: str = "gravity"
    effort_scale: float = 1.0
    effort_limits: tuple = (0.0,)  # one, or one per joint, N·m (N); 0: the URDF's


def settings_problem(settings):
    """
    Say why some settings cannot make commands for any robot.

    Parameters
    ----------
    settings : CommandSettings
        The settings.

    Returns
    -------
    str or None
        Why not (naming the parameter), or None when they can.

    """
    joints = list(settings.joints)
    if settings.mode not in MODES:
        return f"command_mode must be one of {list(MODES)}, got {str(settings.mode)[:40]!r}"
    scale = settings.effort_scale
    if not (math.isfinite(scale) and 0.0 < scale <= 1.0):
        return f"command_effort_scale must be in (0, 1], got {scale!r}"
    duplicated = sorted({n for n in joints if joints.count(n) > 1})
    if duplicated:
        return f"command_joints names {_excerpt(duplicated)} more than once"
    limits = list(settings.effort_limits)
    if len(limits) not in (1, len(joints)):
        return (f"command_effort_limits must have one value (for every joint) or one per "
                f"command_joints entry ({len(joints)}), got {len(limits)}")
    if not all(math.isfinite(x) and x >= 0 for x in limits):
        return f"command_effort_limits must be finite and >= 0 (0: the URDF's), got {limits[:8]}"
    return None


def plan(model, settings, joints=None):
    """
    Return the plan that computes the commands of some settings on a model.

    Parameters
    ----------
    model : Model
        The robot (with its payloads).
    settings : CommandSettings
        What the user asks for.
    joints : Actuation, optional
        The model's joint parameters, which the friction and inverse-dynamics modes include;
        None: none.

    Returns
    -------
    CommandPlan

    Raises
    ------
    ValueError
        Saying why not: bad settings, no joints, a joint the model does not have (a mimic
        follower named as such), a joint without an effort limit.

    """
    why = settings_problem(settings)
    if why:
        raise ValueError(why)
    names = list(settings.joints)
    if not names:
        raise ValueError("command_joints is empty: name the controller's joints")
    index = {n: k for k, n in enumerate(model.joint_names)}
    unknown = [n for n in names if n not in index]
    if unknown:
        coupling = model.coupling
        followers = [n for n in unknown if coupling is not None and n in coupling.followers]
        extra = (f" ({_excerpt(followers)}: mimic followers, their leaders carry their load)"
                 if followers else "")
        raise ValueError(f"command_joints names joints the model {model.name!r} does not "
                         f"have as degrees of freedom: {_excerpt(unknown)}{extra}")
    dofs = model.nv_base + np.array([index[n] for n in names], np.intp)
    urdf = np.asarray(model.effort_limit, np.float64)[dofs - model.nv_base]
    given = np.broadcast_to(np.asarray(settings.effort_limits, np.float64), urdf.shape)
    limits = np.where(given > 0, given, urdf)
    missing = [n for n, x in zip(names, limits) if not (np.isfinite(x) and x > 0)]
    if missing:
        raise ValueError(f"no effort limit in the URDF for {_excerpt(missing)}: give "
                         "command_effort_limits (one per command joint; 0: the URDF's)")
    return CommandPlan(model, settings.mode, names, dofs, settings.effort_scale * limits,
                       joints)


class CommandPlan:
    """
    The commands of one model: :meth:`compute` gives the clamped torques of the joints.

    Made by :func:`plan`.

    Parameters
    ----------
    model : Model
        The robot.
    mode : str
        One of ``MODES``.
    names : sequence of str
        The commanded joints, in the controller's order.
    dofs : array_like of int
        Their entries of v.
    bound : array_like
        The clamp, N·m (N), per commanded joint.
    act : Actuation or None
        The joint parameters.

    """

    def __init__(self, model, mode, names, dofs, bound, act):
        self.model, self.mode, self.act = model, mode, act
        self.names = tuple(names)
        self.dofs = np.asarray(dofs, np.intp)
        self.bound = np.asarray(bound, np.float64)
        self.uses_velocity = mode != "gravity"
        self.uses_acceleration = mode == "inverse_dynamics"
        self.out = np.zeros(len(self.names))

    def unusable(self, q, v, a):
        """
        Say which input of a command is not finite.

        Parameters
        ----------
        q : ndarray, shape (nq,)
            Configuration.
        v : ndarray, shape (nv,)
            Velocity (read by the modes other than gravity).
        a : ndarray, shape (nv,)
            Commanded acceleration (read by inverse_dynamics).

        Returns
        -------
        str or None
            Which input is not finite, or None.

        """
        if not np.isfinite(q).all():
            return "a joint position is not finite"
        if self.uses_velocity and not np.isfinite(v).all():
            return "a joint velocity is not finite"
        if self.uses_acceleration and not np.isfinite(a).all():
            return "a commanded acceleration is not finite"
        return None

    def compute(self, q, v, a):
        """
        Return the torques of the commanded joints, clamped, and how many were clamped.

        Parameters
        ----------
        q : ndarray, shape (nq,)
            Configuration.
        v : ndarray, shape (nv,)
            Velocity.
        a : ndarray, shape (nv,)
            Commanded acceleration.

        Returns
        -------
        torques : ndarray, shape (len(names),)
            N·m (N), in the controller's order; reused by the next call.
        clamped : int
            How many were clamped to their bound.

        Raises
        ------
        ValueError
            For a non-finite input or result (nothing to send).

        """
        why = self.unusable(q, v, a)
        if why:
            raise ValueError(why)
        model, act = self.model, self.act
        if self.mode == "inverse_dynamics":
            tau = rnea(model, q, v, a)
            if act is not None:
                tau = tau + act.armature * a + act.friction(v)
        else:
            tau = gravity_torques(model, q)
            if self.mode == "gravity_friction" and act is not None:
                tau = tau + act.friction(v)
        raw = tau[self.dofs]
        if not np.isfinite(raw).all():
            raise ValueError("the command is not finite (NaN or inf)")
        np.clip(raw, -self.bound, self.bound, out=self.out)
        return self.out, int(np.count_nonzero(self.out != raw))


def _excerpt(names, count=6):
    shown = ", ".join(repr(str(n)[:60]) for n in names[:count])
    return shown + (f" and {len(names) - count} more" if len(names) > count else "")
