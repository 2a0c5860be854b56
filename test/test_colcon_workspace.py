"""
The README's ROS 2 workspace route, as written: colcon build, then ros2 run from the install.

The README's ``colcon build --paths ...`` builds into a temporary workspace. The repository
(its tracked files) is copied to ``WS/src/rbd_ros``, both packages are built
with the README's command (the venv's colcon and ROS wheels stand for a ROS install: PATH,
AMENT_PREFIX_PATH and CMAKE_PREFIX_PATH name the venv, whose wheels' CMake exports
``scripts/build_interfaces.py`` fixed), and the install space is then used as a user does,
``source install/local_setup.sh``: ``ros2 pkg prefix`` names it, ``ros2 interface show``
finds the node's services there and ``ros2 run rbd_ros dynamics_node`` starts the node from
it. That node is new to the numba cache (its sources are at another path), so the warm-up
of its robot description compiles the kernels (a minute or more): the test waits for its log
line saying so, then stops it with SIGINT, a clean stop during compilation. Skips without
the tools, except in CI.
"""
import os
import shlex
import subprocess
import sys

import pytest

import ros_cli

README_BUILD = "colcon build --paths src/rbd_ros src/rbd_ros/rbd_ros_interfaces"


def tracked_files():
    try:
        out = subprocess.run(["git", "ls-files", "-z"], cwd=ros_cli.ROOT, check=True,
                             stdout=subprocess.PIPE).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout: the workspace copy needs the tracked files")
    return [p for p in out.decode().split("\0") if p]


def copy_repository(destination):
    import shutil
    for rel in tracked_files():
        source = os.path.join(ros_cli.ROOT, rel)
        if os.path.isfile(source):
            os.makedirs(os.path.join(destination, os.path.dirname(rel)), exist_ok=True)
            shutil.copy2(source, os.path.join(destination, rel))


def in_workspace(ws, command):
    """Return a bash command line that runs ``command`` in ``ws`` with its install sourced."""
    return ["bash", "-c", f"cd {shlex.quote(str(ws))} && source install/local_setup.sh && "
            f"{command}"]


def test_readme_colcon_build_then_ros2_run(tmp_path):
    ros_cli.require_ros2()
    with open(os.path.join(ros_cli.ROOT, "README.md"), encoding="utf-8") as f:
        assert README_BUILD in f.read(), "the README's command is the one tested here"
    ws = tmp_path / "ws"
    copy_repository(ws / "src" / "rbd_ros")
    venv = sys.prefix
    env = ros_cli.environment(os.environ.get("ROS_DOMAIN_ID", "0"),
                              CMAKE_PREFIX_PATH=venv,
                              PATH=os.pathsep.join([ros_cli.BIN, os.environ["PATH"]]))
    env.pop("PYTHONPATH", None)               # the install space's, from local_setup only
    status, out = ros_cli.run(shlex.split(README_BUILD) + [
        "--cmake-args", "-DBUILD_TESTING=OFF", f"-DPython3_EXECUTABLE={sys.executable}"],
        env, timeout=900.0, cwd=ws)
    assert status == 0, out[-4000:]
    install = ws / "install"
    for package in ("rbd_ros", "rbd_ros_interfaces"):
        assert (install / package).is_dir(), package
    assert (install / "rbd_ros" / "lib" / "rbd_ros" / "dynamics_node").is_file()

    status, out = ros_cli.run(in_workspace(ws, "ros2 pkg prefix rbd_ros"), env)
    assert status == 0 and out.strip() == str(install / "rbd_ros"), out
    status, out = ros_cli.run(in_workspace(
        ws, "ros2 interface show rbd_ros_interfaces/srv/InverseDynamics"), env)
    assert status == 0 and "joint_names" in out, out
    status, out = ros_cli.run(in_workspace(
        ws, "python -c 'from importlib.util import find_spec as f; "   # found, not imported:
            "print(f(\"rbd_ros\").origin, f(\"rbd_ros_entry\").origin)'"), env)  # no compile
    assert status == 0 and out.count(str(install / "rbd_ros")) == 2, out

    log = tmp_path / "run.log"
    cache = tmp_path / "numba"                 # a fresh cache: the kernels compile
    params = tmp_path / "params.yaml"          # a description: its warm-up compiles them
    with open(os.path.join(ros_cli.ROOT, "rbd_ros", "robots", "rbd_arm7.urdf"),
              encoding="utf-8") as f:
        urdf = f.read()
    params.write_text("/**:\n  ros__parameters:\n    robot_description: |\n"
                      + "".join(f"      {line}\n" for line in urdf.splitlines()))
    proc = ros_cli.start(in_workspace(
        ws, f"NUMBA_CACHE_DIR={shlex.quote(str(cache))} exec ros2 run rbd_ros dynamics_node "
            f"--ros-args -r __ns:=/rbd_colcon_{os.getpid()} "
            f"--params-file {shlex.quote(str(params))}"), log, env)
    try:
        ros_cli.wait_log(log, "compiling the dynamics kernels", proc, timeout=120.0)
        text = ros_cli.read(log)
    finally:
        status = ros_cli.stop(proc)
    assert os.path.isdir(cache), "the node did not run from the install space"
    ros_cli.assert_clean_stop(status, ros_cli.read(log))
    assert "first start after an install" in text
