"""
The public calls whose docstrings are numpy-style (rendered by napoleon on the API page).

``NUMPY_STYLE`` names exactly the calls done so far; each must have Parameters, Returns and
Raises sections, and its Parameters section must list every argument of its signature, no
more. The other names of ``rbd_ros.__all__`` are not yet converted (issue 38).
"""
import inspect
import re

import pytest

import rbd_ros

NUMPY_STYLE = ("load_model",)


def sections(doc):
    """Return {title: body} of a numpy-style docstring's underlined sections."""
    doc = inspect.cleandoc(doc)
    found = list(re.finditer(r"^(\w[\w ]*)\n-{3,}\n", doc, flags=re.M))
    return {m.group(1): doc[m.end():(found[i + 1].start() if i + 1 < len(found) else None)]
            for i, m in enumerate(found)}


@pytest.mark.parametrize("name", NUMPY_STYLE)
def test_the_docstring_has_parameters_returns_and_raises(name):
    call = getattr(rbd_ros, name)
    parts = sections(call.__doc__)
    assert {"Parameters", "Returns", "Raises"} <= set(parts), sorted(parts)
    documented = re.findall(r"^(\w+) :", parts["Parameters"], flags=re.M)
    assert documented == list(inspect.signature(call).parameters), documented


def test_the_section_reader_sees_an_undocumented_call():
    assert sections("One line.\n\nProse only.") == {}
