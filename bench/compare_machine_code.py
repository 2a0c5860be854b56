#!/usr/bin/env python3
"""
Compare the machine code of every kernel of two source trees: the instructions a change runs.

    python bench/compare_machine_code.py --before REV [--after PATH_OR_REV]
        [--kernels rnea_kernel,aba_kernel] [--twice]

A change that only moves kernel code between Python modules (a helper written once instead
of twice, a closure instead of a hand-written forwarder, a renamed module) should leave the
compiled kernels as they were; timing it on a shared 2-core machine shows a few per cent of
noise at best (``bench_revisions.py``). This script answers it exactly: each tree compiles
every kernel of ``rbd_ros._jit.KERNELS`` afresh (an empty numba cache) in a worker process of
its own, the two run side by side, and each kernel's assembly is compared after dropping what
names it and not what it does: comments and debug lines, numba's unique ids and addresses in
symbol names, and the names of the ``NumbaEnv`` symbols (one per inlined helper, named after
the module that defines it: their declarations are left out, an instruction that loads one is
compared with the name replaced). Immediates and constant pools are compared as they are.
Per kernel it prints "same" or how many lines differ.

numba's parallel (batch) kernels are not reproducible to the instruction: two compiles of the
same source differ in the register allocation of the parfor wrapper's argument unpacking.
``--twice`` compiles the before tree a second time, so that the table shows that noise beside
the difference between the trees.

Trees are checked out as ``bench_revisions.py`` does (``--before`` a revision in a temporary
worktree; ``--after`` this working tree by default). It takes about as long as compiling the
kernels twice (~1.5 min on 2 cores).
"""
import argparse
import difflib
import os
import re
import subprocess
import sys
import tempfile

from bench_revisions import HERE, Tree, git

# what a symbol's name carries that is not code: numba's unique function ids (``B4v367B``)
# and the addresses of Python objects mangled into names (``gufunc_0x7feb...``,
# ``at_200x7feb...``); only inside a name, so that an immediate (``$0x3ff0...``) or a
# constant pool's entry is compared as it is
_IDS = (re.compile(r"B\d+v\d+B"), re.compile(r"(?<=[A-Za-z0-9_])0x[0-9a-f]{6,}"))
_ENV = re.compile(r"_ZN08NumbaEnv\w*")


def normalized(asm):
    """Return ``asm`` without comments, debug lines and NumbaEnv symbols, ids replaced."""
    lines = []
    for line in asm.splitlines():
        stripped = line.lstrip()
        if stripped.startswith((";", "#", ".file", ".loc")):
            continue
        if "NumbaEnv" in line:
            if stripped.startswith(".") or stripped.endswith(":"):
                continue                 # its declaration: one per inlined helper, not code
            line = _ENV.sub("NumbaEnv", line)   # an instruction that loads it: compared
        for pattern in _IDS:
            line = pattern.sub("ID", line)
        lines.append(line)
    return lines


def dump(out_dir, names):
    """Worker: compile the kernels of the rbd_ros on sys.path and write their assembly."""
    from rbd_ros import _jit
    from rbd_ros.tools import warm_cache
    # a tree older than this script names it _define_kernels
    define = getattr(warm_cache, "define_kernels", None) or getattr(warm_cache, "_define_kernels")
    define()
    for kernel in _jit.KERNELS:
        name = kernel.py_func.__name__
        if names and name not in names:
            continue
        kernel.compile_declared()
        (asm,) = kernel.inspect_asm().values()
        with open(os.path.join(out_dir, name + ".s"), "w") as f:
            f.write("\n".join(normalized(asm)) + "\n")


def start_dump(tree_path, out_dir, names):
    """Start a worker compiling ``tree_path``'s kernels into an empty cache of its own."""
    env = dict(os.environ, PYTHONPATH=tree_path,
               NUMBA_CACHE_DIR=tempfile.mkdtemp(dir=out_dir, prefix="cache-"))
    command = [sys.executable, os.path.abspath(__file__), "--dump", out_dir]
    if names:
        command += ["--kernels", ",".join(names)]
    return subprocess.Popen(command, env=env, cwd=out_dir)


def differing_lines(a, b):
    """Return how many lines of the files a and b are not in their longest common run."""
    with open(a) as fa, open(b) as fb:
        x, y = fa.read().splitlines(), fb.read().splitlines()
    if x == y:
        return 0
    matcher = difflib.SequenceMatcher(None, x, y, autojunk=False)
    same = sum(block.size for block in matcher.get_matching_blocks())
    return len(x) + len(y) - 2 * same


def compare(dirs, labels):
    """Print a row per kernel: its size and, per pair of dumps, "same" or the lines differing."""
    kernels = sorted({f[:-2] for d in dirs for f in os.listdir(d) if f.endswith(".s")})
    pairs = [(0, k) for k in range(1, len(dirs))]
    print(f"{'kernel':<46} {'lines':>6} " + " ".join(f"{labels[k]:>16}" for _, k in pairs))
    changed = 0
    for name in kernels:
        files = [os.path.join(d, name + ".s") for d in dirs]
        if not all(os.path.exists(f) for f in files):
            print(f"{name:<46} missing in a tree")
            changed += 1
            continue
        counts = [differing_lines(files[a], files[b]) for a, b in pairs]
        with open(files[0]) as f:
            size = sum(1 for _ in f)
        changed += counts[0] != 0
        print(f"{name:<46} {size:>6} " + " ".join(
            f"{'same' if n == 0 else f'{n} differ':>16}" for n in counts))
    print(f"{len(kernels) - changed} of {len(kernels)} kernels the same machine code")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", help="git revision (e.g. HEAD~1, main)")
    parser.add_argument("--after", help="directory or git revision (default: the working "
                        "tree that contains this script)")
    parser.add_argument("--kernels", help="comma-separated kernel names (default: all)")
    parser.add_argument("--twice", action="store_true",
                        help="also compile the before tree a second time (numba's own noise)")
    parser.add_argument("--dump", help=argparse.SUPPRESS)
    args = parser.parse_args()
    names = set(args.kernels.split(",")) if args.kernels else set()
    if args.dump:
        return dump(args.dump, names)
    if not args.before:
        parser.error("--before REV is required")
    repo = git(HERE, "rev-parse", "--show-toplevel")
    trees, workers = [], []
    with tempfile.TemporaryDirectory(prefix="rbd_ros_asm_") as scratch:
        try:
            trees.append(Tree("before", repo, args.before))
            trees.append(Tree("after", repo, args.after or repo))
            runs = [(trees[0], "before"), (trees[1], "after")]
            if args.twice:
                runs.append((trees[0], "before again"))
            dirs = []
            for tree, label in runs:
                print(f"{label}: {tree.desc}", flush=True)
                dirs.append(os.path.join(scratch, label.replace(" ", "_")))
                os.makedirs(dirs[-1])
            for (tree, _), d in zip(runs, dirs):
                workers.append(start_dump(tree.path, d, names))
            if any([w.wait() for w in workers]):       # every one waited for: they use scratch
                sys.exit("a worker failed (its error is above)")
            compare(dirs, ["before/" + label for _, label in runs])
        finally:
            for worker in workers:       # interrupted: none left compiling in a removed tree
                if worker.poll() is None:
                    worker.kill()
                    worker.wait()
            for tree in trees:
                tree.remove()


if __name__ == "__main__":
    main()
