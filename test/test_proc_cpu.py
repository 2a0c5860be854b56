"""``bench/proc_cpu.py``: a process's CPU by thread group, against busy loops of known CPU."""
import ctypes
import os
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "bench"))
import proc_cpu  # noqa: E402

PR_SET_NAME = 15                                  # prctl(2): the calling thread's name


def _busy(seconds):
    """Spend ``seconds`` of this thread's CPU (time.thread_time, the oracle)."""
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        pass


def _named_busy(name, seconds, spent, release):
    """In a thread named ``name`` for the kernel (its /proc comm): spend ``seconds``, wait."""
    ctypes.CDLL(None).prctl(PR_SET_NAME, name.encode(), 0, 0, 0)
    _busy(seconds)
    spent.set()
    release.wait(30)


def test_cpu_by_thread_splits_the_main_thread_fast_dds_others_and_children():
    """Each group gains the CPU a busy loop of its own spent (to the clock tick), no other."""
    pid, tick = os.getpid(), 1.0 / os.sysconf("SC_CLK_TCK")
    child = subprocess.Popen(
        [sys.executable, "-c", "import sys; print('up', flush=True); sys.stdin.read()"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    threads = []
    try:
        assert child.stdout.readline() == "up\n"   # its start-up done before the first look
        before = proc_cpu.cpu_by_thread(pid)
        _busy(0.3)                                 # the main thread
        # a Fast DDS thread's name, another's; a third thread that ends before the second look
        for name, seconds in (("dds.ev.test", 0.2), ("worker", 0.1), ("ended", 0.1)):
            spent, release = threading.Event(), threading.Event()
            threads.append((threading.Thread(target=_named_busy,
                                             args=(name, seconds, spent, release)), release))
            threads[-1][0].start()
            assert spent.wait(30)
        release.set()
        threads[-1][0].join()
        after = proc_cpu.cpu_by_thread(pid)
    finally:
        for thread, release in threads:
            release.set()
            thread.join()
        child.stdin.close()
        child.wait(10)
    gained = [b - a for a, b in zip(before, after)]
    # main 0.3 s, Fast DDS 0.2 s, the others 0.1 + 0.1 s (the ended thread's by the process's
    # total), the idle child ~0; the test's own work between the looks adds a little to each
    for got, spent in zip(gained, (0.3, 0.2, 0.2, 0.0)):
        # each group's figure is up to three tick-truncated readings
        assert spent - 3 * tick <= got <= spent + 0.1, (gained, spent)
