"""
The loop closed through real DDS: rbd_sim (MuJoCo) as the robot, the node's ~/effort_command.

The sim runs in lockstep (each step waits for the node's command to its joint_states), so the
loop is the same on a loaded machine, and faster than real time. Gravity mode holds the
bundled arm at three configurations for 10 s within 0.01 rad; without commands it falls by
more than 0.3 rad. Inverse dynamics as feed-forward to a PD loop in the simulation tracking a
sinusoid cuts the RMS error at least 5x. rbd_sim refuses wrong commands (counted) and its
command line runs.
"""
import itertools
import json
import os
import subprocess
import sys
import threading
import time

import numpy as np
import pytest
from rclpy.node import Node
from std_msgs.msg import Float64MultiArray
from std_srvs.srv import SetBool

import rbd_ros
from helpers import require_module
from node_helpers import RELIABLE, call_service, wait_for

ARM7 = rbd_ros.robots.path("rbd_arm7")
CONFIGURATIONS = ([0.0, 0.5, 0.0, -1.5, 0.0, 1.6, 0.0],
                  [0.8, -0.4, 0.6, -2.0, 0.7, 2.2, -0.5],
                  [-1.2, 1.0, -0.8, -0.8, -1.0, 1.0, 1.2])
SIM_TIMEOUT = 240.0          # s of wall time for one run (lockstep on a loaded machine)
_runs = itertools.count()


@pytest.fixture(scope="module", autouse=True)
def _mujoco():
    require_module("mujoco", "MuJoCo (pip: mujoco)")


def xml():
    with open(ARM7, encoding="utf-8") as f:
        return f.read()


class SimRun:
    """An rbd_sim Simulation on a harness's context: its node, its loop thread."""

    def __init__(self, h, argv):
        from rbd_ros.tools import sim
        self.args = sim.parse_args(argv + ["--command-topic",
                                           f"{h.namespace}/rbd_dynamics/effort_command"])
        self.sim = sim.Simulation(self.args, xml(), os.path.dirname(ARM7), lambda text: None)
        self.node = Node(f"rbd_sim_{next(_runs)}", namespace=h.namespace, context=h.context)
        send_state, send_reference = sim.create_ros_side(self.node, self.sim, self.args, xml())
        h.executor.add_node(self.node)
        self.h = h
        pubs = [p for p in self.node.publishers              # not /rosout, /parameter_events
                if not p.topic_name.startswith(("/rosout", "/parameter_events"))]
        wait_for(lambda: all(p.get_subscription_count() > 0 for p in pubs)
                 and all(s.get_publisher_count() > 0 for s in self.node.subscriptions),
                 what="discovery between rbd_sim and the node")
        self.thread = threading.Thread(target=self.sim.run, args=(send_state, send_reference),
                                       daemon=True)

    def run(self):
        if self.thread.ident is None:
            self.thread.start()
        wait_for(self.sim.done.is_set, SIM_TIMEOUT, "the simulated run")
        self.thread.join(5.0)
        # the node stays with the executor until the harness closes: removed or destroyed
        # while the spin thread waits on its entities, it ended that thread (rclpy 7.1)
        return self.sim.report()


def enable(h, on=True):
    resp = call_service(h.enable_client, SetBool.Request(data=on), "enable_command", 60.0)
    assert resp.success, resp.message


def taken_every_joint_state(h, quiet=0.5):
    """
    Wait until the node has taken the last run's joint_states (none new for ``quiet`` s).

    A free-running simulation sends faster than the node answers: its queue (50 deep) still
    holds states when the run ends, and their commands, once enabled, would reach the next
    lockstep run as answers to its states, one step late for good.
    """
    last = [h.node.stats()["joint_states"], time.monotonic()]

    def settled():
        count = h.node.stats()["joint_states"]
        if count != last[0]:
            last[:] = [count, time.monotonic()]
        return time.monotonic() - last[1] > quiet
    wait_for(settled, what="the node to take every joint_states message of the last run")


def arm_node(harness, **params):
    """Start the node on the arm; its ~/enable_command client made (and matched) at once."""
    names = list(rbd_ros.load_model(ARM7).joint_names)
    h = harness({"robot_description": xml(), "command_joints": names,
                 "command_timeout": 30.0, **params})
    h.enable_client = h.tester.create_client(SetBool,
                                             f"{h.namespace}/rbd_dynamics/enable_command")
    assert h.enable_client.wait_for_service(timeout_sec=30.0)
    return h


