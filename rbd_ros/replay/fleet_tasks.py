"""
What a Dask worker runs for ``rbd_replay`` over many bags: a bag, or a time window of one.

A task returns a :class:`Partial`: per-joint error statistics that merge exactly like the
data they summarize (:class:`ErrorStats`, Chan et al.'s pairwise update), skip counts and,
for ``--identify``, the least-squares statistics (``rbd_ros.identification.statistics``). The
client adds the partials of a bag's windows, then of the bags: nothing a task returns grows
with its number of messages.

Windows (``--no-bag`` only: one output bag cannot be written by several processes): window
[lo, hi) of log time reads the messages of [lo - overlap, hi + overlap), decides the node's
ticks on them and keeps those logged in [lo, hi). The result is that of the whole bag when
what a kept tick depends on lies inside the overlap: the latest value of every joint (the
tick rule, the joint ages) and the Savitzky-Golay window (``window // 2`` velocity samples on
each side). The task checks both (:func:`_overlap_suffices`) and otherwise answers
``retry``: the client then evaluates the bag unsplit.
"""
import contextlib
import functools
from dataclasses import dataclass, field

import numpy as np

import rbd_ros
from ..identification import (statistics as identification_stats,
                              uncertainty as identification_uncertainty)
from .. import outputs as table
from . import bag_io, recorded_ticks
from .dynamics import REFUSED, Batches, joint_model
from .errors import ReplayError, shorten


@dataclass
class ErrorStats:
    """Per joint: count, means and (co)moments of predicted p and measured m, max |p - m|."""

    n: np.ndarray
    mp: np.ndarray
    mm: np.ndarray
    spp: np.ndarray
    smm: np.ndarray
    spm: np.ndarray
    sse: np.ndarray
    ss_meas: np.ndarray
    max_err: np.ndarray

    @classmethod
    def of(cls, predicted, measured):
        """Summarize (N, nv) predicted and measured torques (the rows where both are finite)."""
        ok = np.isfinite(predicted) & np.isfinite(measured)
        n = ok.sum(axis=0)
        p, m = np.where(ok, predicted, 0.0), np.where(ok, measured, 0.0)
        safe = np.maximum(n, 1)
        mp, mm = p.sum(axis=0) / safe, m.sum(axis=0) / safe
        dp, dm = np.where(ok, p - mp, 0.0), np.where(ok, m - mm, 0.0)
        err = p - m
        return cls(n, mp, mm, (dp * dp).sum(0), (dm * dm).sum(0), (dp * dm).sum(0),
                   (err * err).sum(0), (m * m).sum(0),
                   np.where(n > 0, np.abs(err).max(axis=0, initial=0.0), np.nan))

    def merge(self, o):
        """Both data sets' statistics (Chan's update of the co-moments: no cancellation)."""
        n = self.n + o.n
        safe = np.maximum(n, 1)
        f = self.n * o.n / safe
        dp, dm = o.mp - self.mp, o.mm - self.mm
        return ErrorStats(n, self.mp + dp * o.n / safe, self.mm + dm * o.n / safe,
                          self.spp + o.spp + f * dp * dp, self.smm + o.smm + f * dm * dm,
                          self.spm + o.spm + f * dp * dm, self.sse + o.sse,
                          self.ss_meas + o.ss_meas, np.fmax(self.max_err, o.max_err))

    def joints(self, names):
        """Return the report's rows: {name, n, rms, max, corr, rms_meas} (NaN: undefined)."""
        safe = np.maximum(self.n, 1)
        with np.errstate(invalid="ignore", divide="ignore"):
            corr = np.where((self.spp > 0) & (self.smm > 0),
                            self.spm / np.sqrt(self.spp * self.smm), np.nan)

        def num(x, k):
            return float(x[k]) if self.n[k] > 0 else float("nan")
        return [{"name": name, "n": int(self.n[k]), "rms": num(np.sqrt(self.sse / safe), k),
                 "max": num(self.max_err, k), "corr": num(corr, k),
                 "rms_meas": num(np.sqrt(self.ss_meas / safe), k)}
                for k, name in enumerate(names)]


@dataclass
class Partial:
    """What one task found: counts, error statistics, identification statistics."""

    bag: str
    robot: str = ""
    joints: tuple = ()
    urdf_digest: str = ""
    messages: int = 0
    answered: int = 0
    skipped: dict = field(default_factory=dict)
    errors: object = None
    stats: object = None
    unknown_names: set = field(default_factory=set)
    time_source: str = ""
    retry: str = ""
    outputs: dict = field(default_factory=dict)

    def merge(self, o):
        """Add the partial of another window of the same bag (or of another bag's)."""
        out = Partial(self.bag, self.robot or o.robot, self.joints or o.joints,
                      self.urdf_digest or o.urdf_digest, self.messages + o.messages,
                      self.answered + o.answered, dict(self.skipped),
                      _merge(self.errors, o.errors), _merge(self.stats, o.stats),
                      self.unknown_names | o.unknown_names, self.time_source or o.time_source,
                      self.retry or o.retry, {**self.outputs, **o.outputs})
        for k, v in o.skipped.items():
            out.skipped[k] = out.skipped.get(k, 0) + v
        return out


