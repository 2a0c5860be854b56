"""
Kernels generated for one model: the call floor of small fixed-base arms, cut.

On a 6-9-dof arm the generic kernels are a fraction of a call's cost; the rest is numba's
dispatch (30-50 ns per array argument, more for the read-only model table) and the
wrapper. A kernel written for one model takes only the state arrays and does only the
arithmetic that depends on them (``generate``). Usage::

    rbd_ros.specialize(model)               # starts the work in the background, returns at once
    rbd_ros.specialize(model, wait=True)    # blocks until done; True if the kernels are in use
    rbd_ros.specialized.status(model)       # state, reason, seconds, cache bytes

From then on ``rbd_ros.rnea`` (without ``fext``), ``nonlinear_effects``, ``gravity_torques``,
``crba`` and ``minv``, called without ``data=``, run the model's own kernels (``kernels``);
results agree with the generic kernels to ~1e-14 relative (M⁻¹ in body frames is the more
accurate: 3e-16 from inv(M) where the generic world-frame one has 1e-14 to 6e-14) and
errors on bad inputs are the same. Until they are
ready, and for good if anything fails (the reason is logged on the ``rbd_ros.specialized``
logger, counted in ``COUNTS`` and kept in the status), the generic kernels serve.

Only fixed-base models of revolute, continuous and prismatic joints without mimic coupling
are specialized; any other model is refused with the reason (state ``"refused"``). A model
derived by ``with_gravity``, ``with_payload``... has another table, hence its own kernels:
it is not specialized unless ``specialize`` is called on it.

The first time for a model the kernels are compiled in a child process (seconds, holding
that process's GIL, not the caller's) into numba's disk cache (``loader``); any later
process loads them from the cache in milliseconds.
"""
import logging
import threading
import time

from . import loader
from .generate import refusal

LOG = logging.getLogger(__name__)

# how many specializations ended in each state, in this process
COUNTS = {"ready": 0, "failed": 0, "refused": 0}
_LOCK = threading.RLock()


class Status:
    """
    The specialization of one model, as :func:`status` returns it.

    Attributes
    ----------
    state : str
        "pending", "ready", "failed" or "refused".
    reason : str or None
        Why it failed or was refused, else None.
    path : str or None
        The generated source file.
    compiled : bool
        Whether this process had it compiled (False when it came from the cache).
    compile_s, load_s : float
        Seconds of the child's compile and of loading from the cache.
    cache_bytes : int
        The generated file's and numba cache's size.
    done : threading.Event
        Set when the state is final.

    """

    def __init__(self):
        self.state, self.reason, self.path, self.compiled = "pending", None, None, False
        self.compile_s = self.load_s = 0.0
        self.cache_bytes = 0
        self.done = threading.Event()

    def __repr__(self):
        why = f": {self.reason}" if self.reason else ""
        return f"<rbd_ros.specialized.Status {self.state}{why}>"


def status(model):
    """
    Return the state of a model's specialization.

    Parameters
    ----------
    model : Model
        A model :func:`specialize` may have been called on.

    Returns
    -------
    Status or None
        Its :class:`Status` (state, reason, timings, cache size), None if never asked.

    """
    return model._specialized.status


def specialize(model, wait=False, timeout=None):
    """
    Start generating and compiling kernels for one model; return whether they are in use.

    Specialized kernels are written for one model's tree (module docstring): from then on
    ``rnea`` (without ``fext``), ``nonlinear_effects``, ``gravity_torques``, ``crba`` and
    ``minv`` on this model run them, with the same results. It is done once per model, in
    a background thread (the compile in a child process); until ready, the generic kernels
    serve.

    Parameters
    ----------
    model : Model
        A fixed-base model of revolute, continuous and prismatic joints without mimic
        coupling (any other is refused, with the reason in :func:`status`).
    wait : bool, optional
        Block until they are ready, have failed or are refused.
    timeout : float, optional
        With ``wait``, the most seconds to block (None: no limit).

    Returns
    -------
    bool
        Whether the model's own kernels are in use now.

    Notes
    -----
    It never raises for a model that cannot be specialized: the generic kernels keep
    serving, and :func:`status` says why.

    """
    slot = model._specialized
    with _LOCK:
        job = slot.status
        if job is None:
            job = slot.status = Status()
            why = refusal(model)
            if why:
                _finish(job, "refused", why)
            else:
                threading.Thread(target=_run, args=(model, job), daemon=True,
                                 name="rbd_ros.specialize").start()
    if wait:
        job.done.wait(timeout)
    return job.state == "ready"


def _run(model, job):
    """Generate, compile if not cached, load, and install the kernels in the model's slot."""
    try:
        job.path, _ = loader.write_source(model)
        started = time.perf_counter()
        kernels = loader.load_cached(job.path)
        if kernels is None:
            loader.compile_in_child(job.path)
            job.compiled, job.compile_s = True, time.perf_counter() - started
            started = time.perf_counter()
            kernels = loader.load_cached(job.path)
            if kernels is None:
                raise RuntimeError("compiled, but the kernels are not in numba's cache")
        job.load_s = time.perf_counter() - started
        job.cache_bytes = loader.cache_bytes(job.path)
    except Exception as exc:          # noqa: B902  (any failure leaves the generic path)
        _finish(job, "failed", f"{type(exc).__name__}: {exc}")
        return
    slot = model._specialized
    for name, kernel in kernels.items():     # each attribute set whole: a reader sees the
        setattr(slot, name, kernel)          # generic or the specialized kernel, both right
    _finish(job, "ready", None)


def _finish(job, state, reason):
    job.state, job.reason = state, reason
    with _LOCK:
        COUNTS[state] += 1
    if state == "failed":
        LOG.warning("rbd_ros: specialized kernels not in use (the generic ones serve): %s",
                    reason)
    elif state == "refused":
        LOG.info("rbd_ros: model not specialized: %s", reason)
    job.done.set()
