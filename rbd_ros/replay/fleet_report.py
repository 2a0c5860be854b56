"""
The fleet report: one row per bag, a summary over the bags, plots.

``fleet.csv`` and ``fleet.json`` (strict JSON: null for an undefined number) hold one row per
bag: name, path, status (``ok`` / ``failed`` and the reason), robot, start time of the
recording (UTC, its first log time), duration, messages, answered, skipped by reason, and per
joint the RMS and max torque error (predicted - measured effort). ``summary.txt``: the
distribution of each joint's RMS error over the bags (min, median, 90th percentile, max), the
worst bags by overall RMS error, the error against the recording date (and its trend per
day), the identification when there was one. Plots (PNG): ``joint_rms.png`` (per joint, the
RMS error of every bag), ``error_vs_date.png``, ``worst_bags.png``.
"""
import csv
import datetime
import json
import os

import numpy as np

from ..identification import uncertainty as identification_uncertainty
from .report import json_finite

WORST = 10


def row(name, bag, info, partial=None, reason=None, role="train"):
    """
    Make a bag's row: ``partial`` its merged ``fleet_tasks.Partial``, ``reason`` if failed.

    ``role``: "train" (a bag the identification fits) or "validation" (held out of it).
    """
    start = info.get("start") if info else None
    out = {"name": name, "bag": str(bag), "status": "failed" if reason else "ok", "set": role,
           "reason": reason or "", "robot": "", "start": _date(start),
           "start_ns": start, "duration_s": (info["end"] - info["start"]) * 1e-9
           if info else None, "messages": None, "answered": None, "skipped": {},
           "rms": None, "joints": []}
    if partial is not None and not reason:
        joints = partial.errors.joints(partial.joints)
        n = sum(j["n"] for j in joints)
        sse = sum(j["rms"] ** 2 * j["n"] for j in joints if j["n"])
        out.update(robot=partial.robot, messages=partial.messages, answered=partial.answered,
                   skipped=dict(partial.skipped), joints=joints,
                   rms=float(np.sqrt(sse / n)) if n else None, outputs=partial.outputs)
    return out


def _date(ns):
    if ns is None:
        return ""
    return datetime.datetime.fromtimestamp(ns * 1e-9, datetime.timezone.utc).isoformat(
        timespec="seconds")


