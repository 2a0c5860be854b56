"""
How well the data determines each identified number (least-squares covariance).

The model is linear in x = [θ; joint parameters] (τ = Y x, linear parametrization seed
``linear-parametrization-regressors.txt`` l. 233-250), so with i.i.d. torque noise of
variance σ² the identifiable combinations β = V_rᵀ D⁻¹ x (V_r the right singular vectors
of the column-scaled regressor Y D kept by the rank decision of
``identification._base``) are estimated with covariance σ² S_r⁻² (the base parameters of
Gautier and Khalil, here from the SVD instead of a QR with pivoting). σ² is the residual
sum of squares over its degrees of freedom, (rows - rank). A reported quantity g(x) with
gradient a is:

* not identified, "not separable", when aᵀ D has a component in the null space of Y D
  (relative size above :data:`NULL_TOLERANCE`): the data determine only a combination of g
  with the parameters named (the null-space direction through g);
* else its std is σ ‖S_r⁻¹ V_rᵀ D a‖ (g linearized at the solution), its relative std
  std / |g| (%σ of Swevers et al. and Gautier), and it is not identified, "poorly
  determined", when that is above ``max_relative_std``.

Per-joint weighting (``identification_stats.weighted``) fits rows scaled to equal variance:
these statistics are the scaled ones, so σ² is then the common variance of the scaled rows.
The physically consistent fit uses the same formula at its solution: the model stays linear
in x, only the point (and so σ², the centre of mass h/m) changes.
"""
from dataclasses import dataclass

import numpy as np

from .least_squares import _column_scales

DEFAULT_MAX_RELATIVE_STD = 0.10
NULL_TOLERANCE = 1e-6
THETA_NAMES = ("mass", "hx", "hy", "hz", "ixx", "ixy", "iyy", "ixz", "iyz", "izz")
INERTIA = ("ixx", "ixy", "iyy", "ixz", "iyz", "izz")
BODY_QUANTITIES = ("mass", "com_x", "com_y", "com_z") + INERTIA


@dataclass
class Quantity:
    """One reported number: value, std, relative std, identified, reason (when not)."""

    name: str
    value: float
    std: float
    relative_std: float
    identified: bool
    reason: object = None

    def as_dict(self):
        """Return the JSON form (an undefined std is None)."""
        def num(x):
            return float(x) if np.isfinite(x) else None
        return {"name": self.name, "value": num(self.value), "std": num(self.std),
                "relative_std": num(self.relative_std), "identified": self.identified,
                "reason": self.reason}


def parameter_names(model, kinds):
    """Return the names of the entries of x = [θ of every body, joint parameters by kind]."""
    names = [f"{b}.{t}" for b in model.body_names for t in THETA_NAMES]
    return names + [f"{j}.{k}" for k in kinds for j in model.joint_names]


def _quantities(model, kinds, x):
    """(name, value, gradient) of every reported quantity at x."""
    p, nv = 10 * model.nbodies, model.nv
    n = len(x)
    for k, kind in enumerate(kinds):
        for j, joint in enumerate(model.joint_names):
            i = p + k * nv + j
            a = np.zeros(n)
            a[i] = 1.0
            yield f"{joint}.{kind}", x[i], a
    for b, body in enumerate(model.body_names):
        o = 10 * b
        m = x[o]
        a = np.zeros(n)
        a[o] = 1.0
        yield f"{body}.mass", m, a
        for c, axis in enumerate("xyz"):
            a = np.zeros(n)            # c = h / m: ∂c/∂h = 1/m, ∂c/∂m = -h/m²
            a[o + 1 + c] = 1.0 / m if m != 0 else np.inf
            a[o] = -x[o + 1 + c] / (m * m) if m != 0 else np.inf
            yield f"{body}.com_{axis}", x[o + 1 + c] / m if m != 0 else np.nan, a
        for c, name in enumerate(INERTIA):
            a = np.zeros(n)
            a[o + 4 + c] = 1.0
            yield f"{body}.{name}", x[o + 4 + c], a


@dataclass
class Uncertainty:
    """The analysis of a fit: σ, degrees of freedom, rank and every :class:`Quantity`."""

    sigma: float
    dof: int
    rank: int
    max_relative_std: float
    quantities: list

    def by_name(self):
        """Return {name: Quantity}."""
        return {q.name: q for q in self.quantities}

    def not_identified(self):
        """Return the quantities not identified, as {"quantity", "reason"} dicts."""
        return [{"quantity": q.name, "reason": q.reason} for q in self.quantities
                if not q.identified]


