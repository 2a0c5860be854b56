"""
Where the node's CPU goes, library by library, beside its messaging floor's: ``perf``.

Runs ``bench_node.py`` with the arguments given after ``--`` and samples each process it
starts in the node's place (the node, the node with the observer, an older revision's node
with ``--before``, the floor) with ``perf record -e cpu-clock`` for ``--seconds``, once it has
run ``--delay`` seconds (past the bench's start-up and warm-up). Then prints, per shared
library (the Python interpreter, numpy, the numba kernels "[JIT]", BLAS, Fast DDS, libc, the
kernel, ...), the CPU per message of each kind of process (perf's cpu-clock time over the
messages sent meanwhile, bench_node's ``--rate`` × seconds, its processes of a kind summed),
and each node's excess over the floor. The bench's own table comes first, as usual; its CPU
per message counts the messages answered and the planner child, this table neither, and perf
adds its own sampling, so the two differ by a few per cent.

    python bench/node_perf.py -- --fixed-base --floor --observer arm_right_7_link \
        --outputs torques,accelerations,inverse_inertia,rnea_derivatives,aba_derivatives \
        --duration 25

Needs ``perf`` (linux-tools) and the right to profile the processes with the kernel's share
(root, or ``/proc/sys/kernel/perf_event_paranoid`` ≤ 1). Python 3.11 has no perf map of its
frames: what runs Python code is "libpython"; which Python function it is, py-spy tells.
"""
import argparse
import collections
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

from node_graph import signals_held, stop_children_on_sigterm
from node_trees import FLOOR_CORE, FLOOR_PINOCCHIO
from node_run import stop
from proc_cpu import running, stat_fields

HERE = os.path.dirname(os.path.abspath(__file__))
FREQUENCY = 1999                    # Hz: not a multiple of the 1 kHz ticks
WATCHED = re.compile(r"-m rbd_ros\.node\.dynamics_node|node_floor\.py")
EXITED = 143                        # perf record's status when the process left meanwhile
BENCH_STOP_S = 60                   # for bench_node to stop its processes after SIGINT
PERF_STOP_S = 10                    # for perf record to write its file after SIGINT


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=8.0, help="seconds sampled per process")
    ap.add_argument("--delay", type=float, default=10.0,
                    help="seconds after a process starts before sampling it")
    ap.add_argument("--top", type=int, default=12, help="libraries shown")
    ap.add_argument("bench", nargs=argparse.REMAINDER, help="-- then bench_node's arguments")
    args = ap.parse_args(argv)
    args.bench = [a for a in args.bench if a != "--"]
    try:
        args.rate = bench_rate(args.bench)
    except ValueError as exc:
        ap.error(f"bench_node's --rate: {exc}")
    if not args.rate > 0 or args.seconds <= 0 or args.delay < 0:
        ap.error("--rate and --seconds must be > 0, --delay >= 0")
    return args


def bench_rate(argv):
    """bench_node's ``--rate`` among its arguments (its default, 1,000 a second)."""
    rate = 1000.0
    for k, a in enumerate(argv):
        if a == "--rate" and k + 1 < len(argv):
            rate = float(argv[k + 1])
        elif a.startswith("--rate="):
            rate = float(a.split("=", 1)[1])
    return rate


def label(cmdline, tree, here):
    """
    Name a watched process: floor, floor + core or Pinocchio, observer, node, "before ...".

    "before <revision>": another tree's node.

    ``cmdline``: its command line; ``tree``: its PYTHONPATH (bench_node runs a tree's node
    with the tree there); ``here``: this checkout's root.
    """
    if "node_floor.py" in cmdline:
        if re.search(r"\s--pinocchio(\s|$)", cmdline):
            return FLOOR_PINOCCHIO
        return FLOOR_CORE if re.search(r"\s--core(\s|$)", cmdline) else "floor"
    frame = re.search(r"contact_frame:=(\S*)", cmdline)
    observer = (frame and frame.group(1)) or "publish_external_torques:=true" in cmdline
    name = "observer" if observer else "node"
    if tree and os.path.realpath(tree) != os.path.realpath(here):
        # node_trees.SourceTree: a revision's tree is .../bench_node/<sha>/tree
        path = tree.rstrip(os.sep)
        if os.path.basename(path) == "tree":
            path = os.path.dirname(path)
        name = f"before {os.path.basename(path)}"
    return name


