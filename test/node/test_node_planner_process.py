"""
The planner process (``rbd_ros.node.planner.process``): fed by the node, gone with it.

With real rclpy clients: the trajectory services answer from the child on the node's robot
of the moment ("no robot model yet" before one; a payload set through ``~/set_payload``, a
gravity parameter, a new robot description on the parameter or the topic: each seen by the
next request, against Pinocchio or the node's single-state ``~/inverse_dynamics``); the
child is gone once the node is destroyed and once the node's process is killed (SIGKILL: no
clean-up of the node's own), and it leaves the graph; a child killed is logged, reported in
/diagnostics and started again; the child's node has the node's ``use_sim_time`` and log
level (given at the node's start, and set while it runs), seen through its parameter service
and its debug lines on /rosout; a client with config/fastdds_large_messages.xml (the
profile the README recommends for large requests) gets its answer from a node without it.
"""
import os
import pickle
import signal
import subprocess
import sys

import numpy as np  # noqa: E402
import pytest  # noqa: E402

import rbd_ros  # noqa: E402
from rbd_ros.actuation import dynamics as actuation  # noqa: E402
from rbd_ros.actuation import joint_parameters as joint_friction  # noqa: E402
from rbd_ros.node import trajectories  # noqa: E402
from rbd_ros.node.planner.process import PlannerRobot  # noqa: E402
from rbd_ros.node.robot import Robot as NodeRobot  # noqa: E402
from helpers import ROOT, assert_close, random_payload  # noqa: E402
from mimic_oracle import hand_urdf  # noqa: E402
from node_helpers import (PLANNER_SERVICES, SERVICES, ParameterServices,  # noqa: E402
                          call_service, probing, shm_segment_sizes, wait_for)
from rcl_interfaces.msg import Log  # noqa: E402
from rclpy.logging import LoggingSeverity  # noqa: E402
from oracle import Robot  # noqa: E402
from node_cases import (ARM7, QUADRUPED, _run_node_process, pin_each,  # noqa: E402
                        random_states, set_payload, trajectory, xml)
from processes import children, gone  # noqa: E402


def torques_request(model, q, v, a):
    """Return a ~/trajectory_torques request of the model-order states (fixed base)."""
    req = PLANNER_SERVICES["trajectory_torques"].Request()
    req.trajectory = trajectory(model.joint_names, np.arange(model.nv), positions=q,
                                velocities=v, accelerations=a)
    return req


def trajectory_torques(h, model, q, v, a):
    resp = h.call("trajectory_torques", torques_request(model, q, v, a), timeout=30.0)
    assert resp.success, resp.message
    return np.reshape(resp.tau, (len(q), -1))


def single_state_torques(h, model, q, v, a):
    """τ at each point from the node's own ~/inverse_dynamics (computed in the node)."""
    out = []
    for x in zip(q, v, a):
        req = SERVICES["inverse_dynamics"].Request(joint_names=list(model.joint_names),
                                                   q=x[0].tolist(), v=x[1].tolist(),
                                                   a=x[2].tolist())
        resp = h.call("inverse_dynamics", req)
        assert resp.success, resp.message
        out.append(resp.tau)
    return np.array(out)


def serving(h):
    wait_for(lambda: h.node.planner_status().state.startswith("serving"), timeout=60.0,
             what="the planner process to serve")
    return h.node.planner_status().pid


