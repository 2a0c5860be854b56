"""
A ROS_DOMAIN_ID that Fast DDS's default ports cannot take is said at start, with the fix.

Fast DDS puts a domain's ports at 7400 + 250 × domain (+ offsets): above 232 they pass
65535 and the participant fails with a line about port numbers that never names the
variable. The node refuses first, naming ROS_DOMAIN_ID, its value and the ranges to choose.
"""
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_the_check_accepts_fast_dds_domains_and_other_middlewares():
    from rbd_ros.node import domain_id_problem
    for value in ("0", "42", "232", "", " 7 "):
        assert domain_id_problem({"ROS_DOMAIN_ID": value}) is None, value
    assert domain_id_problem({}) is None
    assert domain_id_problem({"ROS_DOMAIN_ID": "233",
                              "RMW_IMPLEMENTATION": "rmw_cyclonedds_cpp"}) is None
    problem = domain_id_problem({"ROS_DOMAIN_ID": "233",
                                 "RMW_IMPLEMENTATION": "rmw_fastrtps_cpp"})
    assert "ROS_DOMAIN_ID=233" in problem and "232" in problem


def test_the_node_says_what_is_wrong_with_a_domain_above_232_and_exits_1():
    with open(os.path.join(ROOT, "rbd_ros", "robots", "rbd_arm7.urdf"), encoding="utf-8") as f:
        urdf = f.read()
    env = dict(os.environ, ROS_DOMAIN_ID="233")
    env.pop("RMW_IMPLEMENTATION", None)
    result = subprocess.run(
        [sys.executable, "-c", "import rbd_ros_entry; rbd_ros_entry.dynamics_node()",
         "--ros-args", "-p", f"robot_description:='{urdf}'"],
        capture_output=True, text=True, env=env, timeout=120)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "ROS_DOMAIN_ID=233" in result.stderr, result.stderr
    assert "Traceback" not in result.stderr, result.stderr
