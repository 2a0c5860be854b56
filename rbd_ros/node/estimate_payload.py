"""
The dynamics node's ``~/estimate_payload``: a payload estimated from the recent joint states.

Every joint_states message that completes the merged state (every position, velocity and
effort known) appends (stamp, q, v, effort) to a ring buffer
(:class:`SampleRing`: :data:`CAPACITY` samples at most, preallocated; bounded memory, the
oldest overwritten). A request takes the samples of its last ``window`` seconds (stamps),
differentiates the velocities (Savitzky-Golay, :data:`SG_WINDOW` samples, cubic) and
estimates the payload on ``link`` with everything else known
(``rbd_ros.identification.payload``: the model without that link's payload, the other
payloads and the joint parameters included). ``apply`` installs it as ``~/set_payload``
does (``set_payload.install``: the same atomic swap). A new robot description (other joints)
empties the ring.
"""
import functools
import threading

import numpy as np

from rbd_ros.identification import payload as payload_identification
from .set_payload import install
from .reporting import excerpt, one_line, names_excerpt

CAPACITY = 60_000          # samples: one minute at 1 kHz (a 7-joint arm: 10 MB)
SG_WINDOW = 11
MAX_RELATIVE_STD = 0.10


class SampleRing:
    """The last :data:`CAPACITY` (stamp, q, v, effort) of one robot's joints."""

    def __init__(self, nq, nv, capacity=CAPACITY):
        self.t = np.zeros(capacity)
        self.q = np.zeros((capacity, nq))
        self.v = np.zeros((capacity, nv))
        self.effort = np.zeros((capacity, nv))
        self.count = self.head = 0
        self.lock = threading.Lock()

    def add(self, stamp, q, v, effort):
        """Append one sample (a stamp not after the last one is skipped: out of order)."""
        with self.lock:
            if self.count and stamp <= self.t[(self.head - 1) % len(self.t)]:
                return
            k = self.head
            self.t[k], self.q[k], self.v[k], self.effort[k] = stamp, q, v, effort
            self.head = (k + 1) % len(self.t)
            self.count = min(self.count + 1, len(self.t))

    def last(self, seconds):
        """Return copies (t, q, v, effort) of the samples of the last ``seconds``, in order."""
        with self.lock:
            idx = (self.head - self.count + np.arange(self.count)) % len(self.t)
            t = self.t[idx]
            keep = idx[t >= t[-1] - seconds] if self.count else idx
            return self.t[keep], self.q[keep], self.v[keep], self.effort[keep]


class PayloadSamples:
    """The node's ring of complete joint states (a collaborator): ``ring``, None before one."""

    def __init__(self):
        self.ring = None

    def record(self, cache, stamp):
        """
        Keep the merged joint state (``JointCache``) of a joint_states message in the ring.

        Only a complete one (every position, velocity and effort finite), stamped ``stamp``
        (sec, nanosec); a cache of other sizes (a new robot) starts a new ring.
        """
        q, v, effort = cache.position, cache.velocity, cache.effort
        if not (np.all(np.isfinite(q)) and np.all(np.isfinite(v))
                and np.all(np.isfinite(effort))):
            return
        ring = self.ring
        if ring is None or ring.q.shape[1] != len(q) or ring.v.shape[1] != len(v):
            ring = self.ring = SampleRing(len(q), len(v))
        ring.add(stamp[0] + 1e-9 * stamp[1], q, v, effort)


def create_estimate_payload_service(node, rbd_srv, robots, samples):
    """
    Create ``~/estimate_payload`` on ``node`` (a ``DynamicsNode``).

    ``robots``: its ``robot.RobotSwap``; ``samples``: its :class:`PayloadSamples`.
    """
    handler = functools.partial(estimate_payload, robots, samples)

    def callback(req, resp):
        resp.ok, resp.message = False, ""
        robot = robots.current()
        if robot is None:
            node.request_refused("estimate_payload")
            resp.message = "no robot model yet"
            return resp
        try:
            handler(robot, req, resp)
        except ValueError as exc:
            node.request_refused("estimate_payload")
            resp.ok, resp.message = False, one_line(f"estimate_payload: {exc}")
        except Exception as exc:
            node.callback_failed("estimate_payload", exc)
            resp.ok = False
            resp.message = one_line(f"estimate_payload: internal error ({type(exc).__name__})")
        return resp
    node.create_service(rbd_srv.EstimatePayload, "~/estimate_payload", callback)


def estimate_payload(robots, samples, robot, req, resp):
    """Estimate (and with ``apply`` install) the payload of ``req.link``; fill ``resp``."""
    from scipy.signal import savgol_filter

    if req.link not in robot.model.link_frames:
        raise ValueError(f"no link {excerpt(req.link)} in the model (its links: "
                         f"{names_excerpt(list(robot.model.link_frames))})")
    if not (np.isfinite(req.window) and req.window > 0):
        raise ValueError(f"window must be a finite number of seconds > 0, got {req.window}")
    ring = samples.ring
    t, q, v, effort = ring.last(req.window) if ring is not None else ((),) * 4
    resp.samples = len(t)
    if len(t) < 2 * SG_WINDOW:
        raise ValueError(f"{len(t)} samples with a complete effort in the last "
                         f"{req.window:g} s: too few to estimate a payload")
    dt = np.diff(t)
    a = savgol_filter(v, SG_WINDOW, 3, deriv=1, delta=float(np.median(dt)), axis=0,
                      mode="interp")
    others = {k: x for k, x in robot.payloads.items() if k != req.link}
    model = robot.unloaded
    for link, inertia in others.items():
        model = model.with_payload(link, inertia)
    extra = robot.joints.params.torques(v, a) if robot.joints is not None else None
    est = payload_identification.estimate(model, req.link, q, v, a, effort, extra,
                                          MAX_RELATIVE_STD)
    resp.parameters = [float(x) for x in est.values]
    resp.stds = [float(x) for x in est.stds]
    if not est.ok:
        raise ValueError(est.message)
    if req.apply:
        install(robots, req.link, est.compact())
    resp.ok, resp.message = True, est.message + (" (applied)" if req.apply else "")
