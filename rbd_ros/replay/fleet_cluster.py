"""
The Dask side of a fleet run: the client (a local cluster or ``--scheduler``), the progress line.

Connecting to ``--scheduler`` is bounded in time and refuses a peer that does not speak Dask
(:func:`_connect`).
"""
import gc
import math
import os
import sys
import threading
import time

from .errors import ReplayError, excerpt, shorten

SCHEDULER_TIMEOUT = 20.0   # s: --scheduler's connection and handshake, by default


class Progress:
    """One line on stderr for the whole run: bags done, messages/s, ETA."""

    def __init__(self, bags, messages, enabled):
        self.bags, self.messages, self.enabled = bags, max(messages, 1), enabled
        self.t0 = time.monotonic()

    def update(self, bags_done, failed, messages_done, final=False):
        if not self.enabled:
            return
        elapsed = max(time.monotonic() - self.t0, 1e-9)
        rate = messages_done / elapsed
        left = (self.messages - messages_done) / rate if rate > 0 else float("inf")
        eta = time.strftime("%H:%M:%S", time.gmtime(left)) if math.isfinite(left) else "?"
        sys.stderr.write(f"\rfleet: bags {bags_done}/{self.bags}"
                         + (f" ({failed} failed)" if failed else "")
                         + f", {messages_done}/{self.messages} messages, {rate:,.0f} msg/s, "
                         f"ETA {eta}   " + ("\n" if final else ""))
        sys.stderr.flush()


def client(scheduler=None, workers=None, timeout=SCHEDULER_TIMEOUT):
    """(Dask client, its LocalCluster or None): ``scheduler``'s, or a local one."""
    import logging

    from dask.distributed import Client, LocalCluster
    if scheduler:
        return _connect(Client, scheduler, timeout), None
    # workers are spawned processes: they inherit os.environ (NUMBA_CACHE_DIR: the kernels
    # compiled once on disk load in every worker instead of compiling per process)
    cluster = LocalCluster(n_workers=workers or os.cpu_count() or 1, threads_per_worker=1,
                           processes=True, dashboard_address=None,
                           silence_logs=logging.ERROR)
    return Client(cluster), cluster


def _connect(client_class, scheduler, timeout):
    """
    Return a Dask client of ``scheduler``, connected and handshaken within ``timeout`` s.

    ReplayError otherwise: Dask's own timeout covers the TCP connection, not the handshake,
    so a peer that accepts and never answers (an HTTP server waiting for its request line)
    held the run for minutes; a peer that answers garbage made Dask allocate what its first
    8 bytes said (3 EiB for "HTTP/1.1"). The client is made on a thread given ``timeout``;
    one that never finishes is left behind (a daemon thread: the run ends with status 2).
    """
    made = {}

    def connect():
        try:
            made["client"] = client_class(scheduler, timeout=f"{timeout}s")
        except BaseException as exc:          # reported by the waiting thread
            made["error"] = (type(exc), shorten(exc, 120))
        # A client whose start failed lives on in its exception's traceback; collected later
        # in another thread, its __del__ takes Dask's LoopRunner lock, which a new client
        # holds while its loop thread starts: if the collection runs in that very thread the
        # two wait for each other (10 s, then an AssertionError in Dask: seen in the suite).
        # The exception is kept as text, and the half-made client collected here, now.
        gc.collect()
    what = f"--scheduler {excerpt(scheduler, 60)}"
    thread = threading.Thread(target=connect, daemon=True, name="rbd_scheduler_connect")
    thread.start()
    thread.join(timeout + 1.0)
    if thread.is_alive():
        raise ReplayError(f"{what}: no Dask scheduler answered within {timeout:g} s (connection "
                          "and handshake): is it the address of a Dask scheduler?")
    if "error" in made:
        kind, message = made["error"]
        if issubclass(kind, (OSError, TimeoutError)):
            raise ReplayError(f"{what}: cannot reach it ({message})")
        raise ReplayError(f"{what}: what answered is not a Dask scheduler (its answer does "
                          f"not follow Dask's protocol: {kind.__name__})")
    return made["client"]
