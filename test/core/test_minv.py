"""M⁻¹(q): the direct recursion (minv), the CRBA + LᵀDL baseline and Pinocchio agree."""
import importlib.metadata
import os
import sys

import numpy as np
import pytest

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))     # test/
if os.path.dirname(HERE) not in sys.path:     # as oracle.py does
    sys.path.insert(0, os.path.dirname(HERE))

import rbd_ros  # noqa: E402
from rbd_ros import crba  # noqa: E402
from rbd_ros.algorithms.calls import minv, minv_cholesky  # noqa: E402
from helpers import missing  # noqa: E402

PACKAGE = os.path.dirname(os.path.abspath(rbd_ros.__file__))


def erd_path(rel):
    try:
        dist = importlib.metadata.distribution("example-robot-data")
    except importlib.metadata.PackageNotFoundError:
        return None
    path = str(dist.locate_file(os.path.join("cmeel.prefix/share/example-robot-data/robots",
                                             rel)))
    return path if os.path.isfile(path) else None


ROBOTS = {   # name -> (path or None, floating base)
    "pendulum": (os.path.join(HERE, "urdf", "pendulum.urdf"), False),
    "rbd_arm7": (os.path.join(PACKAGE, "robots", "rbd_arm7.urdf"), False),
    "branched": (os.path.join(HERE, "urdf", "branched.urdf"), False),
    "quadruped": (os.path.join(PACKAGE, "robots", "rbd_quadruped.urdf"), True),
    "talos": (erd_path("talos_data/robots/talos_reduced.urdf"), True),
    # held at the pelvis: its legs and its torso hang from the world as three trees
    "talos_fixed": (erd_path("talos_data/robots/talos_reduced.urdf"), False),
    "panda": (erd_path("panda_description/urdf/panda.urdf"), False),
}

_MODELS = {}


def load(name):
    path, floating = ROBOTS[name]
    if path is None:
        missing("example-robot-data")        # a skip, or a failure where CI=true
    if name not in _MODELS:
        _MODELS[name] = rbd_ros.load_model(path, floating_base=floating, mimic="independent")
    return _MODELS[name]


def states(model, n=4, seed=0):
    rng = np.random.default_rng(seed)
    out = [model.neutral()] + [model.random_configuration(rng) for _ in range(n - 1)]
    if model.floating_base:   # a denormalized quaternion must give the same result
        q = np.array(out[-1])
        q[3:7] *= 1.7
        out.append(q)
    return out


def rel_err(a, b):
    return np.abs(a - b).max() / max(np.abs(b).max(), 1e-300)


@pytest.mark.parametrize("name", list(ROBOTS))
def test_minv_inverts_crba(name):
    model = load(name)
    eye = np.eye(model.nv)
    for q in states(model):
        Minv = minv(model, q)
        M = crba(model, q)
        assert np.abs(Minv @ M - eye).max() < 1e-9
        assert np.array_equal(Minv, Minv.T)


@pytest.mark.parametrize("name", list(ROBOTS))
def test_minv_matches_cholesky(name):
    model = load(name)
    for q in states(model):
        A = minv(model, q)
        B = minv_cholesky(model, q)
        assert rel_err(A, B) <= 1e-9
        assert np.abs(B @ crba(model, q) - np.eye(model.nv)).max() < 1e-9


class PinMap:
    """Pinocchio's model of the same URDF and the mapping of q and v indices."""

    def __init__(self, model, name, pin):
        self.pin = pin
        path, floating = ROBOTS[name]
        if floating:
            self.pm = pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer())
        else:
            self.pm = pin.buildModelFromUrdf(path)
        self.pd = self.pm.createData()
        nbq, nbv = model.nq_base, model.nv_base
        self.v_index = list(range(nbv))
        self.q_index = []
        for k, joint in enumerate(model.joint_names):
            jid = self.pm.getJointId(joint)
            pj = self.pm.joints[jid]
            self.v_index.append(pj.idx_v)
            self.q_index.append((nbq + k, pj.idx_q, pj.nq == 2))
        self.v_index = np.array(self.v_index)
        self.floating = floating
        assert self.pm.nv == model.nv

    def q(self, q):
        qp = np.zeros(self.pm.nq)
        if self.floating:
            qp[:7] = q[:7] / np.r_[1, 1, 1, [np.linalg.norm(q[3:7])] * 4]
        for ours, theirs, continuous in self.q_index:
            if continuous:
                qp[theirs:theirs + 2] = np.cos(q[ours]), np.sin(q[ours])
            else:
                qp[theirs] = q[ours]
        return qp

    def minv(self, q):
        Mp = np.array(self.pin.computeMinverse(self.pm, self.pd, self.q(q)))
        Mp = np.triu(Mp) + np.triu(Mp, 1).T      # Pinocchio fills the upper triangle
        return Mp[np.ix_(self.v_index, self.v_index)]


@pytest.mark.parametrize("name", list(ROBOTS))
def test_minv_matches_pinocchio(name, pin):
    model = load(name)
    pm = PinMap(model, name, pin)
    for q in states(model):
        assert rel_err(minv(model, q), pm.minv(q)) <= 1e-9


def test_floating_base_block_is_base_frame():
    """
    The free-flyer rows use v in the base frame.

    So rotating the whole robot about the world origin leaves M⁻¹ unchanged.
    """
    model = load("quadruped")
    q = model.random_configuration(3)
    A = minv(model, q)
    q2 = np.array(q)
    q2[:3] = [0.3, -1.2, 2.0]
    q2[3:7] = [0.0, 0.0, np.sin(0.4), np.cos(0.4)]
    B = minv(model, q2)
    assert rel_err(A, B) <= 1e-9


