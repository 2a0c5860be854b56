"""
Fuzz what parses or computes from outside input (hypothesis).

Random and mutated URDFs into ``load_model`` (only URDFError/ValueError may come out),
random and mutated serialized JointState/Odometry into the CDR decoders (only ValueError, or
None for bytes that are not little-endian CDR), and random array inputs into every public
function (a ValueError, or a finite result). Deterministic and bounded by default (the
"default" profile in conftest.py: CI runs it); ``pytest --hypothesis-profile=long
test/core/test_fuzz.py`` runs a longer, randomized campaign. Random service requests to a running
node: ``test_fuzz_services.py``.
"""
import os
import re
import warnings

import numpy as np
import pytest

import rbd_ros
from helpers import BUNDLED_DIR, URDF_DIR, require_module
from messages import odometry_cdr

hypothesis = pytest.importorskip("hypothesis") if not os.environ.get("CI") else \
    require_module("hypothesis", "hypothesis")
from hypothesis import given, strategies as st  # noqa: E402

URDFS = [os.path.join(BUNDLED_DIR, "rbd_arm7.urdf"), os.path.join(BUNDLED_DIR,
                                                                  "rbd_quadruped.urdf")]
URDFS += [os.path.join(URDF_DIR, f) for f in ("pendulum.urdf", "branched.urdf",
                                              "prismatic.urdf")]
TEXTS = [open(p, encoding="utf-8").read() for p in URDFS]

ODD_VALUES = ["", " ", "nan", "inf", "-inf", "1e400", "-1", "0", "abc", "0 0", "1 2 3 4",
              "1e-300", "-0", "1,2,3", "\x00", "&amp;", "1e308 1e308 1e308", "NaN NaN NaN"]


# -- URDFs ----------------------------------------------------------------------------------
@st.composite
def mutated_urdf(draw):
    """One of our URDFs with a few random edits of its elements, attributes or text."""
    text = draw(st.sampled_from(TEXTS))
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["attribute", "delete", "duplicate", "truncate", "bytes"]))
        if kind == "attribute":
            spans = [m.span(2) for m in re.finditer(r'(\w+)="([^"]*)"', text)]
            if not spans:
                continue
            start, end = draw(st.sampled_from(spans))
            value = draw(st.one_of(st.sampled_from(ODD_VALUES),
                                   st.floats(allow_nan=True).map(repr),
                                   st.text(max_size=8)))
            text = text[:start] + value.replace('"', "") + text[end:]
        elif kind in ("delete", "duplicate"):
            spans = [m.span() for m in re.finditer(r"<(\w+)[^<>]*/>", text)]
            spans += [m.span() for m in re.finditer(r"<(link|joint|inertial|origin)\b.*?</\1>",
                                                    text, re.S)]
            if not spans:
                continue
            start, end = draw(st.sampled_from(spans))
            piece = "" if kind == "delete" else text[start:end] * 2
            text = text[:start] + piece + text[end:]
        elif kind == "truncate":
            text = text[:draw(st.integers(0, len(text)))]
        else:
            at = draw(st.integers(0, len(text)))
            text = text[:at] + draw(st.text(max_size=6)) + text[at:]
    return text


def check_loaded(model):
    """Check that a model that loaded computes finite torques, or refuses with ValueError."""
    q = model.neutral()
    zeros = np.zeros(model.nv)
    try:
        tau = rbd_ros.rnea(model, q, zeros, zeros)
    except ValueError:
        return
    assert np.all(np.isfinite(tau))


@given(mutated_urdf(), st.booleans())
def test_mutated_urdf_loads_or_is_refused(text, floating):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            model = rbd_ros.load_model(text, floating_base=floating)
        except ValueError as exc:          # URDFError is a ValueError
            assert len(str(exc)) < 2000, "error messages quote short excerpts only"
            return
    check_loaded(model)


@given(st.binary(max_size=400) | st.text(max_size=400).map(lambda t: "<robot>" + t))
def test_random_text_is_refused(data):
    if isinstance(data, bytes):
        data = data.decode("latin-1")
    if not data.lstrip().startswith("<"):
        data = "<" + data                    # XML, not a path: never open files here
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            model = rbd_ros.load_model(data)
        except ValueError:
            return
    check_loaded(model)


# -- serialized messages -------------------------------------------------------------------
def serialized_messages():
    """Return a JointState and an Odometry serialized (little-endian CDR) by rosbags."""
    rosbags = pytest.importorskip("rosbags.typesys")
    store = rosbags.get_typestore(rosbags.Stores.ROS2_JAZZY)
    JointState = store.types["sensor_msgs/msg/JointState"]
    Header = store.types["std_msgs/msg/Header"]
    Time = store.types["builtin_interfaces/msg/Time"]
    header = Header(stamp=Time(sec=3, nanosec=5), frame_id="base")
    names = ["j1", "joint_two", "j3"]
    js = JointState(header=header, name=names, position=np.arange(3.0),
                    velocity=np.ones(3), effort=np.zeros(3))
    raw_js = bytes(store.serialize_cdr(js, "sensor_msgs/msg/JointState"))
    pose_twist = [1.0, 2.0, 3.0, 0.0, 0.0, 0.0, 1.0, 0.1, 0.2, 0.3, 0.0, 0.0, 0.5]
    raw_odom = odometry_cdr(store, pose_twist, 3, 5)
    return raw_js, raw_odom


RAW_JOINT_STATE, RAW_ODOMETRY = serialized_messages()


