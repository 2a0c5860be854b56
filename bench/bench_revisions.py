#!/usr/bin/env python3
"""
Benchmark two source trees of rbd_ros side by side, with Pinocchio as the reference.

Per-call speed of every public single-state entry of two source trees of rbd_ros, side by
side in one run, with Pinocchio as the reference in the same run: does a refactor make any row
slower than the noise?

    python bench/bench_revisions.py --before REV [--after PATH_OR_REV]
        [--robots arm7,panda,ur5,hyq,talos] [--rounds 5] [--json FILE]

What: rnea, crba, aba, minv, minv_cholesky, rnea_derivatives, aba_derivatives, compute_all,
inverse_and_forward_dynamics, nonlinear_effects, gravity_torques and joint_torque_regressor,
each at the same random states in both trees (seeds 0..19, drawn as test/oracle.py's
``Robot.random_state`` draws them; keyword arguments where the API changes between trees), on
the robots of test/oracle.py (panda, ur5, hyq and talos from example-robot-data, mimic joints
as independent joints), and Pinocchio's counterpart of each where it has one.

How: ``--before REV`` is checked out with ``git worktree add --detach`` into a temporary
directory, removed at the end (also on error or Ctrl-C); ``--after`` is the working tree that
contains this script, another directory, or a revision checked out the same way. Each tree runs
in its own worker process (this script with ``--worker``, PYTHONPATH set to the tree, its own
NUMBA_CACHE_DIR under ~/.cache/rbd_ros/bench_revisions). A tree's first run compiles its
kernels (~2 min); numba's cache is keyed by source path, so a checkout gets the same path in
every run and loads from the cache when its kernel sources are those of the previous run.
A worker times one row per request: a warm-up call, then 25 timeit-style loops (gc off) over
the 20 states, each ~2 ms long, the fastest kept, in µs per call; the "after" worker then times
Pinocchio's call the same way. The parent asks for every row of both trees in turn,
alternating which tree goes first from round to round, so machine noise hits both; it reports
the median over rounds, the range of the per-round after/before ratios (the noise), the
largest relative difference between the two trees' results at the first state, and the CPU
steal time (/proc/stat) during the timed rounds.
"""
import argparse
import fcntl
import gc
import hashlib
import itertools
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_ROBOTS = "arm7,panda,ur5,hyq,talos"
NSTATES = 20
ROUND_S = 0.05           # target duration of one request: LOOP_S loops, the fastest kept
LOOP_S = 0.002           # one timed loop: short enough that many run without preemption

# name -> (arguments by position, arguments by keyword); the names are those of the state
ENTRIES = {
    "rnea": (("q", "v", "a"), ()),
    "crba": (("q",), ()),
    "aba": (("q", "v", "tau"), ()),
    "minv": (("q",), ()),
    "minv_cholesky": (("q",), ()),
    "rnea_derivatives": (("q", "v", "a"), ()),
    "aba_derivatives": (("q", "v", "tau"), ()),
    "compute_all": (("q", "v"), ("a", "tau")),
    "inverse_and_forward_dynamics": (("q", "v"), ("a", "tau")),
    "nonlinear_effects": (("q", "v"), ()),
    "gravity_torques": (("q",), ()),
    "joint_torque_regressor": (("q", "v", "a"), ()),
}
# our entry -> (Pinocchio function, its arguments after (model, data)); only the call is timed
PIN_ENTRIES = {
    "rnea": ("rnea", ("q", "v", "a")),
    "crba": ("crba", ("q",)),
    "aba": ("aba", ("q", "v", "tau")),
    "minv": ("computeMinverse", ("q",)),
    "rnea_derivatives": ("computeRNEADerivatives", ("q", "v", "a")),
    "aba_derivatives": ("computeABADerivatives", ("q", "v", "tau")),
    "nonlinear_effects": ("nonLinearEffects", ("q", "v")),
    "gravity_torques": ("computeGeneralizedGravity", ("q",)),
    "joint_torque_regressor": ("computeJointTorqueRegressor", ("q", "v", "a")),
}


# -- robots: the paths logic of test/oracle.py, against the tree being measured -------------
def example_robot_data_dir():
    """Return the robots folder of the example-robot-data pip package, or None if not installed."""
    from importlib.metadata import PackageNotFoundError, distribution
    try:
        path = distribution("example-robot-data").locate_file(
            "cmeel.prefix/share/example-robot-data/robots")
    except PackageNotFoundError:
        return None
    path = os.fspath(path)
    return path if os.path.isdir(path) else None


