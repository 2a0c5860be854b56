"""
Analytical partial derivatives of forward dynamics: ∂q̈/∂q, ∂q̈/∂q̇ and ∂q̈/∂τ = M⁻¹.

Section IV of the RSS 2018 seed: differentiating ID(q, q̇, FD(q, q̇, τ)) = τ (Eq. 18-23) gives

    ∂FD/∂u |(q, q̇, τ) = -M⁻¹(q) ∂ID/∂u |(q, q̇, q̈ = FD(q, q̇, τ))      (Eq. 24), u = q or q̇,

so one kernel runs ABA (q̈), the RNEA derivatives at that q̈ (Algorithms 2-3, see
``rnea_derivatives``), M⁻¹ without forming M (``minv``, Carpentier 2018), and the two
products with -M⁻¹ (BLAS dgemm, ``rbd_ros._blas``).
``compute_all`` shares these passes instead of running them in turn.
"""
import numpy as np

from .. import _checks
from .._blas import gemm
from .._jit import f64_1d, f64_2d, f64_3d, f64_2d_ro, int64, kernel
from .aba import aba_kernel
from .common import matrix_status
from .minv import minv_kernel
from .rnea_derivatives import rnea_derivatives_kernel


@kernel(int64(f64_2d_ro, f64_2d, f64_2d, f64_2d, f64_3d, f64_2d, f64_1d, f64_1d, f64_1d, f64_2d,
              f64_2d, f64_2d, f64_2d))
def aba_derivatives_kernel(packed, ws, dws, bws, FP, tmp, q, v, tau, fext, dqdd_dq, dqdd_dv,
                           Minv):
    """tmp: (3 nv + 1, nv) scratch: ∂τ/∂q, ∂τ/∂q̇, M stacked, then q̈ in the last row."""
    nv = Minv.shape[0]
    qdd = tmp[3 * nv]
    status = aba_kernel(packed, ws, q, v, tau, fext, qdd)                   # q̈ = FD(q, q̇, τ)
    if status:
        return status
    dtau_dq = tmp[0:nv]
    dtau_dv = tmp[nv:2 * nv]
    M = tmp[2 * nv:3 * nv]
    status = rnea_derivatives_kernel(packed, ws, dws, bws, q, v, qdd, fext,
                                     dtau_dq, dtau_dv, M)                   # ∂ID/∂u at q̈
    if status:
        return status
    status = minv_kernel(packed, ws, FP, q, Minv)
    if status:
        return status
    # Eq. 24 by BLAS dgemm (~4x faster than loops at nv = 38)
    gemm(-1.0, Minv, dtau_dq, dqdd_dq)
    gemm(-1.0, Minv, dtau_dv, dqdd_dv)
    return matrix_status(dqdd_dq) or matrix_status(dqdd_dv)


_NAMES = ("q", "v", "tau", "fext")


def aba_derivatives(model, q, v, tau, fext=None, *, data=None):
    """
    Return (∂q̈/∂q, ∂q̈/∂q̇, M⁻¹) of q̈ = FD(q, v, τ, fext), each nv × nv (M⁻¹ full, symmetric).

    ∂q̈/∂q is taken in the tangent space (see :func:`rnea_derivatives`); ``fext`` as for
    :func:`rbd_ros.aba`.
    """
    if model.coupling is not None:     # mimic joints: the reduced system (rbd_ros.coupling)
        return model.coupling.aba_derivatives(model, q, v, tau, fext, data)
    nv = model.nv
    dq, dv, Minv = np.empty((nv, nv)), np.empty((nv, nv)), np.empty((nv, nv))
    data = model.data if data is None else _checks.workspace(model, data)
    fext = data.no_fext if fext is None else fext
    try:                              # the call written out: no helper's call in between
        status = aba_derivatives_kernel(model.packed, data.body, data.dof, data.body_matrix,
                                        data.force_sets, data.stacked, q, v, tau, fext, dq, dv,
                                        Minv)
    except (TypeError, ValueError):   # not float64 C arrays: convert once
        q, v, tau, fext = _checks.state(_NAMES, q, v, tau, fext)
        status = aba_derivatives_kernel(model.packed, data.body, data.dof, data.body_matrix,
                                        data.force_sets, data.stacked, q, v, tau, fext, dq, dv,
                                        Minv)
    if status:
        raise _checks.input_error("aba_derivatives", status, model, _NAMES, (q, v, tau, fext))
    return dq, dv, Minv
