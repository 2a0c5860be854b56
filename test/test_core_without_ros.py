"""
``pytest test/core`` runs without ROS: collected where rclpy and every ROS package are hidden.

The core layer (test/core: model, algorithms, batch, rollout, wrenches, identification,
retiming, the URDF reader) must run wherever numpy, numba, rbd_ros and the test extras are
installed. A child Python hides ROS from imports (an import of rclpy, a message package, our
built interfaces, launch... raises ModuleNotFoundError, as where ROS is not installed) and
collects test/core under CI=true, where a module skipped at collection fails the run: so no
core test, conftest or module they import needs ROS, not even behind an importorskip.
"""
import os
import re
import subprocess
import sys

from helpers import ROOT

HIDDEN = ("rclpy", "rpyutils", "rosidl_runtime_py", "rosidl_parser", "rcl_interfaces",
          "builtin_interfaces", "std_msgs", "std_srvs", "sensor_msgs", "nav_msgs",
          "geometry_msgs", "diagnostic_msgs", "trajectory_msgs", "rbd_ros_interfaces",
          "launch", "launch_ros", "ament_index_python", "rosbag2_py")
"""Top-level modules of a ROS installation (and ours built with it)."""

CHILD = """
import sys

HIDDEN = set(sys.argv[1].split(","))


class WithoutROS:
    def find_spec(self, fullname, path=None, target=None):
        if fullname.split(".")[0] in HIDDEN:
            raise ModuleNotFoundError(f"No module named {fullname!r} (ROS hidden)",
                                      name=fullname)
        return None


sys.meta_path.insert(0, WithoutROS())
import pytest
code = pytest.main(["--collect-only", "-q", "-p", "no:cacheprovider", "test/core"])
imported = sorted(m for m in sys.modules if m.split(".")[0] in HIDDEN)
print("ROS modules imported:", imported)
sys.exit(int(code) or bool(imported))
"""


def test_core_collects_with_ros_hidden():
    env = dict(os.environ, CI="true")
    result = subprocess.run([sys.executable, "-c", CHILD, ",".join(HIDDEN)], cwd=ROOT,
                            env=env, capture_output=True, text=True, timeout=600)
    out = result.stdout + result.stderr
    assert result.returncode == 0, f"test/core does not collect without ROS:\n{out[-4000:]}"
    assert "ROS modules imported: []" in out
    summary = re.findall(r"^\d+ tests? collected.*$", out, re.MULTILINE)
    assert len(summary) == 1 and not re.search(r"skipped|error", summary[0]), out[-4000:]
