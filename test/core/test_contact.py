"""
The momentum observer, collision isolation and the contact wrench on simulated robots.

Robots simulated by Pinocchio (``contact_sim``): a known contact force on a link for part
of the time.

Truth: τ_ext = J_linkᵀ [F; p × F] (Pinocchio's frame Jacobian). After 5/K of settling r is
within 2 % of τ_ext's peak; without contact |r| < 1e-6 N·m (noise-free); the joint friction
and armature of the simulation must be given to the observer (a parameter file); with effort
noise σ = 0.05 N·m and thresholds at 5σ, a 10 N contact is flagged within 20 ms on the right
link and 60 s without contact raise nothing; the force at the link is within 3 % (noise-free).
"""
import os

import numpy as np
import pytest

from rbd_ros.actuation import dynamics as actuation
from rbd_ros.contact import detection as contact
from rbd_ros.actuation.joint_parameters import JointParameters
from contact_sim import K, OFF, ON, POINT, SETTLE, settled, simulated_contact
from oracle import Robot

pytestmark = pytest.mark.pinocchio

WRENCH_GAIN = 500.0             # 1/s: the contact wrench's checks (see below)


def _check_tracks(robot, run, r, what, start=0.0):
    """Check r: within 2 % of τ_ext's peak once settled, |r| < 1e-6 before the contact."""
    peak = np.abs(run.tau_ext).max()
    err = np.abs(r - run.tau_ext)[settled(run.t)].max()
    assert err <= 0.02 * peak, f"{what}: max |r - τ_ext| = {err:.3g} > 2 % of {peak:.3g}"
    quiet = np.abs(r[(run.t >= start) & (run.t < ON)]).max()
    assert quiet < 1e-6, f"{what}: |r| = {quiet:.2e} N·m without contact"


CASES = [("arm7", "link7", (6.0, 0.0, 8.0)), ("quadruped", "lf_shank", (3.0, 0.0, 4.0))]


@pytest.mark.parametrize("name, link, force", CASES, ids=["fixed-arm7", "floating-quadruped"])
def test_external_torques_and_contact_wrench(name, link, force):
    robot, run, _ = simulated_contact(name, link, force)
    m = robot.model
    r, restarted, status = contact.observe(m, run.t, run.q, run.v, run.tau, K)
    assert not status.any() and restarted[0] and not restarted[1:].any()
    _check_tracks(robot, run, r, name)
    # the wrench at the link: force within 3 %. (J_linkᵀ)⁺ amplifies the filter's lag
    # (τ̇_ext / K) by J's conditioning (~100 on the arm): at K = 100 the force is 3-9 % off
    # while the arm moves, at K = 500 (2 ms) within 3 %
    fast = contact.observe(m, run.t, run.q, run.v, run.tau, WRENCH_GAIN)[0]
    inside = np.flatnonzero((run.t >= ON + 5.0 / WRENCH_GAIN) & (run.t < OFF))
    for k in inside[::10]:
        w = contact.contact_wrench(m, run.q[k], fast[k], link)
        err = np.linalg.norm(w[:3] - force) / np.linalg.norm(force)
        assert err <= 0.03, f"{name} t={run.t[k]:.3f}: force {w[:3]} vs {force}"
    # on the base of a floating robot r is the external wrench on the base coordinates:
    # the base rows follow J_baseᵀ F as the joints do (checked above with every row)
    if m.floating_base:
        assert np.abs(run.tau_ext[:, :6]).max() > 1.0


