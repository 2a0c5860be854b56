"""
The planner services do not hold the ticks, per executor, from a process or a thread.

The node spins on the executor its ``executor`` parameter picks (rclpy's EventsExecutor or
SingleThreadedExecutor, as ``spin_node`` does), the tester on its own; while a long
``~/trajectory_forward`` rollout computes, joint_states keep coming and ~/torques must keep
going out (on the executor's thread the request would hold every tick until it is answered),
and the answer is the rollout's. The services are served by the node's planner process
(``rbd_ros.node.planner.process``, the default) or by its worker thread
(``rbd_ros.node.planner.worker``, ``planner_process`` false).
"""
import os
import threading
import time

import numpy as np  # noqa: E402
import pytest  # noqa: E402

import rclpy  # noqa: E402
from rclpy.context import Context  # noqa: E402
from rclpy.executors import SingleThreadedExecutor  # noqa: E402
from rclpy.node import Node  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint  # noqa: E402

import rbd_ros  # noqa: E402
from rbd_ros.batch import rollout as rl  # noqa: E402
from rbd_ros.node.dynamics_node import DynamicsNode  # noqa: E402
from rbd_ros_interfaces import srv as rbd_srv  # noqa: E402
from helpers import assert_close  # noqa: E402
from node_helpers import RELIABLE, joint_state, new_stamp, wait_for  # noqa: E402


def executor(kind, context):
    if kind == "events":
        from rclpy.experimental import EventsExecutor
        return EventsExecutor(context=context)
    return SingleThreadedExecutor(context=context)


def rollout_request(model, steps):
    q0 = model.random_configuration(0)
    traj = JointTrajectory(joint_names=list(model.joint_names))
    traj.points = [JointTrajectoryPoint(positions=q0.tolist(), velocities=[0.0] * model.nv,
                                        effort=[0.5] * model.nv)]
    traj.points += [JointTrajectoryPoint(effort=[0.5] * model.nv) for _ in range(steps - 1)]
    req = rbd_srv.TrajectoryForward.Request(mode="rollout", integrator="rk4", dt=0.001,
                                            derivatives=True, trajectory=traj)
    return req, q0


@pytest.mark.parametrize("process", [True, False])
@pytest.mark.parametrize("kind", ["events", "single_threaded"])
def test_ticks_go_on_while_a_planner_request_computes(kind, process):
    model = rbd_ros.load_model(rbd_ros.robots.path("rbd_arm7"))
    ctx = Context()
    rclpy.init(context=ctx)
    ns = f"/rbd_planner_worker_{os.getpid()}_{kind}_{process}"
    spinning, threads, nodes = [True], [], []
    try:
        with open(rbd_ros.robots.path("rbd_arm7"), encoding="utf-8") as f:
            xml = f.read()
        node = DynamicsNode(namespace=ns, context=ctx, parameter_overrides=[
            Parameter("robot_description", value=xml), Parameter("executor", value=kind),
            Parameter("max_joint_age", value=5.0), Parameter("planner_process", value=process)])
        tester = Node("tester", namespace=ns, context=ctx)
        nodes += [node, tester]
        # each output's stamp, and whether the answer was in when it came: both are taken on
        # the tester's one executor thread, so this is the order in which they arrived
        torques, request = [], [None]

        def on_torques(m):
            answered = request[0] is not None and request[0].done()
            torques.append(((m.header.stamp.sec, m.header.stamp.nanosec), answered))
        tester.create_subscription(JointState, f"{ns}/rbd_dynamics/torques", on_torques,
                                   RELIABLE)
        pub = tester.create_publisher(JointState, "joint_states", RELIABLE)
        client = tester.create_client(rbd_srv.TrajectoryForward,
                                      f"{ns}/rbd_dynamics/trajectory_forward")
        for n, ex in ((node, executor(kind, ctx)), (tester, SingleThreadedExecutor(context=ctx))):
            ex.add_node(n)

            def spin(ex=ex):
                while spinning[0]:
                    ex.spin_once(timeout_sec=0.05)
            threads.append(threading.Thread(target=spin, daemon=True))
            threads[-1].start()
        assert client.wait_for_service(timeout_sec=60.0)
        wait_for(lambda: pub.get_subscription_count() > 0, what="joint_states discovery")
        q, v = model.random_configuration(1), np.zeros(model.nv)
        msg = joint_state(list(model.joint_names), q, v)
        wait_for(lambda: pub.publish(msg) or torques, what="a first output")
        req, q0 = rollout_request(model, 3000)
        # the request, then joint_states of stamps of their own until its answer is in
        request[0] = future = client.call_async(req)
        sent = set()
        while not future.done():
            stamp = new_stamp()
            pub.publish(joint_state(list(model.joint_names), q, v, stamp=stamp))
            sent.add((stamp.sec, stamp.nanosec))
            time.sleep(0.002)
        resp = future.result()
        assert resp.success, resp.message
        # ticks went on: outputs of joint_states sent after the request came before its answer
        # (with the executor held by the request, only those it took before the request could:
        # a handful at most)
        before_answer = {stamp for stamp, answered in torques if stamp in sent and not answered}
        assert len(before_answer) >= 20, (len(before_answer), len(sent))
        r = rl.rollout(model, q0, np.zeros(model.nv), np.full((3000, model.nv), 0.5), 0.001,
                       "rk4", False)
        assert_close(np.reshape(resp.positions, (-1, model.nv)), r.q, 1e-12, "rollout")
    finally:
        spinning[0] = False
        for t in threads:
            t.join(timeout=5.0)
        for n in nodes:
            n.destroy_node()
        rclpy.shutdown(context=ctx)
