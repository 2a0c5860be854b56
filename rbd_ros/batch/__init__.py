"""
Batched dynamics: many states of one model in one call, spread over numba's threads.

    tau = rbd_ros.rnea_batch(model, q, v, a)          # q: (N, nq), v, a: (N, nv) -> (N, nv)

Each function is one compiled entry (``parallel=True``) that splits the N states into as many
contiguous chunks as there are threads (``numba.get_num_threads()``, at the time of the
call) and runs, on each thread, the single-state kernel of the algorithm (``rnea_kernel``,
``aba_kernel``, ...) on the states of its chunk, then on what is left of the other chunks
(``batch_kernels.next_block``): a thread that starts late (a sleeping thread takes tens of µs to
wake, a long time next to a 0.4 ms call on a 7-dof arm) or runs on a busy core is helped
instead of waited for, and each thread still writes mostly its own contiguous part of the
outputs. The results are those of the single-state functions (the same kernels run),
state by state.

Each thread needs its own workspace: per-chunk copies of the :class:`rbd_ros.Data` arrays,
made once per workspace (and number of threads) by ``Data.batch_workspace``, a slot apart
so that no two threads write the same cache line (``model.BATCH_SLOT_STRIDE``), so a call
allocates only its outputs. A batch call holds its workspace's lock for its duration:
calls on one workspace from several Python threads run one at a time.

Outputs are new arrays, or the caller's (``out=``, checked by :mod:`rbd_ros._output_arrays`):
a caller that computes batch after batch saves the first touch of every page of fresh
outputs (a fifth of the time of the talos derivatives on one thread).

Inputs are checked as in the single-state functions (sizes, finiteness, a zero base
quaternion or direction), state by state, inside the kernels; a bad state raises ValueError
naming the first bad sample and the argument. ``fext``, when given, is (N, nbodies, 6).

Each algorithm has its batch kernel (``rnea_batch_kernel``, ...; a model with mimic joints
its coupled one, whose chunks run the coupled single-state kernels of
``algorithms/coupled.py`` in per-chunk copies of the coupled scratch), generated from one
table into ``algorithm_kernels.py`` (``generate_kernels``); a call finds its kernel and the
workspace arrays it takes by the algorithm's name (``KERNELS``, ``COUPLED_KERNELS``).
"""
import inspect

import numba
import numpy as np

from .. import _output_arrays as _batch_outputs, _checks
from ..algorithms.entries import ENTRIES, with_shared_parameters, with_shared_refusals
from .algorithm_kernels import COUPLED_KERNELS, KERNELS
from .kernels import CLAIM_STRIDE

# The parameters the batch calls share, written once: a call's docstring names them in one
# "model, q, ... : ..." entry, which ``documented`` writes out.
BATCH_PARAMETERS = {
    "model": ("Model", "The robot, from :func:`load_model`."),
    "q": ("array_like, shape ``(N, nq)``",
          "One configuration per row (rad, m), each as :func:`rbd_ros.rnea`'s ``q``."),
    "v": ("array_like, shape ``(N, nv)``",
          "Joint velocities (rad/s, m/s), one state per row, as :func:`rbd_ros.rnea`'s ``v``."),
    "a": ("array_like, shape ``(N, nv)``",
          "Joint accelerations (rad/s², m/s²), one state per row."),
    "tau": ("array_like, shape ``(N, nv)``",
            "Joint torques (N·m) and forces (N), one state per row, as :func:`rbd_ros.aba`'s "
            "``tau``."),
    "fext": ("array_like, shape ``(N, nb, 6)``, or None",
             "Each state's ``fext``, as :func:`rbd_ros.rnea` takes it (nb = ``model.nbodies``; "
             "forces in newtons, moments in N·m, each in its body's frame); None (default): no "
             "external force."),
    "data": ("Data or None",
             "The workspace (the call holds its lock); None (default): ``model.data``."),
}


# ... and what every batch call refuses (a ValueError): a docstring's Raises entry names it
# in a line "... the shared refusals: ..." (as the single-state calls' stubs do)
BATCH_REFUSALS = ("an input not of its shape, not real numbers, or with leading dimensions (N) "
                  "that disagree; a state with NaN or inf, a zero base quaternion or "
                  "direction, or a result that is not finite (the message names the first bad "
                  "sample); ``data`` or ``out`` refused.")


def documented(function):
    """Write out ``function``'s shared parameters and refusals in its docstring."""
    doc = with_shared_parameters(inspect.cleandoc(function.__doc__), BATCH_PARAMETERS)
    function.__doc__ = with_shared_refusals(doc, BATCH_REFUSALS)
    return function


# -- Python wrappers --------------------------------------------------------------------------

def _chunks(n):
    """Return the number of chunks for n states: one per thread, at most one per state."""
    return min(numba.get_num_threads(), n)


