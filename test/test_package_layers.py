"""
The package's import graph (``ast``): no import circle, no import from a higher layer.

Also: every top-level entry of ``rbd_ros/`` has a layer, and the README's layout is the tree.
Every ``import`` and ``from ... import`` counts, at module level or inside a function: a
lazy import is a dependency all the same (it moves the circle to the first call). And the
tests' own modules: no module under test/ imports a test module (``test_*``), which would
run that file's module-level code and tie the two files (and their layers) together.
"""
import ast
import os
import re

import pytest


def _root():
    here = os.path.dirname(os.path.abspath(__file__))
    while not os.path.isfile(os.path.join(here, "setup.py")):
        parent = os.path.dirname(here)
        assert parent != here, "no setup.py above the test"
        here = parent
    return here


ROOT = _root()
PACKAGE = os.path.join(ROOT, "rbd_ros")

# The layers, lowest first: a module imports from its own layer and the layers before it,
# never from a later one. The entries are the top-level names under rbd_ros/ ("__init__": the
# public API, rbd_ros/__init__.py itself).
LAYERS = (
    ("kernel compilation, file formats, bundled robots",
     ("_jit", "_blas", "_array_flags", "formats", "robots")),
    ("the model", ("model",)),
    ("the algorithms", ("_checks", "_output_arrays", "algorithms", "specialized")),
    ("robot descriptions", ("description",)),
    ("many states per call", ("batch",)),
    ("the outputs table and tick rule", ("outputs",)),
    ("joint parameters", ("actuation",)),
    ("estimation and planning", ("identification", "contact", "retiming")),
    ("the public API", ("__init__",)),
    ("the node", ("node",)),
    ("the replay tool", ("replay",)),
    ("the command-line tools", ("tools",)),
)
LAYER_OF = {entry: k for k, (_, entries) in enumerate(LAYERS) for entry in entries}

# Imports of another module's private (``_name``) name that remain, as "module: name". Exact:
# a name that is made public leaves this list, a new one fails. None remain (issue 34).
KNOWN_PRIVATE_IMPORTS = set()


def modules():
    """Return {dotted name: path} of every module of the package."""
    found = {}
    for folder, dirs, files in os.walk(PACKAGE):
        dirs[:] = sorted(d for d in dirs if os.path.isfile(os.path.join(folder, d, "__init__.py")))
        for f in files:
            if f.endswith(".py"):
                parts = os.path.relpath(os.path.join(folder, f), ROOT)[:-3].split(os.sep)
                if parts[-1] == "__init__":
                    parts = parts[:-1]
                found[".".join(parts)] = os.path.join(folder, f)
    return found


def imported_from(name, path, node):
    """Return the dotted module an ``ast.ImportFrom`` of module ``name`` (at ``path``) reads."""
    if not node.level:
        return node.module or ""
    package = name if path.endswith("__init__.py") else name.rpartition(".")[0]
    base = package.split(".")[:len(package.split(".")) - node.level + 1]
    return ".".join(base + ([node.module] if node.module else []))


def parse(path):
    with open(path, encoding="utf-8") as f:
        return ast.parse(f.read(), path)


def imports(name, path, known):
    """Return the package's modules that ``name`` (at ``path``) imports."""
    tree = parse(path)
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name.split(".")[0] == "rbd_ros"}
        elif isinstance(node, ast.ImportFrom):
            module = imported_from(name, path, node)
            if module.split(".")[0] != "rbd_ros":
                continue
            for a in node.names:           # `from package import submodule`: the submodule
                out.add(module + "." + a.name if module + "." + a.name in known else module)
    unknown = out - set(known)
    assert not unknown, f"{name} imports {sorted(unknown)}, which the package does not have"
    return out - {name}


@pytest.fixture(scope="module")
def graph():
    known = modules()
    return {name: imports(name, path, known) for name, path in known.items()}


def entry(module):
    """Return the top-level entry of rbd_ros/ that holds ``module``."""
    parts = module.split(".")
    return "__init__" if len(parts) == 1 else parts[1]


