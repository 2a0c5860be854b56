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

from rbd_ros.algorithms import joints as dispatch
from rbd_ros.description import loader, size_limits
from rbd_ros.model import joints as registry

# the kernel pieces every kind's module defines (doc/contributing.md, step 1)
PIECES = ("jcalc", "placement_local", "jcalc_local", "motion", "tangent", "subspace_column",
          "world_from_local", "world_subspace", "local_subspace_column", "force_local",
          "integrate")
KIND_NAMES = [kind.name for kind in registry.KINDS]


def _module_name(module):
    return module.__name__.rpartition(".")[2]


def _dispatching_functions():
    """{function name: (kinds compared with, (module, piece) called)} of the dispatch module."""
    tree = ast.parse(inspect.getsource(dispatch))
    found = {}
    for node in tree.body:
        if not isinstance(node, ast.FunctionDef):
            continue
        compared = {n.comparators[0].id for n in ast.walk(node) if isinstance(n, ast.Compare)
                    and isinstance(n.left, ast.Name) and n.left.id == "kind"
                    and isinstance(n.comparators[0], ast.Name)}
        calls = {(n.func.value.id, n.func.attr) for n in ast.walk(node)
                 if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
                 and isinstance(n.func.value, ast.Name)}
        if compared:
            found[node.name] = (compared, calls)
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
    for name, (compared, calls) in chains.items():
        called = {module for module, _ in calls if module in modules}
        assert called == modules, f"{name} dispatches to {sorted(called)}, not {sorted(modules)}"
        assert len({piece for module, piece in calls if module in modules}) == 1, name
        assert len(compared) == len(modules) - 1, f"{name}: one test per kind, one fallback"


def test_the_loader_and_the_size_limits_read_the_registry():
    urdf_types = set(registry.BY_URDF_TYPE)
    assert set(loader.SUPPORTED) == {n for n in urdf_types
                                     if not registry.BY_URDF_TYPE[n].root_only}
    assert all(name in registry.KINDS[code].urdf_types for name, code in loader.SUPPORTED.items())
    assert size_limits.MOVABLE == {name: registry.BY_URDF_TYPE[name].nv for name in urdf_types}

