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
"""
import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

import rbd_ros
from .. import outputs as table
from . import bag_io, estimation, report
from . import identify as identification
from .bag_io import ReplayError


class Progress:
    """A one-line progress bar on stderr (only when enabled)."""

    def __init__(self, total, label, enabled):
        self.total, self.label, self.enabled = max(int(total), 1), label, enabled
        self.last = 0.0

    def update(self, done, force=False):
        now = time.monotonic()
        if not self.enabled or (now - self.last < 0.2 and not force):
            return
        self.last = now
        frac = min(done / self.total, 1.0)
        bar = "#" * int(30 * frac)
        sys.stderr.write(f"\r{self.label} [{bar:<30}] {done}/{self.total}")
        if force:
            sys.stderr.write("\n")
        sys.stderr.flush()


def load(bag, *, topic, urdf, description_topic, floating_base, odom_topic, mimic):
    """(reader, model, URDF text, joint_states connections, odometry connections)."""
    reader = bag_io.open_reader(bag)
    js_cons = bag_io.connection(reader, topic, bag_io.JOINT_STATE)
    if urdf is not None:
        text = Path(urdf).read_text() if os.path.isfile(urdf) else urdf
        if not text.lstrip().startswith("<"):
            raise ReplayError(f"--urdf {urdf!r} is neither a file nor URDF XML")
    else:
        text = bag_io.read_description(reader, description_topic)
        if text is None:
            raise ReplayError(f"no URDF: the bag has no {description_topic} message "
                              "(std_msgs/String); pass --urdf FILE")
    try:
        model = rbd_ros.load_model(text, floating_base=floating_base, mimic=mimic)
    except (ValueError, OSError) as exc:
        raise ReplayError(f"cannot load the URDF: {exc}") from exc
    odom_cons = []
    if floating_base:
        odom_cons = bag_io.connection(reader, odom_topic, bag_io.ODOMETRY, required=False)
        if not odom_cons:
            raise ReplayError(f"a floating base needs the base state: the bag has no "
                              f"nav_msgs/Odometry topic {odom_topic!r} (--odom-topic)")
    return reader, model, text, js_cons, odom_cons


def compute(model, t, outputs, lo, hi):
    """Compute the outputs of ticks lo..hi: {name: (rows: tick indices into lo..hi, arrays)}."""
    return table.compute_batch(model, outputs, t.q[lo:hi], t.v[lo:hi], t.a[lo:hi],
                               t.tau_in[lo:hi], t.effort_known[lo:hi])


def templates(model, outputs):
    """{name: cdr.Template} of the outputs ``outputs`` (names) for ``model``."""
    return {k: bag_io.output_template(table.BY_NAME[k], model) for k in outputs}


def replay(bag, output=None, *, topic="/joint_states", urdf=None,
           description_topic="/robot_description", floating_base=False, odom_topic="/odom",
           mimic="error", outputs=table.DEFAULTS, window=11, order=3,
           max_joint_age=table.DEFAULT_MAX_JOINT_AGE,
           unknown_velocity=table.UNKNOWN_VELOCITY[0], acceleration="estimate",
           node_name="rbd_dynamics", storage="mcap", batch_size=4096, progress=None,
           report_dir=None, plots=True, live=False, rate=1.0, live_options=None,
           identify=None, prior_weight=None):
    """
    Replay ``bag`` offline (or ``live``) and return the report.

    Replay ``bag``; writes the output bag (and the report files when ``report_dir``) and
    returns the report (a dict; ``report["ticks"]`` / ``["torques"]`` hold the arrays).

    ``max_joint_age``, ``unknown_velocity``: the node's parameters of the same names (and
    defaults); ``acceleration``: "estimate" (Savitzky-Golay, ``window``, ``order``) or
    "zero" (the node without an acceleration_topic). ``identify`` ("least-squares" or
    "consistent"): also identify the inertial parameters from the answered messages with a
    known effort (``identify``); the report gets an ``identification`` section and
    ``report_dir`` an ``identified.urdf``.
    """
    outputs = _check_arguments(outputs, identify, floating_base, acceleration)
    timing = {}
    clock = time.perf_counter()
    reader, model, urdf_text, js_cons, odom_cons = load(
        bag, topic=topic, urdf=urdf, description_topic=description_topic,
        floating_base=floating_base, odom_topic=odom_topic, mimic=mimic)
    js_ids = {c.id for c in js_cons}
    inputs = _read_inputs(reader, js_cons + odom_cons, js_ids)
    timing["read"] = time.perf_counter() - clock
    if not inputs[0]:
        raise ReplayError(f"topic {topic!r} has no messages")
    clock = time.perf_counter()
    rule = dict(max_joint_age=max_joint_age, unknown_velocity=unknown_velocity)
    t = estimation.ticks(model, *inputs, window=window, order=order,
                         acceleration=acceleration, **rule)
    timing["estimate"] = time.perf_counter() - clock

    live_result = None
    if live:
        from . import live as live_mode
        live_result = live_mode.play(reader, model, urdf_text, t, js_cons + odom_cons, js_ids,
                                     outputs, odom_topic=odom_topic, rate=rate,
                                     floating_base=floating_base, mimic=mimic,
                                     acceleration=acceleration, node_name=node_name,
                                     **rule, **(live_options or {}))

    output = Path(output) if output else Path(str(Path(bag).with_suffix("")) + "_replay")
    writer = bag_io.open_writer(output, storage)
    clock = time.perf_counter()
    try:
        tau = _write(reader, writer, model, t, outputs, js_ids, live_result, timing,
                     node_name=node_name, batch_size=batch_size, progress=progress)
    finally:
        writer.close()
        reader.close()
    timing["write"] = time.perf_counter() - clock - timing["dynamics"] - timing["encode"]
    rep = report.summarize(model, t, tau, timing, outputs=outputs, bag=str(bag),
                           output=str(output), topic=topic, window=window, order=order,
                           acceleration=acceleration, rule=rule,
                           live=live_result.summary() if live_result else None)
    _finish(rep, model, t, tau, urdf_text, identify, prior_weight, report_dir, plots)
    return rep


def _check_arguments(outputs, identify, floating_base, acceleration):
    """Return the outputs to compute (torques always, table order); ReplayError if bad."""
    if identify is not None and (floating_base or acceleration != "estimate"):
        raise ReplayError("--identify needs a fixed base (the base wrench is not measured) "
                          "and the estimated acceleration")
    try:
        return table.check_outputs(set(outputs) | {"torques"})
    except ValueError as exc:
        raise ReplayError(str(exc)) from None


def _finish(rep, model, t, tau, urdf_text, identify, prior_weight, report_dir, plots):
    """Add the identification to the report ``rep``; write the report files and plots."""
    if identify is not None:
        try:
            rep["identification"] = identification.run(model, t, urdf_text, identify,
                                                       prior_weight, report_dir)
        except ValueError as exc:
            raise ReplayError(str(exc)) from exc
    if report_dir:
        report.write(rep, report_dir)
        if plots:
            from . import plots as plotting
            rep["plots"] = plotting.torque_plots(model, t, tau, report_dir)


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


def _write(reader, writer, model, t, outputs, js_ids, live_result, timing, *, node_name,
           batch_size, progress):
    """
    Write the output bag: the input messages and the outputs of each.

    Copy every message of ``reader`` to ``writer``, each answered joint_states message
    followed by its outputs (computed offline, or the node's answers with ``live_result``);
    returns the torques (answered messages, joints).
    """
    copies = {}
    for con in reader.connections:
        key = (con.topic, con.msgtype)
        if key not in copies:
            copies[key] = bag_io.copy_connection(writer, con)
    out_cons = {k: bag_io.add_connection(writer, f"/{node_name}/{k}", table.BY_NAME[k].msgtype)
                for k in outputs}
    batches = _Batches(model, t, outputs, batch_size, timing, encode=live_result is None)
    bar = Progress(reader.message_count, "replay", progress if progress is not None
                   else (sys.stderr.isatty() and reader.message_count > 20000))
    m, done = -1, 0
    for con, stamp, raw in reader.messages():
        writer.write(copies[(con.topic, con.msgtype)], stamp, raw)
        done += 1
        if con.id not in js_ids:
            continue
        m += 1
        items = batches.items(m)
        bar.update(done)
        for name in outputs:
            item = items.get(name)
            if live_result is not None:
                for live_raw in live_result.compare(m, name, item):
                    writer.write(out_cons[name], stamp, live_raw)
            elif item is not None:
                writer.write(out_cons[name], stamp, item)
    bar.update(done, force=True)
    return batches.tau


class _Batches:
    """
    The outputs of the answered messages, computed ``batch_size`` ticks at a time.

    The outputs of the answered messages, computed ``batch_size`` ticks at a time: per
    joint_states message, {output: bytes} (``encode``) or {output: arrays}.
    """

    def __init__(self, model, t, outputs, batch_size, timing, encode):
        self.model, self.t, self.outputs = model, t, outputs
        self.batch_size, self.timing, self.encode = batch_size, timing, encode
        self.templates = templates(model, outputs) if encode else None
        self.tick_of = np.full(t.messages, -1)
        self.tick_of[t.index] = np.arange(len(t.index))
        self.tau = np.full((len(t.index), len(model.joint_names)), np.nan)
        self.lo = self.hi = 0
        self.chunk = {}
        timing["dynamics"] = timing["encode"] = 0.0

    def items(self, m):
        """{output: bytes or arrays} of joint_states message ``m`` ({} when not answered)."""
        k = self.tick_of[m]
        if k < 0:
            return {}
        if k >= self.hi:
            self._compute(k)
        return {name: item for name, rows in self.chunk.items()
                if (item := rows.get(k - self.lo)) is not None}

    def _compute(self, lo):
        t = self.t
        self.lo, self.hi = lo, min(lo + self.batch_size, len(t.index))
        c0 = time.perf_counter()
        arrays = compute(self.model, t, self.outputs, self.lo, self.hi)
        c1 = time.perf_counter()
        self.tau[self.lo:self.hi] = arrays["torques"][1][0]
        self.chunk = {}
        for name, (rows, values) in arrays.items():
            if self.encode:
                k = self.lo + rows
                encoded = self.templates[name].encode(t.sec[k], t.nanosec[k], *values)
                self.chunk[name] = dict(zip(rows.tolist(), encoded))
            else:
                self.chunk[name] = {r: tuple(x[i] for x in values)
                                    for i, r in enumerate(rows.tolist())}
        self.timing["dynamics"] += c1 - c0
        self.timing["encode"] += time.perf_counter() - c1


def parser():
    """Return the command line parser of ``rbd_replay``."""
    p = argparse.ArgumentParser(
        prog="rbd_replay", description="Replay a rosbag2 of joint_states through rbd_ros: "
        "torques (RNEA at the measured q, v and a Savitzky-Golay acceleration), ABA at the "
        "measured effort, optionally M^-1 and the derivatives; writes a new bag with the "
        "node's output topics, a per-joint error table and plots. Messages are answered or "
        "skipped by the dynamics node's own rule, with its parameters (--max-joint-age, "
        "--unknown-velocity, --acceleration zero for a node without acceleration_topic).")
    p.add_argument("bag", help="input rosbag2 (directory, .mcap or .db3)")
    p.add_argument("-o", "--output", help="output bag directory (default: BAG_replay)")
    p.add_argument("--storage", choices=("mcap", "sqlite3"), default="mcap")
    p.add_argument("--topic", default="/joint_states", help="sensor_msgs/JointState topic")
    p.add_argument("--urdf", help="URDF file (default: the bag's --description-topic)")
    p.add_argument("--description-topic", default="/robot_description")
    p.add_argument("--floating-base", action="store_true",
                   help="free-flyer root; base state from --odom-topic")
    p.add_argument("--odom-topic", default="/odom", help="nav_msgs/Odometry of the base")
    p.add_argument("--mimic", choices=("error", "independent"), default="error")
    p.add_argument("--outputs", default=",".join(table.DEFAULTS),
                   help=f"comma-separated, of {','.join(table.NAMES)}")
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
    p.add_argument("--report-dir", help="report.txt, report.json, plots (default: OUTPUT_report)")
    p.add_argument("--no-plots", action="store_true")
    p.add_argument("--no-progress", action="store_true")
    p.add_argument("--live", action="store_true",
                   help="play the bag into a dynamics_node over ROS 2 and record its outputs")
    p.add_argument("--rate", type=float, default=1.0, help="--live: playback speed factor")
    p.add_argument("--identify", nargs="?", const="consistent", default=None,
                   choices=tuple(identification.METHODS),
                   help="identify the inertial parameters from the bag (default method: "
                   "consistent); writes REPORT_DIR/identified.urdf")
    p.add_argument("--prior-weight", type=float, default=None,
                   help="--identify: weight of the prior toward the URDF's inertias "
                   "(default: 0 for least-squares, 1e-4 for consistent)")
    return p


def main(argv=None):
    """``rbd_replay``: 0 on success, 2 for bad input, 1 when --live disagrees."""
    args = parser().parse_args(argv)
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
                     identify=args.identify, prior_weight=args.prior_weight)
    except ReplayError as exc:
        print(f"rbd_replay: {exc}", file=sys.stderr)
        return 2
    print(report.text(rep))
    return 1 if rep.get("live") and not rep["live"]["agree"] else 0


if __name__ == "__main__":
    sys.exit(main())
