"""
The public single-state calls as data: one row each, and the calls' declarations.

Every public call (``rbd_ros.rnea``, ``crba``, ``aba``, ``minv``, the derivatives, ...) is
one row of :data:`ENTRIES`, which says only what differs between calls: its inputs and
their kind, the defaults of those that may be None, the kernel and its arguments (model
tables, workspace fields, inputs, outputs), the outputs and their shapes, what it returns,
its specialized slot, its coupled call and what it works out before the kernel. The module
that defines the kernel declares the call's signature and docstring with a stub decorated
:func:`declare`. ``generate_calls`` writes the calls from both into the checked-in module
``calls.py`` (its docstring says what every call does, and why so); ``rbd_ros`` exports
them from there.

Every call takes ``out=`` (added to the stub's signature where the stub does not declare
it, and to the Parameters section of its docstring where that does not document it:
:func:`with_out_parameter`): one array, or a tuple of as many as the row's outputs (its
``out`` field names them where some outputs are scratch), checked as a batch call's
(:mod:`rbd_ros._output_arrays`).
"""
import collections
import inspect
import re
import textwrap

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
    "prepare",      # what the call works out before the kernel, the kernel's arguments
                    # that are not the caller's arrays (a link's frame): _PREPARE's keys,
                    # ("steps", the function of the finite differences' steps), or None
    "out",          # the outputs the caller's ``out=`` gives, where not all are (the others
                    # are the call's scratch), or None
), defaults=(None, None))


def _finite_differences_row(name, dynamics, u, steps):
    """Return the row of the finite differences of ``dynamics``: RNEA (u = a) or ABA (u = tau)."""
    return Entry(
        "finite_differences_kernel",
        {"q": "vector", "v": "vector", u: "vector", "fext": "rows6"}, {"fext": "no_fext"},
        f"which, model.packed, data.body, q, v, {u}, fext, eps, central, dq, dv, d{u}, q_step, "
        "work",
        {"dq": "(nv, nv)", "dv": "(nv, nv)", f"d{u}": "(nv, nv)", "q_step": "nq",
         "work": "(4, nv)"}, f"dq, dv, d{u}", None,
        f"finite_differences({dynamics}, {name!r}, model, q, v, {u}, fext, eps, central, data, "
        f"(dq, dv, d{u}))",
        (("steps", steps),), f"dq, dv, d{u}")


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
        "Dynamics(out[5 * nv], out[5 * nv + 1], out[0:nv], out[nv:2 * nv], "
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
        "model.packed, table, data.body, data.full_q, q, frame, J",
        {"J": "(6, nv)"}, "J", None, None,
        ("link_in_reference",)),
    "rnea_derivatives_fd": _finite_differences_row("rnea_derivatives_fd", "rnea", "a",
                                                   "inverse_dynamics_steps"),
    "aba_derivatives_fd": _finite_differences_row("aba_derivatives_fd", "aba", "tau",
                                                  "forward_dynamics_steps"),
    "integrate": Entry(
        "integrate_kernel", {"q": "vector", "dv": "vector"}, {},
        "model.packed, q, dv, out", {"out": "nq"}, "out", None, "integrate(model, q, dv, out)"),
    # operational-space and whole-body quantities (a link's frame through the prepare step;
    # the coupling table, where mimic joints are, taken by the kernels themselves)
    "frame_placement": Entry(
        "frame_placement_kernel", {"q": "vector"}, {},
        "model.packed, table, data.body, data.full_q, q, frame, out",
        {"out": "(4, 4)"}, "out", None, None,
        ("link",)),
    "frame_jacobian_time_variation": Entry(
        "frame_jacobian_time_variation_kernel", {"q": "vector", "v": "vector"}, {},
        "model.packed, table, data.body, data.full_q, data.full_v, q, v, frame, dJ",
        {"dJ": "(6, nv)"}, "dJ", None, None, ("link_in_reference",)),
    "frame_acceleration_bias": Entry(
        "frame_acceleration_bias_kernel", {"q": "vector", "v": "vector"}, {},
        "model.packed, table, data.body, data.full_q, data.full_v, q, v, frame, bias",
        {"bias": "6"}, "bias", None, None, ("link_in_reference",)),
    "operational_space_inertia": Entry(
        "operational_space_inertia_kernel", {"q": "vector"}, {},
        "model.packed, table, data.body, data.force_sets, data.full_q, data.full_matrices, "
        "data.reduced_matrices, q, frame, 1 if translational else 0, "
        "data.matrix, data.frame_work, Lambda",
        {"Lambda": "(3, 3) if translational else (6, 6)"}, "Lambda", None, None,
        ("link_in_reference",)),
    "effective_mass": Entry(
        "effective_mass_kernel", {"q": "vector", "direction": "vector"}, {},
        "model.packed, table, data.body, data.force_sets, data.full_q, data.full_matrices, "
        "data.reduced_matrices, q, frame, direction, data.matrix, data.frame_work, "
        "mass", {"mass": "1"}, "float(mass[0])", None, None,
        ("link",)),
    "center_of_mass": Entry(
        "center_of_mass_kernel", {"q": "vector", "v": "vector"}, {"v": "zeros_v"},
        "model.packed, table, data.body, data.full_q, data.full_v, q, v, out",
        {"out": "6 if velocity else 3"}, "(out[:3], out[3:]) if velocity else out", None,
        None, ("coupling", "velocity")),
    "center_of_mass_jacobian": Entry(
        "center_of_mass_jacobian_kernel", {"q": "vector"}, {},
        "model.packed, table, data.body, data.full_q, q, Jc",
        {"Jc": "(3, nv)"}, "Jc", None, None, ("coupling",)),
    "centroidal_momentum_matrix": Entry(
        "centroidal_momentum_matrix_kernel", {"q": "vector"}, {},
        "model.packed, table, data.body, data.full_q, q, A", {"A": "(6, nv)"}, "A", None,
        None, ("coupling",)),
    "centroidal_momentum": Entry(
        "centroidal_momentum_kernel", {"q": "vector", "v": "vector"}, {},
        "model.packed, table, data.body, data.full_q, data.full_v, q, v, h", {"h": "6"}, "h",
        None, None, ("coupling",)),
}