def test_the_robot_snapshot_pickles_and_answers_alike():
    """What the node sends: model (coupled, payload, gravity), joint parameters, names."""
    model = rbd_ros.load_model(hand_urdf(), mimic="coupled").with_gravity((0.3, 0.0, -9.5))
    link = model.body_names[-1]
    params = joint_friction.JointParameters(tuple(model.joint_names), {
        "viscous": np.linspace(0.1, 0.5, model.nv), "armature": np.full(model.nv, 0.02)})
    robot = NodeRobot(model, "<robot/>", (), {}, {link: rbd_ros.model.inertia.compact(
        *random_payload(1))}, actuation.Actuation(params, 0))
    snapshot = PlannerRobot(robot)
    copy = pickle.loads(pickle.dumps(snapshot, pickle.HIGHEST_PROTOCOL))
    assert copy.joint_names == robot.joint_names and copy.dof_names == robot.dof_names
    assert copy.followers == robot.followers and copy.followers
    q, v, a = (np.array([model.random_configuration(k) for k in range(4)]),
               *np.random.default_rng(2).normal(size=(2, 4, model.nv)))
    names = list(model.joint_names) + list(robot.followers)
    answers = []
    for r in (robot, copy):
        req = PLANNER_SERVICES["trajectory_torques"].Request(derivatives=True)
        req.trajectory = trajectory(model.joint_names, np.arange(model.nv), positions=q,
                                    velocities=v, accelerations=a)
        req.trajectory.joint_names = names
        for p in req.trajectory.points:           # followers named too (their values ignored)
            for attr in ("positions", "velocities", "accelerations"):
                setattr(p, attr, list(getattr(p, attr)) + [0.0] * len(robot.followers))
        resp = PLANNER_SERVICES["trajectory_torques"].Response()
        trajectories.trajectory_torques(r, req, resp)
        answers.append(resp)
    for field in ("tau", "dtau_dq", "dtau_dv", "peak_effort_ratio"):
        np.testing.assert_array_equal(getattr(answers[1], field), getattr(answers[0], field),
                                      err_msg=field)


@pytest.mark.pinocchio
def test_payload_gravity_and_description_reach_the_planner_process(harness, pin):
    robot = Robot("arm7")                   # our own copy: its Pinocchio model is changed
    m = robot.model
    h = harness(dict(robot_description=robot.xml, planner_process=True))
    pid = serving(h)
    q, v, a = random_states(robot, 12, 3)
    assert_close(trajectory_torques(h, m, q, v, a), pin_each(robot, pin.rnea, q, v, a), 1e-9,
                 "no payload")
    # a payload: the very next request sees it (the node waits for nothing)
    body = m.nbodies - 1
    mass, com, rot = random_payload(4)
    assert set_payload(h, m.body_names[body], mass, com, rot).success
    jid = robot.body_joint[body]
    robot.pm.inertias[jid] = robot.pm.inertias[jid] + pin.Inertia(mass, com, rot)
    loaded = pin_each(robot, pin.rnea, q, v, a)
    assert_close(trajectory_torques(h, m, q, v, a), loaded, 1e-9, "payload")
    # gravity, a live parameter: against Pinocchio under that gravity
    assert h.set_parameters(gravity=[0.5, -1.0, -7.0])[0].successful
    robot.pm.gravity.linear = np.array([0.5, -1.0, -7.0])
    assert_close(trajectory_torques(h, m, q, v, a), pin_each(robot, pin.rnea, q, v, a), 1e-9,
                 "payload and gravity")
    # another robot description: against the node's single-state service
    quadruped = rbd_ros.load_model(QUADRUPED)
    assert h.set_parameters(robot_description=xml(QUADRUPED))[0].successful
    wait_for(lambda: h.node.current_robot().model.name == quadruped.name, what="the new model")
    q2, v2, a2 = (np.array([quadruped.random_configuration(k) for k in range(5)]),
                  *np.random.default_rng(5).normal(size=(2, 5, quadruped.nv)))
    assert_close(trajectory_torques(h, quadruped, q2, v2, a2),
                 single_state_torques(h, quadruped, q2, v2, a2), 1e-12, "new description")
    status = h.node.planner_status()
    assert status.pid == pid and status.exits == 0
    h.close()
    assert gone(pid), "the planner process outlived its node"


