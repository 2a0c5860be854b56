"""
Nothing half-written under a final name: temporary names, clean stops, short quotes.

Every output of a replay (the bag, the report directory) is written as
``PARENT/.NAME.partial-XXXXXXXX/NAME`` (:class:`Staged`), in the parent directory of its final
name, and renamed to ``PARENT/NAME`` only when every output is complete (:func:`commit`); on
an error or an interrupt the temporaries are removed (:func:`discard`). A run killed
outright (SIGKILL, power loss) may leave a ``.NAME.partial-*`` directory behind, never a
half-written ``NAME``, and a new run does not mind it.

SIGINT and SIGTERM: under :data:`GUARD` (``with GUARD:``, what ``rbd_replay`` does) they
raise :class:`Interrupted` in the main thread, so that the replay unwinds, removes its
temporaries and stops its node, and the command exits with 128 + the signal's number (130,
143). A signal that arrives while the outputs are being created, renamed into place or
cleaned up (``GUARD.holding()``) is held until that is done.
"""
import contextlib
import os
import shutil
import signal
import tempfile
from pathlib import Path

from .errors import ReplayError, excerpt, shorten

SIGNALS = (signal.SIGINT, signal.SIGTERM)


class Interrupted(BaseException):
    """SIGINT or SIGTERM arrived: the replay stops (not an error: a BaseException)."""

    def __init__(self, signum):
        self.signum = int(signum)
        super().__init__(signal.Signals(self.signum).name)

    @property
    def status(self):
        """The exit status of a process stopped by this signal, as a shell reports it."""
        return 128 + self.signum


class SignalGuard:
    """
    SIGINT/SIGTERM handlers that raise :class:`Interrupted`, except while held.

    ``with GUARD:`` installs them (main thread; a signal its process was started ignoring,
    such as SIGINT under ``nohup``, stays ignored) and restores the previous handlers on
    exit. :meth:`holding` defers signals during a critical section; :meth:`disarm` makes later
    signals no-ops (the outputs are in place). Without ``with GUARD:`` nothing is installed:
    a Python caller of ``replay`` gets Python's KeyboardInterrupt, with the same clean-up.
    """

    def __init__(self):
        self.armed = False
        self.held = 0
        self.pending = None
        self._previous = {}

    def __enter__(self):
        for signum in SIGNALS:
            previous = signal.getsignal(signum)
            if previous is not signal.SIG_IGN:
                self._previous[signum] = signal.signal(signum, self._handler)
        self.armed, self.held, self.pending = True, 0, None
        return self

    def __exit__(self, *exc):
        self.armed = False
        for signum, previous in self._previous.items():
            signal.signal(signum, previous)
        self._previous = {}
        return False

    def _handler(self, signum, frame):
        if self.armed and not self.held:
            self.pending = None
            raise Interrupted(signum)
        if self.pending is None:
            self.pending = signum

    @contextlib.contextmanager
    def holding(self, raise_pending=True):
        """Defer SIGINT/SIGTERM in the block; then raise one that came (``raise_pending``)."""
        self.held += 1
        try:
            yield
        finally:
            self.held -= 1
        if raise_pending and self.armed and not self.held and self.pending is not None:
            signum, self.pending = self.pending, None
            raise Interrupted(signum)

    def disarm(self):
        """Ignore the signals from now on (until the next ``with``): nothing left to stop."""
        self.armed = False


GUARD = SignalGuard()


class Staged:
    """
    One output (a directory) written under a temporary name next to its final name.

    ``path``: where to write it (``PARENT/.NAME.partial-XXXXXXXX/NAME``, not created);
    ``final``: ``PARENT/NAME``. ReplayError when the final name exists or the parent cannot
    be written; ``what`` names the output in messages ("output bag", "report directory").
    """

    def __init__(self, final, what, option):
        self.final, self.what = Path(final), what
        if os.path.lexists(self.final):
            raise ReplayError(f"{what} {excerpt(self.final)} exists: remove it or choose "
                              f"another {option}")
        parent = self.final.parent
        existing = next((p for p in (parent, *parent.parents) if os.path.exists(p)), parent)
        if not os.path.isdir(existing):
            raise ReplayError(f"cannot write the {what} {excerpt(self.final)} ({option}): "
                              f"{excerpt(existing)} is not a directory")
        try:
            os.makedirs(parent, exist_ok=True)
            self.temporary = Path(tempfile.mkdtemp(prefix=f".{self.final.name}.partial-",
                                                   dir=parent))
        except OSError as exc:
            raise ReplayError(f"cannot write the {what} {excerpt(self.final)} ({option}): "
                              f"{exc.strerror or exc}") from None
        self.path = self.temporary / self.final.name

    def commit(self):
        """Rename the complete output to its final name (ReplayError if that is taken)."""
        if os.path.lexists(self.final):
            raise ReplayError(f"{self.what} {excerpt(self.final)} appeared while the replay "
                              f"ran: the result is not kept")
        os.rename(self.path, self.final)

    def discard(self):
        """Remove the temporary directory and everything in it."""
        shutil.rmtree(self.temporary, ignore_errors=True)


def stage(outputs):
    """
    Return a :class:`Staged` per ``(final path, what, option)`` of ``outputs``.

    Created under ``GUARD.holding()``; ReplayError (and nothing left behind) when a final
    name exists, cannot be written or two outputs overlap.
    """
    finals = [Path(os.path.abspath(final)) for final, _, _ in outputs]
    for i, a in enumerate(finals):
        for b in finals[i + 1:]:
            if a == b or a in b.parents or b in a.parents:
                raise ReplayError(f"{outputs[0][1]} {excerpt(finals[0])} and "
                                  f"{outputs[1][1]} {excerpt(finals[1])} overlap: choose "
                                  "separate paths")
    staged = []
    with GUARD.holding():
        try:
            for final, what, option in outputs:
                staged.append(Staged(final, what, option))
        except BaseException:
            discard(staged)
            raise
    return staged


def commit(staged):
    """
    Rename every output into place, or none (ReplayError); then ignore SIGINT/SIGTERM.

    Signals are held meanwhile; when one came, the outputs are complete and kept.
    """
    with GUARD.holding(raise_pending=False):
        done = []
        try:
            for s in staged:
                s.commit()
                done.append(s)
        except (OSError, ReplayError) as exc:
            for s in reversed(done):
                os.rename(s.final, s.path)
            discard(staged)
            if isinstance(exc, ReplayError):
                raise
            raise ReplayError(f"cannot rename the outputs into place: {shorten(exc)}") from None
        GUARD.disarm()
        discard(staged)                       # the emptied temporary directories


def discard(staged):
    """Remove the temporaries of ``staged`` (signals held: the clean-up is not cut short)."""
    with GUARD.holding(raise_pending=False):
        for s in staged:
            s.discard()
