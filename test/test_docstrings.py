"""
The public calls whose docstrings are numpy-style (rendered by napoleon on the API page).

``NUMPY_STYLE`` names exactly the calls done so far; each must have Parameters, Returns and
Raises sections, and its Parameters section must list every argument of its signature, in
order, no more (``out`` too, which ``rbd_ros.algorithms.entries.public`` adds to the calls it
builds). Every dynamics call can raise (a ValueError for an input of the wrong size, NaN or
inf, a refused ``out``): none may leave Raises out. The other names of ``rbd_ros.__all__``
are not yet converted (issue 38).
"""
import inspect
import re

import pytest

import rbd_ros
from rbd_ros.algorithms import entries

DYNAMICS_CALLS = (
    "rnea", "crba", "aba", "minv", "minv_cholesky", "gravity_torques", "nonlinear_effects",
    "coriolis_matrix", "compute_all", "inverse_and_forward_dynamics", "rnea_derivatives",
    "aba_derivatives", "rnea_derivatives_fd", "aba_derivatives_fd", "joint_torque_regressor",
    "body_regressor", "integrate", "frame_jacobian", "frame_placement",
    "frame_jacobian_time_variation", "frame_acceleration_bias", "operational_space_inertia",
    "effective_mass", "center_of_mass", "center_of_mass_jacobian",
    "centroidal_momentum_matrix", "centroidal_momentum",
    # the batch forms (rbd_ros/batch/__init__.py)
    "rnea_batch", "aba_batch", "minv_batch", "aba_derivatives_batch", "rnea_derivatives_batch",
    "coriolis_matrix_batch", "joint_torque_regressor_batch")
NUMPY_STYLE = ("load_model",) + DYNAMICS_CALLS


def sections(doc):
    """Return {title: body} of a numpy-style docstring's underlined sections."""
    doc = inspect.cleandoc(doc)
    found = list(re.finditer(r"^(\w[\w ]*)\n-{3,}\n", doc, flags=re.M))
    return {m.group(1): doc[m.end():(found[i + 1].start() if i + 1 < len(found) else None)]
            for i, m in enumerate(found)}


def entry_types(body):
    """Return {name: type} of a Parameters or Returns section's ``name : type`` lines."""
    return dict(re.findall(r"^(\w+) : (.*)$", body, flags=re.M))


@pytest.mark.parametrize("name", NUMPY_STYLE)
def test_the_docstring_has_parameters_returns_and_raises(name):
    call = getattr(rbd_ros, name)
    parts = sections(call.__doc__)
    assert {"Parameters", "Returns", "Raises"} <= set(parts), sorted(parts)
    documented = re.findall(r"^(\w+) :", parts["Parameters"], flags=re.M)
    assert documented == list(inspect.signature(call).parameters), documented


@pytest.mark.parametrize("name", DYNAMICS_CALLS)
def test_every_array_of_a_dynamics_call_has_its_shape(name):
    """An array parameter or result says its shape, in nq, nv, nb (N for a batch)."""
    parts = sections(getattr(rbd_ros, name).__doc__)
    arrays = {x: kind for part in ("Parameters", "Returns")
              for x, kind in entry_types(parts[part]).items()
              if kind.startswith(("array_like", "numpy.ndarray", "tuple of"))}
    assert arrays, name
    for x, kind in arrays.items():
        assert re.search(r"shapes? ``\([\w *+]+(, [\w *+]+)*,?\)``", kind), (name, x, kind)
    assert "ValueError" in parts["Raises"], name


def test_the_out_entry_ends_the_parameters_section():
    """``public`` documents the ``out`` it adds where the stub's docstring does not."""
    doc = "Return x.\n\nParameters\n----------\nq : int\n    A number.\n\nReturns\n-------\nint"
    out = entries.out_text(entries.ENTRIES["crba"])
    assert out.startswith("out : numpy.ndarray, shape ``(nv, nv)``, or None\n    The array")
    got = entries.with_out_parameter("f", doc, out)
    assert got == doc.replace("A number.\n", "A number.\n" + out + "\n")
    assert sections(got)["Returns"] == "int"
    # Parameters last, or already documenting out: appended, or left as it is
    assert entries.with_out_parameter("f", doc[:doc.index("\n\nReturns")], out) == \
        doc[:doc.index("\n\nReturns")] + "\n" + out
    assert entries.with_out_parameter("f", got, "out : other") == got
    with pytest.raises(TypeError, match="f: a public call's docstring has a numpy-style"):
        entries.with_out_parameter("f", "Return x.\n\nProse only.", out)


def test_the_out_entry_says_what_the_row_gives():
    three = entries.out_text(entries.ENTRIES["aba_derivatives"])
    assert three.startswith("out : tuple of 3 numpy.ndarray, shapes ``(nv, nv)``, "
                            "``(nv, nv)``, ``(nv, nv)``, or None\n")
    block = entries.out_text(entries.ENTRIES["compute_all"])
    assert block.startswith("out : numpy.ndarray, shape ``(5 * nv + 2, nv)``, or None\n")
    assert "returns views" in " ".join(block.split())
    vector = entries.out_text(entries.ENTRIES["integrate"])
    assert vector.startswith("out : numpy.ndarray, shape ``(nq,)``, or None\n")


def test_the_section_reader_sees_an_undocumented_call():
    assert sections("One line.\n\nProse only.") == {}
