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
from .._jit import f64_1d, f64_2d, f64_2d_ro, helper, int64, kernel
from ..model.layout import P_GRAVITY, P_IV, P_PARENT, P_THETA, W_OA, W_OF, W_OI, W_OM, W_OV
from ..model.spatial import (act_force, act_inv_motion, add6, cross_force, cross_motion,
                             inertia_apply, load6, load10, sub6)
from ..model.se3 import cross3, rot3, rot3_t, se3_load, se3_store, store6
from .common import (INPUT_STRIDED, OUTPUT_REFUSED, apart, apart_from_state, begin_state_pass,
                     check_configuration, check_vector, configuration_status, model_sizes, plain,
                     set_world, vector_status, writeable_vector)
from .joints import jcalc_local, joint_force_local, joint_nv, joint_placement_local
from .entries import declare


@helper
def body_motion_step(packed, ws, q, v, a, i):
    """
    Run lines 6-9 for body i: (v_i, a_i) in its own frame.

    Returns (^λX_i, v_i, a_i), which the caller stores (W_OM, W_OV, W_OA) once it has
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
def rnea_passes(packed, ws, q, v, a, fext, tau):
    """Run lines 5-17 (the inputs checked, the world row set): τ into ``tau``."""
    nb = packed.shape[0] - 1
    for i in range(nb):                                            # line 5
        X, vi, ai = body_motion_step(packed, ws, q, v, a, i)       # lines 6-9 (c_J = 0)
        inertia = load10(packed, i, P_THETA)
        f = add6(inertia_apply(inertia, ai),
                 cross_force(vi, inertia_apply(inertia, vi)))     # lines 10-11
        if fext.shape[0]:
            f = sub6(f, load6(fext, i, 0))
        se3_store(ws, i, W_OM, X)                    # read again by lines 12-17
        store6(ws, i, W_OV, vi)
        store6(ws, i, W_OA, ai)
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


@kernel(int64(f64_2d_ro, f64_2d, f64_1d, f64_1d, f64_1d, f64_2d, f64_1d))
def rnea_kernel(packed, ws, q, v, a, fext, tau):
    if not (writeable_vector(tau, model_sizes(packed)[2]) and apart_from_state(tau, q, v, a, fext)):
        return OUTPUT_REFUSED
    status = begin_state_pass(packed, ws, q, v, a, fext)          # and lines 2-3
    if status:
        return status
    rnea_passes(packed, ws, q, v, a, fext, tau)
    return vector_status(tau)


@kernel(int64(f64_2d_ro, f64_2d, f64_1d, f64_1d, f64_1d))
def nonlinear_effects_kernel(packed, ws, q, v, tau):
    """
    RNEA at q̈ = 0 without external forces: 5 arrays to type instead of 7.

    ``tau``, zeroed, serves as q̈ = 0: the forward pass reads it before the backward pass
    writes the torques into it.
    """
    _, nq, nv = model_sizes(packed)
    if not (writeable_vector(tau, nv) and apart(tau, q) and apart(tau, v)):
        return OUTPUT_REFUSED
    status = check_configuration(packed, q, nq, 1) or check_vector(v, nv, 2)
    if status:
        return status
    set_world(packed, ws)
    tau[:] = 0.0
    rnea_passes(packed, ws, q, v, tau, ws[:0, :6], tau)
    return vector_status(tau)


@declare
def rnea(model, q, v, a, fext=None, *, data=None):
    """
    Return the joint torques τ = ID(q, v, a): inverse dynamics by the RNEA.

    Pinocchio's ``rnea(model, data, q, v, a[, fext])``, with gravity ``model.gravity``.

    Parameters
    ----------
    model, q, v, a, fext, data : ...
        Shared by the calls: ``rbd_ros.algorithms.entries.SHARED_PARAMETERS``.

    Returns
    -------
    tau : numpy.ndarray, shape ``(nv,)``
        The joint torques (N·m) and forces (N) that produce ``a`` at (q, v) under gravity and
        ``fext``; with a floating base, the first 6 (a planar base: 3) are the spatial force
        [f; n] (N, N·m) the base needs, in the base frame.

    Raises
    ------
    ValueError
        ... the shared refusals: ``rbd_ros.algorithms.entries.SHARED_REFUSALS``.

    Notes
    -----
    With mimic joints (coupled), the reduced system's τ_r = Gᵀ τ at the tree's state
    (a leader's torque carries its followers' loads).

    """


@declare
def nonlinear_effects(model, q, v, *, data=None):
    """
    Return the Coriolis, centrifugal and gravity torques: RNEA at zero acceleration.

    Pinocchio's ``nonLinearEffects(model, data, q, v)``: b(q, v) = C(q, v) v + g(q).

    Parameters
    ----------
    model, q, v, data : ...
        Shared by the calls: ``rbd_ros.algorithms.entries.SHARED_PARAMETERS``.

    Returns
    -------
    tau : numpy.ndarray, shape ``(nv,)``
        ``rnea(model, q, v, zeros)`` (N·m, N), laid out as ``rnea``'s result.

    Raises
    ------
    ValueError
        ... the shared refusals: ``rbd_ros.algorithms.entries.SHARED_REFUSALS``.

    """


# Gravity torques: Algorithm 1 at q̇ = q̈ = 0 (Pinocchio's computeGeneralizedGravity), its own
# kernel because most of the RNEA drops out. With v = 0, lines 8-9 leave a_i = ^iX_λ a_λ, the
# pure linear -g_i (gravity in body i's frame: a_0 = -a_g); line 10 gives f_i = I_i a_i =
# (m_i a_i, h_i × a_i), h_i = m_i c_i the first moment. Summed over a subtree (lines 16-17),
# these forces are (M a_i, H × a_i) with M the subtree's mass and H its first moment about
# body i's origin: the backward pass carries the four numbers (M, H), not 6-vector forces,
# and τ_i = S_iᵀ (M a_i, H × a_i) (line 15). The workspace holds ^λX_i (W_OM), a_i (W_OA)
# and (M, H) (the first four numbers of W_OI, the composite inertia's (m, h)).


@helper
def gravity_forward_step(packed, ws, q, i):
    """Set ^λX_i, a_i = -g_i (lines 6-9 at q̇ = q̈ = 0) and (M, H) = (m_i, h_i) of body i."""
    X = joint_placement_local(packed, q, i)
    lam = int(packed[i, P_PARENT])
    ax, ay, az = rot3_t(X, ws[lam, W_OA], ws[lam, W_OA + 1], ws[lam, W_OA + 2])
    se3_store(ws, i, W_OM, X)
    ws[i, W_OA] = ax
    ws[i, W_OA + 1] = ay
    ws[i, W_OA + 2] = az
    for k in range(4):
        ws[i, W_OI + k] = packed[i, P_THETA + k]


@helper
def gravity_backward_step(packed, ws, tau, i):
    """Set τ_i = S_iᵀ (M a_i, H × a_i) and add body i's subtree (M, H) to its parent's."""
    mass, hx, hy, hz = ws[i, W_OI], ws[i, W_OI + 1], ws[i, W_OI + 2], ws[i, W_OI + 3]
    ax, ay, az = ws[i, W_OA], ws[i, W_OA + 1], ws[i, W_OA + 2]
    nx, ny, nz = cross3(hx, hy, hz, ax, ay, az)
    t = joint_force_local(packed, i, (mass * ax, mass * ay, mass * az, nx, ny, nz))
    iv = int(packed[i, P_IV])
    for k in range(joint_nv(packed, i)):
        tau[iv + k] = t[k]
    lam = int(packed[i, P_PARENT])
    if lam >= 0:                       # H about λ's origin, in λ's frame: R H + M p
        X = se3_load(ws, i, W_OM)
        px, py, pz = rot3(X, hx, hy, hz)
        ws[lam, W_OI] += mass
        ws[lam, W_OI + 1] += px + mass * X[9]
        ws[lam, W_OI + 2] += py + mass * X[10]
        ws[lam, W_OI + 3] += pz + mass * X[11]


@kernel(int64(f64_2d_ro, f64_2d, f64_1d, f64_1d))
def gravity_kernel(packed, ws, q, tau):
    if not plain(q):
        return INPUT_STRIDED
    nb, nv, status = configuration_status(packed, q)
    if not (writeable_vector(tau, nv) and apart(tau, q)):
        return OUTPUT_REFUSED
    if status:
        return status
    for k in range(3):                 # line 3: a_0 = -a_g
        ws[-1, W_OA + k] = -packed[-1, P_GRAVITY + k]
    for i in range(nb):
        gravity_forward_step(packed, ws, q, i)
    for i in range(nb - 1, -1, -1):
        gravity_backward_step(packed, ws, tau, i)
    return vector_status(tau)


@declare
def gravity_torques(model, q, *, data=None):
    """
    Return the gravity torques g(q): RNEA at zero velocity and acceleration.

    Pinocchio's ``computeGeneralizedGravity(model, data, q)``, with gravity ``model.gravity``.

    Parameters
    ----------
    model, q, data : ...
        Shared by the calls: ``rbd_ros.algorithms.entries.SHARED_PARAMETERS``.

    Returns
    -------
    tau : numpy.ndarray, shape ``(nv,)``
        ``rnea(model, q, zeros, zeros)`` (N·m, N), laid out as ``rnea``'s result.

    Raises
    ------
    ValueError
        ... the shared refusals: ``rbd_ros.algorithms.entries.SHARED_REFUSALS``.

    """
