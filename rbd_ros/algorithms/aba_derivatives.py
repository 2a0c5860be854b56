"""
Analytical partial derivatives of forward dynamics: ∂q̈/∂q, ∂q̈/∂q̇ and ∂q̈/∂τ = M⁻¹.

Section IV of the RSS 2018 seed: differentiating ID(q, q̇, FD(q, q̇, τ)) = τ (Eq. 18-23) gives

    ∂FD/∂u |(q, q̇, τ) = -M⁻¹(q) ∂ID/∂u |(q, q̇, q̈ = FD(q, q̇, τ))      (Eq. 24), u = q or q̇,

with ∂ID/∂u from Algorithms 2-3 (``rnea_derivatives``), M⁻¹ without forming M (``minv``,
Carpentier 2018) and q̈ from ABA. As in ``compute_all`` the passes are shared, each step
being the named step of its own algorithm, so placements, velocities and world inertias are
computed once (running ABA, the RNEA derivatives and M⁻¹ in turn cost 25-35 % more, arm7):

* pass 1 (forward): ABA pass 1 and the acceleration-free per-dof and per-body terms of
  Algorithm 2 (S, dV, dW, I_i, B_i: ``velocity_derivative_step``).
* pass 2 (backward): ABA pass 2 with the M⁻¹ backward pass on the same I^A, U, D⁻¹.
* pass 3 (forward): ABA pass 3 (q̈, a_i), M⁻¹'s second forward pass, the dA columns at q̈
  (A2 l.5) and the force transmitted by joint i at q̈, F_i = I^A_i a_i + p^A_i (the
  articulated-body equation, RBDA §7.1): the subtree sum of the body forces
  I_k a_k + v_k ×* I_k v_k - f_ext,k that Algorithm 1 l.10-17 builds, without the sum.
  For the free-flyer root F = S⁻ᵀ τ, the joint force its pass 3 solves with.
* pass 4 (backward): Algorithm 3 at q̈ (``derivative_backward_step``).
* Eq. 24: the two products with -M⁻¹ by BLAS dgemm (``rbd_ros._blas``), by the blocks of a
  fixed base's independent limbs (``limb_blocks``).
"""
from .._jit import f64_1d, f64_2d, f64_3d, f64_2d_ro, helper, int64, kernel
from ..model.layout import D_DA, P_IV, P_PARENT, W_IA, W_OF, W_OM, W_OV
from ..model.spatial import add6, load6
from ..model.matrix6 import load6_vector, mat6_apply
from ..model.se3 import se3_load, store6
from .aba import aba_forward_step, acceleration_step
from .common import (INPUT_STRIDED, OUTPUT_REFUSED, apart_from_state, begin_state_pass,
                     matrix_status, mirror_upper, model_sizes, plain, plain_rows,
                     square_outputs_fit, vector_status)
from .joints import joint_force_in_world, joint_spans_all_motions
from .limb_blocks import minus_minv_product
from .minv import articulated_and_minv_backward_pass, minv_forward_step
from .rnea_derivatives import (acceleration_columns_step, derivative_backward_step,
                               subtree_sum_step, velocity_derivative_step)
from .entries import declare


@helper
def _forward_and_inertia_passes(packed, ws, dws, bws, FP, q, v, tau, fext, qdd, Minv):
    """Run passes 1-3 (module docstring); W_OF holds F_i at q̈ after pass 3."""
    nb, _, nv = model_sizes(packed)
    for i in range(nb):                       # pass 1: ABA pass 1, Algorithm 2 without a
        oM, oS, v_parent, vJ, ov, oI, oh, bias = aba_forward_step(packed, ws, q, v, fext, i)
        velocity_derivative_step(packed, ws, dws, bws, i, oM, oS, v_parent, ov, oI, oh)
    articulated_and_minv_backward_pass(packed, ws, FP, Minv, tau)    # pass 2
    for i in range(nb):                       # pass 3: ABA pass 3, M⁻¹ second forward pass
        a_parent, oa = acceleration_step(packed, ws, tau, qdd, i)
        minv_forward_step(packed, ws, FP, Minv, i, nv)
        acceleration_columns_step(packed, dws, i, a_parent,
                                  load6(ws, int(packed[i, P_PARENT]), W_OV))   # A2 l.5 at q̈
        if joint_spans_all_motions(packed, i):          # I^A is factorized: F = S⁻ᵀ τ
            F = joint_force_in_world(packed, i, se3_load(ws, i, W_OM),
                                     load6_vector(tau, int(packed[i, P_IV])))
        else:
            F = add6(mat6_apply(ws, i, W_IA, oa), load6(ws, i, W_OF))
        store6(ws, i, W_OF, F)                # p^A_i is not read again
    return mirror_upper(Minv)


