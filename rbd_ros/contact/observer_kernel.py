"""
The momentum observer's compiled call for one model: its arrays, and the raw step over rows.

:class:`ObserverKernel` owns what ``momentum_observer_kernel`` reads and writes besides the
samples (``algorithms/momentum_observer.py``): the joint table, the settings (ε, max_gap,
K), the state, a workspace of its own and its scratch, and the results of one sample. The
node steps one sample per tick: its argument tuples are built once, over arrays refilled in
place (:meth:`ObserverKernel.prepare`), so a tick calls the kernel's entry point with no
conversion. What a step means (stamps, overflow, the wrench's refusal) is
``observer.MomentumObserver``'s; the runs over N samples are ``samples``'.
"""
import numpy as np

from ..actuation.dynamics import Actuation
from ..actuation.joint_parameters import JointParameters
from ..algorithms.entries import first_entry
from ..algorithms.momentum_observer import momentum_observer_kernel
from ..model import Data
from ..model.model import link_table


def joint_table(model, joint_parameters):
    """Return ((4, nv) armature, viscous, Coulomb, offset; ε) of the dofs (zeros: none)."""
    if joint_parameters is None:
        return np.zeros((4, model.nv)), 0.01
    act = joint_parameters
    if isinstance(act, JointParameters):
        act = Actuation(act, model.nv_base)
    if not isinstance(act, Actuation) or act.armature.shape != (model.nv,):
        raise ValueError("joint_parameters must be rbd_ros.actuation.dynamics.Actuation or "
                         "joint_friction.JointParameters of this model's joints")
    return (np.array([act.armature, act.viscous, act.coulomb, act.offset], np.float64),
            float(act.epsilon))


