"""
A bench run's JSON record: its table and where it comes from, for the manual's benchmarks page.

``record(columns, rows, ...)`` returns the record: ``columns`` and ``rows`` (the table as the
script printed it) with the date (UTC), the machine (``platform``, the number of CPUs, the CPU
model from ``/proc/cpuinfo``, the load average before and after the run), the git commit of
the checkout (``+dirty`` when it has uncommitted changes) and the exact command. ``write`` saves
it through a temporary file and a rename. ``doc/_ext/rbd_tables.py`` renders the records of
``doc/bench/`` as tables (and ``peers_png`` the peer comparison as a chart) at build time.
Imports nothing heavy: the manual's build loads it.
"""
import datetime
import json
import os
import platform
import shlex
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def load_average():
    """Return the 1, 5 and 15 minute load averages (``/proc/loadavg``), or None."""
    try:
        with open("/proc/loadavg", encoding="ascii") as f:
            return [float(x) for x in f.read().split()[:3]]
    except OSError:
        return None


def cpu_model():
    """Return the CPU's model name from ``/proc/cpuinfo`` (or ``platform.processor()``)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def git_commit():
    """Return the checkout's commit, with ``+dirty`` when the tracked files differ from it."""
    def git(*args):
        return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True,
                              timeout=30).stdout.strip()
    try:
        commit = git("rev-parse", "--short=10", "HEAD")
        dirty = git("status", "--porcelain", "--untracked-files=no")
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return (commit or "unknown") + ("+dirty" if dirty else "")


def machine():
    """Return the machine's description: platform, CPUs, CPU model, Python."""
    return {"platform": platform.platform(), "nproc": os.cpu_count(), "cpu": cpu_model(),
            "python": platform.python_version()}


def start():
    """Return what is known before the run: date, machine, commit, command, load before."""
    command = " ".join(shlex.quote(a) for a in [os.path.relpath(sys.argv[0], ROOT)
                                                if os.path.exists(sys.argv[0]) else sys.argv[0],
                                                *sys.argv[1:]])
    return {"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "machine": machine(), "commit": git_commit(), "command": "python " + command,
            "load_before": load_average()}


def record(begun, title, columns, rows, notes=""):
    """Return the record of a run begun at ``begun`` (from :func:`start`)."""
    out = dict(begun, title=title, load_after=load_average(), notes=notes,
               columns=list(columns), rows=[list(r) for r in rows])
    return out


def write(path, data):
    """Write ``data`` as JSON to ``path`` through a temporary file and a rename."""
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(data, f, indent=1, ensure_ascii=False)
        f.write("\n")
    os.replace(tmp, path)


def peers_png(columns, rows, path, title=""):
    """One panel per algorithm: µs per call per robot and library (log scale), to ``path``."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    col = {name: i for i, name in enumerate(columns)}
    algorithms = list(dict.fromkeys(r[col["algorithm"]] for r in rows))
    robots = list(dict.fromkeys(r[col["robot"]] for r in rows))
    # only the libraries with a figure: one without (not installed) would get a legend entry
    libraries = list(dict.fromkeys(r[col["library"]] for r in rows
                                   if r[col["us_per_call"]] is not None))
    colors = plt.get_cmap("tab10").colors
    fig, axes = plt.subplots(1, len(algorithms), figsize=(3.6 * len(algorithms), 4),
                             sharey=True, squeeze=False)
    width = 0.8 / len(libraries)
    for ax, algorithm in zip(axes[0], algorithms):
        for k, library in enumerate(libraries):
            xs, ys = [], []
            for i, robot in enumerate(robots):
                us = [r[col["us_per_call"]] for r in rows if r[col["robot"]] == robot
                      and r[col["algorithm"]] == algorithm and r[col["library"]] == library
                      and r[col["us_per_call"]] is not None]
                if us:
                    xs.append(i + k * width)
                    ys.append(us[0])
            ax.bar(xs, ys, width, label=library, color=colors[k % len(colors)])
        ax.set_yscale("log")
        ax.set_title(algorithm)
        ax.set_xticks([i + 0.4 - width / 2 for i in range(len(robots))], robots)
    axes[0][0].set_ylabel("µs per call from Python")
    axes[0][-1].legend(fontsize=7)
    if title:
        fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
