"""
The public calls whose docstrings are numpy-style (rendered by napoleon on the API page).

``NUMPY_STYLE`` names exactly the calls done so far; each must have Parameters, Returns and
Raises sections, and its Parameters section must list every argument of its signature, in
order, no more (``out`` too, which ``rbd_ros.algorithms.entries.declare`` adds to the calls'
declarations). Every dynamics call can raise (a ValueError for an input of the wrong size, NaN or
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


# The other public names (issue 38), as dotted paths under ``rbd_ros``. A class's docstring
# documents its constructor (Parameters, or only prose for an exception); each of its public
# methods is checked as a function is. A function needs Parameters (every argument, in
# order) when it has arguments, Returns always, and Raises when its own source raises.
NUMPY_STYLE_CLASSES = (
    "Model", "Data", "Dynamics", "DescriptionLimits", "Retimed",
    "identification.IdentificationResult", "contact.MomentumObserver",
    "actuation.dynamics.Actuation", "actuation.joint_parameters.JointParameters",
    "actuation.command.CommandSettings", "actuation.command.CommandPlan",
    "contact.observer_rule.ObserverSettings")
NUMPY_STYLE_OTHER = (
    "retime", "identify_least_squares", "identify_physically_consistent",
    "is_physically_consistent", "pseudo_inertia", "log_cholesky_from_theta",
    "theta_from_log_cholesky", "identification.theta_from_pseudo_inertia",
    "identification.theta_jacobian", "specialize", "specialized.status", "robots.path",
    "robots.names", "contact.observe", "contact.isolate", "batch.rollout.rollout",
    "batch.rollout.check_limits", "actuation.dynamics.load", "actuation.dynamics.computation",
    "actuation.dynamics.compute", "actuation.dynamics.compute_batch",
    "actuation.dynamics.finish_batch", "actuation.joint_parameters.kinds",
    "actuation.joint_parameters.signals", "actuation.joint_parameters.regressor",
    "actuation.joint_parameters.read_file", "actuation.joint_parameters.check_text",
    "actuation.joint_parameters.write_urdf_dynamics", "actuation.command.settings_problem",
    "actuation.command.plan", "contact.observer_rule.settings_problem",
    "contact.observer_rule.new_observer", "outputs.dof_names", "inertia.centre_of_mass",
    "inertia.compact",
    "inertia.rotate", "inertia.translate", "inertia.transform", "inertia.merge",
    "inertia.to_matrix", "inertia.to_theta", "inertia.from_theta", "inertia.principal_moments",
    "inertia.physical_violation", "inertia.factor")
# exceptions: their constructor is Exception's; the docstring says who raises them
EXCEPTIONS = ("URDFError", "DescriptionTooLarge")


def resolve(path):
    """Return the object ``rbd_ros.<path>`` (modules imported on the way)."""
    import importlib
    obj = rbd_ros
    for part in path.split("."):
        if not hasattr(obj, part):
            importlib.import_module(f"{obj.__name__}.{part}")
        obj = getattr(obj, part)
    return obj


def documented_names(section):
    """Return the names a Parameters section documents, in order ("a, b : type" gives two)."""
    names = []
    for line in re.findall(r"^(\w+(?:, \w+)*) :", section, flags=re.M):
        names += line.split(", ")
    return names


def arguments(call, skip_self=False):
    names = [p.name for p in inspect.signature(call).parameters.values()
             if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    return names[1:] if skip_self else names


def check_function(call, where, skip_self=False):
    """Assert the numpy-style sections of one function or method."""
    parts = sections(call.__doc__ or "")
    expected = arguments(call, skip_self)
    if expected:
        assert "Parameters" in parts, (where, sorted(parts))
        assert documented_names(parts["Parameters"]) == expected, where
    assert "Returns" in parts, (where, sorted(parts))
    source = inspect.getsource(call)
    if re.search(r"^\s+raise \w", source, flags=re.M):
        assert "Raises" in parts, (where, "raises, but has no Raises section")


def public_methods(cls):
    """Return {name: function} of the public methods a class defines itself (classmethods too)."""
    found = {}
    for name, member in vars(cls).items():
        member = getattr(member, "__func__", member)      # a classmethod's function
        if not name.startswith("_") and inspect.isfunction(member):
            found[name] = member
    return found


@pytest.mark.parametrize("path", NUMPY_STYLE_CLASSES)
def test_a_class_documents_its_constructor_and_methods(path):
    cls = resolve(path)
    parts = sections(cls.__doc__)
    assert "Parameters" in parts, (path, sorted(parts))
    init = cls.__new__ if cls.__init__ is object.__init__ else cls.__init__
    assert documented_names(parts["Parameters"]) == arguments(init, skip_self=True), path
    for name, method in public_methods(cls).items():
        check_function(method, f"{path}.{name}", skip_self=True)


@pytest.mark.parametrize("path", NUMPY_STYLE_OTHER)
def test_a_function_has_parameters_returns_and_raises(path):
    check_function(resolve(path), path)


@pytest.mark.parametrize("path", EXCEPTIONS)
def test_an_exception_says_who_raises_it(path):
    assert ":func:`rbd_ros.load_model`" in resolve(path).__doc__


# modules of ``rbd_ros.__all__`` whose public functions are not converted yet
NOT_YET = ()


def test_every_public_name_is_in_one_list():
    """Every name of ``rbd_ros.__all__`` is checked here: NUMPY_STYLE, a list above, a module."""
    modules = {"identification", "inertia", "robots", "specialized"}
    checked = set(NUMPY_STYLE) | set(NUMPY_STYLE_CLASSES) | set(NUMPY_STYLE_OTHER) \
        | set(EXCEPTIONS) | modules
    for module in modules - set(NOT_YET):        # a module's public calls are in the lists
        names = getattr(resolve(module), "__all__", None) or [
            n for n, f in vars(resolve(module)).items()
            if inspect.isfunction(f) and not n.startswith("_")
            and f.__module__ == resolve(module).__name__]
        for name in names:
            short = name if hasattr(rbd_ros, name) and name in rbd_ros.__all__ else None
            assert short in checked or f"{module}.{name}" in checked, f"{module}.{name}"
    # the dynamics calls (rnea, crba, ..., the *_batch calls) are NUMPY_STYLE's, in progress
    functions = {n for n in rbd_ros.__all__ if inspect.isfunction(getattr(rbd_ros, n))
                 and getattr(rbd_ros, n).__module__.startswith("rbd_ros.algorithms")
                 or n.endswith("_batch")}
    assert set(rbd_ros.__all__) - functions <= checked, \
        sorted(set(rbd_ros.__all__) - functions - checked)


def test_the_api_page_lists_every_checked_name():
    import os
    page = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                        "doc", "api.md")
    with open(page, encoding="utf-8") as f:
        listed = set(re.findall(r"^   ([\w.]+)$", f.read(), flags=re.M))
    wanted = set(NUMPY_STYLE_CLASSES) | set(NUMPY_STYLE_OTHER) | set(EXCEPTIONS)
    # a name in a listed module is on that module's page (its members are documented)
    missing = {name for name in wanted
               if not any(name == item or name.startswith(item + ".") for item in listed)}
    assert not missing, sorted(missing)
