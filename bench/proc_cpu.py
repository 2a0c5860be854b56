"""
What /proc says of a process's CPU, for bench_node and the scripts around it.

Its threads' and children's CPU seconds (``cpu_by_thread``: the main thread, Fast DDS's, the
others, the children), the machine's steal and load.
"""
import os

THREAD_GROUPS = ("main thread", "Fast DDS threads", "other threads", "child processes")


def stat_fields(pid):
    """
    Return the fields of /proc/<pid>/stat after the command name: [state, ppid, ...].

    Split after the name's last ")": the name may hold spaces and parentheses.
    """
    return named_stat(f"/proc/{pid}/stat")[1]


def running(pid):
    """Whether the process ``pid`` is still there (not gone, not a zombie)."""
    try:
        return stat_fields(pid)[0] != "Z"
    except (OSError, IndexError):
        return False


def named_stat(path):
    """Return (the command name, the fields after it) of a process's or thread's stat file."""
    with open(path) as f:
        text = f.read()
    return text[text.index("(") + 1:text.rindex(")")], text.rsplit(")", 1)[1].split()


def fields_cpu_seconds(fields):
    """Return utime + stime, in seconds, of :func:`stat_fields`' fields (stat's 14 and 15)."""
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid):
    """Return utime + stime of a process (all its threads, ended ones too), in seconds."""
    return fields_cpu_seconds(stat_fields(pid))


def children(pid):
    """Return the pids of the children of process ``pid`` alive now (any thread's; none if gone)."""
    found = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:                     # the process has just ended
        return found
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/children") as f:
                found += [int(child) for child in f.read().split()]
        except OSError:                 # a thread that has just ended
            pass
    return found


def children_cpu_seconds(pid):
    """Return the CPU seconds of the children of process ``pid`` alive now."""
    total = 0.0
    for child in children(pid):
        try:
            total += cpu_seconds(child)
        except OSError:                 # a child that has just ended
            pass
    return total


def cpu_by_thread(pid):
    """
    Return the CPU seconds of process ``pid`` and its children, by ``THREAD_GROUPS``.

    The main thread's (the executor and every callback), Fast DDS's threads' (named
    ``dds.*``: its event timers, the shared-memory and UDP receivers), the process's other
    threads' (the rest of its total, threads ended included) and its children's (the
    planner process): where the node's CPU goes beside the floor's. Their sum is the CPU of
    the process and of its children alive now: the node's planner process
    (``rbd_ros.node.planner.process``) is the node's as much as a worker thread was.
    """
    total = cpu_seconds(pid)
    main = dds = 0.0
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            name, fields = named_stat(f"/proc/{pid}/task/{task}/stat")
        except OSError:                 # a thread that has just ended: counted in "other"
            continue
        if int(task) == pid:
            main = fields_cpu_seconds(fields)
        elif name.startswith("dds."):
            dds += fields_cpu_seconds(fields)
    return main, dds, total - main - dds, children_cpu_seconds(pid)


def cpu_ticks():
    """Return (steal, total) clock ticks of all CPUs so far (/proc/stat)."""
    with open("/proc/stat") as f:
        fields = [int(x) for x in f.readline().split()[1:]]
    return fields[7], sum(fields[:8])


def loadavg():
    with open("/proc/loadavg") as f:
        return f.read().split()[0]
