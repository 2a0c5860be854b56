"""
Real robot descriptions: every URDF of the corpus loads and agrees with Pinocchio.

The corpus (``corpus.py``: its sources and their licences) is every URDF shipped by three
data packages on PyPI -- example-robot-data, icub-models and rtb-data -- read where pip
installed them (none is copied here). Each robot loads with default options, with a fixed
and with a floating base; where Pinocchio's ``buildModelFromUrdf`` loads it too, RNEA, CRBA
and ABA agree with Pinocchio's to 1e-10 relative at random states.

Robots with ``<mimic>`` joints (``MIMIC``) load with default options, their followers coupled
to their leaders. Pinocchio's default model makes followers independent joints: they are
compared with it loaded with ``mimic="independent"``; and their coupled model is compared
with Pinocchio's mimic model (RNEA, CRBA) and with the reduced system of Pinocchio's
uncoupled model (``mimic_oracle.ReducedOracle``: ABA, M⁻¹ and the derivatives too).
"""
import warnings
import xml.etree.ElementTree as ET

import numpy as np
import pytest

import rbd_ros
from helpers import assert_close, missing
from corpus import CORPUS, MISSING, has_movable_mimic, read
from corpus_cases import (BROKEN_MIMIC, LOADED, MASSLESS, OPTIONS, REFUSED,
                          pinocchio_robot)
from mimic_oracle import ReducedOracle, pinocchio_mimic_rnea_crba
from oracle import has_mimic

TOL = 1e-10
NAMES = tuple(CORPUS)
MIMIC = tuple(name for name in NAMES if has_mimic(read(name)))      # on any joint
MOVABLE_MIMIC = tuple(name for name in MIMIC if has_movable_mimic(read(name)))


def test_corpus_is_installed():
    """At least 30 robots from at least two packages (all three in CI)."""
    if MISSING:                      # a skip, or a failure where CI=true
        missing(f"the corpus packages {list(MISSING)}")
    sources = {name.split("/")[0] for name in NAMES}
    assert len(NAMES) >= 30 and len(sources) >= 2, (len(NAMES), sources, MISSING)


def _load(name, floating, **options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)   # odd CAD inertias are warned about
        return rbd_ros.load_model(CORPUS[name], floating_base=floating,
                                  **{**OPTIONS.get(name, {}), **options})


@pytest.mark.parametrize("floating", [False, True], ids=["fixed", "floating"])
@pytest.mark.parametrize("name", LOADED)
def test_loads_with_default_options(name, floating):
    model = _load(name, floating)
    assert model.nv == len(model.joint_names) + (6 if floating else 0)
    q = model.random_configuration(0)
    tau = rbd_ros.rnea(model, q, np.zeros(model.nv), np.zeros(model.nv))
    assert np.all(np.isfinite(tau))
    M = rbd_ros.crba(model, q)
    assert np.all(np.linalg.eigvalsh(M) > 0), "M positive definite"


@pytest.mark.parametrize("name", sorted(n for n in REFUSED if n in CORPUS))
def test_refused_with_the_reason(name):
    with pytest.raises(rbd_ros.URDFError, match=REFUSED[name]):
        _load(name, False, **{k: False for k in OPTIONS.get(name, {})
                              if k == "allow_massless"})


@pytest.mark.parametrize("name", MASSLESS)
def test_massless_robots_load_when_allowed(name):
    model = _load(name, True)
    assert model.nv == len(model.joint_names) + 6


@pytest.mark.parametrize("name", MOVABLE_MIMIC)
def test_mimic_robots_are_refused_by_the_strict_mimic_option(name):
    """The corpus robots of MOVABLE_MIMIC do have movable mimic joints."""
    with pytest.raises(rbd_ros.URDFError, match="mimic"):
        _load(name, False, mimic="error")


@pytest.mark.pinocchio
@pytest.mark.parametrize("floating", [False, True], ids=["fixed", "floating"])
@pytest.mark.parametrize("name", LOADED + MASSLESS + BROKEN_MIMIC)
def test_rnea_crba_aba_match_pinocchio(pin, name, floating):
    robot = pinocchio_robot(name, floating)
    m, pm, pd = robot.model, robot.pm, robot.pd
    assert m.nv == pm.nv
    for seed in (0, 1):
        q, v, a, tau, _ = robot.random_state(seed)
        qp = robot.q_to_pin(q)
        ref = pin.rnea(pm, pd, qp, robot.v_to_pin(v), robot.v_to_pin(a))
        assert_close(rbd_ros.rnea(m, q, v, a), robot.v_from_pin(ref), TOL, f"rnea {name}")
        ref = pin.crba(pm, pd, qp)
        ref = np.triu(ref) + np.triu(ref, 1).T
        assert_close(rbd_ros.crba(m, q), robot.matrix_from_pin(ref), TOL, f"crba {name}")
        if name in MASSLESS:         # M singular: no forward dynamics, on either side
            continue
        # ABA's forward error is bounded by cond(M)·ε on both sides: iCub's tiny hand links
        # give cond(M) up to 1e10, where the results agree to ~1e-19 cond(M)
        tol = max(TOL, 1e-16 * np.linalg.cond(rbd_ros.crba(m, q))) if m.nv else TOL
        ref = pin.aba(pm, pd, qp, robot.v_to_pin(v), robot.v_to_pin(tau))
        assert_close(rbd_ros.aba(m, q, v, tau), robot.v_from_pin(ref), tol, f"aba {name}")