def _array(x, name, ndim):
    """
    Return ``x`` as a writable C-contiguous float64 array of ``ndim`` dimensions.

    It is copied only if needed; an input that cannot be converted raises a ValueError naming
    the argument.
    """
    if (isinstance(x, np.ndarray) and x.dtype == np.float64 and x.ndim == ndim
            and x.flags.c_contiguous and x.flags.writeable):
        return x
    return _checks.matrix(x, name, ndim)


def _inputs(function, model, names, values, fext):
    """
    Return the converted (N, ·) inputs and fext, with their leading dimensions and sizes checked.

    fext is an (N, 0, 6) array when None. Returns (arrays, fext, N).
    """
    arrays = []
    for name, x in zip(names, values):
        arr = _array(x, name, 2)
        size = model.nq if name == "q" else model.nv
        if arr.shape[1] != size:
            raise ValueError(f"{function}: {name} must have shape (N, {size}) "
                             f"({_checks.expected_size(model, name)} per state), "
                             f"got {arr.shape}")
        arrays.append(arr)
    n = arrays[0].shape[0]
    for name, arr in zip(names[1:], arrays[1:]):
        if arr.shape[0] != n:
            raise ValueError(f"{function}: {name} has {arr.shape[0]} states but {names[0]} "
                             f"has {n}: the leading dimensions (N) must agree")
    if fext is None:
        fext = np.empty((n, 0, 6))
    else:
        fext = _array(fext, "fext", 3)
        if fext.shape[1:] != (model.nbodies, 6):
            raise ValueError(f"{function}: fext must have shape (N, {model.nbodies}, 6) "
                             f"(one spatial force per body and state), got {fext.shape}")
        if fext.shape[0] != n:
            raise ValueError(f"{function}: fext has {fext.shape[0]} states but {names[0]} "
                             f"has {n}: the leading dimensions (N) must agree")
    return arrays, fext, n


def _raise_first(function, status, model, names, arrays):
    """Raise a ValueError for the first state with a nonzero status (none: return)."""
    bad = np.flatnonzero(status)
    if len(bad) == 0:
        return
    k = int(bad[0])
    err = _checks.input_error(function, status[k], model, names,
                              tuple(arr[k] for arr in arrays))
    message = str(err)
    prefix = f"{function}: "
    if message.startswith(prefix):
        message = message[len(prefix):]
    raise ValueError(f"{function}: sample {k}: {message}")


def _run(function, algorithm, model, names, values, fext, out_shape, nout, data, out,
         public=None):
    """
    Run one batch call; return its ``nout`` outputs, of shape ``public(N)``.

    The inputs are checked and converted, the outputs are made or taken from ``out``
    (checked: :mod:`rbd_ros._output_arrays`), the kernel writes them as (N, *out_shape)
    (``public`` defaults to that shape); a nonzero status of any state is reported.

    ``algorithm``: the name of the batch kernel's row (``KERNELS``, or ``COUPLED_KERNELS``
    for a model with mimic joints), which says the workspace arrays it takes; ``fext`` is
    passed on only where the function has it (``names`` then ends with "fext").
    """
    takes_fext = names[-1] == "fext"
    inputs = names[:-1] if takes_fext else names
    arrays, fext, n = _inputs(function, model, inputs, values, fext)
    shape = (n,) + out_shape
    shapes = ((public or (lambda n: shape))(n),) * nout
    if out is None:
        results = _batch_outputs.fresh(shapes)
    else:
        read = dict(zip(inputs, arrays), **({"fext": fext} if takes_fext else {}))
        results = _batch_outputs.checked(function, out, shapes, read)
    outs = tuple(x.reshape(shape) for x in results)      # views: C-contiguous
    if n:
        status = np.empty(n, np.int64)
        nchunks = _chunks(n)
        claims = np.zeros(CLAIM_STRIDE * nchunks, np.int64)
        data = model.data if data is None else _checks.workspace(model, data)
        states = (*arrays, *((fext,) if takes_fext else ()), *outs, status, claims, nchunks)
        with data.lock:
            ws = data.batch_workspace(max(nchunks, numba.get_num_threads()))
            if model.coupling is None:
                kernel, scratch = KERNELS[algorithm]
                kernel(model.packed, *(getattr(ws, name) for name in scratch), *states)
            else:
                kernel, scratch = COUPLED_KERNELS[algorithm]
                kernel(model.packed, model.coupling.table,
                       *(getattr(ws, name) for name in scratch), *states)
        _raise_first(function, status, model, names, tuple(arrays) + (fext,))
    return results


_NAMES_RNEA = tuple(ENTRIES["rnea"].inputs)      # the single-state call's, for its messages
_NAMES_ABA = tuple(ENTRIES["aba"].inputs)


