"""Shared fixtures of the rbd_ros test suite (the robot set lives in ``oracle.py``).

Robots from the ``example-robot-data`` pip package (panda, ur5, hyq, talos) are skipped only
when that package or Pinocchio is not installed; CI installs both.
"""
import functools
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from oracle import (BAD_DIR, BUNDLED_DIR, ERD, EXAMPLE_ROBOT_DATA_ROBOTS, FIXED_ROBOTS,  # noqa: E402,F401
                    FLOATING_ROBOTS, ROBOT_NAMES, ROBOTS, URDF_DIR, Robot, assert_close,
                    available, has_mimic, load_quietly, rel_err, strip_mimic)


def robot_path(name):
    if not available(name):
        pytest.skip("example-robot-data is not installed")
    return ROBOTS[name][0]


@functools.lru_cache(maxsize=None)
def get_robot(name):
    robot_path(name)
    return Robot(name)


def robot_or_skip(name):
    robot_path(name)          # skips when example-robot-data is missing
    pytest.importorskip("pinocchio")
    return get_robot(name)


@pytest.fixture(params=ROBOT_NAMES)
def robot(request):
    return robot_or_skip(request.param)


@pytest.fixture(params=FLOATING_ROBOTS)
def floating_robot(request):
    return robot_or_skip(request.param)


@pytest.fixture
def pin():
    return pytest.importorskip("pinocchio")


SEEDS = (0, 1, 2, 3, 4)
