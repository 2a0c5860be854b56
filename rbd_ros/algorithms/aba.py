"""Forward dynamics: the articulated-body algorithm (ABA).

Featherstone, RBDA Table 7.1, in the world frame (as Pinocchio): the articulated inertia of
a child is added to its parent's without the 6×6 change of frame (X* I X) that dominates the
classic body-frame version. Pass numbers follow Table 7.1.
"""
import numpy as np

from .. import _checks
from .._jit import f64_1d, f64_2d, f64_2d_ro, int64, kernel
from ..model import (FREE_FLYER, P_IV, P_PARENT, P_THETA, P_TYPE, W_DINV, W_IA, W_OA, W_OC,
                     W_OF, W_OM, W_OS, W_OV, W_U, W_UU)
from ..spatial import (act_force, act_inv_motion, act_motion, add6, axpy6, cross_force,
                       cross_motion, dot6, inertia_act, inertia_apply, load6, load6_vector,
                       load10, mat6_add_sub_rank1, mat6_apply, mat6_cholesky, mat6_cholesky_solve, mat6_set_inertia,
                       scale6, se3_load, se3_store, store6, sub6)
from .common import check_configuration, check_forces, check_vector, jcalc, model_sizes, set_world


@kernel(int64(f64_2d_ro, f64_2d, f64_1d, f64_1d, f64_1d, f64_2d, f64_1d))
def aba_kernel(packed, ws, q, v, tau, fext, qdd):
    nb, nq, nv = model_sizes(packed)
    status = check_configuration(packed, q, nq, 1) or check_vector(v, nv, 2)
    status = status or check_vector(tau, nv, 3) or check_forces(fext, nb, 4)
    if status:
        return status
    set_world(packed, ws)
    # pass 1: velocities, velocity-product accelerations c, bias forces p^A = v ×* I v - f_ext
    for i in range(nb):
        lam = int(packed[i, P_PARENT])
        iv = int(packed[i, P_IV])
        v_parent = load6(ws, lam, W_OV)
        oM, oS = jcalc(packed, q, i, se3_load(ws, lam, W_OM))
        if int(packed[i, P_TYPE]) == FREE_FLYER:
            vJ = act_motion(oM, load6_vector(v, iv))
        else:
            vJ = scale6(v[iv], oS)
        ov = add6(v_parent, vJ)
        oI = inertia_act(oM, load10(packed, i, P_THETA))
        pA = cross_force(ov, inertia_apply(oI, ov))
        if fext.shape[0]:
            pA = sub6(pA, act_force(oM, load6(fext, i, 0)))
        se3_store(ws, i, W_OM, oM)
        store6(ws, i, W_OS, oS)
        store6(ws, i, W_OV, ov)
        store6(ws, i, W_OC, cross_motion(v_parent, vJ))
        store6(ws, i, W_OF, pA)
        mat6_set_inertia(ws, i, W_IA, oI)
    # pass 2: articulated inertias I^A and bias forces p^A, leaves to root
    for i in range(nb - 1, -1, -1):
        if int(packed[i, P_TYPE]) == FREE_FLYER:
            continue                                  # the root: solved in pass 3
        oS = load6(ws, i, W_OS)
        U = mat6_apply(ws, i, W_IA, oS)                # U = I^A S
        Dinv = 1.0 / dot6(oS, U)                       # D = Sᵀ U
        pA = load6(ws, i, W_OF)
        u = tau[int(packed[i, P_IV])] - dot6(oS, pA)   # u = τ - Sᵀ p^A
        store6(ws, i, W_U, U)
        ws[i, W_DINV] = Dinv
        ws[i, W_UU] = u
        lam = int(packed[i, P_PARENT])
        if lam >= 0:
            # I^a = I^A - U D⁻¹ Uᵀ ;  p^a = p^A + I^a c + U D⁻¹ u ;  both added to the parent
            c = load6(ws, i, W_OC)
            Ia_c = sub6(mat6_apply(ws, i, W_IA, c), scale6(Dinv * dot6(U, c), U))
            pa = add6(add6(pA, Ia_c), scale6(Dinv * u, U))
            store6(ws, lam, W_OF, add6(load6(ws, lam, W_OF), pa))
            mat6_add_sub_rank1(ws, lam, i, W_IA, U, Dinv)
    # pass 3: accelerations, root to leaves (gravity enters as the world's acceleration)
    for i in range(nb):
        lam = int(packed[i, P_PARENT])
        iv = int(packed[i, P_IV])
        a_in = add6(load6(ws, lam, W_OA), load6(ws, i, W_OC))     # a' = a_λ + c
        if int(packed[i, P_TYPE]) == FREE_FLYER:
            # the free root: I^A a = f_J - p^A with f_J = S^-T τ (τ given in the base frame)
            oM = se3_load(ws, i, W_OM)
            f_joint = act_force(oM, load6_vector(tau, iv))
            mat6_cholesky(ws, i, W_IA)
            oa = mat6_cholesky_solve(ws, i, W_IA, sub6(f_joint, load6(ws, i, W_OF)))
            a_local = act_inv_motion(oM, sub6(oa, a_in))
            for k in range(6):
                qdd[iv + k] = a_local[k]
        else:
            qdd_i = ws[i, W_DINV] * (ws[i, W_UU] - dot6(load6(ws, i, W_U), a_in))
            qdd[iv] = qdd_i
            oa = axpy6(qdd_i, load6(ws, i, W_OS), a_in)
        store6(ws, i, W_OA, oa)
    return 0


_NAMES = ("q", "v", "tau", "fext")


def aba(model, q, v, tau, fext=None, *, data=None):
    """Return the joint accelerations q̈ = FD(q, v, τ); ``fext``, ``data`` as for
    :func:`rbd_ros.rnea`."""
    qdd = np.empty(model.nv)
    data = _checks.workspace(model, data)
    if fext is None:
        fext = data.no_fext
    try:
        status = aba_kernel(model.packed, data.body, q, v, tau, fext, qdd)
    except (TypeError, ValueError):   # not float64 C arrays: convert once
        q, v, tau = _checks.vectors(_NAMES, q, v, tau)
        fext = _checks.matrix(fext, "fext")
        status = aba_kernel(model.packed, data.body, q, v, tau, fext, qdd)
    if status:
        raise _checks.input_error("aba", status, model, _NAMES, (q, v, tau, fext))
    return qdd
