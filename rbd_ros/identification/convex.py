"""
The physically consistent fit as a convex problem: pseudo-inertia LMIs (Wensing et al.).

θ is a body iff its pseudo-inertia J(θ) ⪰ 0 (seed ``linear-parametrization-regressors.txt``
l. 573-592; Wensing, Kim & Slotine 2017), and J is linear in θ: the least-squares fit
subject to J_i(θ_i) ⪰ 0 for every body is a semidefinite program, solved to its global
optimum by an interior-point conic solver (Clarabel, through cvxpy). In the column-scaled
coordinates y = D⁻¹ x (``identification.column_scales``: unit-norm regressor columns),

    1. ρ* = min ‖R D y - c‖²  subject to J_i(θ_i) ⪰ 0 (each body), armature, friction >= 0;
    2. minimize ‖V_nᵀ (y - y₀)‖² subject to the same and ‖R D y - c‖² <= ρ* (1 + 1e-7) + 1e-12,

V_n the null space of R D: the prior (``prior_weight`` > 0 turns step 2 on) acts only on what
the data do not determine, and lexicographically, so it never costs residual: with the
physical constraints, the null-space part of θ decides which fits are physical, and a prior
added to the cost (w ‖V_nᵀ (y - y₀)‖² beside the residual) traded residual for it (a floating
quadruped: RMS 0.134 instead of 0.046 at w = 1e-4). The fit's residual is the least-squares
one whenever the least-squares solution set holds a physical point. The optimum may lie on
the boundary J ⪰ 0 (a rod, a planar body): ``identification_stats._strictly_inside`` then
lifts it by a negligible amount.

Before that, :func:`complete` asks whether the least-squares estimate itself is realizable:
the data fix the identifiable combinations β̂ = V_rᵀ y_ls, and only the null-space part z is
free (x = D (V_r β̂ + V_n z)); a feasibility problem over z (J_i ⪰ a small margin, bounds)
finds the z nearest the start's. The truth of a simulated robot always is such a point, so
then the fit keeps β̂ exactly: the constraints, the prior and the solver's tolerance move
nothing the data determine (physical consistency: seed l. 331-335, the pseudo-inertia
l. 402-447).
"""
import numpy as np

from .least_squares import is_physically_consistent, pseudo_inertia

SOLVERS = ("CLARABEL", "SCS")


def fit(nbodies, stats, x0, lower, null, D, prior_weight):
    """
    Return x minimizing the problem above, or raise ValueError when no solver succeeds.

    ``x0`` the start (the prior's centre), ``lower`` the lower bounds of x (-inf: none),
    ``null`` = V_nᵀ (rows: null directions in the scaled coordinates), ``D`` the column
    scales; the first 10·``nbodies`` entries of x are the bodies' θ.
    """
    import cvxpy as cp

    n = len(x0)
    y = cp.Variable(n)
    x = cp.multiply(D, y)
    residual = cp.sum_squares((stats.R * D) @ y - stats.c)
    constraints = [_pseudo_inertia(x[10 * i:10 * i + 10]) >> 0 for i in range(nbodies)]
    bounded = np.flatnonzero(np.isfinite(lower))
    if len(bounded):
        constraints.append(x[bounded] >= lower[bounded])
    best = _solve(cp.Problem(cp.Minimize(residual), constraints), y, D)
    if not (prior_weight > 0 and len(null)):
        return best
    rho = float(np.sum(((stats.R * D) @ (best[0] / D) - stats.c) ** 2))
    on_data = constraints + [residual <= rho * (1 + 1e-7) + 1e-12]
    try:
        return _solve(cp.Problem(cp.Minimize(cp.sum_squares(null @ (y - x0 / D))), on_data),
                      y, D)
    except ValueError:              # the solvers' tolerance: keep the fit without the prior
        return best


