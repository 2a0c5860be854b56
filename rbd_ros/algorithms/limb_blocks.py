"""
The products with -M⁻¹ of Eq. 24, by the blocks of a fixed base's independent limbs.

The RSS 2018 seed's Eq. 24 (``aba_derivatives``, ``compute_all``) multiplies -M⁻¹ by the two
nv × nv derivatives of inverse dynamics. With a fixed base, the subtrees that hang from the
world (a humanoid held at its pelvis: each leg, and the torso with its arms and head) share
no moving ancestor, so no joint of one moves a body of another: M, hence M⁻¹, has no entry
between two of them, and neither has ∂ID/∂q or ∂ID/∂q̇ (a joint's torque depends on its
ancestors' and descendants' motions only; Algorithm 3 writes no other entry). The product is
then block-diagonal too, and each limb's block is its own product: Σ n_l³ multiplications
for nv³ (talos held at the pelvis, limbs of 20, 6 and 6 dofs: a quarter). A floating base,
the one subtree of the free-flyer, gives one block: the whole product, as before.

The model's bodies are in depth-first order (``Model`` refuses others), so each subtree's
dofs are one range, [P_IV, P_VEND) of its root, and body 0 is the first root: one limb when
its range holds every dof.
"""
from .._blas import gemm
from .._jit import helper
from ..model.layout import P_IV, P_PARENT, P_VEND
from .common import model_sizes


@helper
def minus_minv_product(packed, Minv, B, C):
    """Set C = -M⁻¹ B for B with the block structure of M (module docstring), by blocks."""
    nb, _, nv = model_sizes(packed)
    if nb == 0 or int(packed[0, P_VEND]) == nv:      # body 0's subtree holds every dof
        gemm(-1.0, Minv, B, C)
        return
    C[:, :] = 0.0
    for i in range(nb):
        if int(packed[i, P_PARENT]) < 0:
            start, end = int(packed[i, P_IV]), int(packed[i, P_VEND])
            gemm(-1.0, Minv[start:end, start:end], B[start:end, start:end],
                 C[start:end, start:end])