def analyse(model, stats, kinds, x, max_relative_std=DEFAULT_MAX_RELATIVE_STD, rtol=None):
    """
    Return the :class:`Uncertainty` of the parameters x fitted on ``stats``.

    ``stats``: the ``identification_stats.Statistics`` the fit minimized (weighted rows for a
    weighted fit); x = [θ, joint parameters of ``kinds``].
    """
    from .statistics import _rtol

    if not (np.isfinite(max_relative_std) and max_relative_std > 0):
        raise ValueError("max_relative_std must be a finite number > 0")
    x = np.asarray(x, np.float64)
    D = _column_scales(stats.R)
    _, s, Vt = np.linalg.svd(stats.R * D)
    tol = _rtol(stats) if rtol is None else rtol
    r = int(np.sum(s > tol * s[0])) if s.size and s[0] > 0 else 0
    Vr, Vn = Vt[:r].T, Vt[r:].T
    dof = stats.rows - r
    sigma = np.sqrt(stats.sum_of_squares(x) / dof) if dof > 0 else np.nan
    names = parameter_names(model, kinds)
    out = []
    for name, value, a in _quantities(model, kinds, x):
        if not np.all(np.isfinite(a)):
            out.append(Quantity(name, value, np.nan, np.nan, False, "zero mass: no centre"))
            continue
        ad = a * D
        leak = Vn.T @ ad
        if np.linalg.norm(leak) > NULL_TOLERANCE * np.linalg.norm(ad):
            out.append(Quantity(name, value, np.inf, np.inf, False,
                                _inseparable(Vn @ leak, a, names, Vr.T @ ad, ad)))
            continue
        std = sigma * np.linalg.norm((Vr.T @ ad) / s[:r])
        rel = std / abs(value) if value != 0 else np.inf
        if not np.isfinite(sigma):
            reason = "no residual degrees of freedom (as many combinations as rows)"
        elif not rel <= max_relative_std:
            reason = (f"poorly determined: relative std {100 * rel:.3g} % above "
                      f"{100 * max_relative_std:.3g} %")
        else:
            reason = None
        out.append(Quantity(name, float(value), float(std), float(rel), reason is None, reason))
    return Uncertainty(float(sigma), int(dof), r, float(max_relative_std), out)


def _inseparable(direction, own, names, seen, ad, most=4):
    """
    Say why a quantity is not identified: the parameters its null direction moves most.

    ``direction``: its component in the null space, in the column-scaled coordinates (a
    parameter's weight there is how much of its effect on the torques it carries);
    ``seen``: its component in the row space.
    """
    w = np.abs(direction)
    w[own != 0] = 0.0
    top = w.max(initial=0.0)
    if np.linalg.norm(seen) <= NULL_TOLERANCE * np.linalg.norm(ad) or top == 0:
        if top == 0:
            return "not seen by the data: it changes no measured torque"
    order = [i for i in np.argsort(-w)[:most] if w[i] > 0.1 * top]
    return ("not separable: the data determine only its combination with "
            + ", ".join(names[i] for i in order))


def section(u):
    """Return the report's JSON form of an :class:`Uncertainty`."""
    return {"sigma": u.sigma if np.isfinite(u.sigma) else None, "dof": u.dof,
            "identifiable": u.rank, "max_relative_std": u.max_relative_std,
            "quantities": [q.as_dict() for q in u.quantities],
            "not_identified": u.not_identified()}


def joint_stds(u, joint_names, kinds):
    """Return {kind: (nv,) std} of the joint parameters (inf: not determined)."""
    found = u.by_name()
    return {k: np.array([found[f"{j}.{k}"].std for j in joint_names]) for k in kinds}


def text_lines(sec, indent="  "):
    """Return report lines: each identified value ± std (%σ), then what is not identified."""
    def show(q):
        return f"{q['value']:.4g} ± {q['std']:.2g} ({100 * q['relative_std']:.2g} %)"
    found = [q for q in sec["quantities"] if q["identified"]]
    sigma = sec["sigma"]
    lines = [f"{indent}uncertainty: residual sigma "
             + (f"{sigma:.4g}" if sigma is not None else "undefined")
             + f" ({sec['dof']} degrees of freedom); {len(found)} quantities identified, "
             f"{len(sec['not_identified'])} not (relative std above "
             f"{100 * sec['max_relative_std']:.3g} % or not separable)"]
    owners = []                              # in the model's order
    for q in sec["quantities"]:
        owner = q["name"].rsplit(".", 1)[0]
        if owner not in owners:
            owners.append(owner)
    for owner in owners:
        if not any(q["name"].rsplit(".", 1)[0] == owner for q in found):
            continue
        lines.append(f"{indent}  {owner}: " + ", ".join(
            f"{q['name'].rsplit('.', 1)[1]} {show(q)}" for q in found
            if q["name"].rsplit(".", 1)[0] == owner))
    lines.append(f"{indent}not identified (every reason in the JSON report):")
    bodies = {}
    for d in sec["not_identified"]:
        owner, what = d["quantity"].rsplit(".", 1)
        if what in BODY_QUANTITIES:         # one line per body: its quantities by reason
            kind = d["reason"].split(":")[0]
            bodies.setdefault(owner, {}).setdefault(kind, []).append(what)
        else:
            lines.append(f"{indent}  {d['quantity']}: {d['reason']}")
    for owner, kinds in bodies.items():
        lines.append(f"{indent}  {owner}: " + "; ".join(
            f"{', '.join(names)} {kind}" for kind, names in kinds.items()))
    return lines
