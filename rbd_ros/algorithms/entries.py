"""
The public single-state calls, one row each, and the code that builds them.

Every public call (``rbd_ros.rnea``, ``crba``, ``aba``, ``minv``, the derivatives, ...) does
the same things: the model's specialized kernel if it has one (``rbd_ros.specialize``), the
coupled call if the model has mimic joints (``model.coupling``), else allocate the outputs,
pick the workspace, call the generic kernel, convert the inputs once if they are not
C-contiguous float64 arrays, turn a nonzero status into the ValueError naming the argument.
:data:`ENTRIES` says, per call, only what differs: its inputs and their kind, the defaults
of those that may be None, the kernel and its arguments (model tables, workspace fields,
inputs, outputs), the outputs and their shapes, what it returns, its specialized slot and
its coupled call. The module that defines the kernel declares the call by its signature and
docstring (a stub decorated :func:`public`); :func:`public` writes the call's source from
the row and compiles it with ``exec``, as ``collections.namedtuple`` and ``dataclasses``
do: the call is one Python function, no helper's call in between (one costs ~0.07 µs of a
~0.8 µs call). ``rbd_ros.crba.__source__`` shows what was built.

Where that saves time (:func:`uses_entry_point`: crba, minv, the derivatives, ...), the
kernel is called through its compiled overload's ``entry_point``, not its dispatcher, once
the inputs are known to be of the declared types: numba's dispatcher spends ~30 ns typing
each array argument of a call (the model's tables and the workspace, whose types never
change, included). The entry point checks nothing but that each argument is an array
of the right item size (and it trusts the number of dimensions), so the call first tests
what the dispatcher would have refused, on the caller's arrays only: float64 (``dtype is``:
a byte-swapped or another dtype is not) and C-contiguous of the declared number of
dimensions (``strides``: (8,) for a vector, (48, 8) for ``fext``, whose rows are 6 floats).
An input that fails goes through the dispatcher as before (it raises TypeError, the call
converts the inputs once and calls again), so what is refused, and the message, are those
of the dispatcher path; read-only inputs, which the dispatcher refused and the call then
copied, are read as they are (kernels never write their inputs). Alignment is not tested:
an unaligned float64 array (a view at an odd offset into a byte buffer) is read in place.
Outputs are the call's own fresh arrays, or the caller's: every call takes ``out=`` (added
to the stub's signature where the stub does not declare it, and to the Parameters section
of its docstring where that does not document it: :func:`with_out_parameter`): one array,
or a tuple of as many as the row's outputs (its ``out`` field names them where some outputs
are scratch), checked as a batch call's (:mod:`rbd_ros._output_arrays`),
with the usual case of one array tested inline first.
"""
import collections
import functools
import inspect
import linecache
import re
import textwrap

import numpy as np

from .. import _checks, _output_arrays

Entry = collections.namedtuple("Entry", (
    "kernel",       # the kernel's name in the module that defines the call
    "inputs",       # the caller's arrays, in status-position order: name -> "vector"/"rows6"
    "defaults",     # input -> what None stands for (an attribute of ``data``)
    "arguments",    # the kernel's arguments (``model.``, ``data.``, inputs, outputs)
    "outputs",      # output -> its shape, in terms of nv, nq, nb
    "returns",      # what the call returns
    "special",      # the slot of ``model._specialized`` and its arguments, or None
    "coupled",      # the call on ``model.coupling`` for a model with mimic joints, or None
                    # where the kernel takes the coupling table itself
    "prepare",      # (function, its arguments, what it returns): the kernel's arguments
                    # that are not arrays of the caller's (a link's frame), or None
    "out",          # the outputs the caller's ``out=`` gives, where not all are (the others
                    # are the call's scratch), or None
), defaults=(None, None))


def _finite_differences_row(name, u, steps):
    """Return the row of the finite differences of RNEA (u = a) or ABA (u = tau)."""
    return Entry(
        "finite_differences_kernel",
        {"q": "vector", "v": "vector", u: "vector", "fext": "rows6"}, {"fext": "no_fext"},
        f"which, model.packed, data.body, q, v, {u}, fext, eps, central, dq, dv, d{u}, q_step, "
        "work",
        {"dq": "(nv, nv)", "dv": "(nv, nv)", f"d{u}": "(nv, nv)", "q_step": "nq",
         "work": "(4, nv)"}, f"dq, dv, d{u}", None,
        f"finite_differences(dynamics, {name!r}, model, q, v, {u}, fext, eps, central, data, "
        f"(dq, dv, d{u}))",
        (steps, "eps, central", "which, dynamics, eps, central"), f"dq, dv, d{u}")


