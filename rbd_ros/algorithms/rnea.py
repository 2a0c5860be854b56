"""
Inverse dynamics: the recursive Newton-Euler algorithm (RNEA).

Algorithm 1 of the RSS 2018 seed (Featherstone, RBDA p. 96), in body (joint) frames as
written there: each body's inertia is constant in its own frame, so unlike the world-frame
kernels nothing has to be moved to the world, which makes this the cheapest form of plain
inverse dynamics (about 17 % fewer operations per body than the world-frame version used by
the derivatives). Line numbers below are those of Algorithm 1.

Workspace use: W_OM holds ^λX_i (the placement of body i in its parent), W_OV, W_OA, W_OF
the body's velocity, acceleration and force in its own frame. The world row (-1) supplies
v_0 = 0 and a_0 = -a_g, expressed in the world frame, which is the parent frame of a root.
"""
from .. import _checks
from .._jit import f64_1d, f64_2d, f64_2d_ro, helper, int64, kernel
from ..model import P_IV, P_PARENT, P_THETA, W_OA, W_OF, W_OM, W_OV
from ..spatial import (act_force, act_inv_motion, add6, cross_force, cross_motion,
                       inertia_apply, load6, load10, se3_load, se3_store, store6, sub6)
from .common import begin_state_pass, vector_status
from .joints import jcalc_local, joint_force_local, joint_nv


@helper
def body_motion_step(packed, ws, q, v, a, i):
    """
    Run lines 6-9 for body i: (v_i, a_i) in its own frame.

    Returns (^λX_i, v_i, a_i), which the caller stores (``store_body_motion``) once it has
    read what else it needs. This is also the forward pass of the regressors.
    """
    lam = int(packed[i, P_PARENT])
    # lines 6-7: jcalc, ^iX_λ(i) = X_J X_T (stored as its inverse, the placement of i in
    # λ(i)); S_i the unit axis (the identity for the free-flyer root); v_J = S q̇
    X, vJ, aJ = jcalc_local(packed, q, v, a, i)
    vi = add6(act_inv_motion(X, load6(ws, lam, W_OV)), vJ)                       # line 8
    ai = add6(add6(act_inv_motion(X, load6(ws, lam, W_OA)), aJ), cross_motion(vi, vJ))  # l.9
    return X, vi, ai


@helper
def store_body_motion(ws, i, X, vi, ai):
    """Store ^λX_i, v_i, a_i of body i at W_OM, W_OV, W_OA."""
    se3_store(ws, i, W_OM, X)
    store6(ws, i, W_OV, vi)
    store6(ws, i, W_OA, ai)


@kernel(int64(f64_2d_ro, f64_2d, f64_1d, f64_1d, f64_1d, f64_2d, f64_1d))
def rnea_kernel(packed, ws, q, v, a, fext, tau):
    status = begin_state_pass(packed, ws, q, v, a, fext)          # and lines 2-3
    if status:
        return status
    nb = packed.shape[0] - 1
    for i in range(nb):                                            # line 5
        X, vi, ai = body_motion_step(packed, ws, q, v, a, i)       # lines 6-9 (c_J = 0)
        inertia = load10(packed, i, P_THETA)
        f = add6(inertia_apply(inertia, ai),
                 cross_force(vi, inertia_apply(inertia, vi)))     # lines 10-11
        if fext.shape[0]:
            f = sub6(f, load6(fext, i, 0))
        store_body_motion(ws, i, X, vi, ai)
        store6(ws, i, W_OF, f)
    for i in range(nb - 1, -1, -1):                                # line 14
        f = load6(ws, i, W_OF)
        iv = int(packed[i, P_IV])
        t = joint_force_local(packed, i, f)                        # line 15: τ_i = S_iᵀ f_i
        for k in range(joint_nv(packed, i)):
            tau[iv + k] = t[k]
        lam = int(packed[i, P_PARENT])
        if lam >= 0:                                               # lines 16-17
            store6(ws, lam, W_OF, add6(load6(ws, lam, W_OF),
                                       act_force(se3_load(ws, i, W_OM), f)))
    return vector_status(tau)


_NAMES = ("q", "v", "a", "fext")


def rnea(model, q, v, a, fext=None, *, data=None):
    """
    Return the joint torques τ = ID(q, v, a).

    ``fext`` (nbodies, 6): external spatial forces on the bodies, each in its body (joint)
    frame, linear part first. ``data``: the workspace (default: ``model.data``).
    """
    if model.coupling is not None:     # mimic joints: the reduced system (rbd_ros.coupling)
        return model.coupling.rnea(model, q, v, a, fext, data)
    return _checks.state_call("rnea", rnea_kernel, _NAMES, model, q, v, a, fext, data)


def nonlinear_effects(model, q, v, *, data=None):
    """Return the Coriolis, centrifugal and gravity torques: RNEA at zero acceleration."""
    return rnea(model, q, v, model.data.zeros_v, data=data)


def gravity_torques(model, q, *, data=None):
    """Return the gravity torques: RNEA at zero velocity and acceleration."""
    zeros = model.data.zeros_v
    return rnea(model, q, zeros, zeros, data=data)
