"""
The layout tables of the kernels' arrays (``rbd_ros.model.layout``) and the names bound from them.

Each array's columns are one table of (name, width, what); the module binds each name to its
first column. A name bound to another column, a field left out of the binding, two fields on
one column or a gap would make the kernels read the wrong numbers without an error: these
tests say so instead.
"""
import re

import numpy as np

from rbd_ros.model import Data, layout
from helpers import get_robot

TABLES = {"P": (layout.PACKED, layout.P_COLS), "W": (layout.BODY, layout.W_COLS),
          "D": (layout.DOF, layout.D_COLS), "X": (layout.ALL_BODY, layout.X_COLS)}


def test_each_name_is_bound_to_the_sum_of_the_widths_before_it():
    for prefix, (table, total) in TABLES.items():
        first = 0
        for name, width, what in table:
            assert name.startswith(prefix + "_") and width >= 1 and what, name
            assert getattr(layout, name) == first, name
            first += width
        assert first == total, prefix


def test_every_column_name_of_the_module_is_in_a_table():
    listed = {name for table, _ in TABLES.values() for name, _, _ in table}
    bound = {name for name in vars(layout) if re.fullmatch(r"[PWDX]_[A-Z]+", name)}
    assert bound - listed == {"P_COLS", "W_COLS", "D_COLS", "X_COLS", "P_GRAVITY"}
    assert listed <= bound
    assert len(listed) == sum(len(table) for table, _ in TABLES.values())   # no name twice


def test_columns_lays_fields_side_by_side():
    assert layout.columns((("A", 2, "a"), ("B", 1, "b"), ("C", 3, "c"))) == (0, 2, 3, 6)
    assert layout.columns(()) == (0,)


def test_the_arrays_are_as_wide_as_their_tables():
    model = get_robot("arm7").model
    data = Data(model)
    assert model.packed.shape == (model.nbodies + 1, layout.P_COLS)
    assert data.body.shape == (model.nbodies + 1, layout.W_COLS)
    assert data.dof.shape == (model.nv, layout.D_COLS)
    assert data.all_body.shape == (model.nbodies + 1, layout.X_COLS)
    np.testing.assert_array_equal(model.packed[:-1, layout.P_PARENT], model.parent)


def test_the_multi_dof_columns_hold_every_kind_s_later_dofs():
    """
    ABA and M⁻¹ keep dofs 1 … n-1 of a multi-dof joint in W_UK, W_DINVK, W_UUK (``aba.py``).

    The kernels index them without bounds checks: a kind with more dofs than they hold would
    write into the next body's row. The free-flyer root is solved whole (its 6×6 I^A), the
    others dof by dof.
    """
    from rbd_ros.model import joints
    widths = {name: width for name, width, _ in layout.BODY}
    later = max([kind.nv - 1 for kind in joints.KINDS if kind.nv > 1], default=0)
    assert later >= 2                                 # planar's: 2 of its 3 dofs
    assert widths["W_UK"] >= 6 * later
    assert widths["W_DINVK"] >= later and widths["W_UUK"] >= later
    assert [widths[n] for n in ("W_U", "W_DINV", "W_UU")] == [6, 1, 1]     # dof 0's
