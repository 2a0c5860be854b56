"""
The observer's rules for hostile samples, one at a time (the node) and in batches (the replay).

A sequence of arm7 samples simulated by Pinocchio (``contact_sim``) made hostile: repeated,
late and quantized stamps, a clock set back by more than max_gap, NaN efforts (whose stamp
is then not used), a NaN stamp and efforts of ±1.7e308. ``MomentumObserver.step`` one sample
at a time and ``run_with_wrench`` over the whole sequence, or over chunks of it, must give
the same r, statuses, restarts and tracking: the node and the replay publish the same
messages. Where it steps it meets Pinocchio's τ_ext once settled, and its state and outputs
stay finite.
"""
import numpy as np
import pytest

from rbd_ros.contact import detection as contact
from contact_sim import simulated_contact

pytestmark = pytest.mark.pinocchio

K, GAP = 100.0, 0.05


def hostile():
    robot, run, _ = simulated_contact("arm7", "link7", (6.0, 0.0, 8.0))
    n = 900
    rows = np.r_[np.arange(0, 200), np.repeat(np.arange(200, 300), 2),          # twice
                 np.arange(301, 400).reshape(-1, 3)[:, ::-1].reshape(-1),       # late
                 np.arange(400, n)]
    t = run.t[rows].copy()
    t[(rows >= 500) & (rows < 600)] = np.floor(t[(rows >= 500) & (rows < 600)] * 100) / 100
    t[rows >= 700] -= 1.0                                     # the clock set back by 1 s
    tau = run.tau[rows].copy()
    tau[100, 3] = np.nan                                      # refused: its stamp unused
    tau[101], t[101] = run.tau[rows[100]], t[100]             # the same stamp, good efforts
    t[150] = np.nan                                           # refused
    tau[640:660, 1] = np.where(np.arange(20) % 2, 1.7e308, -1.7e308)    # overflows
    return robot, run, rows, t, run.q[rows], run.v[rows], tau


def test_one_at_a_time_and_in_batches_agree():
    robot, run, rows, t, q, v, tau = hostile()
    m = robot.model
    one = contact.MomentumObserver(m, K, max_gap=GAP, frame="link7")
    r1, status1, restarted1, tracking1 = [], [], [], []
    for k in range(len(t)):
        try:
            r1.append(one.step(t[k], q[k], v[k], tau[k]))
            status1.append(0)
            restarted1.append(one.restarted)
            tracking1.append(one.tracking)
        except contact.SampleSkipped as exc:
            r1.append(None), status1.append(exc.status)
            restarted1.append(False), tracking1.append(False)
        except ValueError:
            r1.append(None), status1.append(1), restarted1.append(False)
            tracking1.append(False)
        assert np.isfinite(one.state).all()
    status1 = np.array(status1)
    assert (status1 == contact.STAMP_NOT_AFTER).sum() >= 100 + 66 + 90
    assert (status1 == contact.OVERFLOW).sum() >= 1 and status1[101] == 0
    for chunks in ([len(t)], [37] * (len(t) // 37 + 1)):
        batch = contact.MomentumObserver(m, K, max_gap=GAP, frame="link7")
        r2, status2, restarted2, tracking2 = [], [], [], []
        start = 0
        for size in chunks:
            part = slice(start, min(start + size, len(t)))
            r, restarted, status, w, _ = batch.run_with_wrench(t[part], q[part], v[part],
                                                               tau[part])
            r2 += list(r)
            status2 += list(status)
            restarted2 += list(restarted)
            tracking2 += list(batch.tracking)
            assert np.isfinite(r).all() and np.isfinite(w).all()
            start = part.stop
        status2 = np.array(status2)
        np.testing.assert_array_equal(status2 == 0, status1 == 0)
        np.testing.assert_array_equal(status2[status2 < 0], status1[status1 < 0])
        assert restarted2 == restarted1 and tracking2 == tracking1
        for k in np.flatnonzero(status1 == 0):
            np.testing.assert_array_equal(r2[k], r1[k])
    # where it tracks a settled stretch, r meets Pinocchio's τ_ext (quantized: 10 ms steps)
    settled = (rows >= 420) & (rows < 480)
    got = np.array([r1[k] for k in np.flatnonzero(settled & (status1 == 0))])
    truth = run.tau_ext[rows[settled & (status1 == 0)]]
    assert np.abs(got - truth).max() <= 0.02 * np.abs(run.tau_ext).max()
