"""
The core layer's fixtures: the robots of the set (``oracle.py``), parametrized.

Nothing here or in a core test imports rclpy or a ROS package, so ``pytest test/core`` runs
without ROS; ``test/test_core_without_ros.py`` collects this folder with them hidden, and
:func:`pytest_collection_finish` checks each run made of core tests only.
"""
import sys

import pytest

from helpers import FLOATING_ROBOTS, ROBOT_NAMES, get_robot

ROS_MODULES = ("rclpy", "rpyutils", "rosidl_runtime_py", "launch", "launch_ros",
               "rbd_ros_interfaces.msg", "rbd_ros_interfaces.srv")
"""Modules of ROS that collecting the core tests must not import (the root conftest imports
``rbd_ros_interfaces`` alone, where it can, to tell a build from its source folder)."""


@pytest.fixture(params=ROBOT_NAMES)
def robot(request):
    """Every robot of the set (its Pinocchio side is built only if a test uses it)."""
    return get_robot(request.param)


@pytest.fixture(params=FLOATING_ROBOTS)
def floating_robot(request):
    """Every floating-base robot of the set."""
    return get_robot(request.param)


def pytest_collection_finish(session):
    """Fail a collection of core tests only that imported ROS (the layer must not need it)."""
    here = session.config.rootpath / "test" / "core"
    if not session.items or any(here not in item.path.parents for item in session.items):
        return
    found = sorted(m for m in ROS_MODULES if m in sys.modules)
    if found:
        raise pytest.UsageError(f"collecting test/core imported {', '.join(found)}: a core "
                                f"test, its conftest or a module they import needs ROS")