# margins tried on J_i ⪰ margin · scale_i (scale_i: the size of body i's pseudo-inertia):
# a point strictly inside, which the strict checks of ``is_physically_consistent`` accept
# despite the solver's tolerance (1e-8 relative), and far below any body's second moments
MARGINS = (1e-8, 1e-6, 1e-4)


def complete(nbodies, x_ls, null, D, lower, x0):
    """
    Return x = x_ls + D V_n w (w minimal) with physical bodies and bounds, or None.

    ``x_ls`` the least-squares estimate (its null-space part the start's), ``null`` = V_nᵀ
    (rows: null directions in the scaled coordinates), ``D`` the column scales, ``lower``
    the lower bounds of x, ``x0`` the start (with x_ls, each body's size: the margin's
    unit). Moving along
    the null space changes no identifiable combination, so x has the least-squares fit's
    β̂ (to rounding). None when no margin gives a point the strict checks accept: the
    least-squares estimate is not realizable (or only on the boundary).
    """
    import cvxpy as cp

    if not len(null):
        return None
    scales = _body_scales(nbodies, x0, x_ls)
    move = D[:, None] * null.T                   # x = x_ls + move @ w
    w = cp.Variable(len(null))
    x = x_ls + move @ w
    p = 10 * nbodies
    bounded = np.flatnonzero(np.isfinite(lower))
    for margin in MARGINS:
        constraints = [_pseudo_inertia(x[10 * i:10 * i + 10])
                       >> margin * scales[i] * np.eye(4) for i in range(nbodies)]
        if len(bounded):
            constraints.append(x[bounded] >= lower[bounded])
        try:
            found, _, _ = _solve(cp.Problem(cp.Minimize(cp.sum_squares(w)), constraints), w,
                                 np.ones(len(null)), first_only=True)
        except ValueError:                           # infeasible (or the solvers failed)
            return None
        out = x_ls + move @ found
        out[p:] = np.maximum(out[p:], lower[p:])     # the solver's tolerance on a bound
        if is_physically_consistent(out[:p].reshape(nbodies, 10))[0]:
            return out
    return None


def _body_scales(nbodies, x0, x_ls):
    """Each body's size: the larger |trace J| of its θ₀ and θ_ls (at least 1e-9)."""
    p = 10 * nbodies
    traces = [np.abs(np.trace(pseudo_inertia(x[:p].reshape(nbodies, 10)), axis1=-2, axis2=-1))
              for x in (x0, x_ls)]
    return np.maximum(np.maximum(*traces), 1e-9)


def _solve(problem, y, D, first_only=False):
    """
    Solve with the first solver that succeeds: (x, solver, status), else ValueError.

    ``first_only``: the first installed solver's answer is final (a feasibility question:
    SCS would take seconds to say "infeasible" again).
    """
    import cvxpy as cp

    last = None
    installed = [s for s in SOLVERS if s in cp.installed_solvers()]
    for solver in installed[:1] if first_only else installed:
        try:
            problem.solve(solver=solver)
        except cp.error.SolverError as exc:
            last = exc
            continue
        if problem.status in ("optimal", "optimal_inaccurate") and y.value is not None:
            return D * y.value, solver, problem.status
        last = problem.status
    raise ValueError(f"the convex consistent fit failed ({last}); try --identify "
                     "least-squares")


def _pseudo_inertia(theta):
    """
    J(θ) as a cvxpy expression: [[½ tr(I) 1 - I, h], [hᵀ, m]], θ = [m, h, Ixx..Izz].

    One affine map (16 × 10, ``least_squares.pseudo_inertia`` of the unit vectors) reshaped
    to 4 × 4: cvxpy compiles it several times faster than a matrix of ten expressions.
    """
    import cvxpy as cp

    return cp.reshape(_PSEUDO_INERTIA_MAP @ theta, (4, 4), order="C")


def _pseudo_inertia_map():
    return np.stack([pseudo_inertia(e).ravel() for e in np.eye(10)], axis=1)


_PSEUDO_INERTIA_MAP = _pseudo_inertia_map()
