"""
package.xml names every dependency the code imports (issue 13), by its rosdep key.

Every module imported by the package, its console entry and launch file must be an
``exec_depend`` (tests' imports a ``test_depend`` or an ``exec_depend``), under the key rosdep
knows it by (:data:`KEYS`); a dependency without a rosdep key must be named in a comment that
says so. The file is read as XML and the code with ``ast``: nothing is imported.
"""
import ast
import glob
import os
import sys
import xml.etree.ElementTree as ET

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# import name -> rosdep key (None: no key exists; a comment in package.xml must say so)
KEYS = {"numpy": "python3-numpy", "numba": "python3-numba", "scipy": "python3-scipy",
        "urdf_parser_py": "urdfdom_py", "matplotlib": "python3-matplotlib",
        "yaml": "python3-yaml", "rosbags": None, "pytest": "python3-pytest",
        "pinocchio": "pinocchio", "example_robot_data": "example-robot-data",
        "hypothesis": "python3-hypothesis", "llvmlite": None, "icub_models": None,
        "rtb_data": None, "dask": None, "distributed": None, "toppra": None,
        "cvxpy": None, "threadpoolctl": None, "mujoco": None}
# the repository's own modules: the package, its entry, the tests' and scripts' modules
OURS = {"rbd_ros", "rbd_ros_entry"} | {
    os.path.basename(p)[:-3] for folder in ("test", "scripts", "bench")
    for p in glob.glob(os.path.join(ROOT, folder, "**", "*.py"), recursive=True)}


def imported(paths):
    """Return the top-level modules the files ``paths`` import, outside the stdlib and ours."""
    names = set()
    for path in paths:
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read())
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names.update(a.name.split(".")[0] for a in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                names.add(node.module.split(".")[0])
            elif isinstance(node, ast.Call) and ast.unparse(node.func).endswith(
                    "importorskip") and isinstance(node.args[0], ast.Constant):
                names.add(node.args[0].value.split(".")[0])
    return {n for n in names if n not in sys.stdlib_module_names and n not in OURS}


def package_xml():
    """Return ({tag: [keys]}, the text of its comments) of package.xml."""
    parser = ET.XMLParser(target=ET.TreeBuilder(insert_comments=True))
    root = ET.parse(os.path.join(ROOT, "package.xml"), parser).getroot()
    depends = {}
    for child in root:
        if isinstance(child.tag, str):
            depends.setdefault(child.tag, []).append((child.text or "").strip())
    comments = " ".join(c.text for c in root.iter() if c.tag is ET.Comment)
    return depends, comments


def assert_declared(modules, keys, comments):
    for module in sorted(modules):
        key = KEYS.get(module, module)
        if key is None:
            assert module in comments and "rosdep" in comments, \
                f"{module}: no rosdep key, and no package.xml comment says so"
        else:
            assert key in keys, f"{module} is imported: package.xml needs <...depend>{key}"


def test_runtime_imports_are_exec_depends():
    code = glob.glob(os.path.join(ROOT, "rbd_ros", "**", "*.py"), recursive=True) + [
        os.path.join(ROOT, "rbd_ros_entry.py"), os.path.join(ROOT, "launch",
                                                             "dynamics.launch.py")]
    modules = imported(code)
    assert {"rclpy", "numba", "yaml", "matplotlib", "rosbags", "rcl_interfaces",
            "launch_ros"} <= modules                       # the scan sees them
    depends, comments = package_xml()
    assert_declared(modules, depends["exec_depend"], comments)


def test_test_imports_are_declared():
    modules = imported(glob.glob(os.path.join(ROOT, "test", "**", "*.py"), recursive=True))
    depends, comments = package_xml()
    keys = depends["exec_depend"] + depends["test_depend"]
    assert_declared(modules, keys, comments)
    # the end-to-end tests run these command-line tools
    for tool in ("ros2launch", "ros2run", "ros2param"):
        assert tool in depends["test_depend"], tool
