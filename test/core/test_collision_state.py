"""
The collision state's thresholds, the array its kernel reads by its entry point.

``CollisionState.update`` hands its thresholds to ``isolation_kernel``'s entry point, which
tests no type: whatever is set is checked and stored as the kernel declares it. The oracle
is ``isolate``, the checked function, at the same thresholds.
"""
import numpy as np
import pytest

from oracle import Robot


def test_collision_thresholds_set_later_are_checked_and_typed_for_the_kernel():
    """
    ``CollisionState.thresholds`` (the node's parameter): checked, stored as float64 C.

    :meth:`update` hands them to the kernel's entry point, which tests no type: a list, a
    float32 or a strided array is stored converted, and isolates as the same thresholds.
    """
    from rbd_ros.contact import CollisionState, isolate
    m = Robot("arm7").model
    r = np.linspace(-2.0, 2.0, m.nv)
    thresholds = np.linspace(0.5, 1.5, m.nv)
    for given in (thresholds.tolist(), thresholds.astype(np.float32),
                  np.repeat(thresholds, 2)[::2], thresholds):
        state = CollisionState(m, 10.0)
        state.thresholds = given
        stored = state.thresholds
        assert stored.dtype == np.float64 and stored.flags.c_contiguous and stored.ndim == 1
        np.testing.assert_allclose(stored, thresholds, rtol=1e-6)
        state.update(r)
        assert state.isolation == isolate(m, r, stored)
        assert state.isolation.in_collision
    state = CollisionState(m, 1.0)
    for bad in (np.ones(m.nv + 1), [1.0, np.nan] * (m.nv // 2) + [1.0] * (m.nv % 2), 0.0):
        with pytest.raises(ValueError):
            state.thresholds = bad
    np.testing.assert_array_equal(state.thresholds, np.ones(m.nv))     # kept
    with pytest.raises(ValueError):           # no edit in place past the check either
        state.thresholds[0] = 0.0
    with pytest.raises(AttributeError):
        state.dof_depths = np.zeros(m.nv, np.int32)
    given = np.full(m.nv, 2.0)                # the caller's array is its own still
    state.thresholds = given
    given[0] = 5.0
    assert state.thresholds[0] == 2.0 and given.flags.writeable
