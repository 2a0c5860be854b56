"""Data, the preallocated workspace of one model, and its per-chunk copies for the batch calls."""
import threading

import numpy as np

from .layout import D_COLS, W_COLS, W_OM, X_COLS


class Frozen:
    """
    Attributes are set once, in ``__init__`` (through ``_set``); rebinding raises.

    The kernels run without bounds checks and trust the sizes of the model's table and of
    the workspace arrays, so letting Python rebind them could reach memory out of bounds.
    """

    __slots__ = ()

    def _set(self, **attributes):
        for name, value in attributes.items():
            object.__setattr__(self, name, value)

    def __setattr__(self, name, value):
        raise AttributeError(f"{type(self).__name__} is immutable: {name!r} cannot be set "
                             "(see its docstring for how to derive a changed one)")

    def __delattr__(self, name):
        raise AttributeError(f"{type(self).__name__} is immutable: {name!r} cannot be deleted")


class Data(Frozen):
    """
    Preallocated workspace of one model; the kernels write into it and allocate nothing.

    A Data serves one call at a time and is not thread-safe: threads that compute on one
    model concurrently each pass their own (``rbd_ros.rnea(model, q, v, a, data=Data(model))``).
    It fits every model of the same sizes (``nbodies``, ``nq``, ``nv``, and ``nq_full``,
    ``nv_full`` of a model with mimic joints), e.g. ``model.with_gravity``;
    a call refuses a Data of another size before any kernel runs. Its arrays cannot be
    rebound. The batch entries run their chunks in per-chunk copies held here
    (:meth:`batch_workspace`), under ``lock``.

    Parameters
    ----------
    model : Model
        The model whose sizes the workspace takes.

    Attributes
    ----------
    nbodies, nv : int
        The sizes it was made for (``nv``: the model's degrees of freedom).
    lock : threading.Lock
        Held by a batch call for its duration.

    """

    def __init__(self, model):
        # the tree's kernels work on every joint (nv_full), the public calls on the model's
        # degrees of freedom (nv); they differ with mimic joints only
        nb, nv, nr = model.nbodies, model.nv_full, model.nv
        body = np.zeros((nb + 1, W_COLS))            # last row: the world
        body[-1, W_OM:W_OM + 9] = np.eye(3).ravel()
        self._set(
            nbodies=nb, nv=nr, sizes=_sizes(model), body=body,
            # inputs standing for "none" (no external force, zero velocity); never written.
            # Writable like any input array: the kernels are compiled for writable arrays,
            # and a read-only one would take the slow converting path on every call.
            no_fext=np.zeros((0, 6)), zeros_v=np.zeros(nr),
            matrix=np.zeros((nv, nv)),               # M, factorized in place (minv_cholesky)
            force_sets=np.zeros((nb, nv, 6)),        # F_i / P_i force and motion sets (minv)
            dof=np.zeros((nv, D_COLS)),              # per-dof columns (derivatives)
            body_matrix=np.zeros((nb + 1, 36)),      # per-body 6×6 (derivatives: B^c)
            stacked=np.zeros((3 * nv + 1, nv)),      # ∂τ/∂q, ∂τ/∂q̇, M and q̈ (ABA derivatives)
            regressor_block=np.zeros((6, 10)),       # one body's 6×10 regressor (regressors)
            all_body=np.zeros((nb + 1, X_COLS)),     # compute_all: forces at a and at q̈
            all_dof=np.zeros((nv, 6)),               # compute_all: dA columns at q̈
            all_stacked=np.zeros((nv, nv)),          # compute_all: ∂ID/∂q at q̈
            # operational space: J, J M⁻¹ and a 6 × 6 factor (at least 6 columns)
            frame_work=np.zeros((3, 6, max(nv, 6))),
            lock=threading.Lock(), _batch=[None])
        # mimic joints (algorithms/coupled.py): the full state, matrices and regressor, and
        # the reduced matrices and vectors; empty without mimic joints
        coupled = model.coupling is not None
        nf, nq, nr = (nv, model.nq_full, nr) if coupled else (0, 0, 0)
        self._set(full_q=np.zeros(nq), full_v=np.zeros((3, nf)),
                  full_matrices=np.zeros((3, nf, nf)), reduced_matrices=np.zeros((3, nr, nr)),
                  reduced_v=np.zeros((3, nr)), full_regressor=np.zeros((nf, 10 * nb * coupled)))

    def fits(self, model):
        """
        Return whether this workspace has the sizes of ``model``.

        Parameters
        ----------
        model : Model
            A model, e.g. one derived from the one the workspace was made for.

        Returns
        -------
        bool
            True if a call on ``model`` may use this workspace.

        """
        return self.sizes == _sizes(model)

    def batch_workspace(self, nchunks):
        """
        Return per-chunk copies of this workspace's arrays for ``nchunks`` chunks (or more).

        Each array gets a leading axis of slots, ``BATCH_SLOT_STRIDE`` per chunk (chunk c
        works in ``body[BATCH_SLOT_STRIDE * c]``, ...; the slots between are never used).
        Made on first use and grown when more chunks are asked for; call it under ``lock``.

        Parameters
        ----------
        nchunks : int
            The number of chunks (threads) a batch call splits its states into.

        Returns
        -------
        object
            The per-chunk arrays as attributes (``body``, ``dof``, ...), ``nchunks`` at least.

        """
        batch = self._batch[0]
        if batch is None or batch.nchunks < nchunks:
            batch = _BatchWorkspace(self, nchunks)
            self._batch[0] = batch
        return batch


# Chunk c of a batch call works in slot BATCH_SLOT_STRIDE * c of each per-chunk array: the
# unused slot between two chunks keeps each thread's rows out of the cache lines that the
# other thread writes (numpy aligns arrays to 16 bytes, not to the 64 of a line, so the
# last row of one chunk and the first of the next could share one; the talos
# rnea_derivatives batch ran at 143,000 states/s on 2 threads with adjacent slots and
# 188,000 with spaced ones, in one run at load 2.4).
BATCH_SLOT_STRIDE = 2


class _BatchWorkspace:
    def __init__(self, data, nchunks):
        def stack(arr):
            slots = BATCH_SLOT_STRIDE * nchunks
            return np.ascontiguousarray(np.repeat(arr[np.newaxis], slots, axis=0))
        self.nchunks = nchunks
        self.body = stack(data.body)                  # world row included (identity placement)
        self.dof = stack(data.dof)
        self.body_matrix = stack(data.body_matrix)
        self.force_sets = stack(data.force_sets)
        self.stacked = stack(data.stacked)
        self.regressor_block = stack(data.regressor_block)
        for name in _COUPLED_SCRATCH:
            setattr(self, name, stack(getattr(data, name)))


_COUPLED_SCRATCH = ("full_q", "full_v", "full_matrices", "reduced_matrices", "reduced_v",
                    "full_regressor")


def _sizes(model):
    """
    Return what a workspace's arrays are sized by: one tuple object per distinct value.

    Interned, so that the public calls accept a Data of the model's sizes in an identity
    test (``data.sizes is model.data.sizes``) instead of a call to :meth:`Data.fits`.
    """
    sizes = (model.nbodies, model.nq, model.nv, model.nq_full, model.nv_full,
             model.coupling is not None)
    return _INTERNED_SIZES.setdefault(sizes, sizes)


_INTERNED_SIZES = {}
