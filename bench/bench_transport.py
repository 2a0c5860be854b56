#!/usr/bin/env python3
"""
Where a large ``~/trajectory_torques`` round trip goes: DDS transport against rclpy's own work.

No dynamics here: a plain rclpy server (a process of its own) with the
``rbd_ros_interfaces/TrajectoryTorques`` type answers every request with a prebuilt response
of the size the node's answer has (tau and base_tau of the robot), or an empty one; a
client in another process sends the request ``bench_services.py`` sends (--points points of
the robot, each point positions, velocities and accelerations as rclpy messages), once per
Fast DDS configuration:

  default     what a user gets (SHM with its 512 kB segment, UDPv4)
  large/srv   FASTDDS_BUILTIN_TRANSPORTS=LARGE_DATA on the server only
  large       LARGE_DATA on both sides (SHM, TCPv4 for data, UDPv4 multicast discovery)
  shm_xml     config/fastdds_large_messages.xml on both sides (its profile: SHM with an
              8 MB segment and 4 MB messages, UDPv4); shm_xml/srv: on the server only
  node, node+large, node+shm_xml: the dynamics node (its planner process) serves instead,
              computing the answer, under each of those configurations; node+shm_xml/srv
              and node+shm_xml/cli: the profile on the node's side only, the client's only

Each row: median and min of --repeat round trips after --warmup, both processes pinned to
nothing (the machine's cores shared). Also, in the client's process: rclpy's serialization
of the request and the response, its deserialization of both (what the server and the
client pay), and their sizes.

    python bench/bench_transport.py [--robot talos] [--points 1000] [--repeat 30]
                                    [--configs default large ...]
"""
import argparse
import array
import os
import signal
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "test"))
from node_graph import stop_children_on_sigterm  # noqa: E402

PROFILE = os.path.join(ROOT, "config", "fastdds_large_messages.xml")
SERVICE = "/rbd_transport_bench/trajectory_torques"

_LARGE = {"FASTDDS_BUILTIN_TRANSPORTS": "LARGE_DATA"}
_XML = {"FASTRTPS_DEFAULT_PROFILES_FILE": PROFILE}
# name: (server environment, client environment); node*: the dynamics node serves
CONFIGS = {"default": ({}, {}), "large/srv": (_LARGE, {}), "large": (_LARGE, _LARGE),
           "shm_xml/srv": (_XML, {}), "shm_xml": (_XML, _XML),
           "node": ({}, {}), "node+large": (_LARGE, _LARGE), "node+shm_xml": (_XML, _XML),
           "node+shm_xml/srv": (_XML, {}), "node+shm_xml/cli": ({}, _XML)}


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--robot", default="talos")
    ap.add_argument("--points", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=30)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--configs", nargs="+", default=list(CONFIGS), choices=list(CONFIGS))
    ap.add_argument("--empty-response", action="store_true",
                    help="the server answers success only (no arrays)")
    ap.add_argument("--busy-ms", type=float, default=0.0,
                    help="the plain server works this long per request (as if it computed)")
    ap.add_argument("--service", default=SERVICE, help="the client's service (role client)")
    ap.add_argument("--role", choices=("main", "server", "client"), default="main")
    return ap.parse_args(argv)


def shapes(robot, points):
    """Return (joints, floating) of ``robot`` (test/oracle.py's ROBOTS)."""
    from oracle import ROBOTS, load_quietly
    path, floating = ROBOTS[robot]
    model = load_quietly(path, floating, mimic="independent")
    return model, len(model.joint_names), floating


def serve(args):
    import rclpy
    from rclpy.executors import ExternalShutdownException
    from rbd_ros_interfaces import srv
    _, joints, floating = shapes(args.robot, args.points)
    tau = array.array("d", bytes(8 * args.points * joints))
    base_tau = array.array("d", bytes(8 * args.points * (6 if floating else 0)))

    def answer(req, resp):
        end = time.perf_counter() + args.busy_ms * 1e-3
        while time.perf_counter() < end:     # as if it computed
            pass
        resp.success = True
        if not args.empty_response:
            resp.points = len(req.trajectory.points)
            resp.tau, resp.base_tau = tau, base_tau
        return resp
    rclpy.init()
    node = rclpy.create_node("rbd_transport_bench_server")
    node.create_service(srv.TrajectoryTorques, SERVICE, answer)
    try:
        rclpy.spin(node)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass


