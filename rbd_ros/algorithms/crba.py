"""
Joint-space inertia matrix: the composite-rigid-body algorithm (CRBA).

Featherstone, RBDA Table 6.2, in the world frame (as Pinocchio): composite inertias add
without a change of frame, and M[j, i] = S_jᵀ (I^c_i S_i) for every ancestor j of i needs
no force transform either, because all S and I^c are expressed in the same frame.
"""
import numpy as np

from .. import _checks
from .._jit import f64_1d, f64_2d, f64_2d_ro, int64, kernel
from ..model import P_IV, P_PARENT, P_THETA, W_OI, W_OM, W_OS
from ..spatial import add10, inertia_act, inertia_apply, load10, se3_store, store6, store10
from .common import check_configuration, mirror_upper, model_sizes, placement_step
from .joints import joint_nv, project_force, subspace_column


@kernel(int64(f64_2d_ro, f64_2d, f64_1d, f64_2d))
def crba_kernel(packed, ws, q, M):
    nb, nq, _ = model_sizes(packed)
    status = check_configuration(packed, q, nq, 1)
    if status:
        return status
    for i in range(nb):                     # placements; I^c_i = I_i, in the world frame
        oM, oS = placement_step(packed, ws, q, i)
        oI = inertia_act(oM, load10(packed, i, P_THETA))
        se3_store(ws, i, W_OM, oM)
        store6(ws, i, W_OS, oS)
        store10(ws, i, W_OI, oI)
    M[:, :] = 0.0                           # bodies on different branches do not couple
    for i in range(nb - 1, -1, -1):
        Ic = load10(ws, i, W_OI)
        iv = int(packed[i, P_IV])
        for k in range(joint_nv(packed, i)):
            F = inertia_apply(Ic, subspace_column(packed, ws, i, k))      # F = I^c_i S_i
            project_force(packed, ws, i, F, M, iv + k, k + 1)          # the upper triangle
            j = int(packed[i, P_PARENT])
            while j >= 0:                                               # M[j, i] = S_jᵀ F
                project_force(packed, ws, j, F, M, iv + k, 6)
                j = int(packed[j, P_PARENT])
        lam = int(packed[i, P_PARENT])
        if lam >= 0:
            store10(ws, lam, W_OI, add10(load10(ws, lam, W_OI), Ic))   # I^c_λ += I^c_i
    return mirror_upper(M)                  # and M's status


def crba(model, q, *, data=None):
    """Return the joint-space inertia matrix M(q), full and symmetric (nv × nv)."""
    if model.coupling is not None:     # mimic joints: the reduced system (rbd_ros.coupling)
        return model.coupling.crba(model, q, data)
    M = np.empty((model.nv, model.nv))
    data = model.data if data is None else _checks.workspace(model, data)
    try:
        status = crba_kernel(model.packed, data.body, q, M)
    except (TypeError, ValueError):   # not float64 C arrays: convert once
        q = _checks.vector(q, "q")
        status = crba_kernel(model.packed, data.body, q, M)
    if status:
        raise _checks.input_error("crba", status, model, ("q",), (q,))
    return M
