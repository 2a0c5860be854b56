#!/usr/bin/env python3
"""
The planner services' round trips: a whole trajectory in one call against one call per state.

Starts ``dynamics_node`` (this checkout, ``python -m rbd_ros.node.dynamics_node``) as a
subprocess per robot, then from this process, through rclpy clients (a DDS round trip each):

  * ``~/trajectory_torques`` on a --points (1,000) point trajectory, without and with
    derivatives, against --points ``~/inverse_dynamics`` calls one after the other;
  * ``~/trajectory_forward`` on the same points (q̈ at every point);
  * a rollout of --points steps with step derivatives (semi-implicit Euler and RK4).

Each trajectory call is timed --repeat (7) times: the median is printed. Goals (issue 16): the
trajectory call >= 20x faster than the single calls, the 7-dof 1,000-point
``trajectory_torques`` round trip <= 10 ms. A benchmark, not a test: run it on a quiet
machine.

A fixed-base robot also gets ``~/retime_trajectory`` (issue 25): --waypoints (20) waypoints,
--grid (500) grid points, answered at the grid points; goal <= 30 ms on the 7-dof arm. Below
the table: the same request's handler in this process with its breakdown (dynamics: the
torque coefficients; toppra; samples: the answer's points and their check; messages: the
request read and the answer's message built), on as many numba threads as the planner process
uses, and ``rbd_ros.retime`` on the same waypoints (the Python API). ``--only-retime``: that
row alone.

Each robot's ``trajectory_torques`` is also timed from a client process of its own with
Fast DDS's participant profile ``config/fastdds_large_messages.xml``
(``FASTRTPS_DEFAULT_PROFILES_FILE``, what the README recommends to planner clients sending
large requests; the node as users start it, without it): a row of its own, ``--no-profile``
leaves it out. The other rows are the default configuration.

``--planner``: where the node serves the trajectory services, its ``planner_process``
parameter: ``process`` (the default: its child process, the client's requests go there
directly), ``thread`` (a worker thread of the node's process), or ``both``, one node after
the other per robot. ``--no-singles`` leaves out the --points single calls (minutes on a
loaded machine).

    python bench/bench_services.py [--points 1000] [--repeat 7] [--robots arm7 talos]
                                   [--planner process|thread|both] [--no-singles]
                                   [--no-profile] [--only-retime] [--waypoints 20]
                                   [--grid 500]
"""
import argparse
import os
import subprocess
import sys
import time
from types import SimpleNamespace

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, os.pardir, "test"))

from oracle import ROBOTS, load_quietly  # noqa: E402  (also puts the checkout on sys.path)
from node_graph import stop_children_on_sigterm  # noqa: E402


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--points", type=int, default=1000, help="points per trajectory (1000)")
    ap.add_argument("--repeat", type=int, default=7, help="timed calls per row (7)")
    ap.add_argument("--robots", nargs="+", default=["arm7", "talos"],
                    help="robots of test/oracle.py (arm7 talos)")
    ap.add_argument("--planner", choices=("process", "thread", "both"), default="process",
                    help="the node's planner_process parameter: true, false or each (process)")
    ap.add_argument("--no-singles", action="store_true",
                    help="leave out the --points single inverse_dynamics calls")
    ap.add_argument("--no-profile", action="store_true",
                    help="leave out the row of a client with config/fastdds_large_messages.xml")
    ap.add_argument("--only-retime", action="store_true",
                    help="only the ~/retime_trajectory row and its breakdown")
    ap.add_argument("--waypoints", type=int, default=20, help="retime: waypoints (20)")
    ap.add_argument("--grid", type=int, default=500, help="retime: grid points (500)")
    ap.add_argument("--startup-timeout", type=float, default=900.0,
                    help="seconds to wait for the node's services (first start compiles)")
    return ap.parse_args()


def start_node(name, floating, planner="process"):
    cmd = [sys.executable, "-m", "rbd_ros.node.dynamics_node", "--ros-args", "-r",
           f"__node:=rbd_bench_{name}", "-p", f"floating_base:={str(floating).lower()}",
           "-p", "mimic_joints:=independent", "-p", "robot_description_topic:="
           f"/rbd_bench_{name}/robot_description",
           "-p", f"planner_process:={str(planner == 'process').lower()}"]
    return subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            stdin=subprocess.DEVNULL, start_new_session=True)


