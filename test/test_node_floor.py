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
    import bench_node
    seven, five = tuple(OBSERVED), tuple(FIVE)
    configs = [("no observer", None, five), ("observer", None, seven), ("floor", None, seven),
               (bench_node.FLOOR_CORE, None, seven)]
    cpu = {"no observer": (170, 160), "observer": (210, 190), "floor": (150, 140),
           bench_node.FLOOR_CORE: (215, 200)}
    runs = [(label, {"cpu_per_answer": cpu[label][k]}) for k in range(2) for label in cpu]
    bench_node.print_core_split(runs, configs)
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].endswith("62 [65 60]")             # 215 - 150, 200 - 140: median 62.5
    assert lines[1] == "no observer: other outputs than the floor + core's, not compared"
    assert lines[2].startswith("observer: its own work") and lines[2].endswith("-8 [-5 -10]")
