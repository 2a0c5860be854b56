"""
The joint kinds' registry (``rbd_ros.model.joints``) and the one dispatch over it.

doc/contributing.md ("How to add a joint kind") lists the files a new kind touches; these
tests walk that list: every kind of the registry is dispatched by every kernel piece, read by
the loader, counted by the size limits, and its neutral and random configurations are those
of Pinocchio's joint of the same URDF.
"""
import ast
import inspect

import numpy as np
import pytest

from helpers import assert_a_stale_module_is_reported, assert_generated_module_is_current
from rbd_ros.algorithms import generate_joint_dispatch, joint_dispatch as dispatch
from rbd_ros.description import loader, size_limits
from rbd_ros.model import joints as registry

# the kernel pieces every kind's module defines (doc/contributing.md, step 1)
PIECES = ("jcalc", "placement_local", "jcalc_local", "motion", "tangent", "subspace_column",
          "world_from_local", "local_subspace_column", "force_local",
          "integrate")
KIND_NAMES = [kind.name for kind in registry.KINDS]


def _module_name(module):
    return module.__name__.rpartition(".")[2]


def _tested_module(test):
    """Return the module whose CODE ``test`` (``kind == <module>.CODE``) compares, or None."""
    if not (isinstance(test, ast.Compare) and isinstance(test.left, ast.Name)
            and test.left.id == "kind" and len(test.comparators) == 1):
        return None
    code = test.comparators[0]
    if isinstance(code, ast.Attribute) and code.attr == "CODE" and isinstance(code.value,
                                                                              ast.Name):
        return code.value.id
    return None


def _called_modules(statements):
    """Return the (module, piece) pairs that ``statements`` call as ``module.piece(...)``."""
    return {(n.func.value.id, n.func.attr) for statement in statements
            for n in ast.walk(statement) if isinstance(n, ast.Call)
            and isinstance(n.func, ast.Attribute) and isinstance(n.func.value, ast.Name)}


def _dispatching_functions():
    """
    Return {function: (kinds compared with, (module, piece) called, branches)} of the dispatch.

    ``branches``: (the module a branch's test compares the code of, the modules its body
    calls), one per ``if``/``elif``.
    """
    tree = ast.parse(inspect.getsource(dispatch))
    found = {}
    for node in tree.body:
        if not isinstance(node, ast.FunctionDef):
            continue
        branches = [(_tested_module(n.test), {m for m, _ in _called_modules(n.body)})
                    for n in ast.walk(node) if isinstance(n, ast.If)]
        compared = {module for module, _ in branches if module is not None}
        if compared:
            found[node.name] = (compared, _called_modules([node]), branches)
    return found


def test_codes_are_the_registry_order_and_the_model_reads_them():
    assert [kind.code for kind in registry.KINDS] == list(range(len(registry.KINDS)))
    assert [registry.NQ[k.code] for k in registry.KINDS] == [k.nq for k in registry.KINDS]
    assert [registry.NV[k.code] for k in registry.KINDS] == [k.nv for k in registry.KINDS]


@pytest.mark.parametrize("module", registry.MODULES, ids=_module_name)
def test_every_kind_module_has_every_piece(module):
    missing = [piece for piece in PIECES if not hasattr(module, piece)]
    assert not missing, f"{module.__name__} lacks {missing}"
    assert module.KIND.code == module.CODE
    assert np.asarray(module.KIND.neutral()).shape == (module.KIND.nq,)


def test_every_dispatch_chain_names_every_kind():
    """Each kind test of the dispatch module calls the same piece of every kind's module."""
    chains = _dispatching_functions()
    assert len(chains) >= len(PIECES)
    modules = {_module_name(m) for m in registry.MODULES}
    for name, (compared, calls, branches) in chains.items():
        for tested, called_there in branches:   # each test calls its own kind's piece
            assert called_there == {tested}, f"{name}: kind {tested} calls {called_there}"
        called = {module for module, _ in calls if module in modules}
        assert called == modules, f"{name} dispatches to {sorted(called)}, not {sorted(modules)}"
        assert len({piece for module, piece in calls if module in modules}) == 1, name
        assert len(compared) == len(modules) - 1, f"{name}: one test per kind, one fallback"
        assert compared < modules, f"{name} tests the code of {sorted(compared - modules)}"


def test_the_dispatch_is_what_its_generator_writes_over_the_registry():
    """joint_dispatch.py is checked in: it must be what the table and the registry give now."""
    assert_generated_module_is_current(generate_joint_dispatch, generate_joint_dispatch.COMMAND)
    assert {p.piece for p in generate_joint_dispatch.PIECES} == set(PIECES)


def test_a_stale_dispatch_module_is_reported(tmp_path, monkeypatch, capsys):
    assert_a_stale_module_is_reported(generate_joint_dispatch, generate_joint_dispatch.COMMAND,
                                      tmp_path, monkeypatch, capsys)


def test_the_loader_and_the_size_limits_read_the_registry():
    urdf_types = set(registry.BY_URDF_TYPE)
    assert set(loader.SUPPORTED) == urdf_types
    assert set(loader.ROOT_TYPES) == {n for n in urdf_types if registry.BY_URDF_TYPE[n].root_only}
    assert all(name in registry.KINDS[code].urdf_types for name, code in loader.SUPPORTED.items())
    assert size_limits.MOVABLE == {name: registry.BY_URDF_TYPE[name].nv for name in urdf_types}


def _one_joint_urdf(urdf_type):
    """Return a world link and one body moved by a joint of ``urdf_type`` (limits -0.5, 0.7)."""
    details = ("" if registry.BY_URDF_TYPE[urdf_type].root_only else
               '<axis xyz="0.6 0 0.8"/><limit lower="-0.5" upper="0.7" effort="1" velocity="1"/>')
    return f"""<robot name="one_{urdf_type}">
  <link name="world"/>
  <joint name="j" type="{urdf_type}"><parent link="world"/><child link="body"/>{details}</joint>
  <link name="body"><inertial><origin xyz="0.1 0.2 0.3"/><mass value="2"/>
    <inertia ixx="0.1" ixy="0" ixz="0" iyy="0.2" iyz="0" izz="0.3"/></inertial></link>
</robot>"""


@pytest.mark.pinocchio
@pytest.mark.parametrize("kind", registry.KINDS, ids=KIND_NAMES)
def test_each_kind_loads_as_pinocchio_with_its_neutral_and_random_configurations(kind, tmp_path):
    from oracle import Robot
    urdf_type = kind.urdf_types[0]
    path = tmp_path / f"{urdf_type}.urdf"
    path.write_text(_one_joint_urdf(urdf_type))
    robot = Robot(urdf_type, str(path), floating=False)
    model, pin, pm = robot.model, robot.pin, robot.pm
    assert list(model.joint_type) == [kind.code]
    assert (pm.joints[1].nq, pm.joints[1].nv) == (kind.nq, kind.nv) == (model.nq, model.nv)
    np.testing.assert_array_equal(model.neutral(), kind.neutral())
    np.testing.assert_allclose(robot.q_to_pin(kind.neutral()), pin.neutral(pm), atol=1e-15)
    lower, upper = np.asarray(pm.lowerPositionLimit), np.asarray(pm.upperPositionLimit)
    rng = np.random.default_rng(3)
    for _ in range(20):
        q = kind.random(rng, lower, upper)
        assert q.shape == (kind.nq,) and np.all(np.isfinite(q))
        assert np.all((q >= lower) | ~np.isfinite(lower))
        assert np.all((q <= upper) | ~np.isfinite(upper))
        assert pin.isNormalized(pm, q), q
