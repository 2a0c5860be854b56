"""
The replay of one rosbag2 through the dynamics, offline (default) or ``--live``: :func:`replay`.

Offline: the bag is read twice (rosbags): first the joint_states (and odometry) to build the
node's ticks (``estimation``, with the node's tick rule and parameters), then every message is
copied to the output bag, each answered joint_states message followed by what the node would
have published for it (``rbd_ros.outputs``: the outputs table and their computation, in
batches with the core's batch API), stamped as the node does, logged at the input's log time.
``--live`` plays the bag into a dynamics_node (``live``), records its answers into the output
bag instead, and checks them against the offline computation.

A message whose outputs are not finite is skipped, reason "refused" (``dynamics``). The bag and
the report are written under temporary names and renamed into place when complete; SIGINT and
SIGTERM stop the replay cleanly, with nothing left (``staging``).
"""
import contextlib
import dataclasses
import math
import numbers
import os
import time
from pathlib import Path

import rbd_ros
from .. import outputs as table
from ..formats.text_files import read_text
from ..outputs import whole_body
from ..description.size_limits import DEFAULT_LIMITS
from . import (bag_io, dynamics, observing, recorded_ticks, report, segments, staging,
               writing)
from . import identify as identification
from .bag_io import ReplayError
from .dynamics import REFUSED, Batches
from .errors import excerpt, shorten
from .options import ReplayOptions, plan


def load(bag, *, topic, urdf, description_topic, floating_base, odom_topic, mimic):
    """
    (reader, descriptions, models, joint_states connections, odometry connections).

    ``descriptions``: [(log time ns or None, URDF text)], each change of the bag's
    ``description_topic`` (``segments``), or ``--urdf``'s alone; ``models`` theirs.
    """
    reader = bag_io.open_reader(bag)
    js_cons = bag_io.connection(reader, topic, bag_io.JOINT_STATE)
    if urdf is not None:
        descriptions = [(None, read_urdf_argument(str(urdf)))]
    else:
        descriptions = bag_io.read_descriptions(reader, description_topic)
        if not descriptions:
            raise ReplayError(f"no URDF: the bag has no {excerpt(description_topic)} message "
                              "(std_msgs/String); pass --urdf FILE")
    models = []
    for k, (_, text) in enumerate(descriptions):
        which = f" (description {k + 1} of {len(descriptions)})" if len(descriptions) > 1 \
            else ""
        try:
            models.append(table.check_base(
                rbd_ros.load_model(text, floating_base=floating_base, mimic=mimic)))
        except (ValueError, OSError) as exc:
            raise ReplayError(f"cannot load the URDF{which}: {shorten(exc, 240)}") from exc
    odom_cons = []
    if floating_base:
        odom_cons = bag_io.connection(reader, odom_topic, bag_io.ODOMETRY, required=False)
        if not odom_cons:
            raise ReplayError(f"a floating base needs the base state: the bag has no "
                              f"nav_msgs/Odometry topic {excerpt(odom_topic)} (--odom-topic)")
    return reader, descriptions, models, js_cons, odom_cons


def read_urdf_argument(urdf):
    """Return the URDF text of ``--urdf``: a file's content, or the argument when it is XML."""
    if urdf.lstrip().startswith("<"):
        return urdf
    if not os.path.exists(urdf):
        raise ReplayError(f"--urdf {excerpt(urdf)}: no such file (nor URDF XML)")
    try:
        return read_text(urdf, DEFAULT_LIMITS.max_bytes)
    except ValueError as exc:
        raise ReplayError(f"--urdf {excerpt(urdf)}: cannot read it as a URDF file: "
                          f"{shorten(exc, 120)}") from None


