"""
What a replay computes and writes (:class:`ReplayOptions`), and the plan made of it.

``rbd_replay``'s options are one frozen object; :func:`plan` checks them once and derives
what the replay's steps read (:class:`Plan`, frozen too). What a replay learns while it runs
(the observers' results, the timing) is passed along beside them, never stored in them.
"""
import dataclasses
from types import MappingProxyType

from .. import outputs as table
from ..contact.observer_rule import ObserverSettings


@dataclasses.dataclass(frozen=True)
class ReplayOptions:
    """
    ``rbd_replay``'s options for one bag, frozen; :func:`dataclasses.replace` derives others.

    ``topic``, ``description_topic``, ``odom_topic``: the bag's topics; ``urdf``: a URDF
    path or text instead of the bag's description. ``floating_base``, ``mimic``: as
    ``load_model``'s. ``outputs``: the outputs table's names (``rbd_ros.outputs``).
    ``max_joint_age``, ``unknown_velocity``: the node's parameters of the same names (and
    defaults); ``acceleration``: "estimate" (Savitzky-Golay, ``window``, ``order``) or "zero"
    (the node without an acceleration_topic). ``node_name``: the node the outputs' topics
    are named after. ``storage``: the output bag's ("mcap" or "sqlite3"); ``batch_size``:
    messages per dynamics batch. ``report_dir``: where the report files go (None: none);
    ``plots``: with plots there. ``live``: play the bag into a dynamics_node at ``rate``
    instead (``live_options``: its settings, ``live.play``'s keywords). ``identify``
    ("least-squares" or "consistent"): also identify the inertial parameters from the
    answered messages with a known effort (``prior_weight``: the consistent fit's); the
    report gets an ``identification`` section and the report directory an
    ``identified.urdf``. ``model_params`` (a joint parameter file's text) or
    ``urdf_dynamics`` (the URDF's ``<dynamics>``): every output written, and the report's
    errors, include the joint friction / armature (``rbd_ros.actuation``); not with
    ``live``. ``max_relative_std``: percent; an identified value whose std is above it is
    reported as not identified. ``identify_payload``: a link; the report gets a ``payload``
    entry, the payload on it estimated from the same samples. ``observer_gain``,
    ``collision_thresholds``, ``contact_frame``: the node's parameters of the observer's
    outputs (external_torques, collision, contact_wrench); the report gets their
    ``collisions`` events. ``end_effector_frame``: the node's parameter of the same name,
    the link of the ``end_effector`` output (which needs it).
    """

    topic: str = "/joint_states"
    urdf: object = None
    description_topic: str = "/robot_description"
    floating_base: bool = False
    odom_topic: str = "/odom"
    mimic: str = "coupled"
    outputs: tuple = table.DEFAULTS
    window: int = 11
    order: int = 3
    max_joint_age: float = table.DEFAULT_MAX_JOINT_AGE
    unknown_velocity: str = table.UNKNOWN_VELOCITY[0]
    acceleration: str = "estimate"
    node_name: str = "rbd_dynamics"
    storage: str = "mcap"
    batch_size: int = 4096
    report_dir: object = None
    plots: bool = True
    live: bool = False
    rate: float = 1.0
    live_options: object = None
    identify: object = None
    prior_weight: object = None
    model_params: object = None
    urdf_dynamics: bool = False
    max_relative_std: float = 10.0
    identify_payload: object = None
    observer_gain: object = table.DEFAULT_OBSERVER_GAIN
    collision_thresholds: object = table.DEFAULT_COLLISION_THRESHOLD
    contact_frame: str = ""
    end_effector_frame: str = ""


@dataclasses.dataclass(frozen=True)
class Plan:
    """What the replay's steps read, derived from the options once (:func:`plan`)."""

    bag: object
    options: ReplayOptions
    outputs: tuple              # the dynamics outputs to compute, checked, torques first
    observer: tuple             # the observer's outputs asked for
    rule: MappingProxyType      # the node's tick rule: max_joint_age, unknown_velocity
    live_options: MappingProxyType
    joint_parameters: tuple     # (model_params, urdf_dynamics)
    max_relative_std: float     # a fraction
    observer_settings: ObserverSettings
    progress: object

    def __getattr__(self, name):
        # the options' other fields, as they are (bag, window, order, ...)
        if name == "options":
            raise AttributeError(name)
        return getattr(self.options, name)


def plan(bag, options, outputs, observer, progress):
    """Return the :class:`Plan` of replaying ``bag`` with ``options`` (already checked)."""
    o = options
    return Plan(
        bag=bag, options=o, outputs=tuple(outputs), observer=tuple(observer),
        rule=MappingProxyType(dict(max_joint_age=o.max_joint_age,
                                   unknown_velocity=o.unknown_velocity)),
        live_options=MappingProxyType(dict(o.live_options or {})),
        joint_parameters=(o.model_params, o.urdf_dynamics),
        max_relative_std=o.max_relative_std / 100,
        observer_settings=ObserverSettings(o.observer_gain, o.collision_thresholds,
                                           o.contact_frame, o.max_joint_age),
        progress=progress)
