"""
Tables of the manual generated at build time from the code's own tables, so they cannot drift.

Directives (usable from MyST pages as ```` ```{rbd-outputs} ````):

* ``rbd-outputs``: the node's output topics, from ``rbd_ros.outputs.OUTPUTS``;
* ``rbd-parameters``: the node's parameters, from ``rbd_ros.node.parameters`` (``PARAMETERS``
  with the ranges, choices and read-only reasons the node declares in its descriptors);
* ``rbd-launch-arguments``: the arguments of ``launch/dynamics.launch.py`` (``ARGUMENTS``);
* ``rbd-interfaces``: every ``.msg`` and ``.srv`` file of ``rbd_ros_interfaces``, verbatim;
* ``rbd-bench-table NAME.json``: a bench run's record in ``doc/bench/`` (written by a bench
  script's ``--json``, ``bench/bench_record.py``) as a table, under the line saying when, on
  which machine, at what load, at which commit and by which command it was measured;
* ``rbd-bench-plot NAME.json``: ``bench/bench_peers.py``'s record as a chart (matplotlib,
  drawn at build time into ``doc/_bench_plots/``), its caption dated the same way.

An entry without a description is a build error (``missing_descriptions`` says which), so
``sphinx-build -W`` fails on it, and so does ``test/test_docs.py``.
"""
import ast
import glob
import os
import sys

from docutils import nodes
from sphinx.util.docutils import SphinxDirective

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BENCH_RECORDS = os.path.join(ROOT, "doc", "bench")
PLOTS = "_bench_plots"
LAUNCH_FILE = os.path.join(ROOT, "launch", "dynamics.launch.py")
INTERFACES = os.path.join(ROOT, "rbd_ros_interfaces")


def _cell(text, literal=False):
    entry = nodes.entry()
    para = nodes.paragraph()
    para += nodes.literal(text=text) if literal and text else nodes.Text(text)
    entry += para
    return entry


def _table(header, rows, literal_columns=(0,)):
    """Return a docutils table of ``header`` and ``rows`` (lists of strings)."""
    table = nodes.table(classes=["rbd-generated"])
    group = nodes.tgroup(cols=len(header))
    table += group
    for column, title in enumerate(header):
        widest = max([len(title)] + [len(str(values[column])) for values in rows])
        group += nodes.colspec(colwidth=min(widest, 40))
    head = nodes.thead()
    row = nodes.row()
    for title in header:
        row += _cell(title)
    head += row
    group += head
    body = nodes.tbody()
    for values in rows:
        row = nodes.row()
        for column, value in enumerate(values):
            row += _cell(str(value), literal=column in literal_columns)
        body += row
    group += body
    return table


def output_rows():
    """
    Rows of the outputs table: topic, message type, parameter, default, description.

    The per-state outputs, then the momentum observer's (switched by their ``publish_``
    parameters too) and the contact wrench (on for a non-empty ``contact_frame``).
    """
    from rbd_ros import outputs
    rows = [(o.topic, o.msgtype, o.parameter, str(o.default).lower(),
             ("needs the measured effort; " if o.needs_effort else "") + o.description)
            for o in outputs.OUTPUTS + outputs.OBSERVER_OUTPUTS]
    wrench = outputs.CONTACT_WRENCH
    rows.append((wrench.topic, wrench.msgtype, "contact_frame", '"" (off)',
                 "needs the measured effort; " + wrench.description))
    return rows


def parameter_rows():
    """Rows of the parameters table: name, default, description, range, live or read-only."""
    from rbd_ros.node import parameters as p
    rows = []
    for name, (default, description) in p.PARAMETERS.items():
        allowed = ""
        if name in p.CHOICES:
            allowed = "one of " + ", ".join(repr(c) for c in p.CHOICES[name])
        elif name in p.RANGES or name in p.INTEGER_RANGES:
            low, high = p.RANGES.get(name) or p.INTEGER_RANGES[name]
            allowed = f"{low:g} to {high:g}"
            if name in p.LEAST_POSITIVE:
                allowed = f"0, or {p.LEAST_POSITIVE[name]:g} to {high:g}"
        text = (repr(default) if isinstance(default, str)
                else str(default).lower() if isinstance(default, bool) else str(default))
        change = ("read-only: " + p.READ_ONLY[name]) if name in p.READ_ONLY else "live"
        rows.append((name, text, description, allowed, change))
    return rows


def launch_arguments():
    """Return ``ARGUMENTS`` of the launch file: name -> (default, choices, description)."""
    with open(LAUNCH_FILE, encoding="utf-8") as f:
        tree = ast.parse(f.read(), LAUNCH_FILE)
    # evaluate the module's constants and ARGUMENTS without importing launch or ROS
    names = {"__builtins__": {},
             "_default_params_file": lambda: "<share>/rbd_ros/config/dynamics.yaml"}
    for node in tree.body:
        if isinstance(node, ast.Assign) and all(isinstance(t, ast.Name) for t in node.targets):
            target = node.targets[0].id
            if target.isupper():
                code = compile(ast.Expression(node.value), LAUNCH_FILE, "eval")
                try:
                    names[target] = eval(code, names)
                except Exception:  # noqa: BLE001 -- a constant that needs imports: not ours
                    continue
    return names["ARGUMENTS"]


def launch_rows():
    """Rows of the launch arguments table: name, default, choices, description."""
    return [(name, default, ", ".join(repr(c) for c in choices) if choices else "", text)
            for name, (default, choices, text) in launch_arguments().items()]


