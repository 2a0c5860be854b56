"""
The manual (doc/) builds with warnings as errors, every page reachable from the index.

Every parameter, output and launch argument has a description; the README stays short; the
versions agree.

The build runs ``sphinx-build -W -n`` into a temporary directory, offline. Without Sphinx
(the ``doc`` extra) the build test skips, except where CI=true: there it fails.
"""
import importlib.util
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET

from helpers import require_module

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOC = os.path.join(ROOT, "doc")


def rbd_tables():
    """Load the manual's table extension, doc/_ext/rbd_tables.py, from its file."""
    spec = importlib.util.spec_from_file_location(
        "rbd_tables", os.path.join(DOC, "_ext", "rbd_tables.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_manual_builds_and_every_page_is_reachable(tmp_path):
    require_module("sphinx", "sphinx")
    require_module("myst_parser", "myst-parser")
    require_module("furo", "furo")
    out = tmp_path / "html"
    result = subprocess.run([sys.executable, "-m", "sphinx", "-W", "-n", "--keep-going", "-q",
                             "-b", "html", "-d", str(tmp_path / "doctrees"), DOC, str(out)],
                            cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, f"sphinx-build -W -n failed:\n{result.stdout}{result.stderr}"
    pages = {os.path.splitext(f)[0] for f in os.listdir(DOC) if f.endswith((".md", ".rst"))}
    # follow the links of the built pages from the index: every source page must be reached
    seen, todo = set(), ["index"]
    while todo:
        page = todo.pop()
        if page in seen:
            continue
        seen.add(page)
        with open(out / f"{page}.html", encoding="utf-8") as f:
            html = f.read()
        for href in re.findall(r'href="([^"#?:]+)\.html', html):
            name = os.path.normpath(os.path.join(os.path.dirname(page), href))
            if os.path.exists(out / f"{name}.html"):
                todo.append(name)
    assert pages <= seen, f"pages not reachable from the index: {sorted(pages - seen)}"
    assert len(pages) >= 15
    check_bench_records_rendered(out)


def check_bench_records_rendered(out):
    """Every record of doc/bench/ is on the benchmarks page: its provenance, every figure."""
    import json
    with open(out / "benchmarks.html", encoding="utf-8") as f:
        page = re.sub(r"<[^>]+>", " ", f.read())
    page = " ".join(page.replace("&#8212;", "—").split())   # a literal's words are spans
    records = sorted(f for f in os.listdir(os.path.join(DOC, "bench")) if f.endswith(".json"))
    assert records, "no bench record in doc/bench"
    for name in records:
        with open(os.path.join(DOC, "bench", name), encoding="utf-8") as f:
            record = json.load(f)
        for key in ("date", "commit", "command"):
            assert " ".join(record[key].split()) in page, (name, key)
        assert f"{record['load_before'][0]:.2f}/" in page, (name, "load average")
        cells = page.split()
        for row in record["rows"]:
            for value in row[1:]:
                if value is not None and not isinstance(value, str):
                    assert str(value) in cells, (name, row, value)
    assert os.path.exists(out / "_images" / "peers.png")


def test_every_parameter_output_and_launch_argument_has_a_description():
    tables = rbd_tables()
    assert tables.missing_descriptions() == []
    # the tables cover the code's own tables, row for row
    from rbd_ros import outputs
    from rbd_ros.node import parameters
    every_output = outputs.OUTPUTS + outputs.OBSERVER_OUTPUTS + (outputs.CONTACT_WRENCH,)
    assert [row[0] for row in tables.output_rows()] == [o.topic for o in every_output]
    assert [row[0] for row in tables.parameter_rows()] == list(parameters.PARAMETERS)
    assert "urdf_file" in [row[0] for row in tables.launch_rows()]
    assert len(tables.interface_files()) >= 12


def test_the_api_page_lists_every_public_name():
    import rbd_ros
    with open(os.path.join(DOC, "api.md"), encoding="utf-8") as f:
        listed = set(re.findall(r"^   (\w+)$", f.read(), flags=re.M))
    assert set(rbd_ros.__all__) <= listed, sorted(set(rbd_ros.__all__) - listed)


def test_readme_is_at_most_150_lines_and_links_into_the_manual():
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        text = f.read()
    assert len(text.splitlines()) <= 150
    for link in re.findall(r"\]\((doc/[^)#]+)", text):
        assert os.path.exists(os.path.join(ROOT, link)), link


def test_the_test_files_the_docs_name_exist():
    """A test named by its path (``test/...py``) in the README or the manual is where it says."""
    import glob
    texts = [os.path.join(ROOT, "README.md"), os.path.join(ROOT, "package.xml")] + \
        glob.glob(os.path.join(DOC, "*.md"))
    named = set()
    for path in texts:
        with open(path, encoding="utf-8") as f:
            named |= {(os.path.basename(path), p) for p in
                      re.findall(r"\btest/[\w/]+\.py\b", f.read())}
    assert named, "the docs name no test file: the pattern no longer matches"
    missing = sorted(f"{doc}: {p}" for doc, p in named if not os.path.isfile(os.path.join(ROOT, p)))
    assert not missing, missing


def test_versions_agree():
    """package.xml, setup.py, the manual and CHANGELOG.rst's latest heading: one version."""
    package = ET.parse(os.path.join(ROOT, "package.xml")).getroot().findtext("version")
    with open(os.path.join(ROOT, "setup.py"), encoding="utf-8") as f:
        setup = re.search(r'version="([^"]+)"', f.read()).group(1)
    with open(os.path.join(DOC, "conf.py"), encoding="utf-8") as f:
        manual = re.search(r'release = "([^"]+)"', f.read()).group(1)
    with open(os.path.join(ROOT, "CHANGELOG.rst"), encoding="utf-8") as f:
        lines = f.read().splitlines()
    # catkin_generate_changelog's format: the title, then "X.Y.Z (YYYY-MM-DD)" over dashes
    headings = [(m.group(1), lines[i + 1]) for i, line in enumerate(lines[:-1])
                if (m := re.fullmatch(r"(\d+\.\d+\.\d+) \(\d{4}-\d{2}-\d{2}\)", line))]
    assert lines[1] == "Changelog for package rbd_ros"
    assert headings and all(set(under) == {"-"} for _, under in headings)
    assert package == setup == manual == headings[0][0]


def test_bench_records_say_when_where_at_what_load_and_how():
    """Each committed bench record names its date, machine, load, commit and command."""
    import json
    records = [f for f in os.listdir(os.path.join(DOC, "bench")) if f.endswith(".json")]
    assert {"core.json", "peers.json"} <= set(records)
    for name in records:
        with open(os.path.join(DOC, "bench", name), encoding="utf-8") as f:
            record = json.load(f)
        assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d UTC", record["date"]), name
        assert {"platform", "nproc", "cpu"} <= set(record["machine"]), name
        assert len(record["load_before"]) == len(record["load_after"]) == 3, name
        assert re.fullmatch(r"[0-9a-f]{7,40}", record["commit"]), name     # not +dirty
        assert record["command"].startswith("python bench/") and "--json" in record["command"]
        assert record["rows"] and all(len(r) == len(record["columns"]) for r in record["rows"])