def test_joint_friction_and_armature_need_the_parameter_file(tmp_path):
    robot, run, params = simulated_contact("arm7", "link7", (6.0, 0.0, 8.0), friction=True)
    m = robot.model
    r = contact.observe(m, run.t, run.q, run.v, run.tau, K)[0]
    peak = np.abs(run.tau_ext).max()
    assert np.abs(r - run.tau_ext)[settled(run.t)].max() > 0.1 * peak, \
        "without the parameter file the friction shows up as external torque"
    values = dict(zip(("armature", "viscous", "coulomb", "offset"), params[:4]))
    path = tmp_path / "joints.json"
    path.write_text(JointParameters(m.joint_names, values, params.epsilon).to_json())
    act = actuation.load(m, file_text=path.read_text())
    r = contact.observe(m, run.t, run.q, run.v, run.tau, K, joint_parameters=act)[0]
    # friction pulls the arm off its reference at the start: a fast transient, 1.5e-6 N·m of
    # quadrature error at 16 ms; checked from 5/K on, like a contact
    _check_tracks(robot, run, r, "arm7 with friction and armature", start=SETTLE)


NOISE = 0.05                     # N·m, on the recorded efforts
THRESHOLD = 5 * NOISE


def test_noisy_contact_is_flagged_fast_on_the_right_link():
    link = "link5"
    # 10 N across the link, 0.1 m from joint 5's axis (z): 1 N·m on that joint
    robot, run, _ = simulated_contact("arm7", link, (0.0, 10.0, 0.0), point=(0.1, 0.0, 0.05))
    m = robot.model
    tau = run.tau + np.random.default_rng(1).normal(scale=NOISE, size=run.tau.shape)
    r = contact.observe(m, run.t, run.q, run.v, tau, K)[0]
    flags = [contact.isolate(m, x, THRESHOLD) for x in r]
    hit = [k for k, f in enumerate(flags) if f.in_collision]
    assert hit and not any(flags[k].in_collision for k in np.flatnonzero(run.t < ON))
    delay = run.t[hit[0]] - ON
    assert 0 <= delay <= 0.020, f"flagged {delay * 1e3:.1f} ms after the contact"
    settled = np.flatnonzero((run.t >= ON + SETTLE) & (run.t < OFF))
    assert all(flags[k].in_collision and flags[k].link == link for k in settled), \
        {flags[k].link for k in settled}
    after = np.flatnonzero(run.t >= OFF + SETTLE)
    assert not any(flags[k].in_collision for k in after)


def test_sixty_seconds_without_contact_raise_no_collision():
    robot, run, _ = simulated_contact("arm7", None, None, duration=60.0, substeps=1)
    m = robot.model
    tau = run.tau + np.random.default_rng(3).normal(scale=NOISE, size=run.tau.shape)
    r = contact.observe(m, run.t, run.q, run.v, tau, K)[0]
    peak = np.abs(r).max()
    assert peak < THRESHOLD, f"a false collision: |r| reached {peak:.3f} N·m"
    assert not any(contact.isolate(m, x, THRESHOLD).in_collision for x in r[::100])


def test_stepping_equals_the_array_function_and_restarts():
    robot, run, _ = simulated_contact("arm7", "link7", (6.0, 0.0, 8.0))
    m = robot.model
    n = 200
    t = run.t[:n].copy()
    t[120:] += 0.5                               # a gap of 0.5 s: longer than max_gap
    ref, restarted, status = contact.observe(m, t, run.q[:n], run.v[:n], run.tau[:n], K,
                                             max_gap=0.1)
    assert not status.any() and list(np.flatnonzero(restarted)) == [0, 120]
    assert np.all(ref[120] == 0.0) and np.all(ref[0] == 0.0)
    observer = contact.MomentumObserver(m, K, max_gap=0.1)
    for k in range(n):
        np.testing.assert_array_equal(observer.step(t[k], run.q[k], run.v[k], run.tau[k]),
                                      ref[k])
        assert observer.restarted == restarted[k]
    observer.reset()
    assert np.all(observer.step(t[0], run.q[0], run.v[0], run.tau[0]) == 0.0)
    assert observer.restarted


