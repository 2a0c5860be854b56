"""
The kernels' one dispatch over joint kinds: each function calls the kind's own function.

The algorithms never branch on the joint kind themselves; they ask this module, and this
module only picks the kind's module (``rbd_ros.model.joints``: one module per kind, its
record and its pieces of jcalc, S·x, Sᵀf and its tangent step). Every function below is one
``if kind == K: return k.op(...)`` chain over the registry's kinds (the last one the
fallback); test_joint_kinds checks that each chain names every kind of the registry.

A joint has ``joint_nv`` degrees of freedom and, for each, a column S_k of its motion
subspace. Results that depend on the number of degrees of freedom come as 6-tuples whose
first ``joint_nv`` entries are used, so that one compiled code path serves every kind (numba
needs one tuple type per variable). Sᵀ f of a world-frame force is ``subspace_column``·f,
or ``world_force_projection``.
"""
from .._jit import helper
from ..model.joints import (AXIS_ROTATES, FREE_FLYER, NQ, NV, PRISMATIC, ROOT_ONLY, axis_joint,
                            free_flyer, prismatic, revolute)
from ..model.layout import P_TYPE
from ..model.spatial import act_force, act_inv_force, act_inv_motion

UNIT_MOTIONS = free_flyer.UNIT_MOTIONS
ZERO6 = free_flyer.ZERO6
IDENTITY_SE3 = axis_joint.IDENTITY_SE3


@helper
def joint_nv(packed, i):
    """Return the number of degrees of freedom (entries of v) of the joint of body i."""
    return NV[int(packed[i, P_TYPE])]


@helper
def joint_nq(packed, i):
    """Return the number of entries of q of the joint of body i."""
    return NQ[int(packed[i, P_TYPE])]


@helper
def joint_spans_all_motions(packed, i):
    """
    Return whether the joint of body i spans every motion (S is 6 × 6 and invertible).

    Only the free-flyer root does. ABA and M⁻¹ then factorize its articulated inertia and
    solve its six accelerations at once, where a 1-dof joint has the scalar D = Sᵀ I^A S.
    """
    return NV[int(packed[i, P_TYPE])] == 6


@helper
def base_sizes(packed):
    """Return (nq_base, nv_base): the root's entries of q and v if it floats, else (0, 0)."""
    if packed.shape[0] > 1:
        kind = int(packed[0, P_TYPE])
        if ROOT_ONLY[kind]:
            return NQ[kind], NV[kind]
    return 0, 0


@helper
def zero_quaternion(packed, q):
    """Whether the free-flyer root's quaternion in q is (almost) zero: no rotation at all."""
    if base_sizes(packed)[0] == 0:
        return False
    return q[3] * q[3] + q[4] * q[4] + q[5] * q[5] + q[6] * q[6] < 1e-12


@helper
def joint_rotates(kind):
    """Whether a 1-dof joint of ``kind`` rotates about its axis (else it slides along it)."""
    return AXIS_ROTATES[kind]


@helper
def local_subspace_1dof(kind, ax, ay, az):
    """S of a 1-dof joint in its own frame: the axis, linear (prismatic) or angular."""
    return axis_joint.local_subspace(joint_rotates(kind), ax, ay, az)


def motion_subspace(kind, axis):
    """
    Return S (6 × nv) of a joint of ``kind`` in its own frame, as a numpy array (not compiled).

    For Python code outside the kernels that needs a joint's motions (the description's checks).
    """
    if kind == FREE_FLYER:
        return free_flyer.subspace(axis)
    if kind == PRISMATIC:
        return prismatic.subspace(axis)
    return revolute.subspace(axis)


@helper
def jcalc(packed, q, i, oM_parent):
    """
    Return (oMi, oS): world placement of body i and its world-frame subspace (1-dof joints).

    For the free-flyer root oS is unused: its subspace is the placement's adjoint itself,
    and its placement is its rotation only (``rbd_ros.model.joints.free_flyer`` says why).
    """
    kind = int(packed[i, P_TYPE])
    if kind == FREE_FLYER:
        return free_flyer.jcalc(packed, q, i, oM_parent)
    if kind == PRISMATIC:
        return prismatic.jcalc(packed, q, i, oM_parent)
    return revolute.jcalc(packed, q, i, oM_parent)


@helper
def joint_placement_local(packed, q, i):
    """
    Return ^λX_i = X_T X_J(q_i), the placement of body i in its parent's frame.

    The free-flyer root's is its placement in the world, its quaternion normalized.
    """
    kind = int(packed[i, P_TYPE])
    if kind == FREE_FLYER:
        return free_flyer.placement_local(packed, q, i)
    if kind == PRISMATIC:
        return prismatic.placement_local(packed, q, i)
    return revolute.placement_local(packed, q, i)


@helper
def jcalc_local(packed, q, v, a, i):
    """Return (X, v_J, S q̈) of body i in its own frame (X = ``joint_placement_local``)."""
    kind = int(packed[i, P_TYPE])
    if kind == FREE_FLYER:
        return free_flyer.jcalc_local(packed, q, v, a, i)
    if kind == PRISMATIC:
        return prismatic.jcalc_local(packed, q, v, a, i)
    return revolute.jcalc_local(packed, q, v, a, i)


