"""
The dynamics node's measured wrenches: ``geometry_msgs/WrenchStamped`` topics as ``fext``.

The parameter ``wrench_topics`` lists the inputs, one ``"TOPIC:LINK"`` string each (a ROS
topic name has no ``:``, so the first one separates them): F/T sensors, contact estimators.
Each message is the wrench the environment exerts on LINK (``rbd_ros.contact.measured_wrenches``:
the sign, the frames), expressed in its header's frame, which must be LINK's own frame
(``frame_id`` equal to LINK) or the world (``frame_id`` equal to the ``world_frame`` parameter);
any other frame, a NaN or inf, or bytes that do not decode are refused (counted per input, logged,
throttled) and the previous wrench of that input stays, ageing.

The latest wrench of every input enters the tick's RNEA and ABA (every output) as ``fext``:
the torques are then those the motors must produce. Staleness is the joint states' rule
(``rbd_ros.outputs.TickRule``): a tick is skipped while an input has never delivered a
valid wrench ("no wrench") or its latest is older than ``max_joint_age`` ("stale wrench"),
so a wrench that stopped coming is never silently used. The single-state and trajectory
services compute for the caller's state and do not use the measured wrenches.

A link must be a link of the robot (a body or one welded to a body by fixed joints):
a description without one of them is rejected, as any description the node cannot model.
"""
import math
from collections import namedtuple

import numpy as np

from ..formats import cdr
from ..contact import measured_wrenches as wrench
from ..model.model import link_table
from .reporting import excerpt

MAX_INPUTS = 64
STATS = ("received", "refused")
WrenchRecord = namedtuple("WrenchRecord", "link counts last_refusal received")
"""Copies of one input's state (:meth:`WrenchInputs.record`): its link, its ``counts``
(``STATS``), the last refusal's text and ``received`` (-inf: no valid wrench yet)."""


def parse_wrench_topics(entries):
    """
    Return ((topic, link), ...) of the ``wrench_topics`` parameter's ``entries``.

    ValueError naming the entry: not "TOPIC:LINK", an empty or invalid topic name, an empty
    link, a topic listed twice, more than :data:`MAX_INPUTS` entries.
    """
    entries = list(entries or ())
    if len(entries) > MAX_INPUTS:
        raise ValueError(f"wrench_topics: at most {MAX_INPUTS} entries, got {len(entries)}")
    parsed, seen = [], set()
    for entry in entries:
        topic, sep, link = str(entry).partition(":")
        topic, link = topic.strip(), link.strip()
        if not sep or not topic or not link:
            raise ValueError(f"wrench_topics entry {excerpt(entry, 60)} must be "
                             "'TOPIC:LINK' (e.g. '/ft_sensor/wrench:tool0')")
        why = _topic_problem(topic)
        if why:
            raise ValueError(f"wrench_topics entry {excerpt(entry, 60)}: {why}")
        if topic in seen:
            raise ValueError(f"wrench_topics lists the topic {excerpt(topic, 60)} twice")
        seen.add(topic)
        parsed.append((topic, link))
    return tuple(parsed)


def _topic_problem(topic):
    """Say why ``topic`` is not a valid ROS topic name, or return None."""
    body = topic[2:] if topic.startswith("~/") else topic.lstrip("/")
    if topic.startswith("~") and topic != "~" and not topic.startswith("~/"):
        return f"topic {excerpt(topic, 60)} is not a valid ROS name"
    tokens = body.split("/")
    for token in tokens:
        if not token or token[0].isdigit() or not all(c.isalnum() or c == "_" for c in token):
            return (f"topic {excerpt(topic, 60)} is not a valid ROS name (letters, digits "
                    "and '_' between '/')")
    return None


