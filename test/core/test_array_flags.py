"""
The kernels' read of numpy's WRITEABLE flag (``rbd_ros._array_flags``).

Through numba's dispatcher and through a kernel's entry point, on arrays whose flags numpy
reports: what ``read_only`` returns is ``not x.flags.writeable``; the import-time check of
the struct's layout refuses an offset that does not hold the flags.
"""
import numba
import numpy as np
import pytest

from rbd_ros import _array_flags
from rbd_ros._array_flags import read_only


@numba.njit(_nrt=False, cache=False)
def _read_only_of(x):
    return read_only(x)


@numba.njit(_nrt=False, cache=False)
def _read_only_of_a_slice(x):
    return read_only(x[1:])


def _arrays():
    base = np.arange(12.0).reshape(3, 4)
    frozen = base.copy()
    frozen.flags.writeable = False
    return {"writeable": base, "read-only": frozen, "read-only view": frozen[1:],
            "view of writeable": base[1:], "broadcast": np.broadcast_to(base[0], (3, 4)),
            "transposed read-only": frozen.T}


@pytest.mark.parametrize("kind", sorted(_arrays()))
def test_read_only_is_numpys_flag(kind):
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


def test_the_layout_check_refuses_an_offset_that_does_not_hold_the_flags(monkeypatch):
    _array_flags.check_layout()                    # numpy's own: passes
    for offset in (56, 60, 68):
        monkeypatch.setattr(_array_flags, "FLAGS_OFFSET", offset)
        with pytest.raises(ImportError, match=f"offset {offset}"):
            _array_flags.check_layout()
