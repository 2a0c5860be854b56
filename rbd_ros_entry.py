"""
Console entry of ``dynamics_node``: Ctrl-C and SIGTERM are a clean stop from the first instant.

``import rbd_ros`` loads numba and the compiled kernels (a second or two; minutes on the
first run after an install). Python's default SIGINT handler raises KeyboardInterrupt
wherever the import is: a traceback, or, inside one of llvmlite's ctypes callbacks, an
exception that is printed and dropped, and the node starts and runs on as if never
interrupted. This module sits outside the ``rbd_ros`` package so that it runs before that
import: the handler it installs records the signal, interrupts what runs once, and the
entry exits quietly (status 0, as a stop of the running node does).

Once the executor spins (:func:`spinning`), the handler only records the signal: callbacks
then run inside rclpy's C++ code, and an exception raised there by a signal handler crosses
pybind11 and aborts the process ("terminate called after throwing an instance of
'pybind11::error_already_set'"). The spin loop polls the record instead.

The kernels compile at their first use, not at import: the node says so in its log when
its first robot description's warm-up compiles them (``rbd_ros.node.compile_notice``).
"""
import signal
import sys

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
_stop = []                   # the signals received, in order
_interrupt = [True]          # whether the first signal raises KeyboardInterrupt (start-up)


def _on_stop_signal(signum, frame):
    _stop.append(signum)
    # the first one interrupts (during start-up); later ones leave the clean-up be
    if len(_stop) == 1 and _interrupt[0]:
        raise KeyboardInterrupt


def ignore_stop_signals():
    """
    Ignore SIGINT and SIGTERM from now on: the process is on its way out.

    ``ros2 launch`` sends the node a SIGINT of its own after the terminal's: arriving while
    Python finalizes (which puts back the default handlers), it killed the process
    ("process has died ... exit code -2"). An ignored signal stays ignored there.
    """
    for signum in STOP_SIGNALS:
        signal.signal(signum, signal.SIG_IGN)


def spinning():
    """Say that the executor spins: from now on a stop signal is only recorded."""
    _interrupt[0] = False


def _unraisable(hook):
    def quiet(unraisable):
        # a KeyboardInterrupt raised inside a ctypes callback cannot propagate: Python
        # prints it with a traceback and drops it; the stop is recorded in _stop anyway
        if _stop and isinstance(unraisable.exc_value, KeyboardInterrupt):
            return
        # an interrupt inside the constructor of one of llvmlite's objects (numba compiling)
        # leaves it half-built, and its __del__ then fails ("... has no attribute
        # '_as_parameter_'"): a consequence of the stop, not an error of its own
        if _stop and _interrupt[0] and _from_llvmlite(unraisable):
            return
        hook(unraisable)
    return quiet


def _from_llvmlite(unraisable):
    tb = unraisable.exc_traceback
    while tb is not None:
        if tb.tb_frame.f_globals.get("__name__", "").startswith("llvmlite."):
            return True
        tb = tb.tb_next
    return False


def stop_on_signals():
    """
    Install the stop handler for SIGINT and SIGTERM; return the list of signals received.

    Idempotent. rclpy.init() later installs its own handlers, which shut its contexts down
    and then call this one.
    """
    if signal.getsignal(signal.SIGINT) is not _on_stop_signal:
        for signum in STOP_SIGNALS:
            signal.signal(signum, _on_stop_signal)
        sys.unraisablehook = _unraisable(sys.unraisablehook)
    return _stop


def dynamics_node(args=None):
    """Run ``dynamics_node`` (the console script); its exit status."""
    stop = stop_on_signals()
    try:
        try:
            main = _import_main()
        except KeyboardInterrupt:
            return 0
        except Exception:
            # an interrupt inside an import can surface as another exception: numpy's C
            # import as ImportError, a dataclass's __set_name__ (scipy) as RuntimeError
            if stop:
                return 0
            raise
        if stop:             # interrupted inside the import, where the exception was dropped
            return 0
        main(args, stop=stop)
        return 0
    finally:
        ignore_stop_signals()


def _import_main():
    """Import the node's main() (numba, rclpy, the package: a second; nothing compiles)."""
    from rbd_ros.node.dynamics_node import main
    return main


if __name__ == "__main__":
    sys.exit(dynamics_node())
