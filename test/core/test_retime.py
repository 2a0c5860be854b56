"""
rbd_ros.retime (issue 25): time-optimal retiming under torque limits, against Pinocchio and toppra.

Every answered sample is checked with τ recomputed by Pinocchio's RNEA (payload merged into
its body inertia, armature and friction added as in ``test_actuation``): |τ| <= effort limit
× scale, |v| <= velocity limit × scale, |a| <= acceleration limit; its positions are on the
cubic spline through the waypoints (SciPy's over the normalized chord length, ``retime_paths``)
and its velocities agree with the finite differences of its positions in time. The duration
is compared with toppra's own solution on the same grid with Pinocchio's inverse dynamics as
its per-point callback (``JointTorqueConstraint``).
"""
import numpy as np
import pytest

import rbd_ros
from rbd_ros.actuation.joint_parameters import JointParameters
from helpers import get_robot
from mimic_oracle import HAND, ReducedOracle, hand_urdf
from pinocchio_oracles import pin_effort
from retime_paths import spline, waypoints

pytestmark = pytest.mark.pinocchio
toppra = pytest.importorskip("toppra")


def check_samples(r, model, w, tau_ref, velocity_scale, effort_scale, acc=None, grid=None):
    """Check the limits at every sample (τ: ``tau_ref``), the path and the timing."""
    effort = model.effort_limit * effort_scale
    assert np.all(np.abs(tau_ref) <= effort * (1 + 1e-6)), np.max(np.abs(tau_ref) / effort)
    assert np.all(np.abs(r.v) <= model.velocity_limit * velocity_scale * (1 + 1e-6))
    if acc is not None:
        assert np.all(np.abs(r.a) <= acc * (1 + 1e-6))
    assert np.max(np.abs(r.tau - tau_ref)) <= 1e-8 * np.max(np.abs(tau_ref))
    assert np.max(np.abs(r.q - spline(w)(r.s))) <= 1e-6
    assert np.allclose(r.q[0], w[0]) and np.allclose(r.q[-1], w[-1])
    assert r.t[0] == 0 and np.all(np.diff(r.t) > 0) and r.t[-1] == pytest.approx(r.duration)
    assert np.all(r.v[[0, -1]] == 0)
    timing(r, spline(w), np.linspace(0, 1, len(r.t)) if len(r.t) == grid else None)


def timing(r, path, grid=None):
    """
    Check that (q, v, a) follow one timing s(t) of ``path``: v = p' ṡ, a = p' s̈ + p'' ṡ².

    ṡ and s̈ are read from v and a (projections on p'), the rest must vanish; s̈ is constant
    between samples that are grid points (TOPP-RA's intervals), so ṡ and s advance exactly by
    s̈ Δt and (ṡ_i + ṡ_{i+1}) Δt / 2 there; between time samples a sample interval can hold a
    grid point where s̈ jumps (ṡ stays continuous): s and ṡ then agree to second order.
    """
    ps, pss = path(r.s, 1), path(r.s, 2)
    norm = np.sum(ps * ps, axis=1)
    sd = np.sum(r.v * ps, axis=1) / norm
    sdd = np.sum((r.a - pss * (sd * sd)[:, None]) * ps, axis=1) / norm
    scale_v, scale_a = np.max(np.abs(r.v)), np.max(np.abs(r.a))
    assert np.max(np.abs(r.v - ps * sd[:, None])) <= 1e-9 * scale_v
    assert np.max(np.abs(r.a - ps * sdd[:, None] - pss * (sd * sd)[:, None])) <= 1e-9 * scale_a
    assert np.all(sd >= -1e-12)
    dt = np.diff(r.t)
    ds_trapezoid = 0.5 * (sd[1:] + sd[:-1]) * dt
    on_grid = grid is not None
    tol = 1e-9 if on_grid else 1e-2
    assert np.max(np.abs(np.diff(r.s) - ds_trapezoid)) <= tol * np.max(np.diff(r.s))
    assert np.max(np.abs(np.diff(sd) - sdd[:-1] * dt)) <= tol * 10 * np.max(np.abs(sd))
    if on_grid:
        assert np.allclose(r.s, grid, rtol=0, atol=1e-12)


def pin_toppra(robot, pm, w, grid, velocity, effort, acc):
    """Return toppra's duration with JointTorqueConstraint calling pin.rnea point by point."""
    import pinocchio as pin
    from toppra import algorithm, constraint
    pd = pm.createData()

    def inv_dyn(q, v, a):
        return robot.v_from_pin(pin.rnea(pm, pd, robot.q_to_pin(q), robot.v_to_pin(v),
                                         robot.v_to_pin(a)))
    interp = constraint.DiscretizationType.Interpolation
    cons = [constraint.JointVelocityConstraint(velocity)]
    if effort is not None:
        cons.append(constraint.JointTorqueConstraint(
            inv_dyn, np.stack([-effort, effort], 1), np.zeros(len(effort)), interp))
    if acc is not None:
        cons.append(constraint.JointAccelerationConstraint(acc, interp))
    s = np.concatenate([[0.0], np.cumsum(np.linalg.norm(np.diff(w, axis=0), axis=1))])
    path = toppra.SplineInterpolator(s / s[-1], w)
    instance = algorithm.TOPPRA(cons, path, gridpoints=np.linspace(0, 1, grid),
                                solver_wrapper="seidel", parametrizer="ParametrizeConstAccel")
    traj = instance.compute_trajectory(0, 0)
    assert traj is not None
    return traj.duration