def missing_descriptions():
    """Return the outputs, parameters and launch arguments that have no description."""
    missing = [f"output {row[0]}" for row in output_rows() if not row[4].strip()]
    missing += [f"parameter {row[0]}" for row in parameter_rows() if not row[2].strip()]
    missing += [f"launch argument {row[0]}" for row in launch_rows() if not row[3].strip()]
    return missing


def interface_files():
    """Return the interface files, messages then services, as paths under rbd_ros_interfaces."""
    return (sorted(glob.glob(os.path.join(INTERFACES, "msg", "*.msg")))
            + sorted(glob.glob(os.path.join(INTERFACES, "srv", "*.srv"))))


class _Generated(SphinxDirective):
    has_content = False

    def checked(self, kind, rows, described):
        missing = [row[0] for row in rows if not row[described].strip()]
        if missing:
            raise self.error(f"{kind} without a description: {', '.join(missing)}")


class OutputsTable(_Generated):
    def run(self):
        rows = output_rows()
        self.checked("output", rows, 4)
        return [_table(("topic", "message type", "parameter", "default", "content"), rows,
                       (0, 1, 2))]


class ParametersTable(_Generated):
    def run(self):
        rows = parameter_rows()
        self.checked("parameter", rows, 2)
        return [_table(("parameter", "default", "description", "allowed", "changes"), rows,
                       (0, 1))]


class LaunchArgumentsTable(_Generated):
    def run(self):
        self.env.note_dependency(LAUNCH_FILE)
        rows = launch_rows()
        self.checked("launch argument", rows, 3)
        return [_table(("argument", "default", "choices", "description"), rows, (0, 1))]


class InterfacesListing(_Generated):
    def run(self):
        result = []
        for path in interface_files():
            self.env.note_dependency(path)
            kind = os.path.basename(os.path.dirname(path))
            name = os.path.splitext(os.path.basename(path))[0]
            full = f"rbd_ros_interfaces/{kind}/{name}"
            section = nodes.section(ids=[nodes.make_id(full)],
                                    names=[nodes.fully_normalize_name(full)])
            section += nodes.title(text=full)
            with open(path, encoding="utf-8") as f:
                text = f.read()
            block = nodes.literal_block(text, text, language="text")
            section += block
            result.append(section)
        return result


def load_bench_record(name):
    """Return the bench record ``doc/bench/NAME`` (a JSON object) and its path."""
    import json
    path = os.path.join(BENCH_RECORDS, os.path.basename(name))
    with open(path, encoding="utf-8") as f:
        return json.load(f), path


def _load(values):
    return "/".join(f"{x:.2f}" for x in values) if values else "unknown"


def provenance(record):
    """One sentence: when, where, at what load, at which commit and by which command."""
    m = record["machine"]
    return (f"Measured {record['date']} on {m['nproc']} CPUs ({m['cpu']}; {m['platform']}; "
            f"Python {m['python']}), load average (1/5/15 min) {_load(record['load_before'])} "
            f"before the run and {_load(record['load_after'])} after it, at commit "
            f"{record['commit']}, by: ")


def bench_table_rows(record):
    """The record's rows as strings, a missing figure as a dash."""
    return [["—" if value is None else str(value) for value in row] for row in record["rows"]]


class _BenchRecord(SphinxDirective):
    has_content = False
    required_arguments = 1

    def record(self):
        try:
            record, path = load_bench_record(self.arguments[0])
        except (OSError, ValueError) as exc:
            raise self.error(f"bench record {self.arguments[0]}: {exc}")
        self.env.note_dependency(path)
        return record

    def provenance(self, record):
        para = nodes.paragraph()
        para += nodes.emphasis(text=provenance(record))
        para += nodes.literal(text=record["command"])
        return para


class BenchTable(_BenchRecord):
    def run(self):
        record = self.record()
        result = [self.provenance(record)]
        if record.get("notes"):
            result.append(nodes.paragraph(text=record["notes"]))
        result.append(_table(record["columns"], bench_table_rows(record), (0,)))
        return result


class BenchPlot(_BenchRecord):
    def run(self):
        record = self.record()
        sys.path.insert(0, os.path.join(ROOT, "bench"))
        import bench_record
        folder = os.path.join(self.env.srcdir, PLOTS)
        os.makedirs(folder, exist_ok=True)
        name = os.path.splitext(os.path.basename(self.arguments[0]))[0] + ".png"
        bench_record.peers_png(record["columns"], record["rows"], os.path.join(folder, name))
        figure = nodes.figure()
        figure += nodes.image(uri=f"/{PLOTS}/{name}", alt=record["title"])
        caption = nodes.caption()
        caption += nodes.Text(f"{record['title']}, µs per call from Python (log scale; a "
                              "missing bar: the library lacks the call or the robot). "
                              + provenance(record))
        caption += nodes.literal(text=record["command"])
        figure += caption
        return [figure]


def setup(app):
    """Register the directives."""
    app.add_directive("rbd-outputs", OutputsTable)
    app.add_directive("rbd-parameters", ParametersTable)
    app.add_directive("rbd-launch-arguments", LaunchArgumentsTable)
    app.add_directive("rbd-interfaces", InterfacesListing)
    app.add_directive("rbd-bench-table", BenchTable)
    app.add_directive("rbd-bench-plot", BenchPlot)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
