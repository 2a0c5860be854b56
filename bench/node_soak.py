"""
The soak of ``bench_node.py --soak SECONDS``: one node at the rate for a long run, in windows.

What an hour at 1 kHz can show and a 30 s run cannot: memory that grows (a leak in a
callback, a list that is never trimmed) and latency that drifts (a queue or a timer list
that slows every tick a little more). The run is cut into windows of ``--window`` seconds
(60) of the system clock, aligned on its multiples, and each window gives one row:

  * the node's resident memory at the window's end (VmRSS of /proc/<pid>/status) and its CPU
    use over the window;
  * joint_states published, outputs received, and the outputs missing (published × outputs −
    received, so a message in flight across a window edge shifts one count by one);
  * the latency of every output received in the window: receipt time minus the joint_states
    header stamp, both on the system clock (the bench stamps each message with it just
    before publishing it), p50, p99 and max;
  * the load average and the CPU steal over the window (a shared machine's weather).

The receiver keeps no log: a window's latencies are summarized when it ends and written as one
JSON line, so an hour holds as little memory as a minute. The summary at the end fits a
straight line to resident memory and to the windows' p99 over time (least squares): MB per
hour and ms per hour, and compares the first and last ten minutes' median p99.
"""
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

import numpy as np

import node_graph
import node_receiver
import node_run
import proc_cpu
from node_trees import NODE_NAME

HERE = os.path.dirname(os.path.abspath(__file__))