def client(args):
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.serialization import deserialize_message, serialize_message
    from rbd_ros_interfaces import srv
    from bench_services import requests
    model, joints, floating = shapes(args.robot, args.points)
    request = requests(model, args.points)[0]
    rclpy.init()
    node = rclpy.create_node("rbd_transport_bench_client")
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    cli = node.create_client(srv.TrajectoryTorques, args.service)
    if not cli.wait_for_service(timeout_sec=60.0):
        raise SystemExit("no server")
    times, response = [], None
    deadline = time.monotonic() + 300.0       # a node loads its model, warms its kernels
    k = 0
    while k < args.warmup + args.repeat:
        t0 = time.perf_counter()
        future = cli.call_async(request)
        while not future.done():
            executor.spin_once(timeout_sec=0.1)
        response = future.result()
        if not response.success and k == 0 and time.monotonic() < deadline:
            time.sleep(0.2)
            continue
        if k >= args.warmup:
            times.append(time.perf_counter() - t0)
        k += 1
    assert response.success, response.message
    costs = {}
    for what, msg, cls in (("request", request, srv.TrajectoryTorques.Request),
                           ("response", response, srv.TrajectoryTorques.Response)):
        raw = serialize_message(msg)
        ser = _best(lambda: serialize_message(msg))
        de = _best(lambda: deserialize_message(raw, cls))
        costs[what] = (len(raw), ser, de)
    print(repr({"median": statistics.median(times) * 1e3, "min": min(times) * 1e3,
                "p90": sorted(times)[int(0.9 * (len(times) - 1))] * 1e3,
                "costs": costs}))


def _params_file(robot):
    """Return a parameters file giving the node ``robot``'s URDF (a temporary file)."""
    import tempfile

    import yaml
    from oracle import ROBOTS
    path, floating = ROBOTS[robot]
    with open(path, encoding="utf-8") as f:
        params = {"robot_description": f.read(), "floating_base": floating,
                  "mimic_joints": "independent"}
    out = tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False)
    with out:
        yaml.safe_dump({"/**": {"ros__parameters": params}}, out)
    return out.name


def _best(call, repeat=7):
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        call()
        times.append(time.perf_counter() - t0)
    return min(times) * 1e3


def main():
    args = parse_args()
    stop_children_on_sigterm()                  # the client's finally stops its server
    if args.role == "server":
        return serve(args)
    if args.role == "client":
        return client(args)
    import ast
    base = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [ROOT, HERE] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
    base.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    for key in ("FASTDDS_BUILTIN_TRANSPORTS", "FASTRTPS_DEFAULT_PROFILES_FILE",
                "FASTDDS_DEFAULT_PROFILES_FILE"):
        base.pop(key, None)
    common = ["--robot", args.robot, "--points", str(args.points), "--repeat",
              str(args.repeat), "--warmup", str(args.warmup)] + \
        (["--empty-response"] if args.empty_response else []) + ["--busy-ms", str(args.busy_ms)]
    print(f"{args.robot}, {args.points} points, "
          f"{'empty' if args.empty_response else 'full-size'} response; load "
          f"{open('/proc/loadavg').read().split()[:3]}\n")
    print("| config | round trip median [ms] | min [ms] | p90 [ms] |")
    print("| --- | --- | --- | --- |")
    costs = None
    for name in args.configs:
        server_env, client_env = CONFIGS[name]
        command = ([sys.executable, "-m", "rbd_ros.node.dynamics_node", "--ros-args", "-r",
                    "__node:=rbd_transport_bench", "-p", "diagnostics_period:=0.0",
                    "--params-file", _params_file(args.robot)] if name.startswith("node")
                   else [sys.executable, __file__, "--role", "server"] + common)
        server = subprocess.Popen(command,
                                  env=dict(base, **server_env), stdin=subprocess.DEVNULL,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            out = subprocess.run([sys.executable, __file__, "--role", "client"] + common,
                                 env=dict(base, **client_env), capture_output=True,
                                 text=True, timeout=300)
        finally:
            server.send_signal(signal.SIGINT)
            try:
                server.wait(timeout=10)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()
        if out.returncode:
            print(f"| {name} | failed: {out.stderr.strip()[-300:]} | |")
            continue
        result = ast.literal_eval(out.stdout.strip().splitlines()[-1])
        costs = result["costs"]
        print(f"| {name} | {result['median']:.1f} | {result['min']:.1f} | "
              f"{result['p90']:.1f} |", flush=True)
    if costs:
        print("\nrclpy in one process (best of 7):\n")
        print("| message | bytes | serialize [ms] | deserialize [ms] |")
        print("| --- | --- | --- | --- |")
        for what, (size, ser, de) in costs.items():
            print(f"| {what} | {size} | {ser:.2f} | {de:.2f} |")


if __name__ == "__main__":
    main()
