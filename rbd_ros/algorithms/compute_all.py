"""
Everything a controller needs at one state, in one kernel sharing the passes.

The kernel computes:

    τ = ID(q, q̇, a)              RNEA (RSS 2018 seed, Algorithm 1), a = 0 when not given
    q̈ = FD(q, q̇, τ_in)           ABA (RBDA Table 7.1)
    M⁻¹(q)                        Carpentier 2018, Algorithm 1 (corrected, see ``minv.py``)
    ∂ID/∂q, ∂ID/∂q̇ at (q, q̇, a)   Algorithms 2-3 of the seed (see ``rnea_derivatives.py``)
    ∂FD/∂q, ∂FD/∂q̇ at (q, q̇, τ_in) = -M⁻¹ ∂ID/∂u at (q, q̇, q̈)    (seed, Eq. 24)

Calling the five functions in turn repeats most of the work; here each piece is computed
once (all in the world frame, as the other kernels). Every step is the one its own algorithm
runs (``aba``, ``minv``, ``rnea_derivatives``), composed here; nothing is written twice:

* pass 1 (forward): placements, world S, velocities, world body inertias I_i, the bias
  forces v ×* I v - f_ext, the velocity-only per-dof terms dV, dW (A2 l.3, l.5) and the
  per-body matrices B_i (A2 l.6) serve every algorithm; the RNEA at ``a`` (A1 l.5-11) and its
  dA columns (A2 l.5) ride along.
* pass 2 (backward): ABA's articulated inertias I^A, U = I^A S and D (Table 7.1 pass 2)
  are exactly those of the M⁻¹ backward pass (report lines 8-16), so that pass runs in the
  same loop on the same I^A, U, D⁻¹ and one rank-1 update per body serves both. The
  free-flyer root's I^A is factorized once (Cholesky) for M⁻¹ and ABA's root solve.
* pass 3 (forward): ABA's accelerations (pass 3) with M⁻¹'s second forward pass (report
  lines 28-36); the accelerations at q̈ give the dA columns at q̈ and the body forces at q̈.
* pass 4 (backward): Algorithm 3's step once for both accelerations (its ``second``
  option). ∂τ/∂q̇ does not depend on the acceleration (A2 l.5 for u = q̇ and the B, I^c
  terms), so ∂ID/∂q̇ at q̈ is dtau_dv itself; only the dA columns and the subtree forces F
  differ between a and q̈, so ∂ID/∂q at both shares Y = I^c S, Z = (B^c)ᵀ S and B^c dV.
* Eq. 24: two products with -M⁻¹, through BLAS (``rbd_ros._blas.gemm``, SciPy's dgemm;
  loops cost 4x more), by the blocks of a fixed base's independent limbs
  (``limb_blocks``: one block, the whole product, for a floating base).
"""
from typing import NamedTuple

import numpy as np

from .._jit import f64_1d, f64_2d, f64_3d, f64_2d_ro, helper, int64, kernel
from ..model.layout import D_DA, D_DV, D_S, P_IV, P_PARENT, W_OI, W_OV, X_COLS, X_FA, X_FQ
from ..model.spatial import add6, dot6, inertia_apply, load6, load10
from ..model.se3 import store6
from .aba import aba_forward_step, aba_kernel, acceleration_step
from .common import (INPUT_STRIDED, OUTPUT_REFUSED, REFUSAL_POSITION, apart, apart_from_state,
                     check_inputs, check_vector, matrix_status, mirror_upper, model_sizes, plain,
                     plain_rows, set_world, writeable_matrix, writeable_vector)
from .joints import joint_nv
from .limb_blocks import minus_minv_product
from .minv import articulated_and_minv_backward_pass, minv_forward_step
from .rnea import rnea_kernel
from .rnea_derivatives import (acceleration_column, derivative_backward_step,
                               derivative_forward_step, subtree_sum_step)
from .entries import declare


