"""
The node's core calls back to back, one message period apart, and with cold caches.

Makes, per state of bench_node's trajectory, the core calls of the node's tick for talos held
at the pelvis (``node_floor.CoreCalls``: the dynamics of ``--outputs`` into a result buffer,
the observer's step and collision check at ``--observer``), in one process with no ROS
traffic, four ways: back to back ("hot"), each after sleeping until its time at ``--rate``
("sleep": the CPU idles between messages, as the node's does waiting for the next one), each
after spinning until its time ("spin": this loop keeps the CPU busy), and each of the first
``--evicted-messages`` right after writing over ``--evict-mb`` MiB, untimed ("evicted": 64
MiB, twice this VM's L3, leave the calls' data out of every cache and the TLB, whatever the
host does). A call that ends after the next one's time moves the schedule a period on: every
"sleep" and "spin" call follows a wait. Prints, per call, the median and mean µs of each way,
sleep / hot and evicted / hot, with the host's steal and the load over the run.

Why: what else runs on the machine between two messages can evict the calls' caches. Run
just before a bench_node run, "sleep" and "spin" near "hot" say the machine is quiet now;
"evicted" is the same at any minute: a change that makes the calls cheaper with cold caches
shows there.

    python bench/core_paced.py [--observer arm_right_7_link] [--messages 3000] [--rounds 2]
        [--evict-mb 64] [--evicted-messages 300]
"""
import argparse
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "test"))
sys.path.insert(0, HERE)

from node_tick_parts import (  # noqa: E402
    FIVE, add_eviction_arguments, add_pacing_arguments, evict_caches, eviction_buffer)
from proc_cpu import cpu_ticks, loadavg  # noqa: E402

WAYS = ("hot", "sleep", "spin", "evicted")


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--outputs", default=",".join(FIVE),
                    help="comma-separated dynamics outputs (the five of bench_node's goal)")
    ap.add_argument("--observer", metavar="LINK", default="arm_right_7_link",
                    help="the observer's contact wrench at LINK ('': no observer)")
    add_pacing_arguments(ap, "runs of each call and way, alternating; the lowest median kept")
    add_eviction_arguments(ap)
    args = ap.parse_args(argv)
    from rbd_ros.outputs import BY_NAME
    unknown = [name for name in args.outputs.split(",") if name not in BY_NAME]
    if unknown:
        ap.error(f"--outputs: {', '.join(unknown)} not among the dynamics outputs "
                 f"({', '.join(BY_NAME)})")
    return args


def core_calls(args):
    """Return ({call name: function of one state's (stamp, q, v, tau)}, the states, the calls)."""
    import rbd_ros
    from node_floor import CoreCalls
    from node_run import STATES, make_states
    from oracle import ROBOTS
    urdf = ROBOTS["talos"][0]
    model = rbd_ros.load_model(urdf, floating_base=False, mimic="independent")
    outputs = args.outputs.split(",")
    if args.observer:
        outputs += ["external_torques", "contact_wrench"]
    try:
        core = CoreCalls(model, outputs, args.observer or "contact")
    except ValueError as exc:                 # a link talos does not have
        raise SystemExit(f"core_paced.py: --observer: {exc}") from None
    _, states = make_states(urdf, STATES, args.rate)         # bench_node's, cycled as there
    period_ns = round(1e9 / args.rate)
    messages = [(divmod(k * period_ns, 10**9), *(np.array(x) for x in states[k % STATES][:3]))
                for k in range(args.messages)]

    def dynamics(stamp, q, v, tau):
        core.set_state(q, v, tau)
        core.dynamics()
    calls = {"dynamics": dynamics}
    if core.observer is not None:
        def observer_step(stamp, q, v, tau):
            core.set_state(q, v, tau)
            core.observer_step(stamp)
        calls["observer step"] = observer_step
    calls["both (CoreCalls.run)"] = core.run
    return calls, messages, core


def run(call, messages, way, period, evict=None):
    """
    Return the µs of each call of ``call`` over ``messages``, made the ``way`` of WAYS.

    ``evict``: the float64 array written over before each call of the "evicted" way.
    """
    clock, sleep = time.perf_counter, time.sleep
    spent = np.empty(len(messages))
    due = clock()
    for k, message in enumerate(messages):
        if way == "evicted":                  # no wait: the write instead, untimed
            evict_caches(evict)
        elif way == "sleep":
            wait = due - clock()
            if wait > 0:
                sleep(wait)
        elif way == "spin":
            while clock() < due:
                pass
        start = clock()
        call(*message)
        spent[k] = clock() - start
        due += period
        if due <= clock():                    # late: the next call still follows a wait
            due = clock() + period
    return spent * 1e6


def main(argv=None):
    args = parse_args(argv)
    calls, messages, core = core_calls(args)
    best = {}
    evict = eviction_buffer(args)
    steal0, total0 = cpu_ticks()
    load = [loadavg()]
    for _ in range(args.rounds):
        for name, call in calls.items():
            for way in WAYS:
                if core.observer is not None:
                    core.observer.reset()         # each run from a restart, as the first
                spent = run(call, messages[:args.evicted_messages] if way == "evicted"
                            else messages, way, 1.0 / args.rate, evict)
                figures = (float(np.median(spent)), float(np.mean(spent)))
                if (name, way) not in best or figures[0] < best[name, way][0]:
                    best[name, way] = figures
    steal1, total1 = cpu_ticks()
    load.append(loadavg())
    print(f"talos held at the pelvis, {args.messages} messages a run, {args.rate:g} a second "
          f"(sleep, spin), {args.evict_mb:g} MiB written over before each evicted one; µs a "
          f"call, median / mean, the lowest median of {args.rounds} "
          f"rounds; host steal {100.0 * (steal1 - steal0) / max(1, total1 - total0):.1f} % "
          f"of the CPUs, load {load[0]} to {load[1]}")
    print(f"{'call':<22} " + " ".join(f"{way:>15}" for way in WAYS)
          + f" {'sleep / hot':>12} {'evicted / hot':>14}")
    for name in calls:
        cells = [f"{best[name, way][0]:.1f} / {best[name, way][1]:.1f}" for way in WAYS]
        sleep, evicted = (best[name, way][0] / best[name, "hot"][0]
                          for way in ("sleep", "evicted"))
        print(f"{name:<22} " + " ".join(f"{cell:>15}" for cell in cells)
              + f" {sleep:>12.2f} {evicted:>14.2f}")
    return best


if __name__ == "__main__":
    main()
