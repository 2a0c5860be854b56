"""``bench/node_floor.py --core``: the floor that makes the node's core calls, against Pinocchio."""
import os
import sys

import numpy as np
import pytest

from oracle import Robot, available

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "bench"))
import node_floor  # noqa: E402
import node_perf  # noqa: E402

FIVE = ["torques", "accelerations", "inverse_inertia", "rnea_derivatives", "aba_derivatives"]
OBSERVED = FIVE + ["external_torques", "contact_wrench"]


def fixed_talos():
    """Talos on a fixed base (the bench's --fixed-base), with Pinocchio's model of it."""
    return Robot("talos_fixed")


def test_core_calls_on_a_floating_base_are_refused(capsys):
    with pytest.raises(SystemExit) as exc:
        node_floor.parse_args(["--urdf", "x.urdf", "--outputs", "torques", "--core",
                               "--floating-base"])
    assert exc.value.code == 2
    assert "--core relays a fixed-base robot only" in capsys.readouterr().err


def test_a_floor_with_core_calls_is_named_apart_from_the_floor():
    here = os.getcwd()
    assert node_perf.label("python node_floor.py --urdf x --core", here, here) == "floor + core"
    assert node_perf.label("python node_floor.py --urdf x", here, here) == "floor"


@pytest.mark.pinocchio
@pytest.mark.skipif(not available("talos_fixed"), reason="example-robot-data is not installed")
def test_the_core_calls_give_pinocchio_s_dynamics_and_an_observer_that_sees_contact():
    """
    Give Pinocchio's dynamics, and an observer that sees no contact until one acts.

    At each state of a smooth trajectory (τ = RNEA of its acceleration: no external force)
    the observer's r stays near zero; once an external torque acts on one joint, r settles
    on it. The dynamics at the last state are Pinocchio's.
    """
    robot = fixed_talos()
    pin, pm, pd = robot.pin, robot.pm, robot.pd
    model = robot.model
    core = node_floor.CoreCalls(model, OBSERVED, "arm_right_7_link")
    assert core.observer is not None and core.compute[1] == "compute_all"
    rng = np.random.default_rng(7)
    q0, amplitude = model.neutral(), 0.3 * rng.uniform(0.5, 1.0, model.nv)
    omega = 2 * np.pi * rng.uniform(0.3, 0.8, model.nv)
    r_max, pushed = 0.0, np.zeros(model.nv)
    for k in range(600):                                   # 0.6 s at 1 kHz
        t = k * 1e-3
        q = q0 + amplitude * np.sin(omega * t)
        v = amplitude * omega * np.cos(omega * t)
        a = -amplitude * omega ** 2 * np.sin(omega * t)
        qp, vp, ap = robot.q_to_pin(q), robot.v_to_pin(v), robot.v_to_pin(a)
        if k == 300:
            pushed[5] = 2.0                                # N·m on the sixth joint from now
        tau = robot.v_from_pin(pin.rnea(pm, pd, qp, vp, ap)) - pushed
        core.run((100, k * 1_000_000), q, v, tau)
        if 100 <= k < 300:                                 # its start-up filtered out
            r_max = max(r_max, float(np.abs(core.observer.kernel.rows[0]).max()))
    views = core.compute[2].views
    qdd = robot.v_from_pin(pin.aba(pm, pd, qp, vp, robot.v_to_pin(tau)))
    np.testing.assert_allclose(views["qdd"], qdd, atol=1e-7)
    np.testing.assert_allclose(views["tau"], robot.v_from_pin(pin.rnea(pm, pd, qp, vp, 0 * vp)),
                               atol=1e-8)
    minv = pin.computeMinverse(pm, pd, qp)
    minv = np.triu(minv) + np.triu(minv, 1).T
    np.testing.assert_allclose(views["Minv"], robot.matrix_from_pin(minv), atol=1e-8)
    assert core.outcomes.counts["tracked"] >= 598
    assert r_max < 1e-3                                    # N·m: no contact is seen
    np.testing.assert_allclose(core.observer.kernel.rows[0], pushed, atol=1e-3)   # e^-15
    assert core.outcomes.collision.state[0] is False       # 2 N·m: under the 10 N·m threshold


@pytest.mark.skipif(not available("talos_fixed"), reason="example-robot-data is not installed")
def test_without_an_observer_output_there_is_no_observer():
    core = node_floor.CoreCalls(fixed_talos().model, ["torques"], "x")
    assert core.observer is None and core.compute[1] == "rnea"