def test_the_bound_step_reads_the_arrays_in_place_and_gives_the_same_r_and_wrench():
    """The node's bind and step_bound: r and wrench of step, bit for bit, at each sample."""
    robot, run, _ = simulated_contact("arm7", "link7", (6.0, 0.0, 8.0))
    m = robot.model
    n = np.searchsorted(run.t, ON + 0.3)
    stepped = contact.MomentumObserver(m, K, frame="link7")
    bound = contact.MomentumObserver(m, K, frame="link7")
    with pytest.raises(RuntimeError, match="before bind"):
        bound.step_bound(0.0)
    q, v, tau = np.empty(m.nq), np.empty(m.nv), np.empty(m.nv)
    for bad in (q[::2], q.astype(np.float32), np.empty(m.nq + 1)):
        with pytest.raises(ValueError, match="q must be a float64 C vector"):
            bound.bind(bad, v, tau)
    bound.bind(q, v, tau)
    for k in range(n):
        q[:], v[:], tau[:] = run.q[k], run.v[k], run.tau[k]       # refilled, as the node does
        r = bound.step_bound(run.t[k])
        np.testing.assert_array_equal(r, stepped.step(run.t[k], run.q[k], run.v[k], run.tau[k]))
        np.testing.assert_array_equal(bound.wrench, stepped.wrench)
        assert (bound.restarted, bound.tracking) == (stepped.restarted, stepped.tracking)
    assert bound.tracking and np.abs(r).max() > 1.0              # in contact: a real estimate
    q[0] = np.nan                                                 # read where it is: refused
    with pytest.raises(ValueError, match="q"):
        bound.step_bound(run.t[n])
    with pytest.raises(contact.SampleSkipped):                    # its stamp: not after
        bound.step_bound(run.t[n - 1])


def test_a_frame_set_later_gives_its_wrench_at_the_next_step():
    """set_frame between steps: the next step's wrench is the new link's, from that r."""
    robot, run, _ = simulated_contact("arm7", "link7", (6.0, 0.0, 8.0))
    m = robot.model
    observer = contact.MomentumObserver(m, K)
    k = np.searchsorted(run.t, ON + 0.2)          # in contact, settled
    for j in range(k):
        observer.step(run.t[j], run.q[j], run.v[j], run.tau[j])
    assert observer.wrench is None
    observer.set_frame("link7")
    r = observer.step(run.t[k], run.q[k], run.v[k], run.tau[k])
    np.testing.assert_allclose(observer.wrench, contact.contact_wrench(m, run.q[k], r, "link7"),
                               rtol=1e-12, atol=1e-12)
    with pytest.raises(ValueError, match="no_such_link"):     # refused: nothing changes
        observer.set_frame("no_such_link")
    assert observer.frame == observer.kernel.frame_name == "link7"
    r = observer.step(run.t[k + 1], run.q[k + 1], run.v[k + 1], run.tau[k + 1])
    np.testing.assert_allclose(observer.wrench,
                               contact.contact_wrench(m, run.q[k + 1], r, "link7"),
                               rtol=1e-12, atol=1e-12)
    observer.set_frame("link4")                   # 4 dof up to it: no 6-d wrench there
    observer.step(run.t[k + 2], run.q[k + 2], run.v[k + 2], run.tau[k + 2])
    assert observer.wrench is None and "6 independent directions" in observer.wrench_refusal


def test_absolute_stamps_give_the_r_of_relative_ones():
    # ROS stamps ~1.7e9 s: as float seconds their spacing (2.4e-7 s) would move r by ~3e-4
    # N·m at 1 kHz; counted from the first stamp they give r of stamps starting at 0
    robot, run, _ = simulated_contact("arm7", "link7", (6.0, 0.0, 8.0))
    m, n = robot.model, 600                          # into the contact (from 0.3 s)
    ns = np.round(run.t[:n] * 1e9).astype(np.int64)
    ref = contact.observe(m, ns * 1e-9, run.q[:n], run.v[:n], run.tau[:n], K)[0]
    assert np.abs(ref).max() > 0.5                    # the contact is seen
    base = 1_700_000_000 * 10**9 + 123_456_789
    stamps = (ns + base) // 10**9, (ns + base) % 10**9
    batch = contact.MomentumObserver(m, K)
    r = batch.run(batch.seconds(*stamps), run.q[:n], run.v[:n], run.tau[:n])[0]
    np.testing.assert_allclose(r, ref, rtol=0, atol=1e-12)
    stepped = contact.MomentumObserver(m, K)
    for k in range(n):                                # the node's way: one stamp at a time
        t = stepped.seconds(int(stamps[0][k]), int(stamps[1][k]))
        np.testing.assert_array_equal(stepped.step(t, run.q[k], run.v[k], run.tau[k]), r[k])
    absolute = stamps[0] + 1e-9 * stamps[1]           # the float seconds this replaces
    bad = contact.observe(m, absolute, run.q[:n], run.v[:n], run.tau[:n], K)[0]
    assert np.abs(bad - ref).max() > 1e-6
    stepped.reset()                                   # a reset takes the next stamp as origin
    assert stepped.seconds(5, 7) == 0.0 and stepped.seconds(6, 7) == 1.0


