"""
Kernels compile at their first call, for their one declared signature (``rbd_ros._jit``).

Issue 14's cold start: ``import rbd_ros`` used to compile (or load) every kernel. Now the
import compiles nothing; a kernel's first call compiles exactly its declared signature; a call
with other argument types raises TypeError and compiles nothing new (the public wrappers
convert and call again: the same answers as for exact arrays).
"""
import ast
import json
import os
import subprocess
import sys

import numpy as np

import rbd_ros
from rbd_ros import _jit

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _in_checkout(cache):
    """Return a subprocess's environment: this checkout's rbd_ros, numba's cache at ``cache``."""
    return dict(os.environ, NUMBA_CACHE_DIR=str(cache),
                PYTHONPATH=os.pathsep.join(p for p in [ROOT, os.environ.get("PYTHONPATH")] if p))


def _run_python(script, cache, *args, timeout=600):
    """Run ``script`` in a fresh interpreter (``_in_checkout(cache)``); return its stdout."""
    done = subprocess.run([sys.executable, "-c", script, *args], env=_in_checkout(cache),
                          capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def test_import_compiles_nothing(tmp_path):
    # then a kernel's first call, straight from Python: its own return value (the status)
    script = ("import rbd_ros, os, numpy as np\n"
              "from rbd_ros import _jit\n"
              "assert len(_jit.KERNELS) > 20, len(_jit.KERNELS)\n"
              "print(sum(len(k.overloads) for k in _jit.KERNELS))\n"
              "print(sum(n.endswith(('.nbi', '.nbc')) for _, _, f in os.walk(_jit.cache_dir())"
              "          for n in f))\n"
              "m = rbd_ros.load_model(rbd_ros.robots.path('rbd_arm7'))\n"
              "kernel = rbd_ros.algorithms.finite_differences.integrate_kernel\n"
              "out = np.empty(m.nq)\n"
              "print(kernel(m.packed, m.neutral(), np.ones(m.nv), out), out[0])\n")
    printed = _run_python(script, tmp_path, timeout=120)
    overloads, files, status, first = printed.split()
    # no overload, no cached kernel (the sources' digests may be written: not compiled code)
    assert (overloads, files) == ("0", "0"), printed
    assert status == "0" and float(first) == 1.0, printed    # q = 0 ⊕ 1 for revolutes


def test_first_call_compiles_the_declared_signature_only():
    model = rbd_ros.load_model(rbd_ros.robots.path("rbd_arm7"))
    q, v = model.neutral(), np.linspace(-1, 1, model.nv)
    exact = rbd_ros.rnea(model, q, v, v)
    kernel = rbd_ros.algorithms.rnea.rnea_kernel
    assert list(kernel.overloads) == [kernel.declared.args] and not kernel._can_compile
    # other types: the wrapper's conversion, the same numbers, still one overload
    as_lists = rbd_ros.rnea(model, list(q), list(v), tuple(v))
    np.testing.assert_array_equal(as_lists, exact)
    strided = np.repeat(v, 2)[::2]
    np.testing.assert_array_equal(rbd_ros.rnea(model, q, strided, v), exact)
    assert len(kernel.overloads) == 1


FIRST_CALLS_FROM_THREADS = """
import json, threading
import numpy as np, rbd_ros
kernel = rbd_ros.algorithms.finite_differences.integrate_kernel
model = rbd_ros.load_model(rbd_ros.robots.path("rbd_arm7"))
q, dv = np.linspace(-1, 1, model.nq), np.linspace(0.5, -0.5, model.nv)
before = len(kernel.overloads)
barrier, results, errors = threading.Barrier(8), [], []
def call():
    try:
        barrier.wait(timeout=60)
        results.append(rbd_ros.integrate(model, q, dv).tolist())
    except Exception as exc:
        errors.append(repr(exc))
threads = [threading.Thread(target=call) for _ in range(8)]
for t in threads:
    t.start()
for t in threads:
    t.join()
print(json.dumps({"before": before, "overloads": len(kernel.overloads), "errors": errors,
                  "hits": sum(kernel.stats.cache_hits.values()),
                  "misses": sum(kernel.stats.cache_misses.values()),
                  "results": results, "expected": (q + dv).tolist()}))
"""


def test_first_calls_from_threads_compile_once(tmp_path):
    # 8 threads make the first call of a kernel at once, in a fresh process with an empty
    # cache (so it is a real first compile, whatever ran before): one compile, 8 answers
    env = _in_checkout(tmp_path)
    done = subprocess.run([sys.executable, "-c", FIRST_CALLS_FROM_THREADS], env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["errors"] == [], out["errors"]
    assert (out["before"], out["overloads"]) == (0, 1), out
    assert (out["hits"], out["misses"]) == (0, 1), out            # compiled, once
    assert len(out["results"]) == 8
    for result in out["results"]:                 # arm7's joints are revolute: q ⊕ dv = q + dv
        np.testing.assert_allclose(result, out["expected"], rtol=0, atol=1e-15)


def test_every_kernel_is_a_first_call_dispatcher():
    assert all(isinstance(k, _jit.FirstCallDispatcher) and k.declared is not None
               for k in _jit.KERNELS)
    names = [k.py_func.__name__ for k in _jit.KERNELS]
    assert len(names) == len(set(names)), "two kernels of one name: warm_cache's progress"


def test_a_helper_called_from_python_runs_as_python():
    """Helpers have no Python entry point: called from Python they run their Python code."""
    from rbd_ros.algorithms import joints
    from rbd_ros.model import joints as registry
    from rbd_ros.model import spatial
    a, b = (1.0, 2.0, 3.0, 4.0, 5.0, 6.0), (0.5, -1.0, 2.5, 0.0, 1.0, -6.0)
    assert isinstance(spatial.add6, _jit.Helper)
    # a kernel compiled earlier in this process (an empty or stale cache) compiled the
    # helpers it calls: what counts is that these calls compile nothing more
    helpers = (spatial.add6, joints.local_subspace_1dof)
    before = [len(h.overloads) for h in helpers]
    assert spatial.add6(a, b) == (1.5, 1.0, 5.5, 4.0, 6.0, 0.0)
    # a helper calling helpers, as the specialized generator calls it (prismatic along y:
    # S = (axis, 0), linear rows first)
    assert joints.local_subspace_1dof(registry.PRISMATIC, 0.0, 1.0, 0.0) == (0, 1.0, 0, 0, 0, 0)
    assert [len(h.overloads) for h in helpers] == before, "compiled for a call from Python"


def _first_call_in_copy(package_copy, cache):
    """Call one kernel from a copy of the package; return (cache hits, cache files after)."""
    script = ("import os, numpy as np, rbd_ros\n"
              "from rbd_ros import _jit\n"
              "assert rbd_ros.__file__.startswith(os.environ['EXPECT']), rbd_ros.__file__\n"
              "m = rbd_ros.load_model(rbd_ros.robots.path('rbd_arm7'))\n"
              "kernel = rbd_ros.algorithms.finite_differences.integrate_kernel\n"
              "kernel(m.packed, m.neutral(), np.ones(m.nv), np.empty(m.nq))\n"
              "print(sum(kernel.stats.cache_hits.values()),\n"
              "      sum(len(f) for _, _, f in os.walk(_jit.cache_dir())))\n")
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache), PYTHONPATH=str(package_copy),
               EXPECT=str(package_copy))
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                          text=True, timeout=300, cwd=str(package_copy))
    assert done.returncode == 0, done.stderr[-2000:]
    hits, files = done.stdout.split()
    return int(hits), int(files)