def test_a_killed_planner_process_is_reported_and_restarted(harness):
    model = rbd_ros.load_model(ARM7)
    h = harness(dict(robot_description=xml(ARM7), planner_process=True,
                     diagnostics_period=0.2))
    first = serving(h)
    os.kill(first, signal.SIGKILL)
    h.wait_log("was killed by SIGKILL")

    def warned():
        for msg in h.messages("diagnostics"):
            for status in msg.status:
                values = {kv.key: kv.value for kv in status.values}
                if status.name.startswith("rbd_dynamics") and status.level == b"\x01" and \
                        "planner process" in status.message and values["planner_exits"] == "1":
                    return True
        return False
    wait_for(warned, what="/diagnostics to report the planner process's exit")
    second = serving(h)
    assert second != first and gone(first)
    q, v, a = (np.array([model.random_configuration(k) for k in range(3)]),
               *np.random.default_rng(1).normal(size=(2, 3, model.nv)))
    # the killed child's endpoints stay in DDS's graph until their lease ends, so the client
    # sees a server at once; a request sent before it has matched the new child is lost
    resp = None
    for _ in range(5):
        try:
            resp = h.call("trajectory_torques", torques_request(model, q, v, a), timeout=5.0)
            break
        except AssertionError:
            pass
    assert resp is not None and resp.success, resp
    assert_close(np.reshape(resp.tau, (3, -1)), single_state_torques(h, model, q, v, a),
                 1e-12, "after the restart")


def test_the_planner_process_leaves_when_the_node_process_is_killed(tmp_path):
    ns, proc, log = _run_node_process(tmp_path, {"robot_description": xml(ARM7),
                                                 "diagnostics_period": 0.0})
    name = f"{ns}/rbd_dynamics/trajectory_torques"
    with probing(ns, proc) as probe:
        tester = probe.node
        client = tester.create_client(PLANNER_SERVICES["trajectory_torques"], name)
        assert client.wait_for_service(timeout_sec=90.0), open(log.name).read()[-3000:]
        assert tester.count_services(name) == 1
        # an answer: the child is past its warm-up (imports, kernels) and in its loop, where
        # it cleans up on leaving; killed while busy, its watchdog ends it without that
        model = rbd_ros.load_model(xml(ARM7))
        q, z = model.random_configuration(0)[None], np.zeros((1, model.nv))
        resp = call_service(client, torques_request(model, q, z, z), "a first answer",
                            timeout=90.0)
        assert resp.success, resp.message
        kids = wait_for(lambda: children(proc.pid), what="the planner process")
        assert len(kids) == 1
        child = kids.pop()
        proc.kill()                              # SIGKILL: the node cleans nothing up
        proc.wait(timeout=10)
        wait_for(lambda: gone(child), what="the planner process to exit")
        # it destroyed its node: the service left the graph at once (not at a DDS timeout)
        wait_for(lambda: tester.count_services(name) == 0, timeout=5.0,
                 what="the service to leave the graph")
    assert "Traceback" not in open(log.name).read()


def test_no_robot_model_yet_then_the_description_from_the_topic(harness):
    from std_msgs.msg import String
    model = rbd_ros.load_model(ARM7)
    h = harness(dict(planner_process=True))
    serving(h)
    q, v, a = (np.array([model.random_configuration(k) for k in range(2)]),
               *np.random.default_rng(3).normal(size=(2, 2, model.nv)))
    resp = h.call("trajectory_torques", torques_request(model, q, v, a), timeout=30.0)
    assert not resp.success and resp.message == "no robot model yet"
    h.description.publish(String(data=xml(ARM7)))
    wait_for(lambda: h.node.current_robot() is not None, what="the model from the topic")
    assert_close(trajectory_torques(h, model, q, v, a),
                 single_state_torques(h, model, q, v, a), 1e-12, "the model from the topic")


ANSWERED = "points answered in"           # the child's debug line for each answer


def child_parameters(tester, ns):
    """Return the parameter services of the child's node, once it has started."""
    return ParameterServices(tester, f"{ns}/rbd_dynamics_planner").wait_up()


def child_use_sim_time(child):
    """Return the child node's use_sim_time, through its parameter service."""
    return child.get(["use_sim_time"])[0].bool_value


def debug_lines(messages):
    return [m for m in messages if m.name.endswith("rbd_dynamics_planner") and ANSWERED in m.msg
            and m.level == int(LoggingSeverity.DEBUG)]