def circles(graph):
    """Return the strongly connected components of more than one module (Tarjan)."""
    index, low, on_stack, stack, found = {}, {}, set(), [], []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            v, successors = work[-1]
            w = next(successors, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                component = set()
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    component.add(w)
                    if w == v:
                        break
                if len(component) > 1:
                    found.append(frozenset(component))
    return set(found)


def test_the_graph_reader_sees_what_python_imports(graph):
    # the reader itself, on modules whose imports are known: relative, `from . import x`,
    # lazy (inside a function) and the public API's own
    assert "rbd_ros.model.layout" in graph["rbd_ros.algorithms.rnea"]           # ..model.layout
    assert "rbd_ros.outputs" in graph["rbd_ros.replay.cli"]                     # from .. import
    assert "rbd_ros.replay.one_bag" in graph["rbd_ros.replay.fleet_tasks"]      # lazy
    assert "rbd_ros.description.loader" in graph["rbd_ros"]
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == {frozenset("abc")}
    assert circles({"a": {"b"}, "b": set()}) == set()


def test_every_entry_has_a_layer(graph):
    entries = {entry(m) for m in graph}
    assert entries - set(LAYER_OF) == set(), \
        "a new top-level module or package of rbd_ros/: give it a layer in LAYERS"
    assert set(LAYER_OF) - entries == set(), "LAYERS names what rbd_ros/ no longer has"


def test_no_import_from_a_higher_layer(graph):
    upward = sorted(f"{m} ({LAYERS[LAYER_OF[entry(m)]][0]}) imports {d} "
                    f"({LAYERS[LAYER_OF[entry(d)]][0]})"
                    for m, deps in graph.items() for d in deps
                    if LAYER_OF[entry(d)] > LAYER_OF[entry(m)])
    assert upward == [], "\n".join(upward)


def test_no_import_circle(graph):
    found = sorted(sorted(c) for c in circles(graph))
    assert found == [], \
        f"move what both need into the lower module or a small one of its own: {found}"


def private_names_imported(name, path, known):
    """
    Return "``name``: module._private" for each private name ``name`` takes from another module.

    ``from module import _name`` (at any depth), and ``alias._name`` where ``alias`` is a
    module of the package that ``name`` imported. A private *module* (``from .. import
    _checks``) is a package-private module, not a private name, and so is a public module
    imported under a private alias (``coupled as _coupled``).
    """
    tree = parse(path)
    found, aliases = set(), {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            aliases.update({a.asname or a.name: a.name for a in node.names
                            if a.name.split(".")[0] == "rbd_ros"})
        elif isinstance(node, ast.ImportFrom):
            module = imported_from(name, path, node)
            if module.split(".")[0] != "rbd_ros":
                continue
            for a in node.names:
                if module + "." + a.name in known:
                    aliases[a.asname or a.name] = module + "." + a.name
                elif a.name.startswith("_"):
                    found.add(f"{name}: {module}.{a.name}")
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr.startswith("_") \
                and not node.attr.startswith("__"):
            module = aliases.get(ast.unparse(node.value))
            if module is not None and module != name:
                found.add(f"{name}: {module}.{node.attr}")
    return found


def test_the_private_name_reader_sees_every_form(tmp_path):
    path = tmp_path / "a.py"
    path.write_text("from .b import _x, y\nfrom . import _checks, c as _c\n"
                    "import rbd_ros.d\n_c._z()\n_c.w()\n_checks._v\nrbd_ros.d._u\n"
                    "def f():\n    from ..e import _t\n")
    known = {"rbd_ros.p.a", "rbd_ros.p.b", "rbd_ros.p.c", "rbd_ros._checks", "rbd_ros.d",
             "rbd_ros.p._checks", "rbd_ros.e"}
    assert private_names_imported("rbd_ros.p.a", str(path), known) == {
        "rbd_ros.p.a: rbd_ros.p.b._x", "rbd_ros.p.a: rbd_ros.p.c._z",
        "rbd_ros.p.a: rbd_ros.p._checks._v", "rbd_ros.p.a: rbd_ros.d._u",
        "rbd_ros.p.a: rbd_ros.e._t"}


def test_no_module_imports_another_modules_private_name():
    known = modules()
    found = set().union(*(private_names_imported(name, path, known)
                          for name, path in known.items()))
    assert found == KNOWN_PRIVATE_IMPORTS, (
        f"make these public (a name without _, with a docstring) or move them where they "
        f"are used: {sorted(found - KNOWN_PRIVATE_IMPORTS)}; gone (remove them from "
        f"KNOWN_PRIVATE_IMPORTS): {sorted(KNOWN_PRIVATE_IMPORTS - found)}")


def readme_layout():
    """Return the entries the README's "Layout" section lists, in its order."""
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        text = f.read()
    section = re.search(r"^## Layout\n(.*?)(?=^## )", text, re.S | re.M)
    assert section, "README.md has no '## Layout' section"
    block = re.search(r"```text\nrbd_ros/\n(.*?)```", section.group(1), re.S)
    assert block, "the Layout section has no ```text block starting with rbd_ros/"
    listed = []
    for line in block.group(1).splitlines():
        names = line.split("  ")[1 if line.startswith("  ") else 0].strip()
        listed += [n.rstrip("/").removesuffix(".py") for n in names.split()]
    return listed


def test_the_readme_layout_is_the_tree_in_layer_order():
    listed = readme_layout()
    tree = {n[:-3] if n.endswith(".py") else n for n in os.listdir(PACKAGE)
            if n.endswith(".py") or os.path.isfile(os.path.join(PACKAGE, n, "__init__.py"))}
    assert sorted(listed) == sorted(tree), \
        f"README lists {sorted(set(listed) - tree)} not in rbd_ros/, " \
        f"omits {sorted(tree - set(listed))}"
    order = [LAYER_OF[n] for n in listed]
    assert order == sorted(order), "the README lists rbd_ros/ lowest layer first, as LAYERS"


def imported_test_modules(source):
    """Return the test modules (``test_*``) the Python ``source`` imports, lazily or not."""
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and not node.level:
            found.add(node.module or "")
        elif isinstance(node, ast.Call) and ast.unparse(node.func).endswith(
                ("import_module", "__import__", "importorskip")) and node.args \
                and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
            found.add(node.args[0].value)
    return {m for m in found if m.split(".")[0].startswith("test_")}


def test_the_test_import_reader_sees_every_form():
    source = ("import test_a\nfrom test_b import x\nimport os, test_c.sub\n"
              "def f():\n    from test_d import y\n    importlib.import_module('test_e')\n"
              "from helpers import test_f\nimport node_cases\nfrom . import test_g\n")
    assert imported_test_modules(source) == {"test_a", "test_b", "test_c.sub", "test_d",
                                             "test_e"}


def test_no_test_module_imports_a_test_module():
    """What two test files share is in a helper module (node_cases, pinocchio_oracles, ...)."""
    found = []
    for folder, dirs, files in os.walk(os.path.join(ROOT, "test")):
        dirs[:] = sorted(d for d in dirs if not d.startswith((".", "__")))
        for name in sorted(f for f in files if f.endswith(".py")):
            path = os.path.join(folder, name)
            with open(path, encoding="utf-8") as f:
                imported = imported_test_modules(f.read())
            found += [f"{os.path.relpath(path, ROOT)} imports {m}" for m in sorted(imported)]
    assert found == [], "move what they share into a helper module:\n" + "\n".join(found)
