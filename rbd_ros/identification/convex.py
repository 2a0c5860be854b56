"""
The physically consistent fit as a convex problem: pseudo-inertia LMIs (Wensing et al.).

θ is a body iff its pseudo-inertia J(θ) ⪰ 0 (seed ``linear-parametrization-regressors.txt``
l. 573-592; Wensing, Kim & Slotine 2017), and J is linear in θ: the least-squares fit
subject to J_i(θ_i) ⪰ 0 for every body is a semidefinite program, solved to its global
optimum by an interior-point conic solver (Clarabel, through cvxpy). In the column-scaled
coordinates y = D⁻¹ x (``identification._column_scales``: unit-norm regressor columns),

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
"""
import numpy as np

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


def _solve(problem, y, D):
    """Solve with the first solver that succeeds: (x, solver, status), else ValueError."""
    import cvxpy as cp

    last = None
    for solver in SOLVERS:
        if solver not in cp.installed_solvers():
            continue
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
    """J(θ) as a cvxpy expression: [[½ tr(I) 1 - I, h], [hᵀ, m]], θ = [m, h, Ixx..Izz]."""
    import cvxpy as cp

    m, hx, hy, hz, ixx, ixy, iyy, ixz, iyz, izz = (theta[k] for k in range(10))
    half = 0.5 * (ixx + iyy + izz)
    return cp.bmat([[half - ixx, -ixy, -ixz, hx],
                    [-ixy, half - iyy, -iyz, hy],
                    [-ixz, -iyz, half - izz, hz],
                    [hx, hy, hz, m]])
