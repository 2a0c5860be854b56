"""
The momentum observer's outputs in the replay: ~/external_torques, ~/collision, ~/contact_wrench.

The node (``rbd_ros.node.contact.ContactMonitor``) steps one observer per robot at each tick whose
dynamics it published and whose efforts are all known, at the input's header stamp (in seconds from
the first one: ``MomentumObserver.seconds``), restarting it on a stamp gap over ``max_joint_age``;
a sample the observer refuses publishes nothing. The replay runs the same observer over the same
ticks in one call (``rbd_ros.contact.detection.MomentumObserver.run``: the same kernel, the same
numbers), the collision messages by the same rule (``rbd_ros.contact.detection.CollisionState``)
and the wrench by ``rbd_ros.contact.detection.contact_wrench``. The report's collision events are
the runs of ticks in collision: start (the first tick in collision), end (the first tick out of it;
None when the bag ends in collision), the joints over threshold at any tick, the link isolated at
the peak, the peak max |r| / threshold.
"""
import argparse
import math
import time

import numpy as np

from ..contact import detection as contact
from .. import outputs as table
from . import bag_io
from .errors import ReplayError, excerpt, shorten

NAMES = tuple(table.OBSERVER_BY_NAME) + (table.CONTACT_WRENCH.name,)
TEXT_EVENTS = 20                 # report.txt's table: the first ones (report.json: all)


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
    The observer over one run of ticks: ``items(m)`` {output: bytes} of joint_states ``m``.

    ``time``, ``r`` (rows: the ticks it stepped), ``thresholds``, ``events`` (dicts, see the
    module's docstring), ``wrench_refused`` (ticks without a contact wrench, the first reason).
    """

    def __init__(self, model, t, refused, joints, settings, names):
        gain, thresholds, frame, max_age = settings
        for name, value in (("--observer-gain", gain), ("--collision-thresholds", thresholds)):
            try:
                contact.per_dof(model, value, name)
            except ValueError as exc:
                raise ReplayError(shorten(exc, 200)) from None
        if frame:
            why = contact.frame_problem(model, frame)
            if why:
                raise ReplayError(f"--{shorten(why.replace('_', '-', 1), 200)}")
        keep = np.flatnonzero(~np.asarray(refused, bool) & t.effort_known)
        self.model, self.frame, self.names = model, frame, names
        observer = contact.MomentumObserver(model, gain, joints,
                                            max_age if max_age > 0 else math.inf)
        stamps = observer.seconds(t.sec[keep], t.nanosec[keep])   # the node's times
        r, _, status = observer.run(stamps, t.q[keep], t.v[keep], t.tau_in[keep])
        ok = status == 0                                       # refused: nothing published
        self.rows, self.r, self.time = keep[ok], r[ok], t.time[keep[ok]]
        self.sec, self.nanosec = t.sec[self.rows], t.nanosec[self.rows]
        self.index, self.q = t.index[self.rows], t.q[self.rows]
        self.thresholds = contact.per_dof(model, thresholds, "collision_thresholds")
        self.by_message = {}
        self.wrench_refused = [0, ""]
        self._collisions()
        self._encode(model)

    def items(self, m):
        """{output: bytes} of joint_states message ``m`` (of this run's)."""
        return self.by_message.get(m, {})

    def _add(self, k, name, raw):
        self.by_message.setdefault(int(self.index[k]), {})[name] = raw

    def _encode(self, model):
        store = bag_io.typestore()
        if "external_torques" in self.names and len(self.rows):
            template = bag_io.output_template(table.OBSERVER_BY_NAME["external_torques"],
                                              model)
            base = model.nv_base
            for k, raw in enumerate(template.encode(self.sec, self.nanosec, self.r[:, base:])):
                self._add(k, "external_torques", raw)
        if "contact_wrench" not in self.names:
            return
        cls, name = store.types[table.WRENCH_STAMPED], table.WRENCH_STAMPED
        vec = store.types["geometry_msgs/msg/Vector3"]
        wrench = store.types["geometry_msgs/msg/Wrench"]
        for k in range(len(self.rows)):
            try:
                w = contact.contact_wrench(model, self.q[k], self.r[k], self.frame)
            except ValueError as exc:      # a singular pose: that tick only, as the node
                self.wrench_refused[0] += 1
                self.wrench_refused[1] = self.wrench_refused[1] or shorten(exc, 200)
                continue
            msg = cls(header=self._header(k, self.frame), wrench=wrench(
                force=vec(*(float(x) for x in w[:3])), torque=vec(*(float(x) for x in w[3:]))))
            self._add(k, "contact_wrench", bytes(store.serialize_cdr(msg, name)))

    def _header(self, k, frame_id=""):
        store = bag_io.typestore()
        return store.types["std_msgs/msg/Header"](stamp=store.types[
            "builtin_interfaces/msg/Time"](sec=int(self.sec[k]), nanosec=int(self.nanosec[k])),
            frame_id=frame_id)

    def _collisions(self):
        """Run the collision rule over r: the ~/collision messages and the events."""
        state = contact.CollisionState(self.model, self.thresholds)
        dofs = table.dof_names(self.model)
        store = bag_io.typestore()
        cls = store.types[table.COLLISION]
        self.events, event = [], None
        for k in range(len(self.rows)):
            changed = state.update(self.r[k])
            iso = state.isolation
            if changed and "collision" in self.names:
                msg = cls(header=self._header(k), in_collision=bool(iso.in_collision),
                          joints=[dofs[j] for j in iso.joints],
                          isolated_link=iso.link or "", peak_ratio=float(iso.peak_ratio))
                self._add(k, "collision", bytes(store.serialize_cdr(msg, table.COLLISION)))
            event = self._event(event, k, state, dofs)
        if event is not None:
            self.events.append(event)

    def _event(self, event, k, state, dofs):
        """Extend, close or open the collision event at tick ``k``; return the open one."""
        iso = state.isolation
        if not state.state[0]:
            if event is not None:
                event["end"] = float(self.time[k])
                self.events.append(event)
            return None
        if event is None:
            event = {"start": float(self.time[k]), "end": None, "joints": [],
                     "isolated_link": iso.link, "peak_ratio": 0.0,
                     "start_stamp": [int(self.sec[k]), int(self.nanosec[k])]}
        event["joints"] = [d for d in dofs if d in event["joints"]
                           or d in {dofs[j] for j in iso.joints}]
        if iso.peak_ratio > event["peak_ratio"]:
            event["peak_ratio"], event["isolated_link"] = float(iso.peak_ratio), iso.link
        return event

    def section(self):
        """Return the report's ``collisions`` entry."""
        return {"events": self.events, "thresholds": self.thresholds.tolist(),
                "observed_ticks": int(len(self.rows)),
                "contact_wrench_refused": self.wrench_refused[0],
                "contact_wrench_refusal": self.wrench_refused[1] or None}


def observe(parts, o, timing):
    """
    Return the :class:`Observed` of each part ``(first, model, ticks, joints)``.

    The dynamics are screened first (``dynamics.Batches``): the node steps the observer
    only at the ticks whose dynamics it published.
    """
    from .dynamics import Batches
    clock = time.perf_counter()
    out = []
    for _, model, t, joints in parts:
        screen = Batches(model, t, o.outputs, o.batch_size, {}, encode=False, joints=joints)
        screen.run()
        out.append(Observed(model, t, screen.refused, joints, o.observer_settings,
                            o.observer))
    timing["observer"] = time.perf_counter() - clock
    return out


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
    asked += [f"--{k.replace('_', '-')}" for k, v in arguments(args).items()
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
    if events:
        lines.append(f"{'start':>10} {'end':>10} {'peak':>8}  {'isolated link':<20} joints")
    for e in events[:TEXT_EVENTS]:
        end = "(open)" if e["end"] is None else f"{e['end']:.4f}"
        lines.append(f"{e['start']:>10.4f} {end:>10} {e['peak_ratio']:>8.3g}  "
                     f"{e['isolated_link'] or '':<20} {', '.join(e['joints'][:8])}")
    if len(events) > TEXT_EVENTS:
        lines.append(f"... and {len(events) - TEXT_EVENTS} more (report.json has every one)")
    return lines