def test_hostile_samples_are_refused_and_change_nothing():
    robot, run, _ = simulated_contact("arm7", "link7", (6.0, 0.0, 8.0))
    m = robot.model
    observer = contact.MomentumObserver(m, K)
    for k in range(5):
        observer.step(run.t[k], run.q[k], run.v[k], run.tau[k])
    state = observer.state.copy()
    bad_tau = run.tau[5].copy()
    bad_tau[2] = np.nan
    with pytest.raises(ValueError, match="tau contains NaN"):
        observer.step(run.t[5], run.q[5], run.v[5], bad_tau)
    with pytest.raises(ValueError, match="v has the wrong size"):
        observer.step(run.t[5], run.q[5], run.v[5][:-1], run.tau[5])
    with pytest.raises(ValueError, match="t contains NaN"):
        observer.step(np.nan, run.q[5], run.v[5], run.tau[5])
    np.testing.assert_array_equal(observer.state, state)
    with pytest.raises(ValueError, match="gain"):
        observer.set_gain(-1.0)
    with pytest.raises(ValueError, match="gain"):
        contact.MomentumObserver(m, [1.0, 2.0])
    for bad_gap in ("1", None, 0.0, np.nan, True):
        with pytest.raises(ValueError, match="max_gap must be"):
            contact.MomentumObserver(m, K, max_gap=bad_gap)
    r_any = np.ones(m.nv)                    # NaN or a cut >= 1 would read as "rank 0"
    for bad_rcond in (np.nan, 1.0, -1e-3, "1e-9", None):
        with pytest.raises(ValueError, match="rcond must be"):
            contact.contact_wrench(m, run.q[5], r_any, "link7", rcond=bad_rcond)
    # the array form marks the bad sample and goes on
    tau = run.tau[:10].copy()
    tau[4, 0] = np.inf
    r, _, status = contact.observe(m, run.t[:10], run.q[:10], run.v[:10], tau, K)
    assert list(np.flatnonzero(status)) == [4] and np.all(np.isfinite(r))
    # ... but rows of another size are the whole call's mistake: refused by name, where every
    # sample's status was set and r held at zero (read as "no contact")
    t, q, v, tau = run.t[:10], run.q[:10], run.v[:10], run.tau[:10]
    for name, given in (("q", (np.c_[q, q[:, :1]], v, tau)), ("v", (q, v[:, :-1], tau)),
                        ("tau", (q, v, np.c_[tau, tau[:, :1]]))):
        with pytest.raises(ValueError, match=f"{name} must have .* columns"):
            contact.observe(m, t, *given, K)
    with pytest.raises(ValueError, match="fext must be"):
        contact.observe(m, t, q, v, tau, K, fext=np.zeros((10, m.nbodies + 1, 6)))


