"""
The replay's report: how well the URDF's torques explain the measured efforts.

The replay's report: per joint, how well the URDF's torques (RNEA at the measured q, v
and the estimated acceleration) explain the measured efforts; skips; timing.

Per joint, over the answered messages whose effort of that joint is finite:
  rms    sqrt(mean((τ_pred - τ_meas)²))      max   max |τ_pred - τ_meas|
  corr   Pearson correlation of τ_pred and τ_meas (NaN when either is constant)
  rms_meas  sqrt(mean(τ_meas²)), the scale to read the errors against
"""
import json
import os

import numpy as np


def joint_errors(predicted, measured):
    """
    Per column: (count, rms, max, corr, rms_meas) over the rows where both are finite.

    Each statistic is computed on values divided by their largest magnitude, so that huge but
    finite values (1e200) give finite statistics instead of overflowing in the squares.
    """
    rows = []
    for j in range(predicted.shape[1]):
        ok = np.isfinite(measured[:, j]) & np.isfinite(predicted[:, j])
        p, m = predicted[ok, j], measured[ok, j]
        if not len(p):
            rows.append((0, np.nan, np.nan, np.nan, np.nan))
            continue
        with np.errstate(over="ignore"):
            err = p - m
        ps, ms = _unit(p), _unit(m)
        sp, sm = ps.std(), ms.std()
        corr = float(np.mean((ps - ps.mean()) * (ms - ms.mean())) / (sp * sm)) \
            if sp > 0 and sm > 0 else np.nan
        rows.append((int(len(p)), _rms(err), float(np.abs(err).max()), corr, _rms(m)))
    return rows


def _unit(x):
    """``x`` divided by its largest magnitude (unchanged when all zero)."""
    scale = np.abs(x).max()
    return x / scale if 0 < scale < np.inf else x


def _rms(x):
    """sqrt(mean(x²)) without overflow in the squares (inf only beyond the float range)."""
    scale = float(np.abs(x).max())
    if not 0 < scale < np.inf:
        return scale
    with np.errstate(over="ignore"):
        return float(scale * np.sqrt(np.mean((x / scale) ** 2)))


def summarize(model, t, tau, timing, *, outputs, bag, output, topic, window, order,
              acceleration="estimate", rule=None, live=None, refusal=None):
    """
    Return the report of a replay (a dict).

    The report of a replay (a dict): ``t`` the ticks (``estimation.Ticks``), ``tau`` the
    predicted torques of the answered messages; ``rule``: the node's parameters used;
    ``refusal``: (joint_states index, reason) of the first message refused, or None.
    """
    rows = joint_errors(tau, t.effort)
    n = t.messages
    total = sum(timing.values())
    rep = {
        "bag": bag, "output": output, "topic": topic, "model": model.name,
        "floating_base": model.floating_base, "outputs": list(outputs),
        "messages": n, "answered": int(len(t.index)), "skipped": dict(t.skipped),
        "skipped_total": int(sum(t.skipped.values())),
        "rule": dict(rule or {}),
        "effort_unknown": int((~t.effort_known).sum()),
        "odometry_ignored": int(t.odometry_ignored),
        "unknown_joint_names": list(t.unknown_names),
        "mimic_followers": t.mimic,
        "acceleration": ({"method": "Savitzky-Golay local polynomial fit of the velocity",
                          "window": window, "order": order, "time": t.time_source}
                         if acceleration == "estimate" else
                         {"method": "zero (the node without an acceleration_topic)",
                          "time": t.time_source}),
        "joints": [{"name": name, "n": c, "rms": r, "max": mx, "corr": co, "rms_meas": rm}
                   for name, (c, r, mx, co, rm) in zip(model.joint_names, rows)],
        "timing_s": {k: float(v) for k, v in timing.items()},
        "us_per_message": 1e6 * total / max(n, 1),
        "messages_per_s": n / total if total > 0 else float("inf"),
    }
    if refusal is not None:
        rep["first_refused"] = {"message": refusal[0], "reason": refusal[1]}
    if live is not None:
        rep["live"] = live
    rep["ticks"] = t
    rep["torques"] = tau
    return rep


def _f(x, spec):
    """``x`` formatted, or "n/a" (no data, a constant series, beyond the float range)."""
    width = int(spec.split(".")[0] or 0)
    return f"{'n/a':>{width}}" if x is None or not np.isfinite(x) else format(x, spec)


def text(rep):
    """Return the report as the text of report.txt, which ``rbd_replay`` prints."""
    if "segments" in rep:                     # the robot description changes in the bag
        return "\n".join([f"rbd_replay: {rep['bag']} ({rep['topic']}) -> {rep['output']}",
                          f"models {rep['model']}, messages {rep['messages']}, answered "
                          f"{rep['answered']}, skipped {rep['skipped_total']}"]
                         + _segment_lines(rep) + _timing_lines(rep))
    lines = [f"rbd_replay: {rep['bag']} ({rep['topic']}) -> {rep['output']}",
             f"model {rep['model']} ({'floating' if rep['floating_base'] else 'fixed'} base), "
             f"outputs: {', '.join(rep['outputs'])}",
             f"messages {rep['messages']}, answered {rep['answered']}, skipped "
             f"{rep['skipped_total']}"
             + "".join(f"; {k}: {v}" for k, v in rep["skipped"].items())]
    lines += _input_lines(rep) + _joint_lines(rep) + _timing_lines(rep) + _live_lines(rep)
    ident = rep.get("identification")
    if ident:
        from .identify import text as identification_text
        lines += identification_text(ident)
    if rep.get("payload"):
        from .payload import text as payload_text
        lines += payload_text(rep["payload"])
    if rep.get("collisions"):
        from .observing import text as collisions_text
        lines += collisions_text(rep["collisions"])
    return "\n".join(lines)


