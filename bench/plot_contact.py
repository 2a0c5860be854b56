#!/usr/bin/env python3
"""
Plot the momentum observer's outputs replayed from a bag simulated by Pinocchio (README's figure).

The bundled 7-dof arm (``test/contact_sim.py``: Pinocchio's forward dynamics, a PD tracking
a sinusoid, joint_states at 1 kHz) with a 10 N force on link7 from 0.3 to 0.8 s, Gaussian
effort noise σ = 0.05 N·m (fixed seed), written to a bag and replayed by the command in the
caption. Top: r per joint (``~/external_torques``) and the simulation's τ_ext = Jᵀ F (dashed),
the collision thresholds (5σ) and the span ``~/collision`` says in collision; bottom: the
force of ``~/contact_wrench`` at link7 and the applied one (dashed). The caption states the
date, the machine, the commit and the command. Written through a temporary file renamed
into place. Needs Pinocchio (the ``test`` extra), rosbags and matplotlib.

    python bench/plot_contact.py [-o doc/img/contact_replay.png]
"""
import argparse
import datetime
import os
import platform
import shlex
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, os.pardir)
sys.path.insert(0, os.path.join(ROOT, "test"))
sys.path.insert(0, ROOT)

GAIN, THRESHOLD, SIGMA = 200.0, 0.25, 0.05
ON, OFF, END = 0.3, 0.8, 1.2
FORCE, POINT = (0.0, 10.0, 0.0), (0.1, 0.0, 0.05)        # N and m, in link7's frame
NODE = "/rbd_dynamics"


def simulate(bag):
    """Simulate the arm, write the bag; return the run (its τ_ext, the truth)."""
    from contact_sim import Contact, Simulation
    from oracle import Robot
    from rbd_ros.replay import bag_io
    robot = Robot("arm7")
    run = Simulation(robot).run(END, Contact("link7", np.array(POINT), np.array(FORCE), ON, OFF))
    noisy = run.tau + np.random.default_rng(7).normal(0.0, SIGMA, run.tau.shape)
    bag_io.write_joint_states(bag, robot.xml, robot.model.joint_names, run.t, run.q, run.v,
                              noisy)
    return robot, run


def read_outputs(path):
    """{output name: its messages in the bag ``path``}, the node's topics, in one pass."""
    from rbd_ros.replay import bag_io
    store, found = bag_io.typestore(), {}
    with bag_io.Reader(path) as bag:
        for con, _, raw in bag.messages():
            if con.topic.startswith(NODE + "/"):
                name = con.topic[len(NODE) + 1:]
                found.setdefault(name, []).append(store.deserialize_cdr(raw, con.msgtype))
    return found


def seconds(msg, t0):
    return msg.header.stamp.sec + 1e-9 * msg.header.stamp.nanosec - t0