def test_the_split_pairs_each_round_and_compares_only_a_node_of_the_same_outputs(capsys):
    import node_report
    seven, five = tuple(OBSERVED), tuple(FIVE)
    configs = [("no observer", None, five), ("observer", None, seven), ("floor", None, seven),
               (node_report.FLOOR_CORE, None, seven)]
    cpu = {"no observer": (170, 160), "observer": (210, 190), "floor": (150, 140),
           node_report.FLOOR_CORE: (215, 200)}
    runs = [(label, {"cpu_per_answer": cpu[label][k]}) for k in range(2) for label in cpu]
    node_report.print_core_split(runs, configs)
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].endswith("62 [65 60]")             # 215 - 150, 200 - 140: median 62.5
    assert lines[1] == "no observer: other outputs than the floor + core's, not compared"
    assert lines[2].startswith("observer: its own work") and lines[2].endswith("-8 [-5 -10]")


def test_pinocchio_calls_on_a_floating_base_or_beside_the_core_calls_are_refused(capsys):
    for extra in (["--pinocchio", "--floating-base"], ["--pinocchio", "--core"]):
        with pytest.raises(SystemExit) as exc:
            node_floor.parse_args(["--urdf", "x.urdf", "--outputs", "torques", *extra])
        assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "--pinocchio relays a fixed-base robot only" in err
    assert "not allowed with argument" in err


def test_a_floor_with_pinocchio_s_calls_is_named_apart():
    here = os.getcwd()
    assert (node_perf.label("python node_floor.py --urdf x --pinocchio", here, here)
            == "floor + Pinocchio")


def smooth_states(model, steps, seed):
    """Yield (k, q, v, a) of a smooth trajectory sampled at 1 kHz."""
    rng = np.random.default_rng(seed)
    q0, amplitude = model.neutral(), 0.3 * rng.uniform(0.5, 1.0, model.nv)
    omega = 2 * np.pi * rng.uniform(0.3, 0.8, model.nv)
    for k in range(steps):
        t = k * 1e-3
        yield (k, q0 + amplitude * np.sin(omega * t), amplitude * omega * np.cos(omega * t),
               -amplitude * omega ** 2 * np.sin(omega * t))


@pytest.mark.pinocchio
@pytest.mark.skipif(not available("talos_fixed"), reason="example-robot-data is not installed")
def test_pinocchio_s_calls_compute_what_the_core_s_calls_compute():
    """
    The reference run does the core's work: same dynamics, an observer that sees the same.

    Both are fed the states of a smooth trajectory, then an external torque on an arm joint
    (τ = RNEA of the acceleration minus it): Pinocchio's arrays (in its ``Data``, its joint
    order) are the core's results, its r (its own integration rule) the core observer's
    within the rules' difference from the first sample on, and so are their contact wrenches.
    The seven outputs take two Pinocchio calls, the observer's terms among their results.
    """
    from oracle import ROBOTS
    robot = fixed_talos()
    pin, pm, pd = robot.pin, robot.pm, robot.pd
    model = robot.model
    core = node_floor.CoreCalls(model, OBSERVED, "arm_right_7_link")
    ours = node_floor.PinocchioCalls(ROBOTS["talos_fixed"][0], model, OBSERVED,
                                     "arm_right_7_link")
    assert ours.step_names == ["computeABADerivatives", "computeRNEADerivatives"]
    assert ours.order is not None                      # Pinocchio's joint order differs
    order = ours.order
    pushed, r_gap = np.zeros(model.nv), {"still": 0.0, "transient": 0.0}
    for k, q, v, a in smooth_states(model, 600, 3):
        if k == 300:
            pushed[model.joint_names.index("arm_right_4_joint")] = 2.0
        tau = robot.v_from_pin(pin.rnea(pm, pd, robot.q_to_pin(q), robot.v_to_pin(v),
                                        robot.v_to_pin(a))) - pushed
        core.run((100, k * 1_000_000), q, v, tau)
        ours.run((100, k * 1_000_000), q, v, tau)
        gap = np.abs(ours.observer["r"][order] - core.observer.kernel.rows[0]).max()
        phase = "transient" if 300 <= k < 500 else "still"   # the push's first 0.2 s
        r_gap[phase] = max(r_gap[phase], gap)
    views, data = core.compute[2].views, ours.pd
    mine = np.ix_(order, order)
    np.testing.assert_allclose(data.tau[order], views["tau"], atol=1e-8)
    np.testing.assert_allclose(data.ddq[order], views["qdd"], atol=1e-7)
    np.testing.assert_allclose(data.Minv[mine], views["Minv"], atol=1e-8)
    for name, pin_name in (("dtau_dq", "dtau_dq"), ("dtau_dv", "dtau_dv"),
                           ("dqdd_dq", "ddq_dq"), ("dqdd_dv", "ddq_dv")):
        expected = views[name]
        np.testing.assert_allclose(getattr(data, pin_name)[mine], expected,
                                   atol=1e-7 * max(1.0, np.abs(expected).max()), err_msg=name)
    # N·m: the two rules differ while r follows the push (e^{-K h}, K = 50/s, against the
    # rectangle rule's 1 - K h: ~1 % of the 2 N·m step); otherwise only by their truncation
    assert r_gap["still"] < 1e-4 and r_gap["transient"] < 0.05
    assert abs(ours.observer["r"][order][pushed > 0][0] - 2.0) < 1e-3
    wrench = core.observer.kernel.rows[1]
    assert np.abs(wrench).max() > 0.5                  # a wrench at the hand explains it
    np.testing.assert_allclose(ours.observer["wrench"], wrench,
                               atol=1e-3 * np.abs(wrench).max())
    assert ours.observer["collision"] is False          # 2 N·m: under the 10 N·m threshold


