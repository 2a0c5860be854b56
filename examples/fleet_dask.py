"""
A fleet on a Dask cluster: replay and identify several robots' bags in parallel.

    python examples/fleet_dask.py [OUT_DIR] [--bags 3] [--duration 3] [--workers 2]

It writes a small simulated fleet (``scripts/make_fleet_bags.py``: 7-dof arms whose inertias,
friction and rotors differ from the URDF's), starts a ``dask.distributed`` ``LocalCluster``
(replace it by your cluster's scheduler address), and runs

    rbd_replay OUT/bags -o OUT/fleet --scheduler tcp://... --identify --friction --armature

then reads the fleet report: each bag's RMS torque error with the URDF, and the RMS error of
the URDF and of the model identified from the whole fleet.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

from distributed import LocalCluster

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "scripts"))
import make_fleet_bags  # noqa: E402


def main():
    """Make the bags, start the cluster, replay, print the report."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument("out", nargs="?", help="output folder (default: a new temporary one)")
    parser.add_argument("--bags", type=int, default=3)
    parser.add_argument("--duration", type=float, default=3.0, help="s of the first bag")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    args.out = args.out or tempfile.mkdtemp(prefix="rbd_fleet_")
    bags = make_fleet_bags.write_fleet(os.path.join(args.out, "bags"), bags=args.bags,
                                       duration=args.duration)
    output = os.path.join(args.out, "fleet")
    with LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster:
        subprocess.run([sys.executable, "-m", "rbd_ros.replay", *bags, "-o", output,
                        "--scheduler", cluster.scheduler_address, "--identify", "--friction",
                        "--armature", "--no-bag", "--no-plots", "--no-progress"],
                       check=True, stdout=subprocess.DEVNULL)
    with open(os.path.join(output, "fleet_report", "fleet.json"), encoding="utf-8") as f:
        report = json.load(f)
    for row in report["bags"]:
        print(f"{row['name']}: {row['answered']} of {row['messages']} messages answered, "
              f"RMS torque error with the URDF {row['rms']:.3f} N m")
    found = report["identification"]
    print(f"fleet RMS torque error: URDF {found['rms_before']:.3f} N m, "
          f"identified {found['rms_after']:.3f} N m")
    print("identified URDF:", os.path.join(output, "identified.urdf"))


if __name__ == "__main__":
    main()