def _input_lines(rep):
    """Return the lines on the inputs: refusals, the rule, what was missing or ignored."""
    lines = []
    refused = rep.get("first_refused")
    if refused:
        lines.append(f"refused: {rep['skipped'].get('refused', 0)} messages whose dynamics are "
                     f"not finite (huge inputs), nothing written for them; the first, "
                     f"joint_states message {refused['message']}: {refused['reason']}")
    if rep["rule"]:
        lines.append("the node's rule: " + ", ".join(f"{k} {v}" for k, v in rep["rule"].items()))
    if rep["effort_unknown"]:
        lines.append(f"{rep['effort_unknown']} answered messages lack an effort: no "
                     "accelerations for them")
    if rep["odometry_ignored"]:
        lines.append(f"{rep['odometry_ignored']} odometry messages ignored (NaN/inf, a zero "
                     "quaternion or bytes that do not decode)")
    if rep["unknown_joint_names"]:
        lines.append(f"ignored joint names not in the URDF: {rep['unknown_joint_names'][:10]}")
    mimic = rep["mimic_followers"]
    if mimic["max"]:
        worst = max(mimic["max"], key=mimic["max"].get)
        lines.append(f"mimic joints: {len(mimic['max'])} followers recorded (the leaders' "
                     f"positions are used); {mimic['messages']} messages off their coupling by "
                     f"more than {mimic['tolerance']:g}, the largest {worst} "
                     f"({mimic['max'][worst]:.3g})")
    acc = rep["acceleration"]
    if "window" in acc:
        lines.append(f"acceleration: {acc['method']}, window {acc['window']}, degree "
                     f"{acc['order']}, times: {acc['time']}")
    else:
        lines.append(f"acceleration: {acc['method']}")
    return lines


def _joint_lines(rep):
    """Return the per-joint error table."""
    width = max([len(j["name"]) for j in rep["joints"]] + [5])
    lines = [f"{'joint':<{width}} {'n':>7} {'rms err':>10} {'max err':>10} {'corr':>7} "
             f"{'rms meas':>10}"]
    for j in rep["joints"]:
        lines.append(f"{j['name']:<{width}} {j['n']:>7} {_f(j['rms'], '10.4g')} "
                     f"{_f(j['max'], '10.4g')} {_f(j['corr'], '7.4f')} "
                     f"{_f(j['rms_meas'], '10.4g')}")
    return lines


def _live_lines(rep):
    """Return the line comparing the live node's answers with the offline ones (or none)."""
    live = rep.get("live")
    if not live:
        return []
    not_written = (f", {live['non_finite']} with NaN/inf not written"
                   if live.get("non_finite") else "")
    return [f"live: node answered {live['answered']} of {live['expected']} expected "
            f"messages, {live['unanswered']} not answered, {live['unexpected']} "
            f"unexpected answers; max difference to offline {live['max_diff']:.3g} "
            f"(tolerance {live['tolerance']:g}): {'AGREE' if live['agree'] else 'DISAGREE'} "
            f"({live['disagreeing']} disagreeing, {live['resent']} resent{not_written})"]


def _segment_lines(rep):
    """Return the lines of report.txt for the segments of ``rep``, each with its own text."""
    lines = [f"the robot description changes during the bag: {len(rep['segments'])} segments, "
             "each evaluated with the description in force"]
    for k, seg in enumerate(rep["segments"], 1):
        s = seg["segment"]
        when = s["description_log_time_ns"]
        lines.append(f"segment {k}: joint_states messages {s['first_message']}-"
                     f"{s['last_message']}, description {s['description'] + 1}"
                     + (f" (log time {when / 1e9:.6f} s)" if when is not None else ""))
        lines += ["  " + line for line in text(seg).splitlines()[1:]]
    return lines


def _timing_lines(rep):
    """Return the timing line of report.txt (none for a segment: the timing is the whole's)."""
    if "timing_s" not in rep:
        return []
    return ["timing: " + ", ".join(f"{k} {v:.3f} s" for k, v in rep["timing_s"].items())
            + f"; {rep['us_per_message']:.1f} us/message "
            f"({rep['messages_per_s']:.0f} messages/s)"]


def write(rep, directory):
    """
    Write report.txt and report.json (without the arrays) in ``directory``.

    report.json is strict JSON: a number that is not finite (an undefined correlation, no
    data) is null.
    """
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, "report.txt"), "w") as f:
        f.write(text(rep) + "\n")
    data = {k: v for k, v in rep.items() if k not in ("ticks", "torques")}
    if "segments" in data:
        data["segments"] = [{k: v for k, v in seg.items() if k not in ("ticks", "torques")}
                            for seg in data["segments"]]
    if "identification" in data:
        data["identification"] = {k: v for k, v in data["identification"].items()
                                  if k != "result"}
    with open(os.path.join(directory, "report.json"), "w") as f:
        json.dump(json_finite(data), f, indent=1, allow_nan=False)


def json_finite(x):
    """``x`` (dicts, lists, numbers, numpy values) for JSON: non-finite numbers as None."""
    if isinstance(x, dict):
        return {k: json_finite(v) for k, v in x.items()}
    if isinstance(x, (list, tuple, np.ndarray)):
        return [json_finite(v) for v in x]
    if isinstance(x, (bool, np.bool_)):
        return bool(x)
    if isinstance(x, (int, np.integer)):
        return int(x)
    if isinstance(x, (float, np.floating)):
        return float(x) if np.isfinite(x) else None
    return x