def test_measured_wrench_is_not_external_torque():
    """A contact given as a measured wrench (fext) is explained: r stays near zero."""
    from rbd_ros.contact import measured_wrenches as wrench
    robot, run, _ = simulated_contact("arm7", "link7", (6.0, 0.0, 8.0))
    m = robot.model
    w = np.r_[6.0, 0.0, 8.0, np.cross(POINT, (6.0, 0.0, 8.0))]
    inside = (run.t >= ON) & (run.t < OFF)
    fext = np.zeros((len(run.t), m.nbodies, 6))
    for k in np.flatnonzero(inside):
        fext[k] = wrench.fext(m, run.q[k], [("link7", "link", w)])
    r = contact.observe(m, run.t, run.q, run.v, run.tau, K, fext=fext)[0]
    # a measured wrench that steps on between two samples is a jump in u that no quadrature
    # resolves: a transient of ~K h |τ_w| / 2, gone after 5/K
    assert np.abs(r[settled(run.t)]).max() < 1e-3 * np.abs(run.tau_ext).max()


def test_isolation_and_wrench_rules():
    robot = Robot("arm7")
    m = robot.model
    r = np.zeros(m.nv)
    assert contact.isolate(m, r, 0.1) == (False, (), None, 0.0)
    r[1], r[3] = 0.5, -0.2
    iso = contact.isolate(m, r, [0.1] * m.nv)
    assert iso.in_collision and iso.joints == (1, 3) and iso.link == m.body_names[3]
    assert iso.peak_ratio == pytest.approx(5.0)
    q = robot.random_state(0)[0]
    with pytest.raises(ValueError, match="fewer than 6 dof"):
        contact.contact_wrench(m, q, r, "link3")
    # force only: a pure force at the frame's origin is recovered exactly
    JT = contact.link_jacobian_transpose(m, q, "link4")
    f = np.array([1.0, -2.0, 3.0])
    w = contact.contact_wrench(m, q, JT[:, :3] @ f, "link4", force_only=True)
    np.testing.assert_allclose(w, np.r_[f, 0, 0, 0], atol=1e-9)
    with pytest.raises(ValueError, match="no link"):
        contact.contact_wrench(m, q, r, "nope")


def test_mimic_coupled_observer_is_the_reduced_one():
    """Coupled (C_r = Gᵀ C G, M_r = Gᵀ M G): r_r = Gᵀ r of the independent model, exactly."""
    from corpus_cases import coupled_model     # the corpus: read only by this test
    m, independent = coupled_model(False)
    G = m.coupling.G
    rng = np.random.default_rng(4)
    n = 300
    t = np.arange(n) * 1e-3
    w, phase = rng.uniform(1, 3, m.nv), rng.uniform(0, 6, m.nv)
    q0 = m.random_configuration(rng)
    q = q0 + 0.2 * np.sin(np.outer(t, w) + phase)
    v = 0.2 * w * np.cos(np.outer(t, w) + phase)
    tau_full = rng.normal(size=(n, independent.nv))
    r = contact.observe(m, t, q, v, tau_full @ G, K)[0]
    qf = np.array([m.coupling.expand(x) for x in q])
    ref = contact.observe(independent, t, qf, v @ G.T, tau_full, K)[0] @ G
    np.testing.assert_allclose(r, ref, atol=1e-9 * max(1.0, np.abs(ref).max()))
    assert np.abs(ref).max() > 1e-3                # not trivially zero


@pytest.mark.parametrize("name", ["arm7", "panda", "quadruped", "talos", "branched_floating",
                                  "branched_planar"])
def test_momentum_terms_equal_pinocchio(name):
    """The observer's p = M v and u = τ + Cᵀ v − g (one O(n) pass) against Pinocchio's M, C, g."""
    robot = Robot(name)
    m, pin = robot.model, robot.pin
    for seed in (0, 1):
        q, v, _, tau, _ = robot.random_state(seed)
        observer = contact.MomentumObserver(m, K)
        observer.step(0.0, q, v, tau)
        nv = m.nv
        p, u = observer.state[3:3 + nv], observer.state[3 + nv:3 + 2 * nv]   # p_k, u_k
        qp, vp = robot.q_to_pin(q), robot.v_to_pin(v)
        M = np.triu(pin.crba(robot.pm, robot.pd, qp))
        M = robot.matrix_from_pin(M + np.triu(M, 1).T)
        C = robot.matrix_from_pin(pin.computeCoriolisMatrix(robot.pm, robot.pd, qp, vp))
        g = robot.v_from_pin(pin.computeGeneralizedGravity(robot.pm, robot.pd, qp))
        scale = max(1.0, np.abs(M).max() * np.abs(v).max())
        np.testing.assert_allclose(p, M @ v, rtol=0, atol=1e-10 * scale)
        np.testing.assert_allclose(u, tau + C.T @ v - g, rtol=0,
                                   atol=1e-10 * max(scale, np.abs(g).max()))


