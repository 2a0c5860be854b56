"""
Finite differences of inverse and forward dynamics, the baseline of the analytical derivatives.

They serve as that baseline in the tests, the benchmarks and the RSS paper's Table I and
Fig. 3.

One compiled call evaluates the 6 nv + 1 dynamics calls of central differences (error ~ ε²
from truncation and ~ 1e-16 |τ| / ε from rounding; the first call checks the inputs) or the
3 nv + 1 of forward differences.
Configuration derivatives are taken in the tangent space, as Pinocchio's are; ``integrate``
is the general q ⊕ dv.
"""
import math

from .. import _checks
from .._jit import boolean, f64_1d, f64_2d, f64_2d_ro, float64, helper, int64, kernel
from ..model.layout import P_IV
from .aba import aba_kernel
from .common import (INPUT_STRIDED, OUTPUT_REFUSED, apart, apart_from_state, check_configuration,
                     check_vector, matrix_status, model_sizes, plain, plain_rows,
                     square_outputs_fit, vector_status, writeable_vector)
from .joints import joint_integrate, joint_tangent
from .rnea import rnea_kernel
from .entries import declare


@kernel(int64(f64_2d_ro, f64_1d, f64_1d, f64_1d))
def integrate_kernel(packed, q, dv, out):
    nb, nq, nv = model_sizes(packed)
    if not (writeable_vector(out, nq) and apart(out, q) and apart(out, dv)):
        return OUTPUT_REFUSED
    status = check_configuration(packed, q, nq, 1) or check_vector(dv, nv, 2)
    if status:
        return status
    for i in range(nb):
        joint_integrate(packed, q, i, joint_tangent(packed, i, dv), out)
    return vector_status(out)


@declare
def integrate(model, q, dv):
    """
    Return q ⊕ dv, as Pinocchio's ``integrate``.

    1-dof joints add; a free-flyer base moves to M exp6(dv[0:6]) (dv in the base frame, linear
    first; see ``joints.joint_integrate``).

    Parameters
    ----------
    model, q : ...
        Shared by the calls: ``rbd_ros.algorithms.entries.SHARED_PARAMETERS``.
    dv : array_like, shape ``(nv,)``
        The displacement in the tangent space (rad, m), laid out as ``v``: with a floating base,
        the first 6 are its linear (m) and angular (rad) displacement in the base frame (a
        planar base: x, y, θ).

    Returns
    -------
    q_next : numpy.ndarray, shape ``(nq,)``
        The configuration q ⊕ dv, laid out as ``q``.

    Raises
    ------
    ValueError
        An input of the wrong size, not real numbers, with NaN or inf, or a zero base quaternion
        or direction (the message names it); a result that is not finite; an ``out`` that is
        not as described.

    """


@helper
def perturb_configuration(packed, q, k, h, out):
    """Set out = q ⊕ h e_k: a step h along tangent direction k (integrate of a single column)."""
    for i in range(q.shape[0]):
        out[i] = q[i]
    body = 0
    nb = packed.shape[0] - 1
    while body + 1 < nb and int(packed[body + 1, P_IV]) <= k:
        body += 1
    k -= int(packed[body, P_IV])
    joint_integrate(packed, q, body, (h if k == 0 else 0.0, h if k == 1 else 0.0,
                                      h if k == 2 else 0.0, h if k == 3 else 0.0,
                                      h if k == 4 else 0.0, h if k == 5 else 0.0), out)


INVERSE = 0   # RNEA: u = q̈, out = τ
FORWARD = 1   # ABA: u = τ, out = q̈


@helper
def dynamics(which, packed, ws, q, v, u, fext, out):
    """RNEA or ABA (``which``) into ``out``; returns the kernel's status."""
    if which == INVERSE:
        return rnea_kernel(packed, ws, q, v, u, fext, out)
    return aba_kernel(packed, ws, q, v, u, fext, out)


@kernel(int64(int64, f64_2d_ro, f64_2d, f64_1d, f64_1d, f64_1d, f64_2d, float64, boolean,
              f64_2d, f64_2d, f64_2d, f64_1d, f64_2d))
