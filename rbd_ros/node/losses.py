"""
The dynamics node's count of input messages lost before it (rclpy's message-lost event).

Its best-effort subscriptions (joint_states, odometry, commanded accelerations) take the
event; the RMW's running totals go into the node's ``messages_lost`` counter (``health``:
what the RMW counts as lost, and the /diagnostics rule). A mixin of ``DynamicsNode``.
"""
from rclpy.event_handler import SubscriptionEventCallbacks, UnsupportedEventTypeError

from .health import LOST, LostMessages
from .reporting import one_line


class LostMessageCounting:
    """Subscriptions that count what the RMW reports lost; the node's ``_stats[LOST]``."""

    def _init_lost_messages(self):
        self._lost = LostMessages()

    def _best_effort_subscription(self, msg_type, topic, callback, qos, raw=False):
        """
        Subscribe to ``topic``, counting the messages the RMW reports lost on the way.

        An RMW without the message-lost event makes rclpy raise once the subscription
        exists (its handle is then dropped with the exception): subscribe again without
        it, and /diagnostics says the count is not available rather than showing 0.
        """
        def message_lost(info):
            self._on_message_lost(topic, info.total_count)
        events = SubscriptionEventCallbacks(message_lost=self._guarded(message_lost))
        try:
            return self.create_subscription(msg_type, topic, callback, qos, raw=raw,
                                            event_callbacks=events)
        except UnsupportedEventTypeError as exc:
            self._lost.unsupported[topic] = one_line(exc, 100)
            return self.create_subscription(msg_type, topic, callback, qos, raw=raw)

    def _on_message_lost(self, topic, total):
        """Count the messages on ``topic`` lost before the node (``total``: the RMW's)."""
        new = self._lost.update(topic, total)
        if new:
            self._stats[LOST] += new
            self._warn(f"{new} {topic} messages lost before reaching the node (best effort; "
                       f"{self._lost.totals[topic]} in all)", 10.0, key="messages lost")
