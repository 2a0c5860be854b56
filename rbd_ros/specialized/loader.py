"""
Where the specialized kernels of a model are written, compiled, cached and loaded.

A model's kernels live in ``<kernel cache>/v-<hash>/specialized/<key>.py`` (under
``rbd_ros._jit.version_cache_dir()``, which ``rbd_warm_cache`` prunes once unused for 30
days), ``key`` a hash of the model's packed table, of this subpackage's sources, of the
generic kernels' sources (``_jit.SOURCE_HASH``) and of numba's version; their machine code
in numba's disk cache beside it (``numba/``, stamped with a hash of the source file). The
source is written whole (temp file + rename) and compared with a fresh generation before
each use, so a damaged or half-written file is regenerated.

numba's compile holds the GIL for seconds, so it runs in a child process
(``python -m rbd_ros.specialized <file>``, :func:`compile_file`), which fills the disk
cache; the calling process only ever loads from that cache (:func:`load_cached`), which
takes milliseconds, and never compiles.
"""
import hashlib
import importlib.machinery
import importlib.util
import os
import subprocess
import sys

import numba
from numba.core import caching, compiler_lock

from .. import _jit
from .generate import GENERATOR_VERSION
from .kernels import SIGNATURES, module_source

PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))

# as the generic kernels (rbd_ros._jit.kernel): FMA contraction only, no runtime, no bounds
# checks (each generated kernel checks its arrays' lengths itself)
OPTIONS = dict(_jit.KERNEL_OPTIONS, cache=True)
del OPTIONS["nopython"]                   # njit's own
COMPILE_TIMEOUT_S = 900


def specialized_dir():
    return os.path.join(_jit.version_cache_dir(), "specialized")


def _subpackage_hash():
    digest = hashlib.sha256()
    for name in sorted(os.listdir(PACKAGE_DIR)):
        if name.endswith(".py"):
            with open(os.path.join(PACKAGE_DIR, name), "rb") as f:
                digest.update(name.encode() + f.read())
    return digest.hexdigest()


SUBPACKAGE_HASH = _subpackage_hash()


def model_key(model):
    """Return the cache key of ``model``'s specialized kernels (24 hex digits)."""
    digest = hashlib.sha256()
    packed = model.packed
    for part in (str(packed.shape), str(GENERATOR_VERSION), SUBPACKAGE_HASH, _jit.SOURCE_HASH,
                 numba.__version__):
        digest.update(part.encode() + b"\0")
    digest.update(packed.tobytes())
    return digest.hexdigest()[:24]


def module_name(path):
    """Return the module name of a generated file (numba's cache entries are named by it)."""
    return "rbd_ros_specialized_" + os.path.splitext(os.path.basename(path))[0]


class _SpecializedCacheLocator(caching._SourceFileBackedLocatorMixin, caching._CacheLocator):
    """numba's cache of the generated files: ``specialized/numba/``, stamped by content."""

    def __init__(self, py_func, py_file):
        self._py_file = py_file
        self._lineno = py_func.__code__.co_firstlineno
        self._cache_path = os.path.join(os.path.dirname(py_file), "numba")

    def get_cache_path(self):
        return self._cache_path

    @classmethod
    def from_function(cls, py_func, py_file):
        if os.path.dirname(os.path.abspath(py_file)) != os.path.abspath(specialized_dir()):
            return None
        return super().from_function(py_func, py_file)


if _SpecializedCacheLocator not in _jit.CACHE_IMPL._locator_classes:
    _jit.CACHE_IMPL._locator_classes.insert(0, _SpecializedCacheLocator)


def write_source(model):
    """
    Return (path, rewritten): the model's generated file, written unless already intact.

    The file is compared with a fresh generation (milliseconds), so a damaged one is
    replaced; writing is temp file + rename: a reader never sees half a file.
    """
    key = model_key(model)
    path = os.path.join(specialized_dir(), key + ".py")
    source = module_source(model, key)
    try:
        with open(path, encoding="utf-8") as f:
            if f.read() == source:
                return path, False
    except (OSError, UnicodeDecodeError):
        pass
    os.makedirs(os.path.dirname(path), exist_ok=True)
    temp = f"{path}.{os.getpid()}.tmp"
    with open(temp, "w", encoding="utf-8") as f:
        f.write(source)
    os.replace(temp, path)
    return path, True


def import_generated(path):
    """Import a generated file as a module (its Python functions, not yet compiled)."""
    name = module_name(path)
    loader = importlib.machinery.SourceFileLoader(name, path)
    spec = importlib.util.spec_from_file_location(name, path, loader=loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    sys.modules[name] = module     # numba's cache names the functions' module: it must import
    return module


def dispatchers(module):
    """Return {name: numba dispatcher} for the generated functions (lazy: nothing compiled)."""
    return {name: numba.njit(**OPTIONS)(getattr(module, name)) for name in SIGNATURES}


def compile_file(path):
    """Compile every kernel of a generated file into numba's disk cache (the child's work)."""
    for name, dispatcher in dispatchers(import_generated(path)).items():
        dispatcher.compile(SIGNATURES[name])


def load_cached(path):
    """
    Return {name: dispatcher} loaded from numba's disk cache, or None if one is missing.

    What ``Dispatcher.compile`` does on a cache hit, without its fallback to compiling:
    the caller's thread must not hold the GIL for a compile. Each returned dispatcher has
    its one signature and compiling disabled (any other argument types raise TypeError).
    """
    loaded = dispatchers(import_generated(path))
    with compiler_lock.global_compiler_lock:
        for name, dispatcher in loaded.items():
            signature = SIGNATURES[name]
            result = dispatcher._cache.load_overload(signature, dispatcher.targetctx)
            if result is None:
                return None
            dispatcher._cache_hits[signature] += 1
            dispatcher.targetctx.insert_user_function(result.entry_point, result.fndesc,
                                                      [result.library])
            dispatcher.add_overload(result)
            dispatcher.disable_compile()
    return loaded


def compile_in_child(path):
    """Compile ``path`` in a child process; raise RuntimeError with its reason on failure."""
    env = dict(os.environ)
    root = os.path.dirname(os.path.dirname(PACKAGE_DIR))     # the child imports this rbd_ros
    env["PYTHONPATH"] = os.pathsep.join([root] + [p for p in [env.get("PYTHONPATH")] if p])
    try:
        done = subprocess.run([sys.executable, "-m", "rbd_ros.specialized", path], env=env,
                              stdin=subprocess.DEVNULL, capture_output=True, text=True,
                              timeout=COMPILE_TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise RuntimeError(f"the compiling process failed: {exc}") from None
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no message"])[-1]
        raise RuntimeError(f"the compiling process exited with {done.returncode}: {last}")


def cache_bytes(path):
    """Return the bytes on disk of a generated file and of its numba cache entries."""
    prefix = os.path.splitext(os.path.basename(path))[0] + "."
    folder = os.path.join(os.path.dirname(path), "numba")
    total = os.path.getsize(path)
    if os.path.isdir(folder):
        total += sum(os.path.getsize(os.path.join(folder, f)) for f in os.listdir(folder)
                     if f.startswith(prefix))
    return total
