"""
The fleet options of ``rbd_replay``: their arguments, whether a run is a fleet, their checks.

``--validate`` and ``--holdout`` choose the bags that validate an identification (:func:`split`).
"""
import math
import os

import numpy as np

from ..actuation import joint_parameters
from ..identification import statistics as identification_stats
from . import fleet_inputs
from .errors import ReplayError, excerpt, shorten
from .fleet_cluster import SCHEDULER_TIMEOUT

FLEET_OPTIONS = ("no_bag", "scheduler", "workers", "friction", "armature", "model_params",
                 "urdf_dynamics", "weighting", "validate", "holdout")


def add_arguments(p):
    """Add the fleet options to ``rbd_replay``'s parser ``p``."""
    g = p.add_argument_group("many bags (a directory, @LIST, several BAG arguments, or any of "
                             "these options; -o DIR holds every output)")
    g.add_argument("--no-bag", action="store_true",
                   help="evaluate only: no output bags (large bags are then split in windows)")
    g.add_argument("--scheduler", help="tcp://HOST:PORT of a Dask scheduler (default: a local "
                   "cluster); its workers must see the bags and -o DIR at the same paths")
    g.add_argument("--scheduler-timeout", type=float, default=SCHEDULER_TIMEOUT,
                   help="s: --scheduler's connection and handshake must be done within it "
                   "(default %(default)s)")
    g.add_argument("--workers", type=int, default=None,
                   help="local cluster: worker processes (default: one per core)")
    g.add_argument("--split-messages", type=int, default=200_000,
                   help="--no-bag: split bags of more joint_states into windows of about "
                   "this many (default %(default)s)")
    g.add_argument("--friction", action="store_true", help="--identify: also per-joint "
                   "viscous, Coulomb (tanh(v/eps)) friction and an offset")
    g.add_argument("--armature", action="store_true",
                   help="--identify: also per-joint rotor inertia (armature)")
    g.add_argument("--friction-epsilon", type=float, default=joint_parameters.EPSILON,
                   help="eps of the smooth sign tanh(v/eps), rad/s (default %(default)s)")
    g.add_argument("--weighting", choices=identification_stats.WEIGHTINGS, default=None,
                   help="--identify: none (default), or per-joint: weighted least squares, "
                   "each joint's rows weighted by 1/sigma_j, its residual RMS after a first "
                   "unweighted least-squares fit")
    g.add_argument("--validate", nargs="+", metavar="BAG", default=None,
                   help="--identify: bags (directories, @LISTS) not used in the fit, on which "
                   "the fitted model is evaluated: RMS per joint before and after")
    g.add_argument("--holdout", type=float, default=None, metavar="FRACTION",
                   help="--identify: hold this fraction of the bags out of the fit (evenly "
                   "spread in the given order) and validate on them")
    g.add_argument("--model-params", help="joint parameter file (identify's "
                   "joint_parameters.json): every output (bags, reports, fleet report) "
                   "includes its friction, armature and offsets, as dynamics_node's "
                   "joint_parameters_file")
    g.add_argument("--urdf-dynamics", action="store_true", help="every output includes the "
                   "URDF's <dynamics damping friction> as viscous and Coulomb friction (the "
                   "node's urdf_joint_dynamics)")


def wanted(args, bags, many):
    """Whether the arguments ask for a fleet run (one bag with --identify-payload: not)."""
    if args.identify_payload is not None and not many and len(bags) == 1:
        return False
    return many or len(bags) != 1 or any(getattr(args, k) for k in FLEET_OPTIONS)


def check(args):
    """Refuse bad fleet options (ReplayError); return (kinds, model parameter file text)."""
    if not args.output:
        raise ReplayError("several bags (or a fleet option): -o DIR names the output "
                          "directory, which must not exist")
    if args.live:
        raise ReplayError("--live plays one bag into one node: not with several bags")
    if args.workers is not None and not 1 <= args.workers <= 4096:
        raise ReplayError(f"--workers must be an integer in 1..4096, got {args.workers}")
    if args.split_messages < 1:
        raise ReplayError(f"--split-messages must be >= 1, got {args.split_messages}")
    if not (math.isfinite(args.friction_epsilon) and args.friction_epsilon > 0):
        raise ReplayError(f"--friction-epsilon must be a finite number > 0, got "
                          f"{args.friction_epsilon}")
    if not (math.isfinite(args.scheduler_timeout) and 0 < args.scheduler_timeout <= 3600):
        raise ReplayError(f"--scheduler-timeout must be a number of seconds in (0, 3600], "
                          f"got {args.scheduler_timeout}")
    if args.scheduler and not fleet_inputs.SCHEDULER.match(args.scheduler):
        raise ReplayError(f"--scheduler must be tcp://HOST:PORT, got "
                          f"{excerpt(args.scheduler, 60)}")
    if (args.friction or args.armature or args.weighting or args.validate
            or args.holdout is not None) and not args.identify:
        raise ReplayError("--friction, --armature, --weighting, --validate and --holdout are "
                          "identification options: add --identify")
    if args.holdout is not None and not (math.isfinite(args.holdout)
                                         and 0 < args.holdout < 1):
        raise ReplayError(f"--holdout must be a fraction in (0, 1), got {args.holdout}")
    if args.identify_payload is not None:
        raise ReplayError("--identify-payload estimates from one bag: not with several bags "
                          "or fleet options")
    if args.model_params and args.urdf_dynamics:
        raise ReplayError("--model-params and --urdf-dynamics: choose one")
    text = None
    if args.model_params:
        try:
            text = joint_parameters.read_file(args.model_params)
            joint_parameters.check_text(text)
        except ValueError as exc:
            raise ReplayError(f"--model-params {excerpt(args.model_params)}: "
                              f"{shorten(exc, 200)}") from None
    return joint_parameters.kinds(args.friction, args.armature), text


def split(args, bags):
    """
    Return (every bag, the indices of the validation bags): ``--validate`` and ``--holdout``.

    ``--validate`` bags are appended; ``--holdout f`` holds out round(f·n) of the n given
    bags (at least 1, at most n - 1), evenly spread in their order.
    """
    bags = list(bags)
    held = set()
    if args.holdout is not None:
        n = len(bags)
        k = min(max(1, round(args.holdout * n)), n - 1)
        if k < 1:
            raise ReplayError("--holdout needs at least 2 bags (one to fit, one to validate)")
        held = {int(i) for i in np.round(np.linspace(0, n - 1, k + 2)[1:-1])} if k < n - 1 \
            else set(range(1, n))
    if args.validate:
        extra, _ = fleet_inputs.expand(args.validate)
        if not extra:
            raise ReplayError(f"--validate: no rosbag2 found in "
                              f"{shorten(' '.join(args.validate), 200)}")
        same = {os.path.realpath(b) for b in bags} & {os.path.realpath(b) for b in extra}
        if same:
            raise ReplayError(f"--validate {excerpt(sorted(same)[0])} is also a bag to fit")
        held |= set(range(len(bags), len(bags) + len(extra)))
        bags += extra
    return bags, held
