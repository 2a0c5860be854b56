#!/usr/bin/env python3
"""
Time ``load_model`` on large generated URDFs: trees and chains of 1,000 to 10,000 links.

Each document has visual and collision content (which the loader drops) and half of its
joints fixed (merged into their parents), as CAD exports do. Prints the best of
``--repeats`` loads per document, and the time per link.

    python bench/bench_urdf_load.py [--sizes 1000,5000,10000] [--repeats 3] [--rbd-ros DIR]

``--rbd-ros DIR`` times another checkout's loader (e.g. the main branch's).
"""
import argparse
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))

LINK = ('<link name="l{i}"><inertial><origin xyz="0 0 0.05" rpy="0 0 0"/><mass value="1"/>'
        '<inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial>'
        '<visual><geometry><box size="0.1 0.1 0.1"/></geometry><material name="grey"/>'
        '</visual><collision><geometry><cylinder radius="0.05" length="0.1"/></geometry>'
        '</collision></link>')
JOINT = ('<joint name="j{i}" type="{kind}"><parent link="l{parent}"/><child link="l{i}"/>'
         '<origin xyz="0 0.01 0.1" rpy="0 0.1 0"/><axis xyz="0 {a} {b}"/>'
         '<limit lower="-1" upper="1" effort="10" velocity="2"/></joint>')


def document(n, shape):
    """Return a URDF of ``n`` links: a 'chain' or a 'tree' (link i hangs from link i // 2)."""
    links = "".join(LINK.format(i=i) for i in range(n))
    joints = "".join(JOINT.format(i=i, parent=(i - 1 if shape == "chain" else (i - 1) // 2),
                                  kind="fixed" if i % 2 == 0 else "revolute",
                                  a=i % 2, b=1 - i % 2) for i in range(1, n))
    return f'<robot name="{shape}{n}">{links}{joints}</robot>'


def best_of(fn, repeats):
    """Return the best wall time of ``repeats`` calls, in s."""
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000,5000,10000")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--rbd-ros", default=os.path.join(HERE, os.pardir),
                        help="checkout to import rbd_ros from (default: this one)")
    args = parser.parse_args()
    sys.path.insert(0, os.path.abspath(args.rbd_ros))
    import rbd_ros
    print(f"rbd_ros from {os.path.dirname(rbd_ros.__file__)}")
    print(f"{'document':>12s} {'links':>6s} {'dof':>5s} {'MB':>5s} {'load [s]':>9s} "
          f"{'per link [µs]':>14s}")
    for n in (int(s) for s in args.sizes.split(",")):
        for shape in ("tree", "chain"):
            text = document(n, shape)
            model = rbd_ros.load_model(text)
            seconds = best_of(lambda: rbd_ros.load_model(text), args.repeats)   # noqa: B023
            print(f"{shape:>12s} {n:6d} {model.nv:5d} {len(text) / 1e6:5.1f} {seconds:9.3f} "
                  f"{seconds / n * 1e6:14.0f}")


if __name__ == "__main__":
    main()
