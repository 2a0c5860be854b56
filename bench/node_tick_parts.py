"""
Where one message of the dynamics node goes, part by part: back to back, and paced.

Builds the node (``DynamicsNode``) in this process with a receiver process subscribed to
its outputs (``bench_node.py --receiver``: every publish reaches a matched subscriber, as in
``bench_node``'s runs), then hands serialized joint_states to its joint_states subscription's
callback, as its executor would, twice: back to back ("hot": each message right after the
last, the caches warm) and paced at ``--rate`` (waiting for each message's time, as the node
waits for the next message). Each part of the callback (decoding, the joint cache, the tick
rule, the dynamics kernel, the publishes, the observer, ...) is timed where the node calls
it; the table gives each part's µs per message in both runs and their ratio, and the
callback's once more paced without the timers (each adds ~0.2 µs a call). Two more runs,
"evicted" (timed) and without the timers, hand each of ``--evicted-messages`` messages over
right after writing over ``--evict-mb`` MiB (untimed, as ``core_paced.py``'s evicted way):
every part with its data caches, L2, L3 and TLB overwritten, at any minute. A run in which
the node does not publish for every message is refused.

Why: a bench_node run measures the node waking up for every message, an in-process loop
measures it with everything in cache; what the node costs per message, and which part of it
grows when the caches are cold, is the paced column. With ``--floor`` the messaging floor's
relay (``node_floor.py``, ``bench_node --floor``'s) is timed the same way, its runs
alternating with the node's, and the node's callback is given over the floor's;
``--floor-core`` and ``--floor-pinocchio`` time the relay making the core's calls
(``node_floor.CoreCalls``) or Pinocchio's for the same outputs (``node_floor.PinocchioCalls``)
the same way: what each library's calls cost hot and paced, inside the same relay.

    python bench/node_tick_parts.py --observer arm_right_7_link --messages 3000 --floor \
        --floor-core --floor-pinocchio
"""
import argparse
import functools
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "test"))
sys.path.insert(0, HERE)

from node_trees import FLOOR_CORE, FLOOR_PINOCCHIO  # noqa: E402

FIVE = ("torques", "accelerations", "inverse_inertia", "rnea_derivatives", "aba_derivatives")
# node_floor.Floor making no calls, the core's or Pinocchio's (bench_node's labels)
RELAYS = ("floor", FLOOR_CORE, FLOOR_PINOCCHIO)


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--robot", default="talos", help="a robot of test/oracle.py (talos)")
    ap.add_argument("--outputs", default=",".join(FIVE),
                    help="comma-separated dynamics outputs (the five of bench_node's goal)")
    ap.add_argument("--end-effector", metavar="LINK", default="arm_right_7_link",
                    help="the ~/end_effector output's link, when it is among --outputs")
    ap.add_argument("--observer", metavar="LINK", default="",
                    help="the observer on, its external torques and contact wrench at LINK")
    add_pacing_arguments(ap, "hot and paced runs each, alternating; the best kept")
    ap.add_argument("--floor", action="store_true",
                    help="also time the messaging floor's relay (node_floor.py) the same way")
    ap.add_argument("--floor-core", action="store_true",
                    help="also time the relay making the core's calls (node_floor.CoreCalls)")
    ap.add_argument("--floor-pinocchio", action="store_true",
                    help="also time the relay making Pinocchio's calls (PinocchioCalls)")
    add_eviction_arguments(ap)
    return ap.parse_args(argv)


def eviction_buffer(args):
    """Return the float64 array of ``args.evict_mb`` MiB an evicted run writes over."""
    return np.zeros(round(args.evict_mb * 2**20) // 8)


def evict_caches(buffer):
    """Write over every line of ``buffer``: the caches then hold it, not what ran before."""
    np.add(buffer, 1.0, out=buffer)


def add_eviction_arguments(ap):
    """Add --evict-mb and --evicted-messages (the evicted runs') to ``ap``."""
    ap.add_argument("--evict-mb", type=positive_float, default=64.0,
                    help="MiB written over before each message or call of the evicted runs "
                         "(64: twice this VM's L3)")
    ap.add_argument("--evicted-messages", type=positive_int, default=300,
                    help="messages of an evicted run (300: ~10 ms a write)")


def add_pacing_arguments(ap, rounds_help):
    """Add --messages, --rounds (``rounds_help``, its default after it) and --rate to ``ap``."""
    ap.add_argument("--messages", type=positive_int, default=3000,
                    help="messages per run (3000)")
    ap.add_argument("--rounds", type=positive_int, default=2, help=f"{rounds_help} (2)")
    ap.add_argument("--rate", type=positive_float, default=1000.0,
                    help="messages per second of the paced runs (1000)")


def positive_int(text):
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text}")
    return value