def test_the_child_takes_use_sim_time_and_log_level_given_to_the_node(tmp_path):
    """
    ``-p use_sim_time:=true --log-level <node>:=debug`` on the node: the child's node too.

    Then use_sim_time set false on the running node: the child's too.
    """
    model = rbd_ros.load_model(ARM7)
    ns, proc, log = _run_node_process(
        tmp_path, {"robot_description": xml(ARM7), "diagnostics_period": 0.0,
                   "use_sim_time": True}, ros_args=["--log-level", "{ns}.rbd_dynamics:=debug"])
    with probing(ns, proc) as probe:
        rosout = probe.subscribe(Log, "/rosout")
        child = child_parameters(probe.node, ns)
        assert child_use_sim_time(child) is True
        # set on the node while it runs (its own executor): the child follows
        node = ParameterServices(probe.node, f"{ns}/rbd_dynamics")
        assert node.set(use_sim_time=False)[0].successful
        wait_for(lambda: child_use_sim_time(child) is False,
                 what="the child's use_sim_time to follow the node's")
        q, v, a = (np.array([model.random_configuration(k) for k in range(4)]),
                   *np.random.default_rng(4).normal(size=(2, 4, model.nv)))
        resp = probe.call(PLANNER_SERVICES["trajectory_torques"],
                          f"{ns}/rbd_dynamics/trajectory_torques", torques_request(model, q, v, a),
                          timeout=90.0)
        assert resp.success, resp.message
        wait_for(lambda: debug_lines(rosout), what="the child's debug line on /rosout")
        assert "trajectory_torques: 4 " + ANSWERED in debug_lines(rosout)[0].msg
    assert "trajectory_torques: 4 " + ANSWERED in open(log.name).read()   # its console too


def test_the_child_follows_use_sim_time_and_log_level_set_on_the_node(harness):
    """Set on the node while it runs: use_sim_time (a parameter) and its logger's level."""
    model = rbd_ros.load_model(ARM7)
    h = harness(dict(robot_description=xml(ARM7), planner_process=True))
    serving(h)
    child = child_parameters(h.tester, h.namespace)
    assert child_use_sim_time(child) is False
    # false -> true here (true -> false: in the test above): true -> false makes rclpy's
    # TimeSource destroy the node's /clock subscription inside the parameter callback, which
    # the harness's multi-threaded executor does not survive (another of its threads waits on
    # it: InvalidHandle in the spin thread); the node's own executors are single-threaded
    assert h.set_parameters(use_sim_time=True)[0].successful
    wait_for(lambda: child_use_sim_time(child) is True,
             what="the child's use_sim_time to follow the node's")
    q, v, a = (np.array([model.random_configuration(k) for k in range(3)]),
               *np.random.default_rng(6).normal(size=(2, 3, model.nv)))
    for _ in range(3):                       # at the node's level (info): no debug line
        trajectory_torques(h, model, q, v, a)
    logger = h.node.get_logger()
    logger.set_level(LoggingSeverity.DEBUG)
    calls = [0]

    def debug_line():
        calls[0] += 1
        trajectory_torques(h, model, q, v, a)
        return debug_lines(h.messages("rosout"))
    try:
        wait_for(debug_line, what="the child's debug line once the node's level is debug")
    finally:
        logger.set_level(LoggingSeverity.INFO)
    # the three answers at info level logged nothing: every line is of a call made after
    assert len(debug_lines(h.messages("rosout"))) <= calls[0]


PROFILE = os.path.join(ROOT, "config", "fastdds_large_messages.xml")
PROFILED_CLIENT = """
import sys
import numpy as np
import rclpy
from rclpy.executors import SingleThreadedExecutor
from rclpy.serialization import serialize_message
from rbd_ros_interfaces import srv
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint
service, data, out = sys.argv[1:]
x = np.load(data)
req = srv.TrajectoryTorques.Request(trajectory=JointTrajectory(
    joint_names=[str(n) for n in x["names"]], points=[JointTrajectoryPoint(
        positions=x["q"][k], velocities=x["v"][k], accelerations=x["a"][k])
        for k in range(len(x["q"]))]))
print("request bytes", len(serialize_message(req)), flush=True)
rclpy.init()
node = rclpy.create_node("rbd_profiled_client")
executor = SingleThreadedExecutor()
executor.add_node(node)
client = node.create_client(srv.TrajectoryTorques, service)
assert client.wait_for_service(timeout_sec=60.0), "no service"
future = client.call_async(req)
while not future.done():
    executor.spin_once(timeout_sec=0.1)
resp = future.result()
assert resp.success, resp.message
np.save(out, np.reshape(resp.tau, (resp.points, -1)))
sizes = [0]                                   # the Fast DDS segments this process maps
for line in open("/proc/self/maps"):
    if "/dev/shm/fastrtps_" in line and "_el" not in line and "port" not in line:
        start, end = (int(x, 16) for x in line.split()[0].split("-"))
        sizes.append(end - start)
print("largest segment", max(sizes), flush=True)
"""


