"""
The dynamics node's ``~/estimate_payload``: a payload estimated from the recent joint states.

Every joint_states message that merges a model joint appends the raw merged state (stamp, q,
v, effort) to a ring (:class:`SampleRing`: :data:`CAPACITY` rows preallocated, the oldest
overwritten): a few row copies per message, no check and no object made; a stamp not after the
last one is not kept. A request takes the samples of its last ``window`` seconds (stamps; at
most the :data:`CAPACITY` kept), drops those with an unknown (NaN) or non-finite value, and
estimates the payload on ``link`` with everything else known
(``rbd_ros.identification.payload.estimate_from_stamps``: the accelerations fitted on the
samples' own stamps, no fit across a hole in them; the model without that link's payload,
the other payloads and the joint parameters included). ``apply`` installs it as
``~/set_payload`` does (``set_payload.install``: the same atomic swap). A new robot
description (other joints) empties the ring.

The estimate runs on a worker thread of its own (``planner.worker.PlannerWorker``: the
response is sent from it), not on the executor's: the ticks go on meanwhile, and its memory
is bounded (the regressor is built a chunk at a time).
"""
import functools
import threading

import numpy as np

from rbd_ros.identification import differentiation, payload as payload_identification
from .planner.worker import PlannerWorker
from .reporting import excerpt, names_excerpt
from .services import RequestError, guarded_service
from .set_payload import install

CAPACITY = 20_000          # samples kept, the most an estimate takes: 20 s at 1 kHz
MAX_RELATIVE_STD = 0.10    # the mass's relative std above which an estimate is refused


class SampleRing:
    """
    The last :data:`CAPACITY` (stamp, q, v, effort) of one robot's joints, as received.

    ``names``: the joints, in the order of the columns.
    """

    def __init__(self, names, capacity=CAPACITY):
        self.names, self.capacity = tuple(names), capacity
        self.width = width = len(self.names)
        self.source = self.names          # the joint cache's names it last took samples of
        # written through here (np.full; np.zeros' pages are mapped at their first write):
        # else the ticks' first pass through the ring (20 s, 15 MB on talos: numpy asks huge
        # pages for these) took the page faults, ~10 µs a tick on average and stalls of
        # milliseconds (doc/benchmarks.md, "the payload ring's pages")
        self.t = np.full(capacity, 0.0)
        # each sample's q, v and effort, the rows of one (3, width) block (a JointCache's
        # ``values``): an add copies them in one assignment
        self.samples = np.full((capacity, 3, width), 0.0)
        self.q, self.v, self.effort = (self.samples[:, k] for k in range(3))
        self.count = self.head = 0
        self.latest = -np.inf
        self.lock = threading.Lock()

    def add(self, stamp, values):
        """
        Append one sample (a stamp not after the last one is skipped: out of order).

        ``values``: (3, width), its q, v and effort (a ``JointCache``'s ``values``).
        """
        if not stamp > self.latest:
            return
        with self.lock:
            k = self.head
            self.t[k] = stamp
            self.samples[k] = values
            self.head = k + 1 if k + 1 < self.capacity else 0
            self.count = min(self.count + 1, self.capacity)
            self.latest = stamp

    def last(self, seconds):
        """
        Return (t, q, v, effort, clipped) of the complete samples of the last ``seconds``.

        Copies, in order; a sample with a value NaN (unknown) or inf is left out.
        ``clipped``: the window reaches past the oldest sample kept of a full ring.
        """
        with self.lock:
            idx = (self.head - self.count + np.arange(self.count)) % self.capacity
            t = self.t[idx]
            if self.count:
                idx = idx[t >= t[-1] - seconds]
            clipped = self.count == self.capacity and len(idx) == self.count
            t, q, v, effort = self.t[idx], self.q[idx], self.v[idx], self.effort[idx]
        keep = np.isfinite(q).all(1) & np.isfinite(v).all(1) & np.isfinite(effort).all(1)
        return t[keep], q[keep], v[keep], effort[keep], clipped


