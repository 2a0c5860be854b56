"""Sphinx configuration of the rbd_ros manual (``./dev.sh docs``, ``test/test_docs.py``)."""
import os
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
exclude_patterns = ["_build"]
html_theme = "furo"
html_title = "rbd_ros"
myst_heading_anchors = 3
autosummary_generate = True
autodoc_default_options = {"members": False}
autodoc_typehints = "none"
