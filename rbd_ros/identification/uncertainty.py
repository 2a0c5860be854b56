"""
How well the data determines each identified number, every error source counted.

The model is linear in x = [θ; joint parameters] (τ = Y x, linear parametrization seed
``linear-parametrization-regressors.txt`` l. 233-250), so with i.i.d. torque noise of
variance σ² the identifiable combinations β = V_rᵀ D⁻¹ x (V_r the right singular vectors
of the column-scaled regressor Y D kept by the rank decision of
``identification.truncated_svd``) are estimated by least squares, β̂ = S_r⁻¹ U_rᵀ τ, with covariance
σ² S_r⁻² (the base parameters of Gautier and Khalil, here from the SVD instead of a QR with
pivoting). A reported quantity g(x) with gradient a is:

* not identified, "not separable", when aᵀ D has a component in the null space of Y D
  (relative size above :data:`NULL_TOLERANCE`): the data determine only a combination of g
  with the quantities named (those the null-space direction through g moves, each itself
  not identified); "not seen by the data" when g changes no torque at all;
* else its value g(x) at the fit's x, and its std the root sum of squares of two parts:
  the data's, σ ‖S_r⁻¹ V_rᵀ D a‖ (g linearized at x), and the fit's bias, the shift
  g(x) - g(x_ls) from the least-squares estimate x_ls (β̂ with x's null-space part). A fit
  that keeps β̂ (least squares, or the consistent fit where β̂ is realizable) has no shift;
  where the physical constraints, the prior or the solver's tolerance move it, the shift is
  stated in data stds and flagged when it exceeds one. It is not identified, "poorly
  determined", when that std is above ``max_relative_std`` of |g|.

σ is the least-squares residual's, √(RSS / (rows - rank)) (the fit's own residual would
count its bias twice), with a floor for rounding: :data:`ROUNDING` · ε · s₁ · ‖D⁻¹ x_ls‖,
the error a backward-stable solve of the scaled problem makes (noise-free simulated data
leave nothing else). So every identified value states an std that covers its error from
every source: noise, constraints, prior, solver, rounding (the calibration:
``bench/bench_identification_calibration.py``).

Per-joint weighting (``identification_stats.weighted``) fits rows scaled to equal variance:
these statistics are the scaled ones, so σ² is then the common variance of the scaled rows.
"""
from dataclasses import dataclass

import numpy as np

from .least_squares import column_scales

DEFAULT_MAX_RELATIVE_STD = 0.10
NULL_TOLERANCE = 1e-6
# the rounding floor of σ, in units of ε s₁ ‖D⁻¹ x‖ (the backward error of the QR-reduced
# solve, times a margin for the statistics' merges and the regressor's own rounding)
ROUNDING = 10.0
# a combination of the data is significant where its part of the torques, |U_iᵀ τ|, is
# above this many σ (noise alone: 0.3 % of them)
SIGNIFICANT = 3.0
# a null-space direction names the parameters carrying at least this fraction of it
PARTNER_FRACTION = 1e-3
THETA_NAMES = ("mass", "hx", "hy", "hz", "ixx", "ixy", "iyy", "ixz", "iyz", "izz")
INERTIA = ("ixx", "ixy", "iyy", "ixz", "iyz", "izz")
BODY_QUANTITIES = ("mass", "com_x", "com_y", "com_z") + INERTIA


@dataclass
class Quantity:
    """
    One reported number: value, std, relative std, identified, reason (when not).

    ``shift``: value minus the least-squares estimate's (nan where that is undefined);
    ``shift_std``: that in stds of the data's part alone; ``flagged``: above one.
    """

    name: str
    value: float
    std: float
    relative_std: float
    identified: bool
    reason: object = None
    shift: float = np.nan
    shift_std: float = np.nan
    flagged: bool = False

    def as_dict(self):
        """Return the JSON form (an undefined std is None)."""
        def num(x):
            return float(x) if np.isfinite(x) else None
        return {"name": self.name, "value": num(self.value), "std": num(self.std),
                "relative_std": num(self.relative_std), "identified": self.identified,
                "reason": self.reason, "shift_from_least_squares": num(self.shift),
                "shift_std": num(self.shift_std), "flagged": bool(self.flagged)}


def parameter_names(model, kinds):
    """Return the names of the entries of x = [θ of every body, joint parameters by kind]."""
    names = [f"{b}.{t}" for b in model.body_names for t in THETA_NAMES]
    return names + [f"{j}.{k}" for k in kinds for j in model.joint_names]


def quantity_values(model, kinds, x):
    """Return {name: value} of every reported quantity at x (a simulation's truth, say)."""
    return {name: value for name, value, _ in _quantities(model, kinds, np.asarray(x, float))}


