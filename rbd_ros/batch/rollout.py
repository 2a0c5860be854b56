"""
Trajectories in one call: the limits along a trajectory, and forward rollouts with derivatives.

    limits = rbd_ros.batch.rollout.check_limits(model, v, tau)        # v, tau: (N, nv)
    r = rbd_ros.batch.rollout.rollout(model, q0, v0, tau, dt, method="rk4", derivatives=True)
    r.q (N+1, nq), r.v (N+1, nv), r.dx_dx (N, 2nv, 2nv), r.dx_du (N, 2nv, nv)

The dynamics of the points themselves are the batch entries (``rbd_ros.rnea_batch``, ...).

**Rollout.** From x_0 = (q_0, v_0), N steps of length h under the torques u_0 … u_{N-1}, with
q̈ = FD(q, v, u) (ABA) and configurations moved by ⊕ (``rbd_ros.integrate``: joints add, a
base moves by the SE(3) exponential of a base-frame twist, SE(2)'s for a planar base):

* ``"semi_implicit_euler"`` (symplectic Euler): v' = v + h FD(q, v, u); q' = q ⊕ h v'.
* ``"rk4"``: the classical Runge-Kutta 4 on the state space, each stage taken from x along
  the previous stage's derivative (the scheme of Crocoddyl's IntegratedActionModelRK4):
  k_i = (v_i, FD(q_i, v_i, u)) at (q_i, v_i) = (q ⊕ c_i h v_{i-1}, v + c_i h a_{i-1}),
  c = (0, ½, ½, 1); q' = q ⊕ (h/6)(v_1 + 2v_2 + 2v_3 + v_4),
  v' = v + (h/6)(a_1 + 2a_2 + 2a_3 + a_4). u is held over the step (zero-order hold).

**Step derivatives.** ∂x_{k+1}/∂x_k (2nv × 2nv) and ∂x_{k+1}/∂u_k (2nv × nv), with x = (q, v)
and δq in the tangent space (δq at x_k, δq' at x_{k+1}: q ⊕ δq). They chain the analytical
ABA derivatives (∂q̈/∂q, ∂q̈/∂v, ∂q̈/∂u = M⁻¹; ``rbd_ros.aba_derivatives``) through each
stage with the Jacobians of ⊕: d(q ⊕ w) = J_q(w) δq + J_w(w) δw, identities for 1-dof joints;
for the base J_q = Ad(Exp(w)⁻¹) and J_w the right Jacobian of SE(3)'s exponential, restricted
to a planar base's SE(2) (:func:`integrate_jacobians`; Pinocchio's ``dIntegrate``).
"""
from collections import namedtuple

import numpy as np

from ..algorithms.calls import aba, aba_derivatives, integrate
from ..algorithms.joints import motion_subspace
from ..model import Data

EULER = "semi_implicit_euler"
RK4 = "rk4"
METHODS = (EULER, RK4)
_RK4_STEP = (0.0, 0.5, 0.5, 1.0)
_RK4_WEIGHT = (1.0, 2.0, 2.0, 1.0)

Limits = namedtuple("Limits", "feasible first_point first_joint first_limit peak_effort "
                              "peak_velocity")
Limits.__doc__ = """
The limits along a trajectory: ``feasible``; the first violation's point, joint (index in
``model.joint_names``) and limit ("effort" or "velocity"), -1, -1, "" when feasible; the peaks
of |τ| / effort limit and |v| / velocity limit over the points, per joint (0 for a joint
without that limit).
"""
Rollout = namedtuple("Rollout", "q v dx_dx dx_du")


def check_limits(model, v, tau):
    """
    Check the URDF's effort and velocity limits at every point of a trajectory.

    A joint violates a limit where ``|τ|`` or ``|v|`` exceeds it; a limit that is infinite (absent)
    or zero (what URDF exporters write for "unknown") is not checked. The base (floating)
    has no limits.

    Parameters
    ----------
    model : Model
        The robot; its ``effort_limit`` and ``velocity_limit`` are checked.
    v : array_like, shape (N, nv)
        The velocities at the points (rad/s or m/s).
    tau : array_like, shape (N, nv)
        The torques at the points (N·m or N), e.g. ``rbd_ros.rnea_batch``'s.

    Returns
    -------
    Limits
        ``feasible``, the first violation's point, joint and limit, and the peak ratios per
        joint.

    """
    nbase = model.nv_base
    ratios = []
    for x, limit in ((tau, model.effort_limit), (v, model.velocity_limit)):
        checked = np.isfinite(limit) & (limit > 0)
        scale = np.where(checked, 1.0 / np.where(checked, limit, 1.0), 0.0)
        ratios.append(np.abs(np.asarray(x)[:, nbase:]) * scale)
    over = (ratios[0] > 1.0) | (ratios[1] > 1.0)
    peaks = [r.max(axis=0, initial=0.0) for r in ratios]
    if not over.any():
        return Limits(True, -1, -1, "", *peaks)
    point, joint = np.unravel_index(int(np.argmax(over.ravel())), over.shape)
    which = "effort" if ratios[0][point, joint] > 1.0 else "velocity"
    return Limits(False, int(point), int(joint), which, *peaks)


