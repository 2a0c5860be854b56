"""
How the dynamics kernels are compiled and cached.

Kernels use numba's on-disk cache. Three traps are handled here:

* numba writes the cache next to the sources by default, which fails for a read-only
  install. Our kernels cache under ``$NUMBA_CACHE_DIR/rbd_ros`` when that variable is set,
  else under ``$XDG_CACHE_HOME/rbd_ros/numba`` (``~/.cache/rbd_ros/numba``).
* numba checks only the source file of the cached function itself, not the helpers it
  inlines from other files, so editing ``spatial.py`` would leave stale kernels in the
  cache. Our locator stamps every cache entry with a hash of all kernel sources
  (``KERNEL_SOURCES``): of their syntax trees, so editing a comment or a docstring leaves
  the cache valid (:func:`compiled_text`).
* numba keys its cache by the source file's path, so the same sources at another path (a
  colcon install space, a second clone, CI's fresh clone) compiled everything again while
  ``rbd_warm_cache``'s marker said it was cached. Our cache is keyed by the content instead:
  ``version_cache_dir()`` is named after that hash, shared by every copy of these sources.
"""
import ast
import copy
import hashlib
import inspect
import json
import os
import re

from llvmlite import binding as llvm
from numba import types
from numba.core import caching, compiler_lock, registry, typeinfer

# absolute: test_jit loads copies of this file outside the package to compare their hashes
from rbd_ros.formats.text_files import write_atomic

PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


def cache_dir():
    if os.environ.get("NUMBA_CACHE_DIR"):
        return os.path.join(os.environ["NUMBA_CACHE_DIR"], "rbd_ros")
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "rbd_ros", "numba")


def version_cache_dir():
    """Return the cache of this version of the kernel sources (``cache_dir()/v-HASH``)."""
    return os.path.join(cache_dir(), VERSION_PREFIX + SOURCE_HASH[:16])


VERSION_PREFIX = "v-"

# The modules that define or feed compiled code: editing any of them invalidates every cached
# kernel (the ROS node, the replay tool and friends do not, so editing them compiles nothing).
# Every module that defines a kernel is one (test_jit checks): keyed by content, a cached
# kernel is otherwise matched by its bytecode alone, which misses an edited constant.
KERNEL_SOURCES = ("_jit.py", "_blas.py", "_array_flags.py", "model", "batch/kernels.py",
                  "batch/algorithm_kernels.py", "algorithms", "contact/isolation.py",
                  "contact/measured_wrenches.py", "contact/observer_tick.py",
                  "formats/joint_state_merge.py")
# ... less the modules there that compile nothing (the public calls are plain Python): editing
# them leaves the cached kernels valid.
PYTHON_ONLY = tuple(os.path.join("algorithms", f)
                    for f in ("entries.py", "calls.py", "generate_calls.py",
                              "generate_joint_dispatch.py"))


def _kernel_source_paths():
    paths = []
    for entry in KERNEL_SOURCES:
        path = os.path.join(PACKAGE_DIR, entry)
        if os.path.isdir(path):
            paths += [os.path.join(folder, f) for folder, _, files in os.walk(path)   # subpackages
                      for f in files if f.endswith(".py")]                           # too
        else:
            paths.append(path)
    return sorted(p for p in paths if os.path.relpath(p, PACKAGE_DIR) not in PYTHON_ONLY)