def _quantity_name(parameter):
    """Return the reported quantity a parameter belongs to: body.hx -> body.com_x, else it."""
    owner, what = parameter.rsplit(".", 1)
    return f"{owner}.com_{what[1]}" if what in ("hx", "hy", "hz") else parameter


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
    significant: int = 0        # combinations whose share of the torques is above 3 σ

    def by_name(self):
        """Return {name: Quantity}."""
        return {q.name: q for q in self.quantities}

    def not_identified(self):
        """Return the quantities not identified, as {"quantity", "reason"} dicts."""
        return [{"quantity": q.name, "reason": q.reason} for q in self.quantities
                if not q.identified]

    def identified(self):
        """Return the identified quantities."""
        return [q for q in self.quantities if q.identified]


def analyse(model, stats, kinds, x, max_relative_std=DEFAULT_MAX_RELATIVE_STD, rtol=None):
    """
    Return the :class:`Uncertainty` of the parameters x fitted on ``stats``.

    ``stats``: the ``identification_stats.Statistics`` the fit minimized (weighted rows for a
    weighted fit); x = [θ, joint parameters of ``kinds``].
    """
    from .statistics import rank_tolerance

    if not (np.isfinite(max_relative_std) and max_relative_std > 0):
        raise ValueError("max_relative_std must be a finite number > 0")
    x = np.asarray(x, np.float64)
    D = column_scales(stats.R)
    U, s, Vt = np.linalg.svd(stats.R * D)
    tol = rank_tolerance(stats) if rtol is None else rtol
    r = int(np.sum(s > tol * s[0])) if s.size and s[0] > 0 else 0
    Vr, Vn = Vt[:r].T, Vt[r:].T
    # least squares: β̂ from the data, x's own null-space part
    share = U[:, :r].T @ stats.c                 # each combination's part of the torques
    x_ls = D * (Vr @ (share / s[:r]) + Vn @ (Vn.T @ (x / D)))
    dof = stats.rows - r
    sigma = np.nan
    if dof > 0:
        rounding = ROUNDING * np.finfo(np.float64).eps * s[0] * np.linalg.norm(x_ls / D)
        sigma = float(np.hypot(np.sqrt(stats.sum_of_squares(x_ls) / dof), rounding))
    names = parameter_names(model, kinds)
    leaks = np.linalg.norm(Vn, axis=1)          # each parameter's own null-space part
    at_ls = quantity_values(model, kinds, x_ls)
    out = [_quantity(name, value, a, D, (Vr, Vn, s[:r]), sigma, at_ls[name],
                     max_relative_std, (names, leaks))
           for name, value, a in _quantities(model, kinds, x)]
    _keep_partners_unidentified(out)
    significant = int(np.sum(np.abs(share) > SIGNIFICANT * sigma)) if dof > 0 else 0
    return Uncertainty(float(sigma), int(dof), r, float(max_relative_std), out, significant)


def _quantity(name, value, a, D, basis, sigma, value_ls, max_relative_std, parameters):
    """Return the :class:`Quantity` g(x) = ``value`` of gradient a (see the module)."""
    if not np.all(np.isfinite(a)):
        return Quantity(name, value, np.nan, np.nan, False, "zero mass: no centre")
    Vr, Vn, s = basis
    ad = a * D
    leak = Vn.T @ ad
    if np.linalg.norm(leak) > NULL_TOLERANCE * np.linalg.norm(ad):
        return Quantity(name, value, np.inf, np.inf, False,
                        _inseparable(Vn @ leak, a, *parameters))
    data_std = sigma * np.linalg.norm((Vr.T @ ad) / s)
    shift = value - value_ls
    std = float(np.hypot(data_std, shift))
    with np.errstate(divide="ignore", invalid="ignore"):
        shift_std = abs(shift) / data_std if shift != 0 else 0.0
    flagged = bool(abs(shift) > data_std)
    rel = std / abs(value) if value != 0 else np.inf
    if not np.isfinite(sigma):
        reason = "no residual degrees of freedom (as many combinations as rows)"
    elif not rel <= max_relative_std:
        reason = (f"poorly determined: relative std {100 * rel:.3g} % above "
                  f"{100 * max_relative_std:.3g} %")
        if flagged:
            reason += (f" (the physical constraints move it {shift_std:.3g} std from least "
                       "squares)")
    else:
        reason = None
    return Quantity(name, float(value), std, float(rel), reason is None, reason,
                    float(shift), float(shift_std), flagged)


def _inseparable(direction, own, names, leaks, most=4):
    """
    Say why a quantity is not identified: the parameters its null direction moves most.

    ``direction``: its component in the null space, in the column-scaled coordinates (a
    parameter's weight there is how much of its effect on the torques it carries). A
    parameter is named only where it carries at least :data:`PARTNER_FRACTION` of it and
    is itself not separable (its own null-space part above :data:`NULL_TOLERANCE`); none
    named: the quantity changes no measured torque.
    """
    w = np.abs(direction)
    w[(own != 0) | (leaks <= NULL_TOLERANCE)] = 0.0
    w[w < PARTNER_FRACTION * np.linalg.norm(direction)] = 0.0
    order = [i for i in np.argsort(-w)[:most] if w[i] > 0]
    if not order:
        return "not seen by the data: it changes no measured torque"
    partners = list(dict.fromkeys(_quantity_name(names[i]) for i in order))
    return "not separable: the data determine only its combination with " + ", ".join(partners)