def robot_table(tree):
    """Return name -> (URDF path or None, floating base), as test/oracle.py's ROBOTS."""
    erd = example_robot_data_dir()
    bundled = os.path.join(tree, "rbd_ros", "robots")

    def _erd(rel):
        return None if erd is None else os.path.join(erd, rel)
    return {
        "arm7": (os.path.join(bundled, "rbd_arm7.urdf"), False),
        "quadruped": (os.path.join(bundled, "rbd_quadruped.urdf"), True),
        "panda": (_erd("panda_description/urdf/panda.urdf"), False),
        "ur5": (_erd("ur_description/urdf/ur5_robot.urdf"), False),
        "hyq": (_erd("hyq_description/robots/hyq_no_sensors.urdf"), True),
        "talos": (_erd("talos_data/robots/talos_reduced.urdf"), True),
    }


# -- the worker: one tree, one process ------------------------------------------------------
class Subject:
    """One robot in a worker: our model, the states, and Pinocchio's model if asked."""

    def __init__(self, rbd_ros, path, floating, with_pin):
        import numpy as np
        with open(path, encoding="utf-8") as f:
            xml = f.read()
        kwargs = {"mimic": "independent"} if re.search(r"<mimic\b", xml) else {}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)      # hyq's placeholder inertias
            self.model = m = rbd_ros.load_model(path, floating_base=floating, **kwargs)
        self.states = []
        for seed in range(NSTATES):                            # as oracle.Robot.random_state
            rng = np.random.default_rng(seed)
            q = m.random_configuration(rng)
            v = rng.normal(size=m.nv)
            a = rng.normal(size=m.nv)
            tau = rng.normal(scale=5.0, size=m.nv)
            self.states.append({"q": q, "v": v, "a": a, "tau": tau})
        self.pin = self._build_pin(path, floating) if with_pin else None

    def _build_pin(self, path, floating):
        """Pinocchio's model, data and the states in its layout (as oracle.Robot._build_pin)."""
        import numpy as np
        import pinocchio as pin
        if floating:
            pm = pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer())
        else:
            pm = pin.buildModelFromUrdf(path)
        m = self.model
        # the base's entries: Model.nq_base/nv_base, computed so that older trees run too
        off_q, off_v = m.nq - len(m.joint_names), m.nv - len(m.joint_names)
        perm_v = np.empty(m.nv, np.int64)                      # our v index -> pin v index
        joints = []
        for k, name in enumerate(m.joint_names):
            j = pm.joints[pm.getJointId(name)]
            assert j.nv == 1 and j.nq in (1, 2), (name, j.nq, j.nv)
            joints.append((j.idx_q, j.nq))
            perm_v[off_v + k] = j.idx_v
        if floating:
            root = pm.joints[1]
            perm_v[:6] = root.idx_v + np.arange(6)
        assert sorted(perm_v) == list(range(pm.nv))
        states = []
        for s in self.states:
            q = s["q"]
            qp = np.zeros(pm.nq)
            if floating:
                qp[root.idx_q:root.idx_q + 3] = q[:3]
                qp[root.idx_q + 3:root.idx_q + 7] = q[3:7] / np.linalg.norm(q[3:7])
            for k, (iq, nq) in enumerate(joints):
                if nq == 2:
                    qp[iq], qp[iq + 1] = np.cos(q[off_q + k]), np.sin(q[off_q + k])
                else:
                    qp[iq] = q[off_q + k]
            p = {"q": qp}
            for key in ("v", "a", "tau"):
                p[key] = np.zeros(pm.nv)
                p[key][perm_v] = s[key]
            states.append(p)
        return pin, pm, pm.createData(), states

    def calls(self, entry):
        """Return (function, [(args, kwargs) per state]) of our entry."""
        pos, kw = ENTRIES[entry]
        return [((self.model,) + tuple(s[k] for k in pos), {k: s[k] for k in kw})
                for s in self.states]

    def pin_calls(self, entry):
        pin, pm, pd, states = self.pin
        name, pos = PIN_ENTRIES[entry]
        return getattr(pin, name), [((pm, pd) + tuple(s[k] for k in pos), {}) for s in states]