def _vector_shape(model):
    """Return the kernel's per-state shape of a vector result: (nv,)."""
    return (model.nv,)


def _matrix_shape(model):
    return (model.nv, model.nv)


@documented
def rnea_batch(model, q, v, a, fext=None, *, out=None, data=None):
    """
    Return τ for N states: q (N, nq), v and a (N, nv), fext (N, nbodies, 6) or None -> (N, nv).

    Row k is ``rbd_ros.rnea(model, q[k], v[k], a[k], fext[k])``.

    Parameters
    ----------
    model, q, v, a, fext : ...
        Shared by the batch calls: ``rbd_ros.batch.BATCH_PARAMETERS``.
    out : numpy.ndarray, shape ``(N, nv)``, or None
        An array to write τ into and return, e.g. one reused from call to call (float64,
        C-contiguous, writeable, sharing no memory with an input); None (default): a new one.
    data : ...
        Shared by the batch calls: ``rbd_ros.batch.BATCH_PARAMETERS``.

    Returns
    -------
    tau : numpy.ndarray, shape ``(N, nv)``
        Row k: the joint torques (N·m, N) of state k.

    Raises
    ------
    ValueError
        ... the shared refusals: ``rbd_ros.batch.BATCH_REFUSALS``.

    """
    return _run("rnea_batch", "rnea", model, _NAMES_RNEA, (q, v, a), fext,
                _vector_shape(model), 1, data, out)[0]


@documented
def aba_batch(model, q, v, tau, fext=None, *, out=None, data=None):
    """
    Return q̈ for N states: q (N, nq), v and tau (N, nv), fext (N, nbodies, 6) or None -> (N, nv).

    Row k is ``rbd_ros.aba(model, q[k], v[k], tau[k], fext[k])``. ``out``: as for
    :func:`rnea_batch`.

    Parameters
    ----------
    model, q, v, tau, fext : ...
        Shared by the batch calls: ``rbd_ros.batch.BATCH_PARAMETERS``.
    out : numpy.ndarray, shape ``(N, nv)``, or None
        An array to write into and return (float64, C-contiguous, writeable, sharing no memory
        with an input); None (default): a new one.
    data : ...
        Shared by the batch calls: ``rbd_ros.batch.BATCH_PARAMETERS``.

    Returns
    -------
    qdd : numpy.ndarray, shape ``(N, nv)``
        Row k: the joint accelerations (rad/s², m/s²) of state k.

    Raises
    ------
    ValueError
        ... the shared refusals: ``rbd_ros.batch.BATCH_REFUSALS``.

    """
    return _run("aba_batch", "aba", model, _NAMES_ABA, (q, v, tau), fext,
                _vector_shape(model), 1, data, out)[0]


@documented
def minv_batch(model, q, *, out=None, data=None):
    """
    Return M(q)⁻¹ for N configurations: q (N, nq) -> (N, nv, nv).

    Entry k is ``rbd_ros.minv(model, q[k])``.

    Parameters
    ----------
    model, q : ...
        Shared by the batch calls: ``rbd_ros.batch.BATCH_PARAMETERS``.
    out : numpy.ndarray, shape ``(N, nv, nv)``, or None
        An array to write into and return (float64, C-contiguous, writeable, sharing no memory
        with an input); None (default): a new one.
    data : ...
        Shared by the batch calls: ``rbd_ros.batch.BATCH_PARAMETERS``.

    Returns
    -------
    Minv : numpy.ndarray, shape ``(N, nv, nv)``
        Entry k: M(q[k])⁻¹, full and symmetric.

    Raises
    ------
    ValueError
        ... the shared refusals: ``rbd_ros.batch.BATCH_REFUSALS``.

    """
    return _run("minv_batch", "minv", model, ("q",), (q,), None,
                _matrix_shape(model), 1, data, out)[0]


@documented
def rnea_derivatives_batch(model, q, v, a, fext=None, *, out=None, data=None):
    """
    Return (∂τ/∂q, ∂τ/∂q̇, M) for N states, each (N, nv, nv).

    Inputs as for :func:`rnea_batch`. Entry k of each is that of
    ``rbd_ros.rnea_derivatives(model, q[k], v[k], a[k], fext[k])`` (∂/∂q in the tangent space).

    Parameters
    ----------
    model, q, v, a, fext : ...
        Shared by the batch calls: ``rbd_ros.batch.BATCH_PARAMETERS``.
    out : tuple of 3 numpy.ndarray, shapes ``(N, nv, nv)``, or None
        Arrays to write into and return (float64, C-contiguous, writeable, sharing no memory
        with an input or another); None (default): new ones.
    data : ...
        Shared by the batch calls: ``rbd_ros.batch.BATCH_PARAMETERS``.

    Returns
    -------
    dtau_dq : numpy.ndarray, shape ``(N, nv, nv)``
        ∂τ/∂q of each state.
    dtau_dv : numpy.ndarray, shape ``(N, nv, nv)``
        ∂τ/∂q̇ of each state.
    M : numpy.ndarray, shape ``(N, nv, nv)``
        M(q) of each state.

    Raises
    ------
    ValueError
        ... the shared refusals: ``rbd_ros.batch.BATCH_REFUSALS``.

    """
    return _run("rnea_derivatives_batch", "rnea_derivatives", model, _NAMES_RNEA,
                (q, v, a), fext, _matrix_shape(model), 3, data, out)


