"""
The node is built by composition (``rbd_ros/node``): checked on its source, no ROS needed.

``DynamicsNode`` is one rclpy ``Node`` holding collaborators that are given what they use in
their constructors; none of them reads another object's private state. Checked with the
standard library's ``ast``: no ``x._name`` where ``x`` is not ``self``/``cls`` and ``_name``
is a private attribute or method that a class of ``rbd_ros/node`` defines; no class of the
node package is a mixin of the node; no attribute of ``DynamicsNode`` overwrites one of
rclpy's ``Node`` (``_parameters``, ``_timers``: what rclpy's own code reads).
"""
import ast
import pathlib

from helpers import require_module

ROOT = pathlib.Path(__file__).resolve().parents[2]
NODE = ROOT / "rbd_ros" / "node"


def _modules():
    return {path: ast.parse(path.read_text(), str(path)) for path in sorted(NODE.rglob("*.py"))}


def _private(name):
    return name.startswith("_") and not name.startswith("__")


def _own_names(tree):
    """Return the private names ``self._x`` set or ``def _x`` defined in ``tree``'s classes."""
    names = set()
    for cls in (n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)):
        for node in ast.walk(cls):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and _private(node.name):
                names.add(node.name)
            elif (isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store)
                  and isinstance(node.value, ast.Name) and node.value.id == "self"
                  and _private(node.attr)):
                names.add(node.attr)
    return names


def test_no_object_of_the_node_reads_another_ones_private_state():
    modules = _modules()
    private = set().union(*map(_own_names, modules.values()))
    assert {"_robot", "_stats", "_tick"} <= private           # the check sees the node's
    crossing = [f"{path.relative_to(ROOT)}:{node.lineno}: {ast.unparse(node)}"
                for path, tree in modules.items() for node in ast.walk(tree)
                if isinstance(node, ast.Attribute) and node.attr in private
                and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"))]
    assert not crossing, "private state read across objects:\n" + "\n".join(crossing)


def test_the_node_is_one_rclpy_node_without_mixins():
    tree = ast.parse((NODE / "dynamics_node.py").read_text())
    node = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "DynamicsNode")
    assert [ast.unparse(b) for b in node.bases] == ["Node"]


def test_the_node_overwrites_no_attribute_of_rclpy_node():
    require_module("rclpy", "rclpy")
    import rclpy.node
    rclpy_tree = ast.parse(pathlib.Path(rclpy.node.__file__).read_text())
    rclpy_names = {n.attr for n in ast.walk(rclpy_tree)
                   if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name)
                   and n.value.id == "self"}
    assert {"_parameters", "_timers", "_publishers"} <= rclpy_names
    ours = _own_names(ast.parse((NODE / "dynamics_node.py").read_text()))
    assert not ours & rclpy_names, f"DynamicsNode overwrites rclpy's {sorted(ours & rclpy_names)}"
