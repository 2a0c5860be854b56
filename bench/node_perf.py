"""
Where the node's CPU goes, library by library, beside its messaging floor's: ``perf``.

Runs ``bench_node.py`` with the arguments given after ``--`` and samples each process it
starts in the node's place (the node, the node with the observer, the floor) with
``perf record -e cpu-clock`` for ``--seconds``, once it has run ``--delay`` seconds (past the
bench's start-up and warm-up). Then prints, per shared library (the Python interpreter,
numpy, the numba kernels "[JIT]", Fast DDS, libc, the kernel, ...), the CPU per message
(samples / frequency / messages, the messages taken as ``--rate`` × seconds) of each
process, and each node's excess over the floor. The bench's own table follows as usual.

    python bench/node_perf.py -- --fixed-base --floor --observer arm_right_7_link \
        --outputs torques,accelerations,inverse_inertia,rnea_derivatives,aba_derivatives \
        --duration 25

Needs ``perf`` (linux-tools) and the right to profile the processes
(``/proc/sys/kernel/perf_event_paranoid`` ≤ 1, or root). Python 3.11 has no perf map of its
frames: what runs Python code is "libpython"; which Python function it is, py-spy tells.
"""
import argparse
import collections
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
FREQUENCY = 1999                    # Hz: not a multiple of the 1 kHz ticks
WATCHED = re.compile(r"-m rbd_ros\.node\.dynamics_node|node_floor\.py")


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=8.0, help="seconds sampled per process")
    ap.add_argument("--delay", type=float, default=10.0,
                    help="seconds after a process starts before sampling it")
    ap.add_argument("--rate", type=float, default=1000.0,
                    help="joint_states per second (bench_node's --rate)")
    ap.add_argument("--top", type=int, default=12, help="libraries shown")
    ap.add_argument("bench", nargs=argparse.REMAINDER, help="-- then bench_node's arguments")
    args = ap.parse_args(argv)
    args.bench = [a for a in args.bench if a != "--"]
    return args


def label(cmdline):
    """Name a watched process by its command line: floor, observer or node."""
    if "node_floor.py" in cmdline:
        return "floor"
    frame = re.search(r"contact_frame:=(\S*)", cmdline)
    return "observer" if frame and frame.group(1) else "node"


def watched_processes():
    """{pid: command line} of the processes bench_node starts in the node's place."""
    found = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                cmdline = f.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if WATCHED.search(cmdline):
            found[int(entry)] = cmdline
    return found


def by_library(path):
    """{library: samples} of one perf.data."""
    return parse_report(subprocess.run(
        ["perf", "report", "-i", path, "--stdio", "--no-children", "-g", "none", "--sort", "dso",
         "-F", "sample,dso"], capture_output=True, text=True, check=True).stdout)


def parse_report(text):
    """{library: samples} of ``perf report --sort dso -F sample,dso``'s text."""
    samples = collections.Counter()
    for line in text.splitlines():
        fields = line.split(None, 1)
        if len(fields) == 2 and fields[0].isdigit():
            name = fields[1].strip()
            samples[re.sub(r"^\[JIT\].*", "[JIT] (numba kernels)", name)] += int(fields[0])
    return samples


def sample(pid, name, args, results, workdir):
    """Wait ``--delay``, record the process ``--seconds``, keep its samples by library."""
    time.sleep(args.delay)
    path = os.path.join(workdir, f"{name}-{pid}.data")
    done = subprocess.run(["perf", "record", "-q", "-e", "cpu-clock", "-F", str(FREQUENCY),
                           "-p", str(pid), "-o", path, "--", "sleep", str(args.seconds)],
                          capture_output=True, text=True)
    if done.returncode != 0 or not os.path.exists(path):
        print(f"node_perf: perf record of {name} (pid {pid}) failed: "
              f"{done.stderr.strip()[:200]}", file=sys.stderr)
        return
    results.append((name, pid, by_library(path)))


def print_table(args, results):
    """Print µs per message by library: each kind of run (its processes summed), its excess."""
    if not results:
        print("node_perf: no process was sampled")
        return
    samples, count = collections.defaultdict(collections.Counter), collections.Counter()
    for name, _, s in results:
        samples[name].update(s)
        count[name] += 1
    per = {name: {k: n / FREQUENCY / (args.rate * args.seconds * count[name]) * 1e6
                  for k, n in s.items()} for name, s in sorted(samples.items())}
    floor = per.get("floor")
    total = collections.Counter()
    for cost in per.values():
        total.update(cost)
    libraries = [k for k, _ in total.most_common(args.top)]
    width = max(len(k) for k in libraries + ["library"])
    excess = [name for name in per if floor is not None and name != "floor"]
    print(f"\nCPU per message by library, µs: perf cpu-clock at {FREQUENCY} Hz, {args.seconds:g} s "
          f"per process ({', '.join(f'{n}: {count[n]}' for n in per)} processes), the "
          f"messages taken as --rate {args.rate:g}/s; the planner child is not sampled")
    print(f"{'library':<{width}} " + " ".join(f"{c:>10}" for c in per)
          + "".join(f" {c + ' - floor':>18}" for c in excess))
    for k in libraries + ["(all)"]:
        value = {name: sum(cost.values()) if k == "(all)" else cost.get(k, 0.0)
                 for name, cost in per.items()}
        print(f"{k:<{width}} " + " ".join(f"{value[n]:10.1f}" for n in per)
              + "".join(f" {value[n] - value['floor']:+18.1f}" for n in excess))


def main(argv=None):
    args = parse_args(argv)
    if shutil.which("perf") is None:
        raise SystemExit("node_perf: no perf on PATH (linux-tools)")
    bench = subprocess.Popen([sys.executable, os.path.join(HERE, "bench_node.py"), *args.bench])
    seen, threads, results = set(), [], []
    with tempfile.TemporaryDirectory(prefix="node_perf_") as workdir:
        while bench.poll() is None:
            for pid, cmdline in watched_processes().items():
                if pid not in seen:
                    seen.add(pid)
                    t = threading.Thread(target=sample, daemon=True,
                                         args=(pid, label(cmdline), args, results, workdir))
                    t.start()
                    threads.append(t)
            time.sleep(0.2)
        for t in threads:
            t.join()
        print_table(args, results)
    return bench.returncode


if __name__ == "__main__":
    sys.exit(main())
