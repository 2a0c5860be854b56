"""
What keeps a bench_node run to itself: nothing else on its topics, nothing left behind.

A node or relay left running on the same ROS_DOMAIN_ID answers the bench's joint_states on
the node's own topics, under the node's name: its outputs reach the receiver as the node's
and its CPU is taken from the run. Before each run :func:`wait_for_a_clear_graph` waits
until nothing but the bench is on the run's topics; after the measured window
:func:`refuse_company` checks that nothing but the bench and the node was (discovery is
finished by then, however slow the machine). :func:`stop_children_on_sigterm` makes a
``kill`` stop the bench's processes as Ctrl-C does; :func:`signals_held` lets their
stopping finish.
"""
import contextlib
import os
import signal
import time

from node_trees import NODE_NAME

# seconds after the bench's node is created before an empty graph is believed: Fast DDS on
# loopback discovers a participant in well under one
DISCOVERY_S = 2.0
# seconds a run waits for the last one's processes to leave the graph: one that had to be
# killed (SIGKILL) stays in it until its lease runs out, 20 s by Fast DDS's default
LEAVE_S = 30.0


def stop_children_on_sigterm():
    """
    Make SIGTERM raise KeyboardInterrupt, as SIGINT does: the runs' ``finally`` stops the node.

    The node, the receiver and the planner client run in sessions of their own (a terminal's
    Ctrl-C reaches only the bench, which stops them in order); killed by SIGTERM's default
    action, the bench would leave them running.
    """
    signal.signal(signal.SIGTERM, signal.default_int_handler)


@contextlib.contextmanager
def signals_held():
    """
    Hold SIGINT and SIGTERM while the block runs: one that came raises KeyboardInterrupt after.

    Their Python handlers are swapped for a note (main thread only), not the thread's signal
    mask: DDS's threads leave them unblocked, and the kernel may hand the signal to one.
    """
    came = []
    previous = {s: signal.signal(s, lambda number, frame: came.append(number))
                for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
        if came:
            raise KeyboardInterrupt


def others_on_the_graph(bench, outputs, node_running=False):
    """
    Return what else is on the run's topics, beside the bench (and the node, if running).

    The bench publishes joint_states; the node, when ``node_running``, subscribes to it and
    publishes ``outputs`` under NODE_NAME. Anything more: a subscriber of joint_states, a
    second publisher of it (another bench), a publisher of one of the node's outputs.
    """
    node = 1 if node_running else 0
    found = []
    if (n := bench.count_subscribers("joint_states") - node) > 0:
        found.append(f"{n} other subscriber(s) of joint_states")
    if (n := bench.count_publishers("joint_states") - 1) > 0:
        found.append(f"{n} other publisher(s) of joint_states")
    return found + [f"another publisher of /{NODE_NAME}/{k}" for k in outputs
                    if bench.count_publishers(f"/{NODE_NAME}/{k}") > node]


def _company(found, when):
    return RuntimeError(f"{' and '.join(found)} {when}, on ROS_DOMAIN_ID "
                        f"{os.environ.get('ROS_DOMAIN_ID', '0')}: a node or relay left from "
                        "another bench, or another session on this domain? stop it, or run "
                        "on another domain")


def wait_for_a_clear_graph(bench, outputs, timeout=LEAVE_S, trusted_after=0.0):
    """
    Return once nothing but the bench is on the run's topics; RuntimeError after ``timeout``.

    The last run's node and receiver take a moment to leave the graph after they exit.
    ``trusted_after`` (``time.monotonic()``): before it an empty graph is not yet believed
    (the bench's own node still discovering the others: DISCOVERY_S after it is made).
    """
    deadline = max(time.monotonic(), trusted_after) + timeout
    while (found := others_on_the_graph(bench, outputs)) or time.monotonic() < trusted_after:
        if found and time.monotonic() > deadline:
            raise _company(found, "before the run")
        time.sleep(0.1)


def refuse_company(bench, outputs):
    """Raise RuntimeError if anything beside the bench and the node is on the run's topics."""
    found = others_on_the_graph(bench, outputs, node_running=True)
    if found:
        raise _company(found, "beside the node during the run")
