"""
``rbd_excite URDF -o TRAJ``: an excitation trajectory for identification (``excitation``).

    rbd_excite robot.urdf -o excite.yaml --friction --armature [--model-params params.json]

Writes ``TRAJ`` (a ``trajectory_msgs/JointTrajectory`` as YAML in
``rbd_ros.formats.trajectory_yaml``'s
layout, which ``rbd_retime`` reads: positions, velocities, accelerations, effort and
time_from_start of every point) and, with
``--bag DIR`` (default: TRAJ without its suffix + ``_bag``), a rosbag2 of the commanded
``joint_states`` (position, velocity, effort) and the URDF. Prints the condition number of
the identification matrix against the best of random trajectories of the same bandwidth
scaled into the same limits.

Everything is checked before the design (which takes seconds to minutes): the URDF is read
as every entry reads one (a regular file of at most 4 MiB: a FIFO or ``/dev/zero`` is
refused), TRAJ must be a path where a regular file can be put (a FIFO, a device, a directory
there is refused, not replaced), the bag must not exist (its directory is created under a
temporary name next to it and renamed when both outputs are complete), and the numbers
must be in range: ``--period`` 0.5 to 3,600 s, ``--rate`` 1 to 10,000 Hz and above twice
the highest harmonic's frequency (2 × harmonics / period), ``--harmonics`` 2 to 20,
``--periods`` 1 to 1,000, ``--max-iter`` 0 to 1,000, ``--seed`` >= 0, and at most 100,000
samples written (periods × period × rate). Exit status 0; 2, with one line on stderr, for
bad arguments or input.
"""
import os
import sys

import numpy as np

from .arguments import EXIT_BAD_INPUT, Parser, check_number

MAX_SAMPLES = 100_000


def parser():
    """Return the command line parser of ``rbd_excite``."""
    from ..identification.excitation import HARMONICS, PERIOD
    p = Parser(prog="rbd_excite", description=__doc__.splitlines()[1])
    p.add_argument("urdf", help="URDF file (fixed base)")
    p.add_argument("-o", "--output", required=True, help="trajectory YAML to write")
    p.add_argument("--bag", help="rosbag2 of the commanded joint_states (must not exist)")
    p.add_argument("--friction", action="store_true", help="also excite viscous and Coulomb "
                   "friction and offsets (their columns in the identification matrix)")
    p.add_argument("--armature", action="store_true", help="also excite rotor inertias")
    p.add_argument("--model-params", help="joint parameter file: its friction and armature "
                   "count in the efforts checked against the limits, and its values are "
                   "the magnitudes the design's relative stds are taken against")
    p.add_argument("--period", type=float, default=PERIOD, help="s (default %(default)s)")
    p.add_argument("--harmonics", type=int, default=HARMONICS)
    p.add_argument("--periods", type=int, default=2, help="periods written (default 2)")
    p.add_argument("--rate", type=float, default=100.0, help="samples per second written")
    p.add_argument("--max-iter", type=int, default=60, help="L-BFGS-B iterations")
    p.add_argument("--seed", type=int, default=0)
    return p


def _check(args):
    """Refuse (ValueError) a number out of its range: before any file is read."""
    check_number("--period", args.period, 0.5, 3600.0, " s")
    check_number("--harmonics", args.harmonics, 2, 20)
    check_number("--periods", args.periods, 1, 1000)
    check_number("--max-iter", args.max_iter, 0, 1000)
    check_number("--seed", args.seed, 0, 2 ** 63 - 1)
    check_number("--rate", args.rate, 1.0, 10_000.0, " Hz")
    nyquist = 2.0 * args.harmonics / args.period
    if args.rate <= nyquist:
        raise ValueError(f"--rate {args.rate:g} Hz does not resolve the highest harmonic "
                         f"({args.harmonics} / {args.period:g} s): it must be above "
                         f"{nyquist:g} Hz")
    count = int(round(args.periods * args.period * args.rate))
    if count > MAX_SAMPLES:
        raise ValueError(f"{args.periods} periods of {args.period:g} s at {args.rate:g} Hz "
                         f"would be {count} samples: at most {MAX_SAMPLES}")


def _outputs(args):
    """Check both outputs; return (the YAML's absolute path, the staged bag)."""
    from ..formats.text_files import check_output
    from ..replay import staging
    out = check_output(args.output, "-o")
    bag = os.path.abspath(args.bag or os.path.splitext(args.output)[0] + "_bag")
    if bag == out or out.startswith(bag + os.sep):
        raise ValueError("-o and --bag overlap: choose separate paths")
    return out, staging.stage([(bag, "joint_states bag", "--bag")])[0]


def run(args):
    """Design, write and return (series, its condition number, the random one's, bag path)."""
    from ..replay import staging
    _check(args)
    out, bag = _outputs(args)
    try:
        series, cond, random_cond = _design_and_write(args, out, bag.path)
        staging.commit([bag])
    except BaseException:
        staging.discard([bag])
        raise
    return series, cond, random_cond, str(bag.final)


def _design_and_write(args, out, bag_path):
    import rbd_ros
    from ..identification import excitation
    from ..actuation import joint_parameters
    from ..description.size_limits import DEFAULT_LIMITS
    from ..description.urdf_reader import read_source
    from ..formats import trajectory_yaml
    from ..replay import bag_io

    urdf, _ = read_source(args.urdf, DEFAULT_LIMITS.max_bytes)
    model = rbd_ros.load_model(urdf)
    if model.floating_base:
        raise ValueError("rbd_excite needs a fixed base")
    joints = None
    if args.model_params:
        joints = joint_parameters.JointParameters.from_json(
            joint_parameters.read_file(args.model_params), tuple(model.joint_names))
    kinds = joint_parameters.kinds(args.friction, args.armature)
    limits = excitation.Limits.of(model, joints)
    series, cond, _ = excitation.design(model, kinds, limits, args.harmonics, args.period,
                                        args.seed, args.max_iter)
    t_opt = np.linspace(0, args.period, excitation.OPTIMIZATION_SAMPLES, endpoint=False)
    rng = np.random.default_rng(args.seed + 1)
    randoms = [excitation.condition(model, kinds, *excitation.random_series(
        model, limits, rng, args.harmonics, args.period, t_opt).evaluate(t_opt))[0]
        for _ in range(5)]
    t = np.arange(int(round(args.periods * args.period * args.rate))) / args.rate
    series = excitation.fit_to_limits(model, series, limits, t)   # at every written sample
    cond = excitation.condition(model, kinds, *series.evaluate(t_opt))[0]
    q, v, acc = series.evaluate(t)
    effort = limits.torques(model, q, v, acc)
    bag_io.write_joint_states(bag_path, urdf, model.joint_names, t, q, v, effort)
    trajectory_yaml.write(out, trajectory_yaml.Trajectory(
        list(model.joint_names), t, {"positions": q, "velocities": v, "accelerations": acc,
                                     "effort": effort}))
    return series, cond, float(np.median(randoms))


def main(argv=None):
    """``rbd_excite``: return the exit status."""
    args = parser().parse_args(argv)
    try:
        _, cond, random_cond, bag = run(args)
    except (ValueError, OSError) as exc:
        print(f"rbd_excite: {' '.join(str(exc).split())[:300]}", file=sys.stderr)
        return EXIT_BAD_INPUT
    print(f"excitation: {args.harmonics} harmonics of {args.period:g} s (SciPy L-BFGS-B); "
          f"condition number {cond:.4g}, random trajectories of the same bandwidth "
          f"{random_cond:.4g} (median of 5)")
    print(f"wrote {args.output} and the joint_states bag {bag}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
