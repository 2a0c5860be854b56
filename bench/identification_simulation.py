"""
Simulated arms with a known truth, identified as ``rbd_replay --identify`` does (calibration).

The benchmark ``bench_identification_calibration.py`` and the test
``test/core/test_identification_calibration.py`` share it (a bench imports the package only,
so what both need lives here, not under test/). Pinocchio is the simulator: rbd_arm7's
kinematics with random bodies (mass, centre of mass, rotated principal second moments: a
body by construction), Pinocchio's rotor inertia (``model.armature``, which its RNEA adds),
and viscous, Coulomb (tanh(v/ε)) friction and an offset written out here; torque noise of
deviation σ. Each arm is identified through the core's statistics and the report's own entry
(``identification_uncertainty.fit``: the fit and the analysis the replay prints), and every
identified value is compared with the truth in units of its stated std.
"""
from dataclasses import dataclass, field

import numpy as np

import rbd_ros
from rbd_ros.actuation import joint_parameters
from rbd_ros.identification import excitation
from rbd_ros.identification import statistics as identification_stats
from rbd_ros.identification import uncertainty as identification_uncertainty

ROBOT = "rbd_arm7"
KINDS = joint_parameters.KINDS          # --friction --armature
NOISES = (0.0, 0.01, 0.05)              # N·m
TRAJECTORIES = ("sinusoidal", "rbd_excite")
RATE = 100.0                            # samples per second, two periods of 10 s


@dataclass
class Arm:
    """One simulated arm: Pinocchio's model of it and its true x = [θ, joint parameters]."""

    pin_model: object
    x: np.ndarray
    friction: dict


def random_body(rng, com0):
    """Return (m, c, I about c) of a random rigid body near the URDF's centre ``com0``."""
    m = rng.uniform(0.5, 4.0)
    c = com0 + rng.uniform(-0.03, 0.03, 3)
    spread = rng.uniform(0.02, 0.12, 3)                 # m: the principal radii of gyration
    second = m * spread ** 2                            # ∫ x² ρ, a body by construction
    principal = np.array([second[1] + second[2], second[0] + second[2],
                          second[0] + second[1]])
    rot, _ = np.linalg.qr(rng.normal(size=(3, 3)))
    return m, c, rot @ np.diag(principal) @ rot.T


def theta(m, c, inertia_c):
    """θ = [m, m c, I about the body origin (Ixx, Ixy, Iyy, Ixz, Iyz, Izz)]."""
    i_o = inertia_c + m * (c @ c * np.eye(3) - np.outer(c, c))
    return np.r_[m, m * c, i_o[0, 0], i_o[0, 1], i_o[1, 1], i_o[0, 2], i_o[1, 2], i_o[2, 2]]


def random_arm(pin, model, rng):
    """Return an :class:`Arm`: rbd_arm7's kinematics, random bodies and joint parameters."""
    pm = pin.buildModelFromUrdf(rbd_ros.robots.path(ROBOT))
    if list(pm.names)[1:] != list(model.joint_names) or pm.nv != model.nv:
        raise ValueError("Pinocchio's joints differ from the model's")
    thetas = []
    for i in range(1, pm.njoints):
        m, c, inertia_c = random_body(rng, np.asarray(pm.inertias[i].lever))
        pm.inertias[i] = pin.Inertia(m, c, inertia_c)
        thetas.append(theta(m, c, inertia_c))
    nv = model.nv
    values = {"armature": rng.uniform(0.01, 0.3, nv), "viscous": rng.uniform(0.05, 1.0, nv),
              "coulomb": rng.uniform(0.05, 0.5, nv), "offset": rng.uniform(-0.3, 0.3, nv)}
    pm.armature = values["armature"].copy()
    x = np.r_[np.ravel(thetas), np.concatenate([values[k] for k in KINDS])]
    return Arm(pm, x, values)


def torques(pin, arm, q, v, a, noise, rng):
    """Pinocchio's RNEA (rotor inertia included) + friction + offset + N(0, noise²)."""
    pd = arm.pin_model.createData()
    tau = np.array([pin.rnea(arm.pin_model, pd, qi, vi, ai) for qi, vi, ai in zip(q, v, a)])
    f = arm.friction
    tau += f["viscous"] * v + f["coulomb"] * np.tanh(v / joint_parameters.EPSILON) \
        + f["offset"]
    return tau + (rng.normal(0.0, noise, tau.shape) if noise > 0 else 0.0)


