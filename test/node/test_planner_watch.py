"""
The planner process's watchdog wakes its idle main loop only when there is something to do.

The main loop sleeps in its executor; the watchdog (``planner.child.ParentWatch``) wakes it
when the node's socket holds a robot or settings to read (once: not again until the loop
has read it) and when the node is gone (the socket's peer hung up). Run in a process of its
own: a watchdog whose main thread does not say it is leaving ends its process.
"""
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

SCRIPT = r'''
import os, socket, threading
from rbd_ros.node.planner import child

mine, node = socket.socketpair()
woken = threading.Event()
watch = child.ParentWatch(os.getppid(), mine.fileno(), lambda: False)
watch.wake_with(woken.set)
assert not woken.wait(3 * child.WATCH_POLL), "woken with nothing to read"
node.send(b"robot")
assert woken.wait(5.0), "not woken for a robot to read"
assert not watch.gone.is_set()
assert mine.recv(16) == b"robot"
woken.clear()
watch.taken()
assert not woken.wait(3 * child.WATCH_POLL), "woken again after the robot was read"
node.close()                                       # the node is gone
assert watch.gone.wait(5.0) and woken.wait(5.0), "the node's end not noticed"
watch.done()
print("OK")
'''


def test_the_watchdog_wakes_the_loop_for_the_socket_and_for_the_end():
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([ROOT] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH")
                                                  else []))
    result = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True,
                            env=env, timeout=120)
    assert result.returncode == 0 and result.stdout.strip() == "OK", (result.stdout
                                                                      + result.stderr)
