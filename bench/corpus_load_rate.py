#!/usr/bin/env python3
"""
Load every robot of the URDF corpus (test/corpus.py) with default options; print a table.

For each robot: whether ``rbd_ros.load_model`` loads it (fixed base, default options) and
whether Pinocchio's ``buildModelFromUrdf`` does, then the load rate. ``--rbd-ros DIR`` loads
rbd_ros from another checkout (e.g. the main branch, to compare loaders); ``--markdown``
prints the README's table.

    python bench/corpus_load_rate.py [--rbd-ros /path/to/checkout] [--markdown] [--mimic M]
"""
import argparse
import os
import sys
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rbd-ros", help="checkout to import rbd_ros from")
    parser.add_argument("--markdown", action="store_true", help="a Markdown table")
    parser.add_argument("--mimic", help="load_model's mimic option (default: its default)")
    args = parser.parse_args()
    if args.rbd_ros:           # imported first, so that the test helpers reuse this one
        sys.path.insert(0, os.path.abspath(args.rbd_ros))
    import rbd_ros
    sys.path.insert(0, os.path.join(HERE, os.pardir, "test"))
    from corpus import CORPUS, MISSING, read
    try:
        import pinocchio as pin
    except ImportError:
        pin = None
    print(f"rbd_ros from {os.path.dirname(rbd_ros.__file__)}; "
          f"missing corpus packages: {list(MISSING) or 'none'}", file=sys.stderr)
    options = {"mimic": args.mimic} if args.mimic else {}
    rows = [_row(rbd_ros, pin, name, path, read(name), options) for name, path in CORPUS.items()]
    loaded = sum(1 for r in rows if r[1] == "loads")
    pin_loaded = [r for r in rows if r[3] == "loads"]
    both = sum(1 for r in pin_loaded if r[1] == "loads")
    if args.markdown:
        print("| robot | dof (fixed base) | rbd_ros, default options | Pinocchio | mimic |")
        print("| --- | --- | --- | --- | --- |")
        for name, result, dof, pin_result, mimic in rows:
            print(f"| {name} | {dof} | {result} | {pin_result} | {mimic} |")
    else:
        for name, result, dof, pin_result, mimic in rows:
            print(f"{name:48s} {str(dof):>4s}  {result[:60]:60s}  pin: {pin_result[:20]:20s}"
                  f" {mimic}")
    print(f"\nrbd_ros loads {loaded}/{len(rows)} ({100 * loaded / max(1, len(rows)):.0f} %); "
          f"of the {len(pin_loaded)} that Pinocchio loads: {both}")


def _row(rbd_ros, pin, name, path, text, options):
    import re
    from corpus import has_movable_mimic
    mimic = ("" if not re.search(r"<mimic\b", text) else
             "movable joints" if has_movable_mimic(text) else "on fixed joints only")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            model = rbd_ros.load_model(path, **options)
            result, dof = "loads", model.nv
        except Exception as exc:          # a survey: any failure is a row, not a stop
            why = str(exc).replace(f" ({path})", "").replace(f"({path})", "")
            result, dof = f"refused: {why.splitlines()[0][:80]}", "-"
    if pin is None:
        return name, result, dof, "not installed", mimic
    try:
        pin.buildModelFromUrdf(path)
        pin_result = "loads"
    except Exception as exc:
        pin_result = f"fails: {str(exc).replace(path, '<file>').splitlines()[0][:60]}"
    return name, result.replace("|", "/"), dof, pin_result.replace("|", "/"), mimic


if __name__ == "__main__":
    main()