# The parameters the public calls share, word for word: (type, description). A stub's
# docstring names them in one entry of its Parameters section, "model, q, data : ..." and a
# line of description, which ``declare`` writes out: one text to keep where up to 26
# docstrings repeated it.
SHARED_PARAMETERS = {
    "model": ("Model",
              "The robot, from :func:`load_model`."),
    "q": ("array_like, shape ``(nq,)``",
          "Joint positions (rad, m) in ``model.joint_names`` order; with a floating base, "
          "the first 7 are its position (m) and unit quaternion (x, y, z, w) in the world, "
          "with a planar base the first 4 its x, y (m) and cos θ, sin θ (the unit parts "
          "normalized where they are used)."),
    "v": ("array_like, shape ``(nv,)``",
          "Joint velocities (rad/s, m/s); with a floating base, the first 6 are its linear "
          "(m/s) and angular (rad/s) velocity in the base frame (a planar base: the first 3, "
          "v_x, v_y, ω)."),
    "tau": ("array_like, shape ``(nv,)``",
            "Joint torques (N·m) and forces (N); with a floating base, the first 6 are the "
            "spatial force [f; n] (N, N·m) on the base in the base frame (a planar base: "
            "f_x, f_y, n_z; zeros: an unactuated base)."),
    "fext": ("array_like, shape ``(nb, 6)``, or None",
             "External spatial forces [f; n] (N, N·m), one row per body in "
             "``model.body_names`` order (nb = ``model.nbodies``): the force the environment "
             "exerts on the body, in the body's frame (that of the joint that moves it), the "
             "moment about its origin. None (default): no external force."),
    "data": ("Data or None",
             "The workspace the call computes in; None (default): ``model.data``. Threads that "
             "compute on one model concurrently each pass their own."),
    "a": ("array_like, shape ``(nv,)``",
          "Joint accelerations (rad/s², m/s²), the time derivative of ``v``, laid out as "
          "``v``."),
    "link": ("str",
             "A link of ``model.link_frames`` (any URDF link, those welded by fixed joints "
             "too); the frame is the link's URDF frame."),
    "eps": ("float",
            "The step, in the units of each coordinate (rad, m; rad/s, m/s; ...); finite and "
            "> 0. Default 1e-6."),
    "central": ("bool",
                "True (default): central differences; False: forward differences."),
}

