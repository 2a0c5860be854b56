"""
Why the dynamics node published nothing: counted by reason, logged throttled and bounded.

A mixin of :class:`rbd_ros.node.dynamics_node.DynamicsNode`. It uses the node's ``params``,
``_stats``, ``_wrenches`` and the counters set up in its ``__init__`` (``_skip_counts``:
key -> count for /diagnostics, ``_skip_reasons``: text -> count, the first 32 texts,
``_last_skip``, ``_throttle``). No maths here.
"""
from .. import outputs
from .reporting import one_line

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
              "callback error": "unexpected exception in the {where} callback: {error} "
                                "(ignored; the node runs on)"}


class SkipReporting:
    """Count, log and keep for /diagnostics every tick or message that publishes nothing."""

    def _skip_tick(self, robot, reason, now):
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
            details["topics"] = self._wrenches.waiting()[:8]
        elif reason == "stale wrench":
            details["topics"] = self._wrenches.older_than(p["max_joint_age"], now)[:8]
        self._skip(reason, **details)

    def _skip(self, key, **details):
        """
        Count and log a message or tick that publishes nothing.

        Counted by ``key`` of ``SKIP_TEXTS`` (for /diagnostics) and by its text; the text
        (``details`` filled in, one bounded line) is logged, throttled per ``key``.
        """
        text = one_line(SKIP_TEXTS[key].format(**details))
        self._stats["skipped"] += 1
        self._skip_counts[key] = self._skip_counts.get(key, 0) + 1
        self._last_skip = text
        reasons = self._skip_reasons
        if text not in reasons and len(reasons) >= 32:      # bounded: texts carry details
            text_key = "other reasons"
        else:
            text_key = text
        reasons[text_key] = reasons.get(text_key, 0) + 1
        self._warn(text, 2.0, key=key)

    def _warn(self, text, period, key=None):
        """Log ``text`` as a warning, throttled per ``key`` (default: the text itself)."""
        self._log_line(text if key is None else key, text, period)

    def _log_line(self, key, text, period, burst=1, level="warning"):
        """
        Log ``text`` (one bounded line) unless :class:`Throttle` holds it back.

        Throttled here, not by rclpy: its ``throttle_duration_sec`` inspects the caller's
        source file on every call (~0.2 ms, measured), which a tick skipped at 1 kHz cannot
        afford.
        """
        line = self._throttle(key, text, period, burst)
        if line is None:
            return
        # one call site per severity: rclpy refuses a call site that changes severity
        if level == "error":
            self.get_logger().error(one_line(line))
        else:
            self.get_logger().warning(one_line(line))