def finite_differences_kernel(which, packed, ws, q, v, u, fext, eps, central, d_dq, d_dv, d_du,
                              q_step, work):
    """
    Fill the columns of ∂f/∂q (tangent), ∂f/∂q̇, ∂f/∂u of f = RNEA (which = 0) or ABA (which = 1).

    Central differences (f(x + ε) - f(x - ε)) / 2ε, or forward ones (f(x + ε) - f(x)) / ε.
    work rows: 0 v step, 1 u step, 2 f(x + ε), 3 f(x - ε) or f(x).
    """
    if not (plain(q) and plain(v) and plain(u) and plain_rows(fext)):
        return INPUT_STRIDED
    nv = model_sizes(packed)[2]
    if not (square_outputs_fit(d_dq, d_dv, d_du, nv) and apart_from_state(d_dq, q, v, u, fext)
            and apart_from_state(d_dv, q, v, u, fext) and apart_from_state(d_du, q, v, u, fext)):
        return OUTPUT_REFUSED
    v_step, u_step, f_plus, f_minus = work[0], work[1], work[2], work[3]
    status = dynamics(which, packed, ws, q, v, u, fext, f_minus)     # also checks the inputs
    if status:
        return status
    for k in range(nv):
        v_step[k] = v[k]
        u_step[k] = u[k]
    lo = -eps if central else 0.0
    scale = 1.0 / (eps - lo)
    for k in range(nv):
        for d in range(3):
            for side in range(2):
                h = eps if side == 0 else lo
                target = f_plus if side == 0 else f_minus
                if side == 1 and not central:
                    continue          # f(x), computed once above, stays in f_minus
                if d == 0:
                    perturb_configuration(packed, q, k, h, q_step)
                    dynamics(which, packed, ws, q_step, v, u, fext, target)
                elif d == 1:
                    v_step[k] = v[k] + h
                    dynamics(which, packed, ws, q, v_step, u, fext, target)
                    v_step[k] = v[k]
                else:
                    u_step[k] = u[k] + h
                    dynamics(which, packed, ws, q, v, u_step, fext, target)
                    u_step[k] = u[k]
            out = d_dq if d == 0 else (d_dv if d == 1 else d_du)
            for r in range(nv):
                out[r, k] = (f_plus[r] - f_minus[r]) * scale
    return matrix_status(d_dq) or matrix_status(d_dv) or matrix_status(d_du)


def _step(eps):
    """Return ε as a float: finite and positive, else ValueError (a step of 0 divides by 0)."""
    eps = _checks.number(eps, "eps")
    if not (math.isfinite(eps) and eps > 0.0):
        raise ValueError(f"eps must be finite and > 0, got {eps!r}")
    return eps


def inverse_dynamics_steps(eps, central):
    """Return (which, ε, central) of the differences of RNEA."""
    return INVERSE, _step(eps), bool(central)


def forward_dynamics_steps(eps, central):
    """Return (which, ε, central) of the differences of ABA."""
    return FORWARD, _step(eps), bool(central)


@declare
def rnea_derivatives_fd(model, q, v, a, fext=None, eps=1e-6, central=True, *, data=None):
    """
    Return the finite-difference (∂τ/∂q, ∂τ/∂q̇, ∂τ/∂q̈ = M) of :func:`rbd_ros.rnea`.

    ∂/∂q in the tangent space (q ⊕ ε e_j: :func:`rbd_ros.integrate`). The reference that tests
    and benchmarks check :func:`rbd_ros.rnea_derivatives` against.

    Parameters
    ----------
    model, q, v, a, fext, eps, central, data : ...
        Shared by the calls: ``rbd_ros.algorithms.entries.SHARED_PARAMETERS``.

    Returns
    -------
    dtau_dq : numpy.ndarray, shape ``(nv, nv)``
        ∂τ/∂q in the tangent space, column j from a step along tangent coordinate j.
    dtau_dv : numpy.ndarray, shape ``(nv, nv)``
        ∂τ/∂q̇.
    dtau_da : numpy.ndarray, shape ``(nv, nv)``
        ∂τ/∂q̈ = M(q).

    Raises
    ------
    ValueError
        ``eps`` not a finite number > 0;
        ... the shared refusals: ``rbd_ros.algorithms.entries.SHARED_REFUSALS``.

    """


@declare
def aba_derivatives_fd(model, q, v, tau, fext=None, eps=1e-6, central=True, *, data=None):
    """
    Return the finite-difference (∂q̈/∂q, ∂q̈/∂q̇, ∂q̈/∂τ = M⁻¹) of :func:`rbd_ros.aba`.

    ∂/∂q in the tangent space (q ⊕ ε e_j: :func:`rbd_ros.integrate`). The reference that tests
    and benchmarks check :func:`rbd_ros.aba_derivatives` against.

    Parameters
    ----------
    model, q, v, tau, fext, eps, central, data : ...
        Shared by the calls: ``rbd_ros.algorithms.entries.SHARED_PARAMETERS``.

    Returns
    -------
    dqdd_dq : numpy.ndarray, shape ``(nv, nv)``
        ∂q̈/∂q in the tangent space, column j from a step along tangent coordinate j.
    dqdd_dv : numpy.ndarray, shape ``(nv, nv)``
        ∂q̈/∂q̇.
    dqdd_dtau : numpy.ndarray, shape ``(nv, nv)``
        ∂q̈/∂τ = M(q)⁻¹.

    Raises
    ------
    ValueError
        ``eps`` not a finite number > 0;
        ... the shared refusals: ``rbd_ros.algorithms.entries.SHARED_REFUSALS``.

    """
