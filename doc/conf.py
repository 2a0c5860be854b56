"""Sphinx configuration of the rbd_ros manual (``./dev.sh docs``, ``test/test_docs.py``)."""
import os
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "_ext"))
sys.path.insert(0, os.path.dirname(HERE))

project = "rbd_ros"
author = "rbd_ros developers"
copyright = "rbd_ros developers, BSD-3-Clause"
release = "0.1.0"
version = release

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.napoleon",
    "rbd_tables",
]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "_bench_plots", "bench"]
html_theme = "furo"
html_title = "rbd_ros"
myst_heading_anchors = 3
autosummary_generate = True
# autosummary writes its stubs into doc/generated, and Sphinx builds every stub there: one of
# a name no longer listed in api.md (or of a module since taken out) would fail -W, so each
# build starts without them
shutil.rmtree(os.path.join(os.path.dirname(os.path.abspath(__file__)), "generated"),
              ignore_errors=True)
autodoc_default_options = {}
autodoc_typehints = "none"
templates_path = ["_templates"]
# names that the docstrings mention but the reference does not document (module constants
# and internal classes outside rbd_ros.__all__)
nitpick_ignore = [("py:data", "KINDS"), ("py:data", "BINDS"),
                  ("py:class", "rbd_ros.description.mimic_coupling.Coupling"),
                  ("py:data", "MAX_SAMPLES"),
                  ("py:meth", "batch_workspace"), ("py:meth", "with_gravity"),
                  ("py:meth", "with_inertial_parameters"), ("py:func", "status")]
# rbd_ros.identification's module docstring names its functions unqualified
nitpick_ignore += [("py:func", name) for name in (
    "pseudo_inertia", "theta_from_pseudo_inertia", "is_physically_consistent",
    "theta_from_log_cholesky", "log_cholesky_from_theta", "theta_jacobian",
    "identify_least_squares", "identify_physically_consistent")]
# numpy-style "Parameters" types (napoleon) that name outside classes: plain words here
nitpick_ignore += [("py:class", name) for name in (
    "callable", "os.PathLike", "urdf_parser_py.urdf.Robot")]

# numpy-style types (napoleon): "ndarray, shape (N, nv)", "array_like, optional" are words,
# shapes and sizes, not classes; and the classes the docstrings name that are not on the API
# page (results' named tuples, internal classes)
nitpick_ignore_regex = [
    ("py:class", r"ndarray|array_like|optional|shape|sequence|mapping|iterable|numpy dtype"),
    ("py:class", r"\d+|nq|nv|nbodies|njoints|N|K|M|length nv|nv - nv_base|len\(.*|[Nk]·n\w+")]
nitpick_ignore += [("py:class", name) for name in (
    "JointParameters", "rbd_ros.actuation.joint_parameters.JointParameters", "Status",
    "rbd_ros.outputs.Computation", "threading.Lock", "threading.Event", "Coupling", "Rollout",
    "Limits", "Isolation", "numpy.random.Generator")]
nitpick_ignore += [("py:exc", "SampleSkipped"), ("py:func", "contact_wrench")]