def positive_float(text):
    value = float(text)
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a positive number, got {text}")
    return value


def parts():
    """Return [(label, owner, attribute)]: what the node calls per message, where it looks it up."""
    from rbd_ros.actuation import dynamics
    from rbd_ros.node import conversions, dynamics_node
    from rbd_ros.node.contact import ContactMonitor, ObserverTicks
    from rbd_ros.node.effort_command import EffortCommand
    from rbd_ros.node.estimate_payload import PayloadSamples
    from rbd_ros.node.joint_cache import JointCache
    from rbd_ros.outputs.tick_rule import TickRule
    return [("merge serialized", JointCache, "merge_serialized"),
            ("decode", conversions, "decode_joint_state"), ("joint cache", JointCache, "merge"),
            ("payload samples", PayloadSamples, "record"), ("tick rule", TickRule, "reason"),
            ("effort command", EffortCommand, "tick"), ("dynamics", dynamics, "compute"),
            ("publish outputs", dynamics_node, "publish"),
            ("observer", ObserverTicks, "observe"),
            ("  its step and messages", ContactMonitor, "messages"),
            ("    its step", ContactMonitor, "step")]


def nested(label):
    """Whether ``label`` is a part inside another (indented; not added to the callback's)."""
    return label.startswith(" ")


def timed(totals, label, function):
    """Return ``function`` adding its seconds per call to ``totals[label]``."""
    clock = time.perf_counter

    @functools.wraps(function)
    def call(*args, **kwargs):
        start = clock()
        try:
            return function(*args, **kwargs)
        finally:
            totals[label] = totals.get(label, 0.0) + clock() - start
    return call


def serialized_states(urdf, count, rate):
    """Return ``count`` serialized joint_states of bench_node's trajectory, stamped at ``rate``."""
    from rclpy.serialization import serialize_message
    from sensor_msgs.msg import JointState
    from node_run import STATES, make_states
    names, states = make_states(urdf, STATES, rate)
    start_ns = time.time_ns() - 10**9 * 3600   # an hour ago: no stamp ahead of the clock
    raws = []
    for k in range(count):
        q, v, tau, _ = states[k % len(states)]
        msg = JointState(name=names, position=q, velocity=v, effort=tau)
        stamp = start_ns + round(k * 1e9 / rate)
        msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(stamp, 10**9)
        raws.append(serialize_message(msg))
    return raws


def make_node(context, text, outputs, observer, end_effector=""):
    """
    Return the node, in this process, with ``outputs`` on (and the observer at ``observer``).

    ``end_effector``: the ~/end_effector output's link, when it is among ``outputs``.
    """
    from rclpy.parameter import Parameter
    from rbd_ros.node.dynamics_node import DynamicsNode
    from node_run import output_parameters
    overrides = [Parameter("robot_description", value=text),
                 Parameter("floating_base", value=False),
                 Parameter("mimic_joints", value="independent"),
                 Parameter("planner_process", value=False)]
    named = list(outputs) + (["external_torques", "contact_wrench"] if observer else [])
    overrides += [Parameter(k, value=v)
                  for k, v in output_parameters(named, observer, end_effector).items()]
    return DynamicsNode(context=context, parameter_overrides=overrides)


def wait_for(condition, seconds, what):
    end = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > end:
            raise SystemExit(f"timed out waiting for {what}")
        time.sleep(0.05)


def run(callback, raws, period, evict=None):
    """
    Feed ``raws`` to ``callback``; each at its time when ``period`` > 0. Seconds in it.

    ``evict``: a float64 array written over before each message (untimed), or None.
    """
    clock, sleep = time.perf_counter, time.sleep
    busy = 0.0
    due = clock()
    for raw in raws:
        if evict is not None:
            evict_caches(evict)
        elif period:
            wait = due - clock()
            if wait > 0:
                sleep(wait)
            due += period
        start = clock()
        callback(raw)
        busy += clock() - start
    return busy


