"""
The dynamics node's count of input messages lost before it (rclpy's message-lost event).

Its best-effort subscriptions (joint_states, odometry, commanded accelerations) take the
event; the RMW's running totals go into the node's ``messages_lost`` counter (``health``:
what the RMW counts as lost, and the /diagnostics rule). :class:`LostMessageCounter` is a
collaborator of the node: it creates those subscriptions on the node it is given.
"""
from rclpy.event_handler import SubscriptionEventCallbacks, UnsupportedEventTypeError

from .health import LOST, LostMessages
from .reporting import one_line


class LostMessageCounter:
    """
    Subscriptions that count what the RMW reports lost, into the counter ``LOST``.

    ``node``: the rclpy node the subscriptions belong to; ``counters``: the node's ``Counters``;
    ``warn(text, period, key)``: its throttled warning; ``guard(callback)``: its callback
    boundary.
    """

    def __init__(self, node, counters, warn, guard):
        self.node = node
        self.counters = counters
        self.warn = warn
        self.guard = guard
        self.lost = LostMessages()

    def subscribe(self, msg_type, topic, callback, qos, raw=False):
        """
        Subscribe to ``topic``, counting the messages the RMW reports lost on the way.

        An RMW without the message-lost event makes rclpy raise once the subscription
        exists (its handle is then dropped with the exception): subscribe again without
        it, and /diagnostics says the count is not available rather than showing 0.
        """
        def message_lost(info):
            self.on_message_lost(topic, info.total_count)
        events = SubscriptionEventCallbacks(message_lost=self.guard(message_lost))
        try:
            return self.node.create_subscription(msg_type, topic, callback, qos, raw=raw,
                                                 event_callbacks=events)
        except UnsupportedEventTypeError as exc:
            self.lost.unsupported[topic] = one_line(exc, 100)
            return self.node.create_subscription(msg_type, topic, callback, qos, raw=raw)

    def on_message_lost(self, topic, total):
        """Count the messages on ``topic`` lost before the node (``total``: the RMW's)."""
        new = self.lost.update(topic, total)
        if new:
            self.counters.add(LOST, new)
            self.warn(f"{new} {topic} messages lost before reaching the node (best effort; "
                      f"{self.lost.totals[topic]} in all)", 10.0, key="messages lost")

    def value(self):
        """Return the /diagnostics value: the total lost, or why it is not available."""
        return self.lost.value()
