"""
Files named by a user are read bounded in time and size, or refused naming what they are.

A FIFO as ``joint_parameters_file``, an ``@LIST``, a URDF path or ``rbd_replay --urdf``
hung the reader forever (a blocking ``open()`` waits for a writer); ``/dev/zero`` never ends;
a directory or a file of gigabytes is no parameter file; a deeply nested JSON failed with
Python's "maximum recursion depth exceeded" without naming the file. Each read runs on a
thread given a few seconds: a reader that blocks fails the test instead of hanging it.
"""
import os
import threading

import pytest

import rbd_ros
from rbd_ros.actuation import joint_parameters as joint_friction
from rbd_ros.formats import text_files
from rbd_ros.node import parameters
from rbd_ros.replay import fleet_inputs, one_bag
from rbd_ros.replay.errors import ReplayError

BOUND = 10.0        # s: a read that has not returned by then blocks (each takes milliseconds)


def outcome(read, *args):
    """Run ``read(*args)`` on a thread; return its exception (None: it returned)."""
    found = {}

    def run():
        try:
            read(*args)
            found["error"] = None
        except Exception as exc:
            found["error"] = exc
    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(BOUND)
    assert "error" in found, f"{read.__name__} still blocks after {BOUND} s"
    return found["error"]


@pytest.fixture
def fifo(tmp_path):
    path = tmp_path / "fifo"
    os.mkfifo(path)
    return str(path)


@pytest.fixture
def huge(tmp_path):
    """Give a sparse file of 4 GiB (no disk used): refused by its size, not read."""
    path = tmp_path / "huge.json"
    with open(path, "wb") as f:
        f.truncate(4 << 30)
    return str(path)


def not_regular(kind):
    return f"it is {kind}, not a regular file"


CASES = [("fifo", "a FIFO (named pipe)"), ("/dev/zero", "a character device"),
         ("dir", "a directory")]


def case_path(which, fifo, tmp_path):
    return {"fifo": fifo, "dir": str(tmp_path)}.get(which, which)


@pytest.mark.parametrize("which,kind", CASES)
def test_read_text_refuses_what_is_not_a_regular_file(which, kind, fifo, tmp_path):
    error = outcome(text_files.read_text, case_path(which, fifo, tmp_path), 1 << 20)
    assert isinstance(error, ValueError) and str(error) == not_regular(kind)


def test_read_text_refuses_a_huge_file_by_its_size(huge):
    error = outcome(text_files.read_text, huge, 1 << 20)
    assert isinstance(error, ValueError)
    assert str(error) == f"larger than 1 MiB ({4 << 30} bytes)"


def test_read_text_reads_a_regular_file(tmp_path):
    path = tmp_path / "ok.txt"
    path.write_text("été\n", encoding="utf-8")
    assert text_files.read_text(str(path), 100) == "été\n"
    assert "larger than" in str(outcome(text_files.read_text, str(path), 3))


def joint_parameters_file(path):
    return parameters.joint_parameters_text({"joint_parameters_file": path,
                                             "urdf_joint_dynamics": False})


@pytest.mark.parametrize("which,kind", CASES)
def test_the_node_refuses_a_joint_parameters_file_that_is_not_a_file(
        which, kind, fifo, tmp_path):
    path = case_path(which, fifo, tmp_path)
    error = outcome(joint_parameters_file, path)
    assert isinstance(error, ValueError)
    assert str(error).startswith(f"joint_parameters_file {path!r}: {not_regular(kind)}")


def test_the_node_refuses_a_huge_joint_parameters_file(huge):
    error = outcome(joint_parameters_file, huge)
    assert isinstance(error, ValueError) and huge in str(error) and "larger than" in str(error)


def test_a_deeply_nested_joint_parameters_file_is_refused_naming_it(tmp_path):
    path = tmp_path / "nested.json"
    path.write_text("[" * 200_000 + "]" * 200_000)
    error = outcome(joint_parameters_file, str(path))
    assert isinstance(error, ValueError)
    assert str(error) == (f"joint_parameters_file {str(path)!r}: "
                          f"{joint_friction.NESTED}")
    doc = '{"format": "%s", "joints": %s}' % (joint_friction.FORMAT,
                                              "[" * 200_000 + "]" * 200_000)
    with pytest.raises(ValueError, match="nested too deeply"):
        joint_friction.JointParameters.from_json(doc, ("j1",))


@pytest.mark.parametrize("which,kind", CASES)
def test_a_bag_list_that_is_not_a_file_is_refused(which, kind, fifo, tmp_path):
    path = case_path(which, fifo, tmp_path)
    error = outcome(fleet_inputs.expand, ["@" + path])
    assert isinstance(error, ReplayError)
    assert not_regular(kind) in str(error) and "bag list" in str(error)


@pytest.mark.parametrize("which,kind", CASES)
def test_a_urdf_path_that_is_not_a_file_is_refused(which, kind, fifo, tmp_path):
    path = case_path(which, fifo, tmp_path)
    error = outcome(rbd_ros.load_model, path)
    assert isinstance(error, rbd_ros.URDFError) and not_regular(kind) in str(error)
    error = outcome(one_bag.read_urdf_argument, path)
    assert isinstance(error, ReplayError) and not_regular(kind) in str(error)


def test_a_huge_urdf_file_is_refused_by_its_size(huge):
    error = outcome(rbd_ros.load_model, huge)
    assert isinstance(error, rbd_ros.URDFError) and "larger than 4 MiB" in str(error)
    error = outcome(one_bag.read_urdf_argument, huge)
    assert isinstance(error, ReplayError) and "larger than 4 MiB" in str(error)
