"""
The operational-space and whole-body outputs: end_effector, center_of_mass, centroidal_momentum.

Their results come from q and v alone, by the frame and centre-of-mass calls of the core
(``frame_placement``, ``frame_jacobian``, ``operational_space_inertia``,
``effective_mass``, ``center_of_mass``, ``centroidal_momentum``), not by one of the
dynamics' ``CALLS``; one state's (:func:`compute`, the node) and many states' (
:func:`compute_batch`, the replay) are the same numbers. Their messages carry flags (a Λ
that is not defined) and names, so each is built whole from :func:`message_values` (plain
nested values, the same for the node's rclpy messages and the replay's rosbags ones).

Every quantity is in the root frame: the model's world (a fixed base's root link; a floating
base's odometry frame, named :data:`FLOATING_ROOT_FRAME`), at the frame's origin, rows and
columns [linear; angular] (Pinocchio's LOCAL_WORLD_ALIGNED).
"""
import numpy as np

from ..algorithms.calls import (center_of_mass, centroidal_momentum, effective_mass,
                                frame_jacobian, frame_placement, operational_space_inertia)

NAMES = ("end_effector", "center_of_mass", "centroidal_momentum")
FLOATING_ROOT_FRAME = "world"
# what a refused Λ or effective mass says (``rbd_ros._checks``): not defined there
_NOT_DEFINED = "not defined"


def root_frame(model):
    """Return the frame_id of the root frame: the root link (fixed base) or ``world``."""
    if not model.floating_base:
        for link, (body, R, p) in model.link_frames.items():
            if body < 0 and not np.any(p) and np.array_equal(R, np.eye(3)):
                return link
    return FLOATING_ROOT_FRAME


def frame_problem(model, link):
    """Say why ``link`` cannot be the end-effector frame of ``model``, or return None."""
    if not isinstance(link, str) or link not in model.link_frames:
        return (f"end_effector_frame {str(link)[:80]!r} is not a link of the model "
                f"({len(model.link_frames)} links)")
    return None


def quaternion(R):
    """Return the unit quaternion of the rotation matrix R: (x, y, z, w), w ≥ 0."""
    trace = R[0, 0] + R[1, 1] + R[2, 2]
    if trace > 0.0:                       # Shepperd: divide by the largest of the four
        s = 2.0 * np.sqrt(1.0 + trace)
        q = ((R[2, 1] - R[1, 2]) / s, (R[0, 2] - R[2, 0]) / s, (R[1, 0] - R[0, 1]) / s,
             0.25 * s)
    else:
        k = int(np.argmax(np.diag(R)))
        i, j = (k + 1) % 3, (k + 2) % 3
        s = 2.0 * np.sqrt(1.0 + R[k, k] - R[i, i] - R[j, j])
        q = [0.0, 0.0, 0.0, (R[j, i] - R[i, j]) / s]
        q[k], q[i], q[j] = 0.25 * s, (R[i, k] + R[k, i]) / s, (R[j, k] + R[k, j]) / s
    q = np.asarray(q)
    return q if q[3] >= 0.0 else -q


def _defined(call):
    """Return (call's value, True), or (None, False) where the quantity is not defined."""
    try:
        return call(), True
    except ValueError as exc:
        if _NOT_DEFINED not in str(exc):
            raise
        return None, False


def end_effector(model, q, v, link, data=None):
    """
    Return the ~/end_effector results of one state, each a float64 array.

    ``ee_pose`` (7: position, quaternion x, y, z, w), ``ee_twist`` (6: the origin's
    velocity, ω), ``ee_inertia_t`` (9: Λ_t), ``ee_inertia`` (36: Λ), ``ee_mass`` (3: the
    effective masses along x, y, z) and ``ee_defined`` (5: 1.0 where Λ_t, Λ, each mass is
    defined, else 0.0; the value is then 0).
    """
    oMf = frame_placement(model, q, link, data=data)
    J = frame_jacobian(model, q, link, "local_world_aligned", data=data)
    defined = np.zeros(5)
    inertia_t, defined[0] = _defined(lambda: operational_space_inertia(
        model, q, link, translational=True, data=data))
    inertia, defined[1] = _defined(lambda: operational_space_inertia(model, q, link,
                                                                     data=data))
    masses = np.zeros(3)
    for k in range(3):
        mass, defined[2 + k] = _defined(lambda: effective_mass(model, q, link, np.eye(3)[k],
                                                               data=data))
        masses[k] = mass if defined[2 + k] else 0.0
    return {"ee_pose": np.concatenate([oMf[:3, 3], quaternion(oMf[:3, :3])]),
            "ee_twist": J @ v,
            "ee_inertia_t": np.zeros(9) if inertia_t is None else inertia_t.ravel(),
            "ee_inertia": np.zeros(36) if inertia is None else inertia.ravel(),
            "ee_mass": masses, "ee_defined": defined}


def compute(names, model, q, v, link=None, data=None):
    """
    Return the results of the whole-body outputs ``names`` at one state, as ``outputs.compute``.

    ``link``: the end-effector frame (``end_effector`` only). Raises ValueError for a state
    the core refuses (a quantity that is not defined is flagged, not refused).
    """
    results = {}
    if "end_effector" in names:
        results.update(end_effector(model, q, v, link, data))
    if "center_of_mass" in names:
        results["com"] = center_of_mass(model, q, data=data)
    if "centroidal_momentum" in names:
        com = results.get("com")
        com = center_of_mass(model, q, data=data) if com is None else com
        results["momentum"] = np.concatenate([com, centroidal_momentum(model, q, v,
                                                                       data=data)])
    return results


def compute_batch(names, model, q, v, link=None, data=None):
    """Return {result: (N, size) array} of :func:`compute` at N states q (N, nq), v (N, nv)."""
    rows = [compute(names, model, q[k], v[k], link, data) for k in range(len(q))]
    if not rows:
        return {}
    return {key: np.array([row[key] for row in rows]) for key in rows[0]}


def message_values(name, model, link, arrays):
    """
    Return the message of output ``name`` as nested plain values (header without its stamp).

    ``arrays``: the output's results in the order of its table row. Points, vectors,
    quaternions, poses and twists are dicts of their fields.
    """
    header = {"frame_id": root_frame(model)}
    if name == "center_of_mass":
        return {"header": header, "point": _point(arrays[0])}
    if name == "centroidal_momentum":
        values = np.asarray(arrays[0], float)
        return {"header": header, "center_of_mass": _point(values[:3]),
                "linear": _point(values[3:6]), "angular": _point(values[6:9])}
    pose, twist, inertia_t, inertia, masses, defined = (np.asarray(x, float) for x in arrays)
    return {"header": header, "link": link,
            "pose": {"position": _point(pose[:3]),
                     "orientation": dict(zip("xyzw", map(float, pose[3:7])))},
            "twist": {"linear": _point(twist[:3]), "angular": _point(twist[3:6])},
            "translational_inertia_defined": bool(defined[0]),
            "translational_inertia": inertia_t.ravel(),
            "inertia_defined": bool(defined[1]), "inertia": inertia.ravel(),
            "effective_mass_defined": [bool(x) for x in defined[2:5]],
            "effective_mass": masses.ravel()}


def _point(x):
    return {"x": float(x[0]), "y": float(x[1]), "z": float(x[2])}
