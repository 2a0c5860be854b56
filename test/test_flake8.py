"""
flake8 over the package, as ament_python packages run ament_flake8 in their tests.

ament_flake8 is not on PyPI, so this runs flake8 itself, configured by the ``[flake8]``
section of setup.cfg. Without flake8 the test skips, except where CI=true: there it fails.
"""
import os
import subprocess
import sys

import pytest

from helpers import require_module

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.mark.flake8
@pytest.mark.linter
def test_flake8():
    require_module("flake8", "flake8")
    result = subprocess.run([sys.executable, "-m", "flake8", "--count", "."], cwd=ROOT,
                            capture_output=True, text=True)
    assert result.returncode == 0, \
        f"flake8 found code style errors / warnings:\n{result.stdout}{result.stderr}"
