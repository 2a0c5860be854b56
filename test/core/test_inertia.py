"""rbd_ros.model.inertia: the compact 10-number inertia, against pinocchio.Inertia and by hand."""
import numpy as np
import pytest

from rbd_ros.model import inertia as rin

SEEDS = range(6)


def random_rotation(rng):
    Q, R = np.linalg.qr(rng.normal(size=(3, 3)))
    Q = Q @ np.diag(np.sign(np.diag(R)))
    if np.linalg.det(Q) < 0:
        Q[:, 0] *= -1
    return Q


def random_body(rng):
    """(mass, com, centroidal inertia) of a physically valid body."""
    mass = rng.uniform(0.1, 5.0)
    com = rng.normal(scale=0.3, size=3)
    # second moments a, b, c > 0 give principal moments (b+c, a+c, a+b): always a body
    a, b, c = rng.uniform(0.01, 1.0, 3)
    R = random_rotation(rng)
    Ic = R @ np.diag([b + c, a + c, a + b]) @ R.T
    return mass, com, Ic


def pin_inertia(pin, mass, com, Ic):
    return pin.Inertia(float(mass), np.asarray(com, np.float64), np.asarray(Ic, np.float64))


def close(a, b, tol=1e-12):
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    assert a.shape == b.shape, (a.shape, b.shape)
    err = np.max(np.abs(a - b)) / max(1.0, np.max(np.abs(b))) if a.size else 0.0
    assert err <= tol, f"relative error {err:.3e}\n{a}\n{b}"


# -- layout ---------------------------------------------------------------------------------
def test_compact_layout_by_hand():
    Ic = np.array([[1.0, 0.1, 0.2], [0.1, 2.0, 0.3], [0.2, 0.3, 3.0]])
    x = rin.compact(2.0, [0.5, -1.0, 0.25], Ic)
    np.testing.assert_array_equal(x, [2.0, 1.0, -2.0, 0.5, 1.0, 2.0, 3.0, 0.1, 0.3, 0.2])
    assert x.dtype == np.float64


