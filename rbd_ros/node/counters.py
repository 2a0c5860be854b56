"""
The node's counters (/diagnostics): named, counted from any thread, read as a snapshot.

The node's collaborators (skips, descriptions, inputs, lost messages) count into one
``Counters``; /diagnostics and ``DynamicsNode.stats()`` read a snapshot of all of them taken
at one instant, so a count read there never mixes two moments, and no collaborator holds
the node's mutable state.
"""
import threading
from types import MappingProxyType


class Counters:
    """Counts by name, fixed at construction (an unknown name is a KeyError: a typo)."""

    __slots__ = ("_counts", "_lock")

    def __init__(self, names):
        self._counts = dict.fromkeys(names, 0)
        self._lock = threading.Lock()

    def add(self, name, n=1):
        """Count ``n`` more ``name``."""
        with self._lock:
            self._counts[name] += n

    def set(self, name, value):
        """Set ``name`` to ``value``: a count kept elsewhere (the planner child's exits)."""
        with self._lock:
            if name not in self._counts:
                raise KeyError(name)
            self._counts[name] = value

    def snapshot(self):
        """Return every count at this instant: a read-only mapping, name -> count, in order."""
        with self._lock:
            return MappingProxyType(dict(self._counts))

    def __getitem__(self, name):
        return self._counts[name]
