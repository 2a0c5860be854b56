"""
Fuzz the URDF loader's reading (hypothesis; profiles in conftest.py).

Two properties: content the dynamics does not read (visual, collision, material,
transmission, gazebo, unknown tags, a BOM and comments before the declaration) never changes
the model; and a random tree with random numbers (NaN, inf, huge, tiny, negative, zero
masses) either loads into a model whose torques are finite (or refused as such), or is
refused with a short URDFError -- never another exception.
"""
import os
import warnings

import numpy as np
import pytest

import rbd_ros
from helpers import BUNDLED_DIR, URDF_DIR, require_module

hypothesis = pytest.importorskip("hypothesis") if not os.environ.get("CI") else \
    require_module("hypothesis", "hypothesis")
from hypothesis import given, strategies as st  # noqa: E402

SOURCES = [os.path.join(BUNDLED_DIR, "rbd_arm7.urdf"), os.path.join(URDF_DIR, "branched.urdf"),
           os.path.join(URDF_DIR, "prismatic.urdf")]
TEXTS = [open(p, encoding="utf-8").read() for p in SOURCES]

NAME = st.text("abcxyz_:", min_size=1, max_size=6)
ATTRIBUTES = st.dictionaries(NAME, st.text(st.characters(blacklist_categories=("Cs", "Cc")),
                                           max_size=8), max_size=3)


@st.composite
def ignored_element(draw, depth=2):
    """Draw an element the dynamics never reads: random attributes, children and text."""
    tag = draw(st.sampled_from(["visual", "collision", "material", "gazebo", "transmission",
                                "sensor", "texture", "geometry", "plugin", "ros2_control"]))
    attributes = "".join(f' {k}="{_escape(v)}"' for k, v in draw(ATTRIBUTES).items())
    children = "".join(draw(st.lists(ignored_element(depth - 1), max_size=2))) if depth else ""
    text = _escape(draw(st.text(max_size=5).filter(lambda t: "\x00" not in t)))
    return f"<{tag}{attributes}>{text}{children}</{tag}>"


def _escape(text):
    """Escape XML markup; drop characters XML cannot hold."""
    text = "".join(c for c in text if c in "\t\n\r" or (ord(c) >= 0x20 and not
                                                        0xD800 <= ord(c) <= 0xDFFF))
    return text.replace("&", "&amp;").replace("<", "&lt;").replace('"', "&quot;")


@st.composite
def decorated(draw):
    """Return (plain URDF, the same with ignorable content added)."""
    plain = draw(st.sampled_from(TEXTS))
    text = plain
    for _ in range(draw(st.integers(1, 4))):
        where = draw(st.sampled_from(["</robot>", "</link>", "<link "]))
        spots = [i for i in range(len(text)) if text.startswith(where, i)]
        if not spots:
            continue
        at = draw(st.sampled_from(spots))
        if where == "<link ":                  # inside: after the start tag
            at = text.index(">", at) + 1
            if text[at - 2] == "/":
                continue
        text = text[:at] + draw(ignored_element()) + text[at:]
    prologue = draw(st.lists(st.sampled_from(["\n", "  ", "<!-- c -->", "\t"]), max_size=3))
    text = text.replace('<?xml version="1.0"?>', "", 1)
    declaration = draw(st.sampled_from(["", '<?xml version="1.0"?>',
                                        "<?xml version='1.0' encoding='UTF-8'?>"]))
    bom = draw(st.sampled_from(["", "\ufeff"]))
    return plain, bom + "".join(prologue) + declaration + text


@given(decorated())
def test_ignored_content_never_changes_the_model(pair):
    plain, text = pair
    a, b = rbd_ros.load_model(plain), rbd_ros.load_model(text)
    assert a.joint_names == b.joint_names and a.body_names == b.body_names
    np.testing.assert_array_equal(a.packed, b.packed)


NUMBER = st.one_of(st.sampled_from(["0", "1", "-1", "nan", "inf", "-inf", "1e308", "1e-300",
                                    "0.1", "x", ""]),
                   st.floats(-1e3, 1e3).map(repr))


@st.composite
def random_tree(draw):
    """Draw a random tree of links and joints with random numbers everywhere."""
    n = draw(st.integers(1, 6))
    parts = []
    for i in range(n):
        if draw(st.booleans()):
            m, ixx, iyy, izz, ixy = (draw(NUMBER) for _ in range(5))
            parts.append(f'<link name="l{i}"><inertial><origin xyz="{draw(NUMBER)} 0 0"/>'
                         f'<mass value="{m}"/><inertia ixx="{ixx}" iyy="{iyy}" izz="{izz}" '
                         f'ixy="{ixy}" ixz="0" iyz="0"/></inertial></link>')
        else:
            parts.append(f'<link name="l{i}"/>')
    for i in range(1, n):
        kind = draw(st.sampled_from(["revolute", "continuous", "prismatic", "fixed"]))
        parent, z, roll, x = draw(st.integers(0, i - 1)), draw(NUMBER), draw(NUMBER), draw(NUMBER)
        parts.append(f'<joint name="j{i}" type="{kind}"><parent link="l{parent}"/>'
                     f'<child link="l{i}"/><origin xyz="0 0 {z}" rpy="{roll} 0 0"/>'
                     f'<axis xyz="{x} 0 1"/></joint>')
    return '<robot name="fuzz">' + "".join(parts) + "</robot>"


@given(random_tree(), st.booleans(), st.booleans())
def test_random_tree_loads_or_is_refused(text, floating, allow_massless):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            model = rbd_ros.load_model(text, floating_base=floating,
                                       allow_massless=allow_massless)
        except rbd_ros.URDFError as exc:
            assert len(str(exc)) < 600
            return
    q, zeros = model.neutral(), np.zeros(model.nv)
    try:
        tau = rbd_ros.rnea(model, q, zeros, zeros)
    except ValueError:
        return
    assert np.all(np.isfinite(tau))
