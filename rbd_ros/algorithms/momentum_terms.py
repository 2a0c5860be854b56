"""
What the momentum observer needs of the dynamics, in O(n): M v, Cᵀ v and g − τ_w.

With the world-frame Jacobians J_i of the bodies (``coriolis``'s notation: h_i = I_i v_i
the momentum of body i, H_j = Σ_{i ⪰ j} h_i that of the subtree of joint j),

    M v = Σ_i J_iᵀ I_i J_i v = Σ_i J_iᵀ h_i             →  (M v)_j = S_jᵀ H_j,
    Cᵀ v = Σ_i (J̇_iᵀ I_i J_i + J_iᵀ B_iᵀ J_i) v = Σ_i J̇_iᵀ h_i
                                                        →  (Cᵀ v)_j = (v_j × S_j)ᵀ H_j,

B_iᵀ v_i being zero: with B_i m = ½ [v_i ×* I_i m − I_i (v_i × m) + m ×* h_i] (``coriolis``),
B_iᵀ m = ½ [−I_i (v_i × m) + v_i ×* I_i m − m ×* h_i], and at m = v_i the first term
vanishes and the others cancel. So the observer's input needs neither M nor C (CRBA's and
the Coriolis matrix's O(n d) passes and the O(nv²) products): one forward pass (placements,
velocities, momenta, gravity and measured wrenches) and one backward sum, as RNEA. The
gravity and wrench term is RNEA(q, 0, 0, fext) = Sᵀ F with F_j = Σ_{i ⪰ j} (I_i a_0 −
f_ext,i), a_0 = −gravity. A coupled model (mimic joints): M_r v_r = Gᵀ M (G v_r), the same
for Cᵀ v and g (G constant): the full tree's, reduced.
"""
from .._jit import helper
from ..model.layout import P_IV, P_PARENT, P_THETA, W_OA, W_OF, W_OM, W_OS, W_OV
from ..model.spatial import (act_force, add6, cross_motion, dot6, inertia_act, inertia_apply,
                             load6, load10, sub6)
from ..model.se3 import se3_load, store6
from .common import placement_step, set_world, store_motion, velocity_step
from .joints import joint_nv, subspace_column
from .mimic import expand_configuration, expand_motion, reduce_force

W_OH = W_OA             # each body's momentum, then its subtree's (the accelerations unused)


@helper
def momentum_terms_pass(packed, ws, q, v, fext, mv, ctv, gw):
    """Set mv = M v, ctv = Cᵀ v, gw = g − Σ Jᵀ fext at the full tree's (q, v) (checked)."""
    nb = packed.shape[0] - 1
    set_world(packed, ws)
    a0 = load6(ws, -1, W_OA)
    for i in range(nb):
        oM, oS = placement_step(packed, ws, q, i)
        ov = velocity_step(packed, ws, v, i, oM, oS)[2]
        oI = inertia_act(oM, load10(packed, i, P_THETA))
        f = inertia_apply(oI, a0)
        if fext.shape[0]:
            f = sub6(f, act_force(oM, load6(fext, i, 0)))
        store_motion(ws, i, oM, oS, ov)
        store6(ws, i, W_OH, inertia_apply(oI, ov))
        store6(ws, i, W_OF, f)
    for i in range(nb - 1, -1, -1):       # the subtree sums are complete at i
        H, F = load6(ws, i, W_OH), load6(ws, i, W_OF)
        oM, oS, ov = se3_load(ws, i, W_OM), load6(ws, i, W_OS), load6(ws, i, W_OV)
        iv = int(packed[i, P_IV])
        for k in range(joint_nv(packed, i)):
            S = subspace_column(packed, i, k, oM, oS)
            mv[iv + k] = dot6(S, H)
            ctv[iv + k] = dot6(cross_motion(ov, S), H)
            gw[iv + k] = dot6(S, F)
        j = int(packed[i, P_PARENT])
        if j >= 0:
            store6(ws, j, W_OH, add6(load6(ws, j, W_OH), H))
            store6(ws, j, W_OF, add6(load6(ws, j, W_OF), F))


@helper
def momentum_terms(packed, table, ws, qf, VF, q, v, fext, mv, ctv, gw):
    """
    Run ``momentum_terms_pass`` on the model: a coupled one (``table`` not (0, 3)) reduced.

    q, v: the model's (checked); ``qf``, ``VF`` (4, nv_full): the full tree's scratch.
    """
    if table.shape[0] == 0:
        momentum_terms_pass(packed, ws, q, v, fext, mv, ctv, gw)
        return
    nqf = qf.shape[0]
    expand_configuration(table, q, qf)
    expand_motion(table, nqf, v, VF[0])
    momentum_terms_pass(packed, ws, qf, VF[0], fext, VF[1], VF[2], VF[3])
    reduce_force(table, nqf, VF[1], mv)
    reduce_force(table, nqf, VF[2], ctv)
    reduce_force(table, nqf, VF[3], gw)
