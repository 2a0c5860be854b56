"""
The kernels' read of numpy's WRITEABLE flag (``rbd_ros._array_flags``).

Through numba's dispatcher, on arrays whose flags numpy reports, what ``is_read_only``
returns is ``not x.flags.writeable``; through a kernel's compiled entry point (what the
public calls use), a read-only output is refused and left unwritten; the import-time check
of the struct's layout refuses an offset that does not hold the flags. Every public call's
outputs, read-only in turn: ``test_entries_out.py``.
"""
import numba
import numpy as np
import pytest

import rbd_ros
from helpers import get_robot
from rbd_ros import _array_flags
from rbd_ros._array_flags import is_read_only
from rbd_ros.algorithms.common import OUTPUT_REFUSED
from rbd_ros.algorithms.crba import crba_kernel


@numba.njit(_nrt=False, cache=False)
def _read_only_of(x):
    return is_read_only(x)


@numba.njit(_nrt=False, cache=False)
def _read_only_of_a_slice(x):
    return is_read_only(x[1:])


def _arrays():
    base = np.arange(12.0).reshape(3, 4)
    frozen = base.copy()
    frozen.flags.writeable = False
    return {"writeable": base, "read-only": frozen, "read-only view": frozen[1:],
            "view of writeable": base[1:], "broadcast": np.broadcast_to(base[0], (3, 4)),
            "transposed read-only": frozen.T}


@pytest.mark.parametrize("kind", sorted(_arrays()))
def test_is_read_only_is_numpys_flag(kind):
    x = _arrays()[kind]
    assert _read_only_of(x) is (not x.flags.writeable)
    assert _read_only_of_a_slice(x) is (not x.flags.writeable)      # a view keeps its parent


def test_a_flag_changed_after_the_first_call_is_read_again():
    x = np.zeros(4)
    assert not _read_only_of(x)
    x.flags.writeable = False
    assert _read_only_of(x)
    x.flags.writeable = True
    assert not _read_only_of(x)


def test_a_kernels_entry_point_refuses_a_read_only_output_and_writes_it_once_writeable():
    m = get_robot("arm7").model
    q = m.random_configuration(np.random.default_rng(1))
    crba_kernel.compile_declared()
    entry_point = crba_kernel.overloads[crba_kernel.signatures[0]].entry_point
    M = np.full((m.nv, m.nv), 7.25)
    M.flags.writeable = False                      # the entry point unboxes it all the same
    assert entry_point(m.packed, m.data.body, q, M) == OUTPUT_REFUSED
    assert np.all(M == 7.25)
    M.flags.writeable = True
    assert entry_point(m.packed, m.data.body, q, M) == 0
    np.testing.assert_array_equal(M, rbd_ros.crba(m, q))


def test_the_layout_check_refuses_an_offset_that_does_not_hold_the_flags(monkeypatch):
    _array_flags.check_layout()                    # numpy's own: passes
    for offset in (56, 60, 68):
        monkeypatch.setattr(_array_flags, "FLAGS_OFFSET", offset)
        with pytest.raises(ImportError, match=f"offset {offset}"):
            _array_flags.check_layout()