class PayloadSamples:
    """The node's ring of joint states (a collaborator): ``ring``, None before one."""

    def __init__(self):
        self.ring = None

    def prepare(self, joint_names):
        """
        Make the ring of a robot with the joints ``joint_names`` now, unless it has them.

        Called as the node swaps a robot in (its ``JointCache.joint_names``), so that no tick
        makes (and writes through) it; the same joints (a parameter change, the description
        again) keep the samples.
        """
        ring = self.ring
        if ring is None or ring.names != tuple(joint_names):
            ring = SampleRing(joint_names)
        ring.source = joint_names
        self.ring = ring

    def record(self, cache, stamp):
        """
        Keep the merged joint state (``JointCache``) of a joint_states message in the ring.

        Stamped ``stamp`` (sec, nanosec). Unknown values are kept as they are (NaN), and
        left out by an estimate. The sample of a robot swapped out meanwhile (its tick began
        before the swap) is not kept.
        """
        ring = self.ring
        if ring is None:
            self.prepare(cache.joint_names)       # a robot not swapped in through the node
            ring = self.ring
        elif ring.source is not cache.joint_names:
            if ring.names != cache.joint_names:
                return
            ring.source = cache.joint_names       # the same joints: a new cache of them
        ring.add(stamp[0] + 1e-9 * stamp[1], cache.values)


def create_estimate_payload_service(node, rbd_srv, robots, samples):
    """
    Create ``~/estimate_payload`` on ``node`` (a ``DynamicsNode``), served by a worker thread.

    ``robots``: its ``robot.RobotSwap``; ``samples``: its :class:`PayloadSamples`. Returns
    the worker (``PlannerWorker``), for the node to close.
    """
    worker = PlannerWorker(node.get_logger())
    handler = functools.partial(estimate_payload, robots, samples, node.get_logger())
    worker.create_service(node, rbd_srv.EstimatePayload, "~/estimate_payload",
                          guarded_service(node, "estimate_payload", handler))
    return worker


def estimate_payload(robots, samples, logger, robot, req, resp):
    """Estimate (and with ``apply`` install) the payload of ``req.link``; fill ``resp``."""
    if req.link not in robot.model.link_frames:
        raise RequestError(f"no link {excerpt(req.link)} in the model (its links: "
                           f"{names_excerpt(list(robot.model.link_frames))})")
    if robot.model.floating_base:
        raise RequestError("a payload is estimated on a fixed-base robot only (the samples "
                           "keep no base state)")
    if not (np.isfinite(req.window) and req.window > 0):
        raise RequestError(f"window must be a finite number of seconds > 0, got {req.window}")
    ring = samples.ring
    t, q, v, effort, clipped = ring.last(req.window) if ring is not None else ((),) * 4 + (0,)
    resp.samples = len(t)
    if len(t) < 2 * differentiation.WINDOW:
        raise RequestError(f"{len(t)} samples with a complete effort in the last "
                           f"{req.window:g} s: too few to estimate a payload")
    logger.info(f"estimating the payload on {req.link} from {len(t)} samples")
    model = robot.unloaded
    for link, inertia in robot.payloads.items():
        if link != req.link:
            model = model.with_payload(link, inertia)
    extra = robot.joints.params.torques if robot.joints is not None else None
    est = payload_identification.estimate_from_stamps(model, req.link, t, q, v, effort, extra,
                                                      MAX_RELATIVE_STD)
    resp.samples = est.samples
    resp.parameters = [float(x) for x in est.values]
    resp.stds = [float(x) for x in est.stds]
    if not est.ok:
        raise RequestError(est.message)
    if req.apply:
        install(robots, req.link, est.compact())
    resp.message = est.message + (" (applied)" if req.apply else "")
    if clipped:
        resp.message += (f" (the window reaches past the {CAPACITY} samples kept: the last "
                         f"{t[-1] - t[0]:.4g} s used)")