class Dynamics(NamedTuple):
    """
    The result of :func:`compute_all`: its seven arrays share one block of memory.

    ID is the inverse dynamics (:func:`rbd_ros.rnea`), FD the forward dynamics
    (:func:`rbd_ros.aba`); ∂/∂q is taken in the tangent space (nv columns).

    Parameters
    ----------
    tau : ndarray, shape (nv,)
        ID(q, v, a), N·m (N for a prismatic joint).
    qdd : ndarray, shape (nv,)
        FD(q, v, tau_input), rad/s² (m/s²).
    Minv : ndarray, shape (nv, nv)
        M(q)⁻¹, full and symmetric.
    dtau_dq : ndarray, shape (nv, nv)
        ∂ID/∂q at (q, v, a).
    dtau_dv : ndarray, shape (nv, nv)
        ∂ID/∂q̇ at (q, v, a) (the same at any acceleration).
    dqdd_dq : ndarray, shape (nv, nv)
        ∂FD/∂q at (q, v, tau_input).
    dqdd_dv : ndarray, shape (nv, nv)
        ∂FD/∂q̇ at (q, v, tau_input).

    """

    tau: np.ndarray        # ID(q, v, a)
    qdd: np.ndarray        # FD(q, v, tau_input)
    Minv: np.ndarray       # M(q)⁻¹, full and symmetric
    dtau_dq: np.ndarray    # ∂ID/∂q at (q, v, a)
    dtau_dv: np.ndarray    # ∂ID/∂q̇ at (q, v, a) (the same at any acceleration)
    dqdd_dq: np.ndarray    # ∂FD/∂q at (q, v, tau_input)
    dqdd_dv: np.ndarray    # ∂FD/∂q̇ at (q, v, tau_input)


@helper
def _forward_and_inertia_passes(packed, ws, dws, bws, FP, X, XD, q, v, a, tau_in, fext,
                                Minv, qdd):
    """Run passes 1-3 (module docstring): every step is the named step of its algorithm."""
    nb, _, nv = model_sizes(packed)
    set_world(packed, ws)                                         # A1 l.2-3: a_0 = -g
    for i in range(nb):                       # pass 1: what depends on neither τ_in nor q̈
        oM, oS, v_parent, vJ, ov, oI, oh, bias = aba_forward_step(packed, ws, q, v, fext, i)
        f_at_a = derivative_forward_step(packed, ws, dws, bws, a, i, oM, oS, v_parent, vJ,
                                         ov, oI, oh, bias)
        store6(X, i, X_FA, f_at_a)
        store6(X, i, X_FQ, bias)                                  # + I a at q̈ in pass 3
    articulated_and_minv_backward_pass(packed, ws, FP, Minv, tau_in)    # pass 2
    for i in range(nb):                       # pass 3: ABA pass 3, M⁻¹ second forward pass
        a_parent, oa = acceleration_step(packed, ws, tau_in, qdd, i)   # a_λ already at q̈
        minv_forward_step(packed, ws, FP, Minv, i, nv)
        v_parent = load6(ws, int(packed[i, P_PARENT]), W_OV)
        iv = int(packed[i, P_IV])
        for k in range(iv, iv + joint_nv(packed, i)):              # A2 l.5 at q̈
            store6(XD, k, 0, acceleration_column(a_parent, v_parent, load6(dws, k, D_S),
                                                 load6(dws, k, D_DV)))
        # A1 l.10 at q̈: f_i = I_i a_i + bias
        store6(X, i, X_FQ, add6(inertia_apply(load10(ws, i, W_OI), oa), load6(X, i, X_FQ)))
    mirror_upper(Minv)


@helper
def _derivative_pass(packed, ws, dws, bws, X, XD, tau, dtau_dq, dtau_dv, G):
    """Pass 4: A1 l.14-17 and Algorithm 3 at a (∂τ/∂q, ∂τ/∂q̇) and at q̈ (G = ∂ID/∂q)."""
    nb = model_sizes(packed)[0]
    dtau_dq[:, :] = 0.0
    dtau_dv[:, :] = 0.0
    G[:, :] = 0.0
    for i in range(nb - 1, -1, -1):
        Fa = load6(X, i, X_FA)               # subtree sums are complete: children came first
        iv = int(packed[i, P_IV])
        for k in range(iv, iv + joint_nv(packed, i)):             # A1 l.15: τ = Sᵀ f
            tau[k] = dot6(load6(dws, k, D_S), Fa)
        derivative_backward_step(packed, ws, dws, bws, i, Fa, dws, D_DA, dtau_dq, dtau_dv, G,
                                 True, load6(X, i, X_FQ), XD, 0, G)
        subtree_sum_step(packed, ws, bws, i)                      # A3 l.2-3
        lam = int(packed[i, P_PARENT])
        if lam >= 0:                                              # A1 l.17, A3 l.3
            for k in range(X_COLS):
                X[lam, k] += X[i, k]


