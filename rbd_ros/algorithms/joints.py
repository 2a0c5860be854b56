"""
The kernels' one dispatch over joint kinds: each function calls the kind's own function.

The algorithms never branch on the joint kind themselves; they ask this module, and this
module only picks the kind's module (``rbd_ros.model.joints``: one module per kind, its
record and its pieces of jcalc, S·x, Sᵀf and its tangent step). The pieces that depend on
the kind are each one ``if kind == k.CODE: return k.op(...)`` chain over the kinds,
written out by ``generate_joint_dispatch`` into ``joint_dispatch.py`` and imported here;
the functions below read only the registry's per-kind arrays (nq, nv, root only, axis).

A joint has ``joint_nv`` degrees of freedom and, for each, a column S_k of its motion
subspace. Results that depend on the number of degrees of freedom come as 6-tuples whose
first ``joint_nv`` entries are used, so that one compiled code path serves every kind (numba
needs one tuple type per variable). Sᵀ f of a world-frame force is ``subspace_column``·f.
"""
import os

from .._jit import before_first_compile, helper
from ..model.joints import (AXIS_ROTATES, MODULES, NQ, NV, POSITION_LEFT_OUT, ROOT_ONLY,
                            UNIT_COUNT, UNIT_START, axis_joint, body_fixed, free_flyer)
from ..model.layout import P_TYPE
from ..model.spatial import act_force, act_inv_motion
# the pieces that depend on the kind, one chain each over the registry's kinds (generated);
# the algorithms import them from here
from . import joint_dispatch
from .joint_dispatch import (jcalc, jcalc_local, joint_force_local,  # noqa: F401
                             joint_integrate, joint_motion, joint_placement_local,
                             joint_tangent, local_subspace_column, subspace_column,
                             world_placement_from_local)

UNIT_MOTIONS = free_flyer.UNIT_MOTIONS
ZERO6 = body_fixed.ZERO6
IDENTITY_SE3 = axis_joint.IDENTITY_SE3


@before_first_compile
def check_the_dispatch_is_the_registrys():
    """
    Refuse to compile a kernel with a dispatch generated for other kinds than the registry's.

    Such a dispatch sends a body of a kind it does not name to the first kind's pieces: wrong
    dynamics and no error (a kind added without running the generator, a stale kind module
    left in a build or install space). Checked before the first kernel compiles or loads, not
    at import, so that the generator itself runs.
    """
    registered = {module.__name__.rpartition(".")[2] for module in MODULES}
    written_for = set(joint_dispatch.KIND_MODULES)
    if registered != written_for:
        folder = os.path.dirname(MODULES[0].__file__)
        new, gone = sorted(registered - written_for), sorted(written_for - registered)
        raise RuntimeError(
            f"the joint dispatch does not match the joint kinds in {folder}: "
            + "; ".join(([f"not generated for {', '.join(new)}"] if new else [])
                        + ([f"generated for {', '.join(gone)}, which is not there"]
                           if gone else []))
            + ": run python -m rbd_ros.algorithms.generate_joint_dispatch from the sources, "
            "or remove a kind module left there by an older build")


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
def root_position_left_out(packed):
    """Whether jcalc leaves the root's position q[0:3] out of the world placements."""
    return packed.shape[0] > 1 and POSITION_LEFT_OUT[int(packed[0, P_TYPE])]


@helper
def zero_unit_part(packed, q):
    """Whether the root's unit part of q (a quaternion, (cos θ, sin θ)) is (almost) zero."""
    if packed.shape[0] == 1:
        return False
    kind = int(packed[0, P_TYPE])
    start = UNIT_START[kind]
    squares = 0.0
    for k in range(start, start + UNIT_COUNT[kind]):
        squares += q[k] * q[k]
    return UNIT_COUNT[kind] > 0 and squares < 1e-12


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
    return MODULES[kind].subspace(axis)        # Python: the registry indexed by code


@helper
def joint_inv_motion(packed, i, oM, m):
    """
    Return the joint velocity (first joint_nv entries) whose motion S q̇ is the world motion m.

    For the free-flyer root (S spans every motion): S⁻¹ m = m in the base frame. (Other
    joints never need it.)
    """
    return act_inv_motion(oM, m)


@helper
def joint_force_in_world(packed, i, oM, t):
    """S⁻ᵀ t for the free-flyer root: its joint wrench t (base frame) in the world frame."""
    return act_force(oM, t)
