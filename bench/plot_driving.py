#!/usr/bin/env python3
"""
Plot the hold test (doc/driving.md): the arm held by the node's gravity commands, or falling.

The bundled 7-dof arm in ``rbd_sim`` (MuJoCo), released at the first configuration of
``test/node/test_sim_loop.py``, with the dynamics node in the loop through DDS (lockstep, 100
loop steps and 1,000 physics steps per simulated second, 10 s): |q - q0| of each joint over
time, with commands enabled (gravity mode) and disabled. In one process, on a DDS domain of
its own choosing (ROS_DOMAIN_ID). Written through a temporary file renamed into place.

    python bench/plot_driving.py [-o doc/img/driving_hold.png]
"""
import argparse
import os
import sys
import tempfile
import threading
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, os.pardir))

import rbd_ros  # noqa: E402

Q0 = [0.0, 0.5, 0.0, -1.5, 0.0, 1.6, 0.0]


def run(enabled):
    """Return (t, |q - q0|) of one 10 s run with commands ``enabled`` or not."""
    import rclpy
    from rclpy.context import Context
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.node import Node
    from rclpy.parameter import Parameter
    from std_srvs.srv import SetBool

    from rbd_ros.node.dynamics_node import DynamicsNode
    from rbd_ros.tools import sim
    path = rbd_ros.robots.path("rbd_arm7")
    text = open(path, encoding="utf-8").read()
    names = list(rbd_ros.load_model(text).joint_names)
    ctx = Context()
    rclpy.init(context=ctx)
    node = DynamicsNode(context=ctx, parameter_overrides=[
        Parameter("robot_description", value=text), Parameter("command_joints", value=names),
        Parameter("command_timeout", value=30.0), Parameter("planner_process", value=False)])
    args = sim.parse_args(["--rate", "100", "--substeps", "10", "--duration", "10",
                           "--initial-positions=" + ",".join(map(str, Q0)),
                           "--command-topic", "/rbd_dynamics/effort_command"]
                          + (["--clock", "lockstep", "--brake"] if enabled else
                             ["--clock", "free"]))
    simulation = sim.Simulation(args, text, os.path.dirname(path), print, trace=True)
    sim_node = Node("rbd_sim", context=ctx)
    send_state, send_reference = sim.create_ros_side(sim_node, simulation, args, text)
    executor = SingleThreadedExecutor(context=ctx)
    for n in (node, sim_node):
        executor.add_node(n)
    stop = threading.Event()

    def spin():                   # out of the wait before the executor shuts down
        while not stop.is_set():
            executor.spin_once(timeout_sec=0.05)
    spinner = threading.Thread(target=spin, daemon=True)
    spinner.start()
    try:
        state_pub = next(p for p in sim_node.publishers if p.topic_name.endswith("joint_states"))
        while not (state_pub.get_subscription_count()
                   and all(s.get_publisher_count() for s in sim_node.subscriptions)):
            time.sleep(0.01)
        if enabled:
            client = sim_node.create_client(SetBool, "/rbd_dynamics/enable_command")
            client.wait_for_service(timeout_sec=30.0)
            future = client.call_async(SetBool.Request(data=True))
            while not future.done():
                time.sleep(0.01)
            print(future.result().message)
        simulation.run(send_state, send_reference)
    finally:
        stop.set()
        spinner.join(timeout=5.0)
        executor.shutdown(timeout_sec=5.0)
        node.destroy_node()
        sim_node.destroy_node()
        rclpy.shutdown(context=ctx)
    t = np.array([x for x, _ in simulation.trace])
    q = np.array([x for _, x in simulation.trace])
    return t, np.abs(q - np.asarray(Q0)), names


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-o", "--output", default=os.path.join(HERE, os.pardir, "doc", "img",
                                                           "driving_hold.png"))
    args = ap.parse_args()
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.6), sharey=True)
    for ax, enabled in zip(axes, (True, False)):
        t, dev, names = run(enabled)
        for j, name in enumerate(names):
            ax.semilogy(t, np.maximum(dev[:, j], 1e-12), lw=1.0, label=name)
        ax.axhline(0.01 if enabled else 0.3, color="k", ls="--", lw=0.8)
        ax.set_title("gravity commands enabled" if enabled else "commands disabled")
        ax.set_xlabel("simulated time [s]")
        ax.grid(True, which="both", alpha=0.3)
        print(f"enabled={enabled}: max |q - q0| {dev.max():.3g} rad")
    axes[0].set_ylabel("|q − q0| [rad]")
    axes[1].legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    fd, tmp = tempfile.mkstemp(suffix=".png", dir=os.path.dirname(os.path.abspath(args.output)))
    os.close(fd)
    fig.savefig(tmp, dpi=110)
    os.replace(tmp, args.output)
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
