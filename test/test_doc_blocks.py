"""
Every fenced ``python`` block of the manual's pages and of the README runs.

The blocks of one page run in order, in one namespace, in a fresh interpreter per page (so
that a block may use what an earlier block of its page defined, as a reader following the
page does), in a temporary working directory, with a time limit. A block that is not meant
to run is marked by the MyST comment line ``% no-run: <why>`` right above its fence
(doc/contributing.md, "The manual"); a marked block is listed, never run.
"""
import glob
import json
import os
import re
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PAGES = [os.path.join(ROOT, "README.md")] + sorted(glob.glob(os.path.join(ROOT, "doc", "*.md")))
FENCE = re.compile(r"^(?P<marker>% no-run:[^\n]*\n)?```python\n(?P<code>.*?)^```$",
                   flags=re.S | re.M)
TIME_LIMIT_S = 600

# Runs the blocks given as JSON on stdin in one namespace; names the failing block.
RUNNER = """
import json, sys, traceback
blocks = json.load(sys.stdin)
namespace = {"__name__": "__doc_page__"}
for number, (line, code) in enumerate(blocks, 1):
    try:
        exec(compile(code, f"block {number} (line {line})", "exec"), namespace)
    except BaseException:
        traceback.print_exc()
        print(f"DOC BLOCK FAILED: block {number}, line {line}", file=sys.stderr)
        sys.exit(1)
"""


def page_blocks(path):
    """Return ``(runnable, marked)``: lists of ``(line, code)`` of ``path``'s python blocks."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    runnable, marked = [], []
    for found in FENCE.finditer(text):
        line = text.count("\n", 0, found.start("code")) + 1
        (marked if found.group("marker") else runnable).append((line, found.group("code")))
    return runnable, marked


def test_the_block_finder_sees_marked_and_unmarked_blocks(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("# t\n\n```python\nx = 1\n```\n\n% no-run: needs a robot\n```python\n"
                    "robot.move()\n```\n\n```bash\nls\n```\n", encoding="utf-8")
    runnable, marked = page_blocks(str(page))
    assert runnable == [(4, "x = 1\n")]
    assert marked == [(9, "robot.move()\n")]


PAGES_WITH_CODE = [p for p in PAGES if page_blocks(p)[0]]


def test_the_pages_known_to_have_python_blocks_are_found():
    names = {os.path.relpath(p, ROOT) for p in PAGES_WITH_CODE}
    assert {"README.md", "doc/dynamics.md", "doc/contact.md"} <= names, names


@pytest.mark.parametrize("path", PAGES_WITH_CODE,
                         ids=[os.path.relpath(p, ROOT) for p in PAGES_WITH_CODE])
def test_every_python_block_of_the_page_runs(path, tmp_path):
    runnable, _ = page_blocks(path)
    env = dict(os.environ, MPLBACKEND="Agg")
    result = subprocess.run([sys.executable, "-c", RUNNER], input=json.dumps(runnable),
                            capture_output=True, text=True, cwd=tmp_path, env=env,
                            timeout=TIME_LIMIT_S)
    assert result.returncode == 0, (f"{os.path.relpath(path, ROOT)}:\n"
                                    + (result.stdout + result.stderr)[-4000:])
