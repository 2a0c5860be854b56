"""
The momentum observer's outputs in the replay: ~/external_torques, ~/collision, ~/contact_wrench.

The node (``rbd_ros.node.contact.ContactMonitor``) steps one observer per robot at each tick
whose dynamics it published and whose efforts are all known, at the input's header stamp
(in seconds from the first one: ``MomentumObserver.seconds``), restarting it on a stamp gap
over ``max_joint_age``; a sample the observer refuses publishes nothing. The replay runs the
same observer over the same ticks a batch of the dynamics at a time
(``rbd_ros.contact.observer.MomentumObserver.run_with_wrench``: the same kernel, the same
numbers, the contact wrench from the same call), then hands each tick's outcome, in order, to
the node's rule (``rbd_ros.contact.observer_rule.ObserverOutcomes``: the collision messages, the
counts of the ticks without r). The report's collision events are the runs of ticks in
collision: start (the first tick in collision), end (the first tick out of it; None when the
bag ends in collision), the joints over threshold at any tick, the link isolated at the peak,
the peak max |r| / threshold.
"""
import argparse
import time

import numpy as np

from ..contact import detection as contact
from ..contact import observer_rule
from .. import outputs as table
from . import bag_io
from .errors import ReplayError, excerpt, shorten

NAMES = tuple(table.OBSERVER_BY_NAME) + (table.CONTACT_WRENCH.name,)
TEXT_EVENTS = 20                 # report.txt's table: the first ones (report.json: all)
# the report's counts of the ticks without r: the node's (``rbd_ros.contact.observer_rule``)
UNOBSERVED_KEYS = (*observer_rule.UNOBSERVED.values(), observer_rule.REFUSED_KEY)
# the replay's options of the observer's settings
OPTIONS = {name: "--" + name.replace("_", "-") for name in observer_rule.SETTINGS}


def split_outputs(names, contact_frame):
    """Return (the dynamics outputs, the observer's) of ``names``; ReplayError if they clash."""
    observer = tuple(n for n in NAMES if n in names or (n == "contact_wrench" and contact_frame))
    if "contact_wrench" in names and not contact_frame:
        raise ReplayError("--outputs contact_wrench needs --contact-frame LINK")
    return tuple(n for n in names if n not in NAMES), observer


def msgtype(name):
    """Return the message type of the observer output ``name``."""
    return table.OBSERVER_BY_NAME.get(name, table.CONTACT_WRENCH).msgtype