@pytest.mark.parametrize("function", [minv, minv_cholesky])
@pytest.mark.parametrize("name", ["rbd_arm7", "quadruped"])
def test_bad_configuration(function, name):
    model = load(name)
    q = model.neutral()
    with pytest.raises(ValueError, match="wrong size"):
        function(model, np.zeros(model.nq + 1))
    with pytest.raises(ValueError, match="wrong size"):
        function(model, q[:-1])
    bad = np.array(q)
    bad[-1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        function(model, bad)
    bad[-1] = np.inf
    with pytest.raises(ValueError, match="NaN or inf"):
        function(model, bad)
    with pytest.raises(ValueError):
        function(model, "not numbers")
    with pytest.raises(ValueError):
        function(model, np.zeros((2, model.nq)))


def test_zero_quaternion():
    model = load("quadruped")
    q = model.neutral()
    q[3:7] = 0.0
    for function in (minv, minv_cholesky):
        with pytest.raises(ValueError, match="quaternion"):
            function(model, q)


@pytest.mark.parametrize("function", [minv, minv_cholesky])
def test_converts_lists_and_ints(function):
    model = load("rbd_arm7")
    q = model.random_configuration(1)
    expected = function(model, q)
    assert np.array_equal(function(model, list(q)), expected)
    assert np.allclose(function(model, np.zeros(model.nq, np.int64)),
                       function(model, model.neutral()), rtol=0, atol=0)
    # a strided view
    qq = np.repeat(q, 2)[::2]
    assert np.array_equal(function(model, qq), expected)


def test_repeated_calls_reuse_scratch():
    """The scratch is reused between calls; results do not depend on what was there."""
    model = load("talos")
    qs = states(model, 3, seed=5)
    first = [minv(model, q) for q in qs]
    scratch = model.data.force_sets
    second = [minv(model, q) for q in reversed(qs)]
    assert model.data.force_sets is scratch
    for a, b in zip(first, reversed(second)):
        assert np.array_equal(a, b)
    scratch[...] = np.nan                       # garbage in the scratch changes nothing
    assert np.array_equal(minv(model, qs[0]), first[0])


def test_other_calls_in_between():
    """aba/crba/rnea share model.data.body: minv must not rely on what they left."""
    model = load("quadruped")
    q = model.random_configuration(7)
    A = minv(model, q)
    rbd_ros.aba(model, model.random_configuration(8), np.ones(model.nv), np.ones(model.nv))
    minv_cholesky(model, model.random_configuration(9))
    assert np.array_equal(minv(model, q), A)


@pytest.mark.parametrize("name", ["talos_fixed", "branched", "quadruped"])
def test_each_tree_of_a_forest_gets_exact_zeros_outside_it_in_a_reused_output(name):
    """
    The rows of one tree are zero in the columns of another, written at every call.

    The forward pass stops at the end of each body's tree (``minv.tree_end``) and writes
    zeros past it: an ``out=`` full of NaN (a reused block holds anything) gets M⁻¹ exactly as
    a fresh call, the blocks between trees exactly 0, through minv, compute_all and
    aba_derivatives, whose passes share the step; M M⁻¹ = I. The workspace's force sets are
    filled with NaN before each call: no P_i of a column past its tree is read.
    """
    model = load(name)
    parent = np.asarray(model.parent)
    root = np.arange(model.nbodies)
    for i in range(model.nbodies):
        if parent[i] >= 0:
            root[i] = root[parent[i]]
    dof_tree = np.repeat(root, np.diff(np.append(model.idx_v, model.nv)))
    other = dof_tree[:, None] != dof_tree[None, :]
    trees = {"talos_fixed": 3, "branched": 2, "quadruped": 1}[name]
    assert len(set(dof_tree)) == trees and other.any() == (trees > 1)
    nv = model.nv
    stale = model.data.force_sets
    for q in states(model, 3, seed=5):
        stale[...] = np.nan
        fresh = minv(model, q)
        np.testing.assert_allclose(fresh @ crba(model, q), np.eye(nv), atol=1e-8)
        assert np.all(fresh[other] == 0.0)
        out = np.full((nv, nv), np.nan)
        stale[...] = np.nan
        np.testing.assert_array_equal(minv(model, q, out=out), fresh)
        v, tau = np.linspace(-1, 1, nv), np.linspace(2, -2, nv)
        block = np.full((5 * nv + 2, nv), np.nan)
        stale[...] = np.nan
        d = rbd_ros.compute_all(model, q, v, tau=tau, out=block)
        np.testing.assert_allclose(d.Minv, fresh, rtol=1e-12, atol=1e-12 * np.abs(fresh).max())
        assert np.all(d.Minv[other] == 0.0)
        for result in (d.dtau_dq, d.dtau_dv, d.dqdd_dq, d.dqdd_dv):
            assert np.all(np.isfinite(result)) and np.all(result[other] == 0.0)
        dq, dv, dtau = (np.full((nv, nv), np.nan) for _ in range(3))
        stale[...] = np.nan
        rbd_ros.aba_derivatives(model, q, v, tau, out=(dq, dv, dtau))
        np.testing.assert_allclose(dtau, fresh, rtol=1e-12, atol=1e-12 * np.abs(fresh).max())
        np.testing.assert_allclose(dq, d.dqdd_dq, rtol=1e-9, atol=1e-9 * np.abs(dq).max())
