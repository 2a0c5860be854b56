"""
What /proc says of a process's CPU, for bench_node and the scripts around it.

Its threads' and children's CPU seconds (``cpu_by_thread``: the main thread, Fast DDS's, the
others, the children), the machine's steal and load.
"""
import os


def stat_fields(pid):
    """
    Return the fields of /proc/<pid>/stat after the command name: [state, ppid, ...].

    Split after the name's last ")": the name may hold spaces and parentheses.
    """
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()


def cpu_seconds(pid):
    """Return utime + stime of a process, in seconds (/proc/<pid>/stat fields 14 and 15)."""
    fields = stat_fields(pid)
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def process_tree_cpu_seconds(pid):
    """
    Return the CPU seconds of process ``pid`` and of its children alive now.

    The node's planner process (``rbd_ros.node.planner.process``) is a child of the node:
    its CPU is the node's as much as a worker thread's was.
    """
    total = cpu_seconds(pid)
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/children") as f:
                total += sum(cpu_seconds(int(child)) for child in f.read().split())
        except OSError:                 # a thread or child that has just ended
            pass
    return total


THREAD_GROUPS = ("main thread", "Fast DDS threads", "other threads", "child processes")


def cpu_by_thread(pid):
    """
    Return the CPU seconds of process ``pid`` and its children, by ``THREAD_GROUPS``.

    The main thread's (the executor and every callback), Fast DDS's threads' (named
    ``dds.*``: its event timers, the shared-memory and UDP receivers), the process's other
    threads' (the rest of its total, threads ended included) and its children's (the
    planner process): where the node's CPU goes beside the floor's.
    """
    main = dds = 0.0
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/stat") as f:
                text = f.read()
        except OSError:                 # a thread that has just ended: counted in "other"
            continue
        fields = text.rsplit(")", 1)[1].split()
        seconds = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        if int(task) == pid:
            main = seconds
        elif text[text.index("(") + 1:].startswith("dds."):
            dds += seconds
    total = cpu_seconds(pid)
    return main, dds, total - main - dds, process_tree_cpu_seconds(pid) - total


def cpu_ticks():
    """Return (steal, total) clock ticks of all CPUs so far (/proc/stat)."""
    with open("/proc/stat") as f:
        fields = [int(x) for x in f.readline().split()[1:]]
    return fields[7], sum(fields[:8])


def loadavg():
    with open("/proc/loadavg") as f:
        return f.read().split()[0]
