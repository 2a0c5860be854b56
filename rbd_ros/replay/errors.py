"""The replay's error for bad input, and how its messages quote an input: short and escaped."""


class ReplayError(ValueError):
    """Bad input (bag, topic, URDF, arguments): the message says what and how to fix it."""


def shorten(text, limit=200):
    """Return ``text`` (any object, as str) cut to about ``limit`` characters."""
    text = str(text)
    if len(text) <= limit:
        return text
    tail = max(limit // 4, 1)
    return f"{text[:limit - tail - 5]} ... {text[-tail:]}"


def excerpt(value, limit=80):
    """Quote an input (a path, a topic, a name) in an error: escaped, at most ~limit chars."""
    return repr(shorten(value, limit))
