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

from . import inertia as _inertia
from .model import FREE_FLYER, PRISMATIC
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
    """Return the 3×3 inertia of a urdf-parser-py ``<inertia>`` (zeros when absent)."""
    t = inertia_element
    if t is None:
        return np.zeros((3, 3))
    return np.array([[t.ixx, t.ixy, t.ixz], [t.ixy, t.iyy, t.iyz], [t.ixz, t.iyz, t.izz]],
                    np.float64)


def check_link_inertia(name, mass, rot, source, strict, odd):
    """
    Refuse an inertia that makes the dynamics meaningless; note one that is merely odd.

    ``rot``: the rotational inertia about the centre of mass, in the inertial frame. A
    triangle-inequality violation is appended to ``odd`` as (link, principal moments), or
    refused when ``strict``.
    """
    where = f"link {excerpt(name)} ({source})"
    if not (np.isfinite(mass) and np.all(np.isfinite(rot))):
        raise URDFError(f"{where}: its inertial holds a non-finite number")
    if mass < 0:
        raise URDFError(f"{where}: negative mass {mass:g}")
    moments = np.linalg.eigvalsh(0.5 * (rot + rot.T))
    size = float(np.max(np.abs(moments)))
    tol = ROUND_OFF * size + ROUND_OFF_ABS
    shown = ", ".join(f"{m:.6g}" for m in moments)
    if moments[0] < -tol and (strict or size > PLACEHOLDER_INERTIA):
        raise URDFError(f"{where}: the rotational inertia is not positive semi-definite "
                        f"(principal moments {shown})")
    if moments[0] + moments[1] < moments[2] - tol:     # also true when moments[0] < 0
        if strict:
            raise URDFError(f"{where}: the principal moments {shown} violate the triangle "
                            "inequality I1 + I2 >= I3 (no rigid body has them); "
                            "strict_inertia=False loads it with a warning")
        odd.append((name, moments))


def odd_inertia_warning(odd, source):
    """Return the one warning text for the links of ``odd`` (see check_link_inertia)."""
    shown = "; ".join(f"{name} ({', '.join(f'{m:.3g}' for m in moments)})"
                      for name, moments in odd[:WARNED_LINKS])
    more = f"; and {len(odd) - WARNED_LINKS} more" if len(odd) > WARNED_LINKS else ""
    return (f"{source}: {len(odd)} link(s) have principal moments of inertia that violate the "
            f"triangle inequality I1 + I2 >= I3, which no rigid body has (a negative one: a "
            f"placeholder below {PLACEHOLDER_INERTIA:g} kg m²): {shown}{more}. Kept as given "
            "(as Pinocchio and KDL do); load_model(..., strict_inertia=True) refuses them")


def undriven_joints(parent, joint_type, placement, axis, inertia):
    """
    Return the indices of the bodies whose joint drives (almost) no inertia.

    At the neutral configuration (every joint transform the identity), each body's subtree
    is merged into one inertia; a revolute joint drives its moment about the joint axis, a
    prismatic one its mass, a free-flyer all six directions. A value below :data:`DRIVEN`
    times the largest one (or zero) makes M singular. M can also be singular with every
    joint driving something (two coaxial joints with a massless link between them); the
    algorithms then refuse the non-finite results they compute.
    """
    n = len(parent)
    subtree = [np.asarray(i, np.float64) for i in inertia]
    for i in range(n - 1, -1, -1):            # parent[i] < i: children before parents
        if parent[i] >= 0:
            R = np.asarray(placement[i][:9]).reshape(3, 3)
            subtree[parent[i]] = _inertia.merge(subtree[parent[i]], subtree[i], R,
                                                placement[i][9:])
    driven = np.array([_driven(subtree[i], joint_type[i], axis[i]) for i in range(n)])
    scale = float(np.max(driven)) if n else 0.0
    return [i for i in range(n) if not driven[i] > DRIVEN * scale]


def _driven(inertia, kind, axis):
    """Return the smallest inertia a joint of ``kind`` about ``axis`` moves."""
    matrix = _inertia.to_matrix(inertia)        # 6×6 about the joint frame's origin
    if kind == FREE_FLYER:
        return float(np.linalg.eigvalsh(matrix)[0])
    motion = np.concatenate([axis, np.zeros(3)] if kind == PRISMATIC else [np.zeros(3), axis])
    return float(motion @ matrix @ motion)