def rollout(model, q0, v0, tau, dt, method=EULER, derivatives=False, data=None):
    """
    Integrate the forward dynamics from an initial state under a sequence of torques.

    Each torque is held over its step (module docstring: the schemes, the derivatives).

    Parameters
    ----------
    model : Model
        The robot.
    q0 : array_like, shape (nq,)
        The initial configuration.
    v0 : array_like, shape (nv,)
        The initial velocity.
    tau : array_like, shape (N, nv)
        The joint torques of the N steps (N·m or N).
    dt : float
        The step, s (finite, > 0).
    method : str, optional
        ``"semi_implicit_euler"`` (default) or ``"rk4"``.
    derivatives : bool, optional
        Also return the step derivatives.
    data : Data, optional
        A workspace of the model; None: a new one.

    Returns
    -------
    Rollout
        ``q`` (N+1, nq), ``v`` (N+1, nv) (row 0: the initial state) and, with
        ``derivatives``, ``dx_dx`` = ∂x_{k+1}/∂x_k (N, 2nv, 2nv) and ``dx_du`` =
        ∂x_{k+1}/∂u_k (N, 2nv, nv), else None.

    Raises
    ------
    ValueError
        For an unknown method, a bad step, bad inputs (the core's messages) and a state that
        stops being finite (the motion diverges).

    """
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    dt = float(dt)
    if not (np.isfinite(dt) and dt > 0):
        raise ValueError(f"dt must be a finite positive step, got {dt!r}")
    tau = np.asarray(tau, np.float64)
    if tau.ndim != 2 or tau.shape[1] != model.nv:
        raise ValueError(f"tau must have shape (N, {model.nv}), got {tau.shape}")
    n, nv = len(tau), model.nv
    data = Data(model) if data is None else data
    q = np.empty((n + 1, model.nq))
    v = np.empty((n + 1, nv))
    q[0], v[0] = integrate(model, q0, np.zeros(nv)), v0     # checks q0 (size, finite, unit)
    if v[0].shape != (nv,) or not np.all(np.isfinite(v[0])):
        raise ValueError(f"v0 must be {nv} finite numbers")
    dx_dx = np.empty((n, 2 * nv, 2 * nv)) if derivatives else None
    dx_du = np.empty((n, 2 * nv, nv)) if derivatives else None
    step = _euler if method == EULER else _rk4
    for k in range(n):
        q[k + 1], v[k + 1], d = step(model, q[k], v[k], tau[k], dt, derivatives, data)
        if derivatives:
            dx_dx[k], dx_du[k] = d[:, :2 * nv], d[:, 2 * nv:]
    if not (np.all(np.isfinite(q)) and np.all(np.isfinite(v))):
        raise ValueError(f"the rollout diverged: the state is not finite after "
                         f"{_first_bad(q, v)} steps")
    if derivatives and not (np.all(np.isfinite(dx_dx)) and np.all(np.isfinite(dx_du))):
        raise ValueError("the rollout's derivatives are not finite (the motion diverges)")
    return Rollout(q, v, dx_dx, dx_du)


def _first_bad(q, v):
    bad = ~(np.all(np.isfinite(q), axis=1) & np.all(np.isfinite(v), axis=1))
    return int(np.argmax(bad))


def _fd(model, q, v, u, derivatives, data):
    """(q̈, D) with D = [∂q̈/∂q, ∂q̈/∂v, ∂q̈/∂u] (nv × 3nv) when ``derivatives``, else None."""
    if not derivatives:
        return aba(model, q, v, u, data=data), None
    da_dq, da_dv, minv = aba_derivatives(model, q, v, u, data=data)
    # aba_derivatives returns the derivatives only: q̈ itself is one more (cheap) ABA
    return aba(model, q, v, u, data=data), np.hstack([da_dq, da_dv, minv])