def test_the_manual_names_only_what_rbd_ros_contact_gives():
    # doc/contact.md's examples use `from rbd_ros import contact; contact.X`: each X must exist
    # (the layers move made rbd_ros.contact a package, whose names are re-exported)
    import re
    from rbd_ros import contact as package
    with open(os.path.join(os.path.dirname(__file__), "..", "..", "doc", "contact.md"),
              encoding="utf-8") as f:
        named = set(re.findall(r"(?<![\w.])contact\.([A-Za-z_]\w*)\(", f.read()))
    assert named >= {"MomentumObserver", "observe", "isolate", "contact_wrench"}, named
    assert [n for n in sorted(named) if not hasattr(package, n)] == []


@pytest.mark.parametrize("seed", range(3))
def test_the_one_sample_bound_is_the_batch_bound(seed):
    """
    ``step``'s overflow test (a dot product first) says what ``run``'s entry-wise one says.

    Every |x_j| <= R_LIMIT is bounded, a sum of squares far above R_LIMIT² included (all
    entries at the limit); one entry beyond it, NaN or inf is not, in r or in the wrench.
    """
    rng = np.random.default_rng(seed)
    limit = contact.R_LIMIT
    r, wrench = rng.normal(size=32), rng.normal(size=6)

    def batch(x, w):           # _step_admitted's test of one sample
        size = np.abs(x).max() if w is None else np.maximum(np.abs(x).max(), np.abs(w).max())
        return bool(size <= limit)

    cases = [(r, wrench), (r, None), (np.full(32, limit), None),
             (np.where(rng.random(32) < 0.5, -limit, limit), wrench.copy())]
    for bad in (np.nan, np.inf, -np.inf, 1.0000001 * limit, -1.0000001 * limit):
        for where in ("r", "wrench"):
            x, w = r.copy(), wrench.copy()
            (x if where == "r" else w)[rng.integers(6)] = bad
            cases.append((x, w))
    for x, w in cases:
        assert contact.bounded(x, w) == batch(x, w), (x, w)
    assert sum(contact.bounded(x, w) for x, w in cases) == 4


def _isolation_on_pinocchio_tree(robot, r, thresholds):
    """
    Apply the isolation rule on Pinocchio's tree: an oracle of :func:`isolate` outside rbd_ros.

    Over threshold: |r_j| > threshold_j; the isolated link is the child link (the body frame
    Pinocchio's URDF parser puts after the joint) of the deepest such joint, ties to the last
    in our v order; peak: max |r_j| / threshold_j.
    """
    pin, pm = robot.pin, robot.pm
    ratio = [abs(x) / t for x, t in zip(r, thresholds)]
    over = tuple(j for j, x in enumerate(ratio) if x > 1.0)
    peak = max(ratio, default=0.0)
    if not over:
        return (False, (), None, peak)
    joint_of_v = {pm.joints[k].idx_v + i: k for k in range(1, pm.njoints)
                  for i in range(pm.joints[k].nv)}

    def depth(joint):
        return 0 if joint == 0 else 1 + depth(pm.parents[joint])
    deepest = None
    for j in over:
        joint = joint_of_v[int(robot.perm_v[j])]
        if deepest is None or depth(joint) >= depth(deepest):
            deepest = joint
    link = next(f.name for f in pm.frames
                if f.type == pin.FrameType.BODY and f.parentJoint == deepest)
    return (True, over, link, peak)