def _keep_partners_unidentified(quantities):
    """
    Drop from each reason the partners reported as identified (a quantity is one or other).

    In exact arithmetic a partner is never identified (a null direction through g moves only
    parameters with a null-space part); this keeps the report consistent at the tolerances.
    """
    known = {q.name for q in quantities if q.identified}
    head = "not separable: the data determine only its combination with "
    for q in quantities:
        if q.identified or not (q.reason or "").startswith(head):
            continue
        partners = [p for p in q.reason[len(head):].split(", ") if p not in known]
        q.reason = head + ", ".join(partners) if partners else \
            "not separable: the data determine it only with parameters of other quantities"


def fit(model, stats, method="consistent", kinds=(), prior_weight=1e-4,
        max_relative_std=DEFAULT_MAX_RELATIVE_STD):
    """
    Fit ``stats`` (``identification_stats.METHODS[method]``) and analyse the result.

    The one entry of every identification report (``rbd_replay --identify`` on one bag and
    on a fleet): :class:`~rbd_ros.identification.statistics.PerJoint` statistics are fitted
    weighted (``identification_stats.weighted``). ``extra["uncertainty"]``: :func:`analyse`
    of the fit on the statistics it minimized.
    """
    from . import statistics as identification_stats

    if isinstance(stats, identification_stats.PerJoint):
        result = identification_stats.weighted(model, stats, method, kinds,
                                               prior_weight=prior_weight)
    else:
        result = identification_stats.METHODS[method](model, stats, kinds,
                                                      prior_weight=prior_weight)
    x = np.r_[result.theta.ravel(), result.extra["joint_parameters"].vector(kinds)]
    result.extra["uncertainty"] = analyse(model, result.extra["statistics"], kinds, x,
                                          max_relative_std)
    return result


def unsupported(u):
    """
    Say why the data support no identified model (None when they do).

    An identified model is written only where the fit cannot just follow the noise: at
    least as many residual degrees of freedom as identifiable combinations (twice as many
    rows: each sample's leverage below ½), and at least one combination whose part of the
    torques is above :data:`SIGNIFICANT` σ (efforts all zero, or noise alone, have none).
    Individual quantities need not be identified: on an arm most are only determined in
    combinations (the base parameters), which is what the model's torques need.
    """
    if not u.dof >= u.rank:
        return (f"{u.rank + u.dof} torque rows for {u.rank} identifiable combinations: too "
                "few samples (fewer than twice as many rows as combinations, the fit would "
                "follow the noise); no identified model written")
    if u.significant == 0:
        return (f"none of the {u.rank} identifiable combinations is above {SIGNIFICANT:g} "
                f"sigma ({u.sigma:.3g}) in the torques (efforts zero or noise alone); no "
                "identified model written")
    return None


def section(u):
    """Return the report's JSON form of an :class:`Uncertainty`."""
    return {"sigma": u.sigma if np.isfinite(u.sigma) else None, "dof": u.dof,
            "identifiable": u.rank, "significant_combinations": u.significant,
            "max_relative_std": u.max_relative_std,
            "quantities": [q.as_dict() for q in u.quantities],
            "not_identified": u.not_identified()}


def joint_stds(u, joint_names, kinds):
    """Return {kind: (nv,) std} of the joint parameters (inf: not determined)."""
    found = u.by_name()
    return {k: np.array([found[f"{j}.{k}"].std for j in joint_names]) for k in kinds}


def text_lines(sec, indent="  "):
    """
    Return report lines: each identified value ± std (%σ), then what is not identified.

    Where the fit moved an identified value from least squares by more than its data std,
    every identified value also states its shift in those stds (flagged ones with "!").
    """
    found = [q for q in sec["quantities"] if q["identified"]]
    moved = any(q.get("flagged") for q in sec["quantities"])

    def show(q):
        out = f"{q['value']:.4g} ± {q['std']:.2g} ({100 * q['relative_std']:.2g} %"
        if moved and q.get("shift_std") is not None:
            out += f", {q['shift_std']:.2g} std from least squares" + \
                ("!" if q.get("flagged") else "")
        return out + ")"
    sigma = sec["sigma"]
    lines = [f"{indent}uncertainty: residual sigma "
             + (f"{sigma:.4g}" if sigma is not None else "undefined")
             + f" ({sec['dof']} degrees of freedom); {sec.get('significant_combinations')} "
             f"of {sec['identifiable']} combinations above {SIGNIFICANT:g} sigma; "
             f"{len(found)} quantities identified, "
             f"{len(sec['not_identified'])} not (relative std above "
             f"{100 * sec['max_relative_std']:.3g} % or not separable)"]
    flagged = sum(bool(q.get("flagged")) for q in sec["quantities"])
    lines.append(f"{indent}  " + (
        f"least squares is not physically realizable: the fit moves {flagged} values by "
        "more than their data std (!); each std includes its shift" if flagged else
        "every value is the least-squares estimate's within its std (stds: noise, "
        "rounding and the fit's shift)"))
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
