"""
The README's ``ros2 launch`` and ``ros2 service call``, run as written, from a shell.

The commands are read from the README's "The node" section (the getting-started page shows
the same two): the launch starts the node on the bundled arm, the service call retimes a path
and must answer ``success=True``, then the launch stops cleanly on SIGINT. Needs the ROS 2
command line (``./dev.sh setup``): skips without it, except in CI (``ros_cli.require_ros2``).
"""
import os
import re

import ros_cli


def node_commands(path, heading):
    """Return the shell commands of the first bash block after ``heading`` in ``path``."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    section = text[text.index(heading):]
    block = re.search(r"```bash\n(.*?)```", section, flags=re.S).group(1)
    commands = []
    for line in block.replace("\\\n", "").splitlines():
        if line.startswith(" ") and commands:     # inside a quoted, multi-line argument
            commands[-1] += " " + line.strip()
        elif line.strip():
            commands.append(line.strip())
    return commands


# what rclpy says when rmw_fastrtps dropped a response: the client's response reader had
# not matched the service's writer within the rmw's 100 ms (ros2/rmw_fastrtps#467)
DROPPED = "failed to send response (timeout): client will not receive response"


def call_once_more_if_dropped(call, env, log):
    """
    Run the shell ``call`` (150 s at most); again if the node's log says its answer was dropped.

    A client that waits for a response the server never sent hangs: the README's call did
    once in a CI run (2026-12-04), the planner process freshly started at nice +10 on two
    busy cores. That is the rmw's, not the node's, and doc/troubleshooting.md tells a user
    to call again; any other failure is the test's to report.
    """
    command = ["bash", "-c", "timeout -k 5 150 " + call]
    status, out = ros_cli.run(command, env, timeout=180, cwd=ros_cli.ROOT)
    if status != 0 and DROPPED in ros_cli.read(log):
        status, out = ros_cli.run(command, env, timeout=180, cwd=ros_cli.ROOT)
    return status, out


def test_readme_launch_and_service_call(tmp_path):
    ros_cli.require_ros2()
    launch, call = node_commands(os.path.join(ros_cli.ROOT, "README.md"), "## The node")
    assert launch.startswith("ros2 launch ") and call.startswith("ros2 service call ")
    page = node_commands(os.path.join(ros_cli.ROOT, "doc", "getting_started.md"),
                         "## The node on your robot")
    assert page == [launch, call], "getting started shows the README's commands"
    env = ros_cli.environment(os.environ.get("ROS_DOMAIN_ID", "0"),
                              PATH=os.pathsep.join([ros_cli.BIN, os.environ["PATH"]]))
    log = tmp_path / "launch.log"
    proc = ros_cli.start(["bash", "-c", "exec " + launch], log, env, cwd=ros_cli.ROOT)
    try:
        status, out = call_once_more_if_dropped(call, env, log)
        assert status == 0, out[-3000:]
        assert "RetimeTrajectory_Response(success=True" in out, out[-3000:]
        duration = float(re.search(r"duration=([0-9.eE+-]+)", out).group(1))
        assert 0 < duration < 60
    finally:
        stop_status = ros_cli.stop(proc)
    ros_cli.assert_clean_stop(stop_status, ros_cli.read(log))


def test_readme_demo_command_runs_and_checks_itself():
    """
    ``./dev.sh demo`` (the README's first command), as written, in this virtualenv.

    Its setup finds everything installed and returns; the demo then runs the node on the
    bundled arm and checks every ~/accelerations message against the trajectory's
    acceleration (forward dynamics of the published torques: an identity, tolerance 1e-6).
    """
    import subprocess
    import sys

    from helpers import ros_domain_id
    with open(os.path.join(ros_cli.ROOT, "README.md"), encoding="utf-8") as f:
        assert "./dev.sh demo" in f.read()
    env = dict(os.environ, RBD_VENV=sys.prefix, ROS_DOMAIN_ID=ros_domain_id(),
               ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST")
    result = subprocess.run(["./dev.sh", "demo", "--duration", "3"], cwd=ros_cli.ROOT, env=env,
                            capture_output=True, text=True, timeout=600)
    out = result.stdout + result.stderr
    assert result.returncode == 0, out[-3000:]
    found = re.search(r"q̈ checked on (\d+) messages, max \|q̈−q̈_traj\| = ([0-9.eE+-]+)", out)
    assert found, out[-3000:]
    assert int(found.group(1)) >= 100 and float(found.group(2)) < 1e-6, found.group(0)
    assert "rbd_demo: OK" in out


def test_getting_started_commands_without_ros2_run_as_written(tmp_path):
    """
    The getting-started page's twin of the launch for a pip virtualenv, as written.

    ``.venv/bin/dynamics_node --ros-args -p robot_description:=...`` in one terminal and
    ``examples/planner_client.py --no-node`` in a second: no ``ros2`` command line needed, so
    this runs wherever the virtualenv is set up (the venv of this run stands for ``.venv``).
    """
    import sys

    from helpers import ros_domain_id
    node, client = node_commands(os.path.join(ros_cli.ROOT, "doc", "getting_started.md"),
                                 "Without a ROS 2 install")
    assert node.startswith(".venv/bin/dynamics_node --ros-args ")
    assert client.startswith(".venv/bin/python examples/planner_client.py --no-node")
    venv = os.path.relpath(sys.prefix, ros_cli.ROOT)
    node, client = (c.replace(".venv/", venv + "/", 1) for c in (node, client))
    env = ros_cli.environment(ros_domain_id())
    log = tmp_path / "node.log"
    proc = ros_cli.start(["bash", "-c", "exec " + node], log, env, cwd=ros_cli.ROOT)
    try:
        status, out = ros_cli.run(["bash", "-c", "timeout 250 " + client], env, timeout=300,
                                  cwd=ros_cli.ROOT)
        assert status == 0, out[-3000:] + "\n--- node:\n" + ros_cli.read(log)[-3000:]
        for service in ("trajectory_torques", "retime_trajectory", "trajectory_forward"):
            assert f"{service}: True" in out, out[-3000:]
    finally:
        stop_status = ros_cli.stop(proc)
    ros_cli.assert_clean_stop(stop_status, ros_cli.read(log))