COUPLED = tuple(name for name in MOVABLE_MIMIC if name not in REFUSED)


@pytest.mark.pinocchio
@pytest.mark.parametrize("floating", [False, True], ids=["fixed", "floating"])
@pytest.mark.parametrize("name", COUPLED)
def test_coupled_mimic_robots_equal_pinocchio(pin, name, floating):
    """The default, coupled model against Pinocchio's mimic model and its reduced system."""
    m = _load(name, floating)
    assert m.coupling is not None and m.nv < m.nv_full
    oracle = ReducedOracle(read(name), floating, m.joint_names, m.body_names)
    rng = np.random.default_rng(0)
    q = m.random_configuration(rng)
    v, a, tau = rng.normal(size=(3, m.nv))
    rnea, M = rbd_ros.rnea(m, q, v, a), rbd_ros.crba(m, q)
    assert_close(rnea, oracle.rnea(q, v, a), TOL, f"rnea {name}")
    assert_close(M, oracle.crba(q), TOL, f"crba {name}")
    _assert_pinocchio_mimic_model(pin, name, m, q, v, a, rnea, M, floating)
    tol = max(TOL, 1e-16 * np.linalg.cond(M))        # forward error ~ cond(M)·ε, see above
    assert_close(rbd_ros.aba(m, q, v, tau), oracle.aba(q, v, tau), tol, f"aba {name}")
    assert_close(rbd_ros.minv(m, q), oracle.minv(q), tol, f"minv {name}")
    for k, (x, y) in enumerate(zip(rbd_ros.rnea_derivatives(m, q, v, a),
                                   oracle.rnea_derivatives(q, v, a))):
        assert_close(x, y, 1e-9, f"rnea_derivatives[{k}] {name}")
    for k, (x, y) in enumerate(zip(rbd_ros.aba_derivatives(m, q, v, tau),
                                   oracle.aba_derivatives(q, v, tau))):
        assert_close(x, y, max(1e-9, 1e-15 * np.linalg.cond(M)), f"aba_derivatives[{k}] {name}")


# Pinocchio adds a mimic joint only after its leader, and visits a link's child joints in the
# alphabetical order of their names (urdfdom keeps the joints in a map). Talos's gripper
# followers sort before their leader ("gripper_left_inner_double_joint" < "gripper_left_joint"),
# so Pinocchio refuses these files' mimic model; with each leader renamed to sort first it
# builds the same robot, compared here under the new names.
LEADER_SORTS_LAST = ("erd/talos_data/talos_full_v2", "erd/talos_data/talos_full_v2_box")


def _leaders_renamed(xml, prefix="0_"):
    """Return (the URDF text with each mimic leader renamed ``prefix + name``, {old: new})."""
    root = ET.fromstring(xml)
    leaders = {m.get("joint") for m in root.iter("mimic")}
    for element in list(root.iter("joint")) + list(root.iter("mimic")):
        key = "name" if element.tag == "joint" else "joint"
        if element.get(key) in leaders:
            element.set(key, prefix + element.get(key))
    return ET.tostring(root, encoding="unicode"), {n: prefix + n for n in leaders}


def _assert_pinocchio_mimic_model(pin, name, m, q, v, a, rnea, M, floating):
    """RNEA and CRBA equal those of Pinocchio's own mimic model (no dof for a follower)."""
    root = (pin.JointModelFreeFlyer(),) if floating else ()
    xml, renamed = read(name), {}
    if name in LEADER_SORTS_LAST:
        with pytest.raises(ValueError, match="mimic joint is not in the kinematic tree"):
            pin.buildModelFromXML(xml, *root, mimic=True)
        xml, renamed = _leaders_renamed(xml)
    pm = pin.buildModelFromXML(xml, *root, mimic=True)
    ref_tau, ref_M = pinocchio_mimic_rnea_crba(pin, pm, m, q, v, a, renamed)
    assert_close(rnea, ref_tau, TOL, f"rnea {name} (mimic model)")
    assert_close(M, ref_M, TOL, f"crba {name} (mimic model)")
