"""
The output bag: every input message copied, each answered joint_states followed by its outputs.

Offline, the outputs are computed in batches as the bag is copied (``dynamics.Batches``);
with ``--live`` they are the node's answers (``live.LiveResult``).
"""
import sys
import time

from .. import outputs as table
from . import bag_io, dynamics, observing


class Progress:
    """A one-line progress bar on stderr (only when enabled)."""

    def __init__(self, total, label, enabled):
        self.total, self.label, self.enabled = max(int(total), 1), label, enabled
        self.last = 0.0

    def update(self, done, force=False):
        now = time.monotonic()
        if not self.enabled or (now - self.last < 0.2 and not force):
            return
        self.last = now
        frac = min(done / self.total, 1.0)
        bar = "#" * int(30 * frac)
        sys.stderr.write(f"\r{self.label} [{bar:<30}] {done}/{self.total}")
        if force:
            sys.stderr.write("\n")
        sys.stderr.flush()


def write(reader, writer, segments, outputs, js_ids, live_result, timing, *, node_name,
          batch_size, progress, observed=None, frame=""):
    """
    Write the output bag: the input messages and the outputs of each.

    Copy every message of ``reader`` to ``writer``, each answered joint_states message
    followed by its outputs (computed offline, or the node's answers with ``live_result``).
    ``segments``: [(first joint_states index, model, ticks, joint parameters or None)], in
    order (``segments``: the description in force over each); returns their
    :class:`dynamics.Batches` (torques, refused messages). ``observed``: per segment, its
    ``observing.Observed`` (the observer's outputs, after the others as the node publishes).
    ``frame``: the end_effector output's link.
    """
    copies = {}
    for con in reader.connections:
        key = (con.topic, con.msgtype)
        if key not in copies:
            copies[key] = bag_io.copy_connection(writer, con)
    out_cons = {k: bag_io.add_connection(writer, f"/{node_name}/{k}", table.BY_NAME[k].msgtype)
                for k in outputs}
    observed = observed or [None] * len(segments)
    names = observed[0].names if observed[0] is not None else ()
    out_cons.update({k: bag_io.add_connection(writer, f"/{node_name}/{k}",
                                              observing.msgtype(k)) for k in names})
    batches = [dynamics.Batches(model, t, outputs, batch_size, timing,
                                encode=live_result is None, joints=joints, frame=frame)
               for _, model, t, joints in segments]
    starts = [first for first, *_ in segments] + [None]
    k = 0
    bar = Progress(reader.message_count, "replay", progress if progress is not None
                   else (sys.stderr.isatty() and reader.message_count > 20000))
    m, done = -1, 0
    for con, stamp, raw in reader.messages():
        writer.write(copies[(con.topic, con.msgtype)], stamp, raw)
        done += 1
        if con.id not in js_ids:
            continue
        m += 1
        while starts[k + 1] is not None and m >= starts[k + 1]:
            k += 1
        items = batches[k].items(m - starts[k])
        bar.update(done)
        for name in outputs:
            item = items.get(name)
            if live_result is not None:
                for live_raw in live_result.compare(m, name, item):
                    writer.write(out_cons[name], stamp, live_raw)
            elif item is not None:
                writer.write(out_cons[name], stamp, item)
        if observed[k] is not None:
            items = observed[k].items(m - starts[k], batches[k])
            for name in names:
                if name in items:
                    writer.write(out_cons[name], stamp, items[name])
    bar.update(done, force=True)
    return batches
