"""
Operational-space and whole-body quantities of N states, and the effective mass along a path.

The batch forms of ``frame_placement``, ``frame_jacobian``, ``frame_jacobian_time_variation``,
``frame_acceleration_bias``, ``operational_space_inertia``, ``effective_mass``,
``center_of_mass``, ``center_of_mass_jacobian``, ``centroidal_momentum_matrix`` and
``centroidal_momentum``: row k of each is the single-state call at state k, written into
its row of one (N, ...) output (``out=``: the caller's), on one workspace (``data``), held
under its lock. They loop in Python over the compiled single-state calls (each a few µs);
the dynamics' batch entries (``rbd_ros.batch``) spread their states over threads instead.

:func:`effective_mass_along_path` is what a planner capping speed under ISO/TS 15066's
power-and-force limiting needs: the effective mass of a frame along the direction its origin
moves in, at every point of a path.
"""
import numpy as np

from .. import _checks, _output_arrays
from ..algorithms.calls import (center_of_mass, center_of_mass_jacobian, centroidal_momentum,
                                centroidal_momentum_matrix, effective_mass,
                                frame_acceleration_bias, frame_jacobian,
                                frame_jacobian_time_variation, frame_placement,
                                operational_space_inertia)


def _states(function, model, q, v=None):
    """Return (q, v) as (N, nq) and (N, nv) float64 arrays with the same N; ValueError."""
    q = _checks.matrix(q, "q")
    if q.shape[1] != model.nq:
        raise ValueError(f"{function}: q must have shape (N, {model.nq}), got {q.shape}")
    if v is None:
        return q, None
    v = _checks.matrix(v, "v")
    if v.shape != (len(q), model.nv):
        raise ValueError(f"{function}: v must have shape ({len(q)}, {model.nv}), got "
                         f"{v.shape}")
    return q, v


def _run(function, call, model, q, v, shape, out, data, **options):
    """Fill the (N, *shape) output row by row with ``call`` at each state; ValueError: which."""
    q, v = _states(function, model, q, v)
    n = len(q)
    if out is None:
        out = np.empty((n,) + shape)
    else:
        out = _output_arrays.checked(function, out, ((n,) + shape,), {"q": q})[0]
    data = _checks.workspace(model, data)
    with data.lock:
        for k in range(n):
            args = (q[k],) if v is None else (q[k], v[k])
            try:
                out[k] = call(model, *args, data=data, **options)
            except ValueError as exc:
                raise ValueError(f"{function}: sample {k}: {exc}") from None
    return out


def frame_placement_batch(model, q, link, *, out=None, data=None):
    """Return ^0M_f of N configurations: q (N, nq) -> (N, 4, 4) (``frame_placement``)."""
    return _run("frame_placement_batch", frame_placement, model, q, None, (4, 4), out, data,
                link=link)


def frame_jacobian_batch(model, q, link, reference="local", *, out=None, data=None):
    """Return J of N configurations: q (N, nq) -> (N, 6, nv) (``frame_jacobian``)."""
    return _run("frame_jacobian_batch", frame_jacobian, model, q, None, (6, model.nv), out,
                data, link=link, reference=reference)


def frame_jacobian_time_variation_batch(model, q, v, link, reference="local", *, out=None,
                                        data=None):
    """Return J̇ of N states: q (N, nq), v (N, nv) -> (N, 6, nv)."""
    return _run("frame_jacobian_time_variation_batch", frame_jacobian_time_variation, model,
                q, v, (6, model.nv), out, data, link=link, reference=reference)


def frame_acceleration_bias_batch(model, q, v, link, reference="local", *, out=None,
                                  data=None):
    """Return the classical acceleration at q̈ = 0 of N states -> (N, 6)."""
    return _run("frame_acceleration_bias_batch", frame_acceleration_bias, model, q, v, (6,),
                out, data, link=link, reference=reference)