ENTRIES = {
    "rnea": Entry(
        "rnea_kernel", {"q": "vector", "v": "vector", "a": "vector", "fext": "rows6"},
        {"fext": "no_fext"},
        "model.packed, data.body, q, v, a, fext, tau", {"tau": "nv"}, "tau",
        ("rnea", "q, v, a, tau"), "rnea(model, q, v, a, fext, data, tau)"),
    "nonlinear_effects": Entry(
        "nonlinear_effects_kernel", {"q": "vector", "v": "vector"},
        {}, "model.packed, data.body, q, v, tau", {"tau": "nv"}, "tau",
        ("nonlinear_effects", "q, v, tau"),
        "rnea(model, q, v, model.data.zeros_v, None, data, tau)"),
    "gravity_torques": Entry(
        "gravity_kernel", {"q": "vector"}, {},
        "model.packed, data.body, q, tau", {"tau": "nv"}, "tau", ("gravity_torques", "q, tau"),
        "rnea(model, q, model.data.zeros_v, model.data.zeros_v, None, data, tau)"),
    "crba": Entry(
        "crba_kernel", {"q": "vector"}, {},
        "model.packed, data.body, q, M", {"M": "(nv, nv)"}, "M", ("crba", "q, M"),
        "crba(model, q, data, M)"),
    "minv": Entry(
        "minv_kernel", {"q": "vector"}, {},
        "model.packed, data.body, data.force_sets, q, Minv", {"Minv": "(nv, nv)"}, "Minv",
        ("minv", "q, Minv"), "minv(model, q, data, Minv)"),
    "minv_cholesky": Entry(
        "minv_cholesky_kernel", {"q": "vector"}, {},
        "model.packed, data.body, q, model.dof_parent, data.matrix, Minv",
        {"Minv": "(nv, nv)"}, "Minv", None, "minv(model, q, data, Minv, 'minv_cholesky')"),
    "aba": Entry(
        "aba_kernel", {"q": "vector", "v": "vector", "tau": "vector", "fext": "rows6"},
        {"fext": "no_fext"},
        "model.packed, data.body, q, v, tau, fext, qdd", {"qdd": "nv"}, "qdd", None,
        "aba(model, q, v, tau, fext, data, qdd)"),
    "rnea_derivatives": Entry(
        "rnea_derivatives_kernel",
        {"q": "vector", "v": "vector", "a": "vector", "fext": "rows6"}, {"fext": "no_fext"},
        "model.packed, data.body, data.dof, data.body_matrix, q, v, a, fext, dq, dv, M",
        {"dq": "(nv, nv)", "dv": "(nv, nv)", "M": "(nv, nv)"}, "dq, dv, M", None,
        "rnea_derivatives(model, q, v, a, fext, data, (dq, dv, M))"),
    "aba_derivatives": Entry(
        "aba_derivatives_kernel",
        {"q": "vector", "v": "vector", "tau": "vector", "fext": "rows6"}, {"fext": "no_fext"},
        "model.packed, data.body, data.dof, data.body_matrix, data.force_sets, data.stacked, "
        "q, v, tau, fext, dq, dv, Minv",
        {"dq": "(nv, nv)", "dv": "(nv, nv)", "Minv": "(nv, nv)"}, "dq, dv, Minv", None,
        "aba_derivatives(model, q, v, tau, fext, data, (dq, dv, Minv))"),
    "compute_all": Entry(
        "compute_all_kernel",
        {"q": "vector", "v": "vector", "a": "vector", "tau": "vector", "fext": "rows6"},
        {"a": "zeros_v", "fext": "no_fext"},
        "model.packed, data.body, data.dof, data.body_matrix, data.force_sets, data.all_body, "
        "data.all_dof, data.all_stacked, q, v, a, tau, fext, out",
        {"out": "(5 * nv + 2, nv)"},
        "_Dynamics(out[5 * nv], out[5 * nv + 1], out[0:nv], out[nv:2 * nv], "
        "out[2 * nv:3 * nv], out[3 * nv:4 * nv], out[4 * nv:5 * nv])", None,
        "compute_all(model, q, v, a, tau, fext, data, out)"),
    "inverse_and_forward_dynamics": Entry(
        "inverse_and_forward_kernel",
        {"q": "vector", "v": "vector", "a": "vector", "tau": "vector", "fext": "rows6"},
        {"fext": "no_fext"}, "model.packed, data.body, q, v, a, tau, fext, tau_id, qdd",
        {"tau_id": "nv", "qdd": "nv"}, "tau_id, qdd", None,
        "inverse_and_forward_dynamics(model, q, v, a, tau, fext, data, tau_id, qdd)"),
    "joint_torque_regressor": Entry(
        "joint_torque_regressor_kernel",
        {"q": "vector", "v": "vector", "a": "vector"}, {},
        "model.packed, data.body, data.regressor_block, q, v, a, Y",
        {"Y": "(nv, 10 * nb)"}, "Y", None, "joint_torque_regressor(model, q, v, a, data, Y)"),
    "coriolis_matrix": Entry(
        "coriolis_kernel", {"q": "vector", "v": "vector"}, {},
        "model.packed, data.body, data.dof, data.body_matrix, q, v, C", {"C": "(nv, nv)"}, "C",
        None, "coriolis_matrix(model, q, v, data, C)"),
    "frame_jacobian": Entry(
        "frame_jacobian_kernel", {"q": "vector"}, {},
        "model.packed, table, data.body, data.full_q, q, body, placement, frame, J",
        {"J": "(6, nv)"}, "J", None, None,
        ("frame_in", "model, link, reference", "body, placement, table, frame")),
    "rnea_derivatives_fd": _finite_differences_row("rnea_derivatives_fd", "a",
                                                   "inverse_dynamics_steps"),
    "aba_derivatives_fd": _finite_differences_row("aba_derivatives_fd", "tau",
                                                  "forward_dynamics_steps"),
    "integrate": Entry(
        "integrate_kernel", {"q": "vector", "dv": "vector"}, {},
        "model.packed, q, dv, out", {"out": "nq"}, "out", None, "integrate(model, q, dv, out)"),
    # operational-space and whole-body quantities (a link's frame through the prepare step;
    # the coupling table, where mimic joints are, taken by the kernels themselves)
    "frame_placement": Entry(
        "frame_placement_kernel", {"q": "vector"}, {},
        "model.packed, table, data.body, data.full_q, q, body, placement, out",
        {"out": "(4, 4)"}, "out", None, None,
        ("frame_of_link", "model, link", "body, placement, table")),
    "frame_jacobian_time_variation": Entry(
        "frame_jacobian_time_variation_kernel", {"q": "vector", "v": "vector"}, {},
        "model.packed, table, data.body, data.full_q, data.full_v, q, v, body, placement, "
        "frame, dJ", {"dJ": "(6, nv)"}, "dJ", None, None,
        ("frame_in", "model, link, reference", "body, placement, table, frame")),
    "frame_acceleration_bias": Entry(
        "frame_acceleration_bias_kernel", {"q": "vector", "v": "vector"}, {},
        "model.packed, table, data.body, data.full_q, data.full_v, q, v, body, placement, "
        "frame, bias", {"bias": "6"}, "bias", None, None,
        ("frame_in", "model, link, reference", "body, placement, table, frame")),
    "operational_space_inertia": Entry(
        "operational_space_inertia_kernel", {"q": "vector"}, {},
        "model.packed, table, data.body, data.force_sets, data.full_q, data.full_matrices, "
        "data.reduced_matrices, q, body, placement, frame, 1 if translational else 0, "
        "data.matrix, data.frame_work, Lambda",
        {"Lambda": "(3, 3) if translational else (6, 6)"}, "Lambda", None, None,
        ("frame_in", "model, link, reference", "body, placement, table, frame")),
    "effective_mass": Entry(
        "effective_mass_kernel", {"q": "vector", "direction": "vector"}, {},
        "model.packed, table, data.body, data.force_sets, data.full_q, data.full_matrices, "
        "data.reduced_matrices, q, body, placement, direction, data.matrix, data.frame_work, "
        "mass", {"mass": "1"}, "float(mass[0])", None, None,
        ("frame_of_link", "model, link", "body, placement, table")),
    "center_of_mass": Entry(
        "center_of_mass_kernel", {"q": "vector", "v": "vector"}, {"v": "zeros_v"},
        "model.packed, table, data.body, data.full_q, data.full_v, q, v, out",
        {"out": "(2, 3)"}, "(out[0], out[1]) if velocity else out[0]", None, None,
        ("velocity_given", "model, v", "velocity, table")),
    "center_of_mass_jacobian": Entry(
        "center_of_mass_jacobian_kernel", {"q": "vector"}, {},
        "model.packed, table, data.body, data.full_q, q, Jc",
        {"Jc": "(3, nv)"}, "Jc", None, None, ("coupling_table", "model", "table")),
    "centroidal_momentum_matrix": Entry(
        "centroidal_momentum_matrix_kernel", {"q": "vector"}, {},
        "model.packed, table, data.body, data.full_q, q, A", {"A": "(6, nv)"}, "A", None,
        None, ("coupling_table", "model", "table")),
    "centroidal_momentum": Entry(
        "centroidal_momentum_kernel", {"q": "vector", "v": "vector"}, {},
        "model.packed, table, data.body, data.full_q, data.full_v, q, v, h", {"h": "6"}, "h",
        None, None, ("coupling_table", "model", "table")),
}

