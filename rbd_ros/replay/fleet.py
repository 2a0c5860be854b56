"""
``rbd_replay`` over many bags on a Dask cluster: evaluation, fleet report, identification.

    rbd_replay logs/ @more.txt one.mcap -o /tmp/fleet --no-bag --identify --friction

Every bag (``fleet_inputs``: bags, directories, @lists) is evaluated as a single
``rbd_replay`` run would (its own robot_description unless ``--urdf``), as Dask tasks
(``fleet_tasks``): by default on an embedded ``LocalCluster``, one single-threaded worker
process per core; ``--scheduler tcp://HOST:PORT`` on an existing cluster, whose workers must
read the bags and the output directory at the same paths (a shared filesystem) and import
this rbd_ros. With ``--no-bag`` a bag of more than ``--split-messages`` joint_states is cut
into time windows that run as separate tasks (``fleet_inputs.windows``); with output bags each
bag is one task running the serial replay. A bag that fails is reported with its reason; the
others go on. The outputs (``-o DIR``: the fleet report, the output bags and reports, the
identification) are written under a temporary name and renamed into place when complete
(``staging``), as a single replay's.

``--identify``: every task reduces its samples to least-squares statistics, the client adds
them as tasks finish (``rbd_ros.identification.statistics``: memory independent of the number of
messages) and fits once, on a worker: identified.urdf (with ``<dynamics damping friction>``
when ``--friction``) and joint_parameters.json (``--model-params`` reads it).
"""
import math
import os
import sys
import threading
import time
from pathlib import Path

import numpy as np

from ..identification import (statistics as identification_stats,
                              uncertainty as identification_uncertainty)
from ..actuation import joint_parameters as joint_friction
from . import fleet_inputs, fleet_report, staging
from . import identify as identification
from .errors import ReplayError, excerpt, shorten