@documented
def aba_derivatives_batch(model, q, v, tau, fext=None, *, out=None, data=None):
    """
    Return (∂q̈/∂q, ∂q̈/∂q̇, M⁻¹) for N states, each (N, nv, nv).

    Inputs as for :func:`aba_batch`. Entry k of each is that of
    ``rbd_ros.aba_derivatives(model, q[k], v[k], tau[k], fext[k])``. ``out``: as for
    :func:`rnea_derivatives_batch`.

    Parameters
    ----------
    model, q, v, tau, fext : ...
        Shared by the batch calls: ``rbd_ros.batch.BATCH_PARAMETERS``.
    out : tuple of 3 numpy.ndarray, shapes ``(N, nv, nv)``, or None
        Arrays to write into and return (float64, C-contiguous, writeable, sharing no memory
        with an input or another); None (default): new ones.
    data : ...
        Shared by the batch calls: ``rbd_ros.batch.BATCH_PARAMETERS``.

    Returns
    -------
    dqdd_dq : numpy.ndarray, shape ``(N, nv, nv)``
        ∂q̈/∂q of each state, in the tangent space.
    dqdd_dv : numpy.ndarray, shape ``(N, nv, nv)``
        ∂q̈/∂q̇ of each state.
    Minv : numpy.ndarray, shape ``(N, nv, nv)``
        M(q)⁻¹ of each state.

    Raises
    ------
    ValueError
        ... the shared refusals: ``rbd_ros.batch.BATCH_REFUSALS``.

    """
    return _run("aba_derivatives_batch", "aba_derivatives", model, _NAMES_ABA,
                (q, v, tau), fext, _matrix_shape(model), 3, data, out)


@documented
def coriolis_matrix_batch(model, q, v, *, out=None, data=None):
    """
    Return the Coriolis matrices of N states: q (N, nq), v (N, nv) -> (N, nv, nv).

    Entry k is ``rbd_ros.coriolis_matrix(model, q[k], v[k])``.

    Parameters
    ----------
    model, q, v : ...
        Shared by the batch calls: ``rbd_ros.batch.BATCH_PARAMETERS``.
    out : numpy.ndarray, shape ``(N, nv, nv)``, or None
        An array to write into and return (float64, C-contiguous, writeable, sharing no memory
        with an input); None (default): a new one.
    data : ...
        Shared by the batch calls: ``rbd_ros.batch.BATCH_PARAMETERS``.

    Returns
    -------
    C : numpy.ndarray, shape ``(N, nv, nv)``
        Entry k: C(q[k], v[k]).

    Raises
    ------
    ValueError
        ... the shared refusals: ``rbd_ros.batch.BATCH_REFUSALS``.

    """
    return _run("coriolis_matrix_batch", "coriolis_matrix", model, ("q", "v"), (q, v), None,
                _matrix_shape(model), 1, data, out)[0]


@documented
def joint_torque_regressor_batch(model, q, v, a, *, out=None, data=None):
    """
    Return the regressors of N states stacked: q (N, nq), v and a (N, nv) -> (N·nv, 10·nbodies).

    Rows k·nv … (k+1)·nv - 1 are ``joint_torque_regressor(model, q[k], v[k], a[k])`` (the
    stacked Y of identification).

    Parameters
    ----------
    model, q, v, a : ...
        Shared by the batch calls: ``rbd_ros.batch.BATCH_PARAMETERS``.
    out : numpy.ndarray, shape ``(N * nv, 10 * nb)``, or None
        An array to write into and return (float64, C-contiguous, writeable, sharing no memory
        with an input); None (default): a new one.
    data : ...
        Shared by the batch calls: ``rbd_ros.batch.BATCH_PARAMETERS``.

    Returns
    -------
    Y : numpy.ndarray, shape ``(N * nv, 10 * nb)``
        The N regressors stacked (nb = ``model.nbodies``).

    Raises
    ------
    ValueError
        ... the shared refusals: ``rbd_ros.batch.BATCH_REFUSALS``.

    """
    cols = 10 * model.nbodies
    return _run("joint_torque_regressor_batch", "joint_torque_regressor", model,
                _NAMES_RNEA[:3], (q, v, a), None, (model.nv, cols), 1, data, out,
                lambda n: (n * model.nv, cols))[0]