@helper
def joint_motion(packed, i, oM, oS, x):
    """
    Return S x[idx_v(i) : idx_v(i) + joint_nv] in the world frame.

    x: a velocity, an acceleration or a column of them.
    """
    kind = int(packed[i, P_TYPE])
    if kind == FREE_FLYER:
        return free_flyer.motion(packed, i, oM, oS, x)
    if kind == PRISMATIC:
        return prismatic.motion(packed, i, oM, oS, x)
    return revolute.motion(packed, i, oM, oS, x)


@helper
def joint_tangent(packed, i, x):
    """x[idx_v(i) : idx_v(i) + joint_nv] as the first entries of a 6-tuple."""
    kind = int(packed[i, P_TYPE])
    if kind == FREE_FLYER:
        return free_flyer.tangent(packed, i, x)
    if kind == PRISMATIC:
        return prismatic.tangent(packed, i, x)
    return revolute.tangent(packed, i, x)


@helper
def subspace_column(packed, i, k, oM, oS):
    """Column k of the world-frame motion subspace of body i at placement oM (1-dof: oS)."""
    kind = int(packed[i, P_TYPE])
    if kind == FREE_FLYER:
        return free_flyer.subspace_column(packed, i, k, oM, oS)
    if kind == PRISMATIC:
        return prismatic.subspace_column(packed, i, k, oM, oS)
    return revolute.subspace_column(packed, i, k, oM, oS)


@helper
def world_placement_from_local(packed, i, oM_parent, X):
    """
    Return what ``jcalc`` returns, (oMi, oS), from body i's local ^λX_i (``jcalc_local``'s).

    No second evaluation of the joint's transform (its sine and cosine): oMi = oM_λ ^λX_i.
    """
    kind = int(packed[i, P_TYPE])
    if kind == FREE_FLYER:
        return free_flyer.world_from_local(packed, i, oM_parent, X)
    if kind == PRISMATIC:
        return prismatic.world_from_local(packed, i, oM_parent, X)
    return revolute.world_from_local(packed, i, oM_parent, X)


@helper
def world_subspace(packed, ws, j):
    """
    Return (joint_nv, oM, oS): what Sᵀ f needs of body j's joint, f a world-frame force.

    From the workspace's world placement (W_OM, the free-flyer root) and 1-dof subspace
    (W_OS), read once, then applied to many forces (``world_force_projection``).
    """
    kind = int(packed[j, P_TYPE])
    if kind == FREE_FLYER:
        return free_flyer.world_subspace(packed, ws, j)
    if kind == PRISMATIC:
        return prismatic.world_subspace(packed, ws, j)
    return revolute.world_subspace(packed, ws, j)


@helper
def world_force_projection(subspace, f):
    """Sᵀ f (first joint_nv entries of the 6-tuple) for a ``world_subspace``, f in the world."""
    nv, oM, oS = subspace
    if nv == 6:
        return act_inv_force(oM, f)                  # the wrench in the base frame
    return (oS[0] * f[0] + oS[1] * f[1] + oS[2] * f[2] + oS[3] * f[3] + oS[4] * f[4]
            + oS[5] * f[5]), 0.0, 0.0, 0.0, 0.0, 0.0


@helper
def local_subspace_column(packed, i, k):
    """Column k of the motion subspace of body i's joint in its own frame (S of jcalc_local)."""
    kind = int(packed[i, P_TYPE])
    if kind == FREE_FLYER:
        return free_flyer.local_subspace_column(packed, i, k)
    if kind == PRISMATIC:
        return prismatic.local_subspace_column(packed, i, k)
    return revolute.local_subspace_column(packed, i, k)


@helper
def joint_force_local(packed, i, f):
    """Sᵀ f for a force f in body i's own frame (first joint_nv entries of the 6-tuple)."""
    kind = int(packed[i, P_TYPE])
    if kind == FREE_FLYER:
        return free_flyer.force_local(packed, i, f)
    if kind == PRISMATIC:
        return prismatic.force_local(packed, i, f)
    return revolute.force_local(packed, i, f)


@helper
def joint_inv_motion(packed, i, oM, m):
    """
    Return the joint velocity (first joint_nv entries) whose motion S q̇ is the world motion m.

    For the multi-dof root: S⁻¹ m = m in the base frame. (1-dof joints never need it.)
    """
    return act_inv_motion(oM, m)


@helper
def joint_force_in_world(packed, i, oM, t):
    """S⁻ᵀ t for the multi-dof root: its joint wrench t (base frame) in the world frame."""
    return act_force(oM, t)


@helper
def joint_integrate(packed, q, i, d, out):
    """
    Set out[q range of body i] = that joint's q ⊕ d (Pinocchio's ``integrate``).

    ``d``: the joint's tangent step, the first joint_nv entries of a 6-tuple.
    """
    kind = int(packed[i, P_TYPE])
    if kind == FREE_FLYER:
        free_flyer.integrate(packed, q, i, d, out)
    elif kind == PRISMATIC:
        prismatic.integrate(packed, q, i, d, out)
    else:
        revolute.integrate(packed, q, i, d, out)
