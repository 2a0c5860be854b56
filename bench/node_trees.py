"""
The source trees ``bench_node.py`` runs a node from: this checkout, a revision, or the floor.

:class:`SourceTree` is the working tree or a revision extracted with ``git archive`` (each
with its numba cache), :class:`FloorTree` the messaging floor (``node_floor.py``) run from
this checkout in the node's place; ``node_run.start_node`` starts either.
"""
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
NODE_NAME = "rbd_dynamics"            # the name bench_node runs the node under
FLOOR_CORE = "floor + core"       # the label of the floor making the core calls (--core)
FLOOR_PINOCCHIO = "floor + Pinocchio"   # ... making Pinocchio's calls instead (--pinocchio)


class SourceTree:
    """
    A tree of rbd_ros to run the node from: this checkout, or a revision.

    A revision is extracted with ``git archive`` once into ~/.cache/rbd_ros/bench_node/<sha>/
    (kept: a second run reuses it and its numba cache, NUMBA_CACHE_DIR beside it, so only
    the first run compiles the kernels). The working tree keeps the caller's NUMBA_CACHE_DIR.
    Either tree's kernels are compiled into its cache before any run (``rbd_warm_cache``,
    where the tree has it): the node compiles its services' kernels in the background after
    its first output, which in a tree with a cold cache fell inside the measured window
    (CPU 180 %, outputs dropped).
    """

    def __init__(self, revision=None):
        repo = os.path.dirname(HERE)
        if revision is None:
            self.label, self.path = "current", repo
            self.cache = os.environ.get("NUMBA_CACHE_DIR")
            self._warm_cache()
            return
        sha = subprocess.run(["git", "-C", repo, "rev-parse", "--verify",
                              revision + "^{commit}"], check=True, capture_output=True,
                             text=True).stdout.strip()
        base = os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")
        root = os.path.join(base, "rbd_ros", "bench_node", sha[:12])
        self.label, self.path = f"before {revision}", os.path.join(root, "tree")
        self.cache = os.path.join(root, "numba_cache")
        if not os.path.exists(os.path.join(root, "complete")):
            os.makedirs(self.path, exist_ok=True)
            archive = subprocess.Popen(["git", "-C", repo, "archive", sha],
                                       stdout=subprocess.PIPE)
            subprocess.run(["tar", "-x", "-C", self.path], stdin=archive.stdout, check=True)
            if archive.wait():
                raise RuntimeError(f"git archive {sha} failed")
            open(os.path.join(root, "complete"), "w").close()
        os.makedirs(self.cache, exist_ok=True)
        self._warm_cache()

    def _warm_cache(self):
        # where the tree has it: rbd_ros/tools/ since the layers move, rbd_ros/ before
        found = [module for module in ("rbd_ros.tools.warm_cache", "rbd_ros.warm_cache")
                 if os.path.exists(os.path.join(self.path, *module.split(".")) + ".py")]
        if not found:
            return                             # an older tree: it compiles as it runs
        print(f"{self.label}: compiling its kernels into its cache if needed", flush=True)
        subprocess.run([sys.executable, "-m", found[0]], env=self.env(),
                       cwd=self.path, check=True, stdout=subprocess.DEVNULL)

    def env(self):
        env = dict(os.environ, PYTHONPATH=self.path, PYTHONUNBUFFERED="1")
        if self.cache:
            env["NUMBA_CACHE_DIR"] = self.cache
        return env


class FloorTree:
    """
    The messaging floor (``node_floor.py``) run in the node's place: this checkout's code.

    Its process relays joint_states to the node's output topics with no dynamics between;
    with ``core`` it makes the core calls of the node's tick too (``node_floor.py --core``),
    with ``pinocchio`` Pinocchio's calls for the same outputs (``--pinocchio``).
    """

    floor = True

    def __init__(self, tree, core=False, pinocchio=False):
        self.path, self.cache = tree.path, tree.cache
        self.core, self.pinocchio = core, pinocchio
        self.label = FLOOR_CORE if core else FLOOR_PINOCCHIO if pinocchio else "floor"

    def env(self):
        return SourceTree.env(self)
