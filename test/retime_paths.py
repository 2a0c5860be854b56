"""
The paths of the retiming tests (core, command line, node): waypoints and their spline.

The spline is SciPy's, built here independently of ``rbd_ros.retime`` (which uses toppra's
interpolator): the retimed positions must lie on it.
"""
import numpy as np


def waypoints(model, count, seed, spread=0.3):
    """``count`` configurations within ``spread`` of each joint's range around its middle."""
    rng = np.random.default_rng(seed)
    mid = 0.5 * (model.lower + model.upper)
    return rng.uniform(mid + spread * (model.lower - mid), mid + spread * (model.upper - mid),
                       (count, model.nq))


def spline(w):
    """Return SciPy's not-a-knot cubic spline through ``w`` over the normalized chord length."""
    from scipy.interpolate import CubicSpline
    s = np.concatenate([[0.0], np.cumsum(np.linalg.norm(np.diff(w, axis=0), axis=1))])
    return CubicSpline(s / s[-1], w)