class Client:
    """An rclpy node calling the services of the node ``/rbd_bench_<name>``."""

    def __init__(self, node, executor, name):
        from rbd_ros_interfaces import srv
        self.node, self.executor = node, executor
        base = f"/rbd_bench_{name}/"
        self.clients = {k: node.create_client(t, base + k) for k, t in (
            ("trajectory_torques", srv.TrajectoryTorques),
            ("trajectory_forward", srv.TrajectoryForward),
            ("inverse_dynamics", srv.InverseDynamics),
            ("retime_trajectory", srv.RetimeTrajectory))}

    def wait(self, timeout):
        deadline = time.monotonic() + timeout
        for client in self.clients.values():
            while not client.wait_for_service(timeout_sec=1.0):
                if time.monotonic() > deadline:
                    raise SystemExit("the node's services did not come up")

    def wait_for(self, future, timeout):
        """
        Spin until ``future`` is done, one spin_once at a time.

        Not ``spin_until_future_complete``: with this rclpy (7.1) its cost grows with every
        call a client has made (measured: a service round trip of 1.2 ms on the first 100
        calls, 16 ms after 800), which made 1,000 single calls look 5x slower than they are;
        this loop stays at 0.1-0.2 ms for a parameter service of the node.
        """
        deadline = time.monotonic() + timeout
        while not future.done() and time.monotonic() < deadline:
            self.executor.spin_once(timeout_sec=0.1)

    def call(self, service, request, until_model=0.0):
        """Call ``service``; again for ``until_model`` s while the node has no model yet."""
        deadline = time.monotonic() + until_model
        while True:
            future = self.clients[service].call_async(request)
            self.wait_for(future, 120.0)
            resp = future.result()
            if resp is None or resp.success or resp.message != "no robot model yet" or \
                    time.monotonic() > deadline:
                break
            time.sleep(0.1)        # the description is on its way: loading in the node
        if resp is None or not resp.success:
            raise SystemExit(f"{service} failed: {getattr(resp, 'message', 'no answer')}")
        return resp


def requests(model, n, seed=0):
    """Return the requests: (trajectory_torques, forward points, rollout, singles)."""
    from rbd_ros_interfaces import srv
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint
    rng = np.random.default_rng(seed)
    nb, nqb = model.nv_base, model.nq_base
    q = np.array([model.random_configuration(rng) for _ in range(n)])
    v, a = rng.normal(scale=0.3, size=(2, n, model.nv))
    names = list(model.joint_names)

    def trajectory(*fields):
        # each request carries what its service reads, as a planner would send it
        traj = JointTrajectory(joint_names=names)
        for k in range(n):
            values = dict(positions=q[k, nqb:], velocities=v[k, nb:], accelerations=a[k, nb:],
                          effort=0.1 * a[k, nb:])
            traj.points.append(JointTrajectoryPoint(
                **{f: values[f].tolist() for f in (fields if k or "rollout" not in fields
                                                   else ("positions", "velocities", "effort"))
                   if f != "rollout"}))
        return traj
    base = dict(base_q=q[:, :nqb].ravel().tolist(), base_v=v[:, :nb].ravel().tolist())
    torques = srv.TrajectoryTorques.Request(
        trajectory=trajectory("positions", "velocities", "accelerations"),
        base_a=a[:, :nb].ravel().tolist(), **base)
    forward = srv.TrajectoryForward.Request(
        trajectory=trajectory("positions", "velocities", "effort"), mode="points", **base)
    # a rollout: point 0's state, then only the efforts (zero-order hold)
    rollout = srv.TrajectoryForward.Request(trajectory=trajectory("rollout", "effort"),
                                            mode="rollout", dt=1e-3, derivatives=True,
                                            base_q=base["base_q"][:7],
                                            base_v=base["base_v"][:6])
    singles = [srv.InverseDynamics.Request(
        joint_names=names, q=q[k, nqb:].tolist(), v=v[k, nb:].tolist(),
        a=a[k, nb:].tolist(), base_q=q[k, :nqb].tolist(), base_v=v[k, :nb].tolist(),
        base_a=a[k, :nb].tolist()) for k in range(n)]
    return torques, forward, rollout, singles


def timed(client, service, request, repeat):
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        client.call(service, request)
        times.append(time.perf_counter() - t0)
    return float(np.median(times)) * 1e3


PROFILED = "trajectory_torques, client with fastdds_large_messages.xml"


def profiled_client(name, args):
    """
    Time ``~/trajectory_torques`` from a client process with the large-messages profile.

    A process of its own: Fast DDS reads its profiles file once per process. The request is
    this bench's (bench_transport.py's client makes it with ``requests``).
    """
    import ast
    root = os.path.dirname(HERE)
    env = dict(os.environ, FASTRTPS_DEFAULT_PROFILES_FILE=os.path.join(
        root, "config", "fastdds_large_messages.xml"))
    env.pop("FASTDDS_BUILTIN_TRANSPORTS", None)
    out = subprocess.run([sys.executable, os.path.join(HERE, "bench_transport.py"), "--role",
                          "client", "--robot", name, "--points", str(args.points), "--repeat",
                          str(args.repeat), "--warmup", "2", "--service",
                          f"/rbd_bench_{name}/trajectory_torques"],
                         env=env, capture_output=True, text=True, timeout=600)
    if out.returncode:
        raise SystemExit(f"the profiled client failed: {out.stderr.strip()[-500:]}")
    return ast.literal_eval(out.stdout.strip().splitlines()[-1])["median"]


