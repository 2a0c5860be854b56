"""
The corpus of real robot descriptions: every URDF of three data packages on PyPI.

The files are read where pip installed them; none is copied into this repository (the
packages' licences differ, and some files are share-alike):

* ``example-robot-data`` (Gepetto/LAAS; BSD-3-Clause for the package, each robot from its
  maker's description: Franka, Universal Robots, PAL, Unitree, ANYbotics, IIT, Kinova, ...,
  under their own terms): every ``.urdf`` it ships, less the four robots the rest of the
  suite already uses (``oracle.EXAMPLE_ROBOT_DATA_ROBOTS``);
* ``icub-models`` (IIT; CC-BY-SA 4.0): the ``model.urdf`` of each iCub generation and hand;
* ``rtb-data`` (Peter Corke's Robotics Toolbox data; MIT for the package, the descriptions
  from ROS-Industrial and other ROS packages under their own terms, BSD or Apache 2.0): the
  ready ``.urdf`` files (its ``.xacro`` files need xacro, and ``data/test.urdf`` is no robot).

A corpus entry whose package is missing is absent (``corpus()`` lists what is installed,
``MISSING`` says which packages are not); the tests skip, or fail in CI, when a package is.
Robots with ``<mimic>`` joints (``has_mimic``, ``has_movable_mimic``) load coupled by default;
``test_corpus`` compares them with Pinocchio's default model as independent joints too.
"""
import os
import re

from oracle import ERD, EXAMPLE_ROBOT_DATA_ROBOTS, ROBOTS

PACKAGES = ("example-robot-data", "icub-models", "rtb-data")


def _dist_dir(distribution, *parts):
    """Return the folder ``parts`` inside an installed distribution, or None."""
    from importlib.metadata import PackageNotFoundError, distribution as dist
    try:
        path = os.fspath(dist(distribution).locate_file(os.path.join(*parts)))
    except PackageNotFoundError:
        return None
    return path if os.path.isdir(path) else None


def _urdfs(top):
    """Every .urdf below ``top``, sorted, as paths relative to it."""
    found = []
    for folder, _, files in os.walk(top):
        found += [os.path.relpath(os.path.join(folder, f), top)
                  for f in files if f.endswith(".urdf")]
    return sorted(found)


def _example_robot_data():
    if ERD is None:
        return {}
    known = {os.path.realpath(ROBOTS[name][0]) for name in EXAMPLE_ROBOT_DATA_ROBOTS}
    out = {}
    for rel in _urdfs(ERD):
        path = os.path.join(ERD, rel)
        if os.path.realpath(path) not in known:       # e.g. two anymal.urdf: name the folder
            package = rel.split(os.sep)[0].replace("_description", "")
            out[f"erd/{package}/{os.path.splitext(os.path.basename(rel))[0]}"] = path
    return out


def _icub_models():
    try:         # its data files install under the environment's share/, not site-packages
        import icub_models
    except ImportError:
        return {}
    top = os.fspath(icub_models.get_models_path())
    return {"icub/" + rel.split(os.sep)[0]: os.path.join(top, rel) for rel in _urdfs(top)
            if os.path.basename(rel) == "model.urdf"}


def _rtb_data():
    top = _dist_dir("rtb-data", "rtbdata", "xacro")
    if top is None:
        return {}
    return {"rtb/" + os.path.splitext(os.path.basename(rel))[0]: os.path.join(top, rel)
            for rel in _urdfs(top)}


def corpus():
    """Return ``{name: path}`` of the installed corpus, sorted by name."""
    found = {**_example_robot_data(), **_icub_models(), **_rtb_data()}
    return dict(sorted(found.items()))


CORPUS = corpus()
MISSING = tuple(p for p, prefix in zip(PACKAGES, ("erd/", "icub/", "rtb/"))
                if not any(n.startswith(prefix) for n in CORPUS))


def read(name):
    """Return the text of the corpus robot ``name``."""
    with open(CORPUS[name], encoding="utf-8-sig") as f:
        return f.read()


def has_movable_mimic(text):
    """Tell whether a URDF text has a <mimic> inside a movable joint (not on a fixed one)."""
    for joint in re.finditer(r"<joint\b[^>]*>.*?</joint>", text, re.S):
        if re.search(r"<mimic\b", joint.group()) and not re.search(
                r"""type\s*=\s*["']fixed["']""", joint.group()[:joint.group().index(">")]):
            return True
    return False
