"""
The rules of the whole rbd_ros test suite; the helpers tests import are in ``helpers.py``.

The tests are in folders by the layer they test, each with a conftest of its own:

* ``core/``: the model, the algorithms, batch, rollout, wrenches, identification, retiming,
  the URDF reader and its fuzzing. No ROS: ``pytest test/core`` runs wherever numpy, numba,
  rbd_ros and the test extras are installed (``test_core_without_ros.py`` checks it);
* ``node/``: everything that starts rclpy (DDS on loopback), the node's processes, its
  launch file and the ``ros2`` command line; ``node/conftest.py`` checks the ROS
  environment once for the folder;
* ``replay/``: the rosbag replay and its fleet (Dask) runs;
* here, at the root: checks of the project as a whole (flake8, pydocstyle, the manual, the
  examples, package.xml, the README's commands, a colcon workspace) and the modules every
  layer shares (``helpers.py``, ``oracle.py`` the robot set and Pinocchio, ``corpus.py`` and
  ``corpus_cases.py``, ``mimic_oracle.py``, ``contact_sim.py``, ``pinocchio_oracles.py``,
  ``identification_oracles.py``, ``retime_paths.py``, ``messages.py``, ``ros_cli.py``).

Test files are imported by basename (pytest's default "prepend" import mode, no
``__init__.py``): a basename must be unique across the folders (pytest refuses a second one).
This folder is put on sys.path here, so a test of any layer imports the shared modules
(``import oracle``); ``node/`` and ``replay/`` are on it once pytest imports a test of
theirs, for their own helper modules (``node_cases.py``, ``replay/bag_records.py``, ...).
A test module never imports another test module (``test_package_layers`` checks it): what
two test files share is in a helper module, so importing one test file runs no other's
module-level code.

Comparisons with Pinocchio (``pin`` on PyPI) carry the ``pinocchio`` marker (given
explicitly, or by using the ``pin`` fixture), so ``pytest -m pinocchio`` and ``pytest -m
"not pinocchio"`` run one kind each. A missing Pinocchio or example-robot-data skips the tests
that need it, except when the environment variable ``CI`` is ``true``: there it fails them,
since a skipped oracle test in CI is no coverage. The same holds for every skip (issue 28):
under ``CI=true`` a skipped test, or a module skipped at collection (a missing ROS
environment in ``node/``, the ROS command-line tools missing), fails the run unless
``CI_ALLOWED_SKIPS`` lists it with its reason. Without ``CI`` they skip, so ``pytest test/``
runs what it can without ROS.
"""
import os
import sys

import pytest

TEST_DIR = os.path.dirname(os.path.abspath(__file__))
if TEST_DIR not in sys.path:
    sys.path.insert(0, TEST_DIR)

from helpers import IN_CI, require_module  # noqa: E402


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

CI_ALLOWED_SKIPS = {
    # "test_file.py" (the whole module) or "test_file.py::test_name" (every parametrization
    # of it): the reason that test may skip in CI. Keep it empty: a skip in CI is no coverage.
}
"""The skips CI (CI=true) accepts, with their reasons; any other skip there fails the run."""


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


# Hypothesis (the fuzz suites: core/test_fuzz*.py, node/test_fuzz_services.py): deterministic
# and bounded by default (CI); `pytest --hypothesis-profile=long test/core/test_fuzz.py` for a
# longer, randomized campaign.
try:
    from hypothesis import HealthCheck, settings
except ImportError:      # the fuzz tests skip (fail in CI) without it
    pass
else:
    settings.register_profile("default", derandomize=True, max_examples=60, deadline=None,
                              suppress_health_check=[HealthCheck.too_slow],
                              print_blob=True)
    settings.register_profile("long", derandomize=False, max_examples=5000, deadline=None,
                              suppress_health_check=[HealthCheck.too_slow], print_blob=True)
    settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))
