"""
A new joint kind is one module and the dispatch generated again.

doc/contributing.md ("Adding a joint kind") says so of a kind whose motion subspace is
constant in its body. This test does it, on a copy of the package: it adds
``test/new_joint_kind/translation.py`` (Pinocchio's ``JointModelTranslation``) as
``rbd_ros/model/joints/translation.py`` (the registry finds it: nothing else is edited),
runs the dispatch's generator, checks that those two files are all that differ from the
package, then, in a fresh process on the copy (its kernels compiled from nothing), runs
``test_joint_kinds``' checks of the dispatch and the kinds' pieces over the five kinds and
checks the algorithms through the new joint below the root (a revolute root, the
translation, two revolute joints below it) against a Pinocchio model built joint by joint
from the same numbers. Without the generator run, no kernel compiles (the dispatch would
send the new kind's bodies to revolute's pieces); codes that leave a gap or repeat are
refused at import, naming the modules. The shipped planar kind is the same: the package less
``planar.py``, with the dispatch written for the other kinds, differs from the package in
those two files only and runs (so adding planar is its module and the generator's run).
"""
import filecmp
import os
import shutil
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
KIND_MODULE = os.path.join(ROOT, "test", "new_joint_kind", "translation.py")
DISPATCH = os.path.join("algorithms", "joint_dispatch.py")

# run in the copy: the model from arrays and Pinocchio's, the calls compared
CHECK = r'''
import numpy as np
import pinocchio as pin
import rbd_ros
from rbd_ros.model.joints import KINDS, MODULES, REVOLUTE
from oracle import assert_close as close
from random_chain import random_chain
import test_joint_kinds as structure

assert "copy" in rbd_ros.__file__.split("/"), rbd_ros.__file__      # the copy, not the package
structure.test_every_dispatch_chain_names_every_kind()          # with the new kind
for module in MODULES:
    structure.test_every_kind_module_has_every_piece(module)

TRANSLATION = next(k.code for k in KINDS if k.name == "translation")
joints = [(REVOLUTE, (0.0, 0.0, 1.0), pin.JointModelRZ()),
          (TRANSLATION, (0.0, 0.0, 0.0), pin.JointModelTranslation()),
          (REVOLUTE, (1.0, 0.0, 0.0), pin.JointModelRX()),
          (REVOLUTE, (0.0, 1.0, 0.0), pin.JointModelRY())]
model, pm = random_chain(pin, [-1, 0, 1, 1], joints,
                         ["j0", "slide_x", "slide_y", "slide_z", "j2", "j3"], seed=5)
assert (model.nq, model.nv) == (pm.nq, pm.nv) == (6, 6), (model.nq, pm.nq)
pd = pm.createData()


def symmetric(upper):
    return np.triu(upper) + np.triu(upper, 1).T


for seed in range(3):
    rng = np.random.default_rng(seed)
    q = rng.uniform(-1, 1, 6)
    v, a, tau = (rng.normal(size=6) for _ in range(3))
    fext = rng.normal(size=(model.nbodies, 6))
    forces = [pin.Force.Zero()] + [pin.Force(f) for f in fext]
    close(rbd_ros.rnea(model, q, v, a, fext), pin.rnea(pm, pd, q, v, a, forces), 1e-10, "rnea")
    close(rbd_ros.aba(model, q, v, tau, fext), pin.aba(pm, pd, q, v, tau, forces), 1e-10, "aba")
    close(rbd_ros.crba(model, q), symmetric(pin.crba(pm, pd, q)), 1e-10, "crba")
    close(rbd_ros.minv(model, q), symmetric(pin.computeMinverse(pm, pd, q)), 1e-10, "minv")
    ours = rbd_ros.rnea_derivatives(model, q, v, a)
    pin.computeRNEADerivatives(pm, pd, q, v, a)
    close(ours[0], pd.dtau_dq, 1e-9, "dtau_dq")
    close(ours[1], pd.dtau_dv, 1e-9, "dtau_dv")
    ours = rbd_ros.aba_derivatives(model, q, v, tau)
    pin.computeABADerivatives(pm, pd, q, v, tau)
    close(ours[0], pd.ddq_dq, 1e-9, "ddq_dq")
    close(ours[1], pd.ddq_dv, 1e-9, "ddq_dv")
    close(rbd_ros.integrate(model, q, v), pin.integrate(pm, q, v), 1e-12, "integrate")
    close(rbd_ros.joint_torque_regressor(model, q, v, a),
          pin.computeJointTorqueRegressor(pm, pd, q, v, a), 1e-10, "regressor")
    J = rbd_ros.frame_jacobian(model, q, "b3", "local_world_aligned")
    pin.computeJointJacobians(pm, pd, q)
    close(J, pin.getJointJacobian(pm, pd, 4, pin.LOCAL_WORLD_ALIGNED), 1e-10, "J")
print("OK")
'''