class ObserverKernel:
    """
    The arrays of one model's observer kernel, and its calls.

    Parameters
    ----------
    model : Model
        The robot.
    joint : ndarray, shape (4, nv)
        Armature, viscous, Coulomb, offset per dof (:func:`joint_table`).
    settings : ndarray, shape (2 + nv,)
        ε, max_gap, K per dof: read by each call, written in place by the observer.

    Attributes
    ----------
    state : ndarray, shape (3 + 5 nv,)
        The observer's state (``momentum_observer.py``'s layout).
    one : tuple of ndarray
        One sample's results: r (1, nv), restarted (1,), status (1,), wrench (1, 6), rank
        (1,).
    rows : tuple of ndarray
        Views of its r (nv,) and wrench (6,), made once.
    inputs : tuple of ndarray
        One sample's rows: t (1,), q (1, nq), v (1, nv), tau (1, nv), filled by the caller.
    no_fext : ndarray, shape (1, 0, 6)
        One sample without measured wrenches.
    frame : tuple
        (body, placement (12,)) of the contact wrench's frame (body -1: none, or a link
        welded to the world, whose wrench is refused every step).
    newest : ndarray, shape (1,)
        The newest stamp stepped (``MomentumObserver.newest``), read and written by the node's
        one compiled tick (``observer_tick``).

    """

    def __init__(self, model, joint, settings):
        self.model, self.joint, self.settings = model, joint, settings
        data = Data(model)          # its own workspace: no call races it
        nvf = model.nv_full
        self.workspace = (model.packed, model.coupling_table, data.body, data.full_q,
                          np.zeros((4, nvf)))
        self.state = np.zeros(3 + 5 * model.nv)
        self.scratch = np.zeros(5 * model.nv)
        self.jacobian = (np.zeros((6, model.nv)), np.zeros((model.nv + 2, 7)))
        self.one = (np.empty((1, model.nv)), np.zeros(1, np.int64), np.zeros(1, np.int64),
                    np.zeros((1, 6)), np.zeros(1, np.int64))
        self.rows = (self.one[0][0], self.one[3][0])     # r (nv,) and wrench (6,): views
        self.no_fext = np.zeros((1, 0, 6))
        self.inputs = (np.empty(1), np.empty((1, model.nq)), np.empty((1, model.nv)),
                       np.empty((1, model.nv)))
        self.bound = None             # :meth:`bind`'s rows (its t, q, v, tau), when bound
        self.newest = np.full(1, -np.inf)    # the newest stamp stepped (``observer.newest``)
        self._isolating = (None, None, None)     # :meth:`isolating_arguments`' last
        self.frame, self.frame_name = (-1, np.zeros(12)), None
        self.prepare()

    def set_frame(self, frame):
        """
        Set the link whose contact wrench each call computes.

        Parameters
        ----------
        frame : str or None
            A link of ``model.link_frames``; None: none.

        Returns
        -------
        None

        Raises
        ------
        ValueError
            For a link the model does not have.

        """
        if frame is None:
            self.frame = (-1, np.zeros(12))
        else:                                     # refused before anything changes
            bodies, placements = link_table(self.model, [frame])
            self.frame = (int(bodies[0]), placements[0])
        self.frame_name = frame
        self.prepare()

    def bind(self, q, v, tau):
        """
        Make the bound call read ``q``, ``v`` and ``tau`` where they are.

        Parameters
        ----------
        q, v, tau : ndarray
            float64 C vectors of nq, nv and nv (the caller checked them).

        Returns
        -------
        None

        """
        self.bound = (np.empty(1), q[None], v[None], tau[None])
        self.prepare()

    def prepare(self):
        """Build the argument tuples of one sample without fext (inputs', then bound rows)."""
        r, restarted, status, w, rank = self.one
        if self.frame_name is None:
            w, rank = w[:0], rank[:0]
        self.step_arguments, self.bound_arguments = (
            (*self.workspace, self.joint, self.settings, self.state, self.scratch, *rows,
             self.no_fext, *self.frame, *self.jacobian, r, w, rank, restarted, status)
            for rows in (self.inputs, self.bound or self.inputs))

    def isolating_arguments(self, arrays):
        """
        Return ``observer_tick_kernel``'s arguments: the bound call's, ``arrays``, newest.

        ``arrays``: a ``CollisionState``'s ``kernel_arrays`` (thresholds, depths, over,
        peak). The tuple is kept while neither they nor the bound call's arguments are
        replaced (a new frame, binding or thresholds build it anew).
        """
        bound, kept, arguments = self._isolating
        if bound is self.bound_arguments and kept is arrays:
            return arguments
        arguments = self.bound_arguments + arrays + (self.newest,)
        self._isolating = (self.bound_arguments, arrays, arguments)
        return arguments

    def step_prepared(self, arguments):
        """
        Step one sample through a prepared tuple (:meth:`prepare`) by the entry point.

        Parameters
        ----------
        arguments : tuple
            :attr:`step_arguments` or :attr:`bound_arguments`.

        Returns
        -------
        None

        Raises
        ------
        ValueError
            If the contact frame does not fit the model.

        """
        if _observer_entry(*arguments) < 0:
            raise self.frame_misfit()

    def step_rows(self, t, q, v, tau, fext, r, restarted, status, w, rank):
        """
        Step the kernel over the samples given, writing its results into the arrays given.

        The raw step that ``MomentumObserver.step`` and ``rbd_ros.contact.samples.run`` make
        on the samples they admit: it neither tests the stamps nor resets the state where
        ``|r|`` would overflow; those are the caller's. Rows of the wrong width, or an fext
        of the wrong shape, are refused for every sample (its status, r held at its last
        value, ``restarted`` not written).

        Parameters
        ----------
        t : ndarray, shape (N,)
            Times, s.
        q, v, tau : ndarray
            Configurations (N, nq), velocities and measured efforts (N, nv).
        fext : ndarray, shape (N, nbodies, 6) or (N, 0, 6)
            Measured external wrenches, or none.
        r : ndarray, shape (N, nv)
            Written: the estimates.
        restarted, status : ndarray of int, shape (N,)
            Written: where a sample (re)started the observer (not on a refusal); each
            sample's status.
        w, rank : ndarray
            Written: the contact wrenches (N, 6) and their rank statuses (N,); (0, 6) and
            (0,) without a frame.

        Returns
        -------
        None

        Raises
        ------
        ValueError
            If the contact frame does not fit the model.

        """
        nq, nv = self.model.nq, self.model.nv
        last_r = self.state[3 + 3 * nv:3 + 4 * nv]
        if q.shape[1] != nq or v.shape[1] != nv or tau.shape[1] != nv:
            bad = next(k for k, (x, n) in enumerate(((q, nq), (v, nv), (tau, nv)))
                       if x.shape[1] != n)
            status[:], r[:], rank[:] = (bad + 1) * 4 + 1, last_r, -1
            return
        if fext.shape[1] not in (0, self.model.nbodies) or fext.shape[2] != 6:
            status[:], r[:], rank[:] = 4 * 4 + 1, last_r, -1
            return
        if self.frame_name is None:
            w, rank = w[:0], rank[:0]
        if momentum_observer_kernel(*self.workspace, self.joint, self.settings, self.state,
                                    self.scratch, t, q, v, tau, fext, *self.frame,
                                    *self.jacobian, r, w, rank, restarted, status) < 0:
            raise self.frame_misfit()

    def frame_misfit(self):
        """Return the ValueError of a kernel that found the contact frame not the model's."""
        return ValueError(f"the contact frame {self.frame_name!r} does not fit the model")


_observer_entry = first_entry(momentum_observer_kernel, globals(), "_observer_entry")