@pytest.mark.parametrize("sample_period", [None, 0.005])
def test_limits_at_every_sample_against_pinocchio(pin, sample_period):
    robot = get_robot("arm7")
    m = robot.model
    w = waypoints(m, 12, 1)
    acc = np.full(m.nv, 20.0)
    r = rbd_ros.retime(m, w, velocity_scale=0.8, effort_scale=0.35, acceleration_limits=acc,
                       grid=400, sample_period=sample_period)
    tau = pin_effort(robot, robot.pm, r.q, r.v, r.a)
    check_samples(r, m, w, tau, 0.8, 0.35, acc, grid=400 if sample_period is None else None)
    if sample_period is None:
        # every limit kind binds somewhere on this path
        assert set(np.unique(r.binding)) >= {1, 2, 3}, np.bincount(r.binding)
        assert r.time_scale == 1.0 and len(r.t) == 400
    else:
        # the slow-down is the least that works: some sample is at its limit
        assert np.max(r.binding_ratio) >= 1 - 1e-6
        assert np.allclose(np.diff(r.t[:-1]), sample_period * r.time_scale)
        assert 1.0 <= r.time_scale < 1.05


def test_payload_armature_friction_against_pinocchio(pin):
    robot = get_robot("arm7")
    m0 = robot.model
    mass, com = 2.0, np.array([0.02, -0.01, 0.05])
    rot = np.diag([0.01, 0.02, 0.015])
    link = m0.body_names[-1]
    m = m0.with_payload(link, rbd_ros.model.inertia.compact(mass, com, rot))
    pm = robot.pm.copy() if hasattr(robot.pm, "copy") else pin.Model(robot.pm)
    jid = robot.body_joint[m0.nbodies - 1]
    pm.inertias[jid] = pm.inertias[jid] + pin.Inertia(mass, com, rot)
    rng = np.random.default_rng(3)
    n = m.nv
    values = {"armature": rng.uniform(0.05, 0.3, n), "viscous": rng.uniform(0.1, 1.0, n),
              "coulomb": rng.uniform(0.2, 1.0, n), "offset": rng.uniform(-0.5, 0.5, n)}
    params = JointParameters(m.joint_names, values)
    w = waypoints(m, 8, 2)
    r = rbd_ros.retime(m, w, effort_scale=0.6, joint_parameters=params, grid=300,
                       sample_period=0.004)
    x = values
    tau = (pin_effort(robot, pm, r.q, r.v, r.a) + x["armature"] * r.a + x["viscous"] * r.v
           + x["coulomb"] * np.tanh(r.v / params.epsilon) + x["offset"])
    check_samples(r, m, w, tau, 1.0, 0.6)
    assert (r.binding == 3).any()                # the effort limit binds with the payload


def test_duration_against_toppra_with_pinocchio(pin):
    """7-dof arm, 20 waypoints, 500 grid points: within 1 % of toppra's own answer."""
    robot = get_robot("arm7")
    m = robot.model
    w = waypoints(m, 20, 0)
    acc = np.full(m.nv, 30.0)
    effort, velocity = 0.35 * m.effort_limit, m.velocity_limit
    r = rbd_ros.retime(m, w, effort_scale=0.35, acceleration_limits=acc, grid=500)
    theirs = pin_toppra(robot, robot.pm, w, 500, velocity, effort, acc)
    assert abs(r.duration - theirs) <= 0.01 * theirs, (r.duration, theirs)
    # the torque limit binds: slower than the velocity and acceleration limits alone
    free = pin_toppra(robot, robot.pm, w, 500, velocity, None, acc)
    print(f"\ntorque-limited {r.duration:.4f} s (toppra + Pinocchio {theirs:.4f} s), "
          f"velocity/acceleration only {free:.4f} s: {100 * (r.duration / free - 1):.1f} % "
          "slower")
    assert r.duration > 1.05 * free
    assert (r.binding == 3).sum() >= 20


def test_mimic_reduced_system():
    """A mimic-coupled hand: τ of the reduced system (Pinocchio, reduced with G)."""
    xml = hand_urdf(HAND)
    g = np.array([0.0, 0.0, -2.0])           # its prismatic joint holds 9.81 m/s² beyond 10 N
    m = rbd_ros.load_model(xml).with_gravity(g)
    oracle = ReducedOracle(xml, False, m.joint_names, m.body_names)
    oracle.pm.gravity.linear = g
    w = waypoints(m, 5, 4, spread=0.5)
    r = rbd_ros.retime(m, w, effort_scale=0.9, grid=200, sample_period=0.01)
    tau = np.array([oracle.rnea(q, v, a) for q, v, a in zip(r.q, r.v, r.a)])
    check_samples(r, m, w, tau, 1.0, 0.9)