def measure(args, node, callback, chunks, best):
    """
    Time ``callback`` hot, paced and evicted, paced and evicted once more untimed; keep the best.

    ``best``: {mode: (callback µs/message, {part: µs/message})}, modes "hot", "paced",
    "paced, untimed" (the parts' timers off: what they add), "evicted" and "evicted,
    untimed" (the first ``args.evicted_messages`` of a chunk, each after a write over
    ``evict``);
    ``chunks``: an iterator of message lists; ``node``: the dynamics node (each message
    must publish) or None.
    """
    totals = {}
    timed_parts = parts()
    originals = [(owner, attribute, getattr(owner, attribute))
                 for _, owner, attribute in timed_parts]
    runs = (("hot", 0.0, True), ("paced", 1.0 / args.rate, True),
            ("paced, untimed", 1.0 / args.rate, False), ("evicted", 0.0, True),
            ("evicted, untimed", 0.0, False))
    evict = eviction_buffer(args)
    run(callback, next(chunks), 0.0)                      # warm up: first uses, caches
    for mode, period, timers in runs:
        raws = next(chunks)
        if mode.startswith("evicted"):
            raws = raws[:args.evicted_messages]
        before = node.stats() if node is not None else None
        totals.clear()
        if timers and node is not None:
            for (label, _, _), (owner, attribute, function) in zip(timed_parts, originals):
                setattr(owner, attribute, timed(totals, label, function))
        try:
            busy = run(callback, raws, period,
                       evict if mode.startswith("evicted") else None) / len(raws) * 1e6
        finally:
            for owner, attribute, function in originals:
                setattr(owner, attribute, function)
        if node is not None:
            check_published(before, node.stats(), len(raws), mode)
        if mode not in best or busy < best[mode][0]:
            best[mode] = (busy, {k: v / len(raws) * 1e6 for k, v in totals.items()})


def check_published(before, after, count, mode):
    """Refuse a run in which not every one of ``count`` messages was answered: SystemExit."""
    published = after["published"] - before["published"]
    errors = after["callback_errors"] - before["callback_errors"]
    if published != count or errors:
        raise SystemExit(f"the {mode} run published {published} of {count} messages "
                         f"({errors} callback errors; the node's counters: {dict(after)}): "
                         "its figures would mix ticks with messages it skipped")


def print_table(best, outputs, references=None):
    """
    Print the parts of ``best``'s runs, hot and paced, and the node against ``references``.

    ``references``: {label: best} of the relays run ("floor", "floor + core", ...), if any.
    """
    hot, paced, evicted = best["hot"], best["paced"], best.get("evicted")
    labels = [label for label, _, _ in parts() if label in hot[1] or label in paced[1]]
    print(f"{'part':<26} {'hot µs':>8} {'paced µs':>9} {'paced/hot':>9}"
          + (f" {'evicted µs':>10} {'evicted/hot':>11}" if evicted else ""))
    print("-" * (55 + (23 if evicted else 0)))

    def row(label, h, p, e):
        cells = f"{label:<26} {h:>8.1f} {p:>9.1f} {p / h if h > 0 else float('nan'):>9.2f}"
        if evicted:
            cells += f" {e:>10.1f} {e / h if h > 0 else float('nan'):>11.2f}"
        print(cells)
    for label in labels:
        row(label, *(run[1].get(label, 0.0) if run else 0.0 for run in (hot, paced, evicted)))
    row("the rest", *(run[0] - sum(v for k, v in run[1].items() if not nested(k)) if run
                      else 0.0 for run in (hot, paced, evicted)))
    row("callback", *(run[0] if run else 0.0 for run in (hot, paced, evicted)))
    untimed, evicted_untimed = best.get("paced, untimed"), best.get("evicted, untimed")
    if untimed:
        print(f"{'  without timers':<26} {'':>8} {untimed[0]:>9.1f}"
              + (f" {'':>9} {evicted_untimed[0]:>10.1f}" if evicted and evicted_untimed
                 else ""))
    node_paced = untimed[0] if untimed else paced[0]
    node_evicted = evicted_untimed[0] if evicted_untimed else evicted[0] if evicted else 0.0
    for label, reference in (references or {}).items():
        e = reference.get("evicted")
        row(label + " callback", reference["hot"][0], reference["paced"][0], e[0] if e else 0.0)
        ratios = f"{'node / ' + label:<26} {hot[0] / reference['hot'][0]:>8.2f} " \
                 f"{node_paced / reference['paced'][0]:>9.2f}"
        if evicted and e:
            ratios += f" {'':>9} {node_evicted / e[0]:>10.2f}"
        print(ratios)
    print(f"\noutputs: {', '.join(outputs)}; µs per message, the best of the rounds; the "
          "parts' timers are in the callback's figures but the untimed ones (the paced and "
          "evicted node / floor ratios use them)")