def provenance():
    """(date, machine, commit) of this run."""
    def git(*args):
        done = subprocess.run(["git", "-C", ROOT, *args], capture_output=True, text=True)
        return done.stdout.strip()
    commit = git("rev-parse", "--short", "HEAD") or "unknown"
    if git("status", "--porcelain", "--untracked-files=no"):
        commit += " (+ uncommitted changes)"
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            cpu = next(line.split(":", 1)[1].strip() for line in f
                       if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    machine = f"{platform.system()} {platform.machine()}, {os.cpu_count()} CPUs ({cpu})"
    date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return date, machine, commit


def plot(robot, run, out_bag, caption, output):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    t0 = 1_700_000_000.0                                      # bag_io's first stamp
    found = read_outputs(out_bag)
    et = found["external_torques"]
    t = np.array([seconds(m, t0) for m in et])
    r = np.array([m.effort for m in et])
    collisions = [(seconds(m, t0), m.in_collision, m.isolated_link)
                  for m in found.get("collision", [])]
    wrenches = found["contact_wrench"]
    tw = np.array([seconds(m, t0) for m in wrenches])
    force = np.array([[m.wrench.force.x, m.wrench.force.y, m.wrench.force.z] for m in wrenches])
    fig, axes = plt.subplots(2, 1, figsize=(8.5, 6.2), sharex=True)
    ax = axes[0]
    for j, name in enumerate(robot.model.joint_names):
        line, = ax.plot(t, r[:, j], lw=0.8, label=name)
        ax.plot(run.t, run.tau_ext[:, j], lw=1.0, ls="--", color=line.get_color())
    for sign in (1, -1):
        ax.axhline(sign * THRESHOLD, color="k", lw=0.6, ls=":")
    k = 0
    while k < len(collisions):                 # each span in collision: its messages' links
        if not collisions[k][1]:
            k += 1
            continue
        start, links = collisions[k][0], []
        while k < len(collisions) and collisions[k][1]:
            links.append(collisions[k][2])
            k += 1
        end = collisions[k][0] if k < len(collisions) else t[-1]
        ax.axvspan(start, end, color="C3", alpha=0.10, lw=0)
        ax.text(start, ax.get_ylim()[1] * 0.95, " ~/collision: isolated link "
                + " → ".join(dict.fromkeys(links)), fontsize=7, va="top")
    ax.set_ylabel("r = ~/external_torques [N·m]")
    ax.legend(ncol=4, fontsize=7, loc="lower left")
    ax.set_title(f"rbd_replay of a bag simulated by Pinocchio: 7-dof arm, 10 N on link7 "
                 f"from {ON} to {OFF} s, effort noise σ = {SIGMA} N·m\nsolid: the observer "
                 f"(K = {GAIN:g}/s); dashed: the truth Jᵀ F; dotted: the thresholds (5σ)",
                 fontsize=8)
    ax = axes[1]
    for k, axis in enumerate("xyz"):
        line, = ax.plot(tw, force[:, k], lw=0.8, label=f"f{axis}")
        applied = np.where((run.t >= ON) & (run.t < OFF), FORCE[k], 0.0)
        ax.plot(run.t, applied, lw=1.0, ls="--", color=line.get_color())
    ax.set_ylabel("~/contact_wrench force [N]\n(link7's axes)")
    ax.set_xlabel("time [s] from the first message")
    ax.legend(fontsize=7, loc="upper right")
    fig.text(0.01, 0.005, caption, fontsize=6, family="monospace", va="bottom")
    fig.tight_layout(rect=(0, 0.07, 1, 1))
    fd, tmp = tempfile.mkstemp(suffix=".png", dir=os.path.dirname(os.path.abspath(output)))
    os.close(fd)
    try:
        fig.savefig(tmp, dpi=110)
        os.replace(tmp, output)
    except BaseException:
        os.unlink(tmp)
        raise


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-o", "--output", default=os.path.join(ROOT, "doc", "img",
                                                           "contact_replay.png"))
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="plot_contact_") as tmp:
        bag, out_bag = os.path.join(tmp, "contact.bag"), os.path.join(tmp, "replayed")
        robot, run = simulate(bag)
        command = ["rbd_replay", bag, "--outputs", "external_torques,collision,contact_wrench",
                   "--observer-gain", str(GAIN), "--collision-thresholds", str(THRESHOLD),
                   "--contact-frame", "link7", "-o", out_bag, "--no-progress"]
        done = subprocess.run([sys.executable, "-m", "rbd_ros.replay", *command[1:]],
                              cwd=ROOT, capture_output=True, text=True,
                              env=dict(os.environ, PYTHONPATH=os.path.abspath(ROOT)))
        if done.returncode:
            raise SystemExit(f"rbd_replay failed:\n{done.stdout}{done.stderr}")
        date, machine, commit = provenance()
        shown = shlex.join(command).replace(tmp + os.sep, "")
        words = shown.split(" --")
        caption = (f"{date}; {machine}; commit {commit}; made by bench/plot_contact.py:\n"
                   f"{' --'.join(words[:3])}\n    --{' --'.join(words[3:])}")
        plot(robot, run, out_bag, caption, args.output)
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
