"""
Replay the bundled bag of the 7-dof arm and identify its inertias from the recording.

    python examples/replay_bag.py [BAG] [OUT_DIR]     # default: data/example_arm7, a temp dir

The same as ``rbd_replay BAG -o OUT/bag --identify consistent --no-plots``; then reads the
report: the RMS torque error of the URDF and of the identified model.
"""
import json
import os
import subprocess
import sys
import tempfile

here = os.path.dirname(os.path.abspath(__file__))
bag = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "..", "data", "example_arm7")
out = sys.argv[2] if len(sys.argv) > 2 else tempfile.mkdtemp(prefix="rbd_replay_example_")
output = os.path.join(out, "bag")
subprocess.run([sys.executable, "-m", "rbd_ros.replay", bag, "-o", output,
                "--identify", "consistent", "--no-plots", "--no-progress"], check=True,
               stdout=subprocess.DEVNULL)
with open(output + "_report/report.json", encoding="utf-8") as f:
    report = json.load(f)
found = report["identification"]
print(f"{report['answered']} of {report['messages']} messages answered")
print(f"RMS torque error: URDF {found['rms_before']:.3f} N m, "
      f"identified {found['rms_after']:.3f} N m")
print("identified URDF:", found["urdf"])
