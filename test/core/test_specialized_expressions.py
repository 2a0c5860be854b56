"""
The generator's spatial algebra (rbd_ros.specialized.expressions) against rbd_ros.model.spatial's.

The generated kernels write out ``expressions``' operations, the generic ones inline
``spatial``'s: both must compute the same formula, operation by operation. An expression
whose inputs are all constants (Python floats) folds to a float, so each operation is run
here on random numbers and compared with the pure-Python body of its ``spatial`` twin
(``py_func``: the same arithmetic as the compiled helper, without compiling it). They agree
to a few units in the last place (each may associate a product of three differently).
"""
import math

import numpy as np
import pytest

from rbd_ros.model import se3 as placements, spatial
from rbd_ros.algorithms import joints
from rbd_ros.model.joints import PRISMATIC, REVOLUTE
from rbd_ros.specialized import expressions as ex

TOL = 8 * np.finfo(float).eps     # relative to the inputs' scale (all of order 1)
DRAWS = 25


def draws():
    rng = np.random.default_rng(7)
    for _ in range(DRAWS):
        quat = rng.normal(size=4)
        R = np.array(placements.se3_from_quaternion.py_func(0.0, 0.0, 0.0,
                                                            *(quat / np.linalg.norm(quat))))
        R = [list(R[0:3]), list(R[3:6]), list(R[6:9])]
        p = [float(x) for x in rng.uniform(-1, 1, 3)]
        yield (R, p, [float(x) for x in rng.normal(size=6)],
               [float(x) for x in rng.normal(size=6)], random_inertia(rng))


def random_inertia(rng):
    """Return the inertia (θ layout: mass, m c, I about the origin) of a random body."""
    mass, c = rng.uniform(0.5, 2.0), rng.uniform(-0.3, 0.3, 3)
    A = rng.normal(size=(3, 3))
    Ic = A @ A.T + np.eye(3) - mass * (np.outer(c, c) - c @ c * np.eye(3))
    return tuple(float(x) for x in (mass, *(mass * c), Ic[0, 0], Ic[0, 1], Ic[1, 1], Ic[0, 2],
                                    Ic[1, 2], Ic[2, 2]))


def se3(R, p):
    """Return the placement tuple of ``spatial`` (R row-major, then p) of (R, p)."""
    return tuple(R[0]) + tuple(R[1]) + tuple(R[2]) + tuple(p)


def agree(generated, generic):
    generated, generic = np.array(generated, float), np.array(generic, float)
    assert generated.shape == generic.shape
    np.testing.assert_allclose(generated, generic, rtol=TOL, atol=TOL)


@pytest.mark.parametrize("R, p, m, n, th", list(draws()))
def test_operations_agree(R, p, m, n, th):
    src = ex.Source()
    M = se3(R, p)
    agree(ex.act_inv_motion(src, R, p, m), spatial.act_inv_motion.py_func(M, m))
    agree(ex.act_force(src, R, p, m), spatial.act_force.py_func(M, m))
    agree(ex.cross_motion(src, m, n), spatial.cross_motion.py_func(m, n))
    agree(ex.cross_force(src, m, n), spatial.cross_force.py_func(m, n))
    agree(ex.inertia_apply(src, th, m), spatial.inertia_apply.py_func(th, m))
    agree(ex.inertia_act(src, R, p, th), spatial.inertia_act.py_func(M, th))
    agree(ex.rotate(src, R, m[:3]), placements.rot3.py_func(M, *m[:3]))
    agree(ex.rotate_t(src, R, m[:3]), placements.rot3_t.py_func(M, *m[:3]))
    agree(src.cross(m[:3], n[:3]), placements.cross3.py_func(*m[:3], *n[:3]))
    agree([src.dot(m, n)], [spatial.dot6.py_func(m, n)])
    agree(ex.add_vectors(src, m, n), spatial.add6.py_func(m, n))
    assert src.lines == [], "an operation on constants wrote a line of source"


@pytest.mark.parametrize("R, p, m, n, th", list(draws())[:10])
@pytest.mark.parametrize("kind", [REVOLUTE, PRISMATIC])
def test_joint_placement_agrees(R, p, m, n, th, kind):
    """The generator's ^λX_i (R0 Rot(axis, q), or a slide) against the kernels' jcalc pieces."""
    axis = np.array(m[:3]) / np.linalg.norm(m[:3])
    angle = float(n[0])
    XT = se3(R, p)
    if joints.joint_rotates.py_func(kind):
        src = ex.Source()
        generated = ex.joint_rotation(src, R, tuple(axis), math.cos(angle), math.sin(angle))
        generic = placements.se3_rotate_about_axis.py_func(XT, *axis, angle)
        agree(np.ravel(generated), generic[:9])
        agree(p, generic[9:])
    else:
        generic = placements.se3_translate_along_axis.py_func(XT, *axis, angle)
        agree(XT[:9], generic[:9])
        agree(np.array(p) + np.array(R) @ axis * angle, generic[9:])
    # S in the joint's own frame, as the generator asks for it
    S = joints.local_subspace_1dof.py_func(kind, *axis)
    half = slice(3, 6) if kind == REVOLUTE else slice(0, 3)
    agree(np.array(S)[half], axis)
    agree(np.delete(np.array(S), np.arange(6)[half]), np.zeros(3))
