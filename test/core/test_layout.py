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