def replay(bag, output=None, options=None, *, progress=None, **settings):
    """
    Replay ``bag`` offline (or ``live``) and return the report.

    Replay ``bag``; writes the output bag (and the report files when ``report_dir``) and
    returns the report (a dict; ``report["ticks"]`` / ``["torques"]`` hold the arrays).
    Both are written under temporary names next to their final ones and renamed into place
    when complete (``staging``); on an exception or an interrupt nothing is left.

    ``options``: a :class:`~rbd_ros.replay.options.ReplayOptions` (None: the defaults);
    ``settings``: any of its fields by name, over it (``replay(bag, out, window=21)``; an
    unknown name is a TypeError). ``progress``: False for no progress bar. A message whose
    outputs are not finite is skipped, reason "refused" (``dynamics``).
    """
    o = dataclasses.replace(options or ReplayOptions(), **settings)
    outputs, observed = observing.split_outputs(o.outputs, o.contact_frame)
    outputs = _whole_body_outputs(outputs, o.end_effector_frame, o.floating_base, o.live)
    if o.live and observed:
        raise ReplayError("--live records the node's dynamics outputs only: not with "
                          f"{', '.join(observed)}")
    if o.live and (o.model_params or o.urdf_dynamics):
        raise ReplayError("--live plays the bag into a node without joint parameters: not "
                          "with --model-params / --urdf-dynamics")
    outputs = check_arguments(outputs, o.identify, o.floating_base, o.acceleration,
                              identify_payload=o.identify_payload, window=o.window,
                              order=o.order, batch_size=o.batch_size, rate=o.rate,
                              max_joint_age=o.max_joint_age, prior_weight=o.prior_weight)
    steps = plan(bag, o, outputs, observed, progress)
    report_dir = o.report_dir
    output = Path(output) if output else Path(str(Path(bag).with_suffix("")) + "_replay")
    targets = [(output, "output bag", "-o")]
    if report_dir:
        targets.append((Path(report_dir), "report directory", "--report-dir"))
    clock = time.perf_counter()
    reader, descriptions, models, js_cons, odom_cons = load(
        bag, topic=o.topic, urdf=o.urdf, description_topic=o.description_topic,
        floating_base=o.floating_base, odom_topic=o.odom_topic, mimic=o.mimic)
    try:
        segments.check_options(descriptions, o.description_topic, o.live, o.identify,
                               o.identify_payload)
        staged = staging.stage(targets)
        try:
            rep = _run(steps, reader, (descriptions, models), (js_cons, odom_cons), staged,
                       clock)
            staging.commit(staged)
        except BaseException:
            staging.discard(staged)
            raise
    finally:
        reader.close()
    return rep


def _run(o, reader, described, cons, staged, clock):
    """Replay into the temporaries ``staged`` (bag, report directory) and return the report."""
    timing = {}
    js_ids = {c.id for c in cons[0]}
    cons = cons[0] + cons[1]
    inputs = _read_inputs(reader, cons, js_ids)
    timing["read"] = time.perf_counter() - clock
    if not inputs[0]:
        raise ReplayError(f"topic {excerpt(o.topic)} has no messages")
    clock = time.perf_counter()
    parts = segments.split(described[0], inputs)
    for part in parts:
        part.model = described[1][part.description]
        part.joints = dynamics.joint_model(part.model, part.text, *o.joint_parameters)
        part.t = recorded_ticks.ticks(part.model, *part.inputs, window=o.window, order=o.order,
                                      acceleration=o.acceleration, **o.rule)
    timing["estimate"] = time.perf_counter() - clock
    if len(parts) > 1:
        return _run_segments(o, reader, parts, js_ids, staged, timing)
    model, urdf_text, joints, t = parts[0].model, parts[0].text, parts[0].joints, parts[0].t
    report_dir = staged[1] if len(staged) > 1 else None
    live_result = refusal = None
    if o.live:                           # the node must not be expected to answer a refused one
        clock = time.perf_counter()
        screen = Batches(model, t, o.outputs, o.batch_size, {}, encode=False)
        screen.run()
        t, refusal = t.without(screen.refused, REFUSED), screen.refusal
        timing["screen"] = time.perf_counter() - clock
        from . import live as live_mode
        live_result = live_mode.play(
            reader, model, urdf_text, t, cons, js_ids, o.outputs, odom_topic=o.odom_topic,
            rate=o.rate, floating_base=o.floating_base, mimic=o.mimic,
            acceleration=o.acceleration, node_name=o.node_name,
            log_path=report_dir.path / "node.log" if report_dir else None,
            **o.rule, **o.live_options)
    (batches,), observed = _write(o, reader, [(0, model, t, joints)], js_ids, live_result,
                                  staged, timing)
    t, tau = t.without(batches.refused, REFUSED), batches.tau[~batches.refused]
    rep = report.summarize(model, t, tau, timing, outputs=o.outputs, bag=str(o.bag),
                           output=str(staged[0].final), topic=o.topic, window=o.window,
                           order=o.order, acceleration=o.acceleration, rule=o.rule,
                           live=live_result.summary() if live_result else None,
                           refusal=refusal or batches.refusal)
    if observed:
        rep["collisions"] = observed[0].section()
    if o.identify_payload is not None:
        from . import payload
        rep["payload"] = payload.section(model, t, o.identify_payload, joints,
                                         o.max_relative_std)
    _finish(rep, model, t, tau, urdf_text, o, report_dir, observed)
    return rep


def _write(o, reader, parts, js_ids, live_result, staged, timing):
    """
    Write the output bag (``writing.write``).

    Return each part's ``dynamics.Batches`` and each part's observer (``observing.Observed``;
    None without the observer's outputs).
    """
    writer = bag_io.open_writer(staged[0].path, o.storage)
    clock = time.perf_counter()
    observed = None
    try:
        if o.observer:
            observed = observing.observe(parts, o, timing)
        batches = writing.write(reader, writer, parts, o.outputs, js_ids, live_result, timing,
                                node_name=o.node_name, batch_size=o.batch_size,
                                progress=o.progress, observed=observed,
                                frame=o.end_effector_frame)
    except BaseException:
        with contextlib.suppress(Exception):        # it is discarded: the first error counts
            writer.close()
        raise
    writer.close()
    timing["write"] = time.perf_counter() - clock - timing["dynamics"] - timing["encode"] \
        - timing.get("observer", 0.0)
    return batches, observed


