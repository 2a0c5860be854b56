"""
``rbd_replay``: replay a rosbag2 through the dynamics, offline (default) or ``--live``.

    rbd_replay data/example_arm7 -o /tmp/replayed --all

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
import argparse
import contextlib
import math
import numbers
import os
import sys
import textwrap
import time
from pathlib import Path
from types import SimpleNamespace


import rbd_ros
from ..actuation import joint_parameters as joint_friction
from .. import outputs as table
from ..formats.text_files import read_text
from ..description.size_limits import DEFAULT_LIMITS
from . import (bag_io, dynamics, estimation, fleet, fleet_inputs, observing, report, segments,
               staging, writing)
from . import identify as identification
from .bag_io import ReplayError
from .dynamics import REFUSED, Batches, templates  # noqa: F401 (templates: re-exported)
from .errors import excerpt, shorten


def load(bag, *, topic, urdf, description_topic, floating_base, odom_topic, mimic):
    """
    (reader, descriptions, models, joint_states connections, odometry connections).

    ``descriptions``: [(log time ns or None, URDF text)], each change of the bag's
    ``description_topic`` (``segments``), or ``--urdf``'s alone; ``models`` theirs.
    """
    reader = bag_io.open_reader(bag)
    js_cons = bag_io.connection(reader, topic, bag_io.JOINT_STATE)
    if urdf is not None:
        descriptions = [(None, _read_urdf(str(urdf)))]
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
            models.append(rbd_ros.load_model(text, floating_base=floating_base, mimic=mimic))
        except (ValueError, OSError) as exc:
            raise ReplayError(f"cannot load the URDF{which}: {shorten(exc, 240)}") from exc
    odom_cons = []
    if floating_base:
        odom_cons = bag_io.connection(reader, odom_topic, bag_io.ODOMETRY, required=False)
        if not odom_cons:
            raise ReplayError(f"a floating base needs the base state: the bag has no "
                              f"nav_msgs/Odometry topic {excerpt(odom_topic)} (--odom-topic)")
    return reader, descriptions, models, js_cons, odom_cons


def _read_urdf(urdf):
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


def replay(bag, output=None, *, topic="/joint_states", urdf=None,
           description_topic="/robot_description", floating_base=False, odom_topic="/odom",
           mimic="coupled", outputs=table.DEFAULTS, window=11, order=3,
           max_joint_age=table.DEFAULT_MAX_JOINT_AGE,
           unknown_velocity=table.UNKNOWN_VELOCITY[0], acceleration="estimate",
           node_name="rbd_dynamics", storage="mcap", batch_size=4096, progress=None,
           report_dir=None, plots=True, live=False, rate=1.0, live_options=None,
           identify=None, prior_weight=None, model_params=None, urdf_dynamics=False,
           max_relative_std=10.0, identify_payload=None,
           observer_gain=table.DEFAULT_OBSERVER_GAIN,
           collision_thresholds=table.DEFAULT_COLLISION_THRESHOLD, contact_frame=""):
    """
    Replay ``bag`` offline (or ``live``) and return the report.

    Replay ``bag``; writes the output bag (and the report files when ``report_dir``) and
    returns the report (a dict; ``report["ticks"]`` / ``["torques"]`` hold the arrays).
    Both are written under temporary names next to their final ones and renamed into place
    when complete (``staging``); on an exception or an interrupt nothing is left.

    ``max_joint_age``, ``unknown_velocity``: the node's parameters of the same names (and
    defaults); ``acceleration``: "estimate" (Savitzky-Golay, ``window``, ``order``) or
    "zero" (the node without an acceleration_topic). ``identify`` ("least-squares" or
    "consistent"): also identify the inertial parameters from the answered messages with a
    known effort (``identify``); the report gets an ``identification`` section and
    ``report_dir`` an ``identified.urdf``. A message whose outputs are not finite is skipped,
    reason "refused" (``dynamics``). ``model_params`` (a joint parameter file's text) or
    ``urdf_dynamics`` (the URDF's ``<dynamics>``): every output written, and the report's
    errors, include the joint friction / armature (``rbd_ros.actuation``, as the node's
    ``joint_parameters_file`` / ``urdf_joint_dynamics``); not with ``live``.
    ``max_relative_std``: percent; an identified value whose std is above it is reported as
    not identified. ``identify_payload``: a link; the report gets a ``payload`` entry, the
    payload on it estimated from the same samples (``payload``). ``observer_gain``,
    ``collision_thresholds``, ``contact_frame``: the node's parameters of the observer's
    outputs (external_torques, collision, contact_wrench: ``observing``); the report gets
    their ``collisions`` events.
    """
    outputs, observed = observing.split_outputs(outputs, contact_frame)
    if live and observed:
        raise ReplayError("--live records the node's dynamics outputs only: not with "
                          f"{', '.join(observed)}")
    if live and (model_params or urdf_dynamics):
        raise ReplayError("--live plays the bag into a node without joint parameters: not "
                          "with --model-params / --urdf-dynamics")
    o = SimpleNamespace(
        bag=bag, topic=topic, floating_base=floating_base, odom_topic=odom_topic, mimic=mimic,
        outputs=_check_arguments(outputs, identify, floating_base, acceleration,
                                 identify_payload=identify_payload, window=window,
                                 order=order, batch_size=batch_size, rate=rate,
                                 max_joint_age=max_joint_age, prior_weight=prior_weight),
        window=window, order=order, acceleration=acceleration, node_name=node_name,
        rule=dict(max_joint_age=max_joint_age, unknown_velocity=unknown_velocity),
        storage=storage, batch_size=batch_size, progress=progress, plots=plots, live=live,
        rate=rate, live_options=live_options or {}, identify=identify,
        prior_weight=prior_weight, joint_parameters=(model_params, urdf_dynamics),
        max_relative_std=max_relative_std / 100, identify_payload=identify_payload,
        observer=observed, observed=None,
        observer_settings=(observer_gain, collision_thresholds, contact_frame, max_joint_age))
    output = Path(output) if output else Path(str(Path(bag).with_suffix("")) + "_replay")
    targets = [(output, "output bag", "-o")]
    if report_dir:
        targets.append((Path(report_dir), "report directory", "--report-dir"))
    clock = time.perf_counter()
    reader, descriptions, models, js_cons, odom_cons = load(
        bag, topic=topic, urdf=urdf, description_topic=description_topic,
        floating_base=floating_base, odom_topic=odom_topic, mimic=mimic)
    try:
        segments.check_options(descriptions, description_topic, live, identify)
        staged = staging.stage(targets)
        try:
            rep = _run(o, reader, (descriptions, models), (js_cons, odom_cons), staged,
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
        part.t = estimation.ticks(part.model, *part.inputs, window=o.window, order=o.order,
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
    (batches,) = _write(o, reader, [(0, model, t, joints)], js_ids, live_result, staged,
                        timing)
    t, tau = t.without(batches.refused, REFUSED), batches.tau[~batches.refused]
    rep = report.summarize(model, t, tau, timing, outputs=o.outputs, bag=str(o.bag),
                           output=str(staged[0].final), topic=o.topic, window=o.window,
                           order=o.order, acceleration=o.acceleration, rule=o.rule,
                           live=live_result.summary() if live_result else None,
                           refusal=refusal or batches.refusal)
    if o.observed:
        rep["collisions"] = o.observed[0].section()
    if o.identify_payload is not None:
        from . import payload
        rep["payload"] = payload.section(model, t, o.identify_payload, joints,
                                         o.max_relative_std)
    _finish(rep, model, t, tau, urdf_text, o, report_dir)
    return rep


def _write(o, reader, parts, js_ids, live_result, staged, timing):
    """Write the output bag (``writing.write``); return each part's ``dynamics.Batches``."""
    writer = bag_io.open_writer(staged[0].path, o.storage)
    clock = time.perf_counter()
    try:
        if o.observer:
            o.observed = observing.observe(parts, o, timing)
        batches = writing.write(reader, writer, parts, o.outputs, js_ids, live_result, timing,
                                node_name=o.node_name, batch_size=o.batch_size,
                                progress=o.progress, observed=o.observed)
    except BaseException:
        with contextlib.suppress(Exception):        # it is discarded: the first error counts
            writer.close()
        raise
    writer.close()
    timing["write"] = time.perf_counter() - clock - timing["dynamics"] - timing["encode"] \
        - timing.get("observer", 0.0)
    return batches


def _run_segments(o, reader, parts, js_ids, staged, timing):
    """Replay a bag whose description changes: one report per segment (``segments``)."""
    batches = _write(o, reader, [(p.first, p.model, p.t, p.joints) for p in parts], js_ids,
                     None, staged, timing)
    return segments.finish(o, parts, batches, staged, timing)


def _check_arguments(outputs, identify, floating_base, acceleration, **numbers):
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


def _finish(rep, model, t, tau, urdf_text, o, report_dir):
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
            if o.observed:
                rep["plots"] += [str(report_dir.final / os.path.basename(p))
                                 for p in plotting.observer_plots(model, o.observed[0], path)]


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


EPILOG = """\
outputs: the bag and the report directory are written as PARENT/.NAME.partial-XXXXXXXX/NAME
and renamed to their final names only when both are complete; neither may exist before.
Ctrl-C (SIGINT) or SIGTERM stops the replay (and the --live node) cleanly: the temporaries
are removed, nothing is left under the final names, and the same command can run again.
Skipped messages are counted by reason in the report: the node's rule (malformed,
incomplete, stale, ...) and "refused": outputs that would not be finite (finite but huge
inputs, e.g. velocities of 1e154); nothing is written for those.

exit status: 0 done; 2 bad arguments or input (also an output that exists or cannot be
written); 1 an error while writing (disk full), or --live disagrees with the offline
results; 130 stopped by SIGINT; 143 stopped by SIGTERM.

many bags (several BAG arguments, directories, @LIST files, or a fleet option): evaluated in
parallel on Dask (a local cluster, or --scheduler); -o DIR holds DIR/fleet_report (fleet.csv,
fleet.json, summary.txt, PNG plots), the output bags DIR/bags/NAME and reports
DIR/reports/NAME (not with --no-bag), and with --identify DIR/identified.urdf (and
DIR/joint_parameters.json with --friction/--armature). A bag that fails is reported in the
fleet report and the others go on; exit status 0 when a bag was evaluated, 1 when none."""


def parser():
    """Return the command line parser of ``rbd_replay``."""
    p = argparse.ArgumentParser(
        prog="rbd_replay", formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=EPILOG, description=textwrap.fill(
            "Replay a rosbag2 of joint_states through rbd_ros: torques (RNEA at the measured "
            "q, v and a Savitzky-Golay acceleration), ABA at the measured effort, optionally "
            "M^-1 and the derivatives; writes a new bag with the node's output topics, a "
            "per-joint error table and plots. Messages are answered or skipped by the "
            "dynamics node's own rule, with its parameters (--max-joint-age, "
            "--unknown-velocity, --acceleration zero for a node without "
            "acceleration_topic).", 90))
    p.add_argument("bag", nargs="+", help="input rosbag2 (directory, .mcap or .db3); "
                   "several bags, directories searched for bags, @LIST files: a fleet run")
    p.add_argument("-o", "--output", help="output bag directory, must not exist (default: "
                   "BAG_replay)")
    p.add_argument("--storage", choices=("mcap", "sqlite3"), default="mcap")
    p.add_argument("--topic", default="/joint_states", help="sensor_msgs/JointState topic")
    p.add_argument("--urdf", help="URDF file (default: the bag's --description-topic)")
    p.add_argument("--description-topic", default="/robot_description")
    p.add_argument("--floating-base", action="store_true",
                   help="free-flyer root; base state from --odom-topic")
    p.add_argument("--odom-topic", default="/odom", help="nav_msgs/Odometry of the base")
    p.add_argument("--mimic", choices=("coupled", "independent", "error"), default="coupled")
    p.add_argument("--outputs", default=",".join(table.DEFAULTS),
                   help=f"comma-separated, of {','.join(table.NAMES + observing.NAMES)}")
    p.add_argument("--all", action="store_true", help="every output")
    p.add_argument("--acceleration", choices=estimation.ACCELERATIONS, default="estimate",
                   help="estimate: Savitzky-Golay derivative of the velocity (the node's "
                   "commanded acceleration in --live); zero: a = 0, as the node without an "
                   "acceleration_topic")
    p.add_argument("--window", type=int, default=11, help="Savitzky-Golay window (samples)")
    p.add_argument("--order", type=int, default=3, help="Savitzky-Golay polynomial degree")
    p.add_argument("--max-joint-age", type=float, default=table.DEFAULT_MAX_JOINT_AGE,
                   help="the node's max_joint_age: s (log time); a message whose joints or "
                   "base odometry are older is skipped (0: never; default %(default)s)")
    p.add_argument("--unknown-velocity", choices=table.UNKNOWN_VELOCITY,
                   default=table.UNKNOWN_VELOCITY[0],
                   help="the node's unknown_velocity: a NaN, inf or absent velocity skips "
                   "the message (skip) or counts as 0 (zero); default %(default)s")
    p.add_argument("--node-name", default="rbd_dynamics", help="output topics: /NAME/...")
    p.add_argument("--batch-size", type=int, default=4096)
    p.add_argument("--report-dir", help="report.txt, report.json, plots; must not exist "
                   "(default: OUTPUT_report)")
    p.add_argument("--no-plots", action="store_true")
    p.add_argument("--no-progress", action="store_true")
    p.add_argument("--live", action="store_true",
                   help="play the bag into a dynamics_node over ROS 2 and record its outputs "
                   "(the node's log: REPORT_DIR/node.log)")
    p.add_argument("--rate", type=float, default=1.0, help="--live: playback speed factor")
    p.add_argument("--identify", nargs="?", const="consistent", default=None,
                   choices=tuple(identification.METHODS),
                   help="identify the inertial parameters from the bag (default method: "
                   "consistent); writes REPORT_DIR/identified.urdf")
    p.add_argument("--prior-weight", type=float, default=None,
                   help="--identify: weight of the prior toward the URDF's inertias "
                   "(default: 0 for least-squares, 1e-4 for consistent)")
    p.add_argument("--identify-payload", metavar="LINK", default=None,
                   help="estimate the payload on LINK (a link of the URDF) from the bag, the "
                   "robot otherwise known (the URDF, --model-params / --urdf-dynamics): "
                   "mass, centre of mass and inertia with their stds, in the report")
    p.add_argument("--max-relative-std", type=_percent, default=10.0, metavar="PERCENT",
                   help="--identify: a value whose standard deviation is above this "
                   "percentage of it is reported as not identified (default %(default)s)")
    observing.add_arguments(p)
    fleet.add_arguments(p)
    return p


def _percent(text):
    """Parse ``--max-relative-std``: a finite percentage > 0."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"must be a finite percentage > 0, got "
                                         f"{excerpt(text, 30)}")
    return value


def main(argv=None):
    """
    ``rbd_replay``: return the exit status (see ``EPILOG``).

    0 done; 2 bad arguments or input (argparse's status); 1 an error while writing or --live
    disagrees; 130 / 143 stopped by SIGINT / SIGTERM (nothing written).
    """
    with staging.GUARD:
        try:
            return _main(argv)
        except staging.Interrupted as exc:
            staging.GUARD.disarm()
            if sys.stderr.isatty():
                sys.stderr.write("\n")                 # after a progress bar
            print(f"rbd_replay: interrupted by {exc}: stopped; no output bag or report "
                  "written (temporaries removed)", file=sys.stderr)
            return exc.status


def _main(argv):
    args = parser().parse_args(argv)
    try:
        bags, many = fleet_inputs.expand(args.bag)
    except ReplayError as exc:
        print(f"rbd_replay: {shorten(exc, 600)}", file=sys.stderr)
        return 2
    if fleet.wanted(args, bags, many):
        return fleet.main(args, bags)
    args.bag = args.bag[0]
    params_text = None
    if args.model_params:                   # one bag with --identify-payload
        try:
            params_text = joint_friction.read_file(args.model_params)
        except ValueError as exc:
            print(f"rbd_replay: --model-params: {shorten(exc, 200)}", file=sys.stderr)
            return 2
    outputs = table.NAMES if args.all \
        else tuple(s.strip() for s in args.outputs.split(",") if s)
    output = args.output or str(Path(args.bag.rstrip("/")).with_suffix("")) + "_replay"
    try:
        rep = replay(args.bag, output, topic=args.topic, urdf=args.urdf,
                     description_topic=args.description_topic,
                     floating_base=args.floating_base, odom_topic=args.odom_topic,
                     mimic=args.mimic, outputs=outputs, window=args.window, order=args.order,
                     max_joint_age=args.max_joint_age, unknown_velocity=args.unknown_velocity,
                     acceleration=args.acceleration, node_name=args.node_name,
                     storage=args.storage, batch_size=args.batch_size,
                     progress=False if args.no_progress else None,
                     report_dir=args.report_dir or output + "_report",
                     plots=not args.no_plots, live=args.live, rate=args.rate,
                     identify=args.identify, prior_weight=args.prior_weight,
                     max_relative_std=args.max_relative_std,
                     identify_payload=args.identify_payload, model_params=params_text,
                     urdf_dynamics=args.urdf_dynamics, **observing.arguments(args))
    except ReplayError as exc:
        print(f"rbd_replay: {shorten(exc, 600)}", file=sys.stderr)
        return 2
    except OSError as exc:                      # writing: disk full, a path removed meanwhile
        print(f"rbd_replay: {shorten(exc, 300)} (no output written)", file=sys.stderr)
        return 1
    print(report.text(rep))
    return 1 if rep.get("live") and not rep["live"]["agree"] else 0


if __name__ == "__main__":
    sys.exit(main())
