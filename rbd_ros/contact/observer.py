"""
The momentum observer of one model, stepped one sample at a time (the node's tick).

:class:`MomentumObserver` holds the observer's settings and state, turns ROS stamps into
seconds, admits each stamp once, and steps the compiled kernel
(``algorithms/momentum_observer.py``, through ``observer_kernel.ObserverKernel``) over one
sample, or over N of them through ``samples.run`` (the replay, ``detection.observe``): the
same kernel, the same numbers. ``detection`` gives its name with the rest of contact
awareness.
"""
import math

import numpy as np

from .. import _checks
from . import samples
from .isolation import per_dof
from .observer_kernel import ObserverKernel, joint_table
from .samples import bounded


class MomentumObserver:
    """
    The momentum observer of one model, stepped one sample at a time.

    Its output r (nv, N·m) follows the external joint torques τ_ext as a first-order filter,
    ṙ = K (τ_ext − r) (module docstring). :meth:`step` returns r; :attr:`restarted` says
    whether that sample (re)started it (then r = 0), :attr:`tracking` whether r is an
    estimate (not a sample of the restart: the observer needs three to give one).

    Each stamp is used once: a sample whose stamp is not after the newest one given since
    the start or :meth:`reset` (a repeated, late or quantized stamp) is skipped, status
    STAMP_NOT_AFTER, the state unchanged, unless it is more than ``max_gap`` before it (a
    clock set back: it restarts the observer). A sample whose ``|r|`` (or contact wrench) would
    exceed R_LIMIT or not be finite resets the observer instead (status OVERFLOW): the state
    never keeps a non-finite number. ``frame``: a
    link (``model.link_frames``) whose contact wrench (:func:`contact_wrench`) each step
    computes too, in the same compiled call: :attr:`wrench` and :attr:`wrench_refusal`
    (None when it was had); :meth:`set_frame` changes it.

    Times are float seconds; :meth:`seconds` turns ROS stamps (sec, nanosec) into them,
    relative to the first stamp it saw since the start or :meth:`reset`: an absolute stamp
    (~1.7e9 s) has a float spacing of 2.4e-7 s, which would change r by ~3e-4 N·m at 1 kHz.

    Parameters
    ----------
    model : Model
        The robot.
    gain : float or array_like, shape (nv,)
        K, 1/s (finite, > 0): the bandwidth of r; one number or one per dof.
    joint_parameters : Actuation or JointParameters, optional
        The armature, friction and offsets the robot has (``rbd_ros.actuation``); None:
        none.
    max_gap : float, optional
        Seconds (> 0): a sample more than that after the last one restarts the observer;
        default inf.
    frame : str, optional
        A link of ``model.link_frames`` whose contact wrench each step computes; None: none.

    Attributes
    ----------
    restarted : bool
        Whether the last step (re)started the observer (r = 0).
    tracking : bool
        Whether the last r is an estimate.
    wrench : ndarray, shape (6,) or None
        The last contact wrench at ``frame`` (force N, torque N·m), None without a frame or
        when refused.
    wrench_refusal : str or None
        Why the last wrench was refused (a rank-deficient Jacobian), else None.

    Raises
    ------
    ValueError
        For ``max_gap`` <= 0, a bad ``gain``, ``joint_parameters`` of other joints, or a
        ``frame`` the model does not have.

    """

    def __init__(self, model, gain, joint_parameters=None, max_gap=np.inf, frame=None):
        self.model = model
        joint, eps = joint_table(model, joint_parameters)
        max_gap = _checks.plain_number(max_gap, "max_gap")
        if not max_gap > 0:
            raise ValueError(f"max_gap must be > 0 s, got {max_gap!r}")
        self.settings = np.empty(2 + model.nv)
        self.settings[0], self.settings[1] = eps, max_gap
        self.set_gain(gain)
        # the kernel's arrays, written in place only, never replaced: its argument tuples of
        # one sample are built from them once
        self.kernel = ObserverKernel(model, joint, self.settings)
        self.state = self.kernel.state
        self.restarted = self.tracking = False
        self.newest = -math.inf
        self.origin = None            # the stamp (sec, nanosec) that :meth:`seconds` counts from
        self.wrench, self.wrench_refusal = None, None
        self.set_frame(frame)

    def set_frame(self, frame):
        """
        Set the link whose contact wrench each step computes.

        Parameters
        ----------
        frame : str or None
            A link of ``model.link_frames``; None or "": none.

        Returns
        -------
        None

        Raises
        ------
        ValueError
            For a link the model does not have.

        """
        self.kernel.set_frame(frame or None)
        self.frame = self.kernel.frame_name

    @property
    def newest(self):
        """Return the newest stamp stepped, in s (a float); a stamp not after it is skipped."""
        return float(self.kernel.newest[0])

    @newest.setter
    def newest(self, value):
        # kept in the kernel's array: observer_tick_kernel admits stamps and writes it
        self.kernel.newest[0] = value

    @property
    def gain(self):
        """K per dof (1/s), shape (nv,); a copy."""
        return self.settings[2:].copy()

    def set_gain(self, gain):
        """
        Set the gain K; the state is kept.

        Parameters
        ----------
        gain : float or array_like, shape (nv,)
            K, 1/s: one number or one per dof, finite and > 0.

        Returns
        -------
        None

        Raises
        ------
        ValueError
            For a gain that is not finite and > 0, or of another size.

        """
        self.settings[2:] = per_dof(self.model, gain, "gain")

    def reset(self):
        """
        Forget the state: the next sample restarts the observer.

        The origin of :meth:`seconds` and the newest stamp are forgotten too.

        Returns
        -------
        None

        """
        self.state[:] = 0.0
        self.origin = None
        self.newest = -math.inf

    def seconds(self, sec, nanosec):
        """
        Return the stamps (sec, nanosec: integers or integer arrays) as float seconds.

        Relative to the first stamp seen since the start or :meth:`reset` (it becomes the
        origin): the difference is taken in integer nanoseconds, then converted once, so
        the same stamps give the same floats one at a time (the node) or all at once (the
        replay), and shifting every stamp by a constant changes nothing.

        Parameters
        ----------
        sec : int or array_like of int
            The stamps' seconds (``builtin_interfaces/Time.sec``).
        nanosec : int or array_like of int
            Their nanoseconds, same shape.

        Returns
        -------
        float or ndarray
            Seconds since the origin: a float for one stamp of Python integers after the
            first, else an array the shape of ``sec``.

        """
        if type(sec) is int and type(nanosec) is int and self.origin is not None:
            # one stamp (the node's tick): int64 arithmetic, one conversion, as below; a
            # Python float, the same double as numpy's product, made without numpy's scalar
            # machinery (cold at each tick)
            elapsed = (sec - self.origin[0]) * 1_000_000_000 + (nanosec - self.origin[1])
            if -2 ** 63 <= elapsed < 2 ** 63:
                return float(elapsed) * 1e-9
        sec, nanosec = np.asarray(sec, np.int64), np.asarray(nanosec, np.int64)
        if self.origin is None:
            if sec.size == 0:
                return np.zeros(sec.shape)
            self.origin = (int(sec.reshape(-1)[0]), int(nanosec.reshape(-1)[0]))
        elapsed = (sec - self.origin[0]) * 1_000_000_000 + (nanosec - self.origin[1])
        return elapsed.astype(np.float64) * 1e-9

    def step(self, t, q, v, tau, fext=None):
        """
        Step the observer over one sample and return r.

        Parameters
        ----------
        t : float
            The sample's time, s (:meth:`seconds` turns a ROS stamp into it).
        q : array_like, shape (nq,)
            Configuration (rad or m).
        v : array_like, shape (nv,)
            Velocity (rad/s or m/s).
        tau : array_like, shape (nv,)
            Measured joint efforts (N·m or N).
        fext : array_like, shape (nbodies, 6), optional
            Measured external wrenches per body (force then torque, body frame), taken out
            of r; None: none.

        Returns
        -------
        ndarray, shape (nv,)
            r, the estimate of the external joint torques (N·m or N).

        Raises
        ------
        ValueError
            For a bad sample, naming the argument; the state is then unchanged.
        SampleSkipped
            For a stamp not after the newest (the state unchanged) or a sample that
            overflows the state (then reset); a ValueError too.

        """
        no_fext = self.kernel.no_fext
        fext = no_fext if fext is None else _checks.matrix(fext, "fext", 2)[None]
        inputs = self.kernel.inputs
        if _fits(q, inputs[1]) and _fits(v, inputs[2]) and _fits(tau, inputs[3]) and \
                isinstance(t, (float, int, np.floating)) and not isinstance(t, bool):
            inputs[0][0], inputs[1][0], inputs[2][0], inputs[3][0] = t, q, v, tau  # no copy made
            arrays = inputs
        else:                        # anything else: converted (and named when it cannot be)
            arrays = (_checks.matrix([t], "t", 1), _row(q, "q"), _row(v, "v"),
                      _row(tau, "tau"))
        arguments = (self.kernel.step_arguments if fext is no_fext and arrays is inputs
                     else None)
        return self._advance(arrays, fext, arguments).copy()

    def bind(self, q, v, tau):
        """
        Make :meth:`step_bound` step over ``q``, ``v`` and ``tau`` as they are at its call.

        The node's robot refills its arrays each tick: bound, the kernel reads them where
        they are, with no copy.

        Parameters
        ----------
        q : ndarray, shape (nq,)
            float64, C-contiguous: the configuration each step reads.
        v : ndarray, shape (nv,)
            float64, C-contiguous: the velocity.
        tau : ndarray, shape (nv,)
            float64, C-contiguous: the measured efforts.

        Returns
        -------
        None

        Raises
        ------
        ValueError
            For an array of another dtype or size, or not C-contiguous.

        """
        for x, row, name in zip((q, v, tau), self.kernel.inputs[1:], ("q", "v", "tau")):
            _checks.bound_vector(x, name, row.shape[1])
        self.kernel.bind(q, v, tau)

    def step_bound(self, t, fext=None):
        """
        Step as :meth:`step` at ``t`` over the arrays given to :meth:`bind`.

        Parameters
        ----------
        t : float
            The sample's time, s.
        fext : array_like, shape (nbodies, 6), optional
            Measured external wrenches per body; None: none.

        Returns
        -------
        ndarray, shape (nv,)
            r: a view, overwritten by the next step.

        Raises
        ------
        RuntimeError
            Before :meth:`bind`.
        ValueError
            For a bad sample, as :meth:`step`.
        SampleSkipped
            As :meth:`step`.

        """
        arrays = self.kernel.bound
        if arrays is None:
            raise RuntimeError("MomentumObserver.step_bound before bind")
        arrays[0][0] = t
        if fext is None:
            return self._advance(arrays, self.kernel.no_fext, self.kernel.bound_arguments)
        return self._advance(arrays, _checks.matrix(fext, "fext", 2)[None], None)

    def _advance(self, arrays, fext, arguments):
        # one sample (t, q, v, tau rows of one), through the prepared ``arguments`` if any;
        # the node's tick does the same in one compiled call (``observer_tick.step``)
        r, restarted, status, w, rank = self.kernel.one
        stamp = arrays[0][0]
        if not samples.admitted(self, stamp):
            raise samples.stamp_skipped(stamp, self.newest)
        if arguments is not None:                  # sizes checked by _fits or bind
            self.kernel.step_prepared(arguments)
        else:
            self.kernel.step_rows(*arrays, fext, r, restarted, status, w, rank)
        if status[0]:
            raise samples.refusal(self, arrays, fext)
        self.newest = stamp               # stepped: its stamp is used (admitted: the newest)
        r_row, w_row = self.kernel.rows
        if not bounded(r_row, w_row if self.frame is not None else None):
            raise samples.overflow_reset(self, arrays[3][0])
        self.restarted = bool(restarted[0])
        self.tracking = self.state[0] == 2.0
        if self.frame is not None:
            samples.take_wrench(self, samples.wrench_refused(self))
        return r_row

    def run(self, t, q, v, tau, fext=None):
        """
        Step the observer over N samples, as :meth:`step` one at a time.

        Parameters
        ----------
        t : array_like, shape (N,)
            Times, s.
        q : array_like, shape (N, nq)
            Configurations.
        v : array_like, shape (N, nv)
            Velocities.
        tau : array_like, shape (N, nv)
            Measured joint efforts (N·m or N).
        fext : array_like, shape (N, nbodies, 6), optional
            Measured external wrenches; None: none.

        Returns
        -------
        r : ndarray, shape (N, nv)
            The estimates (that of the sample before where a sample is skipped).
        restarted : ndarray of bool, shape (N,)
            Where a sample (re)started the observer.
        status : ndarray of int, shape (N,)
            0, or why the sample was not stepped: > 0 refused (``rbd_ros._checks``),
            STAMP_NOT_AFTER (-1) or OVERFLOW (-2). :attr:`tracking` is then (N,), where r is
            an estimate.

        Raises
        ------
        ValueError
            If the arrays' numbers of samples disagree, or a row is not the model's size.

        """
        return self.run_with_wrench(t, q, v, tau, fext)[:3]

    def run_with_wrench(self, t, q, v, tau, fext=None):
        """
        Step the observer over N samples; return :meth:`run`'s results and the wrenches.

        Parameters
        ----------
        t, q, v, tau, fext : array_like
            As for :meth:`run`.

        Returns
        -------
        r, restarted, status : ndarray
            As :meth:`run` returns them.
        wrench : ndarray, shape (N, 6)
            The contact wrench at ``frame`` (zeros where none); (0, 6) without a frame.
        rank : ndarray of int, shape (N,)
            Its rank status (:func:`wrench_refusal`; -1: the sample refused); (0,) without a
            frame.

        Raises
        ------
        ValueError
            If the arrays' numbers of samples disagree, or a row is not the model's size.

        """
        return samples.run(self, t, q, v, tau, fext)


def _fits(x, row):
    """Whether ``x`` is a float64 vector of ``row``'s length (copied without conversion)."""
    return isinstance(x, np.ndarray) and x.dtype == np.float64 and x.shape == row.shape[1:]


def _row(x, name):
    return _checks.matrix(x, name, 1)[None]
