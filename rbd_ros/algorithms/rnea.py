"""Inverse dynamics: the recursive Newton-Euler algorithm (RNEA).

Algorithm 1 of the RSS 2018 seed (Featherstone, RBDA p. 96), evaluated in the world frame:
a body's inertia is brought to the world once, after which line 17 (f_λ += X* f_i) is a
plain sum. Line numbers below are those of Algorithm 1.
"""
import numpy as np

from .. import _checks
from .._jit import f64_1d, f64_2d, f64_2d_ro, int64, kernel
from ..model import FREE_FLYER, P_IV, P_PARENT, P_THETA, P_TYPE, W_OA, W_OF, W_OM, W_OS, W_OV
from ..spatial import (act_force, act_inv_force, act_motion, add6, axpy6, cross_force,
                       cross_motion, dot6, inertia_act, inertia_apply, load6, load6_vector, load10, scale6,
                       se3_load, se3_store, store6, sub6)
from .common import check_configuration, check_forces, check_vector, jcalc, model_sizes, set_world


@kernel(int64(f64_2d_ro, f64_2d, f64_1d, f64_1d, f64_1d, f64_2d, f64_1d))
def rnea_kernel(packed, ws, q, v, a, fext, tau):
    nb, nq, nv = model_sizes(packed)
    status = check_configuration(packed, q, nq, 1) or check_vector(v, nv, 2)
    status = status or check_vector(a, nv, 3) or check_forces(fext, nb, 4)
    if status:
        return status
    set_world(packed, ws)                                          # lines 2-3
    for i in range(nb):                                            # line 5
        lam = int(packed[i, P_PARENT])
        iv = int(packed[i, P_IV])
        v_parent = load6(ws, lam, W_OV)
        a_parent = load6(ws, lam, W_OA)
        oM, oS = jcalc(packed, q, i, se3_load(ws, lam, W_OM))       # lines 6-7
        if int(packed[i, P_TYPE]) == FREE_FLYER:
            # S = Ad(oM): the base twist and acceleration are given in the base frame
            vJ = act_motion(oM, load6_vector(v, iv))
            ov = add6(v_parent, vJ)
            oa = add6(add6(a_parent, act_motion(oM, load6_vector(a, iv))),
                      cross_motion(v_parent, vJ))
        else:
            vJ = scale6(v[iv], oS)
            ov = add6(v_parent, vJ)                                # line 8
            # line 9 with c_J = 0, and v_i × v_J = v_λ × v_J because v_J × v_J = 0
            oa = add6(axpy6(a[iv], oS, a_parent), cross_motion(v_parent, vJ))
        oI = inertia_act(oM, load10(packed, i, P_THETA))
        f = add6(inertia_apply(oI, oa), cross_force(ov, inertia_apply(oI, ov)))   # lines 10-11
        if fext.shape[0]:
            f = sub6(f, act_force(oM, load6(fext, i, 0)))
        se3_store(ws, i, W_OM, oM)
        store6(ws, i, W_OS, oS)
        store6(ws, i, W_OV, ov)
        store6(ws, i, W_OA, oa)
        store6(ws, i, W_OF, f)
    for i in range(nb - 1, -1, -1):                                # line 14
        f = load6(ws, i, W_OF)
        iv = int(packed[i, P_IV])
        if int(packed[i, P_TYPE]) == FREE_FLYER:
            f_local = act_inv_force(se3_load(ws, i, W_OM), f)      # Sᵀ f: f in the base frame
            for k in range(6):
                tau[iv + k] = f_local[k]
        else:
            tau[iv] = dot6(load6(ws, i, W_OS), f)                  # line 15
        lam = int(packed[i, P_PARENT])
        if lam >= 0:                                               # lines 16-17
            store6(ws, lam, W_OF, add6(load6(ws, lam, W_OF), f))
    return 0


_NAMES = ("q", "v", "a", "fext")


def rnea(model, q, v, a, fext=None):
    """Joint torques τ = ID(q, v, a). ``fext`` (nbodies, 6): external spatial forces on the
    bodies, each in its body (joint) frame, linear part first."""
    tau = np.empty(model.nv)
    data = model.data
    if fext is None:
        fext = data.no_fext
    try:
        status = rnea_kernel(model.packed, data.body, q, v, a, fext, tau)
    except (TypeError, ValueError):   # not float64 C arrays: convert once
        q, v, a = _checks.vectors(_NAMES, q, v, a)
        fext = _checks.matrix(fext, "fext")
        status = rnea_kernel(model.packed, data.body, q, v, a, fext, tau)
    if status:
        raise _checks.input_error("rnea", status, model, _NAMES, (q, v, a, fext))
    return tau


def nonlinear_effects(model, q, v):
    """Coriolis, centrifugal and gravity torques: RNEA at zero acceleration."""
    return rnea(model, q, v, model.data.zeros_v)


def gravity_torques(model, q):
    """Gravity torques: RNEA at zero velocity and acceleration."""
    zeros = model.data.zeros_v
    return rnea(model, q, zeros, zeros)
