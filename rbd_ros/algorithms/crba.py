"""Joint-space inertia matrix: the composite-rigid-body algorithm (CRBA).

Featherstone, RBDA Table 6.2, in the world frame (as Pinocchio): composite inertias add
without a change of frame, and M[j, i] = S_jᵀ (I^c_i S_i) for every ancestor j of i needs
no force transform either, because all S and I^c are expressed in the same frame.
"""
import numpy as np

from .. import _checks
from .._jit import f64_1d, f64_2d, f64_2d_ro, int64, kernel
from ..model import FREE_FLYER, P_IV, P_PARENT, P_THETA, P_TYPE, W_OI, W_OM, W_OS
from ..spatial import (act_inv_force, act_motion, add10, dot6, inertia_act, inertia_apply,
                       load6, load10, se3_load, se3_store, store6, store10)
from .common import check_configuration, jcalc, model_sizes

UNIT_MOTIONS = ((1.0, 0.0, 0.0, 0.0, 0.0, 0.0), (0.0, 1.0, 0.0, 0.0, 0.0, 0.0),
                (0.0, 0.0, 1.0, 0.0, 0.0, 0.0), (0.0, 0.0, 0.0, 1.0, 0.0, 0.0),
                (0.0, 0.0, 0.0, 0.0, 1.0, 0.0), (0.0, 0.0, 0.0, 0.0, 0.0, 1.0))


@kernel(int64(f64_2d_ro, f64_2d, f64_1d, f64_2d))
def crba_kernel(packed, ws, q, M):
    nb, nq, nv = model_sizes(packed)
    status = check_configuration(packed, q, nq, 1)
    if status:
        return status
    for i in range(nb):                     # placements; I^c_i = I_i, in the world frame
        lam = int(packed[i, P_PARENT])
        oM, oS = jcalc(packed, q, i, se3_load(ws, lam, W_OM))
        se3_store(ws, i, W_OM, oM)
        store6(ws, i, W_OS, oS)
        store10(ws, i, W_OI, inertia_act(oM, load10(packed, i, P_THETA)))
    M[:, :] = 0.0
    for i in range(nb - 1, -1, -1):
        Ic = load10(ws, i, W_OI)
        iv = int(packed[i, P_IV])
        if int(packed[i, P_TYPE]) == FREE_FLYER:
            # S = Ad(oM): column k of I^c S is I^c acting on the k-th base-frame unit twist,
            # and Sᵀ f is f expressed in the base frame
            oM = se3_load(ws, i, W_OM)
            for k in range(6):
                col = act_inv_force(oM, inertia_apply(Ic, act_motion(oM, UNIT_MOTIONS[k])))
                for r in range(6):
                    M[iv + r, iv + k] = col[r]
        else:
            F = inertia_apply(Ic, load6(ws, i, W_OS))                 # F = I^c_i S_i
            M[iv, iv] = dot6(load6(ws, i, W_OS), F)
            j = int(packed[i, P_PARENT])
            while j >= 0:                                              # M[j, i] = S_jᵀ F
                jv = int(packed[j, P_IV])
                if int(packed[j, P_TYPE]) == FREE_FLYER:
                    col = act_inv_force(se3_load(ws, j, W_OM), F)
                    for r in range(6):
                        M[jv + r, iv] = col[r]
                else:
                    M[jv, iv] = dot6(load6(ws, j, W_OS), F)
                j = int(packed[j, P_PARENT])
        lam = int(packed[i, P_PARENT])
        if lam >= 0:
            store10(ws, lam, W_OI, add10(load10(ws, lam, W_OI), Ic))   # I^c_λ += I^c_i
    for r in range(nv):                      # mirror the upper triangle
        for c in range(r):
            M[r, c] = M[c, r]
    return 0


def crba(model, q, *, data=None):
    """Return the joint-space inertia matrix M(q), full and symmetric (nv × nv)."""
    M = np.empty((model.nv, model.nv))
    data = _checks.workspace(model, data)
    try:
        status = crba_kernel(model.packed, data.body, q, M)
    except (TypeError, ValueError):   # not float64 C arrays: convert once
        q = _checks.vector(q, "q")
        status = crba_kernel(model.packed, data.body, q, M)
    if status:
        raise _checks.input_error("crba", status, model, ("q",), (q,))
    return M
