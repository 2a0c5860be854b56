"""
The helpers the tests of every layer import: skip rules, seeds, threads, the robot set.

They live here, not in ``conftest.py``: each layer folder (core, node, replay) has a
conftest of its own, and pytest imports every one of them as the module ``conftest``, so
``from helpers import ...`` would get whichever was imported last. This module imports
neither rclpy nor any ROS package (``test/core`` runs without ROS: test_core_without_ros.py).
"""
import functools
import importlib
import os
import random
import threading

import numpy as np
import pytest

from oracle import (BAD_DIR, BUNDLED_DIR, ERD, EXAMPLE_ROBOT_DATA_ROBOTS,  # noqa: F401
                    FIXED_ROBOTS, FLOATING_ROBOTS, ROBOT_NAMES, ROBOTS, ROOT, TEST_DIR,
                    URDF_DIR, Robot, assert_close, available, has_mimic, load_quietly,
                    rel_err, strip_mimic)

IN_CI = os.environ.get("CI", "").lower() == "true"
"""True where a missing test dependency must fail the tests that need it (CI=true)."""

SEEDS = (0, 1, 2, 3, 4)


def random_payload(seed):
    """Return (mass, com, centroidal inertia) of a random rigid body."""
    rng = np.random.default_rng(seed)
    R = np.linalg.qr(rng.normal(size=(3, 3)))[0]
    moments = rng.uniform(0.01, 0.05, 3)
    return 0.5 + rng.uniform(0, 2), rng.normal(scale=0.1, size=3), R @ np.diag(moments) @ R.T


def run_threads(work, n):
    """
    Run ``work(k)`` for k in range(n) on n threads started together; return their results.

    An exception in a worker is raised here (the first, saying how many raised): a bare
    ``threading.Thread`` would only print it as a warning, and the test would pass.
    """
    results, errors = [None] * n, []
    barrier = threading.Barrier(n)

    def run(k):
        try:
            barrier.wait(timeout=60)
            results[k] = work(k)
        except BaseException as exc:     # noqa: B902 -- every failure goes to the test
            errors.append((k, exc))
    threads = [threading.Thread(target=run, args=(k,)) for k in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        k, exc = errors[0]
        raise AssertionError(f"{len(errors)} of {n} threads raised; thread {k}: "
                             f"{exc!r}") from exc
    return results


def ros_domain_id():
    """
    Return this test process's ROS_DOMAIN_ID (a string), drawn from 101-200 unless set.

    The node tests set it likewise at import, before rclpy starts; a test that starts ROS
    processes gives them this one, so parallel runs (each its own domain) do not mix.
    """
    return os.environ.setdefault("ROS_DOMAIN_ID", str(random.randint(101, 200)))


def missing(what):
    """Skip the running test for lack of ``what``; in CI (CI=true) fail it instead."""
    if IN_CI:
        pytest.fail(f"{what} is not installed, and CI=true: a test that needs it must run "
                    f"there, not skip (pip install -e '.[test]')", pytrace=False)
    pytest.skip(f"{what} is not installed")


def require_module(module, distribution):
    """Import ``module``; skip (fail in CI) when it cannot be imported."""
    try:
        return importlib.import_module(module)
    except ImportError:
        missing(f"{distribution} (import {module})")


def robot_path(name):
    """Return the URDF of the robot ``name``; skip (fail in CI) without example-robot-data."""
    if not available(name):
        missing("example-robot-data")
    return ROBOTS[name][0]


def example_robot_data_robots():
    """
    Return the example-robot-data robots that are installed: all of them, or none.

    With none it fails the test in CI; elsewhere the caller checks the robots it has.
    """
    if ERD is None:
        if IN_CI:
            missing("example-robot-data")
        return ()
    return EXAMPLE_ROBOT_DATA_ROBOTS


@functools.lru_cache(maxsize=None)
def _robot(name):
    return Robot(name)


def get_robot(name):
    """
    Return the :class:`oracle.Robot` ``name`` (cached).

    Its Pinocchio side is built only when a test uses it, which only tests marked
    ``pinocchio`` may do.
    """
    robot_path(name)
    return _robot(name)


def first_missing(modules):
    """Return ``(module, error)`` for the first of ``modules`` that does not import, or None."""
    for module in modules:
        try:
            importlib.import_module(module)
        except ImportError as exc:
            return module, exc
    return None


class SkippedModule(pytest.Module):
    """
    A test module skipped at collection, with ``reason``, instead of imported.

    A layer's conftest makes its modules these (``pytest_pycollect_makemodule``) when the
    layer's environment is missing: one check per folder instead of a copy in each module.
    The skip is an ordinary collection report, so the root conftest fails it under CI=true.
    """

    reason = "skipped"

    def collect(self):
        pytest.skip(self.reason)


def skipped_module(parent, module_path, reason):
    """Return the module at ``module_path`` as a :class:`SkippedModule` saying ``reason``."""
    module = SkippedModule.from_parent(parent, path=module_path)
    module.reason = reason
    return module


def assert_generated_module_is_current(generator, command):
    """Assert the module a generator checked in (``generator.PATH``) is what it writes now."""
    name = os.path.basename(generator.PATH)
    with open(generator.PATH, encoding="utf-8") as f:
        assert f.read() == generator.module_source(), f"{name} is stale: run {command}"
    assert generator.main(["--check"]) == 0


def assert_a_stale_module_is_reported(generator, command, tmp_path, monkeypatch, capsys):
    """Assert ``--check`` on a stale copy says to run ``command`` and writes nothing."""
    stale = tmp_path / os.path.basename(generator.PATH)
    stale.write_text("# an older module\n")
    monkeypatch.setattr(generator, "PATH", str(stale))
    assert generator.main(["--check"]) == 1
    assert f"run {command}" in capsys.readouterr().err
    assert stale.read_text() == "# an older module\n"          # --check writes nothing
    assert generator.main([]) == 0
    assert stale.read_text() == generator.module_source()