def test_refusals():
    m = get_robot("arm7").model
    w = waypoints(m, 4, 5)

    def refused(*words, **kwargs):
        args = dict(model=m, waypoints=w)
        args.update(kwargs)
        with pytest.raises(ValueError) as err:
            rbd_ros.retime(**args)
        for word in words:
            assert word in str(err.value), (str(err.value), word)
        assert len(str(err.value)) < 300
    refused("at least two", waypoints=w[:1])
    bad = w.copy()
    bad[2, 3] = np.nan
    refused("waypoint 2", m.joint_names[3], "NaN", waypoints=bad)
    out = w.copy()
    out[1, 0] = m.upper[0] + 0.1
    refused("waypoint 1", m.joint_names[0], "outside", waypoints=out)
    refused("same configuration", waypoints=np.vstack([w[:2], w[1:]]))
    refused("infeasible", "standing still", "effort limit", effort_scale=0.05)
    refused("shape", waypoints=w[:, :3])
    refused("velocity_scale", velocity_scale=0.0)
    refused("effort_scale", effort_scale=float("nan"))
    refused("acceleration_limits", acceleration_limits=[1.0, 2.0])
    refused("grid", grid=1)
    refused("sample_period", sample_period=-1.0)
    floating = get_robot("quadruped").model
    with pytest.raises(ValueError, match="floating"):
        rbd_ros.retime(floating, np.tile(floating.neutral(), (2, 1)))


def test_substeps_and_tiny_limits_refused_with_their_reason():
    """
    Out-of-range substeps and limits are refused naming their range (issue 33, C5).

    velocity_substeps 0 dropped the velocity limits (a slower, effort-bound answer), -3 gave
    "negative dimensions", 10**6 a MemoryError; a scale or acceleration limit of 1e-300 was
    refused as "friction or gravity leaves no torque".
    """
    from rbd_ros.retiming import retimer
    m = get_robot("arm7").model
    w = waypoints(m, 3, 15)
    for substeps, words in ((0, ("1 to 32",)), (-3, ("1 to 32",)), (10 ** 6, ("1 to 32",)),
                            (2.5, ("integer",)), (True, ("integer",))):
        with pytest.raises(ValueError, match="velocity_substeps") as err:
            rbd_ros.retime(m, w, grid=100, velocity_substeps=substeps)
        assert all(word in str(err.value) for word in words), str(err.value)
    with pytest.raises(ValueError, match="velocity_substeps"):
        rbd_ros.retime(m, w, grid=retimer.MAX_GRID, velocity_substeps=32)   # rows x grid
    tiny = {"velocity_scale": (1e-300, "velocity_scale", "1e-06"),
            "effort_scale": (1e-300, "effort_scale", "1e-06"),
            "acceleration_limits": (np.full(m.nv, 1e-300), "acceleration_limits", "0.001")}
    for name, (value, *words) in tiny.items():
        with pytest.raises(ValueError) as err:
            rbd_ros.retime(m, w, grid=100, **{name: value})
        assert all(word in str(err.value) for word in words), str(err.value)
    # at the stated minima a timing exists (the limits themselves, not TOPP-RA's tolerances)
    slow = rbd_ros.retime(m, w, grid=100, velocity_scale=retimer.MIN_SCALE,
                          acceleration_limits=np.full(m.nv, retimer.MIN_ACCELERATION))
    assert np.isfinite(slow.duration) and slow.duration > 100.0
    assert (np.abs(slow.a) <= retimer.MIN_ACCELERATION * (1 + 1e-6)).all()


def test_velocity_between_grid_points():
    """velocity_substeps: ṡ² linear on an interval kept below the velocity bound inside it."""
    robot = get_robot("arm7")
    m = robot.model
    w = waypoints(m, 20, 0)
    grid = np.linspace(0, 1, 200)
    plain = rbd_ros.retime(m, w, grid=grid)
    inside = rbd_ros.retime(m, w, grid=grid, velocity_substeps=8)
    assert inside.duration >= plain.duration
    fine = np.linspace(0, 1, 8 * 199 + 1)

    def peak(r):
        """Return max |v| / limit at 8 points per interval, ṡ² linear in s between grid points."""
        ps = spline(w)(r.s, 1)
        sd2 = np.interp(fine, r.s, (np.sum(r.v * ps, axis=1) / np.sum(ps * ps, axis=1)) ** 2)
        return np.max(np.abs(spline(w)(fine, 1)) * np.sqrt(sd2)[:, None] / m.velocity_limit)
    assert peak(inside) <= 1 + 1e-6
    assert peak(plain) > 1.001            # toppra's grid-point bound, exceeded in between
    print(f"\nvelocity_substeps 8: {inside.duration:.4f} s, peak {peak(inside):.6f}; "
          f"1: {plain.duration:.4f} s, peak {peak(plain):.6f}")
