"""
Which bags a fleet run evaluates, and how each is cut into tasks.

Arguments: a bag (a rosbag2 directory with ``metadata.yaml``, or an ``.mcap`` / ``.db3``
file), a directory searched recursively for bags (a bag directory is not searched further),
or ``@LIST``: a text file naming one of those per line (blank lines and ``#`` comments
skipped, relative paths relative to the list's directory; lists do not nest). The same bag
named twice is evaluated once. A path that does not exist is not an error of the run: that
bag is reported as failed and the others go on.
"""
import math
import os
import re
from pathlib import Path

from ..formats.text_files import read_text
from . import bag_io
from .errors import ReplayError, excerpt

BAG_FILES = (".mcap", ".db3")
MAX_LIST_BYTES = 16 << 20
SCHEDULER = re.compile(r"^(tcp|tls|ucx|inproc)://[A-Za-z0-9_.\-\[\]:]{1,255}:[0-9]{1,5}$")


def expand(arguments):
    """Return (bag paths, in order, no duplicates; whether any argument was a dir or list)."""
    bags, seen, many = [], set(), len(arguments) > 1
    for arg in arguments:
        if arg.startswith("@"):
            many = True
            paths = _read_list(arg[1:])
        else:
            paths = [Path(arg)]
        for path in paths:
            # os.path's tests: False, not OSError, for a hostile name (too long, NUL)
            folder = os.path.isdir(path) and not _is_bag_dir(path)
            found = _search(path) if folder else [path]
            many |= folder
            for bag in found:
                key = os.path.realpath(bag)
                if key not in seen:
                    seen.add(key)
                    bags.append(bag)
    return bags, many


def _read_list(name):
    """Return the paths named in the list file ``name``."""
    if not name:
        raise ReplayError("@: a bag list file name must follow the @")
    try:
        text = read_text(name, MAX_LIST_BYTES)
    except ValueError as exc:
        raise ReplayError(f"bag list {excerpt(name)}: {exc}") from None
    base = Path(name).parent
    out = []
    for number, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("@") or "\0" in line:
            raise ReplayError(f"bag list {excerpt(name)} line {number}: lists do not nest "
                              "(and names hold no NUL)")
        path = Path(line)
        out.append(path if path.is_absolute() else base / path)
    return out


def _is_bag_dir(path):
    return os.path.isfile(os.path.join(path, "metadata.yaml"))


def _search(root):
    """Bags under the directory ``root`` (sorted; not following links to directories)."""
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        here = Path(dirpath)
        if "metadata.yaml" in filenames:
            out.append(here)
            dirnames[:] = []
            continue
        dirnames.sort()
        out += [here / f for f in sorted(filenames) if f.endswith(BAG_FILES)]
    return sorted(out)


def names(bags):
    """Return a distinct, file-safe name per bag (its own; -2, -3 ... on collisions)."""
    out, used = [], set()
    for bag in bags:
        stem = re.sub(r"[^A-Za-z0-9_.\-]", "_", Path(str(bag).rstrip("/")).stem)[:80] or "bag"
        name, k = stem, 1
        while name in used:
            k += 1
            name = f"{stem}-{k}"
        used.add(name)
        out.append(name)
    return out


def survey(bag, topic):
    """
    Return {messages (joint_states), start, end (log time, ns)} of a bag; ReplayError if bad.

    ``start`` is the first joint_states message's (the bag's own start may be a latched
    description logged long before): windows then start where the states do.
    """
    reader = bag_io.open_reader(bag)
    try:
        cons = bag_io.connection(reader, topic, bag_io.JOINT_STATE)
        first = next(iter(reader.messages(connections=cons)), None)
        return {"messages": int(sum(c.msgcount for c in cons)),
                "start": int(reader.start_time if first is None else first[1]),
                "end": int(reader.end_time)}
    finally:
        reader.close()


def windows(info, split, window, max_joint_age):
    """
    Cut a bag into time windows of about ``split`` joint_states messages each.

    Returns [(lo, hi)] in log time ns (None: the bag's end) and the overlap (ns): enough for
    twice the Savitzky-Golay window at the bag's mean rate, and the joint age limit (a
    window's task checks that it was enough; see ``fleet_tasks``).
    """
    m, start, end = info["messages"], info["start"], info["end"]
    k = max(1, math.ceil(m / split)) if split else 1
    if k == 1 or end <= start:
        return [(None, None)], 0
    period = (end - start) / max(m - 1, 1)
    overlap = int(max(2 * window * period, max_joint_age * 1e9)) + 1
    edges = [start + (end + 1 - start) * i // k for i in range(k + 1)]
    spans = [(edges[i] if i else None, edges[i + 1] if i < k - 1 else None) for i in range(k)]
    return spans, overlap
