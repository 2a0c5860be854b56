"""
``rbd_retime``: the time-optimal timing of a joint path, from files (``rbd_ros.retime``).

    rbd_retime robot.urdf path.yaml -o timed.yaml --effort-scale 0.8 --sample-period 0.01

PATH.yaml: a JointTrajectory (``rbd_ros.formats.trajectory_yaml``) whose points' positions are the
waypoints (every joint of the model once, any order; mimic followers may be named: ignored).
OUT.yaml: the same joints timed, every point with positions, velocities, accelerations,
effort and time_from_start (a follower's from its leader; its effort 0). Written through a
temporary file renamed into place, with the usual mode (0644 under umask 022).

Bounded before any work: ``-o`` must be a path where a regular file can be put (a FIFO, a
device, a directory there is refused, not replaced); PATH.yaml as
``trajectory_yaml.read`` bounds it (8 MiB, nesting, names × points); the URDF as
``rbd_ros.load_model``; scales in [1e-6, 1], acceleration limits >= 1e-3, grid 2 to 100,000
points, velocity sub-steps 1 to 32, at most 100,000 output points. Exit status 0 when
written, 2 for a bad input (one line on stderr saying why), 1 for anything else.
"""
import sys

import numpy as np

from .arguments import EXIT_BAD_INPUT, Parser, check_number


def parse_args(argv):
    """Return the command line's arguments."""
    ap = Parser(prog="rbd_retime", description=__doc__.split("\n\n")[0])
    ap.add_argument("urdf", help="the robot's URDF file")
    ap.add_argument("path", help="the waypoints: a JointTrajectory YAML file")
    ap.add_argument("-o", "--output", required=True, help="the timed JointTrajectory YAML")
    ap.add_argument("--velocity-scale", type=float, default=1.0)
    ap.add_argument("--effort-scale", type=float, default=1.0)
    ap.add_argument("--acceleration-limit", type=float, nargs="+", metavar="A",
                    help="one limit for every joint, or one per joint in the file's order")
    ap.add_argument("--sample-period", type=float, default=0.0,
                    help="s between output points (0, the default: TOPP-RA's grid points)")
    ap.add_argument("--grid", type=int, default=500, help="grid points in the path (500)")
    ap.add_argument("--velocity-substeps", type=int, default=1, metavar="N",
                    help="impose the velocity limits at N points of each grid interval "
                         "(1, the default: at the grid points, as toppra)")
    ap.add_argument("--joint-parameters", help="a joint parameter file (rbd_replay "
                    "--identify writes one): armature, friction, offset")
    ap.add_argument("--urdf-dynamics", action="store_true",
                    help="the URDF's <dynamics damping friction> as joint friction")
    return ap.parse_args(argv)


def main(argv=None):
    """Run the command line; return the exit status."""
    args = parse_args(sys.argv[1:] if argv is None else argv)
    try:
        duration, count = run(args)
    except ValueError as exc:
        print(f"rbd_retime: {_short(exc, 300)}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except OSError as exc:                  # not the input's fault (a full disk): 1
        print(f"rbd_retime: {_short(exc, 300)}", file=sys.stderr)
        return 1
    print(f"rbd_retime: {count} points, {duration:.4f} s -> {args.output}")
    return 0


def run(args):
    """Retime the file's path and write the answer; (duration, points). ValueError: bad input."""
    import rbd_ros
    from ..actuation import dynamics as actuation, joint_parameters
    from ..formats import trajectory_yaml
    from ..description.size_limits import DEFAULT_LIMITS
    from ..description.urdf_reader import read_source
    check_arguments(args)
    try:
        xml, _ = read_source(args.urdf, DEFAULT_LIMITS.max_bytes)
        model = rbd_ros.load_model(xml)
    except (ValueError, OSError) as exc:
        raise ValueError(f"{args.urdf}: {_short(exc)}") from None
    try:
        traj = trajectory_yaml.read(args.path)
    except ValueError as exc:
        raise ValueError(f"{args.path}: {exc}") from None
    followers = dict(model.coupling.followers) if model.coupling is not None else {}
    order = _order(model, traj.joint_names, followers)
    positions = traj.fields.get("positions")
    if positions is None:
        raise ValueError(f"{args.path}: the points have no positions")
    text = joint_parameters.read_file(args.joint_parameters) if args.joint_parameters else None
    act = actuation.load(model, xml, text, args.urdf_dynamics)
    r = rbd_ros.retime(model, positions[:, order], velocity_scale=args.velocity_scale,
                       effort_scale=args.effort_scale,
                       acceleration_limits=_acceleration(args.acceleration_limit, model, order),
                       joint_parameters=act, grid=args.grid,
                       sample_period=args.sample_period or None,
                       velocity_substeps=args.velocity_substeps,
                       max_samples=trajectory_yaml.MAX_POINTS)
    out = {}
    index = {n: k for k, n in enumerate(traj.joint_names)}
    for name, x, is_q in (("positions", r.q, True), ("velocities", r.v, False),
                          ("accelerations", r.a, False), ("effort", r.tau, False)):
        values = np.zeros((len(r.t), len(traj.joint_names)))
        values[:, order] = x
        for follower, (leader, multiplier, offset) in followers.items():
            if follower in index and name != "effort":
                values[:, index[follower]] = (multiplier * values[:, index[leader]]
                                              + (offset if is_q else 0.0))
        out[name] = values
    trajectory_yaml.write(args.output, trajectory_yaml.Trajectory(
        traj.joint_names, r.t, out, traj.frame_id))
    return r.duration, len(r.t)


def check_arguments(args):
    """Refuse (ValueError) an output path or a number out of range, before any file is read."""
    from ..formats.text_files import check_output
    from ..retiming import retimer
    check_output(args.output, "-o")
    for name in ("velocity_scale", "effort_scale"):
        retimer.check_scale("--" + name.replace("_", "-"), getattr(args, name))
    if args.acceleration_limit is not None:
        retimer.check_accelerations(args.acceleration_limit, len(args.acceleration_limit))
    retimer.check_substeps(args.velocity_substeps)
    check_number("--grid", args.grid, 2, retimer.MAX_GRID, " points")
    if args.sample_period != 0:
        check_number("--sample-period", args.sample_period, 1e-9, 3600.0, " s (0: the grid)")


def _order(model, names, followers):
    """Return, per model joint, its column in the file; ValueError unless each is there once."""
    unknown = sorted(set(names) - set(model.joint_names) - set(followers))
    missing = sorted(set(model.joint_names) - set(names))
    if unknown or missing:
        raise ValueError(f"joint_names must name each joint of the model once; unknown: "
                         f"{_short(unknown)}, missing: {_short(missing)}")
    index = {n: k for k, n in enumerate(names)}
    return np.array([index[n] for n in model.joint_names], np.intp)


def _acceleration(values, model, order):
    if values is None:
        return None
    if len(values) == 1:
        return np.full(model.nv, values[0])
    if len(values) != len(order):
        raise ValueError(f"--acceleration-limit: one value or {len(order)} (one per model "
                         f"joint, in the file's order), got {len(values)}")
    return np.asarray(values)[np.argsort(np.argsort(order))]


def _short(value, limit=200):
    text = str(value)
    return text if len(text) <= limit else text[:limit - 3] + "..."


if __name__ == "__main__":
    sys.exit(main())
