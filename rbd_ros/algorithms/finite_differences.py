"""Central finite differences of inverse and forward dynamics, for tests and benchmarks.

Slow (2 nv + 2 nv + 2 nv dynamics calls) and approximate (error ~ eps² from truncation and
~ 1e-16 |τ| / eps from rounding); the analytical versions are in ``rnea_derivatives`` and
``aba_derivatives``. Configuration derivatives are taken in the tangent space through
:func:`integrate`, as Pinocchio's are.
"""
import math

import numpy as np

from ..model import FREE_FLYER
from .aba import aba
from .rnea import rnea


def _skew(w):
    return np.array([[0.0, -w[2], w[1]], [w[2], 0.0, -w[0]], [-w[1], w[0], 0.0]])


def exp6(delta):
    """(R, p) = exp of the twist δ = (linear, angular) (Pinocchio's SE3 exp)."""
    v = np.asarray(delta[:3], np.float64)
    w = np.asarray(delta[3:6], np.float64)
    theta = math.sqrt(float(w @ w))
    W = _skew(w)
    if theta < 1e-8:   # series: sin t / t, (1 - cos t) / t², (t - sin t) / t³
        a = 1.0 - theta ** 2 / 6.0
        b = 0.5 - theta ** 2 / 24.0
        c = 1.0 / 6.0 - theta ** 2 / 120.0
    else:
        a = math.sin(theta) / theta
        b = (1.0 - math.cos(theta)) / theta ** 2
        c = (theta - math.sin(theta)) / theta ** 3
    R = np.eye(3) + a * W + b * (W @ W)
    V = np.eye(3) + b * W + c * (W @ W)
    return R, V @ v


def _quat_mul(p, q):
    """Hamilton product of quaternions stored (x, y, z, w)."""
    px, py, pz, pw = p
    qx, qy, qz, qw = q
    return np.array([pw * qx + px * qw + py * qz - pz * qy,
                     pw * qy - px * qz + py * qw + pz * qx,
                     pw * qz + px * qy - py * qx + pz * qw,
                     pw * qw - px * qx - py * qy - pz * qz])


def _quat_to_matrix(quat):
    x, y, z, w = quat / np.linalg.norm(quat)
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                     [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                     [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


def integrate(model, q, dv):
    """q ⊕ dv: 1-dof joints add; a free-flyer base moves to M exp6(dv[0:6]) (dv in the base
    frame, linear first), as Pinocchio's ``integrate``."""
    q = np.array(q, np.float64)
    dv = np.asarray(dv, np.float64)
    out = q.copy()
    for i in range(model.nbodies):
        iq, iv = int(model.idx_q[i]), int(model.idx_v[i])
        if model.joint_type[i] == FREE_FLYER:
            quat = q[iq + 3:iq + 7] / np.linalg.norm(q[iq + 3:iq + 7])
            _, p = exp6(dv[iv:iv + 6])
            w = dv[iv + 3:iv + 6]
            theta = float(np.linalg.norm(w))
            half = 0.5 * theta
            s = 0.5 - theta ** 2 / 48.0 if theta < 1e-8 else math.sin(half) / theta
            dq = np.array([s * w[0], s * w[1], s * w[2], math.cos(half)])
            out[iq:iq + 3] = q[iq:iq + 3] + _quat_to_matrix(quat) @ p
            new = _quat_mul(quat, dq)
            if new @ quat < 0.0:        # stay in the input's hemisphere, as Pinocchio does
                new = -new
            out[iq + 3:iq + 7] = new / np.linalg.norm(new)
        else:
            out[iq] = q[iq] + dv[iv]
    return out


def _fd_columns(f, x0, eps, perturb):
    """Central differences of f along the nv tangent directions of x0."""
    cols = []
    for k in range(perturb.nv):
        plus = f(perturb(x0, k, eps))
        minus = f(perturb(x0, k, -eps))
        cols.append((plus - minus) / (2.0 * eps))
    return np.array(cols).T


class _Tangent:
    def __init__(self, model):
        self.model = model
        self.nv = model.nv

    def __call__(self, q, k, h):
        dv = np.zeros(self.nv)
        dv[k] = h
        return integrate(self.model, q, dv)


class _Additive:
    def __init__(self, nv):
        self.nv = nv

    def __call__(self, x, k, h):
        x = np.array(x, np.float64)
        x[k] += h
        return x


def _derivatives_fd(function, model, q, v, u, fext, eps):
    q = np.asarray(q, np.float64)
    v = np.asarray(v, np.float64)
    u = np.asarray(u, np.float64)
    d_dq = _fd_columns(lambda qq: function(model, qq, v, u, fext), q, eps, _Tangent(model))
    d_dv = _fd_columns(lambda vv: function(model, q, vv, u, fext), v, eps, _Additive(model.nv))
    d_du = _fd_columns(lambda uu: function(model, q, v, uu, fext), u, eps, _Additive(model.nv))
    return d_dq, d_dv, d_du


def rnea_derivatives_fd(model, q, v, a, fext=None, eps=1e-6):
    """Finite-difference (∂τ/∂q, ∂τ/∂q̇, ∂τ/∂q̈ = M) of :func:`rbd_ros.rnea`."""
    return _derivatives_fd(rnea, model, q, v, a, fext, eps)


def aba_derivatives_fd(model, q, v, tau, fext=None, eps=1e-6):
    """Finite-difference (∂q̈/∂q, ∂q̈/∂q̇, ∂q̈/∂τ = M⁻¹) of :func:`rbd_ros.aba`."""
    return _derivatives_fd(aba, model, q, v, tau, fext, eps)