def test_the_collision_state_isolates_as_pinocchio_tree_says():
    """
    The state's isolation and :func:`isolate` are the rule on Pinocchio's tree.

    Sample by sample; the peak ratio too where it isolated (below every threshold the state
    keeps the last one).
    """
    from rbd_ros.contact import CollisionState, isolate
    robot = Robot("talos")                   # a tree: legs, arms, head from one base
    m = robot.model
    thresholds = np.linspace(1.0, 3.0, m.nv)
    state = CollisionState(m, thresholds)
    rng = np.random.default_rng(4)
    seen = set()
    for _ in range(200):
        r = rng.normal(size=m.nv) * rng.choice([0.5, 1.5, 3.0])
        state.update(r)
        expected = _isolation_on_pinocchio_tree(robot, r, thresholds)
        assert tuple(isolate(m, r, thresholds)) == expected
        assert state.isolation[:3] == expected[:3]
        if expected[0]:
            assert tuple(state.isolation) == expected
        seen.add(state.isolation.link)
    assert None in seen and len(seen) > 5      # no collision, and several isolated links


def test_isolation_refuses_sizes_and_keeps_nan_peaks():
    """A NaN in r makes the peak NaN (as numpy's max), never an isolation; sizes are checked."""
    from rbd_ros.contact import CollisionState, isolate
    from rbd_ros.contact.isolation import isolation_kernel
    m = Robot("arm7").model
    r = np.zeros(m.nv)
    r[[0, 2]] = np.nan, 5.0
    iso = isolate(m, r, 1.0)
    assert np.isnan(iso.peak_ratio) and iso.joints == (2,) and iso.link == m.body_names[2]
    with pytest.raises(ValueError, match=f"{m.nv} entries"):
        isolate(m, np.zeros(m.nv + 1), 1.0)
    state = CollisionState(m, 1.0)
    with pytest.raises(ValueError, match=f"{m.nv} entries"):
        state.update(np.zeros(m.nv + 1))
    with pytest.raises(ValueError, match=f"{m.nv} entries"):
        state.update(np.zeros(1))
    # a read-only r (np.frombuffer of a message's bytes), a (1, nv) row and a list: the same
    r = np.zeros(m.nv)
    r[[1, 3]] = 0.5, -2.0
    expected = isolate(m, r, 0.1)
    assert expected.joints == (1, 3)
    locked = np.frombuffer(r.tobytes(), np.float64)
    for given in (locked, r[None], r.tolist()):
        assert isolate(m, given, 0.1) == expected
        state = CollisionState(m, 0.1)
        assert state.update(given) and state.isolation == expected
    over, peak = np.empty(m.nv + 1, np.int64), np.empty(1)
    assert isolation_kernel(np.zeros(m.nv), np.ones(m.nv - 1), np.zeros(m.nv, np.int64),
                            over, peak) == -1
    assert isolation_kernel(np.zeros(m.nv), np.ones(m.nv), np.zeros(m.nv, np.int64),
                            over[:m.nv], peak) == -1


def test_the_collision_message_fields():
    """The fields the node's and the replay's ~/collision are both filled from."""
    from rbd_ros.contact import CollisionState
    from rbd_ros.contact.isolation import BLIND_AFTER
    m = Robot("talos").model
    names = [f"dof{j}" for j in range(m.nv)]
    state = CollisionState(m, 1.0)
    assert state.message_fields(names) == {"in_collision": False, "joints": [],
                                           "isolated_link": "", "peak_ratio": 0.0,
                                           "observing": True, "reason": ""}
    r = np.zeros(m.nv)
    r[[3, m.nv - 1]] = 2.5, -4.0
    state.update(r)
    fields = state.message_fields(names)
    assert fields["in_collision"] and fields["joints"] == [names[3], names[-1]]
    assert fields["isolated_link"] == state.isolation.link and fields["peak_ratio"] == 4.0
    for _ in range(BLIND_AFTER):
        state.unobserved("x" * 300)
    fields = state.message_fields(names)
    assert not fields["observing"] and fields["reason"] == "x" * 200
    assert fields["in_collision"]                   # the last isolation is kept while blind
