"""
Fuzz the dynamics node's services with random requests (hypothesis, real rclpy).

Part of the fuzz suite (``test_fuzz.py``): random joint names (the model's, unknown, empty,
duplicated, missing), random lengths, NaN, inf and huge values, mismatched base fields,
sent to each service of a node on a floating-base robot. Each answer is either a success
whose numbers are all finite and of the sizes the request implies, or ``success: false``
with a short one-line message; no request is an internal error of the node, and the node
answers a valid request correctly afterwards. Deterministic and bounded by default (the
"default" profile in conftest.py); ``--hypothesis-profile=long`` runs longer.
"""
import math
import os

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from helpers import require_module  # noqa: E402

hypothesis = pytest.importorskip("hypothesis") if not os.environ.get("CI") else \
    require_module("hypothesis", "hypothesis")

from hypothesis import given, settings, strategies as st  # noqa: E402

from node_helpers import SERVICES, Harness  # noqa: E402
from node_cases import QUADRUPED, answers, core_model, xml  # noqa: E402

MODEL = core_model(QUADRUPED, floating_base=True)
NAMES = list(MODEL.joint_names)
FIELDS = {"inverse_dynamics": ("q", "v", "a"), "forward_dynamics": ("q", "v", "tau"),
          "inverse_inertia": ("q",), "inverse_dynamics_derivatives": ("q", "v", "a"),
          "forward_dynamics_derivatives": ("q", "v", "tau")}
BASE_SIZE = {"q": 7, "v": 6, "a": 6, "tau": 6}
MAX_MESSAGE = 600        # characters: a refusal says why in one short line
# enough to cover every kind of request a few times, a few seconds per service
EXAMPLES = max(40, settings.default.max_examples // 10)

NUMBERS = st.one_of(
    st.floats(-3, 3), st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0.0, -0.0, 1e154, -1e154, 1e200, 1e308, -1e308, 5e-324, math.nan,
                     math.inf, -math.inf]))


@st.composite
def joint_names(draw):
    """Draw the model's joints shuffled, edited once or more: unknown, empty, duplicated, gone."""
    names = draw(st.permutations(NAMES))
    for _ in range(draw(st.integers(1, 3))):
        edit = draw(st.sampled_from(["unknown", "empty", "duplicate", "drop"]))
        at = draw(st.integers(0, len(names)))
        if edit == "unknown":
            names.insert(at, draw(st.text(max_size=12)))
        elif edit == "empty":
            names.insert(at, "")
        elif edit == "duplicate" and names:
            names.insert(at, draw(st.sampled_from(names)))
        elif names:
            names.pop(min(at, len(names) - 1))
    return names


@st.composite
def request(draw, service):
    """
    Draw a request of ``service``: a valid one, or one with a set of faults.

    Faults: the names edited, hostile values (NaN, inf, huge), a field's length off, a base
    field's length off. No fault (the most frequent single draw) makes a valid request.
    """
    faults = draw(st.sets(st.sampled_from(["names", "values", "length", "base"]), max_size=3))
    req = SERVICES[service].Request()
    req.joint_names = draw(joint_names()) if "names" in faults else draw(st.permutations(NAMES))
    numbers = NUMBERS if "values" in faults else st.floats(-1, 1)
    fields = FIELDS[service]
    wrong = draw(st.sampled_from(fields))
    for field in fields:
        size, base = len(req.joint_names), BASE_SIZE[field]
        if field == wrong and "length" in faults:
            size = max(0, size + draw(st.sampled_from([-1, 1, 5, -size])))
        if field == wrong and "base" in faults:
            base = draw(st.sampled_from([0, base - 1, base + 1, 13]))
        setattr(req, field, draw(st.lists(numbers, min_size=size, max_size=size)))
        base_values = draw(st.lists(numbers, min_size=base, max_size=base))
        if field == "q" and base == 7 and draw(st.booleans()):
            base_values[3:7] = [0.0, 0.0, 0.0, 1.0]          # a valid quaternion, often
        setattr(req, "base_" + field, base_values)
    return req


def check_answer(service, req, resp):
    """Assert ``resp`` is a finite answer of the request's sizes, or a short refusal."""
    if not resp.success:
        assert resp.message and len(resp.message) <= MAX_MESSAGE, resp.message[:MAX_MESSAGE]
        assert "\n" not in resp.message
        return
    nj, size = len(req.joint_names), 6 + len(req.joint_names)
    if service == "inverse_dynamics":
        arrays = {"tau": (resp.tau, nj), "base_tau": (resp.base_tau, 6)}
    elif service == "forward_dynamics":
        arrays = {"qdd": (resp.qdd, nj), "base_qdd": (resp.base_qdd, 6)}
    elif service == "inverse_inertia":
        assert resp.minv.rows == resp.minv.cols == size
        arrays = {"minv": (resp.minv.data, size * size)}
    else:
        assert resp.derivatives.size == size
        arrays = {"d_dq": (resp.derivatives.d_dq, size * size),
                  "d_dv": (resp.derivatives.d_dv, size * size)}
    for what, (numbers, length) in arrays.items():
        assert len(numbers) == length, (what, len(numbers), length)
        assert np.isfinite(np.asarray(numbers, dtype=float)).all(), f"{what} is not finite"


@pytest.fixture(scope="module")
def node():
    h = Harness({"max_joint_age": 5.0, "diagnostics_period": 0.0, "floating_base": True,
                 "robot_description": xml(QUADRUPED)})
    yield h
    h.close()


@pytest.mark.parametrize("service", sorted(SERVICES))
def test_random_requests_get_a_finite_answer_or_a_reason(node, service):
    outcomes = []

    @settings(max_examples=EXAMPLES, deadline=None)
    @given(req=request(service))
    def one_request(req):
        resp = node.call(service, req)
        check_answer(service, req, resp)
        outcomes.append(resp.success)
    errors = node.node.stats()["callback_errors"]
    one_request()
    assert node.node.stats()["callback_errors"] == errors     # refusals, never failures
    assert any(outcomes) and not all(outcomes), "answers and refusals both drawn"
    rng = np.random.default_rng(3)
    answers(node, MODEL, 17, base=(np.r_[rng.uniform(-1, 1, 3), 0.0, 0.0, 0.0, 1.0],
                                   rng.uniform(-1, 1, 6)))