def loop_seconds(fn, calls, reps):
    """Seconds for ``reps`` passes of ``fn`` over ``calls``, timeit-style (gc off)."""
    plain = [args for args, kw in calls] if not any(kw for _, kw in calls) else None
    gc_was_on = gc.isenabled()
    gc.disable()
    try:
        if plain is not None:
            t0 = time.perf_counter()
            for _ in itertools.repeat(None, reps):
                for args in plain:
                    fn(*args)
            return time.perf_counter() - t0
        t0 = time.perf_counter()
        for _ in itertools.repeat(None, reps):
            for args, kw in calls:
                fn(*args, **kw)
        return time.perf_counter() - t0
    finally:
        if gc_was_on:
            gc.enable()


class Timer:
    """
    Return µs per call of a row: the fastest of ~ROUND_S / LOOP_S loops of ~LOOP_S each.

    The number of passes per loop is fixed on first use. On a shared machine a long loop
    almost always includes time the process spent descheduled; the fastest of many short ones
    does not (as timeit's documentation advises: the minimum, not the mean).
    """

    def __init__(self):
        self.reps = {}

    def __call__(self, key, fn, calls):
        args, kw = calls[0]
        fn(*args, **kw)                                        # warm-up
        reps = self.reps.get(key)
        if reps is None:
            reps = 1
            while True:
                t = loop_seconds(fn, calls, reps)
                if t >= LOOP_S / 5:
                    break
                reps *= 10 if t < LOOP_S / 50 else 2
            reps = self.reps[key] = max(1, round(reps * LOOP_S / t))
        loops = max(1, round(ROUND_S / LOOP_S))
        best = min(loop_seconds(fn, calls, reps) for _ in range(loops))
        return best / (reps * len(calls)) * 1e6


def flat(out):
    """Return an entry's result as one list of floats (tuples of arrays concatenated)."""
    import numpy as np
    if isinstance(out, tuple):
        return [float(x) for part in out for x in np.ravel(part)]
    return [float(x) for x in np.ravel(out)]