def _copy(tmp_path):
    """Return (root, environment) of a copy of the package, run in a fresh cache of its own."""
    root = tmp_path / "copy"
    shutil.copytree(os.path.join(ROOT, "rbd_ros"), root / "rbd_ros",
                    ignore=shutil.ignore_patterns("__pycache__"))
    paths = [str(root), os.path.join(ROOT, "test"), os.path.join(ROOT, "test", "core")]
    inherited = os.environ.get("PYTHONPATH")      # e.g. a ROS install's Pinocchio: kept
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(paths + ([inherited] if inherited else [])),
               NUMBA_CACHE_DIR=str(tmp_path / "cache"))
    return root, env


def _copy_with_the_kind(tmp_path, generate=True):
    """Return the copy's root and environment: the kind added as contributing.md says."""
    root, env = _copy(tmp_path)
    shutil.copy(KIND_MODULE, root / "rbd_ros" / "model" / "joints" / "translation.py")
    if generate:
        result = _run(["-m", "rbd_ros.algorithms.generate_joint_dispatch"], root, env)
        assert result.returncode == 0, result.stdout + result.stderr
    return root, env


def _copy_without_planar(tmp_path):
    """Return a copy less ``planar.py``, its dispatch written for the other kinds."""
    root, env = _copy(tmp_path)
    os.remove(root / "rbd_ros" / "model" / "joints" / "planar.py")
    # the copy's own generator cannot run: its stale dispatch imports planar
    (root / "rbd_ros" / DISPATCH).write_text(_dispatch_without("planar"), encoding="utf-8")
    return root, env


def _dispatch_without(name):
    """Return what the generator writes over the registry's kinds less ``name``'s module."""
    from rbd_ros.algorithms import generate_joint_dispatch as generator
    kept = tuple(m for m in generator.MODULES if m.__name__.rpartition(".")[2] != name)
    assert len(kept) == len(generator.MODULES) - 1, name
    shipped = generator.MODULES
    try:
        generator.MODULES = kept
        return generator.module_source()
    finally:
        generator.MODULES = shipped


def _run(arguments, cwd, env):
    return subprocess.run([sys.executable, *arguments], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=300)


def _differing(a, b):
    """Return the files (relative paths) that differ between the trees a and b, or are new."""
    found = []
    comparison = filecmp.dircmp(a, b, ignore=["__pycache__"])
    stack = [("", comparison)]
    while stack:
        prefix, c = stack.pop()
        found += [os.path.join(prefix, x) for x in c.diff_files + c.left_only + c.right_only]
        stack += [(os.path.join(prefix, name), sub) for name, sub in c.subdirs.items()]
    return sorted(found)


@pytest.mark.pinocchio
def test_a_translation_joint_is_one_module_and_runs_below_the_root(tmp_path):
    root, env = _copy_with_the_kind(tmp_path)
    assert _differing(os.path.join(ROOT, "rbd_ros"), root / "rbd_ros") == sorted(
        [DISPATCH, os.path.join("model", "joints", "translation.py")])
    dispatch = (root / "rbd_ros" / DISPATCH).read_text(encoding="utf-8")
    assert "translation.jcalc(" in dispatch and "translation.integrate(" in dispatch
    result = subprocess.run([sys.executable, "-c", CHECK], cwd=tmp_path, env=env,
                            capture_output=True, text=True, timeout=900)
    assert result.returncode == 0 and result.stdout.strip().endswith("OK"), (
        result.stdout[-2000:] + result.stderr[-4000:])


def test_a_kind_the_dispatch_was_not_generated_for_stops_every_kernel(tmp_path):
    """The module added, the generator not run: no kernel compiles (it would run revolute's)."""
    root, env = _copy_with_the_kind(tmp_path, generate=False)
    result = _run(["-c", "import numpy as np, rbd_ros\n"
                   "m = rbd_ros.load_model(rbd_ros.robots.path('rbd_arm7'))\n"
                   "rbd_ros.crba(m, m.neutral())"], tmp_path, env)
    assert result.returncode != 0
    folder = os.path.join(str(root), "rbd_ros", "model", "joints")
    assert f"RuntimeError: the joint dispatch does not match the joint kinds in {folder}: not " \
        "generated for translation: run python -m rbd_ros.algorithms.generate_joint_dispatch" \
        in result.stderr, result.stderr[-3000:]
    assert not [f for _, _, files in os.walk(tmp_path / "cache") for f in files
                if f.endswith((".nbi", ".nbc"))], "a kernel compiled"