class WrenchInputs:
    """
    The latest wrench of every ``wrench_topics`` input and its age.

    ``values`` (n, 6) and ``frame_codes`` (``wrench.LINK`` or ``wrench.WORLD``, named by
    ``wrench.FRAMES``) of the latest valid message of each input, ``received`` its
    ``time.monotonic()`` (-inf: none yet); per-input counts for /diagnostics.
    """

    def __init__(self, entries, world_frame):
        self.inputs = parse_wrench_topics(entries)
        self.world_frame = world_frame
        n = len(self.inputs)
        self.values = np.zeros((n, 6))
        self.frame_codes = np.zeros(n, np.int64)      # wrench.LINK / WORLD, for the kernel
        self.received = np.full(n, -np.inf)
        self.counts = [dict.fromkeys(STATS, 0) for _ in range(n)]
        self.last_refusal = [""] * n
        self._fext = None
        self._table = (None, None)                    # (model, model.link_table of it)

    def __bool__(self):
        return bool(self.inputs)

    def record(self):
        """Return ``{topic: WrenchRecord}`` of copies, in ``wrench_topics`` order."""
        return {topic: WrenchRecord(link, dict(self.counts[k]), self.last_refusal[k],
                                    float(self.received[k]))
                for k, (topic, link) in enumerate(self.inputs)}

    def check_links(self, model):
        """Raise ValueError naming the inputs' links that ``model`` does not have."""
        unknown = [link for _, link in self.inputs if link not in model.link_frames]
        if unknown:
            raise ValueError(f"wrench_topics names links the robot does not have: "
                             f"{', '.join(excerpt(x, 40) for x in unknown[:8])}")

    def subscribe(self, node, qos, guarded):
        """Create one raw subscription per input on ``node``; callbacks behind ``guarded``."""
        from geometry_msgs.msg import WrenchStamped
        from rclpy.serialization import deserialize_message

        def fallback(raw):
            return deserialize_message(raw, WrenchStamped)
        for k, (topic, _) in enumerate(self.inputs):
            node.create_subscription(
                WrenchStamped, topic,
                guarded(lambda raw, k=k: self.on_message(k, raw, node, fallback)), qos,
                raw=True)

    def on_message(self, k, raw, node, fallback):
        """Take input ``k``'s message bytes, or refuse it (counted, logged by ``node``)."""
        import time
        self.counts[k]["received"] += 1
        try:
            _, frame_id, values = cdr.decode_wrench_stamped(raw, fallback)
            frame = self._frame(k, frame_id)
            if not np.isfinite(values).all():
                raise ValueError("the wrench has NaN or inf")
        except ValueError as exc:
            self.counts[k]["refused"] += 1
            self.last_refusal[k] = str(exc)[:200]
            node.wrench_refused(self.inputs[k][0], exc)
            return
        self.values[k] = values
        self.frame_codes[k] = wrench.FRAMES.index(frame)
        self.received[k] = time.monotonic()

    def _frame(self, k, frame_id):
        """Return "link" or "world" for a message of input ``k`` in ``frame_id``."""
        link = self.inputs[k][1]
        if frame_id == link:
            return "link"
        if frame_id == self.world_frame:
            return "world"
        raise ValueError(f"frame_id {excerpt(frame_id, 40)}: must be the link "
                         f"{excerpt(link, 40)} or the world frame "
                         f"{excerpt(self.world_frame, 40)}")

    def age(self, now):
        """Seconds since the input updated longest ago delivered (inf: one never did)."""
        return float(now - self.received.min()) if len(self.received) else 0.0

    def waiting(self):
        """Return the topics that have not delivered a valid wrench yet."""
        return [t for (t, _), r in zip(self.inputs, self.received) if r == -math.inf]

    def older_than(self, max_age, now):
        """Return the topics whose latest wrench is older than ``max_age`` seconds."""
        return [t for (t, _), r in zip(self.inputs, self.received) if now - r > max_age]

    def fext(self, model, q):
        """Return the tick's ``fext`` (nbodies, 6): the latest wrenches at configuration q."""
        if self._table[0] is not model:               # a new robot description or payload
            self._table = (model, link_table(model, [link for _, link in self.inputs]))
            self._fext = np.zeros((model.nbodies, 6))
        bodies, placements = self._table[1]
        return wrench.fext_into(model, q, bodies, placements, self.frame_codes, self.values,
                                self._fext)

    def diagnostics(self, now):
        """{key: value} of every input for /diagnostics: counts, age, last refusal."""
        values = {}
        for k, (topic, link) in enumerate(self.inputs):
            age = now - self.received[k]
            frame = wrench.FRAMES[self.frame_codes[k]] if age != math.inf else "-"
            values[f"wrench {topic} ({link})"] = (
                f"received {self.counts[k]['received']}, refused {self.counts[k]['refused']}, "
                f"age {'none yet' if age == math.inf else f'{age:.3f} s'}, frame {frame}"
                + (f", last refusal: {self.last_refusal[k]}" if self.last_refusal[k] else ""))
        return values