_ARGUMENTS_PER_TEST = 2     # see uses_entry_point

# name -> the Declaration of the public call of that name (``declare``)
DECLARED = {}


def caller_outputs(entry):
    """Return the outputs the caller's ``out=`` gives (the others are the call's scratch)."""
    if entry.out is None:
        return entry.outputs
    return {x: entry.outputs[x] for x in entry.out.split(", ")}


def shape_source(shape):
    """Return a row's output shape as a tuple's source: "nv" -> "(nv,)"."""
    return shape if shape.startswith("(") else f"({shape},)"


def uses_entry_point(name):
    """
    Return whether the call ``name`` reaches its kernel through the entry point.

    Where it saves time: testing a caller's input in Python (dtype and dimensions: the
    kernel tests the strides) costs ~35 ns, an output (also its type) ~55 ns (~25 since its
    WRITEABLE flag is the kernel's to test, ``rbd_ros._array_flags``; the rule below was
    timed before), the dispatcher's typing ~30-40 ns per argument. So the entry point serves
    a call whose kernel takes at least 2 arguments per array tested; each output the caller
    may give counts as one. Timeit on ur5, 2026-12-03 (after the strides moved into the
    kernels): crba (4 arguments, q and M tested) with out= and data= 0.61 µs through the
    entry point against 0.65 through the dispatcher (its kernel alone: 0.36 and 0.51). rnea,
    aba, nonlinear_effects, rnea_derivatives, inverse_and_forward_dynamics, the regressor
    and integrate (fewer than 2 arguments per test) call the dispatcher.
    """
    entry = ENTRIES[name]
    tested = sum(1 for x in entry.inputs if x not in entry.defaults)
    tested += len(caller_outputs(entry))
    return len(entry.arguments.split(", ")) >= _ARGUMENTS_PER_TEST * tested


class Declaration:
    """
    A public call's signature and docstring, as its stub declares them (:func:`declare`).

    Not callable: the call itself is ``rbd_ros.<name>`` (``rbd_ros.algorithms.calls``).
    """

    def __init__(self, name, parameters, doc, module):
        self.name, self.parameters, self.doc, self.module = name, parameters, doc, module

    def __call__(self, *args, **kwargs):
        raise TypeError(f"{self.module}.{self.name} declares the call rbd_ros.{self.name}: "
                        "call that")

    def __repr__(self):
        return f"<declaration of rbd_ros.{self.name}({self.parameters})>"


def declare(stub):
    """
    Return the :class:`Declaration` of the public call named as ``stub``, from its row.

    ``stub``: a function with the call's signature and docstring and no body, defined next
    to the row's kernel. Its signature gains ``out=None`` (keyword-only) where it lacks it,
    its docstring the ``out`` entry (:func:`out_text`).
    """
    name = stub.__name__
    entry = ENTRIES[name]
    signature = inspect.signature(stub)
    parameters = str(signature)[1:-1]
    if not parameters.startswith("model, "):
        raise TypeError(f"{name}: a public call takes the model first")
    parameters = parameters[len("model, "):]
    if "out" not in signature.parameters:     # every call takes out=: the row says its shapes
        keywords = any(p.kind in (p.KEYWORD_ONLY, p.VAR_POSITIONAL)
                       for p in signature.parameters.values())
        parameters += ", out=None" if keywords else ", *, out=None"
    doc = with_out_parameter(name, with_shared_refusals(with_shared_parameters(
        inspect.cleandoc(stub.__doc__))), out_text(entry))
    declaration = DECLARED[name] = Declaration(name, parameters, doc,
                                               stub.__module__.rsplit(".", 1)[-1])
    return declaration


# what most calls refuse (a ValueError), written once: a stub's Raises entry names it in a last
# line "... the shared refusals: ...", after the call's own refusals (each ending in ";")
SHARED_REFUSALS = ("an input of the wrong size, not real numbers, with NaN or inf, or a zero base "
                   "quaternion or direction (the message names it); a result that is not "
                   "finite (inputs too large for float64, or a degenerate model); ``data`` made "
                   "for a model of another size; an ``out`` that is not as described.")