def trajectory(model, kind, rng, designed=None):
    """
    Return (q, v, a) of two 10 s periods at :data:`RATE`.

    "sinusoidal": a random finite Fourier series scaled into the limits (rbd_excite's own
    baseline); "rbd_excite": ``designed`` (``excitation.design`` on the URDF, as
    ``rbd_excite`` does), the same for every arm (designed once on the nominal robot).
    """
    t = np.arange(int(2 * excitation.PERIOD * RATE)) / RATE
    if kind == "sinusoidal":
        series = excitation.random_series(model, excitation.Limits.of(model), rng)
    else:
        series = designed
    return series.evaluate(t)


def design(model, max_iter):
    """Return rbd_excite's optimized series for the nominal robot (its default seed)."""
    series, _, _ = excitation.design(model, KINDS, excitation.Limits.of(model),
                                     max_iter=max_iter)
    return series


@dataclass
class Tally:
    """Identified values against the truth for one (noise, trajectory) cell."""

    ratios: list = field(default_factory=list)       # |error| / stated std
    identified: int = 0
    not_identified: int = 0
    worst: tuple = ()

    def add(self, name, error, std):
        """Count one identified value."""
        ratio = abs(error) / std if std > 0 else (0.0 if error == 0 else np.inf)
        self.ratios.append(ratio)
        self.identified += 1
        if not self.worst or ratio > self.worst[0]:
            self.worst = (ratio, name, error, std)

    def within(self, k):
        """Return the fraction of identified values within k stated stds."""
        r = np.asarray(self.ratios)
        return float(np.mean(r <= k)) if len(r) else float("nan")


def identify(model, q, v, a, tau, method="consistent"):
    """Return the report's identification (``identification_uncertainty.fit``) of one bag."""
    stats = identification_stats.statistics(model, q, v, a, tau, KINDS)
    prior = 1e-4 if method == "consistent" else 0.0
    return identification_uncertainty.fit(model, stats, method, KINDS, prior)


def calibrate(pin, arms, seed=0, noises=NOISES, trajectories=TRAJECTORIES, method="consistent",
              design_iterations=20):
    """
    Simulate and identify ``arms`` random arms; return {(noise, trajectory): Tally}.

    Seeded: the same ``seed`` gives the same arms, trajectories and noise. One BLAS thread:
    the fits' many small SVDs and QRs ran tens of times slower with OpenBLAS's threads
    spinning against the others on a busy machine.
    """
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1, user_api="blas"):
        return _calibrate(pin, arms, seed, noises, trajectories, method, design_iterations)


def _calibrate(pin, arms, seed, noises, trajectories, method, design_iterations):
    model = rbd_ros.load_model(rbd_ros.robots.path(ROBOT))
    rng = np.random.default_rng(seed)
    designed = design(model, design_iterations) if "rbd_excite" in trajectories else None
    out = {(n, k): Tally() for n in noises for k in trajectories}
    for _ in range(arms):
        arm = random_arm(pin, model, rng)
        truth = identification_uncertainty.quantity_values(model, KINDS, arm.x)
        for kind in trajectories:
            q, v, a = trajectory(model, kind, rng, designed)
            clean = torques(pin, arm, q, v, a, 0.0, rng)
            for noise in noises:
                tau = clean + rng.normal(0.0, noise, clean.shape) if noise else clean
                u = identify(model, q, v, a, tau, method).extra["uncertainty"]
                cell = out[(noise, kind)]
                for qty in u.quantities:
                    if qty.identified:
                        cell.add(qty.name, qty.value - truth[qty.name], qty.std)
                    else:
                        cell.not_identified += 1
    return out


def table(tallies):
    """Return the calibration table's lines."""
    lines = [f"{'noise N·m':>9} {'trajectory':<11} {'<=1 std':>8} {'<=2 std':>8} "
             f"{'<=3 std':>8} {'max err/std':>11} {'identified':>10} {'not':>6}  worst"]
    for (noise, kind), t in tallies.items():
        worst = f"{t.worst[1]} err {t.worst[2]:.3g} std {t.worst[3]:.2g}" if t.worst else ""
        lines.append(f"{noise:>9g} {kind:<11} {t.within(1):>8.4f} {t.within(2):>8.4f} "
                     f"{t.within(3):>8.4f} {max(t.ratios, default=0.0):>11.3g} "
                     f"{t.identified:>10} {t.not_identified:>6}  {worst}")
    return lines
