"""
The planner process's watchdog wakes its idle main loop only when there is something to do.

The main loop sleeps in its rclpy executor; the watchdog (``planner.child.ParentWatch``)
triggers the loop's guard condition when the node's socket holds a robot or settings to read
(once: not again while it is unread), when a stop signal comes (the Python handler cannot run
while the main thread waits in the executor) and when the node is gone. Run as the child runs
it (a real rclpy context, node, executor and guard condition), in a process of its own: a
watchdog whose main thread does not say it is leaving ends its process. Each wait is bounded
by a 10 s executor timeout and judged against 5 s: a wake that does not come fails, however
busy the machine.
"""
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

SCRIPT = r'''
import os, signal, socket, threading, time
from rbd_ros.node.planner import child
child.GRACE = child.CLEAN_UP = 60.0          # this script, not the watchdog, ends the process
import rclpy
from rclpy.executors import SingleThreadedExecutor
from rclpy.signals import SignalHandlerOptions

stop = []                                          # as the child: its handlers, not rclpy's
signal.signal(signal.SIGTERM, lambda signum, frame: stop.append(signum))
rclpy.init(signal_handler_options=SignalHandlerOptions.NO)
node = rclpy.create_node("planner_watch_test")
executor = SingleThreadedExecutor()
executor.add_node(node)
wakes = []
guard = node.create_guard_condition(lambda: wakes.append(time.monotonic()))
mine, peer = socket.socketpair()
watch = child.ParentWatch(os.getppid(), mine.fileno(), lambda: bool(stop), child.signal_pipe())


def spin_once():
    """Seconds the executor waited (10 s: nothing woke it)."""
    start = time.monotonic()
    executor.spin_once(timeout_sec=10.0)
    return time.monotonic() - start


watch.wake_with(guard.trigger)
assert spin_once() < 5.0 and len(wakes) == 1, "wake_with's own wake"
peer.send(b"robot")
assert spin_once() < 5.0 and len(wakes) == 2, "not woken for a robot to read"
time.sleep(5 * child.WATCH_POLL)                   # unread: no second wake for it
executor.spin_once(timeout_sec=0.0)
assert len(wakes) == 2, f"woken {len(wakes) - 2} more times for one unread robot"
assert mine.recv(16) == b"robot"
watch.taken()
peer.send(b"settings")
assert spin_once() < 5.0 and len(wakes) == 3, "not woken for the next one once read"
assert mine.recv(16) == b"settings"
watch.taken()
threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGTERM)).start()
assert spin_once() < 5.0, "a stop signal did not wake the executor's wait"
assert watch.gone.wait(5.0) and stop == [signal.SIGTERM], stop
watch.done()
node.destroy_node()
rclpy.shutdown()
mine2, peer2 = socket.socketpair()                 # the node's end: a hang-up
gone = child.ParentWatch(os.getppid(), mine2.fileno(), lambda: False)
peer2.close()
assert gone.gone.wait(5.0), "the node's end not noticed"
gone.done()
print("OK")
'''


def test_the_watchdog_wakes_the_loop_for_the_socket_a_signal_and_the_end():
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([ROOT] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH")
                                                  else []))
    result = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True,
                            env=env, timeout=120)
    assert result.returncode == 0 and result.stdout.strip() == "OK", (result.stdout
                                                                      + result.stderr)
