"""
rbd_ros through the ROS 2 command line, as a user runs it (issue 13).

``ros2 launch rbd_ros dynamics.launch.py`` with ``urdf_file:=`` and with ``floating_base:=true``
plus odometry, ``--show-args`` and a bad argument; ``ros2 run rbd_ros dynamics_node``;
``ros2 param describe/get/set`` on the running node. Each node is checked through its topics
and a service call against the core, and stopped with SIGINT to its process group, as
Ctrl-C in a terminal does: exit 0, no traceback. Skips without the tools (``ros_cli``), except
in CI.
"""
import os
import sys
import time

import pytest

from nav_msgs.msg import Odometry  # noqa: E402
from rbd_ros_interfaces.msg import JointVector  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402

import ros_cli  # noqa: E402
from node_helpers import RELIABLE, SERVICES, Probe, odometry, same_stamp, wait_for  # noqa: E402

from node_cases import (ARM7, QUADRUPED, assert_matches_core, call_inverse_dynamics,  # noqa: E402
                        core_model, message, random_base, random_state)


@pytest.fixture
def ros2():
    return ros_cli.require_ros2()


@pytest.fixture
def env(ros2):
    """Give the tests' environment; stop the ros2 daemon that ``ros2 param`` starts, after."""
    environment = ros_cli.environment(os.environ["ROS_DOMAIN_ID"])
    yield environment
    ros_cli.run([ros2, "daemon", "stop"], environment)


@pytest.fixture
def probe(request):
    """Give a maker of Probes in a namespace of this test, closed at teardown."""
    made = []

    def make(namespace):
        made.append(Probe(namespace))
        return made[-1]
    yield make
    for p in made:
        p.close()


def namespace(tmp_path):
    return f"/rbd_cli_{os.getpid()}_{tmp_path.name}"


def answered(probe, ns, model, seed, base=None, accelerations=False):
    """
    Publish joint states (and odometry) until ~/torques answers them; check the numbers.

    And those of ~/accelerations, when asked.
    """
    got = probe.subscribe(JointState, f"{ns}/rbd_dynamics/torques")
    got_a = probe.subscribe(JointVector, f"{ns}/rbd_dynamics/accelerations") \
        if accelerations else None
    pub = probe.node.create_publisher(JointState, f"{ns}/joint_states", RELIABLE)
    odom = probe.node.create_publisher(Odometry, f"{ns}/odom", RELIABLE)
    q, v, tau = random_state(model, seed)
    msg = message(model, q, v, tau, seed=seed)

    def published():
        if base is not None:
            odom.publish(odometry(*base))
        pub.publish(msg)
        time.sleep(0.1)
        return all(any(same_stamp(m.header.stamp, msg.header.stamp) for m in topic)
                   for topic in (got, got_a) if topic is not None)
    wait_for(published, timeout=90.0, what="~/torques from the launched node")
    found = {name: next(m for m in topic if same_stamp(m.header.stamp, msg.header.stamp))
             for name, topic in (("torques", got), ("accelerations", got_a))
             if topic is not None}
    assert_matches_core(None, model, found, q, v, tau, base=base)
    return q, v


def test_launch_with_urdf_file(ros2, env, probe, tmp_path):
    ns = namespace(tmp_path)
    log = tmp_path / "launch.log"
    proc = ros_cli.start([ros2, "launch", "rbd_ros", "dynamics.launch.py",
                          f"urdf_file:={ARM7}", f"namespace:={ns}"], log, env)
    try:
        p = probe(ns)
        model = core_model(ARM7)
        q, v = answered(p, ns, model, 500, accelerations=True)
        client = p.node.create_client(SERVICES["inverse_dynamics"],
                                      f"{ns}/rbd_dynamics/inverse_dynamics")
        assert client.wait_for_service(timeout_sec=30.0)
        call_inverse_dynamics(client, model, q, v)
        # only the enabled outputs are advertised (config/dynamics.yaml: torques, accelerations)
        assert p.node.count_publishers(f"{ns}/rbd_dynamics/accelerations") == 1
        assert p.node.count_publishers(f"{ns}/rbd_dynamics/inverse_inertia") == 0
        text = ros_cli.read(log)
        assert "dynamics kernels loaded from the cache in" in text \
            or "compiled the dynamics kernels in" in text, text[-2000:]
    finally:
        status = ros_cli.stop(proc)
    ros_cli.assert_clean_stop(status, ros_cli.read(log))
    assert "process has finished cleanly" in ros_cli.read(log)