@pytest.mark.parametrize("code, found", [(5, "translation 5"), (2, "free_flyer 2, translation 2")])
def test_codes_with_a_gap_or_a_repeat_are_refused_naming_the_modules(tmp_path, code, found):
    root, env = _copy_with_the_kind(tmp_path, generate=False)
    module = root / "rbd_ros" / "model" / "joints" / "translation.py"
    module.write_text(module.read_text(encoding="utf-8").replace("CODE = 4\n", f"CODE = {code}\n"),
                      encoding="utf-8")
    result = _run(["-c", "import rbd_ros.model.joints"], tmp_path, env)
    assert result.returncode != 0
    assert "ImportError: joint kinds' codes must run 0, 1, ... without a gap or a repeat" \
        in result.stderr and found in result.stderr, result.stderr[-2000:]


# run in the copy without planar.py: the kinds, a fixed and a floating robot against
# Pinocchio, a planar URDF refused
WITHOUT_PLANAR = r'''
import numpy as np
import rbd_ros
from rbd_ros.model.joints import KINDS
from oracle import URDF_DIR, Robot, assert_close as close

assert "copy" in rbd_ros.__file__.split("/"), rbd_ros.__file__
assert [kind.name for kind in KINDS] == ["revolute", "prismatic", "free_flyer"], KINDS
for name in ("panda", "hyq"):
    r = Robot(name)
    for seed in range(2):
        q, v, a, tau, _ = r.random_state(seed)
        qp, vp = r.q_to_pin(q), r.v_to_pin(v)
        close(rbd_ros.rnea(r.model, q, v, a),
              r.v_from_pin(r.pin.rnea(r.pm, r.pd, qp, vp, r.v_to_pin(a))), 1e-10, "rnea")
        close(rbd_ros.aba(r.model, q, v, tau),
              r.v_from_pin(r.pin.aba(r.pm, r.pd, qp, vp, r.v_to_pin(tau))), 1e-9, "aba")
try:
    rbd_ros.load_model(URDF_DIR + "/branched_planar.urdf")
except ValueError as exc:
    assert "planar" in str(exc), exc
else:
    raise AssertionError("a planar joint loaded without its kind")
print("OK")
'''


@pytest.mark.pinocchio
def test_the_planar_kind_is_its_module_and_the_generated_dispatch(tmp_path):
    """
    The package less ``planar.py``, with the dispatch generated for the other kinds, is whole.

    So adding the planar kind to a package without it is that module and the generator's
    run: the two files that differ (the copy's own generator, ``--check``, agrees with its
    dispatch). The copy runs RNEA and ABA on a fixed and a floating
    robot against Pinocchio (its kernels compiled afresh) and refuses a planar URDF.
    """
    root, env = _copy_without_planar(tmp_path)
    assert _differing(os.path.join(ROOT, "rbd_ros"), root / "rbd_ros") == sorted(
        [DISPATCH, os.path.join("model", "joints", "planar.py")])
    check = _run(["-m", "rbd_ros.algorithms.generate_joint_dispatch", "--check"], root, env)
    assert check.returncode == 0, check.stdout + check.stderr   # the copy's generator agrees
    dispatch = (root / "rbd_ros" / DISPATCH).read_text(encoding="utf-8")
    assert "planar" not in dispatch
    result = _run(["-c", WITHOUT_PLANAR], tmp_path, env)
    assert result.returncode == 0 and result.stdout.strip().endswith("OK"), (
        result.stdout[-2000:] + result.stderr[-4000:])


def test_a_urdf_type_read_by_two_kinds_is_refused_naming_it(tmp_path):
    root, env = _copy_with_the_kind(tmp_path, generate=False)
    module = root / "rbd_ros" / "model" / "joints" / "translation.py"
    module.write_text(module.read_text(encoding="utf-8").replace(
        "urdf_types=()", 'urdf_types=("planar",)'), encoding="utf-8")
    result = _run(["-c", "import rbd_ros.model.joints"], tmp_path, env)
    assert "ImportError: URDF joint types read by two kinds: planar (planar, translation)" \
        in result.stderr, result.stderr[-2000:]


def test_a_file_that_is_not_a_module_name_is_no_kind(tmp_path):
    """An editor's or a merge tool's copy (planar.orig.py) is not imported."""
    root, env = _copy(tmp_path)
    joints = root / "rbd_ros" / "model" / "joints"
    shutil.copy(joints / "planar.py", joints / "planar.orig.py")
    result = _run(["-c", "from rbd_ros.model.joints import KINDS; "
                   "print([k.name for k in KINDS])"], tmp_path, env)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.split() == ["['revolute',", "'prismatic',", "'free_flyer',", "'planar']"]