def write(directory, rows, identification=None, plots=True):
    """Write fleet.csv, fleet.json, summary.txt and the plots into ``directory``."""
    os.makedirs(directory, exist_ok=True)
    _csv(os.path.join(directory, "fleet.csv"), rows)
    lines = summary(rows, identification)
    with open(os.path.join(directory, "fleet.json"), "w") as f:
        ident = {k: v for k, v in (identification or {}).items() if k != "result"} or None
        json.dump(json_finite({"bags": rows, "identification": ident}), f, indent=1,
                  allow_nan=False)
    with open(os.path.join(directory, "summary.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    if plots and any(r["status"] == "ok" for r in rows):
        _plots(directory, rows)
    return lines


def _csv(path, rows):
    reasons = sorted({k for r in rows for k in r["skipped"]})
    joints = []
    for r in rows:
        joints += [j["name"] for j in r["joints"] if j["name"] not in joints]
    head = ["name", "bag", "status", "set", "reason", "robot", "start", "duration_s",
            "messages", "answered"] + [f"skipped {k}" for k in reasons] + ["rms"] + \
        [f"{s} {j}" for j in joints for s in ("rms", "max")]
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(head)
        for r in rows:
            per = {j["name"]: j for j in r["joints"]}
            w.writerow([r[k] for k in head[:10]] + [r["skipped"].get(k, 0) for k in reasons]
                       + [_cell(r["rms"])] + [_cell(per.get(j, {}).get(s)) for j in joints
                                              for s in ("rms", "max")])


def _cell(x):
    return "" if x is None or not np.isfinite(x) else repr(float(x))


def summary(rows, identification=None):
    """Return the lines of summary.txt."""
    ok = [r for r in rows if r["status"] == "ok"]
    failed = [r for r in rows if r["status"] != "ok"]
    lines = [f"fleet: {len(rows)} bags, {len(ok)} evaluated, {len(failed)} failed; "
             f"{sum(r['messages'] for r in ok)} joint_states messages, "
             f"{sum(r['answered'] for r in ok)} answered"]
    lines += [f"  FAILED {r['name']}: {r['reason']}" for r in failed]
    names = []
    for r in ok:
        names += [j["name"] for j in r["joints"] if j["name"] not in names]
    if names:
        width = max(len(n) for n in names + ["joint"])
        lines.append("RMS torque error over the bags (N·m or N):")
        lines.append(f"{'joint':<{width}} {'bags':>5} {'min':>10} {'median':>10} "
                     f"{'p90':>10} {'max':>10}")
        for name in names:
            x = np.array([j["rms"] for r in ok for j in r["joints"]
                          if j["name"] == name and j["n"]])
            if len(x):
                q = np.percentile(x, [0, 50, 90, 100])
                cells = " ".join(f"{v:>10.4g}" for v in q)
                lines.append(f"{name:<{width}} {len(x):>5} {cells}")
    ranked = sorted((r for r in ok if r["rms"] is not None), key=lambda r: -r["rms"])
    if ranked:
        lines.append("worst bags (overall RMS error): " + ", ".join(
            f"{r['name']} {r['rms']:.4g}" for r in ranked[:WORST]))
        dated = sorted((r for r in ranked if r["start_ns"]), key=lambda r: r["start_ns"])
        lines.append("error against recording date: " + ", ".join(
            f"{r['start'][:10]} {r['rms']:.4g}" for r in dated[:50]))
        if len({r["start_ns"] for r in dated}) > 1:
            days = np.array([r["start_ns"] for r in dated]) * 1e-9 / 86400
            slope = np.polyfit(days - days[0], [r["rms"] for r in dated], 1)[0]
            lines.append(f"trend: {slope:+.4g} per day (least-squares line over the bags)")
    if identification:
        lines += identification_lines(identification)
    return lines


def identification_lines(sec):
    """Return the identification's lines of summary.txt."""
    if "error" in sec:
        return [f"identification REFUSED: {sec['error']}"]
    kinds = ", ".join(sec["kinds"]) or "inertias only"
    lines = [f"identification ({sec['method']}, prior weight {sec['prior_weight']:g}; "
             f"{kinds}) on {sec['samples']} samples of {sec['bags']} bags: "
             f"{sec['identifiable']} identifiable combinations of {sec['parameters']} "
             "parameters; " + ("physically consistent" if sec["consistent"]
                               else f"NOT physically consistent ({sec['reason']})"),
             f"  RMS torque error: {sec['rms_before']:.4g} with the URDF, "
             f"{sec['rms_after']:.4g} identified"]
    if sec.get("joint_sigma"):
        lines.append("  weighted per joint by 1/sigma, sigma (residual RMS of a first fit): "
                     + ", ".join(f"{k} {v:.4g}" for k, v in sec["joint_sigma"].items()))
    if sec.get("validation"):
        lines += validation_lines(sec["validation"])
    if sec.get("uncertainty"):
        lines += identification_uncertainty.text_lines(sec["uncertainty"])
    lines += [f"  {k}: {sec[k]}" for k in ("urdf", "parameters_file") if sec.get(k)]
    return lines


def validation_lines(val, indent="  "):
    """Return the lines of a held-out validation: RMS per joint before and after."""
    width = max([len(j["name"]) for j in val["joints"]] + [7])
    lines = [f"{indent}validation on {val['bags']} bags not in the fit ({val['samples']} "
             "samples): RMS torque error",
             f"{indent}{'joint':<{width}} {'URDF':>11} {'identified':>11}"]
    lines += [f"{indent}{j['name']:<{width}} {j['rms_before']:>11.4g} {j['rms_after']:>11.4g}"
              for j in val["joints"]]
    lines.append(f"{indent}{'overall':<{width}} {val['rms_before']:>11.4g} "
                 f"{val['rms_after']:>11.4g}")
    return lines


def _plots(directory, rows):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ok = [r for r in rows if r["status"] == "ok" and r["rms"] is not None]
    names = []
    for r in ok:
        names += [j["name"] for j in r["joints"] if j["name"] not in names]
    data = [[j["rms"] for r in ok for j in r["joints"] if j["name"] == n and j["n"]]
            for n in names]
    fig, ax = plt.subplots(figsize=(max(6, 0.8 * len(names)), 4))
    ax.boxplot(data)
    ax.set_xticks(range(1, len(names) + 1), names)
    ax.set_ylabel("RMS torque error per bag")
    ax.tick_params(axis="x", rotation=45)
    _save(fig, directory, "joint_rms.png")
    dated = [r for r in ok if r["start_ns"]]
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.plot([datetime.datetime.fromtimestamp(r["start_ns"] * 1e-9, datetime.timezone.utc)
             for r in dated], [r["rms"] for r in dated], "o")
    ax.set_xlabel("recording start (UTC)")
    ax.set_ylabel("overall RMS torque error")
    fig.autofmt_xdate()
    _save(fig, directory, "error_vs_date.png")
    worst = sorted(ok, key=lambda r: -r["rms"])[:WORST]
    fig, ax = plt.subplots(figsize=(7, 0.4 * len(worst) + 1.5))
    ax.barh([r["name"] for r in worst][::-1], [r["rms"] for r in worst][::-1])
    ax.set_xlabel("overall RMS torque error")
    _save(fig, directory, "worst_bags.png")


def _save(fig, directory, name):
    import matplotlib.pyplot as plt
    fig.tight_layout()
    fig.savefig(os.path.join(directory, name), dpi=90)
    plt.close(fig)
