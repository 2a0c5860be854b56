"""
joint_trajectory_source refuses a URDF rooted in a base joint, by name, at start.

It moves the joints of a fixed-base tree: a URDF whose root joint is a base (a ``floating`` or
a ``planar`` joint from the root link) is refused with the file's name and the reason, exit
status 1 and no traceback, as the console script runs it.
"""
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
URDF_DIR = os.path.join(ROOT, "test", "urdf")


def run_source(*parameters):
    env = dict(os.environ, ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST")
    arguments = [a for p in parameters for a in ("-p", p)]
    return subprocess.run(
        [sys.executable, "-c", "from rbd_ros.tools.trajectory_source import main; main()",
         "--ros-args", *arguments],
        capture_output=True, text=True, env=env, timeout=120)


@pytest.mark.parametrize("urdf", ["branched_planar.urdf", "floating_joint.urdf"])
def test_a_urdf_rooted_in_a_base_joint_is_refused_by_name(urdf):
    path = os.path.join(URDF_DIR, urdf)
    result = run_source(f"urdf_file:={path}")
    assert result.returncode == 1, result.stdout + result.stderr
    assert path in result.stderr and "its root joint is a base" in result.stderr, result.stderr
    assert "Traceback" not in result.stderr, result.stderr


def test_a_bad_rate_is_refused_the_same_way():
    result = run_source("rate_hz:=0.0")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "rate_hz must be > 0" in result.stderr, result.stderr
    assert "Traceback" not in result.stderr, result.stderr
