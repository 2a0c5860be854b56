"""
The effort command's core (``rbd_ros.actuation.command``) against RNEA and the friction formula.

The clamp and the refusals; hostile settings and states fuzzed (a ValueError, or a finite
command within its bounds).
"""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import rbd_ros
from rbd_ros.actuation import command, dynamics

ARM7 = rbd_ros.robots.path("rbd_arm7")
MODEL = rbd_ros.load_model(ARM7)
NAMES = list(MODEL.joint_names)


def test_modes_against_rnea_and_the_friction_formula():
    q = MODEL.random_configuration(2)
    v, a = np.linspace(-0.5, 0.5, 7), np.linspace(1.0, -1.0, 7)
    with open(ARM7, encoding="utf-8") as f:
        text = f.read().replace('<limit lower="-2.8973" upper="2.8973" effort="87"',
                                '<dynamics damping="0.4" friction="0.3"/><limit lower="-2.8973" '
                                'upper="2.8973" effort="87"')
    act = dynamics.load(MODEL, text, None, urdf_dynamics=True)
    order = NAMES[::-1]
    big = command.CommandSettings(tuple(order), effort_limits=(1e6,))
    g = rbd_ros.rnea(MODEL, q, np.zeros(7), np.zeros(7))
    f = act.viscous * v + act.coulomb * np.tanh(v / act.epsilon) + act.offset
    tau = rbd_ros.rnea(MODEL, q, v, a) + act.armature * a + f
    for mode, expected in (("gravity", g), ("gravity_friction", g + f),
                           ("inverse_dynamics", tau)):
        plan = command.plan(MODEL, big._replace(mode=mode), act)
        got, clamped = plan.compute(q, v, a)
        np.testing.assert_allclose(got, expected[::-1], rtol=1e-12, atol=1e-12)
        assert clamped == 0
    assert np.any(f != 0)


def test_clamp_and_refusals():
    q = np.array([0.0, 1.2, 0.0, -0.5, 0.0, 1.0, 0.0])
    plan = command.plan(MODEL, command.CommandSettings(tuple(NAMES), effort_scale=0.05))
    got, clamped = plan.compute(q, np.zeros(7), np.zeros(7))
    raw = rbd_ros.rnea(MODEL, q, np.zeros(7), np.zeros(7))
    bound = 0.05 * np.asarray(MODEL.effort_limit)
    np.testing.assert_allclose(got, np.clip(raw, -bound, bound), rtol=1e-12, atol=1e-12)
    assert clamped == np.count_nonzero(np.abs(raw) > bound) > 0
    for settings_, text in ((command.CommandSettings(("joint1", "nope")), "nope"),
                            (command.CommandSettings(("joint1", "joint1")), "more than once"),
                            (command.CommandSettings(()), "empty"),
                            (command.CommandSettings(("joint1",), mode="x"), "command_mode"),
                            (command.CommandSettings(("joint1",), effort_scale=0.0), "scale"),
                            (command.CommandSettings(("joint1", "joint2"),
                                                     effort_limits=(1.0, 2.0, 3.0)), "one per")):
        with pytest.raises(ValueError, match=text):
            command.plan(MODEL, settings_)


@settings(max_examples=60, deadline=None, derandomize=True)
@given(names=st.lists(st.sampled_from(NAMES + ["x", "", "joint1 "]), max_size=9),
       scale=st.floats(allow_nan=True, allow_infinity=True),
       limits=st.lists(st.floats(allow_nan=True, allow_infinity=True), max_size=9),
       mode=st.sampled_from(command.MODES + ("", "gravity ")),
       state=st.lists(st.floats(allow_nan=True, allow_infinity=True), min_size=21,
                      max_size=21))
def test_fuzzed_settings_and_states(names, scale, limits, mode, state):
    settings_ = command.CommandSettings(tuple(names), mode, scale, tuple(limits))
    try:
        plan = command.plan(MODEL, settings_)
    except ValueError:
        return
    assert np.all(np.isfinite(plan.bound)) and np.all(plan.bound > 0)
    q, v, a = (np.array(state[k:k + 7]) for k in (0, 7, 14))
    try:
        got, _ = plan.compute(q, v, a)
    except ValueError:
        return
    assert np.all(np.isfinite(got)) and np.all(np.abs(got) <= plan.bound)