SCHEDULER_TIMEOUT = 20.0   # s: --scheduler's connection and handshake, by default
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
    g.add_argument("--friction-epsilon", type=float, default=joint_friction.EPSILON,
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
            text = joint_friction.read_file(args.model_params)
            joint_friction.check_text(text)
        except ValueError as exc:
            raise ReplayError(f"--model-params {excerpt(args.model_params)}: "
                              f"{shorten(exc, 200)}") from None
    return joint_friction.kinds(args.friction, args.armature), text


def base_spec(args, outputs, urdf_text, kinds, params_text):
    """Return the options every task of the run shares."""
    return {"topic": args.topic, "urdf": urdf_text, "description_topic": args.description_topic,
            "floating_base": args.floating_base, "odom_topic": args.odom_topic,
            "mimic": args.mimic, "window": args.window, "order": args.order,
            "acceleration": args.acceleration, "batch_size": args.batch_size,
            "rule": dict(max_joint_age=args.max_joint_age,
                         unknown_velocity=args.unknown_velocity),
            "identify": args.identify, "kinds": kinds, "epsilon": args.friction_epsilon,
            "model_params": params_text, "urdf_dynamics": args.urdf_dynamics,
            "weighting": args.weighting or "none",
            "outputs": outputs, "node_name": args.node_name, "storage": args.storage,
            "plots": not args.no_plots, "threads": 1}


def tasks(base, bag, name, info, args, root):
    """Return the task specs of a bag: its windows (``--no-bag``), or one writing a bag."""
    spec = dict(base, bag=str(bag), start=info["start"], end=info["end"])
    if not args.no_bag:
        spec.update(output=str(root / "bags" / name), report_dir=str(root / "reports" / name),
                    replay=dict(topic=base["topic"], description_topic=base["description_topic"],
                                floating_base=base["floating_base"],
                                odom_topic=base["odom_topic"], mimic=base["mimic"],
                                outputs=base["outputs"], window=base["window"],
                                order=base["order"], acceleration=base["acceleration"],
                                node_name=base["node_name"], storage=base["storage"],
                                batch_size=base["batch_size"], plots=base["plots"],
                                model_params=base["model_params"],
                                urdf_dynamics=base["urdf_dynamics"], **base["rule"]))
        return [spec]
    spans, overlap = fleet_inputs.windows(info, args.split_messages, args.window,
                                          args.max_joint_age)
    return [dict(spec, lo=lo, hi=hi, overlap=overlap) for lo, hi in spans]


class Progress:
    """One line on stderr for the whole run: bags done, messages/s, ETA."""

    def __init__(self, bags, messages, enabled):
        self.bags, self.messages, self.enabled = bags, max(messages, 1), enabled
        self.t0 = time.monotonic()

    def update(self, bags_done, failed, messages_done, final=False):
        if not self.enabled:
            return
        elapsed = max(time.monotonic() - self.t0, 1e-9)
        rate = messages_done / elapsed
        left = (self.messages - messages_done) / rate if rate > 0 else float("inf")
        eta = time.strftime("%H:%M:%S", time.gmtime(left)) if math.isfinite(left) else "?"
        sys.stderr.write(f"\rfleet: bags {bags_done}/{self.bags}"
                         + (f" ({failed} failed)" if failed else "")
                         + f", {messages_done}/{self.messages} messages, {rate:,.0f} msg/s, "
                         f"ETA {eta}   " + ("\n" if final else ""))
        sys.stderr.flush()


def client(scheduler=None, workers=None, timeout=SCHEDULER_TIMEOUT):
    """(Dask client, its LocalCluster or None): ``scheduler``'s, or a local one."""
    import logging

    from dask.distributed import Client, LocalCluster
    if scheduler:
        return _connect(Client, scheduler, timeout), None
    # workers are spawned processes: they inherit os.environ (NUMBA_CACHE_DIR: the kernels
    # compiled once on disk load in every worker instead of compiling per process)
    cluster = LocalCluster(n_workers=workers or os.cpu_count() or 1, threads_per_worker=1,
                           processes=True, dashboard_address=None,
                           silence_logs=logging.ERROR)
    return Client(cluster), cluster


def _connect(client_class, scheduler, timeout):
    """
    Return a Dask client of ``scheduler``, connected and handshaken within ``timeout`` s.

    ReplayError otherwise: Dask's own timeout covers the TCP connection, not the handshake,
    so a peer that accepts and never answers (an HTTP server waiting for its request line)
    held the run for minutes; a peer that answers garbage made Dask allocate what its first
    8 bytes said (3 EiB for "HTTP/1.1"). The client is made on a thread given ``timeout``;
    one that never finishes is left behind (a daemon thread: the run ends with status 2).
    """
    made = {}

    def connect():
        try:
            made["client"] = client_class(scheduler, timeout=f"{timeout}s")
        except BaseException as exc:          # reported by the waiting thread
            made["error"] = exc
    what = f"--scheduler {excerpt(scheduler, 60)}"
    thread = threading.Thread(target=connect, daemon=True, name="rbd_scheduler_connect")
    thread.start()
    thread.join(timeout + 1.0)
    if thread.is_alive():
        raise ReplayError(f"{what}: no Dask scheduler answered within {timeout:g} s (connection "
                          "and handshake): is it the address of a Dask scheduler?")
    exc = made.get("error")
    if isinstance(exc, (OSError, TimeoutError)):
        raise ReplayError(f"{what}: cannot reach it ({shorten(exc, 120)})") from None
    if exc is not None:
        raise ReplayError(f"{what}: what answered is not a Dask scheduler (its answer does "
                          f"not follow Dask's protocol: {type(exc).__name__})") from None
    return made["client"]


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


def run(args, bags, progress=None):
    """Run the fleet (the arguments parsed by ``cli.parser``); return (rows, identification)."""
    kinds, params_text = check(args)
    bags, validation = split(args, bags)
    urdf_text = None
    if args.urdf is not None:
        from .cli import _read_urdf
        urdf_text = _read_urdf(str(args.urdf))
    from .cli import _check_arguments
    from .. import outputs as table
    wanted_outputs = table.NAMES if args.all \
        else tuple(s.strip() for s in args.outputs.split(",") if s)
    from .observing import refuse_in_fleet
    refuse_in_fleet(args, wanted_outputs)
    outputs = _check_arguments(wanted_outputs, args.identify, args.floating_base,
                               args.acceleration, window=args.window, order=args.order,
                               batch_size=args.batch_size, rate=1.0,
                               max_joint_age=args.max_joint_age,
                               prior_weight=args.prior_weight)
    staged = staging.stage([(Path(args.output), "fleet output directory", "-o")])
    try:
        root = staged[0].path
        root.mkdir()
        base = base_spec(args, outputs, urdf_text, kinds, params_text)
        rows, ident = _evaluate(args, bags, base, root, staged[0].final, progress, validation)
        rep = fleet_report.write(root / "fleet_report", rows, ident, plots=not args.no_plots)
        staging.commit(staged)
    except BaseException:
        staging.discard(staged)
        raise
    return rows, ident, rep


def _evaluate(args, bags, base, root, final, progress, validation=frozenset()):
    from dask.distributed import as_completed

    names = fleet_inputs.names(bags)
    infos, reasons = {}, {}
    for i, bag in enumerate(bags):
        try:
            infos[i] = fleet_inputs.survey(bag, args.topic)
        except ReplayError as exc:
            reasons[i] = shorten(exc, 300)
    todo = {i: tasks(dict(base, validation=i in validation), bags[i], names[i], infos[i], args,
                     root) for i in infos}
    bar = Progress(len(bags), sum(infos[i]["messages"] for i in infos),
                   sys.stderr.isatty() if progress is None else progress)
    dask_client, cluster = client(args.scheduler, args.workers, args.scheduler_timeout)
    run = Reduction(base, len(bags), bar, validation)
    run.failed = len(reasons)
    try:
        from . import fleet_tasks
        futures = {}
        for i, specs in todo.items():
            fn = fleet_tasks.evaluate if args.no_bag else fleet_tasks.write_bag
            for k, spec in enumerate(specs):
                futures[dask_client.submit(fn, spec, pure=False)] = (i, k, len(specs), spec)
        pending = as_completed(list(futures))
        for fut in pending:
            i, k, n, spec = futures.pop(fut)
            retry = run.done(fut, i, k, n, spec, reasons)
            if retry is not None:
                new = dask_client.submit(fleet_tasks.evaluate, retry, pure=False)
                futures[new] = (i, 0, 1, retry)
                pending.add(new)
        bar.update(run.bags_done, run.failed, run.messages_done, final=True)
        rows = [fleet_report.row(names[i], bags[i], infos.get(i), run.partials.get(i),
                                 reasons.get(i), "validation" if i in validation else "train")
                for i in range(len(bags))]
        for r in rows:                        # the outputs' names once renamed into place
            r["outputs"] = {k: str(final / os.path.relpath(v, root))
                            for k, v in r.get("outputs", {}).items()}
        ident = _identify(args, base, run, rows, bags, (root, final), dask_client) \
            if args.identify else None
    finally:
        dask_client.close()
        if cluster is not None:
            cluster.close()
    return rows, ident


class Reduction:
    """Collects finished tasks: a bag's windows, then the bags (and the statistics)."""

    def __init__(self, base, bags, bar, validation=frozenset()):
        self.base, self.bar, self.bags = base, bar, bags
        self.held, self.validation, self.validation_bags = set(validation), None, 0
        self.windows, self.partials, self.unsplit = {}, {}, set()
        self.stats, self.stats_bags, self.digest, self.excluded = None, 0, None, {}
        self.bags_done = self.failed = self.messages_done = 0

    def done(self, fut, i, k, n, spec, reasons):
        """Take one finished task; return the spec to run again unsplit, or None."""
        if i in reasons or (n > 1 and i in self.unsplit):    # superseded: the bag is done
            return None                                       # or runs again unsplit
        if fut.status == "error":
            exc = fut.exception()
            if n > 1:                         # a window may lack what the whole bag has
                return self._unsplit(i, spec)
            reasons[i] = shorten(exc, 300) if isinstance(exc, ReplayError) \
                else f"{type(exc).__name__}: {shorten(exc, 280)}"
            self.failed += 1
            self.bags_done += 1
            self.bar.update(self.bags_done, self.failed, self.messages_done)
            return None
        part = fut.result()
        if part.retry:
            return self._unsplit(i, spec)
        self.windows.setdefault(i, {})[k] = part
        self.messages_done += part.messages
        if len(self.windows[i]) == n:         # merged in window order: reproducible sums
            parts = self.windows.pop(i)
            self._bag_done(i, _merge_all([parts[w] for w in sorted(parts)]))
        self.bar.update(self.bags_done, self.failed, self.messages_done)
        return None

    def _unsplit(self, i, spec):
        self.unsplit.add(i)
        for p in self.windows.pop(i, {}).values():
            self.messages_done -= p.messages
        return {key: value for key, value in spec.items()
                if key not in ("lo", "hi", "overlap")}

    def _bag_done(self, i, part):
        self.partials[i] = part
        self.bags_done += 1
        if part.stats is None:
            return
        if self.digest is None:
            self.digest = part.urdf_digest
        if part.urdf_digest != self.digest:
            self.excluded[i] = "another robot description than the first bag's"
            return
        if i in self.held:                    # not in the fit: per-joint statistics to validate
            self.validation = _merge_all([s for s in (self.validation, part.stats) if s])
            self.validation_bags += 1
            part.stats = None
            return
        self.stats = part.stats if self.stats is None else self.stats.merge(part.stats)
        self.stats_bags += 1
        part.stats = None                     # memory: only the running sum is kept


def _merge_all(parts):
    out = parts[0]
    for p in parts[1:]:
        out = out.merge(p)
    return out


def _identify(args, base, run, rows, bags, paths, dask_client):
    """Fit on the reduced statistics; write identified.urdf (+ joint_parameters.json)."""
    for i, why in run.excluded.items():
        rows[i]["identification"] = f"excluded: {why}"
    if run.stats is None or run.stats.rows == 0:
        return {"error": "no bag gave samples with a complete effort"}
    from . import bag_io, fleet_tasks
    text = base["urdf"]
    if text is None:
        first = next(i for i, p in sorted(run.partials.items())
                     if p.urdf_digest == run.digest and i not in run.excluded)
        reader = bag_io.open_reader(bags[first])
        try:
            text = fleet_tasks._urdf(reader, base)
        finally:
            reader.close()
    root, final = paths
    model = fleet_tasks._model(text, False, args.mimic)
    method, kinds = args.identify, base["kinds"]
    w = identification.DEFAULT_PRIOR_WEIGHT[method] if args.prior_weight is None \
        else float(args.prior_weight)
    try:
        result = dask_client.submit(fleet_tasks.fit, text, args.mimic, method, run.stats,
                                    kinds, w, args.max_relative_std / 100, pure=False).result()
    except ValueError as exc:
        raise ReplayError(f"--identify: {shorten(exc, 300)}") from exc
    result.model = model.with_inertial_parameters(result.theta)
    params = result.extra["joint_parameters"]
    params.epsilon = base["epsilon"]
    urdf = identification.write_identified_urdf(text, model, result.theta)
    if "viscous" in kinds:
        urdf = joint_friction.write_urdf_dynamics(urdf, params)
    (root / "identified.urdf").write_text(urdf)
    sec = {"method": method, "prior_weight": w, "kinds": list(kinds),
           "epsilon": base["epsilon"], "weighting": base["weighting"],
           "bags": run.stats_bags, "samples": run.stats.samples,
           "parameters": int(run.stats.R.shape[1]), "identifiable": int(result.rank),
           "consistent": bool(result.consistent), "reason": result.reason,
           "rms_before": float(result.rms_before), "rms_after": float(result.rms_after),
           "urdf": str(final / "identified.urdf")}
    u = result.extra["uncertainty"]
    sec["uncertainty"] = identification_uncertainty.section(u)
    if kinds:
        stds = identification_uncertainty.joint_stds(u, model.joint_names, kinds)
        (root / "joint_parameters.json").write_text(params.to_json(stds, u.not_identified()))
        sec["parameters_file"] = str(final / "joint_parameters.json")
        sec["joint_parameters"] = {name: {key: value for k in kinds for key, value in (
            (k, float(params.values[k][j])),
            (f"{k}_std", float(stds[k][j]) if np.isfinite(stds[k][j]) else None))}
            for j, name in enumerate(params.joints)}
    if run.validation is not None:
        sec["validation"] = validation_section(model, run, result, kinds)
    if "joint_sigma" in result.extra:
        sec["joint_sigma"] = dict(zip(model.joint_names, map(float,
                                                             result.extra["joint_sigma"])))
    sec["result"] = result
    return sec


def validation_section(model, run, result, kinds):
    """RMS per joint on the validation bags, with the URDF (before) and the fitted model."""
    stats = run.validation
    nv = model.nv
    x0 = np.r_[model.inertial_parameters().ravel(), np.zeros(len(kinds) * nv)]
    x = np.r_[result.theta.ravel(), result.extra["joint_parameters"].vector(kinds)]
    if not isinstance(stats, identification_stats.PerJoint):
        raise ReplayError("validation statistics must be per joint")
    before, after = stats.sigma(x0), stats.sigma(x)
    n = np.array([s.rows for s in stats.joints])
    return {"bags": run.validation_bags, "samples": stats.samples,
            "rms_before": float(np.sqrt((before ** 2 * n).sum() / max(n.sum(), 1))),
            "rms_after": float(np.sqrt((after ** 2 * n).sum() / max(n.sum(), 1))),
            "joints": [{"name": name, "rms_before": float(b), "rms_after": float(a)}
                       for name, b, a in zip(model.joint_names, before, after)]}


def main(args, bags):
    """Run the fleet for ``rbd_replay``; return the exit status (0; 1: every bag failed)."""
    if not bags:
        print(f"rbd_replay: no rosbag2 found in {shorten(' '.join(args.bag), 200)}",
              file=sys.stderr)
        return 2
    try:
        rows, _, lines = run(args, bags, False if args.no_progress else None)
    except ReplayError as exc:
        print(f"rbd_replay: {shorten(exc, 600)}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"rbd_replay: {shorten(exc, 300)} (no output written)", file=sys.stderr)
        return 1
    print("\n".join(lines))
    print(f"fleet report: {os.path.join(args.output, 'fleet_report')}")
    return 0 if any(r["status"] == "ok" for r in rows) else 1
