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
scaled into the same limits. Exit status 0, 2 for bad arguments or input.
"""
import argparse
import math
import os
import sys

import numpy as np


def parser():
    """Return the command line parser of ``rbd_excite``."""
    from ..identification.excitation import HARMONICS, PERIOD
    p = argparse.ArgumentParser(prog="rbd_excite", description=__doc__.splitlines()[1])
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
    for name in ("period", "rate"):
        x = getattr(args, name)
        if not (math.isfinite(x) and x > 0):
            raise ValueError(f"--{name} must be a finite number > 0, got {x}")
    for name, low in (("harmonics", 2), ("periods", 1), ("max_iter", 0)):
        if getattr(args, name) < low:
            raise ValueError(f"--{name.replace('_', '-')} must be >= {low}")
    if os.path.isdir(args.output):
        raise ValueError(f"-o {args.output[:80]} is a directory")


def run(args):
    """Design, write and return (series, its condition number, the random one's)."""
    import rbd_ros
    from ..identification import excitation
    from ..actuation import joint_parameters
    from ..formats import trajectory_yaml
    from ..replay import bag_io

    _check(args)
    with open(args.urdf, encoding="utf-8") as f:
        urdf = f.read()
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
    trajectory_yaml.write(args.output, trajectory_yaml.Trajectory(
        list(model.joint_names), t, {"positions": q, "velocities": v, "accelerations": acc,
                                     "effort": effort}))
    bag = args.bag or os.path.splitext(args.output)[0] + "_bag"
    bag_io.write_joint_states(bag, urdf, model.joint_names, t, q, v, effort)
    return series, cond, float(np.median(randoms)), bag


def main(argv=None):
    """``rbd_excite``: return the exit status."""
    args = parser().parse_args(argv)
    try:
        _, cond, random_cond, bag = run(args)
    except (ValueError, OSError) as exc:
        print(f"rbd_excite: {str(exc)[:300]}", file=sys.stderr)
        return 2
    print(f"excitation: {args.harmonics} harmonics of {args.period:g} s (SciPy L-BFGS-B); "
          f"condition number {cond:.4g}, random trajectories of the same bandwidth "
          f"{random_cond:.4g} (median of 5)")
    print(f"wrote {args.output} and the joint_states bag {bag}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
