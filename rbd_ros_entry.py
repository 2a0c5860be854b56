"""
Console entry of ``dynamics_node``: Ctrl-C and SIGTERM are a clean stop from the first instant.

``import rbd_ros`` loads numba and the compiled kernels (a second or two; minutes on the
first run after an install). Python's default SIGINT handler raises KeyboardInterrupt
wherever the import is: a traceback, or, inside one of llvmlite's ctypes callbacks, an
exception that is printed and dropped, and the node starts and runs on as if never
interrupted. This module sits outside the ``rbd_ros`` package so that it runs before that
import: the handler it installs records the signal, interrupts what runs once, and the
entry exits quietly (status 0, as a stop of the running node does).
"""
import signal
import sys

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
_stop = []                   # the signals received, in order


def _on_stop_signal(signum, frame):
    _stop.append(signum)
    if len(_stop) == 1:        # the first one interrupts; later ones leave the clean-up be
        raise KeyboardInterrupt


def _unraisable(hook):
    def quiet(unraisable):
        # a KeyboardInterrupt raised inside a ctypes callback cannot propagate: Python
        # prints it with a traceback and drops it; the stop is recorded in _stop anyway
        if _stop and isinstance(unraisable.exc_value, KeyboardInterrupt):
            return
        hook(unraisable)
    return quiet


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
        from rbd_ros.node.dynamics_node import main
    except KeyboardInterrupt:
        return 0
    if stop:                 # interrupted inside the import, where the exception was dropped
        return 0
    main(args, stop=stop)
    return 0


if __name__ == "__main__":
    sys.exit(dynamics_node())
