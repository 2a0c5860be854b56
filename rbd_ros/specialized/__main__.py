"""
Compile a generated file's kernels into numba's disk cache: the child process's work.

    python -m rbd_ros.specialized <cache>/specialized/<key>.py

Run by ``rbd_ros.specialize`` (``loader.compile_in_child``) so that numba's compile, which
holds the GIL for seconds, does not stall the process that asked for it.
"""
import sys

from .loader import compile_file


def main(argv):
    if len(argv) != 1:
        print("usage: python -m rbd_ros.specialized <generated file>", file=sys.stderr)
        return 2
    compile_file(argv[0])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
