"""
The tools' command lines: a refusal is one line on stderr and exit status 2.

argparse prints its usage and then the error; :class:`Parser` prints only
``PROG: error: ...`` (``--help`` still gives the usage). :func:`check_number` refuses a
number outside its stated range, before the tool does any work.
"""
import argparse
import math

EXIT_BAD_INPUT = 2


class Parser(argparse.ArgumentParser):
    """An ``argparse.ArgumentParser`` whose errors are one line and exit status 2."""

    def error(self, message):
        """Print ``PROG: error: MESSAGE`` on one line and exit with status 2."""
        message = " ".join(str(message).split())
        self.exit(EXIT_BAD_INPUT, f"{self.prog}: error: {message[:300]}\n")


def check_number(option, value, low, high, unit=""):
    """Return ``value``; ValueError unless it is a finite number in [``low``, ``high``]."""
    if not (isinstance(value, (int, float)) and math.isfinite(value) and low <= value <= high):
        raise ValueError(f"{option} must be {low:g} to {high:g}{unit}, got {value!r}")
    return value
