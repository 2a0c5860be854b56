"""
The level and message of the dynamics node's /diagnostics: true of the last period only.

A status that looks at totals since start-up says OK for ever once something was published;
:class:`Health` compares the node's counters with those of its previous report, so OK means
outputs of the current model were published in this period and nothing was skipped. No ROS
here (the levels are diagnostic_msgs/DiagnosticStatus's).

Input messages lost (:class:`LostMessages`, counter ``messages_lost``): the rule is that of
skips, WARN when at least one was lost in the period, since a lost joint_states message is a
tick not computed just as a skipped one is. The count is what the RMW reports: with
rmw_fastrtps_cpp (Jazzy) a best-effort reader reports a sample as lost when it sees a gap in
a publisher's sequence numbers (dropped on the way: a full socket or shared-memory buffer, a
lossy network). A message that the node's own queue (keep last, depth 50) replaced because
the node fell behind is no loss to DDS and is not counted: the ``joint_states rate [Hz]``
against the publisher's rate shows that.
"""
import time

OK, WARN, ERROR = 0, 1, 2        # DiagnosticStatus.OK, WARN, ERROR
LOST = "messages_lost"           # the node's counter of input messages lost before it
PLANNER_EXITS = "planner_exits"  # its counter of planner processes that exited unasked


class LostMessages:
    """
    The running totals of lost messages that the RMW reports, per subscribed topic.

    rclpy's message-lost event carries the subscription's total since it was created;
    events may be coalesced, so the totals (not the changes) are kept. ``unsupported``:
    topic -> why the RMW reports no losses for it (then no count is shown: never a 0 that
    only means "not measured").
    """

    def __init__(self):
        self.totals = {}
        self.unsupported = {}

    def update(self, topic, total):
        """Take ``topic``'s running total; return how many messages are newly lost."""
        new = int(total) - self.totals.get(topic, 0)
        if new <= 0:
            return 0
        self.totals[topic] = int(total)
        return new

    def value(self):
        """Return the /diagnostics value: the total lost, or why it is not available."""
        if self.unsupported:
            why = "; ".join(f"{t}: {w}" for t, w in sorted(self.unsupported.items()))
            return f"not available ({why})"[:200]
        return sum(self.totals.values())


class Health:
    """The counters at the previous report, and the status of the period since."""

    def __init__(self, clock=time.monotonic):
        self.clock = clock
        self._since = clock()
        self._stats, self._skips = {}, {}

    def assess(self, stats, skips, model_name, rejected="", outputs_enabled=True, planner=""):
        """
        Return (level, message) of the period since the previous call.

        ``stats``: the node's counters; ``skips``: its skip counts by reason; ``model_name``:
        of the running model (None: none loaded); ``rejected``: why the last robot
        description was rejected ("" when it was loaded); ``outputs_enabled``: whether any
        output topic is on; ``planner``: why the planner process is down ("" when it is not).
        Lost input messages, a planner process that exited in the period (counter
        ``planner_exits``) or is down make an OK period a WARN one, and are said after the
        message otherwise.
        """
        now = self.clock()
        seconds = now - self._since
        d = {k: v - self._stats.get(k, 0) for k, v in stats.items()}
        d_skips = {k: v - self._skips.get(k, 0) for k, v in skips.items()}
        self._since, self._stats, self._skips = now, dict(stats), dict(skips)
        level, message = _status(d, d_skips, seconds, model_name, rejected, outputs_enabled)
        lost, exits = d.get(LOST, 0), d.get(PLANNER_EXITS, 0)
        texts = []
        if lost > 0:
            texts.append(f"{lost} input messages lost in the last {seconds:.1f} s before the node")
        if planner:
            texts.append(planner)
        elif exits > 0:
            texts.append(f"the planner process exited {exits} times in the last {seconds:.1f} s "
                         "(restarted)")
        for text in texts:
            level, message = (WARN, f"{text}; {message}") if level == OK else \
                (level, f"{message}; {text}")
        return level, message


def _status(d, d_skips, seconds, model_name, rejected, outputs_enabled):
    """Return (level, message) of a period from its counters ``d``, losses aside."""
    if model_name is None:
        if rejected:
            return ERROR, f"no robot model: the robot description was rejected: {rejected}"
        return WARN, "no robot model yet (waiting for robot_description)"
    if d.get("skipped", 0) > 0:
        reason, count = max(d_skips.items(), key=lambda kv: kv[1])
        return WARN, (f"{d['skipped']} messages or ticks skipped in the last "
                      f"{seconds:.1f} s, mostly {reason!r} ({count})")
    if rejected:
        return WARN, (f"running model {model_name!r}; the last robot description was "
                      f"rejected: {rejected}")
    if not outputs_enabled:
        return OK, "no output enabled (services only)"
    if d.get("joint_states", 0) == 0:
        return WARN, f"stale input: no joint_states in the last {seconds:.1f} s"
    if d.get("published", 0) == 0:
        if d.get("no_model_joint", 0):
            return WARN, (f"nothing published: joint_states name no joint of model "
                          f"{model_name!r}")
        return WARN, f"nothing published in the last {seconds:.1f} s"
    return OK, f"computing: {d['published']} ticks published in the last {seconds:.1f} s"