def test_the_same_sources_at_another_path_load_from_the_cache(tmp_path):
    # a colcon install space or a second clone: same kernel sources, another path
    import shutil
    cache = tmp_path / "cache"
    for copy in ("first", "second"):
        shutil.copytree(os.path.join(ROOT, "rbd_ros"), tmp_path / copy / "rbd_ros",
                        ignore=shutil.ignore_patterns("__pycache__"))
    hits, files = _first_call_in_copy(tmp_path / "first", cache)
    assert hits == 0 and files > 0                  # compiled, written
    hits, files_after = _first_call_in_copy(tmp_path / "second", cache)
    assert hits == 1 and files_after == files       # loaded, nothing new written


def test_warm_cache_removes_only_stale_versions_of_its_own_layout(tmp_path, monkeypatch):
    import time
    from rbd_ros.tools import warm_cache
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))
    root = _jit.cache_dir()
    month_ago = time.time() - (warm_cache.STALE_DAYS + 1) * 86400
    names = {"v-0123456789abcdef": month_ago, "v-fedcba9876543210": time.time(),
             "algorithms_" + "a" * 40: month_ago, "specialized": month_ago,
             os.path.basename(_jit.version_cache_dir()): month_ago}
    for name, stamp in names.items():
        os.makedirs(os.path.join(root, name))
        with open(os.path.join(root, name, "index"), "w") as f:
            f.write("x")
        for path in (os.path.join(root, name, "index"), os.path.join(root, name)):
            os.utime(path, (stamp, stamp))
    old_marker = os.path.join(root, "warm-0123456789abcdef")
    open(old_marker, "w").close()
    os.utime(old_marker, (month_ago, month_ago))
    removed = warm_cache.prune_stale_versions()
    assert sorted(removed) == sorted(["v-0123456789abcdef", "algorithms_" + "a" * 40,
                                      "warm-0123456789abcdef"])
    left = set(os.listdir(root))
    # the current version (however old), a recent other version, what is not ours: kept
    assert left == {"v-fedcba9876543210", "specialized",
                    os.path.basename(_jit.version_cache_dir())}


