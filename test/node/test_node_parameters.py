"""
The dynamics node's parameters through rclpy's parameter client (what ``ros2 param`` calls).

Described (type, description, range, read-only), checked (a bad value refused with the
reason, the node running on) and applied while the node runs: each live parameter is set
through the real parameter services and its effect checked on the node's topics against the
core. ``test_ros_cli.py`` runs ``ros2 param`` itself.
"""
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from rcl_interfaces.msg import ParameterType  # noqa: E402
from std_msgs.msg import String  # noqa: E402

import rbd_ros  # noqa: E402
from rbd_ros.node.parameters import PARAMETERS, READ_ONLY, STRING_ARRAYS  # noqa: E402
from node_helpers import wait_for  # noqa: E402
from node_cases import (ARM7, BRANCHED, TOL, assert_matches_core, core_model,  # noqa: E402
                        good_exchange, message, random_state, xml)


def refused(h, **values):
    """Set ``values``; assert it was refused; return the reason."""
    (result,) = h.set_parameters(**values)
    assert not result.successful, values
    assert result.reason
    return result.reason


def accepted(h, **values):
    for result in h.set_parameters(**values):
        assert result.successful, result.reason


def test_every_parameter_is_described(harness):
    h = harness(dict(robot_description=xml(ARM7)))
    names = list(PARAMETERS)
    descriptors = h.describe_parameters(names)
    types = {bool: ParameterType.PARAMETER_BOOL, float: ParameterType.PARAMETER_DOUBLE,
             str: ParameterType.PARAMETER_STRING, list: ParameterType.PARAMETER_DOUBLE_ARRAY,
             int: ParameterType.PARAMETER_INTEGER}
    for name, d in zip(names, descriptors):
        default, description = PARAMETERS[name]
        assert d.name == name and d.description == description
        expected = (ParameterType.PARAMETER_STRING_ARRAY if name in STRING_ARRAYS
                    else types[type(default)])
        assert d.type == expected, name
        assert d.read_only == (name in READ_ONLY), name
    rate = descriptors[names.index("rate_hz")]
    assert rate.floating_point_range[0].from_value == 0.0
    assert "one of ['skip', 'zero']" in descriptors[names.index("unknown_velocity")] \
        .additional_constraints


def test_bad_values_are_refused_with_the_reason(harness):
    h = harness(dict(robot_description=xml(ARM7)))
    model = core_model(ARM7)
    good_exchange(h, model, 300)
    assert "one of ['skip', 'zero']" in refused(h, unknown_velocity="maybe")
    assert "range" in refused(h, rate_hz=-1.0)
    assert "Wrong parameter type" in refused(h, rate_hz=5)          # an integer, not a double
    assert "out of range" in refused(h, max_joint_age=float("nan"))
    assert "3 finite numbers" in refused(h, gravity=[0.0, -9.81])
    assert "3 finite numbers" in refused(h, gravity=[0.0, 0.0, float("inf")])
    assert "not URDF XML" in refused(h, robot_description="/etc/passwd")
    for name in READ_ONLY:
        assert "read-only" in refused(h, **{name: PARAMETERS[name][0]})
    assert h.node.params["unknown_velocity"] == "skip" and h.node.params["rate_hz"] == 0.0
    assert list(h.node.get_parameter("gravity").value) == [0.0, 0.0, -9.81]
    good_exchange(h, model, 301)                  # it runs on, unchanged