@helper
def _derivative_pass(packed, ws, dws, bws, dtau_dq, dtau_dv, M):
    """Pass 4: Algorithm 3 at q̈ with the joint forces F_i (W_OF); M is scratch."""
    dtau_dq[:, :] = 0.0                     # joints on different branches do not couple
    dtau_dv[:, :] = 0.0
    for i in range(model_sizes(packed)[0] - 1, -1, -1):
        F = load6(ws, i, W_OF)
        derivative_backward_step(packed, ws, dws, bws, i, F, dws, D_DA, dtau_dq, dtau_dv, M,
                                 False, F, dws, D_DA, M)
        subtree_sum_step(packed, ws, bws, i)


@kernel(int64(f64_2d_ro, f64_2d, f64_2d, f64_2d, f64_3d, f64_2d, f64_1d, f64_1d, f64_1d, f64_2d,
              f64_2d, f64_2d, f64_2d))
def aba_derivatives_kernel(packed, ws, dws, bws, FP, tmp, q, v, tau, fext, dqdd_dq, dqdd_dv,
                           Minv):
    """tmp: (3 nv + 1, nv) scratch: ∂τ/∂q, ∂τ/∂q̇, M stacked, then q̈ in the last row."""
    if not (plain(q) and plain(v) and plain(tau) and plain_rows(fext)):
        return INPUT_STRIDED
    nv = model_sizes(packed)[2]
    if not (square_outputs_fit(dqdd_dq, dqdd_dv, Minv, nv)
            and apart_from_state(dqdd_dq, q, v, tau, fext)
            and apart_from_state(dqdd_dv, q, v, tau, fext)
            and apart_from_state(Minv, q, v, tau, fext)):
        return OUTPUT_REFUSED
    status = begin_state_pass(packed, ws, q, v, tau, fext)
    if status:
        return status
    qdd = tmp[3 * nv]
    status = _forward_and_inertia_passes(packed, ws, dws, bws, FP, q, v, tau, fext, qdd, Minv)
    dtau_dq = tmp[0:nv]
    dtau_dv = tmp[nv:2 * nv]
    _derivative_pass(packed, ws, dws, bws, dtau_dq, dtau_dv, tmp[2 * nv:3 * nv])
    # Eq. 24 by BLAS dgemm (~4x faster than loops at nv = 38), limb by limb
    minus_minv_product(packed, Minv, dtau_dq, dqdd_dq)
    minus_minv_product(packed, Minv, dtau_dv, dqdd_dv)
    return (status or vector_status(qdd) or matrix_status(dqdd_dq)
            or matrix_status(dqdd_dv))


@declare
def aba_derivatives(model, q, v, tau, fext=None, *, data=None):
    """
    Return (∂q̈/∂q, ∂q̈/∂q̇, M⁻¹) of q̈ = FD(q, v, τ, fext), each nv × nv (M⁻¹ full, symmetric).

    Pinocchio's ``computeABADerivatives(model, data, q, v, tau[, fext])`` (``data.ddq_dq``,
    ``data.ddq_dv``, ``data.Minv``). ∂q̈/∂q is taken in the tangent space (see
    :func:`rnea_derivatives`).

    Parameters
    ----------
    model, q, v, tau, fext, data : ...
        Shared by the calls: ``rbd_ros.algorithms.entries.SHARED_PARAMETERS``.

    Returns
    -------
    dqdd_dq : numpy.ndarray, shape ``(nv, nv)``
        ∂q̈/∂q in the tangent space (1/s² per rad or m of each tangent coordinate).
    dqdd_dv : numpy.ndarray, shape ``(nv, nv)``
        ∂q̈/∂q̇ (1/s).
    Minv : numpy.ndarray, shape ``(nv, nv)``
        ∂q̈/∂τ = M(q)⁻¹, as :func:`rbd_ros.minv` returns it.

    Raises
    ------
    ValueError
        ... the shared refusals: ``rbd_ros.algorithms.entries.SHARED_REFUSALS``.

    Notes
    -----
    With mimic joints (coupled), the derivatives of the reduced system's q̈_r, solved exactly as
    :func:`rbd_ros.aba` solves it.

    """
