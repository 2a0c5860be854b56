"""PNG plots of measured vs predicted torque, one per joint (matplotlib, Agg backend)."""
import os
import re

import numpy as np

from ..outputs import dof_names
from .report import joint_errors

# beyond it a value is not drawn: matplotlib's axis limits overflow on a span near 1.8e308
# (efforts of ±1.7e308 crashed the replay), and no robot has such torques
DRAWN = 1e150


def drawn(y):
    """Return ``y`` with the values beyond ±DRAWN (and non-finite) as NaN: gaps in a line."""
    y = np.asarray(y, np.float64)
    with np.errstate(invalid="ignore"):
        return np.where(np.abs(y) <= DRAWN, y, np.nan)


def torque_plots(model, t, tau, directory):
    """Write ``torque_<joint>.png`` per joint into ``directory``; return the paths."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    os.makedirs(directory, exist_ok=True)
    time = t.time - t.time[0] if len(t.time) else t.time
    paths = []
    for j, name in enumerate(model.joint_names):
        fig, (ax, ax_err) = plt.subplots(2, 1, figsize=(8, 4.5), sharex=True,
                                         gridspec_kw={"height_ratios": (3, 1)})
        ax.plot(time, drawn(t.effort[:, j]), lw=0.8, label="measured effort")
        ax.plot(time, drawn(tau[:, j]), lw=0.8, label="predicted τ (RNEA)")
        ax.set_ylabel("torque [N·m or N]")
        ax.set_title(f"{model.name}: {name}")
        ax.legend(loc="upper right", fontsize=8)
        with np.errstate(over="ignore", invalid="ignore"):
            ax_err.plot(time, drawn(tau[:, j] - t.effort[:, j]), lw=0.6, color="C3")
        ax_err.set_ylabel("pred − meas")
        ax_err.set_xlabel("time [s]")
        n, rms, largest = joint_errors(tau[:, j:j + 1], t.effort[:, j:j + 1])[0][:3]
        if n:                                      # the report's numbers (huge values too)
            ax_err.set_title(f"rms {rms:.3g}, max {largest:.3g}", fontsize=8)
        fig.tight_layout()
        path = os.path.join(directory, "torque_" + re.sub(r"[^A-Za-z0-9_.-]", "_", name)
                            + ".png")
        fig.savefig(path, dpi=80)
        plt.close(fig)
        paths.append(path)
    return paths


def observer_plots(model, observed, directory):
    """Write ``external_torque_<dof>.png`` (r against its threshold) per dof; the paths."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    os.makedirs(directory, exist_ok=True)
    time = observed.time - observed.time[0] if len(observed.time) else observed.time
    paths = []
    for j, name in enumerate(dof_names(model)):
        fig, ax = plt.subplots(figsize=(8, 3))
        ax.plot(time, drawn(observed.r[:, j]), lw=0.8, label="r (momentum observer)")
        for sign in (1, -1):
            ax.axhline(sign * observed.thresholds[j], color="C3", lw=0.6, ls="--")
        for event in observed.events:
            start = event["start"] - observed.time[0]
            end = (event["end"] if event["end"] is not None else observed.time[-1]) \
                - observed.time[0]
            ax.axvspan(start, end, color="C1", alpha=0.2)
        ax.set_ylabel("external torque [N·m or N]")
        ax.set_xlabel("time [s]")
        ax.set_title(f"{model.name}: {name} (dashed: threshold; shaded: in collision)")
        fig.tight_layout()
        path = os.path.join(directory, "external_torque_" + re.sub(r"[^A-Za-z0-9_.-]", "_",
                                                                   name) + ".png")
        fig.savefig(path, dpi=80)
        plt.close(fig)
        paths.append(path)
    return paths