_SIGNATURE = int64(f64_2d_ro, f64_2d, f64_2d, f64_2d, f64_3d, f64_2d, f64_2d, f64_2d, f64_1d,
                   f64_1d, f64_1d, f64_1d, f64_2d, f64_2d)


@kernel(_SIGNATURE)
def compute_all_kernel(packed, ws, dws, bws, FP, X, XD, stacked, q, v, a, tau_in, fext, out):
    """
    See :func:`compute_all`.

    ``out`` rows: M⁻¹ [0, nv), ∂τ/∂q [nv, 2nv), ∂τ/∂q̇ [2nv, 3nv), ∂q̈/∂q, ∂q̈/∂q̇, then τ and
    q̈. ``stacked``: ∂ID/∂q at q̈.
    """
    if not (plain(q) and plain(v) and plain(a) and plain(tau_in) and plain_rows(fext)):
        return INPUT_STRIDED
    nv = model_sizes(packed)[2]
    if not (writeable_matrix(out, 5 * nv + 2, nv) and apart_from_state(out, q, v, a, fext)
            and apart(out, tau_in)):
        return OUTPUT_REFUSED
    status = check_inputs(packed, q, v, a, fext, 5) or check_vector(tau_in, nv, 4)
    if status:
        return status
    Minv = out[0:nv]
    G = stacked[0:nv]
    _forward_and_inertia_passes(packed, ws, dws, bws, FP, X, XD, q, v, a, tau_in, fext, Minv,
                                out[5 * nv + 1])
    _derivative_pass(packed, ws, dws, bws, X, XD, out[5 * nv], out[nv:2 * nv],
                     out[2 * nv:3 * nv], G)
    if nv == 0:
        return 0
    # Eq. 24: ∂FD/∂q = -M⁻¹ ∂ID/∂q |q̈ ;  ∂FD/∂q̇ = -M⁻¹ ∂ID/∂q̇ (= dtau_dv, see above)
    minus_minv_product(packed, Minv, G, out[3 * nv:4 * nv])
    minus_minv_product(packed, Minv, out[2 * nv:3 * nv], out[4 * nv:5 * nv])
    return matrix_status(out)                 # every result, τ and q̈ included


@declare
def compute_all(model, q, v, *, a=None, tau, fext=None, data=None):
    """
    Compute τ, q̈, M⁻¹ and the derivatives of inverse and forward dynamics at one state.

    Each result equals the separate function's (:func:`rbd_ros.rnea`, :func:`rbd_ros.aba`,
    :func:`rbd_ros.minv`, :func:`rbd_ros.rnea_derivatives`, :func:`rbd_ros.aba_derivatives`) up
    to rounding, for 10-25 % more than ``aba_derivatives`` alone (whose kernel shares the same
    passes). ∂/∂q is taken in the tangent space (see ``rnea_derivatives``).

    Parameters
    ----------
    model, q, v : ...
        Shared by the calls: ``rbd_ros.algorithms.entries.SHARED_PARAMETERS``.
    a : array_like, shape ``(nv,)``, or None
        Keyword only: the joint accelerations (rad/s², m/s²) of the inverse dynamics, laid out
        as ``v``. None (default): zeros (gravity and Coriolis compensation).
    tau : array_like, shape ``(nv,)``
        Keyword only: the joint torques (N·m) and forces (N) of the forward dynamics; with a
        floating base, the first 6 (a planar base: 3) are the spatial force [f; n] (N, N·m) on
        the base in the base frame.
    fext : array_like, shape ``(nb, 6)``, or None
        External spatial forces [f; n] (N, N·m), one row per body in ``model.body_names`` order
        (nb = ``model.nbodies``): the force the environment exerts on the body, in the body's
        frame (that of the joint that moves it), the moment about its origin. Applies to both ID
        and FD, as for :func:`rbd_ros.rnea`. None (default): no external force.
    data : ...
        Shared by the calls: ``rbd_ros.algorithms.entries.SHARED_PARAMETERS``.

    Returns
    -------
    Dynamics
        ``Dynamics(tau, qdd, Minv, dtau_dq, dtau_dv, dqdd_dq, dqdd_dv)``: ``tau`` = ID(q, v, a)
        (nv,), ``qdd`` = FD(q, v, tau) (nv,) for the given ``tau``, ``Minv`` = M(q)⁻¹,
        ``dtau_dq``, ``dtau_dv`` = ∂ID/∂q, ∂ID/∂q̇ at (q, v, a) and ``dqdd_dq``, ``dqdd_dv`` =
        ∂FD/∂q, ∂FD/∂q̇ at (q, v, tau), each (nv, nv). The arrays are views of one block, valid
        until the caller drops them (not reused).

    Raises
    ------
    ValueError
        ... the shared refusals: ``rbd_ros.algorithms.entries.SHARED_REFUSALS``.

    """


