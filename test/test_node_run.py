"""``bench/node_run.py``: the command that starts the node; ``bench/proc_cpu.py``: its CPU."""
import argparse
import ctypes
import os
import subprocess
import sys
import threading
import time

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "bench"))
import node_run  # noqa: E402
import proc_cpu  # noqa: E402
from node_command import COMMAND  # noqa: E402
from node_trees import FloorTree, SourceTree  # noqa: E402

from rbd_ros.node.parameters import PARAMETERS, enabled_outputs  # noqa: E402
from rbd_ros.outputs import NAMES, OBSERVER_BY_NAME  # noqa: E402


PR_SET_NAME = 15                                  # prctl(2): the calling thread's name


def arguments(fixed_base=False):
    return argparse.Namespace(fixed_base=fixed_base, executor="events", contact_frame="hand",
                              end_effector="wrist", command_joints=["j1", "j2"],
                              urdf_path="robot.urdf")


def parameters(cmd):
    """[(name, value)] of the command's ``-p name:=value`` arguments, in order."""
    return [tuple(cmd[k + 1].split(":=", 1)) for k in range(len(cmd) - 1) if cmd[k] == "-p"]


def node_parameters(cmd):
    """Return the node's parameters as the command leaves them: its defaults, then each -p."""
    params = {name: default for name, (default, _) in PARAMETERS.items()}
    for name, text in parameters(cmd):
        assert name in PARAMETERS, f"-p {name}: not a parameter of the node"
        default = PARAMETERS[name][0]
        params[name] = (text == "true") if isinstance(default, bool) else text
    return params


def tree():
    return SourceTree.__new__(SourceTree)        # the command only: no tree extracted


@pytest.mark.parametrize("fixed_base", [False, True])
@pytest.mark.parametrize("output", list(NAMES) + list(OBSERVER_BY_NAME))
def test_each_output_alone_is_what_the_node_turns_on(output, fixed_base):
    """
    One output named: the node's parameters turn it on, and no other output of the table.

    ~/end_effector is on where its frame is named, the centroidal momentum with the centre
    of mass (a floating base's only): no publish_ flag of their own (a run of every output
    once counted ~/end_effector missing on every message, given publish_end_effector).
    """
    cmd = node_run.command_line(arguments(fixed_base), tree(), [output])
    names = [name for name, _ in parameters(cmd)]
    assert len(names) == len(set(names)), names          # no parameter given twice
    params = node_parameters(cmd)
    params["floating_base"] = not fixed_base
    on = set(enabled_outputs(params))
    if output in OBSERVER_BY_NAME:
        assert params[OBSERVER_BY_NAME[output].parameter] is True
        assert on == set()
    elif output in ("center_of_mass", "centroidal_momentum"):   # one flag for the two
        assert on == ({"center_of_mass"} if fixed_base
                      else {"center_of_mass", "centroidal_momentum"})
    else:
        assert on == {output}
    if output == "end_effector":
        assert params["end_effector_frame"] == "wrist"


def test_every_output_at_once_and_the_command_and_contact_wrench():
    everything = list(NAMES) + ["external_torques", "contact_wrench", COMMAND]
    cmd = node_run.command_line(arguments(), tree(), everything)
    params = node_parameters(cmd)
    params["floating_base"] = True
    assert set(enabled_outputs(params)) == set(NAMES)
    assert params["contact_frame"] == "hand" and params["publish_external_torques"] is True
    assert params["command_joints"] == "[j1, j2]"
    assert ("floating_base", "true") in parameters(cmd)


def test_the_floor_is_started_with_its_calls_and_the_contact_frame():
    source = tree()
    source.path, source.cache = "/repo", None
    cmd = node_run.command_line(arguments(fixed_base=True), FloorTree(source, pinocchio=True),
                                ["torques", "contact_wrench"])
    assert os.path.basename(cmd[1]) == "node_floor.py"
    assert cmd[cmd.index("--outputs") + 1] == "torques,contact_wrench"
    assert cmd[cmd.index("--contact-frame") + 1] == "hand"
    assert "--pinocchio" in cmd and "--core" not in cmd and "--floating-base" not in cmd


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
    child = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"],
                             stdin=subprocess.PIPE)
    threads = []
    try:
        time.sleep(0.3)                            # the child's start-up, before the first look
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
        assert spent - 2 * tick <= got <= spent + 0.1, (gained, spent)
