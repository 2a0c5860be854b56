"""
The dynamics node's output topics: exactly the enabled outputs are advertised.

:class:`OutputTopics` (a collaborator of the node) creates a publisher for each output the
parameters turn on, the observer's included, and destroys the others once the robot that
published on them is replaced (the node's order: :meth:`OutputTopics.advertise`, a new
robot, :meth:`OutputTopics.drop_unused`).
"""
from .. import outputs
from . import contact, conversions, parameters


class OutputTopics:
    """
    The publishers of the enabled outputs; ``node``: the rclpy node they belong to.

    ``interfaces``: whether rbd_ros_interfaces is installed (its outputs are off without
    it). ``publishers``: output name -> publisher; ``enabled``, ``observing``: the names
    of the enabled outputs and observer outputs; ``switches``: output name -> on;
    ``forward_enabled``: whether an enabled output needs the measured effort.
    """

    def __init__(self, node, interfaces):
        self.node = node
        self.interfaces = interfaces
        self.publishers = {}
        self.enabled = self.observing = ()
        self.switches = {}
        self.forward_enabled = False

    def advertise(self, params):
        """Create the publishers of the outputs ``params`` turn on (the others are kept)."""
        enabled = parameters.enabled_outputs(params, self.interfaces)
        observing = contact.observer_outputs(params, self.interfaces)
        for name in (*enabled, *observing):
            if name not in self.publishers:
                o = outputs.BY_NAME.get(name) or outputs.OBSERVER_BY_NAME.get(
                    name, outputs.CONTACT_WRENCH)
                self.publishers[name] = self.node.create_publisher(
                    conversions.message_class(o.msgtype), o.topic, 10)
        self.enabled = enabled
        self.observing = observing
        self.frame = params.get("end_effector_frame", "")    # ~/end_effector's link
        self.switches = {name: name in enabled for name in outputs.NAMES}
        self.forward_enabled = any(outputs.BY_NAME[k].needs_effort for k in enabled)

    def drop_unused(self):
        """Destroy the publishers of the outputs no longer enabled."""
        for name in [n for n in self.publishers if n not in self.enabled + self.observing]:
            self.node.destroy_publisher(self.publishers.pop(name))


def missing_interfaces_text(params):
    """Return the warning of a node without rbd_ros_interfaces: the outputs it loses."""
    custom = sorted(set(parameters.enabled_outputs(params))
                    - set(parameters.enabled_outputs(params, interfaces=False)))
    return ("rbd_ros_interfaces is not installed: services are off, and so are the outputs "
            f"{custom} (only ~/torques and /diagnostics are published). Build it with "
            "scripts/build_interfaces.py or colcon (see README).")
