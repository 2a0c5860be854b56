"""
The ROS 2 command line as a user runs it, for the end-to-end tests.

``ros2 launch``, ``run``, ``param``, and ``colcon``. The tools come from
``../shared/ros-tools`` (``./dev.sh setup`` installs them into the venv; not on PyPI), and
``ros2 launch/run rbd_ros`` need the venv to be an ament prefix for rbd_ros
(``scripts/ament_prefix.py``, also run by ``./dev.sh setup``). Without them a test skips with
the reason, except in CI (CI=true), where it fails: :func:`require_ros2`.

Processes run in a session of their own (a process group: ``ros2 launch`` and the nodes it
starts) and are stopped as a terminal's Ctrl-C stops them, SIGINT to the whole group
(:func:`stop`). Their output goes to a log file the test reads.
"""
import os
import signal
import subprocess
import sys
import time

from helpers import missing

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.dirname(sys.executable)
PACKAGE_MARKER = os.path.join("share", "ament_index", "resource_index", "packages", "rbd_ros")


def require_ros2():
    """Return the path of ``ros2``; skip (fail in CI) without the tools or the ament prefix."""
    ros2 = os.path.join(BIN, "ros2")
    if not os.access(ros2, os.X_OK):
        missing("the ROS 2 command-line tools (ros2; ./dev.sh setup installs them from "
                "../shared/ros-tools)")
    if not os.path.isfile(os.path.join(sys.prefix, PACKAGE_MARKER)):
        missing(f"rbd_ros in the ament index of {sys.prefix} (./dev.sh setup runs "
                "scripts/ament_prefix.py)")
    return ros2


def environment(domain, **extra):
    """Return the environment of a ROS process of the tests: loopback, domain ``domain``."""
    env = dict(os.environ, ROS_DOMAIN_ID=str(domain), ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST",
               PYTHONUNBUFFERED="1", RCUTILS_COLORIZED_OUTPUT="0")
    env["AMENT_PREFIX_PATH"] = os.pathsep.join(
        p for p in [env.get("AMENT_PREFIX_PATH", ""), sys.prefix] if p)
    env.update(extra)
    return env


def start(command, log_path, env, cwd=None):
    """Start ``command`` in a session of its own, output to ``log_path``; return the Popen."""
    with open(log_path, "w") as log:
        return subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env,
                                cwd=cwd, start_new_session=True,
                                preexec_fn=_default_sigint)


def _default_sigint():
    # a process started from a non-interactive shell may inherit SIGINT ignored: ros2 launch
    # would then never stop on Ctrl-C
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def stop(proc, timeout=30.0):
    """
    Stop ``proc`` and its process group with SIGINT (a terminal's Ctrl-C); return its status.

    What is still there after ``timeout`` is killed (and the status is then the kill's).
    """
    try:
        os.killpg(proc.pid, signal.SIGINT)
    except ProcessLookupError:
        pass
    try:
        return proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        return None
    finally:
        kill(proc)


def kill(proc):
    """Kill whatever is left of ``proc``'s process group."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    if proc.poll() is None:
        proc.wait()


def run(command, env, timeout=60.0, cwd=None):
    """Run ``command`` to its end; return (status, output)."""
    done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env,
                          timeout=timeout, text=True, cwd=cwd)
    return done.returncode, done.stdout


def read(path):
    with open(path, errors="replace") as f:
        return f.read()


def wait_log(path, text, proc, timeout=120.0):
    """Wait until the log at ``path`` contains ``text``; fail if ``proc`` ends first."""
    deadline = time.monotonic() + timeout
    while text not in read(path):
        if proc.poll() is not None:
            raise AssertionError(f"the process ended ({proc.returncode}) before {text!r}:\n"
                                 f"{read(path)[-3000:]}")
        if time.monotonic() > deadline:
            raise AssertionError(f"no {text!r} within {timeout} s:\n{read(path)[-3000:]}")
        time.sleep(0.1)


def assert_clean_stop(status, log):
    """Assert a stop with exit status 0, no traceback, no abort (issue 13's Ctrl-C)."""
    assert status == 0, f"exit status {status}:\n{log[-3000:]}"
    for bad in ("Traceback", "KeyboardInterrupt", "terminate called", "Fatal Python error",
                "exit code -6", "has died"):
        assert bad not in log, f"{bad!r} in the log:\n{log[-3000:]}"
