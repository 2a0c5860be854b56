"""
What the dynamics node says about itself: bounded log lines, throttling, /diagnostics values.

Anyone on the DDS domain can send the node input, so nothing it logs or answers may grow
with that input: a text quotes at most a short, escaped excerpt of it (:func:`excerpt`,
:func:`names_excerpt`, :func:`one_line`), and a stream of bad messages gives a few log lines,
not one per message (:class:`Throttle`). An exception out of a callback would end the
executor's spin and the node: every callback is :func:`guarded`. No ROS here.
"""
import inspect
import time

import numpy as np

MAX_LINE = 400          # characters of any line the node logs or answers, its own text included
# control characters (newline, carriage return, ANSI escape, Unicode line breaks) are written
# as escapes: a quoted input cannot start a new log line or drive a terminal
_ESCAPES = {c: f"\\x{c:02x}" for c in (*range(32), 127, 0x85)}
_ESCAPES.update({0x2028: "\\u2028", 0x2029: "\\u2029"})


def one_line(text, limit=MAX_LINE):
    """
    Return ``text`` (any object, as str) on one line of at most about ``limit`` characters.

    Control characters are escaped; a longer text is cut and says how much was left out.
    """
    text = str(text)
    cut = text[:limit].translate(_ESCAPES)
    if len(text) <= limit:
        return cut
    return f"{cut}... ({len(text) - limit} more characters)"


def excerpt(value, limit=60):
    """
    Return a short, quoted and escaped excerpt of an input ``value`` (str or bytes).

    ``repr`` of at most ``limit`` characters (bytes: ``limit`` bytes), then the length of
    the whole when it was cut: a 5 MB text gives a line of about ``limit`` characters.
    """
    if isinstance(value, (bytes, bytearray, memoryview)):
        value = bytes(value)
        head, size, unit = bytes(value[:limit]), len(value), "bytes"
    else:
        value = str(value)
        head, size, unit = value[:limit], len(value), "characters"
    quoted = repr(head).translate(_ESCAPES)
    return quoted if size <= limit else f"{quoted}... ({size} {unit})"


def names_excerpt(names, count=8, limit=40):
    """Return the first ``count`` of ``names``, each an :func:`excerpt`, and how many more."""
    names = list(names)
    shown = ", ".join(excerpt(n, limit) for n in names[:count])
    more = f", ... {len(names) - count} more" if len(names) > count else ""
    return f"[{shown}{more}]"


class Throttle:
    """
    Decide which log lines are written: per key, a few lines per period, not one per event.

    Per key (a skip reason, "description", ...): the first line is written; then a token
    bucket allows ``burst`` lines per ``period`` seconds, and the same text again at most once
    per ``period``. Lines held back are counted and the next line written says how many.
    Thresholds are the caller's: ``__call__(key, text, period, burst)``.
    """

    def __init__(self, clock=time.monotonic, keys=256):
        self.clock = clock
        self.max_keys = keys
        self._state = {}          # key -> [time of the last line, its text, tokens then, held]

    def __call__(self, key, text, period, burst=1):
        """Return the line to write now (``text``, with what was held back), or None."""
        now = self.clock()
        state = self._state.get(key)
        if state is None:
            if len(self._state) >= self.max_keys:
                self._state.clear()
            self._state[key] = [now, text, burst - 1.0, 0]
            return text
        last, last_text, tokens, held = state
        tokens = min(float(burst), tokens + (now - last) / period)
        if tokens < 1.0 or (text == last_text and now - last < period):
            state[3] += 1
            return None
        state[:] = [now, text, tokens - 1.0, 0]
        return f"{text} ({held} similar lines held back)" if held else text


def latency_values(latency_s):
    """Return the /diagnostics values of the tick latencies ``latency_s`` (seconds)."""
    if not len(latency_s):
        return {}
    lat = np.array(latency_s) * 1e6
    return {"tick latency p50 [us]": f"{np.percentile(lat, 50):.1f}",
            "tick latency p99 [us]": f"{np.percentile(lat, 99):.1f}",
            "tick latency max [us]": f"{lat.max():.1f}",
            "ticks in window": len(lat)}


class Window:
    """Counts between two /diagnostics messages: the input rates over that window."""

    def __init__(self, clock=time.monotonic):
        self.clock = clock
        self.start = clock()
        self.counts = {}

    def rates(self, stats, keys):
        """Return {"<key> rate [Hz]": ...} since the last call, from the counters ``stats``."""
        now = self.clock()
        elapsed = max(now - self.start, 1e-9)
        out = {f"{k} rate [Hz]": f"{(stats[k] - self.counts.get(k, 0)) / elapsed:.1f}"
               for k in keys}
        self.start, self.counts = now, {k: stats[k] for k in keys}
        return out


def guarded(callback, on_error):
    """
    Return ``callback`` behind a boundary: what it raises goes to ``on_error(where, exc)``.

    ``where``: the callback's name without ``_on_`` (or ``on_``, ``_``). The wrapper has
    ``callback``'s signature (rclpy reads it to decide whether to pass message info).
    """
    where = callback.__name__.removeprefix("_").removeprefix("on_")

    def boundary(*args):
        try:
            return callback(*args)
        except Exception as exc:
            on_error(where, exc)
    boundary.__signature__ = inspect.signature(callback)
    boundary.__name__ = callback.__name__
    return boundary


def guarded_service(callback, on_error, where):
    """
    Return a service ``callback`` behind a boundary.

    On an exception: the response, with a refusal saying why for each parameter of a
    set-parameters request (an empty result list crashes ``ros2 param set``).
    """
    def boundary(request, response):
        try:
            return callback(request, response)
        except Exception as exc:
            on_error(where, exc)
            return refused_parameters(request, response, exc)
    return boundary


def guard_services(services, on_error):
    """
    Give rclpy's own ``services`` of a node (parameters, type description) the boundary.

    rclpy's parameter services raise out of their callback for a request with an unknown
    parameter type (ValueError: "99 is not a valid Parameter.Type"), which ends the
    executor's spin: here such a request gets an empty response instead.
    """
    for service in services:
        service.callback = guarded_service(service.callback, on_error,
                                           service.srv_name.rsplit("/", 1)[-1])


def refused_parameters(request, response, exc):
    """Fill a set-parameters ``response`` (one result per parameter, or atomic) refused."""
    from rcl_interfaces.msg import SetParametersResult
    reason = one_line(f"refused: {type(exc).__name__}: {exc}", 300)
    if hasattr(response, "results") and hasattr(request, "parameters"):
        response.results = [SetParametersResult(successful=False, reason=reason)
                            for _ in request.parameters]
    elif isinstance(getattr(response, "result", None), SetParametersResult):
        response.result = SetParametersResult(successful=False, reason=reason)
    return response