def _merge(a, b):
    return b if a is None else a if b is None else a.merge(b)


@functools.lru_cache(maxsize=8)
def cached_model(text, floating_base, mimic):
    """Load the model of a URDF text: once per worker and robot, not once per task."""
    try:
        return table.check_base(rbd_ros.load_model(text, floating_base=floating_base,
                                                   mimic=mimic))
    except (ValueError, OSError) as exc:
        raise ReplayError(f"cannot load the URDF: {shorten(exc, 240)}") from exc


def task_urdf(reader, spec):
    """Return the URDF text of a task: ``--urdf``'s, else the bag's description; ReplayError."""
    if spec["urdf"] is not None:
        return spec["urdf"]
    text = bag_io.single_description(reader, spec["description_topic"])
    if text is None:
        raise ReplayError(f"no URDF: the bag has no {spec['description_topic']} message "
                          "(std_msgs/String); pass --urdf FILE")
    return text


@contextlib.contextmanager
def _threads(n):
    """Run the block's batch calls on ``n`` threads: a worker process per core, not more."""
    import numba
    before = numba.get_num_threads()
    numba.set_num_threads(max(1, min(n, numba.config.NUMBA_NUM_THREADS)))
    try:
        yield
    finally:
        numba.set_num_threads(before)


def evaluate(spec):
    """
    Evaluate one bag or one window of it (``spec``, a dict; see ``fleet.tasks``).

    Returns a :class:`Partial`; ReplayError for a bag that cannot be evaluated.
    """
    with _threads(spec.get("threads", 1)):
        return _evaluate(spec)


def _evaluate(spec):
    import hashlib

    reader = bag_io.open_reader(spec["bag"])
    try:
        js = bag_io.connection(reader, spec["topic"], bag_io.JOINT_STATE)
        text = task_urdf(reader, spec)
        model = cached_model(text, spec["floating_base"], spec["mimic"])
        odom = []
        if spec["floating_base"]:
            odom = bag_io.connection(reader, spec["odom_topic"], bag_io.ODOMETRY,
                                     required=False)
            if not odom:
                raise ReplayError(f"a floating base needs the base state: no nav_msgs/Odometry "
                                  f"topic {spec['odom_topic']}")
        lo, hi, overlap = spec.get("lo"), spec.get("hi"), spec.get("overlap", 0)
        inputs = _read(reader, js, odom, None if lo is None else lo - overlap,
                       None if hi is None else hi + overlap)
    finally:
        reader.close()
    out = Partial(spec["bag"], model.name, tuple(model.joint_names),
                  hashlib.sha256(text.encode()).hexdigest())
    if not inputs[0]:
        if lo is not None or hi is not None:  # a quiet stretch of the bag: nothing to add
            return out
        raise ReplayError(f"topic {spec['topic']} has no messages")
    log = np.asarray(inputs[1], np.int64)
    keep = np.ones(len(log), bool)
    if lo is not None:
        keep &= log >= lo
    if hi is not None:
        keep &= log < hi
    why = _overlap_suffices(model, inputs, keep, spec) if lo is not None or hi is not None \
        else None
    if why:
        out.retry = why
        return out
    _tick(out, model, text, inputs, keep, spec)
    return out


def _read(reader, js, odom, start, stop):
    """(joint_states bytes, log times, odometry bytes, log times, joint_states before each)."""
    js_ids = {c.id for c in js}
    data = ([], [], [], [], [])
    for con, stamp, raw in reader.messages(connections=js + odom, start=start, stop=stop):
        if con.id in js_ids:
            data[0].append(raw)
            data[1].append(stamp)
        else:
            data[2].append(raw)
            data[3].append(stamp)
            data[4].append(len(data[0]))
    return data