def test_a_client_with_the_large_messages_profile_gets_its_answer(harness, tmp_path):
    """The shipped profile on the client only: it loads, and a 1.5 MB request is answered."""
    model = rbd_ros.load_model(ARM7)
    h = harness(dict(robot_description=xml(ARM7), planner_process=True))
    serving(h)
    n = 7000                           # 7 joints: 1.5 MB, above the default 512 kB segment
    rng = np.random.default_rng(8)
    q = np.array([model.random_configuration(rng) for _ in range(n)])
    v, a = rng.normal(size=(2, n, model.nv))
    np.savez(tmp_path / "states.npz", names=np.array(model.joint_names), q=q, v=v, a=a)
    out = subprocess.run(
        [sys.executable, "-c", PROFILED_CLIENT, f"{h.namespace}/rbd_dynamics/trajectory_torques",
         str(tmp_path / "states.npz"), str(tmp_path / "tau.npy")],
        env=dict(os.environ, FASTRTPS_DEFAULT_PROFILES_FILE=PROFILE), capture_output=True,
        text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-3000:]
    assert int(out.stdout.split()[2]) > 1_000_000, out.stdout
    assert "error" not in out.stderr.lower(), out.stderr[-3000:]   # e.g. [XMLPARSER Error]
    assert int(out.stdout.split()[-1]) > 4 << 20, out.stdout     # its 8 MB segment: in use
    tau = np.load(tmp_path / "tau.npy")
    assert tau.shape == (n, model.nv)
    some = [0, 1, n // 2, n - 1]
    assert_close(tau[some], single_state_torques(h, model, q[some], v[some], a[some]), 1e-12,
                 "a profiled client's answer")


def test_the_planner_process_runs_with_the_large_messages_profile(harness):
    # its answers (derivatives: MBs) go through an 8 MB segment, not 512 kB + UDP fragments
    from rbd_ros.node.planner import process as planner_process
    h = harness(dict(robot_description=xml(ARM7), planner_process=True))
    serving(h)
    pid = h.node.planner_status().pid
    with open(f"/proc/{pid}/environ", "rb") as f:
        environ = f.read().split(b"\0")
    assert f"FASTRTPS_DEFAULT_PROFILES_FILE={PROFILE}".encode() in environ
    assert max(shm_segment_sizes(pid)) >= 8 * 2**20, shm_segment_sizes(pid)
    # this process (no profile) maps it too: the child's answers reach it through that segment
    trajectory_torques(h, rbd_ros.load_model(ARM7), *np.zeros((3, 2, 7)))
    assert max(shm_segment_sizes(os.getpid())) >= 8 * 2**20, shm_segment_sizes(os.getpid())
    assert planner_process.large_messages_profile() == PROFILE


@pytest.mark.parametrize("variable", ["FASTRTPS_DEFAULT_PROFILES_FILE",
                                      "FASTDDS_BUILTIN_TRANSPORTS", "RMW_IMPLEMENTATION"])
def test_a_fast_dds_choice_of_the_node_is_left_to_the_child(monkeypatch, variable):
    from rbd_ros.node.planner import process as planner_process
    for name in planner_process.FASTDDS_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("RMW_IMPLEMENTATION", raising=False)
    assert planner_process._child_environment()["FASTRTPS_DEFAULT_PROFILES_FILE"] == PROFILE
    value = {"FASTDDS_BUILTIN_TRANSPORTS": "LARGE_DATA",
             "RMW_IMPLEMENTATION": "rmw_cyclonedds_cpp"}.get(variable, "/their/profile.xml")
    monkeypatch.setenv(variable, value)
    env = planner_process._child_environment()
    assert env.get("FASTRTPS_DEFAULT_PROFILES_FILE") == (
        value if variable == "FASTRTPS_DEFAULT_PROFILES_FILE" else None)