def worker(args):
    """Serve the parent: a JSON line out per JSON line in, on a private copy of stdout."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)   # the parent stops us (EOF or "quit")
    reply = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)                 # anything else printed goes to stderr, not into the protocol
    sys.stdout = sys.stderr
    label = args.worker
    t0 = time.perf_counter()
    import rbd_ros
    tree = os.path.realpath(args.tree)
    if not os.path.realpath(rbd_ros.__file__).startswith(tree + os.sep):
        sys.exit(f"[{label}] imported rbd_ros from {rbd_ros.__file__}, not from {tree}")
    table = robot_table(tree)
    ready = {"file": rbd_ros.__file__, "version": getattr(rbd_ros, "__version__", "?"),
             "robots": {}}
    if args.pin:
        import pinocchio as pin
        ready["pin_version"] = pin.__version__
    subjects = {}
    for name in args.robots.split(","):
        path, floating = table[name]
        subjects[name] = s = Subject(rbd_ros, path, floating, args.pin)
        info = ready["robots"][name] = {"nv": s.model.nv, "entries": {}}
        for entry in ENTRIES:                  # first calls: compile or load the kernels
            t1 = time.perf_counter()
            fn = getattr(rbd_ros, entry, None)
            if fn is None:
                info["entries"][entry] = {"error": "missing"}
                continue
            args_, kw = s.calls(entry)[0]
            try:
                out = flat(fn(*args_, **kw))
            except Exception as exc:   # an API this tree does not have: that row is an error
                info["entries"][entry] = {"error": f"{type(exc).__name__}: {exc}"}
                print(f"[{label}] {name} {entry}: {type(exc).__name__}: {exc}", file=sys.stderr)
                continue
            info["entries"][entry] = {"out": out, "first_s": time.perf_counter() - t1}
        print(f"[{label}] {name} ready, {time.perf_counter() - t0:.1f} s since start",
              file=sys.stderr, flush=True)
    ready["setup_s"] = time.perf_counter() - t0
    reply.write(json.dumps(ready) + "\n")
    timer = Timer()
    for line in sys.stdin:
        cmd = json.loads(line)
        if cmd.get("quit"):
            break
        name, entry = cmd["robot"], cmd["entry"]
        s = subjects[name]
        res = {"us": timer(("ours", name, entry), getattr(rbd_ros, entry), s.calls(entry))}
        if args.pin and entry in PIN_ENTRIES:
            fn, calls = s.pin_calls(entry)
            res["pin_us"] = timer(("pin", name, entry), fn, calls)
        reply.write(json.dumps(res) + "\n")


# -- the parent ------------------------------------------------------------------------------
def git(repo, *args):
    return subprocess.run(["git", "-C", repo, *args], check=True, capture_output=True,
                          text=True).stdout.strip()


def cache_root():
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "rbd_ros", "bench_revisions")


class Tree:
    """A source tree to measure: a directory, or a revision checked out into a temporary one."""

    def __init__(self, label, repo, spec):
        self.label, self.spec = label, spec
        self.checkout = self.lock = self.scratch = None
        if os.path.isdir(spec):
            self.path = os.path.realpath(spec)
            try:
                self.sha = git(self.path, "rev-parse", "HEAD")
                dirty = git(self.path, "status", "--porcelain", "--untracked-files=no")
            except subprocess.CalledProcessError:       # not a git checkout
                self.sha, dirty = None, False
            self.desc = f"{self.path} (working tree at {(self.sha or '?')[:10]}" + \
                (", with uncommitted changes)" if dirty else ")")
        else:
            self.sha = git(repo, "rev-parse", "--verify", spec + "^{commit}")
            self.path = self._add_worktree(repo)
            self.desc = f"{spec} = {self.sha[:10]} (temporary worktree {self.path})"
        if self.scratch is None:
            key = hashlib.sha1(self.path.encode()).hexdigest()[:12]
            self.cache = os.path.join(cache_root(), f"{os.path.basename(self.path)}-{key}")
        else:                      # a one-off path: a one-off cache, removed with it
            self.cache = os.path.join(self.scratch, "numba_cache")
        os.makedirs(self.cache, exist_ok=True)

    def _add_worktree(self, repo):
        """
        Add a detached git worktree of ``repo`` at this tree's revision.

        ``git worktree add --detach`` at the same path in every run (numba's cache is keyed
        by source path: kernels whose sources did not change since the last run with this
        label load from the cache), or at a fresh one if another run holds that path.
        """
        common = git(repo, "rev-parse", "--path-format=absolute", "--git-common-dir")
        key = hashlib.sha1(common.encode()).hexdigest()[:8]
        base = os.path.join(tempfile.gettempdir(), f"rbd_ros_bench_{self.label}_{key}")
        lock = open(base + ".lock", "w")
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            self.lock = lock
        except OSError:
            lock.close()
            self.scratch = tempfile.mkdtemp(prefix="rbd_ros_bench_")
            base = os.path.join(self.scratch, "tree")
        if os.path.exists(base):          # left over by a run that was killed
            subprocess.run(["git", "-C", repo, "worktree", "remove", "--force", base],
                           capture_output=True)
            shutil.rmtree(base, ignore_errors=True)
        subprocess.run(["git", "-C", repo, "worktree", "prune"], capture_output=True)
        git(repo, "worktree", "add", "--detach", base, self.sha)
        self.checkout = (repo, base)
        return os.path.realpath(base)

    def cache_is_empty(self):
        for _, _, files in os.walk(self.cache):
            if any(f.endswith(".nbi") for f in files):
                return False
        return True

    def remove(self):
        if self.checkout is not None:
            repo, base = self.checkout
            subprocess.run(["git", "-C", repo, "worktree", "remove", "--force", base],
                           capture_output=True)
            shutil.rmtree(base, ignore_errors=True)
            subprocess.run(["git", "-C", repo, "worktree", "prune"], capture_output=True)
            self.checkout = None
        if self.scratch is not None:
            shutil.rmtree(self.scratch, ignore_errors=True)
        if self.lock is not None:
            self.lock.close()
            self.lock = None


class Worker:
    def __init__(self, tree, robots, with_pin):
        self.label = tree.label
        env = dict(os.environ, PYTHONPATH=tree.path, NUMBA_CACHE_DIR=tree.cache,
                   PYTHONUNBUFFERED="1")
        cmd = [sys.executable, os.path.abspath(__file__), "--worker", tree.label,
               "--tree", tree.path, "--robots", robots] + (["--pin"] if with_pin else [])
        self.proc = subprocess.Popen(cmd, env=env, cwd=tree.path, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True, bufsize=1)

    def receive(self):
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"the {self.label} worker exited (code {self.proc.wait()}); "
                               "its error is above")
        return json.loads(line)

    def ask(self, **cmd):
        self.proc.stdin.write(json.dumps(cmd) + "\n")
        self.proc.stdin.flush()
        return self.receive()

    def close(self):
        try:
            self.proc.stdin.write(json.dumps({"quit": True}) + "\n")
            self.proc.stdin.close()
        except (OSError, ValueError):
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def steal_ticks():
    """Return the host's steal time of all CPUs so far, in clock ticks (/proc/stat), or None."""
    try:
        with open("/proc/stat") as f:
            fields = f.readline().split()
        return int(fields[8]) if fields[0] == "cpu" and len(fields) > 8 else None
    except (OSError, ValueError):
        return None