def _overlap_suffices(model, inputs, keep, spec):
    """Return why the overlap may change the kept ticks ('' when it cannot)."""
    if not keep.any():
        return ""
    need = spec["window"] // 2 + 1
    first, last = np.flatnonzero(keep)[[0, -1]]
    d = recorded_ticks.decode(inputs[0][:first] + inputs[0][last + 1:], tuple(model.joint_names))
    valid = d["present"] & np.isfinite(d["V"])
    for rows, edge, what in ((slice(0, first), spec.get("lo"), "before"),
                             (slice(first, None), spec.get("hi"), "after")):
        if edge is None or (what == "before" and edge - spec["overlap"] <= spec["start"]) \
                or (what == "after" and edge + spec["overlap"] > spec["end"]):
            continue                          # the read reaches the bag's end: as unsplit
        if (d["present"][rows].sum(axis=0) < need).any() or \
                (valid[rows].sum(axis=0) < need).any():
            return f"fewer than {need} samples of a joint in the overlap {what} the window"
        if model.floating_base and sum(
                (np.asarray(inputs[4]) <= first) if what == "before"
                else (np.asarray(inputs[4]) > last)) < need:
            return f"fewer than {need} odometry messages in the overlap {what} the window"
    return ""


def _tick(out, model, text, inputs, keep, spec):
    """Decide the ticks, compute the torques and fill ``out`` with the kept messages'."""
    t = recorded_ticks.ticks(model, *inputs, window=spec["window"], order=spec["order"],
                             acceleration=spec["acceleration"], **spec["rule"])
    joints = joint_model(model, text, spec.get("model_params"), spec.get("urdf_dynamics"))
    batches = Batches(model, t, ("torques",), spec["batch_size"], {}, encode=False,
                      joints=joints)
    batches.run()
    t, tau = t.without(batches.refused, REFUSED), batches.tau[~batches.refused]
    kept = keep[t.index]
    codes = t.codes[keep]
    out.messages = int(keep.sum())
    out.answered = int(kept.sum())
    out.skipped = {key: int((codes == k).sum()) for k, key in enumerate(table.REASON_KEYS)
                   if (codes == k).any()}
    out.unknown_names = set(t.unknown_names)
    out.time_source = t.time_source
    out.errors = ErrorStats.of(tau[kept], t.effort[kept])
    if spec.get("identify"):
        rows = kept & t.effort_known
        out.stats = identification_stats.statistics(
            model, t.q[rows], t.v[rows], t.a[rows], t.effort[rows], spec["kinds"],
            spec["epsilon"], per_joint=_per_joint(spec))


def _per_joint(spec):
    """Per-joint statistics: for --weighting per-joint, and a validation bag's RMS per joint."""
    return spec.get("weighting") == "per-joint" or bool(spec.get("validation"))


def write_bag(spec):
    """
    Replay one bag as ``rbd_replay BAG -o OUTPUT`` does (output bag, report) and summarize.

    The per-bag replay is the serial one (``one_bag.replay``); its ticks and torques give the
    same :class:`Partial` as :func:`evaluate`.
    """
    import hashlib

    from . import one_bag
    reader = bag_io.open_reader(spec["bag"])
    try:
        text = task_urdf(reader, spec)
    finally:
        reader.close()
    with _threads(spec.get("threads", 1)):
        rep = one_bag.replay(spec["bag"], spec["output"], report_dir=spec["report_dir"],
                             progress=False, urdf=text, **spec["replay"])
    t, tau = rep["ticks"], rep["torques"]
    out = Partial(spec["bag"], rep["model"], tuple(j["name"] for j in rep["joints"]),
                  hashlib.sha256(text.encode()).hexdigest(), rep["messages"], rep["answered"],
                  dict(rep["skipped"]), unknown_names=set(rep["unknown_joint_names"]),
                  time_source=t.time_source,
                  outputs={"bag": spec["output"], "report": spec["report_dir"]})
    out.errors = ErrorStats.of(tau, t.effort)
    if spec.get("identify"):
        model = cached_model(text, spec["floating_base"], spec["mimic"])
        rows = t.effort_known
        out.stats = identification_stats.statistics(
            model, t.q[rows], t.v[rows], t.a[rows], t.effort[rows], spec["kinds"],
            spec["epsilon"], per_joint=_per_joint(spec))
    return out


def fit(text, mimic, method, stats, kinds, prior_weight,
        max_relative_std=identification_uncertainty.DEFAULT_MAX_RELATIVE_STD):
    """
    Fit the reduced statistics on a worker, as one bag's ``--identify`` does.

    ``identification_uncertainty.fit``: per-joint statistics (``--weighting per-joint``) are
    fitted weighted.

    On a worker because Dask starts its workers with one BLAS thread: the fit's many small
    SVDs run several times slower with a BLAS thread per core on a busy machine. The result
    comes back without its model (the client rebuilds it from θ). ``extra["uncertainty"]``:
    ``identification_uncertainty.analyse`` of the fit (on the weighted rows when weighted).
    """
    model = cached_model(text, False, mimic)
    result = identification_uncertainty.fit(model, stats, method, kinds, prior_weight,
                                            max_relative_std)
    result.model = None
    return result