def _run_segments(o, reader, parts, js_ids, staged, timing):
    """Replay a bag whose description changes: one report per segment (``segments``)."""
    batches, observed = _write(o, reader, [(p.first, p.model, p.t, p.joints) for p in parts],
                               js_ids, None, staged, timing)
    return segments.finish(o, parts, batches, observed, staged, timing)


def check_arguments(outputs, identify, floating_base, acceleration, **numbers):
    """Return the outputs to compute (torques always, table order); ReplayError if bad."""
    if numbers.pop("identify_payload", None) is not None:
        identify = identify or "payload"
    if identify is not None and (floating_base or acceleration != "estimate"):
        raise ReplayError("--identify and --identify-payload need a fixed base (the base "
                          "wrench is not measured) and the estimated acceleration")
    for name, value in numbers.items():
        what = _bad_number(name, value)
        if what:
            raise ReplayError(f"--{name.replace('_', '-')} must be {what}, got "
                              f"{excerpt(value, 30)}")
    if numbers["window"] < numbers["order"] + 1:
        raise ReplayError(f"--window ({numbers['window']}) must be at least --order + 1 "
                          f"({numbers['order'] + 1}) samples")
    try:
        return table.check_outputs(set(outputs) | {"torques"})
    except ValueError as exc:
        raise ReplayError(shorten(exc)) from None


def _whole_body_outputs(outputs, frame, floating_base, live):
    """Return ``outputs`` checked for the whole-body ones' needs (``--all``: those that can)."""
    outputs = tuple(outputs)
    every = set(outputs) >= set(table.NAMES)       # --all: what this bag can give
    needs = {"end_effector": (bool(frame), "--end-effector-frame LINK"),
             "centroidal_momentum": (floating_base, "--floating-base")}
    for name, (met, what) in needs.items():
        if name in outputs and not met:
            if every:
                outputs = tuple(n for n in outputs if n != name)
            else:
                raise ReplayError(f"--outputs {name} needs {what}")
    if live and every:                             # --all --live: the dynamics outputs
        outputs = tuple(n for n in outputs if n not in whole_body.NAMES)
    if live and set(outputs) & set(whole_body.NAMES):
        raise ReplayError("--live records the node's dynamics outputs only: not with "
                          f"{', '.join(sorted(set(outputs) & set(whole_body.NAMES)))}")
    return outputs


def _bad_number(name, value):
    """Say what a numeric argument must be when ``value`` is not that, else return None."""
    if name == "prior_weight" and value is None:
        return None
    if name in ("window", "order", "batch_size"):
        low = 0 if name == "order" else 1
        ok = isinstance(value, numbers.Integral) and not isinstance(value, bool) \
            and value >= low
        return None if ok else f"an integer >= {low}"
    ok = isinstance(value, numbers.Real) and math.isfinite(value) \
        and (value > 0 if name == "rate" else value >= 0)
    return None if ok else "a finite number " + ("> 0" if name == "rate" else ">= 0")


def _finish(rep, model, t, tau, urdf_text, o, report_dir, observed):
    """
    Add the identification to the report ``rep``; write the report files and plots.

    Into ``report_dir`` (a ``staging.Staged``, or None); the report names the final paths.
    """
    path = report_dir.path if report_dir else None
    if o.identify is not None:
        try:
            rep["identification"] = identification.run(model, t, urdf_text, o.identify,
                                                       o.prior_weight, path,
                                                       o.max_relative_std)
        except ValueError as exc:
            raise ReplayError(shorten(exc, 300)) from exc
        if path:
            rep["identification"]["urdf"] = str(report_dir.final / "identified.urdf")
    if path:
        report.write(rep, path)
        if o.plots:
            from . import plots as plotting
            rep["plots"] = [str(report_dir.final / os.path.basename(p))
                            for p in plotting.torque_plots(model, t, tau, path)]
            if observed:
                rep["plots"] += [str(report_dir.final / os.path.basename(p))
                                 for p in plotting.observer_plots(model, observed[0], path)]


def _read_inputs(reader, cons, js_ids):
    """
    Read the joint_states and odometry messages of ``cons`` in log-time order.

    (joint_states bytes, their log times, odometry bytes, their log times, for each
    odometry message the number of joint_states messages before it) in log-time order.
    """
    js_raws, js_log, odom_raws, odom_log, odom_before = [], [], [], [], []
    for con, stamp, raw in reader.messages(connections=cons):
        if con.id in js_ids:
            js_raws.append(raw)
            js_log.append(stamp)
        else:
            odom_raws.append(raw)
            odom_log.append(stamp)
            odom_before.append(len(js_raws))
    return js_raws, js_log, odom_raws, odom_log, odom_before
