"""
A trajectory service's request: a ``JointTrajectory`` read into model-order arrays, checked.

Shared by the trajectory services (``trajectories``) and ``~/retime_trajectory``
(``retime_service``): the request's joint order (every joint once, mimic followers optional,
``services.request_order``), its size limits (:data:`MAX_POINTS` points,
:data:`MAX_DERIVATIVE_NUMBERS` numbers of derivatives in one answer) and the answer's fields
in the request's order. Refusals are ``services.RequestError``.
"""
import array

import numpy as np

from . import conversions
from .reporting import excerpt
from .services import RequestError, follower_values, request_dofs, request_order

MAX_POINTS = 10_000
MAX_DERIVATIVE_NUMBERS = 10_000_000      # 80 MB of float64 in one answer


class TrajectoryRequest:
    """
    A request's trajectory: its joint order, points, and the model-order arrays made from them.

    ``matrices_per_point``: how many nv × nv blocks a point's derivatives take in the answer
    (for the size limit), when ``derivatives`` is asked.
    """

    def __init__(self, robot, trajectory, derivatives, matrices_per_point):
        self.robot = robot
        self.names = list(trajectory.joint_names)
        self.order = request_order(robot, self.names)
        self.points = trajectory.points
        self.n = len(self.points)
        if self.n > MAX_POINTS:
            raise RequestError(f"{self.n} points: at most {MAX_POINTS} per request (README: "
                               "request sizes)")
        nv = robot.model.nv
        numbers = self.n * matrices_per_point * nv * nv
        if derivatives and numbers > MAX_DERIVATIVE_NUMBERS:
            raise RequestError(f"derivatives of {self.n} points would be {numbers} numbers: "
                               f"at most {MAX_DERIVATIVE_NUMBERS} per answer (fewer points "
                               "per request)")
        self.nbase = robot.model.nv_base
        self.dof_names, self.dof_index = request_dofs(robot, None, self.order)

    def states(self, attr, base, width, rows, optional_base=False):
        """Return the (rows, ·) model-order array of the first ``rows`` points' ``attr``, base."""
        raw = self._joint_rows(attr, rows)
        joints = raw[:, self.order.model]
        if attr == "effort":     # a follower's force acts through the coupling: τ_r = Gᵀ τ
            for k, leader, multiplier in zip(self.order.follower_index,
                                             self.order.follower_leader,
                                             self.order.follower_multiplier):
                joints[:, leader] += multiplier * raw[:, k]
        if not self.nbase:
            if len(base):
                raise RequestError(f"{_BASE[attr]} must be empty for this fixed-base model")
            return joints
        base = conversions.vector(base)
        if optional_base and len(base) == 0:
            base = np.zeros(width * rows)
        if len(base) != width * rows:
            raise RequestError(f"{_BASE[attr]} must have {width} values per point "
                               f"({width * rows}), got {len(base)}")
        if not np.all(np.isfinite(base)):
            raise RequestError(f"{_BASE[attr]} contains NaN or inf")
        return np.hstack([base.reshape(rows, width), joints])

    def _joint_rows(self, attr, rows):
        """(rows, joints) array of the points' ``attr`` in request order; RequestError."""
        nj = len(self.names)
        if rows == 0:
            return np.zeros((0, nj))
        # one pass over the points (rclpy gives each field as an array.array: joined as is);
        # the lengths are checked each, a short point and a long one must not make up a row
        fields = [getattr(p, attr) for p in self.points[:rows]]
        sizes = np.fromiter(map(len, fields), np.int64, rows)
        wrong = np.flatnonzero(sizes != nj)
        if len(wrong):
            k = wrong[0]
            raise RequestError(f"point {k} has {sizes[k]} {attr} for {nj} joint_names")
        try:
            joined = b"".join(fields)
        except TypeError:                         # lists (a request made in this process)
            joined = b"".join(map(_buffer, fields))
        x = np.frombuffer(joined, np.float64).reshape(rows, nj)
        if not np.isfinite(x).all():
            k, j = np.argwhere(~np.isfinite(x))[0]
            raise RequestError(f"{attr} of point {k}, joint {excerpt(self.names[j])} is NaN or "
                               f"inf ({x[k, j]})")
        return x

    def split(self, x, follower_scale=1.0, positions=False):
        """
        (joints, base) float64[] fields of an (N, ·) model-order result, point after point.

        A follower gets its leader's value times its multiplier (times ``follower_scale``;
        plus its offset for ``positions``).
        """
        nbase = (7 if positions else 6) if self.nbase else 0
        joints = np.empty((len(x), len(self.names)))
        joints[:, self.order.model] = x[:, nbase:]
        joints[:, self.order.follower_index] = follower_values(
            x[:, nbase:][:, self.order.follower_leader], self.order.follower_multiplier,
            follower_scale)
        if positions:
            for k in self.order.follower_index:
                joints[:, k] += self.robot.followers[self.names[k]][2]
        return conversions.flat_doubles(joints), conversions.flat_doubles(x[:, :nbase])

    def per_joint(self, values):
        """Return per-model-joint ``values`` in the request's joint order (followers 0)."""
        out = np.zeros(len(self.names))
        out[self.order.model] = values
        return conversions.flat_doubles(out)

    def matrices(self, m, row_blocks=1, col_blocks=1):
        """(N, r·nv, c·nv) matrices restricted to the request's dofs, as one float64[]."""
        nv = self.robot.model.nv
        idx = self.dof_index
        rows = np.concatenate([idx + b * nv for b in range(row_blocks)])
        cols = np.concatenate([idx + b * nv for b in range(col_blocks)])
        return conversions.flat_doubles(m[:, rows[:, None], cols[None, :]])


_BASE = {"positions": "base_q", "velocities": "base_v", "accelerations": "base_a",
         "effort": "base_tau"}


def _buffer(values):
    """Return the float64 bytes of a float64[] field (array.array; a list is converted)."""
    return values if getattr(values, "typecode", None) == "d" else array.array("d", values)