def rss_mb(pid):
    """Return the resident memory of a process in MB (VmRSS of /proc/<pid>/status)."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    return float("nan")


def receiver(out_path, outputs, window_s, rate):
    """Take every output (serialized), and write one JSON line of latencies per window."""
    import rclpy
    from rclpy.impl.implementation_singleton import rclpy_implementation as _rclpy
    from rclpy.qos import HistoryPolicy, QoSProfile, ReliabilityPolicy
    from rbd_ros.node.conversions import message_class
    from rbd_ros.outputs import BY_NAME

    stop = []
    signal.signal(signal.SIGINT, lambda *a: stop.append(1))
    rclpy.init(signal_handler_options=rclpy.signals.SignalHandlerOptions.NO)
    node = rclpy.create_node("rbd_bench_soak_receiver")
    qos = QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE,
                     history=HistoryPolicy.KEEP_LAST)
    subs = []
    for k in outputs:
        msg_type = message_class(BY_NAME[k].msgtype)
        subs.append((msg_type, node.create_subscription(
            msg_type, f"/{NODE_NAME}/{k}", lambda m: None, qos, raw=True).handle))
    window_ns = int(window_s * 1e9)
    latency = np.zeros(int(rate * window_s * len(outputs) * 2) + 1000, np.int64)
    n, window = 0, time.time_ns() // window_ns
    wait_set = _rclpy.WaitSet(len(subs), 0, 0, 0, 0, 0, node.context.handle)
    print("ready", flush=True)
    with open(out_path, "a", encoding="utf-8") as out:
        while not stop:
            wait_set.clear_entities()
            for _, handle in subs:
                wait_set.add_subscription(handle)
            wait_set.wait(50_000_000)
            for msg_type, handle in subs:
                while True:
                    taken = handle.take_message(msg_type, True)
                    if taken is None:
                        break
                    now = time.time_ns()
                    if now // window_ns != window:
                        _write_window(out, window, latency[:n])
                        n, window = 0, now // window_ns
                    if n < len(latency):
                        latency[n] = now - node_receiver.stamp_ns_of(taken[0])
                        n += 1
        _write_window(out, window, latency[:n])
    node.destroy_node()
    rclpy.shutdown()


def _write_window(out, window, latency_ns):
    ms = latency_ns * 1e-6
    row = dict(window=int(window), received=int(len(ms)))
    if len(ms):
        row.update(p50=float(np.percentile(ms, 50)), p99=float(np.percentile(ms, 99)),
                   max=float(ms.max()))
    out.write(json.dumps(row) + "\n")
    out.flush()


def run_soak(args, tree, source, outputs):
    """Run the node of ``tree`` for ``args.soak`` s after its warm-up; return the rows."""
    source.record = False            # an hour of (stamp, time) pairs is not kept
    node_graph.wait_for_a_clear_graph(source.node, outputs,
                                      trusted_after=source.created + node_graph.DISCOVERY_S)
    lines = os.path.join(tempfile.mkdtemp(prefix="bench_soak_"), "windows.jsonl")
    recv = node = None
    try:
        recv = subprocess.Popen([sys.executable, os.path.join(HERE, "bench_node.py"),
                                 "--soak-receiver", lines, "--window", str(args.window),
                                 "--rate", str(args.rate)],
                                stdout=subprocess.PIPE, text=True, start_new_session=True)
        node, log = node_run.start_node(args, tree, outputs)
        if recv.stdout.readline().strip() != "ready":
            raise RuntimeError("the receiver process did not start")
        print(f"{tree.label}: node pid {node.pid} (log {log.name}); soak of {args.soak:g} s "
              f"in windows of {args.window:g} s", flush=True)
        bench_rows = _publish(args, source, node, log.name)
        time.sleep(1.0)                                  # stragglers
    finally:
        with node_graph.signals_held():           # as node_run.run_once's stopping
            for process, timeout in ((recv, 30), (node, 10)):
                if process is not None:
                    node_run.stop(process, timeout)
    with open(lines, encoding="utf-8") as f:
        received = {r["window"]: r for r in map(json.loads, f)}
    rows = []
    for b in bench_rows:
        r = received.get(b["window"], {"received": 0})
        rows.append(dict(b, received=r["received"], p50=r.get("p50"), p99=r.get("p99"),
                         max=r.get("max"),
                         missing=b["published"] * len(outputs) - r["received"]))
    return rows


def _publish(args, source, node, log_name):
    """Publish at the rate; after the first output and the warm-up, sample every window."""
    window_ns = int(args.window * 1e9)
    t_start = time.monotonic()
    first, window, rows, sample = None, None, [], None
    for k, _ in node_run.paced(args, source, node, log_name):
        if first is None:
            if source.outputs_seen():
                first = time.monotonic()
                print(f"  first outputs after {first - t_start:.1f} s", flush=True)
            continue
        if time.monotonic() - first < args.warmup:
            continue
        w = time.time_ns() // window_ns
        if w == window:
            continue
        state = dict(k=k, cpu=proc_cpu.cpu_seconds(node.pid), ticks=proc_cpu.cpu_ticks(),
                     wall=time.monotonic(), load=proc_cpu.loadavg())
        if sample is not None:            # the previous window is complete
            rows.append(_window_row(window, sample, state, node.pid))
            print(_format(rows[-1], len(rows)), flush=True)
            if len(rows) * args.window >= args.soak:
                return rows
        # the window the warm-up ends in is partial: the first row is the next one
        sample = None if window is None else state
        window = w


def _window_row(window, a, b, pid):
    steal = b["ticks"][0] - a["ticks"][0]
    total = b["ticks"][1] - a["ticks"][1]
    wall = b["wall"] - a["wall"]
    return dict(window=window, published=b["k"] - a["k"], rss=rss_mb(pid),
                cpu=100.0 * (b["cpu"] - a["cpu"]) / wall, load=a["load"],
                steal=100.0 * steal / total if total else 0.0)


HEADER = (f"{'window':>6} {'published':>9} {'RSS [MB]':>9} {'CPU [%]':>7} {'load':>5} "
          f"{'steal [%]':>9}")


def _format(row, k):
    return (f"{k:>6} {row['published']:>9} {row['rss']:>9.1f} {row['cpu']:>7.0f} "
            f"{row['load']:>5} {row['steal']:>9.1f}")


def print_soak(args, rows, outputs):
    """Print the windows' table and the drift of memory and latency."""
    fmt = lambda x: "-" if x is None else f"{x:.3f}"  # noqa: E731
    print(f"\n{args.robot}, every output ({len(outputs)} topics), {args.rate:g} Hz, soak of "
          f"{len(rows)} windows of {args.window:g} s; latency = receipt - header stamp "
          f"(system clock), all outputs of the window:")
    print(f"{'window':>6} {'published':>9} {'received':>9} {'missing':>8} {'p50 [ms]':>8} "
          f"{'p99 [ms]':>8} {'max [ms]':>8} {'RSS [MB]':>9} {'CPU [%]':>7} {'load':>5} "
          f"{'steal [%]':>9}")
    for k, r in enumerate(rows, 1):
        print(f"{k:>6} {r['published']:>9} {r['received']:>9} {r['missing']:>8} "
              f"{fmt(r['p50']):>8} {fmt(r['p99']):>8} {fmt(r['max']):>8} {r['rss']:>9.1f} "
              f"{r['cpu']:>7.0f} {r['load']:>5} {r['steal']:>9.1f}")
    if len(rows) < 3:
        return
    hours = np.arange(len(rows)) * args.window / 3600.0
    rss = np.array([r["rss"] for r in rows])
    p99 = np.array([np.nan if r["p99"] is None else r["p99"] for r in rows])
    ok = np.isfinite(p99)
    tenth = max(1, min(int(round(600 / args.window)), len(rows) // 3))
    print(f"resident memory: {rss[0]:.1f} MB in the first window, {rss[-1]:.1f} MB in the "
          f"last, max {rss.max():.1f} MB; fitted slope {np.polyfit(hours, rss, 1)[0]:+.2f} MB/h")
    if ok.sum() >= 3:
        print(f"latency p99: fitted slope {np.polyfit(hours[ok], p99[ok], 1)[0]:+.3f} ms/h; "
              f"median p99 of the first {tenth} windows {np.nanmedian(p99[:tenth]):.3f} ms, "
              f"of the last {tenth} {np.nanmedian(p99[-tenth:]):.3f} ms")
    print(f"outputs missing: {sum(r['missing'] for r in rows)} of "
          f"{sum(r['published'] for r in rows) * len(outputs)}")