def hold_argv(q0, clock):
    return ["--rate", "100", "--substeps", "10", "--duration", "10", "--clock", clock,
            "--initial-positions=" + ",".join(map(str, q0))]


def test_gravity_holds_the_arm_at_three_configurations(harness):
    h = arm_node(harness)
    enable(h)
    for q0 in CONFIGURATIONS:
        report = SimRun(h, hold_argv(q0, "lockstep") + ["--brake"]).run()
        assert report["time"] == pytest.approx(10.0)
        assert report["commands"] >= 900 and report["refused"] == 0
        print(f"held at {q0}: max |q - q0| {max(report['max_deviation']):.3g} rad")
        assert max(report["max_deviation"]) < 0.01, (q0, report["max_deviation"])
        assert max(report["final_deviation"]) < 0.01


def test_without_commands_the_arm_falls(harness):
    h = arm_node(harness)                        # commands off (at start)
    for q0 in CONFIGURATIONS:
        report = SimRun(h, hold_argv(q0, "free")).run()
        assert report["time"] == pytest.approx(10.0) and report["commands"] == 0
        print(f"released at {q0}: max |q - q0| {max(report['max_deviation']):.3g} rad")
        assert max(report["max_deviation"]) > 0.3, (q0, report["max_deviation"])
    assert h.node.stats()["published"] > 0       # the node was in the loop, silent


def test_inverse_dynamics_feedforward_cuts_the_tracking_error(harness):
    h = arm_node(harness, command_mode="inverse_dynamics",
                 acceleration_topic="commanded_acceleration")
    argv = ["--rate", "200", "--substeps", "10", "--duration", "4",
            "--initial-positions=" + ",".join(map(str, CONFIGURATIONS[0])),
            "--pd-sine", "0.3,2.0", "--kp", "60", "--kd", "3"]
    pd_alone = SimRun(h, argv + ["--clock", "free"]).run()
    taken_every_joint_state(h)
    enable(h)
    with_ff = SimRun(h, argv + ["--clock", "lockstep", "--brake"]).run()
    assert with_ff["commands"] >= 700
    e_pd, e_ff = pd_alone["rms_tracking_error"], with_ff["rms_tracking_error"]
    print(f"RMS tracking error: PD alone {e_pd:.4g} rad, with feed-forward {e_ff:.4g} rad "
          f"({with_ff['commands']} commands over {with_ff['steps']} steps)")
    assert e_pd >= 5 * e_ff, (e_pd, e_ff)


def test_sim_refuses_wrong_commands_and_counts_them(harness):
    h = arm_node(harness)
    run = SimRun(h, ["--clock", "realtime", "--rate", "50"])
    pub = h.tester.create_publisher(Float64MultiArray, run.args.command_topic, RELIABLE)
    wait_for(lambda: pub.get_subscription_count() > 0, what="the sim's command subscription")
    run.thread.start()
    pub.publish(Float64MultiArray(data=[1.0, 2.0]))
    pub.publish(Float64MultiArray(data=[float("nan")] * 7))
    wait_for(lambda: run.sim.counts["refused"] >= 2, what="two refusals")
    pub.publish(Float64MultiArray(data=[1e9] * 7))
    wait_for(lambda: run.sim.counts["commands"] >= 1 and run.sim.counts["steps"] > 2,
             what="a command applied")
    limit = np.asarray(rbd_ros.load_model(ARM7).effort_limit)
    wait_for(lambda: np.array_equal(run.sim.robot.applied, limit), what="bounded torques")
    run.sim.stop.set()
    report = run.run()
    assert report["refused"] == 2


def test_rbd_sim_command_line(tmp_path):
    report = tmp_path / "report.json"
    proc = subprocess.run([sys.executable, "-c", "from rbd_ros.tools.sim import main; main()",
                           ARM7, "--clock", "free", "--rate", "100", "--duration", "0.5",
                           "--report", str(report)], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    data = json.loads(report.read_text())
    assert data["steps"] == 50 and max(data["max_deviation"]) > 0.0
    bad = subprocess.run([sys.executable, "-c", "from rbd_ros.tools.sim import main; main()",
                          ARM7, "--rate", "-1"], capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and "--rate" in bad.stderr