def _without_docstrings(node):
    """Drop the docstrings of ``node`` and of everything defined in it (in place)."""
    for child in ast.walk(node):
        if isinstance(child, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = child.body
            if (body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
                    and isinstance(body[0].value.value, str)):
                child.body = body[1:] or [ast.Pass()]
    return node


def compiled_text(source):
    """
    Return what of a module's ``source`` the compiled code depends on: its syntax tree.

    Comments, docstrings, blank lines and line numbers are left out: editing them changes
    no kernel, so it recompiles nothing (a full cold compile takes ~50 s on 2 cores).
    """
    try:
        return ast.dump(_without_docstrings(ast.parse(source)))
    except SyntaxError:         # its import says what is wrong; the hash takes it as it is
        return repr(source)


def _package_source_hash():
    """
    Return the hash of the kernel sources' compiled text (:func:`compiled_text`).

    Parsing them costs ~0.15 s at import: each file's digest is kept beside the cache,
    keyed by its size and modification time, so an import parses only the files edited since.
    """
    stamps_path = os.path.join(cache_dir(), "source-digests.json")
    try:
        with open(stamps_path, encoding="utf-8") as f:
            known = json.load(f)
    except (OSError, ValueError):
        known = {}
    if not isinstance(known, dict):
        known = {}
    # other copies' entries stay while their files do (a second clone, a colcon install)
    digest, digests = hashlib.sha256(), {p: e for p, e in known.items() if os.path.isfile(p)}
    for path in _kernel_source_paths():
        status = os.stat(path)
        stamp = [path, status.st_size, status.st_mtime_ns]
        entry = known.get(path)
        if not (isinstance(entry, list) and entry[:3] == stamp and len(entry) == 4):
            with open(path, "rb") as f:
                entry = stamp + [hashlib.sha256(compiled_text(f.read()).encode()).hexdigest()]
        digests[path] = entry
        digest.update(os.path.relpath(path, PACKAGE_DIR).encode())
        digest.update(str(entry[3]).encode())
    if digests != known:
        _write_digests(stamps_path, json.dumps(digests))
    return digest.hexdigest()


def _write_digests(path, text):
    """Write the digests file ``path`` (``write_atomic``); best effort."""
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        write_atomic(path, text, "the kernel sources' digests")
    except (OSError, ValueError):
        pass        # a read-only cache: the digests are computed again next time


SOURCE_HASH = _package_source_hash()


class _PackageCacheLocator(caching.UserProvidedCacheLocator):
    """Cache locator for functions defined in this package (see the module docstring)."""

    def __init__(self, py_func, py_file):
        self._py_file = py_file
        self._lineno = py_func.__code__.co_firstlineno
        folder = os.path.relpath(os.path.dirname(os.path.abspath(py_file)), PACKAGE_DIR)
        self._cache_path = os.path.normpath(os.path.join(version_cache_dir(), folder))

    def get_source_stamp(self):
        return SOURCE_HASH

    def get_disambiguator(self):
        # not the line number (numba's default): a docstring edited above a kernel would move
        # it and miss its cache entry though its code is the same
        return "k"

    @classmethod
    def from_function(cls, py_func, py_file):
        if not os.path.abspath(py_file).startswith(PACKAGE_DIR + os.sep):
            return None
        locator = cls(py_func, py_file)
        try:
            locator.ensure_cache_path()
        except OSError:
            return None   # not writable: numba falls back to its other locators
        return locator


# numba's cache implementation, whose locators the kernels' (here and rbd_ros.specialized's)
# go before; renamed in numba 0.6x
CACHE_IMPL = getattr(caching, "CacheImpl", None) or caching._CacheImpl
if _PackageCacheLocator not in CACHE_IMPL._locator_classes:
    CACHE_IMPL._locator_classes.insert(0, _PackageCacheLocator)

# Kernels are compiled for exactly these argument types, so a list, a float32 array or a
# strided view never triggers a silent recompilation: it raises TypeError, and the Python
# wrapper converts the argument once and calls again (see ``rbd_ros._checks``).
f64_1d = types.Array(types.float64, 1, "C")
f64_2d = types.Array(types.float64, 2, "C")
f64_3d = types.Array(types.float64, 3, "C")
f64_4d = types.Array(types.float64, 4, "C")
i64_1d = types.Array(types.int64, 1, "C")
f64_1d_ro = types.Array(types.float64, 1, "C", readonly=True)   # inputs a caller may lock
f64_2d_ro = types.Array(types.float64, 2, "C", readonly=True)   # the model's packed table
i64_1d_ro = types.Array(types.int64, 1, "C", readonly=True)     # the model's index arrays
u8_1d = types.Array(types.uint8, 1, "C")
u8_1d_ro = types.Array(types.uint8, 1, "C", readonly=True)       # a message's bytes
int64 = types.int64
float64 = types.float64
boolean = types.boolean
void = types.void

# 'contract' lets LLVM fuse multiply-adds (FMA): faster, and no less accurate. No other
# fast-math flag: 'nnan'/'ninf' would let it delete the finiteness checks on inputs.
_FASTMATH = {"contract"}


# a function an LLVM module declares (an external symbol): `declare <type> @name(` or @"name"(
_DECLARED = re.compile(r'^declare [^@]*@"?([^"(]+)"?\(', re.MULTILINE)
# Every entry point, in definition order: what ``rbd_ros.tools.warm_cache`` compiles ahead of use.
KERNELS = []
# What must happen once before any kernel is compiled or loaded from the cache (the BLAS
# symbol of ``rbd_ros._blas``): deferred from the import to the first call.
_BEFORE_FIRST_COMPILE = []


def before_first_compile(hook):
    """Register ``hook()`` to run once, before the first kernel compiles or loads."""
    _BEFORE_FIRST_COMPILE.append(hook)
    return hook


def _run_first_compile_hooks():
    while _BEFORE_FIRST_COMPILE:
        _BEFORE_FIRST_COMPILE[0]()
        del _BEFORE_FIRST_COMPILE[0]


class FirstCallDispatcher(registry.CPUDispatcher):
    """
    A kernel compiled for its one declared signature at its first call, not at import.

    ``numba.njit(signature)`` compiles (or loads from the cache) at import: every kernel,
    under a minute the first time after an install, and a second or two from the cache,
    though a process calls a handful. This one does the same work when first called from
    Python or first typed in another kernel, and from then on behaves as ``njit(signature)``:
    no other signature is ever compiled; a call with other argument types raises TypeError
    (which the Python wrappers turn into one conversion; see ``rbd_ros._checks``).
    """

    declared = None

    def compile_declared(self):
        """
        Compile (or load from the disk cache) the declared signature; once, thread-safe.

        The kernels it calls come first: it calls them by their symbol, which must be loaded
        before its own machine code is (:meth:`_called_by_symbol`).
        """
        with compiler_lock.global_compiler_lock:
            if self._can_compile:
                callees = called_kernels(self.py_func, {id(self)})
                for callee in callees:
                    callee.compile_declared()
                _run_first_compile_hooks()
                misses = sum(self.stats.cache_misses.values())
                with typeinfer.register_dispatcher(self):
                    self.compile(self.declared)
                self.disable_compile()
                if sum(self.stats.cache_misses.values()) > misses:     # compiled, not loaded
                    self._check_called_kernels(callees)
                self._called_by_symbol()

    def entry_point(self):
        """
        Return the declared signature's compiled CPython entry point (compiling it first).

        Its unboxing tests only that an array argument is an array of the declared item size:
        its callers test the rest (``rbd_ros._checks.bound_vector``, the generated calls).
        """
        self.compile_declared()
        return self.overloads[self.signatures[0]].entry_point

    def symbol(self):
        """
        Return the name callers know this kernel by: the same in every process.

        With its declared signature's digest: a caller compiled against another signature
        (a stale cache) cannot resolve it, rather than pass arguments the kernel does not take.
        """
        digest = hashlib.sha1(str(self.declared).encode()).hexdigest()[:12]
        return f"rbd_ros.kernel.{self.py_func.__module__}.{self.py_func.__qualname__}.{digest}"

    def declared_symbols(self):
        """Return the symbols the compiled code declares without defining (calls it links)."""
        text = self.overloads[self.declared.args].library.get_llvm_str()
        return set(_DECLARED.findall(text))

    def _check_called_kernels(self, callees):
        # A kernel called by symbol must be loaded before its caller's code is, else the JIT
        # linker cannot resolve it and LLVM aborts the process: called_kernels() must find every
        # kernel the code calls. Checked on the compiled code whenever a kernel compiles; a
        # kernel that fails it is taken out of the disk cache, so it is never loaded unchecked.
        loaded = {k.symbol(): k for k in KERNELS if k is not self}
        called = {loaded[name] for name in self.declared_symbols() if name in loaded}
        missed = called - set(callees)
        if missed:
            self._cache.flush()
            names = ", ".join(sorted(k.py_func.__name__ for k in missed))
            raise RuntimeError(
                f"{self.py_func.__name__} calls {names} where rbd_ros._jit.called_kernels does "
                "not see it (a kernel calls another by a global name, its own or a helper's)")

    def _called_by_symbol(self):
        # numba registers a compiled function with its library, which every kernel calling
        # it links in: LLVM then optimized and compiled the callee's code again inside each
        # caller (a batch kernel took as long as its single-state kernel, the 14 of them 44 s
        # of the 114 s CPU of a cold compile). Registered without its library, under a name
        # of its own (numba's names carry a per-process counter: a caller compiled by one
        # process and loaded by another would miss them), a caller declares that name and
        # the JIT linker resolves it to the code loaded here.
        result = self.overloads[self.declared.args]
        address = result.library.get_pointer_to_function(result.fndesc.mangled_name)
        if not address:
            raise RuntimeError(f"{self.py_func.__name__}: no compiled code to call")
        llvm.add_symbol(self.symbol(), address)
        callee = copy.copy(result.fndesc)
        callee.mangled_name = self.symbol()
        self.targetctx.remove_user_function(result.entry_point)
        self.targetctx.insert_user_function(result.entry_point, callee, ())

    def _compile_for_args(self, *args, **kws):
        # numba's C dispatcher calls this on a call no overload matches while compiling is
        # enabled (the first call), then calls what it returns with the same arguments:
        # the dispatcher itself, now compiled, matches them or raises TypeError
        self.compile_declared()
        return self

    def get_call_template(self, args, kws):
        self.compile_declared()          # called from another kernel being compiled
        return super().get_call_template(args, kws)


def called_kernels(func, seen=None):
    """
    Return the kernels ``func`` calls, through the functions it calls too, in first-call order.

    Read from its code's names (globals, attributes of global modules, its nested functions'
    too) and its closure: the ways numba's nopython code reaches another compiled function.
    ``seen``: ids of the dispatchers not to return (the kernel itself).
    """
    seen = set() if seen is None else seen
    found = []
    for target in _reachable(func):
        if id(target) in seen:
            continue
        seen.add(id(target))
        found += called_kernels(target.py_func, seen)
        if isinstance(target, FirstCallDispatcher):
            found.append(target)
    return found


def _reachable(func):
    codes, names = [func.__code__], []
    while codes:                                  # its nested functions' names count too
        code = codes.pop()
        names += code.co_names
        codes += [c for c in code.co_consts if inspect.iscode(c)]
    values = [func.__globals__.get(name) for name in names]
    values += [_cell_value(cell) for cell in func.__closure__ or ()]
    modules = [value for value in values if inspect.ismodule(value)]
    visited = {id(module) for module in modules}
    while modules:                                # a.b.c_kernel: attributes of attributes
        module = modules.pop()
        for name in names:
            value = getattr(module, name, None)
            if inspect.ismodule(value) and id(value) not in visited:
                visited.add(id(value))
                modules.append(value)
            values.append(value)
    return [value for value in values if isinstance(value, registry.CPUDispatcher)]


def _cell_value(cell):
    try:
        return cell.cell_contents
    except ValueError:                            # an empty cell: a name not bound yet
        return None


def _first_call(signature, options):
    def decorate(func):
        dispatcher = FirstCallDispatcher(py_func=func, locals={}, targetoptions=dict(options))
        dispatcher.enable_caching()
        dispatcher.declared = signature
        KERNELS.append(dispatcher)
        return dispatcher
    return decorate


# numba's options of every kernel (the specialized kernels, rbd_ros.specialized, take them too)
KERNEL_OPTIONS = {"nopython": True, "error_model": "numpy", "boundscheck": False,
                  "fastmath": _FASTMATH, "_nrt": False, "no_cfunc_wrapper": True}


def kernel(signature):
    """
    Return the decorator for a hot-path entry point: compiled for ``signature``, cached on disk.

    Entry points keep the GIL: calls on the same model from several Python threads then run
    one at a time instead of racing on the model's shared workspace (and a call is cheaper
    without releasing and retaking the GIL). Parallel work goes through the batch kernels.

    Kernels are compiled without numba's runtime (``_nrt=False``): they never allocate, and
    with the runtime every array passed down into an inlined step gets reference-count calls
    that LLVM cannot remove (an external atomic call per array per body, and a barrier to
    every load around it): the RNEA on talos ran 20 % slower through its steps than written
    out. Without it, the two compile to the same machine code. An allocation or ``np.dot`` in
    a kernel is a compile error; products go through ``rbd_ros._blas``.

    It is compiled at its first call (:class:`FirstCallDispatcher`), not at import.
    """
    return _first_call(signature, KERNEL_OPTIONS)


def batch_kernel(signature):
    """
    Return the decorator for a batch entry point: like :func:`kernel`, plus ``parallel=True``.

    Batch kernels release the GIL (``nogil=True``) while they run: a batch call on one
    thread (the node's planner services) leaves the others free to run Python, e.g. the
    node's ticks. They cannot race on a workspace: a batch call holds its Data's ``lock``
    and works in per-chunk copies (``Data.batch_workspace``).
    """
    return _first_call(signature, dict(KERNEL_OPTIONS, parallel=True, nogil=True))


class Helper(registry.CPUDispatcher):
    """
    A step called from kernels: a numba function of its own that LLVM always inlines.

    Not numba's IR inlining (``inline="always"``): that ran the callee's front end again and
    deep-copied its IR, its own inlined helpers included, at every call site, which made a
    cold compile of every kernel take 313 s on 2 cores instead of ~50 s, for calls as fast
    (doc/benchmarks.md, "Compiling the kernels from an empty cache"). A helper returning a
    tuple still costs nothing beyond its arithmetic once inlined.

    It is compiled without a Python entry point (and never cached on its own: the kernels
    that inline it are), so called from Python it runs as the plain Python function it is:
    the specialized generator reads the joint kinds that way.
    """

    def __call__(self, *args, **kwargs):
        return self.py_func(*args, **kwargs)


HELPER_OPTIONS = {"nopython": True, "forceinline": True, "no_cpython_wrapper": True,
                  "no_cfunc_wrapper": True, "error_model": "numpy", "boundscheck": False,
                  "fastmath": _FASTMATH, "_nrt": False}


def helper(func):
    """Return ``func`` as a :class:`Helper`: the decorator of every step a kernel calls."""
    return Helper(py_func=func, locals={}, targetoptions=dict(HELPER_OPTIONS))
