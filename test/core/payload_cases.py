"""
The payload calibration: random payloads simulated with Pinocchio, estimated from the stamps.

Shared by ``test_payload_calibration.py`` (a few cases) and
``bench/bench_payload_calibration.py`` (many). Each case: a random rigid payload on the arm's
``tool`` link (``pinocchio_oracles.random_payload``), 10 s of the multi-sine trajectory at
``rate``, efforts by Pinocchio plus Gaussian noise σ, with or without a 300 ms hole in the
stamps; the estimate sees the stamps, q, v and the efforts, never the accelerations.
"""
import numpy as np

from rbd_ros.identification import payload as payload_identification
from pinocchio_oracles import random_payload, simulate_payload

NOISES = (0.0, 0.01, 0.05)       # N·m
HOLE = (3.0, 3.3)                # s after the first stamp: the samples removed


def truth_values(mass, com, inertia):
    """Return the reported numbers (``payload.NAMES`` order) of a payload."""
    return np.r_[mass, com, inertia[0, 0], inertia[0, 1], inertia[0, 2], inertia[1, 1],
                 inertia[1, 2], inertia[2, 2]]


def run(pin, model, payloads, rate=100.0, seconds=10.0):
    """
    Yield (seed, noise, hole, estimate, truth) for payload seeds 0 .. ``payloads`` - 1.

    Every seed is run at each σ of :data:`NOISES`, without and with the hole.
    """
    for seed in range(payloads):
        payload = random_payload(np.random.default_rng(seed))
        for noise in NOISES:
            for hole in (False, True):
                t = 100.0 + np.arange(int(seconds * rate)) / rate
                if hole:
                    t = t[(t < 100.0 + HOLE[0]) | (t >= 100.0 + HOLE[1])]
                q, v, tau = simulate_payload(pin, model, "tool", payload, t, noise, seed)
                est = payload_identification.estimate_from_stamps(model, "tool", t, q, v, tau,
                                                                  max_relative_std=1.0)
                yield seed, noise, hole, est, truth_values(*payload)