def bench_robot(name, args, rclpy_node, executor, planner):
    path, floating = ROBOTS[name]
    if path is None:
        print(f"{name}: example-robot-data is not installed: skipped")
        return []
    from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
    from std_msgs.msg import String
    model = load_quietly(path, floating, mimic="independent")
    node = start_node(name, floating, planner)
    label = name if args.planner != "both" else f"{name} ({planner})"
    try:
        qos = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                         durability=DurabilityPolicy.TRANSIENT_LOCAL)
        with open(path, encoding="utf-8") as f:
            rclpy_node.create_publisher(String, f"/rbd_bench_{name}/robot_description",
                                        qos).publish(String(data=f.read()))
        client = Client(rclpy_node, executor, name)
        client.wait(args.startup_timeout)
        torques, forward, rollout, singles = requests(model, args.points)
        # the first call warms up (and waits for the model: the services come up before it)
        client.call("trajectory_torques", torques, until_model=args.startup_timeout)
        rows = []
        if not floating:
            rows += bench_retime(label, model, client, args)
        if args.only_retime:
            return rows
        rows.append((label, "trajectory_torques", timed(client, "trajectory_torques", torques,
                                                        args.repeat)))
        if not args.no_profile:
            rows.append((label, PROFILED, profiled_client(name, args)))
        if not args.no_singles:
            t0 = time.perf_counter()
            for req in singles:
                client.call("inverse_dynamics", req)
            rows.append((label, f"{args.points} x inverse_dynamics",
                         (time.perf_counter() - t0) * 1e3))
        torques.derivatives = True
        rows.append((label, "trajectory_torques, derivatives",
                     timed(client, "trajectory_torques", torques, args.repeat)))
        rows.append((label, "trajectory_forward (points)",
                     timed(client, "trajectory_forward", forward, args.repeat)))
        for method in ("semi_implicit_euler", "rk4"):
            rollout.integrator = method
            rows.append((label, f"rollout {method}, derivatives",
                         timed(client, "trajectory_forward", rollout, args.repeat)))
        return rows
    finally:
        node.terminate()
        node.wait(timeout=30)


def bench_retime(label, model, client, args):
    """Time ``~/retime_trajectory``; print its in-process breakdown and the Python API's."""
    import numba

    import rbd_ros
    from rbd_ros.node.retime_service import retime_trajectory
    from rbd_ros_interfaces import srv
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint
    rng = np.random.default_rng(25)
    mid = 0.5 * (model.lower + model.upper)
    w = rng.uniform(mid + 0.3 * (model.lower - mid), mid + 0.3 * (model.upper - mid),
                    (args.waypoints, model.nq))
    traj = JointTrajectory(joint_names=list(model.joint_names), points=[
        JointTrajectoryPoint(positions=row.tolist()) for row in w])
    req = srv.RetimeTrajectory.Request(trajectory=traj, effort_scale=0.5,
                                       grid_points=args.grid)
    client.call("retime_trajectory", req)
    what = f"retime_trajectory, {args.waypoints} waypoints, {args.grid} grid points"
    rows = [(label, what, timed(client, "retime_trajectory", req, args.repeat))]
    robot = SimpleNamespace(model=model, joints=None, joint_names=list(model.joint_names),
                            dof_names=list(model.joint_names), followers={})
    threads = numba.get_num_threads()
    used = max(1, min(threads, (os.cpu_count() or 1) - 1))      # the planner process's
    numba.set_num_threads(used)
    parts, api = [], []
    try:
        for _ in range(args.repeat + 1):
            timings = {}
            retime_trajectory(robot, req, srv.RetimeTrajectory.Response(), timings)
            parts.append(timings)
            t0 = time.perf_counter()
            rbd_ros.retime(model, w, effort_scale=0.5, grid=args.grid)
            api.append(time.perf_counter() - t0)
    finally:
        numba.set_num_threads(threads)
    median = {k: 1e3 * float(np.median([p[k] for p in parts[1:]])) for k in parts[0]}
    print(f"{label} {what}: handler in this process on {used} numba "
          "threads: " + ", ".join(f"{k} {v:.1f} ms" for k, v in median.items())
          + f"; total {sum(median.values()):.1f} ms; Python API rbd_ros.retime "
          f"{1e3 * float(np.median(api[1:])):.1f} ms")
    return rows


def main():
    args = parse_args()
    stop_children_on_sigterm()                  # its finally stops the node it started
    os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    rclpy.init()
    node = rclpy.create_node("rbd_bench_services")
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    rows = []
    planners = ("process", "thread") if args.planner == "both" else (args.planner,)
    for name in args.robots:
        for planner in planners:
            rows += bench_robot(name, args, node, executor, planner)
    print(f"\n{args.points} points / steps, median of {args.repeat} round trips "
          "(the single calls: their total)\n")
    print("| robot | call | round trip [ms] | vs single calls |")
    print("| --- | --- | --- | --- |")
    singles = {r[0]: r[2] for r in rows if "x inverse_dynamics" in r[1]}
    for robot, call, ms in rows:
        ratio = (f"{singles[robot] / ms:.0f}x faster"
                 if call in ("trajectory_torques", PROFILED) and robot in singles else "")
        print(f"| {robot} | {call} | {ms:.1f} | {ratio} |")
    node.destroy_node()
    rclpy.shutdown()


if __name__ == "__main__":
    main()
