"""
The level and message of the dynamics node's /diagnostics: true of the last period only.

A status that looks at totals since start-up says OK for ever once something was published;
:class:`Health` compares the node's counters with those of its previous report, so OK means
outputs of the current model were published in this period and nothing was skipped. No ROS
here (the levels are diagnostic_msgs/DiagnosticStatus's).
"""
import time

OK, WARN, ERROR = 0, 1, 2        # DiagnosticStatus.OK, WARN, ERROR


class Health:
    """The counters at the previous report, and the status of the period since."""

    def __init__(self, clock=time.monotonic):
        self.clock = clock
        self._since = clock()
        self._stats, self._skips = {}, {}

    def assess(self, stats, skips, model_name, rejected="", outputs_enabled=True):
        """
        Return (level, message) of the period since the previous call.

        ``stats``: the node's counters; ``skips``: its skip counts by reason; ``model_name``:
        of the running model (None: none loaded); ``rejected``: why the last robot
        description was rejected ("" when it was loaded); ``outputs_enabled``: whether any
        output topic is on.
        """
        now = self.clock()
        seconds = now - self._since
        d = {k: v - self._stats.get(k, 0) for k, v in stats.items()}
        d_skips = {k: v - self._skips.get(k, 0) for k, v in skips.items()}
        self._since, self._stats, self._skips = now, dict(stats), dict(skips)
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