@st.composite
def mutated(draw, raw):
    data = bytearray(raw)
    for _ in range(draw(st.integers(1, 6))):
        kind = draw(st.sampled_from(["flip", "truncate", "insert", "delete"]))
        at = draw(st.integers(0, len(data)))
        if kind == "flip" and at < len(data):
            data[at] = draw(st.integers(0, 255))
        elif kind == "truncate":
            del data[at:]
        elif kind == "insert":
            data[at:at] = draw(st.binary(min_size=1, max_size=8))
        elif at < len(data):
            del data[at:at + draw(st.integers(1, 8))]
    return bytes(data)


@given(mutated(RAW_JOINT_STATE) | st.binary(max_size=200))
def test_joint_state_decoder_only_raises_value_error(raw):
    from rbd_ros.formats import cdr
    decoder = cdr.JointStateDecoder()
    for _ in range(2):                        # the second time through the cached name layout
        try:
            out = decoder.decode(raw)
        except ValueError:
            return
        if out is None:
            return
        names, stamp, position, velocity, effort = out
        assert all(isinstance(n, str) for n in names)
        assert position.dtype == np.float64 and len(stamp) == 2


@given(mutated(RAW_ODOMETRY) | st.binary(max_size=200))
def test_odometry_decoder_only_raises_value_error(raw):
    from rbd_ros.formats import cdr
    try:
        out = cdr.decode_odometry(raw)
    except ValueError:
        return
    if out is not None:
        stamp, values = out
        assert values.shape == (13,) and len(stamp) == 2


# -- array inputs of every public function -------------------------------------------------
MODEL = rbd_ros.load_model(os.path.join(BUNDLED_DIR, "rbd_quadruped.urdf"), floating_base=True)
FIXED = rbd_ros.load_model(os.path.join(BUNDLED_DIR, "rbd_arm7.urdf"))

FUNCTIONS = {   # name: (function, argument kinds); q: configuration, n: nv-vector
    "rnea": (rbd_ros.rnea, "qnn"), "aba": (rbd_ros.aba, "qnn"), "crba": (rbd_ros.crba, "q"),
    "minv": (rbd_ros.minv, "q"), "minv_cholesky": (rbd_ros.minv_cholesky, "q"),
    "nonlinear_effects": (rbd_ros.nonlinear_effects, "qn"),
    "gravity_torques": (rbd_ros.gravity_torques, "q"),
    "rnea_derivatives": (rbd_ros.rnea_derivatives, "qnn"),
    "aba_derivatives": (rbd_ros.aba_derivatives, "qnn"),
    "compute_all": (lambda m, q, v, a, t: rbd_ros.compute_all(m, q, v, a=a, tau=t), "qnnn"),
    "inverse_and_forward_dynamics": (
        lambda m, q, v, a, t: rbd_ros.inverse_and_forward_dynamics(m, q, v, a=a, tau=t),
        "qnnn"),
    "joint_torque_regressor": (rbd_ros.joint_torque_regressor, "qnn"),
    "integrate": (rbd_ros.integrate, "qn"),
    "rnea_batch": (rbd_ros.rnea_batch, "QNN"), "aba_batch": (rbd_ros.aba_batch, "QNN"),
    "minv_batch": (rbd_ros.minv_batch, "Q"),
    "rnea_derivatives_batch": (rbd_ros.rnea_derivatives_batch, "QNN"),
    "aba_derivatives_batch": (rbd_ros.aba_derivatives_batch, "QNN"),
    "joint_torque_regressor_batch": (rbd_ros.joint_torque_regressor_batch, "QNN"),
}

NUMBERS = st.one_of(
    st.floats(-10, 10), st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0.0, -0.0, 1e154, -1e154, 1e200, 1e308, -1e308, 5e-324, 1e-300, np.nan,
                     np.inf]))


@st.composite
def argument(draw, model, kind):
    """Draw a valid-looking or broken argument of the given kind."""
    size = model.nq if kind in "qQ" else model.nv
    batch = kind.isupper()
    broken = draw(st.integers(0, 9)) == 0
    if broken:
        return draw(st.sampled_from([None, "q", [1, "a"], np.zeros(size + 1), np.zeros(0),
                                     np.zeros((2, 2, 2)), np.zeros(size, complex) + 1j,
                                     [[np.nan] * size], np.zeros(size, bool), object()]))
    shape = (draw(st.integers(0, 3)), size) if batch else (size,)
    values = np.array(draw(st.lists(NUMBERS, min_size=int(np.prod(shape)),
                                    max_size=int(np.prod(shape)))), dtype=np.float64)
    values = values.reshape(shape)
    if kind in "qQ" and model.floating_base and draw(st.booleans()):
        values[..., 3:7] = (0.0, 0.0, 0.0, 1.0)      # a valid quaternion, often
    return values


def finite(result):
    if isinstance(result, tuple):
        return all(finite(r) for r in result)
    return bool(np.all(np.isfinite(result)))


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
@pytest.mark.parametrize("model", [MODEL, FIXED], ids=["floating", "fixed"])
@given(data=st.data())
def test_every_function_gives_value_error_or_a_finite_result(name, model, data):
    function, kinds = FUNCTIONS[name]
    args = [data.draw(argument(model, kind)) for kind in kinds]
    with warnings.catch_warnings():
        warnings.simplefilter("error")         # a silent ComplexWarning is a failure too
        try:
            result = function(model, *args)
        except ValueError:
            return
    assert finite(result), f"{name} returned a non-finite result for finite-looking input"