def test_compact_symmetrizes():
    Ic = np.array([[1.0, 0.2, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    x = rin.compact(1.0, np.zeros(3), Ic)
    assert x[rin.IXY] == pytest.approx(0.1)


@pytest.mark.parametrize("seed", SEEDS)
def test_to_matrix_matches_pinocchio(seed, pin):
    mass, com, Ic = random_body(np.random.default_rng(seed))
    close(rin.to_matrix(rin.compact(mass, com, Ic)), pin_inertia(pin, mass, com, Ic).matrix())


@pytest.mark.parametrize("seed", SEEDS)
def test_to_theta_matches_dynamic_parameters(seed, pin):
    mass, com, Ic = random_body(np.random.default_rng(seed))
    close(rin.to_theta(rin.compact(mass, com, Ic)),
          pin_inertia(pin, mass, com, Ic).toDynamicParameters())


@pytest.mark.parametrize("seed", SEEDS)
def test_from_theta_matches_pinocchio(seed, pin):
    rng = np.random.default_rng(seed)
    theta = pin_inertia(pin, *random_body(rng)).toDynamicParameters()
    ref = pin.Inertia.FromDynamicParameters(theta)
    close(rin.from_theta(theta), rin.compact(ref.mass, ref.lever, ref.inertia))


@pytest.mark.parametrize("seed", SEEDS)
def test_round_trips(seed):
    rng = np.random.default_rng(seed)
    x = rin.compact(*random_body(rng))
    close(rin.from_theta(rin.to_theta(x)), x)


@pytest.mark.parametrize("seed", SEEDS)
def test_round_trips_of_pinocchio_theta(seed, pin):
    rng = np.random.default_rng(seed)
    random_body(rng)                      # test_round_trips takes the first body of the seed
    theta = pin_inertia(pin, *random_body(rng)).toDynamicParameters()
    close(rin.to_theta(rin.from_theta(theta)), theta)


def test_centre_of_mass():
    x = rin.compact(2.0, [0.5, -1.0, 0.25], np.eye(3))
    np.testing.assert_allclose(rin.centre_of_mass(x), [0.5, -1.0, 0.25])
    np.testing.assert_array_equal(rin.centre_of_mass(np.zeros(10)), np.zeros(3))


# -- changes of frame ------------------------------------------------------------------------
@pytest.mark.parametrize("seed", SEEDS)
def test_transform_matches_se3_act(seed, pin):
    rng = np.random.default_rng(seed)
    body = random_body(rng)
    R, p = random_rotation(rng), rng.normal(size=3)
    ref = pin.SE3(R, p).act(pin_inertia(pin, *body))
    x = rin.compact(*body)
    close(rin.to_matrix(rin.transform(x, R, p)), ref.matrix())
    close(rin.transform(x, R, p), rin.compact(ref.mass, ref.lever, ref.inertia))


@pytest.mark.parametrize("seed", SEEDS)
def test_rotate_and_translate_match_se3_act(seed, pin):
    rng = np.random.default_rng(seed)
    body = random_body(rng)
    R, p = random_rotation(rng), rng.normal(size=3)
    x = rin.compact(*body)
    close(rin.to_matrix(rin.rotate(x, R)),
          pin.SE3(R, np.zeros(3)).act(pin_inertia(pin, *body)).matrix())
    close(rin.to_matrix(rin.translate(x, p)),
          pin.SE3(np.eye(3), p).act(pin_inertia(pin, *body)).matrix())
    # rotation and translation leave the centroidal inertia's eigenvalues unchanged
    close(rin.principal_moments(rin.transform(x, R, p)), rin.principal_moments(x))
    # and are undone by their inverses
    close(rin.rotate(rin.rotate(x, R), R.T), x)
    close(rin.translate(rin.translate(x, p), -p), x)


@pytest.mark.parametrize("seed", SEEDS)
def test_merge_matches_pinocchio_sum(seed, pin):
    rng = np.random.default_rng(seed)
    b1, b2 = random_body(rng), random_body(rng)
    R, p = random_rotation(rng), rng.normal(size=3)
    ref = pin_inertia(pin, *b1) + pin.SE3(R, p).act(pin_inertia(pin, *b2))
    merged = rin.merge(rin.compact(*b1), rin.compact(*b2), R, p)
    close(rin.to_matrix(merged), ref.matrix())
    close(merged, rin.compact(ref.mass, ref.lever, ref.inertia))
    # without a placement: both in the same frame
    ref0 = pin_inertia(pin, *b1) + pin_inertia(pin, *b2)
    close(rin.to_matrix(rin.merge(rin.compact(*b1), rin.compact(*b2))), ref0.matrix())
    # θ is linear: θ(merge) = θ1 + θ2
    close(rin.to_theta(rin.merge(rin.compact(*b1), rin.compact(*b2))),
          rin.to_theta(rin.compact(*b1)) + rin.to_theta(rin.compact(*b2)))


def test_merge_with_massless_bodies():
    rng = np.random.default_rng(3)
    x = rin.compact(*random_body(rng))
    zero = np.zeros(10)
    close(rin.merge(x, zero), x)
    close(rin.merge(zero, x), x)
    close(rin.merge(zero, x, np.eye(3), [0.1, 0.2, 0.3]), rin.translate(x, [0.1, 0.2, 0.3]))
    np.testing.assert_array_equal(rin.merge(zero, zero), zero)


def test_merge_with_a_massless_flywheel_matches_pinocchio(pin):
    """A massless body with rotational inertia only (a flywheel) merges like Pinocchio."""
    body = random_body(np.random.default_rng(3))
    wheel = rin.compact(0.0, np.zeros(3), np.diag([0.1, 0.1, 0.2]))
    ref = pin.Inertia(0.0, np.zeros(3), np.diag([0.1, 0.1, 0.2])) + pin_inertia(pin, *body)
    close(rin.to_matrix(rin.merge(wheel, rin.compact(*body))), ref.matrix())


def test_merge_two_point_masses_by_hand():
    a = rin.compact(1.0, [1.0, 0.0, 0.0], np.zeros((3, 3)))
    b = rin.compact(3.0, [-1.0, 0.0, 0.0], np.zeros((3, 3)))
    m = rin.merge(a, b)
    # COM at (1·1 + 3·(-1)) / 4 = -0.5; I_yy = I_zz = 1·1.5² + 3·0.5² = 3
    np.testing.assert_allclose(rin.centre_of_mass(m), [-0.5, 0.0, 0.0], atol=1e-15)
    np.testing.assert_allclose(m[[rin.IXX, rin.IYY, rin.IZZ]], [0.0, 3.0, 3.0], atol=1e-14)


# -- stacks and dtypes -------------------------------------------------------------------
def test_stacks_match_loops():
    rng = np.random.default_rng(12)
    bodies = [random_body(rng) for _ in range(6)]
    X = np.stack([rin.compact(*b) for b in bodies]).reshape(2, 3, 10)
    Rs = np.stack([random_rotation(rng) for _ in range(6)]).reshape(2, 3, 3, 3)
    ps = rng.normal(size=(2, 3, 3))
    stacked = {
        "to_theta": rin.to_theta(X), "to_matrix": rin.to_matrix(X),
        "from_theta": rin.from_theta(rin.to_theta(X)), "rotate": rin.rotate(X, Rs),
        "translate": rin.translate(X, ps), "transform": rin.transform(X, Rs, ps),
        "merge": rin.merge(X, X[::-1], Rs, ps),
    }
    for i in range(2):
        for j in range(3):
            x = X[i, j]
            close(stacked["to_theta"][i, j], rin.to_theta(x))
            close(stacked["to_matrix"][i, j], rin.to_matrix(x))
            close(stacked["from_theta"][i, j], x)
            close(stacked["rotate"][i, j], rin.rotate(x, Rs[i, j]))
            close(stacked["translate"][i, j], rin.translate(x, ps[i, j]))
            close(stacked["transform"][i, j], rin.transform(x, Rs[i, j], ps[i, j]))
            close(stacked["merge"][i, j], rin.merge(x, X[::-1][i, j], Rs[i, j], ps[i, j]))
    compacts = rin.compact(np.array([b[0] for b in bodies]), np.array([b[1] for b in bodies]),
                           np.array([b[2] for b in bodies]))
    close(compacts, X.reshape(6, 10))


def test_float32_is_preserved():
    rng = np.random.default_rng(4)
    mass, com, Ic = random_body(rng)
    R, p = random_rotation(rng), rng.normal(size=3)
    x64 = rin.compact(mass, com, Ic)
    x32 = rin.compact(np.float32(mass), com.astype(np.float32), Ic.astype(np.float32))
    assert x32.dtype == np.float32
    assert rin.compact(mass, com, Ic, dtype=np.float32).dtype == np.float32
    results = {
        "rotate": (rin.rotate(x32, R), rin.rotate(x64, R)),
        "translate": (rin.translate(x32, p), rin.translate(x64, p)),
        "transform": (rin.transform(x32, R, p), rin.transform(x64, R, p)),
        "merge": (rin.merge(x32, x32, R, p), rin.merge(x64, x64, R, p)),
        "to_matrix": (rin.to_matrix(x32), rin.to_matrix(x64)),
        "to_theta": (rin.to_theta(x32), rin.to_theta(x64)),
        "from_theta": (rin.from_theta(rin.to_theta(x32)), x64),
        "centre_of_mass": (rin.centre_of_mass(x32), com),
        "factor": (rin.factor(x32)[1], rin.factor(x64)[1]),
    }
    for name, (r32, r64) in results.items():
        assert r32.dtype == np.float32, f"{name} returned {r32.dtype}"
        close(r32, r64, 1e-5)
    assert rin.to_theta(x64).dtype == np.float64
    assert rin.from_theta(np.arange(10)).dtype == np.float64   # ints become float64


# -- factorization ------------------------------------------------------------------------
def _check_factor(x, rank):
    r, F = rin.factor(x)
    assert r == rank
    assert F.shape == (6, rank)
    close(F @ F.T, rin.to_matrix(x), 1e-12)


@pytest.mark.parametrize("seed", SEEDS)
def test_factor_full_body(seed):
    x = rin.compact(*random_body(np.random.default_rng(seed)))
    _check_factor(x, 6)


def test_factor_thin_rod(pin):
    ref = pin.Inertia.FromCylinder(2.0, 0.0, 0.8)         # radius 0: a rod along z
    np.testing.assert_allclose(np.linalg.eigvalsh(ref.inertia)[0], 0.0, atol=1e-15)
    R = random_rotation(np.random.default_rng(1))
    x = rin.transform(rin.compact(ref.mass, ref.lever, ref.inertia), R, [0.1, -0.2, 0.3])
    _check_factor(x, 5)
    close(rin.to_matrix(x), pin.SE3(R, np.array([0.1, -0.2, 0.3])).act(ref).matrix())


def test_factor_point_mass():
    _check_factor(rin.compact(1.5, [0.3, 0.2, -0.1], np.zeros((3, 3))), 3)
    _check_factor(rin.compact(1.5, np.zeros(3), np.zeros((3, 3))), 3)


def test_factor_massless():
    _check_factor(np.zeros(10), 0)
    _check_factor(rin.compact(0.0, np.zeros(3), np.diag([0.1, 0.2, 0.3])), 3)


# -- physical validity --------------------------------------------------------------------
@pytest.mark.parametrize("seed", SEEDS)
def test_valid_bodies_have_no_violation(seed):
    mass, com, Ic = random_body(np.random.default_rng(seed))
    assert rin.physical_violation(rin.compact(mass, com, Ic)) is None
    assert rin.physical_violation(rin.compact(mass, com, np.zeros((3, 3)))) is None  # point
    assert rin.physical_violation(np.zeros(10)) is None


def test_thin_rod_has_no_violation(pin):
    rod = pin.Inertia.FromCylinder(1.0, 0.0, 1.0)
    assert rin.physical_violation(rin.compact(rod.mass, rod.lever, rod.inertia)) is None


def test_violation_negative_mass():
    msg = rin.physical_violation(rin.compact(-1.0, np.zeros(3), np.eye(3)))
    assert msg is not None and "negative mass" in msg


def test_violation_triangle():
    msg = rin.physical_violation(rin.compact(1.0, np.zeros(3), np.diag([1.0, 1.0, 5.0])))
    assert msg is not None and "triangle" in msg
    # rotated: the same body seen from other axes
    R = random_rotation(np.random.default_rng(0))
    msg = rin.physical_violation(rin.rotate(rin.compact(1.0, np.zeros(3),
                                                        np.diag([1.0, 1.0, 5.0])), R))
    assert msg is not None and "triangle" in msg


def test_violation_indefinite():
    Ic = np.array([[1.0, 2.0, 0.0], [2.0, 1.0, 0.0], [0.0, 0.0, 1.0]])   # moments -1, 1, 3
    assert np.linalg.eigvalsh(Ic)[0] < 0
    msg = rin.physical_violation(rin.compact(1.0, np.zeros(3), Ic))
    assert msg is not None and "positive" in msg


def test_violation_other_cases():
    x = rin.compact(1.0, np.zeros(3), np.eye(3))
    x[rin.IXX] = np.nan
    assert "finite" in rin.physical_violation(x)
    massless = np.zeros(10)
    massless[rin.MCX] = 0.1
    assert rin.physical_violation(massless) is not None