# The dispatcher's test of a caller's array, by kind (see the module docstring).
_FAST_TEST = {"vector": "{x}.dtype is _f8 and {x}.strides == _VECTOR",
              "rows6": "{x}.dtype is _f8 and {x}.strides == _ROWS6"}
_CONVERT = {"vector": "_checks.vector({x}, {x!r})", "rows6": "_checks.matrix({x}, {x!r})"}

_TEMPLATE = '''\
def {name}(model, {parameters}):
{sizes}{outputs}{special}{prepare}{coupled}{scratch}\
    data = model.data if data is None else _workspace(model, data)
{defaults}    try:
{call}    except (TypeError, ValueError, AttributeError):   # not float64 C arrays: convert once
        {names} = {convert}
        status = _kernel({arguments})
    if status:
        raise _checks.input_error({name!r}, status, model, _NAMES, ({names},))
    return {returns}
'''

_SPECIAL = '''\
    special = model._specialized.{slot}      # rbd_ros.specialize: the model's own kernel
    if special is not None and data is None{no_fext}:
        try:
            status = special({arguments})
        except (TypeError, ValueError):         # not float64 C arrays: convert once
            {names} = {convert}
            status = special({arguments})
        if status:
            raise _checks.input_error({name!r}, status, model, _NAMES, ({names},{fext}))
        return {returns}
'''