def watched_processes(parent):
    """{pid: (command line, PYTHONPATH)} of the node-like children of ``parent``."""
    found = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            if int(stat_fields(entry)[1]) != parent:
                continue
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                cmdline = f.read().replace(b"\0", b" ").decode(errors="replace")
            with open(f"/proc/{entry}/environ", "rb") as f:
                env = dict(v.split(b"=", 1) for v in f.read().split(b"\0") if b"=" in v)
        except (OSError, ValueError, IndexError):
            continue                      # gone meanwhile
        if WATCHED.search(cmdline):
            found[int(entry)] = (cmdline, env.get(b"PYTHONPATH", b"").decode(errors="replace"))
    return found


def report_command(path):
    """Return the ``perf report`` command of one perf.data by library (for :func:`parse_report`)."""
    return ["perf", "report", "-i", path, "--stdio", "--no-children", "-g", "none", "--sort",
            "dso", "-F", "period,dso"]


def parse_report(text):
    """{library: nanoseconds} of ``perf report --sort dso -F period,dso``'s text."""
    period = collections.Counter()
    for line in text.splitlines():
        fields = line.split(None, 1)
        if len(fields) == 2 and fields[0].isdigit():
            name = fields[1].strip()
            period[re.sub(r"^\[JIT\].*", "[JIT] (numba kernels)", name)] += int(fields[0])
    return period


class Recordings:
    """
    The perf processes of the sampling threads (record, report), stopped together if interrupted.

    ``stopping`` is set by :meth:`stop`: a thread still waiting for its ``--delay`` starts no
    recording after it.
    """

    def __init__(self):
        self.lock = threading.Lock()
        self.processes = []
        self.stopping = threading.Event()

    def start(self, command):
        """Start ``command`` (perf) in a session of its own and return it; None once stopping."""
        with self.lock:
            if self.stopping.is_set():
                return None
            # its own session: a terminal's Ctrl-C reaches node_perf only, which stops it;
            # a SIGKILL to the group also ends the workload perf records around
            process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                       text=True, start_new_session=True)
            self.processes.append(process)
            return process

    def stop(self):
        """Stop every perf: SIGINT (it ends its workload and exits), its group killed late."""
        with self.lock:
            self.stopping.set()
            live = [process for process in self.processes if process.poll() is None]
        for process in live:
            process.send_signal(signal.SIGINT)
        for process in live:
            try:
                process.wait(PERF_STOP_S)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()


def sample(pid, name, args, recordings, results, failures, workdir):
    """Wait ``--delay``, record the process ``--seconds``, keep its time by library."""
    if recordings.stopping.wait(args.delay):
        return
    path = os.path.join(workdir, f"{pid}.data")
    process = recordings.start(["perf", "record", "-q", "-e", "cpu-clock", "-F",
                                str(FREQUENCY), "-p", str(pid), "-o", path, "--", "sleep",
                                str(args.seconds)])
    if process is None:
        return
    _, stderr = process.communicate()
    if recordings.stopping.is_set():
        return                            # interrupted: nothing to report
    recorded = process.returncode == 0 and os.path.exists(path)
    if process.returncode == EXITED or not recorded and not running(pid):
        why = ("it left before the end of the recording (--duration shorter than --delay + "
               "--seconds?)")
    elif process.returncode:
        why = stderr.strip()[:200]
    elif not recorded:
        why = "no perf.data written"
    else:
        report = recordings.start(report_command(path))
        if report is None:
            return
        stdout, stderr = report.communicate()
        if recordings.stopping.is_set():
            return
        if not report.returncode:
            results.append((name, pid, parse_report(stdout)))
            return
        why = f"perf report failed: {stderr.strip()[:200]}"
    failures.append(f"{name} (pid {pid}): {why}")