# imports every module of the core (not the ROS side), each kernel defined once imported
IMPORT_THE_CORE = ("import importlib, pkgutil, rbd_ros\n"
                   "for info in pkgutil.walk_packages(rbd_ros.__path__, 'rbd_ros.'):\n"
                   "    if not info.name.startswith(('rbd_ros.node', 'rbd_ros.replay', "
                   "'rbd_ros.tools', 'rbd_ros.specialized.__main__')):\n"
                   "        importlib.import_module(info.name)\n")


def _run_printing(script):
    """Run ``script`` in a fresh interpreter on this checkout; return what it printed."""
    env = dict(os.environ,
               PYTHONPATH=os.pathsep.join(p for p in [ROOT, os.environ.get("PYTHONPATH")] if p))
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def test_warm_cache_defines_every_kernel_of_the_core():
    # rbd_warm_cache compiles what its define_kernels() imports: every module of the core that
    # defines a kernel must be among them (the layers move once left the observer's out)
    printed = _run_printing("from rbd_ros import _jit\n"
                            "from rbd_ros.tools import warm_cache\n"
                            "warm_cache.define_kernels()\n"
                            "defined = {k.py_func.__qualname__ for k in _jit.KERNELS}\n"
                            + IMPORT_THE_CORE +
                            "every = {k.py_func.__qualname__ for k in _jit.KERNELS}\n"
                            "print(len(defined), sorted(every - defined))\n")
    count, missing = printed.split(" ", 1)
    assert int(count) > 30 and missing.strip() == "[]", printed


def test_every_module_that_defines_a_kernel_is_a_hashed_kernel_source():
    """
    Editing a module that defines a kernel invalidates the cache.

    Keyed by the sources' content, a cached kernel is otherwise matched by its bytecode alone,
    which an edited constant leaves as it was: each such module is in KERNEL_SOURCES.
    """
    printed = _run_printing(IMPORT_THE_CORE +
                            "import os\n"
                            "from rbd_ros import _jit\n"
                            "files = {os.path.relpath(k.py_func.__code__.co_filename, "
                            "_jit.PACKAGE_DIR) for k in _jit.KERNELS}\n"
                            "print(len(files), sorted(files))\n")
    count, files = printed.split(" ", 1)
    files = ast.literal_eval(files.strip())
    assert int(count) > 20 and "contact/isolation.py" in files, files

    def hashed(path):
        return path not in _jit.PYTHON_ONLY and any(
            path == entry or path.startswith(entry + os.sep) for entry in _jit.KERNEL_SOURCES)
    assert [f for f in files if not hashed(f)] == []


WARM_TWO_KERNELS = """
import json, os
from rbd_ros import _jit
from rbd_ros.tools import warm_cache
if __name__ == "__main__":
    done = warm_cache.compile_kernels({names!r}, jobs=2, out=open(os.devnull, "w"))
    files = [f for _, _, fs in os.walk(_jit.version_cache_dir()) for f in fs]
    print(json.dumps({{"done": [r._asdict() for r in done], "files": files}}))
"""


