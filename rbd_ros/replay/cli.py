"""
``rbd_replay``: its command line; one bag replays in ``one_bag``, several in ``fleet``.

    rbd_replay data/example_arm7 -o /tmp/replayed --all
"""
import argparse
import math
import os
import sys
import textwrap
from pathlib import Path

from .. import outputs as table
from ..actuation import joint_parameters
from . import fleet, fleet_inputs, fleet_options, observing, recorded_ticks, report, staging
from . import identify as identification
from .bag_io import ReplayError
from .errors import excerpt, shorten
from .one_bag import replay


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
    _input_arguments(p)
    _rule_arguments(p)
    _writing_arguments(p)
    _identification_arguments(p)
    observing.add_arguments(p)
    fleet_options.add_arguments(p)
    return p


def _input_arguments(p):
    """Add the bag, its topics and the model: what is read."""
    p.add_argument("bag", nargs="+", help="input rosbag2 (directory, .mcap or .db3); "
                   "several bags, directories searched for bags, @LIST files: a fleet run")
    p.add_argument("-o", "--output", help="output bag directory, must not exist (default: "
                   "NAME_replay in the working directory, NAME the bag's name; NAME_replay_2, "
                   "... when that or its report directory exists)")
    p.add_argument("--storage", choices=("mcap", "sqlite3"), default="mcap")
    p.add_argument("--topic", default="/joint_states", help="sensor_msgs/JointState topic")
    p.add_argument("--urdf", help="URDF file (default: the bag's --description-topic)")
    p.add_argument("--description-topic", default="/robot_description")
    p.add_argument("--floating-base", action="store_true",
                   help="free-flyer root; base state from --odom-topic")
    p.add_argument("--odom-topic", default="/odom", help="nav_msgs/Odometry of the base")
    p.add_argument("--mimic", choices=("coupled", "independent", "error"), default="coupled")


def _rule_arguments(p):
    """Add the outputs, the acceleration and the node's rule: what, and for which messages."""
    p.add_argument("--outputs", default=",".join(table.DEFAULTS),
                   help=f"comma-separated, of {','.join(table.NAMES + observing.NAMES)}")
    p.add_argument("--all", action="store_true", help="every output")
    p.add_argument("--end-effector-frame", default="", metavar="LINK",
                   help="the end_effector output's link (the node's end_effector_frame)")
    p.add_argument("--acceleration", choices=recorded_ticks.ACCELERATIONS, default="estimate",
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


def _writing_arguments(p):
    """Add the output bag, the report and the live run: where and how the results go."""
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


def _identification_arguments(p):
    """Add the identification of the inertial parameters and of the payload."""
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


def default_output(bag, directory):
    """
    Return the output bag of a run without ``-o``: a fresh ``NAME_replay`` in ``directory``.

    Never beside the bag (a source tree, a read-only disk); ``NAME_replay_2``, ``_3``, ...
    when that name or its ``_report`` directory exists, so that runs never collide.
    """
    base = os.path.join(directory, Path(bag.rstrip("/")).with_suffix("").name + "_replay")
    candidate, number = base, 1
    while os.path.lexists(candidate) or os.path.lexists(candidate + "_report"):
        number += 1
        candidate = f"{base}_{number}"
    return candidate


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
    if fleet_options.wanted(args, bags, many):
        return fleet.main(args, bags)
    args.bag = args.bag[0]
    params_text = None
    if args.model_params:                   # one bag with --identify-payload
        try:
            params_text = joint_parameters.read_file(args.model_params)
        except ValueError as exc:
            print(f"rbd_replay: --model-params: {shorten(exc, 200)}", file=sys.stderr)
            return 2
    outputs = table.NAMES if args.all \
        else tuple(s.strip() for s in args.outputs.split(",") if s)
    output = args.output or default_output(args.bag, os.getcwd())
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
                     urdf_dynamics=args.urdf_dynamics, **observing.arguments(args),
                     end_effector_frame=args.end_effector_frame)
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