def test_every_rate_inside_the_range_works_or_is_refused_with_the_reason(harness):
    """
    Tiny rates and periods are refused with the reason; the set is always answered.

    1e-300 Hz raised OverflowError in the callback (the service answered an empty result
    list, which crashes ``ros2 param set``); 1e-9 Hz was accepted and stopped every output.
    """
    h = harness(dict(robot_description=xml(ARM7)))
    model = core_model(ARM7)
    good_exchange(h, model, 310)
    for value in (1e-300, 5e-324, 1e-9, 0.0999):
        assert f"rate_hz must be 0 or at least 0.1, got {value:g}" == refused(h, rate_hz=value)
    for value in (1e-300, 1e-9, 0.00999):
        assert "diagnostics_period must be 0 or at least 0.01" in \
            refused(h, diagnostics_period=value)
    assert h.node.params["rate_hz"] == 0.0
    assert h.parameter_services().get(["rate_hz"])[0].double_value == 0.0
    good_exchange(h, model, 311)                  # on every message, as before
    accepted(h, rate_hz=0.1)                      # the least rate: a tick every 10 s
    assert h.node._live_timers["rate"].timer_period_ns == 10**10
    accepted(h, rate_hz=10000.0)
    good_exchange(h, model, 312)                  # the timer's next tick computes it
    accepted(h, rate_hz=0.0, diagnostics_period=3600.0)
    good_exchange(h, model, 313)


def test_an_exception_checking_a_value_refuses_it_with_the_reason(harness, monkeypatch):
    """The boundary of the set-parameters callback: a bug refuses, it never answers []."""
    h = harness(dict(robot_description=xml(ARM7)))
    model = core_model(ARM7)
    errors = h.node.stats()["callback_errors"]

    def broken(name, value):
        raise OverflowError("a bug in a check")
    monkeypatch.setattr("rbd_ros.node.parameters.problem", broken)
    reason = refused(h, max_joint_age=2.0)
    assert "OverflowError: a bug in a check" in reason
    assert h.node.params["max_joint_age"] == 5.0
    assert h.node.stats()["callback_errors"] == errors + 1
    monkeypatch.undo()
    good_exchange(h, model, 320)                  # the node runs on


def publisher_count(h, output):
    return h.tester.count_publishers(f"{h.namespace}/rbd_dynamics/{output}")


def test_output_switches_advertise_and_publish_live(harness):
    """Only enabled outputs are advertised; a switch creates or destroys its publisher."""
    h = harness(dict(robot_description=xml(ARM7)))
    model = core_model(ARM7)
    wait_for(lambda: publisher_count(h, "torques") == 1, what="~/torques advertised")
    for output in ("inverse_inertia", "rnea_derivatives", "aba_derivatives"):
        assert publisher_count(h, output) == 0, output
    accepted(h, publish_inverse_inertia=True, publish_torques=False)
    wait_for(lambda: publisher_count(h, "inverse_inertia") == 1
             and h.subs["inverse_inertia"].get_publisher_count() == 1,
             what="~/inverse_inertia advertised")
    wait_for(lambda: publisher_count(h, "torques") == 0, what="~/torques gone")
    q, v, tau = random_state(model, 302)
    msg = message(model, q, v, tau, seed=302)
    found = h.exchange(lambda: h.joint_states.publish(msg), msg.header.stamp,
                       topics=["inverse_inertia", "accelerations"])
    assert_matches_core(h, model, found, q, v, tau)
    assert h.find("torques", msg.header.stamp) is None


def test_gravity_applies_live(harness):
    h = harness(dict(robot_description=xml(ARM7)))
    model = core_model(ARM7)
    good_exchange(h, model, 303)
    accepted(h, gravity=[1.0, 2.0, -3.0])
    good_exchange(h, model.with_gravity([1.0, 2.0, -3.0]), 304)
    # a description loaded afterwards gets the new gravity too
    accepted(h, robot_description=xml(BRANCHED))
    branched = core_model(BRANCHED).with_gravity([1.0, 2.0, -3.0])
    wait_for(lambda: h.node.current_robot().model.name == branched.name, what="the new model")
    good_exchange(h, branched, 305)


