"""
Gravity torques for your robot: ``ros2 launch`` the node on a URDF, ask it, stop it.

    ROS_DOMAIN_ID=42 python examples/gravity_launch.py [ROBOT.urdf] [--q 0.3]

It runs ``ros2 launch rbd_ros dynamics.launch.py urdf_file:=ROBOT.urdf`` (the bundled 7-dof
arm by default), calls the node's ``~/inverse_dynamics`` with zero velocity and acceleration
at every joint's angle ``--q`` (rad; m for a prismatic joint): the answer is the gravity
torques. Then it stops the launch as Ctrl-C does (SIGINT to its process group) and prints the
exit status. The ``ros2`` next to this Python is used (or the one on PATH).
"""
import argparse
import os
import shutil
import signal
import subprocess
import sys

import rbd_ros
import rclpy
from rbd_ros_interfaces.srv import InverseDynamics


def launch(urdf):
    """Start ``ros2 launch rbd_ros dynamics.launch.py urdf_file:=URDF`` in its own group."""
    ros2 = os.path.join(os.path.dirname(sys.executable), "ros2")
    ros2 = ros2 if os.access(ros2, os.X_OK) else shutil.which("ros2")
    env = dict(os.environ)
    # a venv set up by ./dev.sh setup is an ament prefix holding rbd_ros
    env["AMENT_PREFIX_PATH"] = os.pathsep.join(
        p for p in (env.get("AMENT_PREFIX_PATH", ""), sys.prefix) if p)
    return subprocess.Popen([ros2, "launch", "rbd_ros", "dynamics.launch.py",
                             f"urdf_file:={urdf}"], env=env, start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def gravity_torques(joint_names, q, timeout=60.0):
    """Ask /rbd_dynamics/inverse_dynamics for τ(q, 0, 0), the gravity torques."""
    node = rclpy.create_node("gravity_example")
    try:
        client = node.create_client(InverseDynamics, "/rbd_dynamics/inverse_dynamics")
        if not client.wait_for_service(timeout_sec=timeout):
            raise RuntimeError("/rbd_dynamics/inverse_dynamics did not come up")
        zeros = [0.0] * len(q)
        request = InverseDynamics.Request(joint_names=joint_names, q=q, v=zeros, a=zeros)
        while True:                      # the node answers "no robot model yet" while loading
            future = client.call_async(request)
            rclpy.spin_until_future_complete(node, future, timeout_sec=timeout)
            answer = future.result()
            if answer is None:
                raise RuntimeError("no answer from /rbd_dynamics/inverse_dynamics")
            if answer.success or answer.message != "no robot model yet":
                return answer
    finally:
        node.destroy_node()


def main():
    """Launch, ask, print, stop."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument("urdf", nargs="?", default=rbd_ros.robots.path("rbd_arm7"))
    parser.add_argument("--q", type=float, default=0.3, help="every joint's angle (rad)")
    args = parser.parse_args()
    joint_names = list(rbd_ros.load_model(args.urdf).joint_names)
    q = [args.q] * len(joint_names)
    process = launch(os.path.abspath(args.urdf))
    rclpy.init()
    try:
        answer = gravity_torques(joint_names, q)
        if not answer.success:
            sys.exit(f"refused: {answer.message}")
        print(f"gravity torques at q = {args.q} rad [N m]:")
        for name, tau in zip(joint_names, answer.tau):
            print(f"  {name}: {tau:.4f}")
    finally:
        rclpy.shutdown()
        os.killpg(process.pid, signal.SIGINT)          # Ctrl-C to ros2 launch and the node
        try:
            status = process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            status = process.wait()
        print(f"ros2 launch stopped, exit status {status}")


if __name__ == "__main__":
    main()