_COUPLED = '''\
    coupling = model.coupling
    # mimic joints: the reduced system
    # (rbd_ros.description.mimic_coupling)
    if coupling is not None:
        return coupling.{call}
'''

# The results: fresh, or the caller's ``out=`` checked as a batch call's (the kernel writes
# into them), made before every route (specialized, coupled, generic): each writes them.
_OUTPUTS = '''\
    if out is None:
{fresh}{fast}    else:
        {targets} = _checked_output({name!r}, out, ({shapes}), {{{inputs}}})
'''
# One output: the common case tested inline, no more leniently than _checked_output (an
# ndarray of the float64 dtype itself, C-contiguous, writeable, owning its memory, beside
# inputs that own theirs and are not it: arrays numpy allocated each for itself do not
# overlap); anything else goes through _checked_output, which says what is wrong.
_FAST_OUTPUT = '''\
    elif (out.__class__ is _ndarray and out.dtype is _f8 and out.shape == ({shape})
          and out.flags.num & _OWNED_TARGET == _OWNED_TARGET{inputs}):
        {target} = out
'''
_OWNED_INPUT = "{x} is not out and {x}.__class__ is _ndarray and {x}.flags.num & _OWNS"

_ARGUMENTS_PER_TEST = 3     # see uses_entry_point
_SIZES = {"nv": "nv = model.nv", "nq": "nq = model.nq", "nb": "nb = model.nbodies"}


def caller_outputs(entry):
    """Return the outputs the caller's ``out=`` gives (the others are the call's scratch)."""
    if entry.out is None:
        return entry.outputs
    return {x: entry.outputs[x] for x in entry.out.split(", ")}