def _euler(model, q, v, u, h, derivatives, data):
    """One semi-implicit Euler step: (q', v', [∂(q', v')/∂(q, v, u)] or None)."""
    a, da = _fd(model, q, v, u, derivatives, data)
    v1 = v + h * a
    q1 = integrate(model, q, h * v1)
    if not derivatives:
        return q1, v1, None
    dv1 = _plus_unit(h * da, 1)
    dq1 = _d_integrate(model, h * v1, h * dv1)
    return q1, v1, np.vstack([dq1, dv1])


def _rk4(model, q, v, u, h, derivatives, data):
    """One RK4 step (see the module docstring): (q', v', derivatives or None)."""
    nv = model.nv
    dq_total = np.zeros(nv)
    a_total = np.zeros(nv)
    d_dq_total = np.zeros((nv, 3 * nv)) if derivatives else None
    d_a_total = np.zeros((nv, 3 * nv)) if derivatives else None
    qi, vi, a, dqi, dvi, dai = q, v, None, _unit(nv, 0), _unit(nv, 1), None
    vi_prev, dvi_prev = vi, dvi
    for c, w in zip(_RK4_STEP, _RK4_WEIGHT):
        if c:
            step = c * h * vi_prev
            qi = integrate(model, q, step)
            vi = v + c * h * a
            if derivatives:
                dqi = _d_integrate(model, step, c * h * dvi_prev)
                dvi = _plus_unit(c * h * dai, 1)
        a, da = _fd(model, qi, vi, u, derivatives, data)
        dq_total += w * vi
        a_total += w * a
        if derivatives:
            # ∂q̈_i/∂(q, v, u) through the stage state (q_i, v_i), plus u's direct part
            if c:
                dai = da[:, :nv] @ dqi + da[:, nv:2 * nv] @ dvi
                dai[:, 2 * nv:] += da[:, 2 * nv:]
            else:           # the first stage is at x itself: its chain is the identity
                dai = da
            d_dq_total += w * dvi
            d_a_total += w * dai
        vi_prev, dvi_prev = vi, dvi
    step = h / 6.0 * dq_total
    q1 = integrate(model, q, step)
    v1 = v + h / 6.0 * a_total
    if not derivatives:
        return q1, v1, None
    dq1 = _d_integrate(model, step, h / 6.0 * d_dq_total)
    dv1 = _plus_unit(h / 6.0 * d_a_total, 1)
    return q1, v1, np.vstack([dq1, dv1])


def _plus_unit(m, block):
    """Return ``m`` (nv × 3nv, changed in place) plus the unit matrix in block ``block``."""
    nv = m.shape[0]
    m.reshape(-1)[block * nv::3 * nv + 1][:nv] += 1.0     # a strided view of that diagonal
    return m


def _d_integrate(model, w, dw):
    """
    Return ∂(q ⊕ w)/∂(δq, δv, δu) = J_q [1 0 0] + J_w ∂w (nv × 3nv), ``dw`` = ∂w (changed).

    The 1-dof joints' rows are ``dw`` plus the unit: only the base's rows need the
    Jacobians (:func:`integrate_jacobians`), so a step of a fixed-base robot does no product.
    """
    b = model.nv_base
    if b:
        jq, jw = base_jacobians(model, w[:b])
        dw[:b] = jw @ dw[:b]
        dw[:b, :b] += jq
        dw.reshape(-1)[b * (3 * model.nv + 1)::3 * model.nv + 1][:model.nv - b] += 1.0
        return dw
    return _plus_unit(dw, 0)


def _unit(nv, block):
    """Return the nv × 3nv matrix selecting block ``block`` of (δq, δv, δu)."""
    out = np.zeros((nv, 3 * nv))
    out[:, block * nv:(block + 1) * nv] = np.eye(nv)
    return out


# -- the Jacobians of q ⊕ w ----------------------------------------------------------------------

def integrate_jacobians(model, w):
    """
    Return (J_q, J_w) (nv × nv): d(q ⊕ w) = J_q δq + J_w δw, in the tangent spaces.

    Identities for 1-dof joints (they add); the base's blocks are :func:`base_jacobians`.
    The Jacobians do not depend on q.
    """
    nv, b = model.nv, model.nv_base
    jq, jw = np.eye(nv), np.eye(nv)
    if b:
        jq[:b, :b], jw[:b, :b] = base_jacobians(model, w[:b])
    return jq, jw