class Observed:
    """
    The observer over one run of ticks: ``items(m, batches)`` {output: bytes} of message ``m``.

    Fed as the dynamics are computed (``dynamics.Batches``, once: the node steps the observer
    only at the ticks whose dynamics it published), in order, so r, the collision state and
    the contact wrench carry over from one batch to the next as the node's do from one tick
    to the next. After the last message: ``time``, ``r`` (rows: the ticks it stepped),
    ``thresholds``, ``events`` (dicts, see the module's docstring), ``wrench_refused``
    (ticks without a contact wrench, the first reason).
    """

    def __init__(self, model, t, joints, settings, names, timing=None):
        try:          # settings: an ``observer_rule.ObserverSettings``
            self.observer = observer_rule.new_observer(model, joints, settings,
                                                       wrench="contact_wrench" in names)
        except ValueError as exc:         # named as the node's parameters: as the options
            why = str(exc)
            for name, option in OPTIONS.items():
                why = why.replace(name, option, 1) if why.startswith(name) else why
            raise ReplayError(shorten(why, 200)) from None
        frame, thresholds = settings.contact_frame, settings.collision_thresholds
        self.model, self.t, self.frame, self.names = model, t, frame, names
        self.timing = {} if timing is None else timing
        self.timing.setdefault("observer", 0.0)
        self.outcomes = observer_rule.ObserverOutcomes(model, thresholds)
        self.thresholds = self.outcomes.collision.thresholds
        self.state = self.outcomes.collision
        self.dofs = table.dof_names(model)
        self.fed = 0                          # the ticks before it are stepped (or skipped)
        self.by_message = {}
        self.wrench_refused = [0, ""]
        self.closed, self.open = [], None     # the collision events
        self.blind, self.blind_open = [], None   # where it could not observe (start, end)
        self._rows, self._r = [], []

    @property
    def rows(self):
        return np.concatenate(self._rows) if self._rows else np.zeros(0, np.int64)

    @property
    def r(self):
        return np.concatenate(self._r) if self._r else np.zeros((0, self.model.nv))

    @property
    def time(self):
        return self.t.time[self.rows]

    @property
    def events(self):
        return self.closed + ([self.open] if self.open is not None else [])

    def items(self, m, batches):
        """{output: bytes} of joint_states message ``m`` (of this run's), handed out once."""
        if batches.hi > self.fed:            # the batch of m is computed: its refusals known
            self.feed(batches.refused, batches.hi)
        return self.by_message.pop(m, {})

    def feed(self, refused, upto):
        """
        Step the observer over the ticks from the last fed to ``upto`` (refused: skipped).

        As the node: a tick whose efforts are unknown, or that the observer skips (its stamp)
        or refuses, gives no r and is counted (``unobserved``); the collision rule sees every
        tick in order, so ~/collision says so where the observer cannot observe.
        """
        clock = time.perf_counter()
        t, lo = self.t, self.fed
        ticks = lo + np.flatnonzero(~np.asarray(refused[lo:upto], bool))
        self.fed = upto
        keep = ticks[t.effort_known[ticks]]
        status = np.full(len(ticks), observer_rule.EFFORTS_UNKNOWN_CODE, np.int64)
        if len(keep):
            stamps = self.observer.seconds(t.sec[keep], t.nanosec[keep])   # the node's times
            r, _, done, w, rank = self.observer.run_with_wrench(stamps, t.q[keep], t.v[keep],
                                                                t.tau_in[keep])
            tracking = self.observer.tracking
            status[t.effort_known[ticks]] = done
            ok = done == 0                                     # refused: nothing published
            rows, r = keep[ok], r[ok]
            self._rows.append(rows)
            self._r.append(r)
            self._encode(rows, r, w[ok] if len(w) else w, rank[ok] if len(rank) else rank)
            estimates = dict(zip(rows.tolist(), zip(r, tracking[ok])))
        else:
            estimates = {}
        self._collisions(ticks, status, estimates)
        self.timing["observer"] += time.perf_counter() - clock

    def _add(self, row, name, raw):
        self.by_message.setdefault(int(self.t.index[row]), {})[name] = raw

    def _encode(self, rows, r, wrenches, ranks):
        model, t = self.model, self.t
        store = bag_io.typestore()
        if "external_torques" in self.names and len(rows):
            template = bag_io.output_template(table.OBSERVER_BY_NAME["external_torques"],
                                              model)
            base = model.nv_base
            for row, raw in zip(rows, template.encode(t.sec[rows], t.nanosec[rows],
                                                      r[:, base:])):
                self._add(row, "external_torques", raw)
        if "contact_wrench" not in self.names:
            return
        cls, name = store.types[table.WRENCH_STAMPED], table.WRENCH_STAMPED
        vec = store.types["geometry_msgs/msg/Vector3"]
        wrench = store.types["geometry_msgs/msg/Wrench"]
        for k, row in enumerate(rows):
            why = contact.wrench_refusal(self.frame, int(ranks[k]))
            if why:                        # a singular pose: that tick only, as the node
                self.wrench_refused[0] += 1
                self.wrench_refused[1] = self.wrench_refused[1] or shorten(why, 200)
                continue
            w = wrenches[k]
            msg = cls(header=self._header(row, self.frame), wrench=wrench(
                force=vec(*(float(x) for x in w[:3])), torque=vec(*(float(x) for x in w[3:]))))
            self._add(row, "contact_wrench", bytes(store.serialize_cdr(msg, name)))

    def _header(self, row, frame_id=""):
        types = bag_io.typestore().types
        stamp = types["builtin_interfaces/msg/Time"](sec=int(self.t.sec[row]),
                                                     nanosec=int(self.t.nanosec[row]))
        return types["std_msgs/msg/Header"](stamp=stamp, frame_id=frame_id)

    def _collisions(self, ticks, status, estimates):
        """
        Run the collision rule over the ``ticks`` in order: the ~/collision messages, events.

        ``status``: each tick's (0: stepped, its r and whether it is an estimate in
        ``estimates``; else why it gave none); the unobserved ones counted.
        """
        store = bag_io.typestore()
        cls = store.types[table.COLLISION]
        state = self.state
        for row, code in zip(ticks.tolist(), status.tolist()):
            changed = self.outcomes.outcome(code, *estimates.get(row, ()))
            if not state.observing:
                self._blind(row)
            elif self.blind_open is not None:
                self.blind_open["end"] = float(self.t.time[row])
                self.blind.append(self.blind_open)
                self.blind_open = None
            if changed and "collision" in self.names:
                msg = cls(header=self._header(row), **state.message_fields(self.dofs))
                self._add(row, "collision", bytes(store.serialize_cdr(msg, table.COLLISION)))
            self._event(row)

    def _blind(self, row):
        """Open or extend the interval at whose ticks the observer cannot observe."""
        if self.blind_open is None:
            self.blind_open = {"start": float(self.t.time[row]), "end": None,
                               "reason": self.state.reason}

    def _event(self, row):
        """Extend, close or open the collision event at tick ``row``."""
        state, t, dofs = self.state, self.t, self.dofs
        iso, event = state.isolation, self.open
        if not state.state[0]:
            if event is not None:
                event["end"] = float(t.time[row])
                self.closed.append(event)
                self.open = None
            return
        if event is None:
            event = self.open = {
                "start": float(t.time[row]), "end": None, "joints": [],
                "isolated_link": iso.link, "peak_ratio": 0.0,
                "start_stamp": [int(t.sec[row]), int(t.nanosec[row])]}
        event["joints"] = [d for d in dofs if d in event["joints"]
                           or d in {dofs[j] for j in iso.joints}]
        if iso.peak_ratio > event["peak_ratio"]:
            event["peak_ratio"], event["isolated_link"] = float(iso.peak_ratio), iso.link

    def section(self):
        """Return the report's ``collisions`` entry."""
        return {"events": self.events, "thresholds": self.thresholds.tolist(),
                "observed_ticks": int(sum(len(x) for x in self._rows)),
                "contact_wrench_refused": self.wrench_refused[0],
                "contact_wrench_refusal": self.wrench_refused[1] or None,
                "unobserved_ticks": {k: self.outcomes.counts[k] for k in UNOBSERVED_KEYS},
                "blind": self.blind + ([self.blind_open] if self.blind_open else [])}


