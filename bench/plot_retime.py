#!/usr/bin/env python3
"""
Plot a retimed trajectory's torques against the effort limits (the README's figure).

The bundled 7-dof arm, 8 waypoints, effort limits × 0.4, velocity limits (no acceleration limit):
``rbd_ros.retime`` at 5 ms, each joint's τ / (effort limit × scale) and v / velocity limit
over time, where TOPP-RA runs along the limits. Written through a temporary file renamed
into place.

    python bench/plot_retime.py [-o doc/img/retime_torques.png]
"""
import argparse
import os
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, os.pardir))

import rbd_ros  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-o", "--output", default=os.path.join(HERE, os.pardir, "doc", "img",
                                                           "retime_torques.png"))
    args = ap.parse_args()
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    m = rbd_ros.load_model(rbd_ros.robots.path("rbd_arm7"))
    rng = np.random.default_rng(3)
    mid = 0.5 * (m.lower + m.upper)
    w = rng.uniform(mid + 0.4 * (m.lower - mid), mid + 0.4 * (m.upper - mid), (8, m.nq))
    scale = 0.4
    r = rbd_ros.retime(m, w, effort_scale=scale, grid=500, sample_period=0.005)
    fig, axes = plt.subplots(2, 1, figsize=(8, 5.5), sharex=True)
    for j, name in enumerate(m.joint_names):
        axes[0].plot(r.t, r.tau[:, j] / (scale * m.effort_limit[j]), lw=1, label=name)
        axes[1].plot(r.t, r.v[:, j] / m.velocity_limit[j], lw=1)
    for ax, what in zip(axes, (f"τ / (effort limit × {scale})", "v / velocity limit")):
        ax.axhline(1.0, color="k", lw=0.8, ls="--")
        ax.axhline(-1.0, color="k", lw=0.8, ls="--")
        ax.set_ylabel(what)
        ax.set_ylim(-1.15, 1.15)
    axes[0].legend(ncol=4, fontsize=7, loc="lower right")
    axes[0].set_title(f"rbd_ros.retime: 7-dof arm, 8 waypoints, {r.duration:.2f} s "
                      f"(effort limits × {scale}, velocity limits)", fontsize=9)
    axes[1].set_xlabel("t [s]")
    fig.tight_layout()
    folder = os.path.dirname(os.path.abspath(args.output))
    os.makedirs(folder, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".retime-", suffix=".png", dir=folder)
    os.close(fd)
    fig.savefig(tmp, dpi=90)
    os.replace(tmp, args.output)
    print(f"{args.output}: {r.duration:.3f} s, {len(r.t)} points, "
          f"effort binds at {int((r.binding == 3).sum())} of them")


if __name__ == "__main__":
    main()