def operational_space_inertia_batch(model, q, link, reference="local_world_aligned",
                                    translational=False, *, out=None, data=None):
    """Return Λ of N configurations -> (N, 6, 6), or (N, 3, 3) with ``translational``."""
    size = 3 if translational else 6
    return _run("operational_space_inertia_batch", operational_space_inertia, model, q, None,
                (size, size), out, data, link=link, reference=reference,
                translational=translational)


def effective_mass_batch(model, q, link, direction, *, out=None, data=None):
    """Return the effective mass along ``direction`` (3, root frame) at N configurations."""
    return _run("effective_mass_batch", effective_mass, model, q, None, (), out, data,
                link=link, direction=direction)


def center_of_mass_batch(model, q, v=None, *, out=None, data=None):
    """Return c of N configurations (N, 3), or with v (N, nv) c and ċ as (N, 2, 3)."""
    if v is None:
        return _run("center_of_mass_batch", center_of_mass, model, q, None, (3,), out, data)
    return _run("center_of_mass_batch", lambda m, q, v, data: np.array(
        center_of_mass(m, q, v, data=data)), model, q, v, (2, 3), out, data)


def center_of_mass_jacobian_batch(model, q, *, out=None, data=None):
    """Return J_c of N configurations -> (N, 3, nv)."""
    return _run("center_of_mass_jacobian_batch", center_of_mass_jacobian, model, q, None,
                (3, model.nv), out, data)


def centroidal_momentum_matrix_batch(model, q, *, out=None, data=None):
    """Return A_G of N configurations -> (N, 6, nv)."""
    return _run("centroidal_momentum_matrix_batch", centroidal_momentum_matrix, model, q,
                None, (6, model.nv), out, data)


def centroidal_momentum_batch(model, q, v, *, out=None, data=None):
    """Return h_G of N states -> (N, 6)."""
    return _run("centroidal_momentum_batch", centroidal_momentum, model, q, v, (6,), out,
                data)


class PathMasses:
    """
    The effective mass along the direction of motion at each point of a path (N points).

    ``mass`` (N,) kg, 0 where not ``defined`` (N,) bool; ``direction`` (N, 3) the unit u
    (root frame; zeros where the origin does not move); ``speed`` (N,) |J_v v| (m/s).
    """

    def __init__(self, mass, defined, direction, speed):
        self.mass, self.defined, self.direction, self.speed = mass, defined, direction, speed


def effective_mass_along_path(model, q, link, v=None, *, data=None, rest_speed=1e-9):
    """
    Return the :class:`PathMasses` of ``link``'s frame origin along a path q (N, nq).

    u at point k: the origin's velocity J_v v[k] (``frame_jacobian``, local_world_aligned),
    unit; where it is below ``rest_speed`` (m/s) or ``v`` is None, the path's tangent: the
    origin of point k+1 minus that of point k-1 (one-sided at the ends). Where the origin
    does not move at all, or the joints cannot move it along u, the mass is not defined.
    """
    function = "effective_mass_along_path"
    q, v = _states(function, model, q, v)
    n = len(q)
    data = _checks.workspace(model, data)
    origins = frame_placement_batch(model, q, link, data=data)[:, :3, 3]
    mass, defined = np.zeros(n), np.zeros(n, bool)
    direction, speed = np.zeros((n, 3)), np.zeros(n)
    for k in range(n):
        if v is not None:
            velocity = frame_jacobian(model, q[k], link, "local_world_aligned",
                                      data=data)[:3] @ v[k]
            speed[k] = np.linalg.norm(velocity)
        if speed[k] < rest_speed:
            velocity = origins[min(k + 1, n - 1)] - origins[max(k - 1, 0)]
        norm = np.linalg.norm(velocity)
        if not norm > 0.0:
            continue
        direction[k] = velocity / norm
        try:
            mass[k] = effective_mass(model, q[k], link, direction[k], data=data)
            defined[k] = True
        except ValueError as exc:
            if "cannot move" not in str(exc):
                raise ValueError(f"{function}: sample {k}: {exc}") from None
    return PathMasses(mass, defined, direction, speed)
