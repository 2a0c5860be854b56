"""
Joint-space inertia matrix: the composite-rigid-body algorithm (CRBA).

Featherstone, RBDA Table 6.2, in body (joint) frames as written there (as Pinocchio's default
convention): the placements ^λX_i are local, so each is computed without its parent's (no
chain of world placements in the forward pass), and each body's constant inertia is moved
only once, into its parent's frame, when its composite inertia is added there. The column
F = I^c_i S_i then climbs the ancestors, F ← ^λX_j* F, and M[λ, i] = S_λᵀ F in each joint's
own frame (a dot product with the unit axis).

The world-frame version it replaced (every inertia moved to the world, M[j, i] = S_jᵀ F
without moving F) took longer on every robot measured: its forward pass alone, the serial
chain of world placements plus an inertia transform per body, cost more than the force
transforms up the ancestors (doc/benchmarks.md, "CRBA in body frames").
"""
from .._jit import f64_1d, f64_2d, f64_2d_ro, int64, kernel
from ..model.layout import P_IV, P_PARENT, P_THETA, W_OI, W_OM
from ..model.spatial import act_force, add10, inertia_act, inertia_apply, load10
from ..model.se3 import se3_load, se3_store, store10
from .common import (INPUT_STRIDED, OUTPUT_REFUSED, apart, configuration_status, mirror_upper,
                     plain, writeable_matrix)
from .joints import joint_force_local, joint_nv, joint_placement_local, local_subspace_column
from .entries import declare


@kernel(int64(f64_2d_ro, f64_2d, f64_1d, f64_2d))
def crba_kernel(packed, ws, q, M):
    if not plain(q):
        return INPUT_STRIDED
    nb, nv, status = configuration_status(packed, q)
    if not (writeable_matrix(M, nv, nv) and apart(M, q)):
        return OUTPUT_REFUSED
    if status:
        return status
    for i in range(nb):                     # ^λX_i (W_OM); I^c_i = I_i in body i's frame
        se3_store(ws, i, W_OM, joint_placement_local(packed, q, i))
        store10(ws, i, W_OI, load10(packed, i, P_THETA))
    M[:, :] = 0.0                           # bodies on different branches do not couple
    for i in range(nb - 1, -1, -1):
        Ic = load10(ws, i, W_OI)
        iv = int(packed[i, P_IV])
        for k in range(joint_nv(packed, i)):
            F = inertia_apply(Ic, local_subspace_column(packed, i, k))     # F = I^c_i S_i
            t = joint_force_local(packed, i, F)
            for r in range(k + 1):                                         # the upper triangle
                M[iv + r, iv + k] = t[r]
            j = i
            lam = int(packed[i, P_PARENT])
            while lam >= 0:                 # F = ^λX_j* F, M[λ, i] = S_λᵀ F
                F = act_force(se3_load(ws, j, W_OM), F)
                t = joint_force_local(packed, lam, F)
                jv = int(packed[lam, P_IV])
                for r in range(joint_nv(packed, lam)):
                    M[jv + r, iv + k] = t[r]
                j = lam
                lam = int(packed[lam, P_PARENT])
        lam = int(packed[i, P_PARENT])
        if lam >= 0:                        # I^c_λ += ^λX_i* I^c_i ^iX_λ
            store10(ws, lam, W_OI, add10(load10(ws, lam, W_OI),
                                         inertia_act(se3_load(ws, i, W_OM), Ic)))
    return mirror_upper(M)                  # and M's status


@declare
def crba(model, q, *, data=None):
    """
    Return the joint-space inertia matrix M(q), full and symmetric (nv × nv), by the CRBA.

    Pinocchio's ``crba(model, data, q)``, symmetrized.

    Parameters
    ----------
    model, q, data : ...
        Shared by the calls: ``rbd_ros.algorithms.entries.SHARED_PARAMETERS``.

    Returns
    -------
    M : numpy.ndarray, shape ``(nv, nv)``
        The inertia matrix (kg·m² between rotations, kg between translations, kg·m mixed): the
        kinetic energy is vᵀ M v / 2.

    Raises
    ------
    ValueError
        ... the shared refusals: ``rbd_ros.algorithms.entries.SHARED_REFUSALS``.

    Notes
    -----
    With mimic joints (coupled), M_r = Gᵀ M G.

    """