def median(xs):
    xs = sorted(xs)
    n = len(xs)
    return xs[n // 2] if n % 2 else 0.5 * (xs[n // 2 - 1] + xs[n // 2])


def rel_diff(a, b):
    import numpy as np
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape:
        return "shape"
    if a.size == 0:
        return 0.0
    return float(np.max(np.abs(a - b)) / max(1.0, float(np.max(np.abs(b)))))


def measure(trees, robots, rounds):
    """Rows of the table, plus the steal ticks of the timed rounds and the workers' setup."""
    for tree in trees:
        state = "empty: compiling, ~2 min" if tree.cache_is_empty() else "warm"
        print(f"{tree.label}: {tree.desc}\n    numba cache {tree.cache} ({state})",
              file=sys.stderr, flush=True)
    workers = [Worker(tree, robots, with_pin=tree.label == "after") for tree in trees]
    try:
        ready = [w.receive() for w in workers]
        for w, r in zip(workers, ready):
            print(f"{w.label}: rbd_ros from {r['file']}, first calls of every entry "
                  f"{r['setup_s']:.1f} s after start", file=sys.stderr, flush=True)
        before, after = ready
        by_label = {"before": before, "after": after}
        names = robots.split(",")
        for name in names:
            if before["robots"][name]["nv"] != after["robots"][name]["nv"]:
                raise RuntimeError(f"{name}: nv differs between the trees")
        times = {}                                     # (robot, entry) -> {label: [µs, ...]}
        steal = [steal_ticks()]
        t0 = time.perf_counter()
        for r in range(rounds):
            order = workers if r % 2 == 0 else workers[::-1]
            for name in names:
                for entry in ENTRIES:
                    cell = times.setdefault((name, entry), {"before": [], "after": [],
                                                            "pin": []})
                    for w in order:
                        if "error" in by_label[w.label]["robots"][name]["entries"][entry]:
                            continue
                        res = w.ask(robot=name, entry=entry)
                        cell[w.label].append(res["us"])
                        if "pin_us" in res:
                            cell["pin"].append(res["pin_us"])
            steal.append(steal_ticks())
            print(f"round {r + 1}/{rounds} done, {time.perf_counter() - t0:.0f} s",
                  file=sys.stderr, flush=True)
    finally:
        for w in workers:
            w.close()
    rows = []
    for (name, entry), cell in times.items():
        b_info = before["robots"][name]["entries"][entry]
        a_info = after["robots"][name]["entries"][entry]
        row = {"robot": name, "nv": after["robots"][name]["nv"], "function": entry,
               "before_rounds_us": cell["before"], "after_rounds_us": cell["after"],
               "pin_rounds_us": cell["pin"],
               "before_error": b_info.get("error"), "after_error": a_info.get("error")}
        for key in ("before", "after", "pin"):
            row[f"{key}_us"] = median(cell[key]) if cell[key] else None
        if row["before_us"] and row["after_us"]:
            row["ratio"] = row["after_us"] / row["before_us"]
            per_round = [x / y for x, y in zip(cell["after"], cell["before"])]
            row["ratio_min"], row["ratio_max"] = min(per_round), max(per_round)
            row["max_rel_diff"] = rel_diff(a_info["out"], b_info["out"])
        if row["pin_us"] and row["after_us"]:
            row["after_per_pin"] = row["after_us"] / row["pin_us"]
        rows.append(row)
    ticks = None if None in steal else [b - a for a, b in zip(steal, steal[1:])]
    return rows, ticks, ready


def print_table(rows, trees, ready, rounds, ticks):
    pin_version = ready[1].get("pin_version", "?")
    print(f"before: {trees[0].desc}\nafter:  {trees[1].desc}")
    print(f"Pinocchio {pin_version} (in the after worker); median over {rounds} round(s) of "
          f"the fastest of {round(ROUND_S / LOOP_S)} ~{LOOP_S * 1e3:.0f} ms loops over {NSTATES} "
          "random states, µs per call from Python; "
          "range: the per-round after/before ratios; diff: max relative difference of the "
          "two trees' results at the first state")
    header = (f"{'robot':<6} {'nv':>3} {'function':<28} {'before µs':>10} {'after µs':>10} "
              f"{'after/bef':>9} {'range':>11} {'pin µs':>9} {'after/pin':>9} {'diff':>8}")
    print(header)
    print("-" * len(header))

    def num(x, fmt):
        return format(x, fmt) if x is not None else "-"
    for i, row in enumerate(rows):
        if i and row["robot"] != rows[i - 1]["robot"]:
            print()
        b = row["before_us"] if row["before_error"] is None else None
        a = row["after_us"] if row["after_error"] is None else None
        b_s = num(b, ".3f") if row["before_error"] != "missing" else "missing"
        a_s = num(a, ".3f") if row["after_error"] != "missing" else "missing"
        b_s = "error" if row["before_error"] not in (None, "missing") else b_s
        a_s = "error" if row["after_error"] not in (None, "missing") else a_s
        rng = (f"{row['ratio_min']:.2f}–{row['ratio_max']:.2f}" if "ratio_min" in row
               else "-")
        diff = row.get("max_rel_diff")
        diff_s = "-" if diff is None else diff if isinstance(diff, str) else f"{diff:.0e}"
        print(f"{row['robot']:<6} {row['nv']:>3} {row['function']:<28} {b_s:>10} {a_s:>10} "
              f"{num(row.get('ratio'), '.3f'):>9} {rng:>11} {num(row['pin_us'], '.3f'):>9} "
              f"{num(row.get('after_per_pin'), '.2f'):>9} {diff_s:>8}")
    if ticks is None:
        print("steal time: /proc/stat not readable")
    else:
        hz = os.sysconf("SC_CLK_TCK")
        print(f"steal during the timed rounds: {sum(ticks)} ticks of 1/{hz} s, all CPUs "
              f"(per round: {', '.join(map(str, ticks))})" +
              ("; the host took CPU from this VM: treat the ratios with care"
               if sum(ticks) else ""))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", help="git revision (e.g. HEAD~3, main)")
    parser.add_argument("--after", help="directory or git revision (default: the working "
                        "tree that contains this script)")
    parser.add_argument("--robots", default=DEFAULT_ROBOTS)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--json", help="also save the table to this file")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--tree", help=argparse.SUPPRESS)
    parser.add_argument("--pin", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        return worker(args)
    if not args.before:
        parser.error("--before REV is required")
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    repo = git(HERE, "rev-parse", "--show-toplevel")
    table = robot_table(repo)
    names = args.robots.split(",")
    for name in names:
        if name not in table:
            parser.error(f"unknown robot {name!r} (known: {', '.join(table)})")
        if table[name][0] is None:
            parser.error(f"{name} needs example-robot-data (pip install example-robot-data)")
    try:
        import pinocchio  # noqa: F401
    except ImportError:
        sys.exit("Pinocchio (pip install pin) is needed for the reference column")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))   # clean up on kill, too
    trees = []
    try:
        trees.append(Tree("before", repo, args.before))
        trees.append(Tree("after", repo, args.after or repo))
        rows, ticks, ready = measure(trees, args.robots, args.rounds)
        print_table(rows, trees, ready, args.rounds, ticks)
        if args.json:
            with open(args.json, "w") as f:
                json.dump({"before": {"spec": trees[0].spec, "sha": trees[0].sha,
                                      "desc": trees[0].desc},
                           "after": {"spec": trees[1].spec, "sha": trees[1].sha,
                                     "desc": trees[1].desc},
                           "pin_version": ready[1].get("pin_version"), "rounds": args.rounds,
                           "states": NSTATES, "loop_s": ROUND_S,
                           "steal_ticks_per_round": ticks,
                           "clock_ticks_per_s": os.sysconf("SC_CLK_TCK"), "rows": rows},
                          f, indent=1)
            print(f"saved {args.json}")
    except KeyboardInterrupt:
        sys.exit("interrupted")
    finally:
        for tree in trees:
            tree.remove()


if __name__ == "__main__":
    main()