def test_warm_cache_compiles_in_parallel_processes(tmp_path):
    # issue 35: rbd_warm_cache must compile kernels side by side, one per process (numba
    # compiles one function at a time per process). Two small kernels, two workers, a fresh
    # process on an empty cache: both compiled there, written to the cache, and their
    # compile intervals overlap.
    names = ["integrate_kernel", "gravity_kernel"]
    script = tmp_path / "warm_two.py"
    script.write_text(WARM_TWO_KERNELS.format(names=names))
    env = _in_checkout(tmp_path / "cache")
    done = subprocess.run([sys.executable, str(script)], env=env, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout)
    compiled = {r["name"]: r for r in report["done"]}
    assert sorted(compiled) == sorted(names)
    for name in names:       # numba's index of each kernel: <module>.<name>-<line>.py3x.nbi
        assert any(f".{name}-" in f and f.endswith(".nbi") for f in report["files"]), report
    first, second = compiled.values()
    assert first["pid"] != second["pid"], report
    overlap = min(first["ended"], second["ended"]) - max(first["started"], second["started"])
    assert overlap > 0, report


CALL_BY_SYMBOL = """
import glob, json, os, sys
import numpy as np
import rbd_ros
from rbd_ros import _jit
from rbd_ros.batch import rnea_batch
batch = rbd_ros.batch.algorithm_kernels.rnea_batch_kernel
single = rbd_ros.algorithms.rnea.rnea_kernel
if sys.argv[1] == "recompile the callee":      # another numba name than the first process's
    for path in glob.glob(os.path.join(_jit.version_cache_dir(), "**", "rnea.rnea_kernel-*"),
                          recursive=True):
        os.remove(path)
    rbd_ros.algorithms.finite_differences.integrate_kernel.compile_declared()
batch.compile_declared()
loaded = sorted(k.py_func.__name__ for k in _jit.KERNELS if k.overloads)
model = rbd_ros.load_model(rbd_ros.robots.path("rbd_arm7"))
rng = np.random.default_rng(3)
q, v, a = (rng.uniform(-1, 1, (5, model.nv)) for _ in range(3))
each = [rbd_ros.rnea(model, *state).tolist() for state in zip(q, v, a)]
print(json.dumps({"loaded": loaded, "batch": rnea_batch(model, q, v, a).tolist(), "each": each,
                  "declared": single.symbol() in batch.declared_symbols()
                  if sys.argv[1] == "compile" else None,
                  "linked": single.overloads[single.declared.args].fndesc.mangled_name
                  in batch.overloads[batch.declared.args].library.get_llvm_str()
                  if sys.argv[1] == "compile" else None,
                  "numba name": single.overloads[single.declared.args].fndesc.mangled_name}))
"""


def test_a_kernel_calls_the_kernels_it_calls_by_their_symbol(tmp_path):
    # issue 35: a batch kernel linked its single-state kernel's code and compiled it again.
    # Compiled into an empty cache, rnea_batch_kernel declares rnea_kernel's symbol (its code
    # is not in the batch kernel's). Then fresh processes on that cache: one loads both, one
    # compiles rnea_kernel again (numba names it otherwise: its names count the functions a
    # process compiled) and loads the batch kernel compiled by the first; in each, loading
    # the batch kernel loads rnea_kernel first, and the batch gives each state's RNEA.
    outs = [json.loads(_run_python(CALL_BY_SYMBOL, tmp_path, stage).strip().splitlines()[-1])
            for stage in ("compile", "load", "recompile the callee")]
    for out, first in zip(outs, ([], [], ["integrate_kernel"])):
        assert out["loaded"] == first + ["rnea_batch_kernel", "rnea_kernel"], out["loaded"]
        assert out["batch"] == out["each"]
    assert [out["declared"] for out in outs] == [True, None, None]
    assert outs[0]["linked"] is False               # rnea_kernel's own code is not in it
    assert outs[2]["numba name"] != outs[0]["numba name"]


def test_a_kernel_call_the_scan_misses_is_refused_when_it_compiles(tmp_path):
    script = ("from rbd_ros import _jit\n"
              "from rbd_ros.algorithms.coupled import coupled_crba_kernel\n"
              "_jit.called_kernels = lambda func, seen=None: []\n"
              "try:\n"
              "    coupled_crba_kernel.compile_declared()\n"
              "except RuntimeError as exc:\n"
              "    print(exc)\n")
    # refused, and taken out of the cache: a second process compiles it again, refused again
    # (loaded unchecked, it would abort the process that calls it)
    for _ in range(2):
        printed = _run_python(script, tmp_path)
        assert printed.startswith("coupled_crba_kernel calls crba_kernel where "), printed


