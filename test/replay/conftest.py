"""
The replay layer: rbd_replay over rosbags, its fleet runs (Dask), identification from bags.

The replay reads and writes bags with ``rosbags`` (pure Python, no ROS installation needed),
checked once here: without it each module of the folder is skipped at collection (failed
under CI=true). A test that also starts ROS (live replay, the bag played into the node)
checks rclpy itself.
"""
from helpers import first_missing, skipped_module

_MISSING = first_missing(("rosbags",))
MISSING_ROSBAGS = None if _MISSING is None else \
    "the replay tests need rosbags (pip: rosbags; could not import {}: {})".format(*_MISSING)
"""Why this folder's modules are skipped (None: rosbags is installed)."""


def pytest_pycollect_makemodule(module_path, parent):
    if MISSING_ROSBAGS is not None:
        return skipped_module(parent, module_path, MISSING_ROSBAGS)
    return None
