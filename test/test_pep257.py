"""
pydocstyle over the package, as ament_python packages run ament_pep257 in their tests.

ament_pep257 is not on PyPI, so this runs pydocstyle itself with ament_pep257's default:
every check except D100-D107 (missing docstrings), D203, D212 and D404, configured by the
``[pydocstyle]`` section of setup.cfg. Without pydocstyle the test skips, except where
CI=true: there it fails.
"""
import configparser
import os
import subprocess
import sys

import pytest

from helpers import require_module

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
AMENT_PEP257_IGNORE = ("D100", "D101", "D102", "D103", "D104", "D105", "D106", "D107",
                       "D203", "D212", "D404")


def test_setup_cfg_has_the_ament_ignore_list():
    """setup.cfg ignores exactly what ament_pep257 ignores, no more."""
    config = configparser.ConfigParser()
    config.read(os.path.join(ROOT, "setup.cfg"), encoding="utf-8")
    ignore = config.get("pydocstyle", "ignore")
    assert tuple(code.strip() for code in ignore.split(",")) == AMENT_PEP257_IGNORE


@pytest.mark.linter
@pytest.mark.pep257
def test_pep257():
    require_module("pydocstyle", "pydocstyle")
    result = subprocess.run([sys.executable, "-m", "pydocstyle", "."], cwd=ROOT,
                            capture_output=True, text=True)
    assert result.returncode == 0, \
        f"pydocstyle found code style errors / warnings:\n{result.stdout}{result.stderr}"