def base_jacobians(model, w):
    """
    Return the base's (J_q, J_w) blocks (nv_base × nv_base) of q ⊕ w, w its tangent step.

    The base's q ⊕ w is M · Exp(S w), S its motion subspace in its own frame (the identity
    for a free flyer; linear x, y and angular z for a planar base: SE(2) in SE(3)), so the
    blocks are those of SE(3), Ad(Exp(S w)⁻¹) and the right Jacobian of Exp, seen through
    S: Sᵀ (·) S. S's columns span a subgroup's algebra, which both maps into itself.
    """
    S = motion_subspace(int(model.joint_type[0]), model.axis[0])
    twist = S @ np.asarray(w, np.float64)
    return (S.T @ se3_inverse_adjoint(twist[:3], twist[3:]) @ S,
            S.T @ se3_right_jacobian(twist[:3], twist[3:]) @ S)


def _hat(x):
    return np.array([[0.0, -x[2], x[1]], [x[2], 0.0, -x[0]], [-x[1], x[0], 0.0]])


def _so3_coefficients(theta):
    """(sin θ / θ, (1 - cos θ) / θ², (θ - sin θ) / θ³), by series near 0 (no cancellation)."""
    if theta < 1e-3:
        t2 = theta * theta
        return 1.0 - t2 / 6.0, 0.5 - t2 / 24.0, 1.0 / 6.0 - t2 / 120.0
    return (np.sin(theta) / theta, (1.0 - np.cos(theta)) / theta ** 2,
            (theta - np.sin(theta)) / theta ** 3)


def se3_exp(lin, ang):
    """(R, p) = Exp([lin; ang]): R = exp(ang^), p = J_l(ang) lin (left Jacobian of SO(3))."""
    theta = float(np.linalg.norm(ang))
    s, c1, c2 = _so3_coefficients(theta)
    W = _hat(ang)
    W2 = W @ W
    R = np.eye(3) + s * W + c1 * W2
    return R, (np.eye(3) + c1 * W + c2 * W2) @ lin


def se3_inverse_adjoint(lin, ang):
    """Ad(Exp([lin; ang])⁻¹), 6 × 6, linear first: [[Rᵀ, -Rᵀ p^], [0, Rᵀ]]."""
    R, p = se3_exp(lin, ang)
    out = np.zeros((6, 6))
    out[:3, :3] = out[3:, 3:] = R.T
    out[:3, 3:] = -R.T @ _hat(p)
    return out


def se3_right_jacobian(lin, ang):
    """
    Return the right Jacobian of SE(3)'s Exp at ν = [lin; ang]: Exp(ν + δ) ≈ Exp(ν) Exp(J_r δ).

    J_r(ν) = J_l(-ν), with J_l = [[J, Q(ρ, φ)], [0, J]] (Barfoot, "State Estimation for
    Robotics", eq. 7.85-7.86; linear first, as here).
    """
    rho, phi = -np.asarray(lin, np.float64), -np.asarray(ang, np.float64)
    theta = float(np.linalg.norm(phi))
    _, c1, c2 = _so3_coefficients(theta)
    P, Rh = _hat(phi), _hat(rho)
    J = np.eye(3) + c1 * P + c2 * P @ P
    if theta < 1e-3:       # series of Barfoot's coefficients (θ⁻⁴ and θ⁻⁵ cancel)
        t2 = theta * theta
        b2, b3 = 1.0 / 24.0 - t2 / 720.0, 1.0 / 120.0 - t2 / 2520.0
    else:
        b2 = (theta ** 2 + 2.0 * np.cos(theta) - 2.0) / (2.0 * theta ** 4)
        b3 = (2.0 * theta - 3.0 * np.sin(theta) + theta * np.cos(theta)) / (2.0 * theta ** 5)
    PR, RP, PRP = P @ Rh, Rh @ P, P @ Rh @ P
    Q = (0.5 * Rh + c2 * (PR + RP + PRP) + b2 * (P @ PR + RP @ P - 3.0 * PRP)
         + b3 * (PRP @ P + P @ PRP))
    out = np.zeros((6, 6))
    out[:3, :3] = out[3:, 3:] = J
    out[:3, 3:] = Q
    return out