def source(name, parameters, entry):
    """Return the Python source of the public call ``name`` built from its row."""
    inputs = entry.inputs
    names = ", ".join(inputs)
    shapes = " ".join(entry.outputs.values())
    sizes = "".join(f"    {line}\n" for size, line in _SIZES.items() if size in shapes)
    given = caller_outputs(entry)
    scratch = "".join(f"    {x} = _empty({shape})\n" for x, shape in entry.outputs.items()
                      if x not in given)
    if "out=None" in parameters:
        outputs = _OUTPUTS.format(
            fresh="".join(f"        {x} = _empty({shape})\n" for x, shape in given.items()),
            targets=", ".join(given) + ("," if len(given) == 1 else ""), name=name,
            shapes="".join(f"{_shape(shape)}, " for shape in given.values()),
            inputs=", ".join(f"{x!r}: {x}" for x in inputs),
            fast=_fast_output(given, inputs, entry.defaults))
    else:
        outputs = "".join(f"    {x} = _empty({shape})\n" for x, shape in given.items())
    special = ""
    if entry.special:
        slot, arguments = entry.special
        plain = [x for x in inputs if x != "fext"]
        special = _SPECIAL.format(
            slot=slot, name=name, arguments=arguments, returns=entry.returns,
            names=", ".join(plain), convert=_convert(plain, inputs),
            no_fext=" and fext is None" if "fext" in inputs else "",
            fext=" model.data.no_fext" if "fext" in inputs else "")
    if uses_entry_point(name):
        # an input left to its default is the workspace's own array: nothing to test
        defaults = "".join(f"    {x}_default = {x} is None\n    if {x}_default:\n"
                           f"        {x} = data.{attribute}\n"
                           for x, attribute in entry.defaults.items())
        fast = " and ".join(_FAST_TEST[kind].format(x=x) if x not in entry.defaults
                            else f"({x}_default or {_FAST_TEST[kind].format(x=x)})"
                            for x, kind in inputs.items())
        call = (f"        if {fast}:\n            status = _entry({entry.arguments})\n"
                f"        else:\n            status = _kernel({entry.arguments})\n")
    else:
        defaults = "".join(f"    if {x} is None:\n        {x} = data.{attribute}\n"
                           for x, attribute in entry.defaults.items())
        call = f"        status = _kernel({entry.arguments})\n"
    if "data=None" not in parameters:             # a call without workspace
        defaults, template = "", _TEMPLATE.replace(
            "    data = model.data if data is None else _workspace(model, data)\n", "")
    else:
        template = _TEMPLATE
    return template.format(
        name=name, parameters=parameters, sizes=sizes, outputs=outputs, special=special,
        coupled=_COUPLED.format(call=entry.coupled) if entry.coupled else "",
        prepare=(f"    {entry.prepare[2]} = _prepare({entry.prepare[1]})\n" if entry.prepare
                 else ""),
        scratch=scratch, defaults=defaults, call=call,
        arguments=entry.arguments, names=names, convert=_convert(inputs, inputs),
        returns=entry.returns)


def _fast_output(given, inputs, defaults):
    """Return the inline test of a call's one ``out`` array (none for several outputs)."""
    if len(given) != 1:
        return ""
    (target, shape), = given.items()
    tests = ""
    for x in inputs:            # fext and compute_all's a may be None: not read then
        owned = _OWNED_INPUT.format(x=x)
        optional = x in defaults or x == "fext"
        tests += "\n          and " + (f"({x} is None or {owned})" if optional else owned)
    return _FAST_OUTPUT.format(shape=_shape(shape), inputs=tests, target=target)


def _shape(shape):
    """Return a row's output shape as a tuple's source: "nv" -> "(nv,)"."""
    return shape if shape.startswith("(") else f"({shape},)"


def uses_entry_point(name):
    """
    Return whether the call ``name`` reaches its kernel through the entry point.

    Where it saves time: testing a caller's array in Python (dtype, strides) costs ~80 ns,
    the dispatcher's typing ~30 ns per argument (rnea on ur5, 3 vectors, 7 arguments:
    dispatcher 946 ns a call, entry point 976, entry point without the tests 732). So the
    entry point serves a call whose kernel takes at least 3 arguments per array tested
    (crba: 4 for q alone; the derivatives: 11-14 for 3); the others call the dispatcher.
    """
    entry = ENTRIES[name]
    tested = sum(1 for x in entry.inputs if x not in entry.defaults)
    return len(entry.arguments.split(", ")) >= _ARGUMENTS_PER_TEST * tested


def _convert(names, inputs):
    parts = [_CONVERT[inputs[x]].format(x=x) for x in names]
    return ", ".join(parts)