@pytest.mark.pinocchio
@pytest.mark.skipif(not available("talos_fixed"), reason="example-robot-data is not installed")
def test_pinocchio_s_calls_without_derivatives_or_observer_are_its_single_calls():
    """τ, q̈ and M⁻¹ alone: ``rnea``, ``aba`` and ``computeMinverse``, the core's values."""
    from oracle import ROBOTS
    robot = fixed_talos()
    model = robot.model
    three = ["torques", "accelerations", "inverse_inertia"]
    core = node_floor.CoreCalls(model, three, "x")
    ours = node_floor.PinocchioCalls(ROBOTS["talos_fixed"][0], model, three, "x")
    assert ours.step_names == ["aba", "computeMinverse", "rnea"] and ours.observer is None
    _, q, v, a = list(smooth_states(model, 40, 5))[-1]
    tau = np.random.default_rng(5).uniform(-5, 5, model.nv)
    core.run((1, 0), q, v, tau)
    ours.run((1, 0), q, v, tau)
    views, data, order = core.compute[2].views, ours.pd, ours.order
    np.testing.assert_allclose(data.tau[order], views["tau"], atol=1e-8)
    np.testing.assert_allclose(data.ddq[order], views["qdd"], atol=1e-6)
    minv = np.triu(data.Minv) + np.triu(data.Minv, 1).T    # computeMinverse: upper only
    np.testing.assert_allclose(minv[np.ix_(order, order)], views["Minv"], atol=1e-8)


@pytest.mark.pinocchio
@pytest.mark.skipif(not available("talos_fixed"), reason="example-robot-data is not installed")
def test_an_unknown_contact_link_is_refused_by_name():
    from oracle import ROBOTS
    model = fixed_talos().model
    with pytest.raises(SystemExit, match="no link 'no_such_link'"):
        node_floor.PinocchioCalls(ROBOTS["talos_fixed"][0], model, OBSERVED, "no_such_link")


def test_the_split_names_pinocchio_s_calls_over_the_floor(capsys):
    import node_report
    seven = tuple(OBSERVED)
    configs = [("observer", None, seven), ("floor", None, seven),
               (node_report.FLOOR_PINOCCHIO, None, seven)]
    cpu = {"observer": (210, 190), "floor": (150, 140), node_report.FLOOR_PINOCCHIO: (260, 230)}
    runs = [(label, {"cpu_per_answer": cpu[label][k]}) for k in range(2) for label in cpu]
    node_report.print_core_split(runs, configs)
    lines = capsys.readouterr().out.splitlines()
    assert lines == ["Pinocchio's calls over the floor (floor + Pinocchio - floor, µs per "
                     "message, by round): 100 [110 90]"]


def test_the_thread_table_gives_each_runs_medians_and_their_difference_to_the_floors(capsys):
    import node_report
    parts = {"observer": ([250, 40, 2, 3], [270, 44, 4, 5], [260, 42, 3, 4]),
             "floor": ([120, 30, 1, 0], [130, 34, 1, 0], [125, 32, 3, 0])}
    runs = [(label, {"cpu_by_thread": parts[label][k]}) for k in range(3) for label in parts]
    node_report.print_threads(runs)
    lines = capsys.readouterr().out.splitlines()
    assert lines[2].split() == ["run", "main", "thread", "Fast", "DDS", "threads", "other",
                                "threads", "child", "processes"]
    assert lines[3].split() == ["observer", "260", "(+135)", "42", "(+10)", "3", "(+2)", "4",
                                "(+4)"]
    assert lines[4].split() == ["floor", "125", "32", "1", "0"]
    node_report.print_threads([(label, r) for label, r in runs if label != "floor"])
    assert "(+" not in capsys.readouterr().out          # no floor: no difference
