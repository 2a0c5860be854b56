"""The node tests' processes, read from /proc (Linux): a process's children, its end."""
import os


def gone(pid):
    """Tell whether process ``pid`` has ended (exited and reaped, or a zombie)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


def children(pid):
    """Return the pids of the children of process ``pid`` (any of its threads' children)."""
    found = set()
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/children") as f:
                found.update(int(x) for x in f.read().split())
        except OSError:
            pass
    return found
