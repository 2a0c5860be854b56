"""
``rbd_replay BAG --identify-payload LINK``: the payload on a link estimated from the bag.

The samples are the replay's answered messages with a known effort (the measured q and v,
the Savitzky-Golay acceleration); the robot is known: the URDF and the joint parameters of
``--model-params`` / ``--urdf-dynamics`` (``rbd_ros.identification.payload``).
"""
import numpy as np

from ..identification import payload as payload_identification
from .errors import ReplayError, shorten


def section(model, t, link, joints=None, max_relative_std=0.10):
    """Return the report's ``payload`` entry (ok False with the reason when refused)."""
    rows = np.flatnonzero(t.effort_known)
    if len(rows) == 0:
        raise ReplayError("--identify-payload: no answered message carries a complete effort")
    q, v, a, e = t.q[rows], t.v[rows], t.a[rows], t.effort[rows]
    extra = joints.params.torques(v, a) if joints is not None else None
    try:
        est = payload_identification.estimate(model, link, q, v, a, e, extra, max_relative_std)
    except ValueError as exc:
        raise ReplayError(f"--identify-payload: {shorten(exc, 200)}") from None
    return {"link": link, "ok": bool(est.ok), "message": est.message, "samples": int(len(rows)),
            "sigma": est.sigma,
            "values": dict(zip(payload_identification.NAMES, map(float, est.values))),
            "stds": dict(zip(payload_identification.NAMES, map(float, est.stds)))}


def text(sec):
    """Return the report.txt lines of the payload entry."""
    head = (f"payload on {sec['link']} from {sec['samples']} samples: "
            + ("" if sec["ok"] else "REFUSED: ") + sec["message"])
    if not np.isfinite(sec["values"]["mass"]):
        return [head]
    return [head, "  " + ", ".join(f"{k} {sec['values'][k]:.4g} ± {sec['stds'][k]:.2g}"
                                   for k in payload_identification.NAMES)]