def session(context, kind, args, text, outputs, observed):
    """
    Return (rclpy node, its joint_states callback): the dynamics node, or the floor's relay.

    ``kind``: "node", or one of ``RELAYS`` (``node_floor.Floor``, as ``bench_node --floor``
    runs it, making no calls, the core's or Pinocchio's); ``outputs``: the dynamics outputs
    on; ``observed``: those and the observer's, the floor's to relay.
    """
    if kind == "node":
        node = make_node(context, text, outputs, args.observer, args.end_effector)
        return node, next(s.callback for s in node.subscriptions
                          if s.topic_name == "/joint_states")
    import rbd_ros
    from rclpy.node import Node
    from node_floor import NODE_NAME, CoreCalls, Floor, PinocchioCalls
    from oracle import ROBOTS
    urdf = ROBOTS[args.robot][0]
    model = rbd_ros.load_model(urdf, floating_base=False, mimic="independent")
    frame = args.observer or "contact"
    core = (CoreCalls(model, observed, frame) if kind == RELAYS[1] else
            PinocchioCalls(urdf, model, observed, frame) if kind == RELAYS[2] else None)
    node = Node(NODE_NAME, context=context)
    floor = Floor(node, model, observed, frame, core)
    return node, floor.on_joint_states


def main(argv=None):
    args = parse_args(argv)
    import rclpy
    from rclpy.context import Context
    from oracle import ROBOTS
    import bench_record
    from node_graph import stop_children_on_sigterm
    from node_run import stop
    stop_children_on_sigterm()                  # the receiver process is stopped in a finally
    outputs = [k for k in args.outputs.split(",") if k]
    observed = outputs + (["external_torques", "contact_wrench"] if args.observer else [])
    urdf = ROBOTS[args.robot][0]
    with open(urdf) as f:
        text = f.read()
    kinds = ("node",) + tuple(k for k, on in zip(RELAYS, (args.floor, args.floor_core,
                                                          args.floor_pinocchio)) if on)
    fed = args.messages * 6 * args.rounds * len(kinds)     # warm-up and five runs each
    raws = serialized_states(urdf, fed, args.rate)
    chunks = iter(raws[k:k + args.messages] for k in range(0, len(raws), args.messages))
    folder = tempfile.TemporaryDirectory(prefix="node_tick_parts_")
    received_path = os.path.join(folder.name, "received.npy")
    receiver = subprocess.Popen([sys.executable, os.path.join(HERE, "bench_node.py"),
                                 "--receiver", received_path, "--receiver-outputs",
                                 ",".join(observed)],
                                stdout=subprocess.PIPE, text=True, start_new_session=True)
    from rbd_ros.node.fastdds_profile import use_large_messages_profile
    use_large_messages_profile()          # the node's process's Fast DDS profile
    context = Context()
    best = {kind: {} for kind in kinds}
    print(f"{args.robot} (fixed base), {args.messages} messages a run at {args.rate:g} Hz "
          f"paced; load average {bench_record.load_average()}")
    try:
        rclpy.init(context=context)
        receiver.stdout.readline()        # the receiver has subscribed: matching can begin
        for _ in range(args.rounds):
            for kind in kinds:
                node, callback = session(context, kind, args, text, outputs, observed)
                try:
                    topics = {f"/{node.get_name()}/{k}" for k in observed}
                    publishers = [p for p in node.publishers if p.topic_name in topics]
                    wait_for(lambda: len(publishers) == len(topics) and all(
                        p.get_subscription_count() for p in publishers), 30,
                        "the receiver to match")
                    measure(args, node if kind == "node" else None, callback, chunks,
                            best[kind])
                finally:
                    node.destroy_node()
    finally:
        if context.ok():
            rclpy.shutdown(context=context)
        stop(receiver)
    received = len(np.load(received_path)) if os.path.exists(received_path) else 0
    folder.cleanup()
    print_table(best["node"], observed, {k: best[k] for k in kinds[1:]})
    handed = args.rounds * len(kinds) * (4 * args.messages
                                         + 2 * min(args.evicted_messages, args.messages))
    print(f"the receiver got {received} of the {handed * len(observed)} outputs of the {handed} "
          "messages (the hot runs publish faster than it takes them: some are dropped)")
    return best, received


if __name__ == "__main__":
    main()
