"""
The node layer: its ROS environment, checked once for the folder, and the ``harness`` fixture.

Every test here starts rclpy (DDS on loopback), a node process, its launch file or the
``ros2`` command line. Before rclpy initialises anything, this process's DDS traffic is kept
on loopback and in a domain of its own (``ROS_DOMAIN_ID`` if set, else one drawn from 101-200:
other test runs share the machine). Without rclpy, the built ``rbd_ros_interfaces`` or the
ROS messages the tests use, each module of the folder is skipped at collection (its imports
would fail), which under ``CI=true`` fails the run (the root conftest's rule).
"""
import os

import pytest

from helpers import first_missing, ros_domain_id, skipped_module

os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
ros_domain_id()

ROS_ENVIRONMENT = ("rclpy", "rbd_ros_interfaces", "builtin_interfaces", "rcl_interfaces",
                   "std_msgs", "std_srvs", "sensor_msgs", "nav_msgs", "geometry_msgs",
                   "diagnostic_msgs", "trajectory_msgs")
"""What the node tests import from ROS: rclpy, our interfaces and the standard messages."""

_MISSING = first_missing(ROS_ENVIRONMENT)
MISSING_ROS = None if _MISSING is None else \
    "the node tests need ROS 2 (could not import {}: {})".format(*_MISSING)
"""Why this folder's modules are skipped (None: the ROS environment is complete)."""


def pytest_pycollect_makemodule(module_path, parent):
    if MISSING_ROS is not None:
        return skipped_module(parent, module_path, MISSING_ROS)
    return None


@pytest.fixture
def harness():
    """Give a maker of started Harnesses (called with the node's parameters), closed at teardown."""
    from node_helpers import Harness
    made = []

    def make(params, **kwargs):
        params = {"max_joint_age": 5.0, "diagnostics_period": 0.0, **params}
        h = Harness(params, **kwargs)
        made.append(h)
        return h
    yield make
    for h in made:
        h.close()