@kernel(int64(f64_2d_ro, f64_2d, f64_1d, f64_1d, f64_1d, f64_1d, f64_2d, f64_1d, f64_1d))
def inverse_and_forward_kernel(packed, ws, q, v, a, tau_in, fext, tau, qdd):
    nv = model_sizes(packed)[2]
    if not (writeable_vector(tau, nv) and writeable_vector(qdd, nv) and apart(tau, qdd)
            and apart_from_state(tau, q, v, a, fext) and apart(tau, tau_in)
            and apart_from_state(qdd, q, v, a, fext) and apart(qdd, tau_in)):
        return OUTPUT_REFUSED
    # statuses name an argument by position (* 4): renumber to this kernel's (q, v, a, tau, fext)
    # (those past the argument positions, a refusal's or a result's, are kept)
    status = rnea_kernel(packed, ws, q, v, a, fext, tau)
    if status:
        position = status // 4
        return (5 if position == 4 else position) * 4 + status % 4
    status = aba_kernel(packed, ws, q, v, tau_in, fext, qdd)
    if status:
        position = status // 4
        return (position + 1 if 3 <= position < REFUSAL_POSITION else position) * 4 + status % 4
    return 0


@declare
def inverse_and_forward_dynamics(model, q, v, *, a, tau, fext=None, data=None):
    """
    Return (ID(q, v, a), FD(q, v, tau)) in one call.

    That is what a node needs when it publishes torques and accelerations but no matrices
    (cheaper than :func:`compute_all`): the results of :func:`rbd_ros.rnea` and
    :func:`rbd_ros.aba`.

    Parameters
    ----------
    model, q, v : ...
        Shared by the calls: ``rbd_ros.algorithms.entries.SHARED_PARAMETERS``.
    a : array_like, shape ``(nv,)``
        Keyword only: the joint accelerations (rad/s², m/s²) of the inverse dynamics, laid out
        as ``v``.
    tau : array_like, shape ``(nv,)``
        Keyword only: the joint torques (N·m) and forces (N) of the forward dynamics; with a
        floating base, the first 6 (a planar base: 3) are the spatial force [f; n] (N, N·m) on
        the base in the base frame.
    fext : array_like, shape ``(nb, 6)``, or None
        External spatial forces [f; n] (N, N·m), one row per body in ``model.body_names`` order
        (nb = ``model.nbodies``): the force the environment exerts on the body, in the body's
        frame (that of the joint that moves it), the moment about its origin. Applies to both ID
        and FD. None (default): no external force.
    data : ...
        Shared by the calls: ``rbd_ros.algorithms.entries.SHARED_PARAMETERS``.

    Returns
    -------
    tau_id : numpy.ndarray, shape ``(nv,)``
        ID(q, v, a) (N·m, N), as :func:`rbd_ros.rnea` returns it.
    qdd : numpy.ndarray, shape ``(nv,)``
        FD(q, v, tau) (rad/s², m/s²), as :func:`rbd_ros.aba` returns it.

    Raises
    ------
    ValueError
        ... the shared refusals: ``rbd_ros.algorithms.entries.SHARED_REFUSALS``.

    """