def test_tick_rule_and_timers_apply_live(harness):
    """unknown_velocity, max_joint_age, rate_hz and diagnostics_period, set while running."""
    h = harness(dict(robot_description=xml(ARM7)))
    model = core_model(ARM7)
    q, _, tau = random_state(model, 306)
    no_velocity = message(model, q, None, tau, seed=306)
    h.send_joint_states(no_velocity)
    assert h.no_output(no_velocity.header.stamp)
    accepted(h, unknown_velocity="zero")
    found = h.exchange(lambda: h.joint_states.publish(no_velocity), no_velocity.header.stamp)
    np.testing.assert_allclose(found["torques"].effort,
                               rbd_ros.rnea(model, q, np.zeros(model.nv), np.zeros(model.nv)),
                               **TOL)
    accepted(h, rate_hz=50.0, diagnostics_period=0.1)
    ticks = h.node.stats()["ticks"]
    good_exchange(h, model, 307)                  # the timer computes now
    assert h.node.stats()["ticks"] > ticks
    wait_for(lambda: h.messages("diagnostics"), what="/diagnostics at the new period")
    accepted(h, max_joint_age=1e-6)               # every joint is stale at once
    q, v, tau = random_state(model, 308)
    stale = message(model, q, v, tau, seed=308)
    h.send_joint_states(stale)
    wait_for(lambda: h.node.skips().counts.get("stale"), what="a stale skip")
    assert h.no_output(stale.header.stamp)


def test_robot_description_parameter_applies_live(harness):
    h = harness({})
    accepted(h, robot_description=xml(ARM7))
    good_exchange(h, core_model(ARM7), 309)
    h.description.publish(String(data=xml(BRANCHED)))     # the topic still works too
    wait_for(lambda: h.node.current_robot().model.name == core_model(BRANCHED).name,
             what="the description from the topic")


def test_bad_values_at_start_up_stop_the_node():
    """A parameters file's bad value stops the node at start-up, naming it (exit 1 in main)."""
    from rclpy.exceptions import ParameterException

    from node_helpers import Harness
    with pytest.raises(ParameterException, match="rate_hz"):
        Harness(dict(rate_hz=-1.0))
    with pytest.raises(ValueError, match="unknown_velocity must be one of"):
        Harness(dict(unknown_velocity="maybe"))
    with pytest.raises(ValueError, match="gravity must be 3 finite numbers"):
        Harness(dict(gravity=[0.0, 1.0]))


def odd_inertia_arm():
    """rbd_arm7 with link1's principal moments (1, 1, 3) mg·m²: I1 + I2 < I3, still PSD."""
    text = xml(ARM7)
    first = text.index("<inertia ", text.index("<inertia ") + 1)
    end = text.index("/>", first)
    return (text[:first] + '<inertia ixx="1e-3" ixy="0" ixz="0" iyy="1e-3" iyz="0" izz="3e-3"'
            + text[end:])


@pytest.mark.parametrize("strict", [False, True])
def test_strict_inertia_parameter(harness, strict):
    # a CAD export's triangle violation: loaded with one WARN on /rosout naming the link
    # (not on stderr), or refused with strict_inertia and the reason said
    h = harness(dict(strict_inertia=strict))
    h.description.publish(String(data=odd_inertia_arm()))
    if strict:
        wait_for(lambda: h.node.stats()["descriptions_rejected"] == 1, what="the rejection")
        h.wait_log("triangle inequality")
        assert h.node.current_robot() is None
        return
    wait_for(lambda: h.node.current_robot() is not None, what="the model")
    h.wait_log("robot description: ")
    warned = [m for m in h.messages("rosout") if "triangle inequality" in m.msg]
    assert len(warned) == 1 and warned[0].level == 30, warned     # WARN, once
    assert "link1 (0.001, 0.001, 0.003)" in warned[0].msg, warned[0].msg
    with pytest.warns(UserWarning, match="triangle"):     # the library's own route
        kept = rbd_ros.load_model(odd_inertia_arm())
    good_exchange(h, kept, 311)                          # the inertia as given
