"""
Shared fixtures of the rbd_ros test suite (the robot set lives in ``oracle.py``).

The suite has two layers:

* the core layer (self-consistency: identities such as M M⁻¹ = I and ABA(RNEA(a)) = a, finite
  differences, hand computations, error paths) needs only numpy, numba and rbd_ros, plus the
  ``example-robot-data`` data package for its URDFs (panda, ur5, hyq, talos);
* the oracle layer compares with Pinocchio (``pin`` on PyPI): its tests carry the
  ``pinocchio`` marker (given explicitly, or by using the ``pin`` fixture), so
  ``pytest -m pinocchio`` and ``pytest -m "not pinocchio"`` run one layer each.

A missing Pinocchio or example-robot-data skips the tests that need it, except when the
environment variable ``CI`` is ``true``: there it fails them, since a skipped oracle test in
CI is no coverage. The same holds for every skip (issue 28): under ``CI=true`` a skipped
test, or a module skipped at collection (``pytest.importorskip("rclpy")`` without ROS, the
ROS command-line tools missing), fails the run unless ``CI_ALLOWED_SKIPS`` lists it with its
reason. Without ``CI`` they skip, so ``pytest test/`` runs what it can without ROS.
"""
import functools
import importlib
import os
import random
import sys
import threading

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from oracle import (BAD_DIR, BUNDLED_DIR, ERD, EXAMPLE_ROBOT_DATA_ROBOTS,  # noqa: E402,F401
                    FIXED_ROBOTS, FLOATING_ROBOTS, ROBOT_NAMES, ROBOTS, URDF_DIR, Robot,
                    assert_close, available, has_mimic, load_quietly, rel_err, strip_mimic)


def _hide_the_interfaces_source():
    """
    Make ``import rbd_ros_interfaces`` fail where only its source folder is found.

    ``python -m pytest`` puts the checkout on sys.path, where the folder rbd_ros_interfaces/
    (its .msg and .srv files, no __init__.py) imports as an empty namespace package when the
    built package is not installed: ``pytest.importorskip("rbd_ros_interfaces")`` passed, and
    the module failed later on a missing message class instead of skipping.
    """
    try:
        import rbd_ros_interfaces
    except ImportError:
        return
    if getattr(rbd_ros_interfaces, "__file__", None) is None:     # a namespace package
        for name in [n for n in sys.modules if n.split(".")[0] == "rbd_ros_interfaces"]:
            del sys.modules[name]
        sys.meta_path.insert(0, _InterfacesNotBuilt())


class _InterfacesNotBuilt:
    """An import finder refusing rbd_ros_interfaces with the reason."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname.split(".")[0] != "rbd_ros_interfaces":
            return None
        raise ModuleNotFoundError("rbd_ros_interfaces is not built (./dev.sh setup builds "
                                  "it): only its source folder is on sys.path", name=fullname)


_hide_the_interfaces_source()

IN_CI = os.environ.get("CI", "").lower() == "true"
"""True where a missing test dependency must fail the tests that need it (CI=true)."""

SEEDS = (0, 1, 2, 3, 4)

CI_ALLOWED_SKIPS = {
    # "test_file.py" (the whole module) or "test_file.py::test_name" (every parametrization
    # of it): the reason that test may skip in CI. Keep it empty: a skip in CI is no coverage.
}
"""The skips CI (CI=true) accepts, with their reasons; any other skip there fails the run."""


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


@pytest.fixture(scope="session")
def pin():
    """Import pinocchio (tests that use this fixture are in the oracle layer)."""
    return require_module("pinocchio", "Pinocchio (pip: pin)")


@pytest.fixture(autouse=True)
def _oracle_layer(request):
    """
    Skip tests marked ``pinocchio`` without Pinocchio (fail them in CI).

    The other tests must not need it, which a run without Pinocchio checks.
    """
    if request.node.get_closest_marker("pinocchio") is not None:
        request.getfixturevalue("pin")


@pytest.fixture(params=ROBOT_NAMES)
def robot(request):
    """Every robot of the set (its Pinocchio side is built only if a test uses it)."""
    return get_robot(request.param)


@pytest.fixture(params=FLOATING_ROBOTS)
def floating_robot(request):
    """Every floating-base robot of the set."""
    return get_robot(request.param)


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "pinocchio: compares with Pinocchio (the oracle layer; also set on every "
        "test that uses the 'pin' fixture)")
    # the markers of ament_lint's pytest tests, which test_flake8 and test_pep257 mirror
    for marker in ("linter", "flake8", "pep257"):
        config.addinivalue_line("markers", f"{marker}: a linter test, as ament_lint's")


def _allowed_in_ci(nodeid):
    """Tell whether ``CI_ALLOWED_SKIPS`` lists the test or module ``nodeid``."""
    path, sep, rest = nodeid.partition("::")
    key = os.path.basename(path) + sep + rest
    return any(key == entry or key.startswith((entry + "::", entry + "["))
               for entry in CI_ALLOWED_SKIPS)


def _fail_a_skip_in_ci(report):
    """Turn the skipped ``report`` into a failure, in CI, unless the skip is allowed."""
    if not (IN_CI and report.skipped) or hasattr(report, "wasxfail") \
            or _allowed_in_ci(report.nodeid):
        return
    longrepr = report.longrepr
    reason = longrepr[2] if isinstance(longrepr, tuple) and len(longrepr) == 3 else longrepr
    reason = str(reason).removeprefix("Skipped: ")
    report.outcome = "failed"
    report.longrepr = (f"skipped under CI=true ({reason}): in CI every test runs; install "
                       f"what it needs, or list it in conftest.CI_ALLOWED_SKIPS with the reason")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    _fail_a_skip_in_ci(outcome.get_result())


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    # a module-level pytest.importorskip / pytest.skip skips the whole module at collection
    outcome = yield
    _fail_a_skip_in_ci(outcome.get_result())


def pytest_collection_modifyitems(config, items):
    for item in items:
        if "pin" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.pinocchio)


# Hypothesis (the fuzz suite, test/test_fuzz.py): deterministic and bounded by default (CI);
# `pytest --hypothesis-profile=long test/test_fuzz.py` for a longer, randomized campaign.
try:
    from hypothesis import HealthCheck, settings
except ImportError:      # test_fuzz.py skips (fails in CI) without it
    pass
else:
    settings.register_profile("default", derandomize=True, max_examples=60, deadline=None,
                              suppress_health_check=[HealthCheck.too_slow],
                              print_blob=True)
    settings.register_profile("long", derandomize=False, max_examples=5000, deadline=None,
                              suppress_health_check=[HealthCheck.too_slow], print_blob=True)
    settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))