def observe(parts, o, timing):
    """
    Return the :class:`Observed` of each part ``(first, model, ticks, joints)``.

    They step as the output bag is written (``writing.write`` feeds each the refusals of
    the dynamics batch it has just computed): the dynamics are computed once.
    """
    return [Observed(model, t, joints, o.observer_settings, o.observer, timing)
            for _, model, t, joints in parts]


def _numbers(text):
    """Parse one number or a comma-separated list of them (argparse type)."""
    try:
        values = [float(x) for x in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number or comma-separated numbers, got "
                                         f"{excerpt(text, 30)}") from None
    return values[0] if len(values) == 1 else values


def add_arguments(p):
    """Add the observer's options (the node's parameters of the same names) to ``p``."""
    p.add_argument("--observer-gain", type=_numbers, default=table.DEFAULT_OBSERVER_GAIN,
                   help="the node's observer_gain: 1/s, one value or one per dof (comma-"
                   "separated); default %(default)s")
    p.add_argument("--collision-thresholds", type=_numbers,
                   default=table.DEFAULT_COLLISION_THRESHOLD,
                   help="the node's collision_thresholds: N·m, one value or one per dof; "
                   "default %(default)s")
    p.add_argument("--contact-frame", default="", metavar="LINK",
                   help="the node's contact_frame: a link; writes contact_wrench")


def refuse_in_fleet(args, outputs):
    """Raise ReplayError when a fleet run is asked for the observer (one bag at a time)."""
    asked = [n for n in NAMES if n in outputs]
    asked += [OPTIONS[k] for k, v in arguments(args).items()
              if v != {"observer_gain": table.DEFAULT_OBSERVER_GAIN, "contact_frame": "",
                       "collision_thresholds": table.DEFAULT_COLLISION_THRESHOLD}[k]]
    if asked:
        raise ReplayError(f"the observer's outputs are replayed one bag at a time, not in a "
                          f"fleet run: {', '.join(asked)}")


def arguments(args):
    """Return the keyword arguments of ``cli.replay`` from the parsed options."""
    return {"observer_gain": args.observer_gain,
            "collision_thresholds": args.collision_thresholds,
            "contact_frame": args.contact_frame}


def text(section):
    """Return the lines of report.txt of the report's ``collisions`` entry."""
    events = section["events"]
    lines = [f"collisions: {len(events)} events over {section['observed_ticks']} observed "
             "ticks (r against collision_thresholds; times in s from the first message)"]
    if section["contact_wrench_refused"]:
        lines.append(f"contact wrench not written at {section['contact_wrench_refused']} "
                     f"ticks: {section['contact_wrench_refusal']}")
    unobserved = {k: n for k, n in section["unobserved_ticks"].items() if n}
    if unobserved:
        lines.append("ticks without r: " + ", ".join(f"{k} {n}" for k, n in unobserved.items()))
    for b in section["blind"][:TEXT_EVENTS]:
        end = "(open)" if b["end"] is None else f"{b['end']:.4f}"
        lines.append(f"the observer could not observe from {b['start']:.4f} to {end}: "
                     f"{b['reason']}")
    if events:
        lines.append(f"{'start':>10} {'end':>10} {'peak':>8}  {'isolated link':<20} joints")
    for e in events[:TEXT_EVENTS]:
        end = "(open)" if e["end"] is None else f"{e['end']:.4f}"
        lines.append(f"{e['start']:>10.4f} {end:>10} {e['peak_ratio']:>8.3g}  "
                     f"{e['isolated_link'] or '':<20} {', '.join(e['joints'][:8])}")
    if len(events) > TEXT_EVENTS:
        lines.append(f"... and {len(events) - TEXT_EVENTS} more (report.json has every one)")
    return lines
