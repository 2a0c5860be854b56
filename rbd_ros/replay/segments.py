"""
A bag whose robot_description changes: each part evaluated with the description in force.

The node loads each description that comes on its topic and computes every later
joint_states message with it. The replay follows the same stream: the bag's descriptions
(``bag_io.read_descriptions``: each change, in log-time order) cut the joint_states into
segments, each evaluated (ticks, outputs, errors) with its own model, and the report has one
section per segment. The messages before the first description are evaluated with it (a
latched description is recorded when the recorder subscribes, often after the first joint
states). ``--urdf`` gives one model for the whole bag, as before.

``--live`` (one node, one description), ``--identify`` (one model's parameters) and
``--identify-payload`` (a payload on one model) are refused for such a bag, with the reason.
"""
import os
from types import SimpleNamespace

import numpy as np

from . import report
from .dynamics import REFUSED
from .errors import ReplayError, excerpt


def check_options(descriptions, topic, live, identify, identify_payload=None):
    """Refuse (ReplayError) the options that need one description for a bag of several."""
    if len(descriptions) < 2:
        return
    why = ("--live plays the bag into one node with one description" if live
           else "--identify fits the parameters of one model" if identify
           else "--identify-payload estimates the payload of one model"
           if identify_payload is not None else None)
    if why:
        raise ReplayError(f"the bag's {excerpt(topic)} changes {len(descriptions) - 1} times: "
                          f"{why}; pass --urdf to use one description for the whole bag")


def split(descriptions, inputs):
    """
    Return the segments of the joint_states ``inputs`` (``one_bag._read_inputs``'s tuple).

    ``descriptions``: [(log time ns or None, text)]. Each segment: ``description`` (its
    index), ``log_time``, ``text``, ``first`` (its first joint_states message's index in the
    bag), ``count`` and ``inputs`` (its part of ``inputs``, odometry included: the odometry
    messages between its first and its last joint_states). Segments without a joint_states
    message are left out.
    """
    js_raws, js_log, odom_raws, odom_log, odom_before = inputs
    if len(descriptions) == 1:
        return [SimpleNamespace(description=0, log_time=descriptions[0][0],
                                text=descriptions[0][1], first=0, count=len(js_raws),
                                inputs=inputs)]
    times = np.array([t for t, _ in descriptions], np.int64)
    which = np.maximum(np.searchsorted(times, np.asarray(js_log, np.int64), "right") - 1, 0)
    before = np.asarray(odom_before, np.int64)
    out = []
    for k, (log_time, text) in enumerate(descriptions):
        rows = np.flatnonzero(which == k)
        if not len(rows):
            continue
        a, b = int(rows[0]), int(rows[-1]) + 1
        odom = np.flatnonzero((before > a if out else before >= 0) & (before <= b)) \
            if len(before) else np.zeros(0, int)
        out.append(SimpleNamespace(
            description=k, log_time=log_time, text=text, first=a, count=b - a,
            inputs=(js_raws[a:b], js_log[a:b], [odom_raws[i] for i in odom],
                    [odom_log[i] for i in odom], [int(before[i]) - a for i in odom])))
    return out


def combine(reports, parts, bag, output, topic):
    """Return the report of a segmented replay: totals, and each segment's report."""
    merged = {}
    for rep in reports:
        for key, n in rep["skipped"].items():
            merged[key] = merged.get(key, 0) + n
    for rep, part in zip(reports, parts):
        rep["segment"] = {"description": part.description, "description_log_time_ns":
                          part.log_time, "first_message": part.first,
                          "last_message": part.first + part.count - 1}
        rep.pop("timing_s"), rep.pop("us_per_message"), rep.pop("messages_per_s")
    first = reports[0]
    return {
        "bag": bag, "output": output, "topic": topic,
        "model": " -> ".join(r["model"] for r in reports),
        "floating_base": first["floating_base"], "outputs": first["outputs"],
        "messages": sum(r["messages"] for r in reports),
        "answered": sum(r["answered"] for r in reports), "skipped": merged,
        "skipped_total": sum(merged.values()), "rule": first["rule"],
        "effort_unknown": sum(r["effort_unknown"] for r in reports),
        "odometry_ignored": sum(r["odometry_ignored"] for r in reports),
        "segments": reports}


def finish(o, parts, batches, observed, staged, timing):
    """
    Return the report of a segmented replay; write its files (``staged``: as ``one_bag._run``).

    ``batches``: each part's ``dynamics.Batches`` (``writing.write``), ``observed`` its
    observer or None (``observing.observe``); plots per segment,
    in ``REPORT_DIR/segment_K``.
    """
    reports = []
    for part, done in zip(parts, batches):
        t, tau = part.t.without(done.refused, REFUSED), done.tau[~done.refused]
        refusal = done.refusal and (done.refusal[0] + part.first, done.refusal[1])
        reports.append(report.summarize(
            part.model, t, tau, timing, outputs=o.outputs, bag=str(o.bag),
            output=str(staged[0].final), topic=o.topic, window=o.window, order=o.order,
            acceleration=o.acceleration, rule=o.rule, refusal=refusal))
        if observed:
            reports[-1]["collisions"] = observed[len(reports) - 1].section()
        part.t, part.tau = t, tau
    rep = combine(reports, parts, str(o.bag), str(staged[0].final), o.topic)
    total = sum(timing.values())
    rep.update(timing_s={k: float(v) for k, v in timing.items()},
               us_per_message=1e6 * total / max(rep["messages"], 1),
               messages_per_s=rep["messages"] / total if total > 0 else float("inf"))
    report_dir = staged[1] if len(staged) > 1 else None
    if report_dir:
        report.write(rep, report_dir.path)
        if o.plots:
            from . import plots as plotting
            rep["plots"] = []
            for k, part in enumerate(parts, 1):
                folder = report_dir.path / f"segment_{k}"
                folder.mkdir()
                rep["plots"] += [str(report_dir.final / folder.name / os.path.basename(p))
                                 for p in plotting.torque_plots(part.model, part.t, part.tau,
                                                                folder)]
    return rep