def with_shared_refusals(doc, refusals=SHARED_REFUSALS):
    """
    Return ``doc`` with its Raises entry's "... the shared refusals" line written out.

    ``refusals``: :data:`SHARED_REFUSALS` (the single-state calls') by default,
    ``rbd_ros.batch.BATCH_REFUSALS`` for the batch calls.
    """
    def written(match):
        own = " ".join(match.group(1).split())
        text = f"{own} {refusals}" if own else refusals[0].upper() + refusals[1:]
        return "ValueError\n" + textwrap.fill(text, 88, initial_indent="    ",
                                              subsequent_indent="    ")
    return _SHARED_REFUSALS_ENTRY.sub(written, doc)


_SHARED_REFUSALS_ENTRY = re.compile(
    r"^ValueError\n((?:    (?!\.\.\. )[^\n]*\n)*)    \.\.\. the shared refusals: [^\n]*$",
    flags=re.M)


def with_shared_parameters(doc, shared=None):
    """
    Return ``doc`` with its "a, b : ..." entry written out from ``shared``.

    ``shared``: name -> (type, text); :data:`SHARED_PARAMETERS` (the single-state calls')
    by default, ``rbd_ros.batch.BATCH_PARAMETERS`` for the batch calls.
    """
    shared = SHARED_PARAMETERS if shared is None else shared

    def written(match):
        parts = []
        for name in match.group(1).split(", "):
            kind, text = shared[name]
            parts.append(f"{name} : {kind}\n" + textwrap.fill(
                text, 88, initial_indent="    ", subsequent_indent="    "))
        return "\n".join(parts)
    return _SHARED_ENTRY.sub(written, doc)


# a numpy-style entry of several parameters whose type is "...": its one description line
# says where their text is
_SHARED_ENTRY = re.compile(r"^(\w+(?:, \w+)*) : \.\.\.\n    [^\n]*$", flags=re.M)


def out_text(entry):
    """Return the numpy-style entry of a call's ``out`` parameter, from its row."""
    given = caller_outputs(entry)
    shapes = [f"``{shape_source(shape)}``" for shape in given.values()]
    if len(shapes) > 1:
        kind = f"tuple of {len(shapes)} numpy.ndarray, shapes {', '.join(shapes)}, or None"
        what = "The arrays to write the results into and return; None (default): new ones"
    elif entry.returns == next(iter(given)):
        kind = f"numpy.ndarray, shape {shapes[0]}, or None"
        what = "The array to write the result into and return; None (default): a new one"
    else:                               # compute_all, center_of_mass: views of one block
        kind = f"numpy.ndarray, shape {shapes[0]}, or None"
        what = ("The block to write the results into, of which the call returns views (or "
                "the block itself, where it is the one result); None (default): a new one")
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


def kernel_arguments(name, model, data, **arrays):
    """
    Return the arguments entry ``name``'s generated call passes its kernel, as objects.

    Read from its ``arguments`` row: ``model.X`` and ``data.X`` from ``model`` and ``data``,
    every other name from ``arrays`` (the call's inputs and outputs). For a call prepared
    once for fixed arrays (``rbd_ros.outputs.ResultBuffer.bind``): the kernel's entry point
    tests no type, so its arguments come from the row the generated call is written from.
    """
    owners = {"model": model, "data": data}
    values = []
    for argument in ENTRIES[name].arguments.split(", "):
        owner, _, attribute = argument.partition(".")
        values.append(getattr(owners[owner], attribute) if attribute else arrays[argument])
    return tuple(values)


def first_entry(kernel, namespace, name):
    """
    Return what calls ``kernel``'s entry point the first time, then puts it in ``namespace``.

    ``namespace[name]`` is what a generated call calls; the kernel compiles (or loads from
    the cache) at the first call, not at import.
    """
    def first_call(*arguments):
        entry_point = kernel.entry_point()
        namespace[name] = entry_point
        return entry_point(*arguments)
    return first_call
