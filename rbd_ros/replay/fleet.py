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
import os
import sys
from pathlib import Path

import numpy as np

from ..identification import (statistics as identification_stats,
                              uncertainty as identification_uncertainty)
from ..actuation import joint_parameters
from . import fleet_inputs, fleet_report, staging
from . import identify as identification
from .errors import ReplayError, shorten
from .fleet_cluster import Progress, client
from .fleet_options import check, split


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


def run(args, bags, progress=None):
    """Run the fleet (the arguments parsed by ``cli.parser``); return (rows, identification)."""
    kinds, params_text = check(args)
    bags, validation = split(args, bags)
    urdf_text = None
    if args.urdf is not None:
        from .one_bag import read_urdf_argument
        urdf_text = read_urdf_argument(str(args.urdf))
    from .one_bag import check_arguments
    from .. import outputs as table
    wanted_outputs = table.NAMES if args.all \
        else tuple(s.strip() for s in args.outputs.split(",") if s)
    from .observing import refuse_in_fleet
    refuse_in_fleet(args, wanted_outputs)
    outputs = check_arguments(wanted_outputs, args.identify, args.floating_base,
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
        self.held_parts = {}

    def merge_validation(self):
        """Merge the held-out bags of the fitted bags' robot (per-joint statistics to validate)."""
        for i, part in sorted(self.held_parts.items()):
            if part.urdf_digest != self.digest:
                self.excluded[i] = "another robot description than the fitted bags'"
                continue
            self.validation = _merge_all([s for s in (self.validation, part.stats) if s])
            self.validation_bags += 1
            part.stats = None
        self.held_parts = {}

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
        if i in self.held:                    # not in the fit: compared with the fitted
            self.held_parts[i] = part         # bags' robot once every bag is done
            return
        if self.digest is None:
            self.digest = part.urdf_digest
        if part.urdf_digest != self.digest:
            self.excluded[i] = "another robot description than the first bag's"
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
    run.merge_validation()
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
            text = fleet_tasks.task_urdf(reader, base)
        finally:
            reader.close()
    root, final = paths
    model = fleet_tasks.cached_model(text, False, args.mimic)
    method, kinds = args.identify, base["kinds"]
    w = identification.DEFAULT_PRIOR_WEIGHT[method] if args.prior_weight is None \
        else float(args.prior_weight)
    try:
        result = dask_client.submit(fleet_tasks.fit, text, args.mimic, method, run.stats,
                                    kinds, w, args.max_relative_std / 100, pure=False).result()
    except ValueError as exc:
        raise ReplayError(f"--identify: {shorten(exc, 300)}") from exc
    u = result.extra["uncertainty"]
    why = identification_uncertainty.unsupported(u)
    if why:                                  # the fleet's convention: the report says why
        return {"error": f"{run.stats.samples} samples of {run.stats_bags} bags: {why}"}
    _check_validation(run, rows, bags)
    result.model = model.with_inertial_parameters(result.theta)
    params = result.extra["joint_parameters"]
    params.epsilon = base["epsilon"]
    urdf = identification.write_identified_urdf(text, model, result.theta)
    if "viscous" in kinds:
        urdf = joint_parameters.write_urdf_dynamics(urdf, params)
    (root / "identified.urdf").write_text(urdf)
    sec = {"method": method, "prior_weight": w, "kinds": list(kinds),
           "epsilon": base["epsilon"], "weighting": base["weighting"],
           "bags": run.stats_bags, "samples": run.stats.samples,
           "parameters": int(run.stats.R.shape[1]), "identifiable": int(result.rank),
           "consistent": bool(result.consistent), "reason": result.reason,
           "rms_before": float(result.rms_before), "rms_after": float(result.rms_after),
           "urdf": str(final / "identified.urdf")}
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


def _check_validation(run, rows, bags):
    """
    Refuse (ReplayError) a validation that cannot be done: a held-out bag of another robot.

    ``--validate`` / ``--holdout`` ask for the fit's error on bags not in it; a held-out bag
    of another robot description (or one that failed, or gave no effort) cannot say it.
    """
    for i in sorted(run.held):
        if i in run.excluded:
            raise ReplayError(f"--validate {shorten(str(bags[i]), 200)}: {run.excluded[i]}: "
                              "it cannot validate this robot's fit")
    if run.held and run.validation is None:
        failed = [rows[i]["reason"] for i in sorted(run.held) if rows[i]["reason"]]
        raise ReplayError("--validate / --holdout: no held-out bag gave samples with a "
                          "complete effort" + (f" ({shorten(failed[0], 200)})" if failed
                                               else ""))


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
