"""
A planner client: a trajectory's torques, a rollout, then a retimed path, one call each.

    ROS_DOMAIN_ID=42 python examples/planner_client.py            # starts a dynamics_node
    python examples/planner_client.py --no-node                   # one already runs

Without ``--no-node`` it starts ``dynamics_node`` on the bundled 7-dof arm (its URDF in a
parameters file) and stops it with SIGINT at the end.
"""
import os
import signal
import subprocess
import sys
import tempfile

import rbd_ros
import rclpy
from rbd_ros_interfaces.srv import RetimeTrajectory, TrajectoryForward, TrajectoryTorques
from trajectory_msgs.msg import JointTrajectoryPoint

NODE = "/rbd_dynamics"
JOINTS = [f"joint{i}" for i in range(1, 8)]


def start_node():
    """Start dynamics_node on the bundled arm; return the process."""
    with open(rbd_ros.robots.path("rbd_arm7"), encoding="utf-8") as f:
        urdf = f.read()
    params = os.path.join(tempfile.mkdtemp(prefix="planner_client_"), "params.yaml")
    with open(params, "w", encoding="utf-8") as f:
        f.write("/**:\n  ros__parameters:\n    robot_description: |\n")
        f.write("".join("      " + line + "\n" for line in urdf.splitlines()))
    entry = "import rbd_ros_entry; rbd_ros_entry.dynamics_node()"
    return subprocess.Popen([sys.executable, "-c", entry, "--ros-args", "-r",
                             "__node:=rbd_dynamics", "--params-file", params],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)


def call(node, client, request, timeout=60.0):
    """Call a service and wait for its answer."""
    if not client.wait_for_service(timeout_sec=timeout):
        raise RuntimeError(f"{client.srv_name} not available")
    while True:
        future = client.call_async(request)
        rclpy.spin_until_future_complete(node, future, timeout_sec=timeout)
        answer = future.result()
        if answer is not None and answer.message != "no robot model yet":
            return answer


def main():
    """Ask the node for a trajectory's torques, a rollout and a retimed path."""
    node_process = None if "--no-node" in sys.argv else start_node()
    rclpy.init()
    node = rclpy.create_node("planner_client_example")
    try:
        request = TrajectoryTorques.Request()
        request.trajectory.joint_names = JOINTS
        for positions, velocity in (([0, 0.3, 0, -1.5, 0, 1.8, 0], 0.0),
                                    ([0.1, 0.4, 0, -1.4, 0, 1.8, 0], 0.5)):
            request.trajectory.points.append(JointTrajectoryPoint(
                positions=[float(x) for x in positions], velocities=[velocity] * 7,
                accelerations=[0.0] * 7))
        client = node.create_client(TrajectoryTorques, NODE + "/trajectory_torques")
        answer = call(node, client, request)
        print("trajectory_torques:", answer.success, answer.message or "")
        print("  tau at point 0 [N m]:", [round(x, 3) for x in answer.tau[:7]])
        print("  feasible:", answer.feasible)

        # a rollout of 1 s from rest at point 0 under its own torques, held: g(q0) (v = a =
        # 0), so the arm must stay where it is
        rollout = TrajectoryForward.Request(mode="rollout", integrator="rk4", dt=0.01)
        rollout.trajectory.joint_names = JOINTS
        start = request.trajectory.points[0]
        rollout.trajectory.points = [JointTrajectoryPoint(
            positions=start.positions, velocities=[0.0] * 7, effort=answer.tau[:7])]
        rollout.trajectory.points += [JointTrajectoryPoint(effort=answer.tau[:7])
                                      for _ in range(99)]
        client = node.create_client(TrajectoryForward, NODE + "/trajectory_forward")
        answer = call(node, client, rollout)
        print("trajectory_forward:", answer.success, answer.message or "")
        drift = max(abs(x - x0) for x, x0 in zip(answer.positions[-7:], start.positions))
        print(f"  rollout: {answer.points} steps of 0.01 s, max |q(1 s) - q(0)| = {drift:.1e} rad")

        retime = RetimeTrajectory.Request()
        retime.trajectory.joint_names = JOINTS
        retime.trajectory.points = [
            JointTrajectoryPoint(positions=[0.0, 0.3, 0.0, -1.5, 0.0, 1.8, 0.0]),
            JointTrajectoryPoint(positions=[0.8, -0.2, 0.4, -1.0, 0.5, 1.5, 0.6])]
        client = node.create_client(RetimeTrajectory, NODE + "/retime_trajectory")
        answer = call(node, client, retime)
        print("retime_trajectory:", answer.success, answer.message or "")
        print(f"  duration {answer.duration:.3f} s, "
              f"{len(answer.trajectory.points)} points")
    finally:
        node.destroy_node()
        rclpy.shutdown()
        if node_process is not None:
            os.killpg(node_process.pid, signal.SIGINT)
            node_process.wait(timeout=30)


if __name__ == "__main__":
    main()
