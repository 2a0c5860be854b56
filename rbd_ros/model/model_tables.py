"""
The Model's table helpers: read-only arrays, the tree's checks, link frames, gravity.

Apart from :mod:`rbd_ros.model.model` so that the class and its docstrings stay one file.
"""
import types

import numpy as np

from .joints import KINDS, ROOT_ONLY


def read_only(values, dtype=np.float64):
    """
    Return a read-only copy of ``values`` whose memory is an immutable bytes object.

    Clearing ``flags.writeable`` alone can be undone from Python (``flags.writeable = True``
    on an array that owns its memory); an array over a bytes object cannot be made writable,
    nor can any view of it, so the kernels' unchecked indices stay within the sizes they
    were built for.
    """
    arr = np.ascontiguousarray(values, dtype)
    return np.frombuffer(arr.tobytes(), dtype).reshape(arr.shape)


def check_tree(parent, joint_type):
    nb = len(parent)
    if np.any(parent >= np.arange(nb)) or np.any(parent < -1):
        raise ValueError("bodies must be ordered so that -1 <= parent[i] < i")
    for i in range(1, nb):
        # depth-first order: a body's parent is on the path from the previous body to the
        # root, so every subtree is the contiguous range i .. subtree_end[i] - 1
        j = i - 1
        while j != parent[i] and j != -1:
            j = parent[j]
        if j != parent[i]:
            raise ValueError(f"bodies must be in depth-first order (body {i})")
    if np.any((joint_type < 0) | (joint_type >= len(KINDS))):
        raise ValueError(f"joint types must be codes of rbd_ros.model.joints.KINDS "
                         f"(0 .. {len(KINDS) - 1})")
    root_only = ROOT_ONLY[joint_type]
    if np.any(root_only[1:]) or (nb and root_only[0] and parent[0] != -1):
        names = sorted({KINDS[k].name for k in joint_type[root_only]})
        raise ValueError(f"a {' or '.join(names)} joint can only be the root")


def tree_indices(parent, nq_body, nv_body):
    """
    Return (idx_q, idx_v, subtree_end, dof_parent) of a tree in depth-first order.

    idx_q, idx_v: each body's first configuration and velocity index; subtree_end[i]:
    bodies i..subtree_end[i]-1 form the subtree rooted at i; dof_parent[k]: the degree of
    freedom supporting dof k (-1 at a root), inside a free flyer the previous one.
    """
    nb = len(parent)
    idx_q = np.concatenate([[0], np.cumsum(nq_body)[:-1]]).astype(np.int64)
    idx_v = np.concatenate([[0], np.cumsum(nv_body)[:-1]]).astype(np.int64)
    subtree_end = np.arange(1, nb + 1)
    for i in range(nb - 1, -1, -1):
        if parent[i] >= 0:
            subtree_end[parent[i]] = max(subtree_end[parent[i]], subtree_end[i])
    dof_parent = np.empty(int(nv_body.sum()), np.int64)
    for i in range(nb):
        p, first, n = parent[i], idx_v[i], nv_body[i]
        dof_parent[first] = -1 if p < 0 else idx_v[p] + nv_body[p] - 1
        dof_parent[first + 1:first + n] = np.arange(first, first + n - 1)
    return idx_q, idx_v, subtree_end, dof_parent


def link_frames_mapping(body_names, frames):
    """
    Return the read-only ``link_frames`` mapping: link -> (body, R, p).

    ``frames`` as the loader gives it (every link of the URDF), or None: each body's own
    link at the identity.
    """
    if frames is None:
        frames = {name: (i, np.eye(3), np.zeros(3)) for i, name in enumerate(body_names)}
    return types.MappingProxyType({
        name: (int(body), read_only(np.array(R, np.float64).reshape(3, 3)),
               read_only(np.array(p, np.float64).reshape(3)))
        for name, (body, R, p) in frames.items()})


def gravity_vector(value):
    try:
        g = np.array(value, np.float64)
    except (TypeError, ValueError):
        g = None
    if g is None or g.shape != (3,) or not np.all(np.isfinite(g)):
        raise ValueError(f"gravity must be 3 finite numbers (m/s², world frame), got "
                         f"{excerpt(value)}")
    return g


def excerpt(value, limit=60):
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "..."


def link_table(model, links):
    """
    Return (bodies, placements) of ``links`` for the kernels taking link frames.

    bodies: each link's body index; placements: its 3x3 rotation then 3-vector in that body
    (the wrench and frame Jacobian kernels read both). ValueError for a link the model does not
    have.
    """
    bodies = np.empty(len(links), np.int64)
    placements = np.zeros((len(links), 12))
    for k, link in enumerate(links):
        if link not in model.link_frames:
            raise ValueError(f"no link {link!r} in the model")
        body, R, p = model.link_frames[link]
        bodies[k] = body
        placements[k, :9] = np.asarray(R, np.float64).reshape(9)
        placements[k, 9:] = p
    return bodies, placements