def test_called_kernels_sees_globals_module_attributes_closures_and_helpers():
    from rbd_ros.algorithms import aba as aba_module
    from rbd_ros.algorithms.crba import crba_kernel
    from rbd_ros.batch.algorithm_kernels import coupled_aba_derivatives_batch_kernel

    def names(func):
        return [k.py_func.__name__ for k in _jit.called_kernels(func)]

    def through_a_module():
        return aba_module.aba_kernel

    def through_a_closure():
        return crba_kernel

    def through_a_nested_function():
        def nested():
            return rbd_ros.algorithms.rnea.rnea_kernel     # a global module's attributes
        return nested
    assert names(through_a_module) == ["aba_kernel"]
    assert names(through_a_closure) == ["crba_kernel"]
    assert names(through_a_nested_function) == ["rnea_kernel"]
    # through a helper of another module (jacobian_and_minv), not by the kernel's own names
    effective_mass = rbd_ros.algorithms.effective_mass.effective_mass_kernel
    assert sorted(names(effective_mass.py_func)) == [
        "coupled_crba_kernel", "coupled_minv_kernel", "crba_kernel", "minv_kernel"]
    # its single-state kernel, after the kernels that one calls (each once)
    assert names(coupled_aba_derivatives_batch_kernel.py_func) == [
        "rnea_kernel", "crba_kernel", "coupled_aba_kernel", "rnea_derivatives_kernel",
        "coupled_aba_derivatives_kernel"]
    assert names(rbd_ros.algorithms.rnea.rnea_kernel.py_func) == []


def _source_hash_of_copy(tmp_path, edit=None):
    """Return SOURCE_HASH of a copy of rbd_ros/_jit.py and the kernel sources, after ``edit``."""
    import importlib.util
    import shutil
    copy = tmp_path / ("edited" if edit else "plain") / "rbd_ros"
    shutil.copytree(os.path.dirname(_jit.__file__), copy,
                    ignore=shutil.ignore_patterns("__pycache__", "robots"))
    if edit:
        edit(copy)
    spec = importlib.util.spec_from_file_location("jit_copy", copy / "_jit.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.SOURCE_HASH


def test_editing_a_joint_kind_module_invalidates_the_cached_kernels(tmp_path):
    """The kernels inline model/joints/*.py: a subpackage of a kernel source is hashed too."""
    def edit(copy):
        path = copy / "model" / "joints" / "revolute.py"
        path.write_text(path.read_text().replace("ROTATES = True", "ROTATES = False"))
    assert _source_hash_of_copy(tmp_path) != _source_hash_of_copy(tmp_path, edit)


def test_editing_comments_and_docstrings_keeps_the_cached_kernels(tmp_path):
    """What no kernel compiles (comments, docstrings, blank lines) leaves the hash as it was."""
    def edit(copy):
        path = copy / "algorithms" / "rnea.py"
        text = path.read_text()
        start = text.index('"""', text.index("def rnea_kernel")) + 3
        path.write_text("# a comment\n\n" + text[:start] + "An edited line.\n\n" + text[start:])
    assert _source_hash_of_copy(tmp_path) == _source_hash_of_copy(tmp_path, edit)


def test_editing_a_kernel_s_code_invalidates_the_cached_kernels(tmp_path):
    def edit(copy):
        path = copy / "model" / "spatial.py"
        text = path.read_text()
        assert "return " in text
        path.write_text(text.replace("return ", "return -", 1))
    assert _source_hash_of_copy(tmp_path) != _source_hash_of_copy(tmp_path, edit)


def test_a_damaged_digests_file_is_rebuilt(tmp_path):
    """The sources' digests beside the cache are a hint: garbage there gives the true hash."""
    script = "from rbd_ros import _jit; print(_jit.SOURCE_HASH)"
    env = _in_checkout(tmp_path)
    digests = tmp_path / "rbd_ros" / "source-digests.json"
    hashes = []
    for content in (None, "{not json", "[1, 2]", json.dumps({__file__: [__file__, 1, 2, "x"]})):
        if content is not None:
            digests.write_text(content)
        done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                              text=True, timeout=120)
        assert done.returncode == 0, done.stderr[-2000:]
        hashes.append(done.stdout.strip())
        assert digests.is_file()
    assert set(hashes) == {_jit.SOURCE_HASH}, hashes