def public(stub):
    """
    Return the public call named as ``stub``, built from its row of :data:`ENTRIES`.

    ``stub``: a function with the call's signature and docstring and no body, defined next
    to the row's kernel (which is looked up in its module).
    """
    name = stub.__name__
    entry = ENTRIES[name]
    signature = inspect.signature(stub)
    parameters = str(signature)[1:-1]
    if not parameters.startswith("model, "):
        raise TypeError(f"{name}: a public call takes the model first")
    if "out" not in signature.parameters:     # every call takes out=: the row says its shapes
        keywords = any(p.kind in (p.KEYWORD_ONLY, p.VAR_POSITIONAL)
                       for p in signature.parameters.values())
        parameters += ", out=None" if keywords else ", *, out=None"
    doc = with_out_parameter(name, inspect.cleandoc(stub.__doc__), out_text(entry))
    namespace = {"_kernel": stub.__globals__[entry.kernel], "_checks": _checks,
                 "_empty": np.empty, "_workspace": _checks.workspace,
                 "_checked_output": _output_arrays.checked, "_ndarray": np.ndarray,
                 "_OWNED_TARGET": _output_arrays.OWNED_TARGET, "_OWNS": _output_arrays.OWNS,
                 "_NAMES": tuple(entry.inputs), "_f8": np.dtype(np.float64), "_VECTOR": (8,),
                 "_ROWS6": (48, 8), "_Dynamics": stub.__globals__.get("Dynamics")}
    if entry.prepare:
        namespace["_prepare"] = stub.__globals__[entry.prepare[0]]
    namespace["_entry"] = _first_entry(namespace["_kernel"], namespace)
    code = source(name, parameters[len("model, "):], entry)
    filename = f"<rbd_ros.algorithms.entries: {name}>"
    linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)
    exec(compile(code, filename, "exec"), namespace)
    function = functools.update_wrapper(namespace[name], stub, updated=())
    del function.__wrapped__               # the stub has no body: nothing to unwrap to
    function.__doc__ = doc
    function.__source__ = code
    return function


def out_text(entry):
    """Return the numpy-style entry of a call's ``out`` parameter, from its row."""
    given = caller_outputs(entry)
    shapes = [f"``{_shape(shape)}``" for shape in given.values()]
    if len(shapes) > 1:
        kind = f"tuple of {len(shapes)} numpy.ndarray, shapes {', '.join(shapes)}, or None"
        what = "The arrays to write the results into and return; None (default): new ones"
    elif entry.returns == next(iter(given)):
        kind = f"numpy.ndarray, shape {shapes[0]}, or None"
        what = "The array to write the result into and return; None (default): a new one"
    else:                               # compute_all, center_of_mass: views of one block
        kind = f"numpy.ndarray, shape {shapes[0]}, or None"
        what = ("The block to write the results into, of which the call returns views; None "
                "(default): a new one")
    return f"out : {kind}\n" + textwrap.indent(textwrap.fill(
        f"{what}. Float64, C-contiguous, writeable and sharing no memory with an input or "
        "another output (checked as a batch call's ``out``); a loop that reuses it allocates "
        "nothing per call.", 88), "    ")


# a numpy-style section title and its underline
_SECTION = re.compile(r"^\w[\w ]*\n-{3,}$", flags=re.M)
_PARAMETERS = "Parameters\n----------\n"


def with_out_parameter(name, doc, entry):
    """
    Return the docstring ``doc`` with the parameter ``entry`` ending its Parameters section.

    Unless ``doc`` documents ``out`` itself. A stub without a Parameters section is refused:
    every public call documents its parameters (numpy style, rendered by napoleon).
    """
    start = doc.find(_PARAMETERS)
    if start < 0:
        raise TypeError(f"{name}: a public call's docstring has a numpy-style Parameters "
                        "section")
    start += len(_PARAMETERS)
    following = _SECTION.search(doc, start)
    end = len(doc) if following is None else following.start()
    if re.search(r"^out :", doc[start:end], flags=re.M):
        return doc
    return (doc[:end].rstrip("\n") + "\n" + entry + "\n\n" + doc[end:]).rstrip("\n")


def _first_entry(kernel, namespace):
    """Return what calls the kernel's entry point the first time, and then puts it in place."""
    def first_call(*arguments):
        kernel.compile_declared()
        entry_point = kernel.overloads[kernel.signatures[0]].entry_point
        namespace["_entry"] = entry_point
        return entry_point(*arguments)
    return first_call