def test_launch_floating_base_with_odometry(ros2, env, probe, tmp_path):
    """Issue 13: floating_base:=true crashed the launch (a str passed as a bool)."""
    ns = namespace(tmp_path)
    log = tmp_path / "launch.log"
    proc = ros_cli.start([ros2, "launch", "rbd_ros", "dynamics.launch.py",
                          f"urdf_file:={QUADRUPED}", "floating_base:=true",
                          f"namespace:={ns}", "node_name:=rbd_dynamics"], log, env)
    try:
        model = core_model(QUADRUPED, floating_base=True)
        answered(probe(ns), ns, model, 501, base=random_base(501))
    finally:
        status = ros_cli.stop(proc)
    ros_cli.assert_clean_stop(status, ros_cli.read(log))


def test_launch_show_args_and_a_bad_argument(ros2, env):
    status, out = ros_cli.run([ros2, "launch", "rbd_ros", "dynamics.launch.py", "--show-args"],
                              env)
    assert status == 0, out
    for name in ("urdf_file", "floating_base", "namespace", "node_name", "use_sim_time",
                 "log_level", "publish_inverse_inertia", "params_file"):
        assert f"'{name}':" in out, (name, out)
    assert "Valid choices are: ['', 'true', 'false']" in out
    status, out = ros_cli.run([ros2, "launch", "rbd_ros", "dynamics.launch.py",
                               "floating_base:=maybe"], env)
    assert status != 0 and "floating_base" in out and "maybe" in out, out
    assert "Traceback" not in out and len(out) < 1000, out


def param(ros2, env, verb, *args):
    """
    Run ``ros2 param VERB ARGS``; return (status, output).

    ``--timeout 10``: ros2 param waits 1 s by default for the node to show in its graph, and
    on a loaded CI machine discovery took longer ("Node not found" with the node answering).
    """
    return ros_cli.run([ros2, "param", verb, "--timeout", "10", *args], env)


def test_ros2_run_and_ros2_param(ros2, env, probe, tmp_path):
    """ros2 run starts the node; ros2 param describes, gets, sets live and refuses."""
    import yaml
    ns = namespace(tmp_path)
    params = tmp_path / "params.yaml"
    with open(ARM7) as f:
        params.write_text(yaml.safe_dump({"/**": {"ros__parameters": {
            "robot_description": f.read()}}}))
    log = tmp_path / "run.log"
    proc = ros_cli.start([ros2, "run", "rbd_ros", "dynamics_node", "--ros-args",
                          "-r", f"__ns:={ns}", "--params-file", str(params)], log, env)
    node = f"{ns}/rbd_dynamics"
    try:
        p = probe(ns)
        model = core_model(ARM7)
        answered(p, ns, model, 502)
        status, out = param(ros2, env, "describe", node, "rate_hz", "floating_base")
        assert status == 0, out
        assert "0: compute on every joint_states message" in out
        assert "Min value: 0.0" in out and "Read only: true" in out, out
        status, out = param(ros2, env, "get", node, "max_joint_age")
        assert status == 0 and "Double value is: 0.5" in out, out
        assert p.node.count_publishers(f"{node}/inverse_inertia") == 0
        status, out = param(ros2, env, "set", node, "publish_inverse_inertia", "true")
        assert status == 0 and "Set parameter successful" in out, out
        wait_for(lambda: p.node.count_publishers(f"{node}/inverse_inertia") == 1,
                 what="~/inverse_inertia advertised after ros2 param set")
        status, out = param(ros2, env, "set", node, "unknown_velocity", "maybe")
        assert "Setting parameter failed: unknown_velocity must be one of" in out, out
        status, out = param(ros2, env, "set", node, "floating_base", "true")
        assert "Setting parameter failed" in out and "read-only" in out, out
        answered(p, ns, model, 503)               # it runs on
    finally:
        status = ros_cli.stop(proc)
    ros_cli.assert_clean_stop(status, ros_cli.read(log))


def test_ament_prefix_is_complete():
    """The pip route's venv holds what colcon installs for an ament_python package."""
    ros_cli.require_ros2()
    from ament_index_python.packages import get_package_prefix, get_package_share_directory
    assert os.path.realpath(get_package_prefix("rbd_ros")) == os.path.realpath(sys.prefix)
    share = get_package_share_directory("rbd_ros")
    for rel in ("package.xml", "launch/dynamics.launch.py", "config/dynamics.yaml",
                "robots/rbd_arm7.urdf"):
        assert os.path.isfile(os.path.join(share, rel)), rel
    for exe in ("dynamics_node", "rbd_replay"):
        assert os.access(os.path.join(sys.prefix, "lib", "rbd_ros", exe), os.X_OK), exe
    assert not [n for n in os.listdir(os.path.dirname(share)) if ".partial-" in n]