def print_table(args, results):
    """Print µs per message by library: each kind of run (its processes summed), its excess."""
    if not results:
        print("node_perf: no process was sampled")
        return
    period, count = collections.defaultdict(collections.Counter), collections.Counter()
    for name, _, ns in results:
        period[name].update(ns)
        count[name] += 1
    per = {name: {k: t * 1e-3 / (args.rate * args.seconds * count[name])
                  for k, t in ns.items()} for name, ns in sorted(period.items())}
    floor = per.get("floor")
    total = collections.Counter()
    for cost in per.values():
        total.update(cost)
    libraries = [k for k, _ in total.most_common(args.top)]
    width = max(len(k) for k in libraries + ["library"])
    excess = [name for name in per if floor is not None and name != "floor"]
    print(f"\nCPU per message by library, µs: perf cpu-clock at {FREQUENCY} Hz, {args.seconds:g} s "
          f"per process ({', '.join(f'{n}: {count[n]}' for n in per)} processes), over the "
          f"messages sent at {args.rate:g}/s; the planner child is not sampled")
    columns = {c: max(10, len(c)) for c in per}
    print(f"{'library':<{width}} " + " ".join(f"{c:>{columns[c]}}" for c in per)
          + "".join(f" {c + ' - floor':>{columns[c] + 8}}" for c in excess))
    for k in libraries + ["(all)"]:
        value = {name: sum(cost.values()) if k == "(all)" else cost.get(k, 0.0)
                 for name, cost in per.items()}
        print(f"{k:<{width}} " + " ".join(f"{value[n]:{columns[n]}.1f}" for n in per)
              + "".join(f" {value[n] - value['floor']:+{columns[n] + 8}.1f}" for n in excess))


def stop_everything(bench, recordings, threads):
    """
    Stop the perf processes, then the bench (``bench``: None if never started).

    The recordings first, so that none reports on a node the bench is stopping; the
    threads end before the folder of their files goes. A second SIGINT or SIGTERM waits.
    """
    try:
        with signals_held():
            recordings.stop()
            if bench is not None:             # it stops the node and its other processes
                stop(bench, BENCH_STOP_S)
            for t in threads:
                t.join(PERF_STOP_S)
    except KeyboardInterrupt:
        pass                                # that second signal: all is stopped by now


def main(argv=None):
    args = parse_args(argv)
    if shutil.which("perf") is None:
        raise SystemExit("node_perf: no perf on PATH (linux-tools)")
    try:
        with open("/proc/sys/kernel/perf_event_paranoid") as f:
            paranoid = int(f.read())
    except (OSError, ValueError):
        paranoid = None
    if os.geteuid() != 0 and paranoid is not None and paranoid > 1:
        print(f"node_perf: perf_event_paranoid is {paranoid} and this is not root: perf may "
              "not sample the kernel's share (2) or any process (3 or more)", file=sys.stderr)
    here = os.path.dirname(HERE)
    stop_children_on_sigterm()              # killed, it stops the bench, which stops the node
    seen, threads, results, failures = set(), [], [], []
    recordings = Recordings()
    with tempfile.TemporaryDirectory(prefix="node_perf_") as workdir:
        bench = None
        try:
            bench = subprocess.Popen([sys.executable, os.path.join(HERE, "bench_node.py"),
                                      *args.bench])
            while bench.poll() is None:
                for pid, (cmdline, tree) in watched_processes(bench.pid).items():
                    if pid not in seen:
                        seen.add(pid)
                        t = threading.Thread(target=sample, daemon=True, args=(
                            pid, label(cmdline, tree, here), args, recordings, results,
                            failures, workdir))
                        t.start()
                        threads.append(t)
                time.sleep(0.2)
            for t in threads:
                t.join()
        except KeyboardInterrupt:
            stop_everything(bench, recordings, threads)
            print("node_perf: interrupted", file=sys.stderr)
            return 130
        except BaseException:
            stop_everything(bench, recordings, threads)
            raise
        print_table(args, results)
    for failure in failures:
        print(f"node_perf: not sampled: {failure}", file=sys.stderr)
    return bench.returncode or (1 if failures or not results else 0)


if __name__ == "__main__":
    sys.exit(main())
