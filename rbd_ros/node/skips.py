"""
Why the dynamics node published nothing: counted by reason, logged throttled and bounded.

:class:`Skips`, a collaborator of the node, owns the counts (``counts``: key -> count for
/diagnostics, ``reasons``: text -> count, the first 32 texts, ``last``: the last text) and
the log's throttle; it is given what it reads. No maths here.
"""
from collections import namedtuple

from .. import outputs
from .reporting import Throttle, one_line

# what the node logs and counts in /diagnostics when it publishes nothing, by reason
SKIP_TEXTS = {**outputs.REASONS, **outputs.ODOMETRY_REASONS,
              "no robot model": "no robot model yet ({why})",
              "bad command": "commanded acceleration must name every degree of freedom once "
                             "({count}): {names}...",
              "bad command values": "commanded acceleration with NaN/inf ignored",
              "bad wrench": "wrench on {topic} refused: {error}",
              "observer without efforts": "joint efforts unknown (NaN, inf or absent): the "
                                          "observer's outputs (~/external_torques, "
                                          "~/collision, ~/contact_wrench) are not published",
              "observer refused": "the momentum observer refused the state: {error}",
              "observer stamp": "the momentum observer skipped a sample: {error}",
              "observer overflow": "the momentum observer was reset: {error}",
              "callback error": "unexpected exception in the {where} callback: {error} "
                                "(ignored; the node runs on)"}


SkipRecord = namedtuple("SkipRecord", "counts reasons last")
"""Copies of the skips so far (:meth:`Skips.record`): ``counts``, ``reasons``, ``last``."""


class Skips:
    """
    Count, log and keep for /diagnostics every tick or message that publishes nothing.

    ``logger``: the node's; ``counters``: the node's ``Counters`` (``skipped`` is counted here);
    ``params``: its parameters (read at each skip: live values); ``wrenches``: its
    ``WrenchInputs`` (the topics a wrench skip names).
    """

    def __init__(self, logger, counters, params, wrenches):
        self.logger = logger
        self.counters = counters
        self.params = params
        self.wrenches = wrenches
        self.counts = {}                  # SKIP_TEXTS key -> count, for /diagnostics
        self.reasons = {}                 # text -> count (the first 32 texts)
        self.last = ""                    # the text of the last skip
        self.throttle = Throttle()

    def record(self):
        """Return a :data:`SkipRecord` of copies (a reader never sees them change)."""
        return SkipRecord(dict(self.counts), dict(self.reasons), self.last)

    def tick(self, robot, reason, now):
        """Count and log why the tick publishes nothing, with the details of its text."""
        p, cache = self.params, robot.cache
        details = {"max_joint_age": p["max_joint_age"], "odometry_topic": p["odometry_topic"],
                   "acceleration_topic": p["acceleration_topic"]}
        if reason == "incomplete":
            missing = cache.missing()
            details.update(count=len(missing), names=missing[:8])
        elif reason == "stale":
            details["names"] = cache.older_than(p["max_joint_age"], now)[:8]
        elif reason == "no wrench":
            details["topics"] = self.wrenches.waiting()[:8]
        elif reason == "stale wrench":
            details["topics"] = self.wrenches.older_than(p["max_joint_age"], now)[:8]
        self.skip(reason, **details)

    def skip(self, key, **details):
        """
        Count and log a message or tick that publishes nothing.

        Counted by ``key`` of ``SKIP_TEXTS`` (for /diagnostics) and by its text; the text
        (``details`` filled in, one bounded line) is logged, throttled per ``key``.
        """
        text = one_line(SKIP_TEXTS[key].format(**details))
        self.counters.add("skipped")
        self.counts[key] = self.counts.get(key, 0) + 1
        self.last = text
        reasons = self.reasons
        if text not in reasons and len(reasons) >= 32:      # bounded: texts carry details
            text_key = "other reasons"
        else:
            text_key = text
        reasons[text_key] = reasons.get(text_key, 0) + 1
        self.warn(text, 2.0, key=key)

    def warn(self, text, period, key=None):
        """Log ``text`` as a warning, throttled per ``key`` (default: the text itself)."""
        self.log_line(text if key is None else key, text, period)

    def log_line(self, key, text, period, burst=1, level="warning"):
        """
        Log ``text`` (one bounded line) unless :class:`Throttle` holds it back.

        Throttled here, not by rclpy: its ``throttle_duration_sec`` inspects the caller's
        source file on every call (~0.2 ms, measured), which a tick skipped at 1 kHz cannot
        afford.
        """
        line = self.throttle(key, text, period, burst)
        if line is None:
            return
        # one call site per severity: rclpy refuses a call site that changes severity
        if level == "error":
            self.logger.error(one_line(line))
        else:
            self.logger.warning(one_line(line))
