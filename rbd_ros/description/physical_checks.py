"""
Physical checks of a URDF's inertias and of the tree of bodies they make.

What makes the dynamics meaningless is refused: a negative mass, a rotational inertia that
is not positive semi-definite beyond round-off, a movable joint that drives no inertia (the
joint-space inertia matrix M is then singular). What is merely not realizable by a rigid body
-- principal moments that violate the triangle inequality I1 + I2 >= I3, common in CAD
exports and in placeholder inertias such as "every entry 1e-6" -- is kept, with one warning
per load, as Pinocchio and KDL do; ``strict_inertia`` refuses it, as MuJoCo and Drake do.
"""
import numpy as np

from ..model import inertia as _inertia
from ..algorithms.joints import motion_subspace
from .urdf_reader import URDFError, excerpt

# Relative to the largest principal moment: URDFs print about six significant digits, so a
# PSD inertia written out can come back with a slightly negative moment or a triangle sum
# short by that much; plus an absolute floor for inertias that are zero but for noise
# (icub's l_ankle_2: moments -1.4e-20, 0, 1.4e-20).
ROUND_OFF = 1e-6
ROUND_OFF_ABS = 1e-12       # kg m²

# Many URDFs give dummy links a placeholder inertia such as ixx = ixy = ... = 1e-6, which is
# that of no body (rank one; or, tiago's antennas, not even positive semi-definite) but too
# small to matter. Below this size (kg m²) one that is not positive semi-definite is kept
# with the warning (strict_inertia refuses it); above it, it is an error.
PLACEHOLDER_INERTIA = 1e-5

# A joint whose subtree's inertia about its axis (or mass along it) is below this fraction of
# the largest such value in the robot drives nothing: M is singular to working precision.
DRIVEN = 1e-12

WARNED_LINKS = 20           # the warning names this many links, then counts the others


def rotational_inertia(inertia_element):
    """Return the 3×3 matrix of an ``<inertia>`` as urdf_reader reads it (zeros if absent)."""
    t = inertia_element
    if t is None:
        return np.zeros((3, 3))
    return np.array([[t.ixx, t.ixy, t.ixz], [t.ixy, t.iyy, t.iyz], [t.ixz, t.iyz, t.izz]],
                    np.float64)


def check_link_inertia(name, mass, rot, source, strict, odd):
    """
    Refuse an inertia that makes the dynamics meaningless; note one that is merely odd.

    ``rot``: the rotational inertia about the centre of mass, in the inertial frame. A
    triangle-inequality violation (or a placeholder below PLACEHOLDER_INERTIA that is not
    positive semi-definite) is appended to ``odd`` as (link, principal moments), or refused
    when ``strict``.
    """
    def where():
        return f"link {excerpt(name)} ({source})"

    if not (np.isfinite(mass) and np.all(np.isfinite(rot))):
        raise URDFError(f"{where()}: its inertial holds a non-finite number")
    if mass < 0:
        raise URDFError(f"{where()}: negative mass {mass:g}")
    moments = np.linalg.eigvalsh(rot)
    size = max(-moments[0], moments[2])
    tol = ROUND_OFF * size + ROUND_OFF_ABS
    if moments[0] < -tol and (strict or size > PLACEHOLDER_INERTIA):
        raise URDFError(f"{where()}: the rotational inertia is not positive semi-definite "
                        f"(principal moments {_shown(moments)})")
    if moments[0] + moments[1] < moments[2] - tol:     # also true when moments[0] < 0
        if strict:
            raise URDFError(f"{where()}: the principal moments {_shown(moments)} violate the "
                            "triangle inequality I1 + I2 >= I3 (no rigid body has them); "
                            "strict_inertia=False loads it with a warning")
        odd.append((name, moments))


def _shown(moments, digits=6):
    return ", ".join(f"{m:.{digits}g}" for m in moments)


def odd_inertia_warning(odd, source):
    """Return the one warning text for the links of ``odd`` (see check_link_inertia)."""
    shown = "; ".join(f"{name} ({_shown(moments, 3)})" for name, moments in odd[:WARNED_LINKS])
    more = f"; and {len(odd) - WARNED_LINKS} more" if len(odd) > WARNED_LINKS else ""
    return (f"{source}: {len(odd)} link(s) have principal moments of inertia that violate the "
            f"triangle inequality I1 + I2 >= I3, which no rigid body has (a negative one: a "
            f"placeholder below {PLACEHOLDER_INERTIA:g} kg m²): {shown}{more}. Kept as given "
            "(as Pinocchio and KDL do); load_model(..., strict_inertia=True) refuses them")


def undriven_joints(parent, joint_type, placement, axis, inertia):
    """Return the indices of the bodies whose joint drives (almost) no inertia."""
    driven = driven_inertias(parent, joint_type, placement, axis, inertia)
    scale = float(np.max(driven)) if len(driven) else 0.0
    return [i for i in range(len(driven)) if not driven[i] > DRIVEN * scale]


def driven_inertias(parent, joint_type, placement, axis, inertia):
    """
    Return what each body's joint drives: M's diagonal at the neutral configuration.

    At the neutral configuration (every joint transform the identity) each body's subtree
    has one composite spatial inertia; a revolute joint drives its moment about the joint
    axis, a prismatic one its mass, a free-flyer all six directions: the diagonal of M (and
    the smallest eigenvalue of its base block); a value below :data:`DRIVEN` times the
    largest one (or zero) makes M singular. M can also be singular with every joint driving
    something (two coaxial joints with a massless link between them); the algorithms then
    refuse the non-finite results they compute.
    """
    n = len(parent)
    composite = _inertia.to_matrix(np.asarray(inertia, np.float64).reshape(n, 10))
    for i in range(n - 1, 0, -1):            # parent[i] < i: children before parents
        if parent[i] >= 0:
            X = _motion_transform(np.asarray(placement[i], np.float64))
            composite[parent[i]] += X.T @ composite[i] @ X
    return np.array([_driven(composite[i], joint_type[i], axis[i]) for i in range(n)])


def _motion_transform(placement):
    """Return the 6×6 map of a parent-frame twist to the child frame (placement: R, p)."""
    R, p = placement[:9].reshape(3, 3), placement[9:]
    cross = np.array([[0.0, -p[2], p[1]], [p[2], 0.0, -p[0]], [-p[1], p[0], 0.0]])
    X = np.zeros((6, 6))
    X[:3, :3] = X[3:, 3:] = R.T
    X[:3, 3:] = -R.T @ cross                 # v_child = Rᵀ (v - p × ω)
    return X


def _driven(matrix, kind, axis):
    """Return the smallest inertia that a joint of ``kind`` about ``axis`` moves."""
    S = motion_subspace(kind, axis)
    return float(np.linalg.eigvalsh(S.T @ matrix @ S)[0])
