#!/usr/bin/env python3
"""
Build rbd_ros_interfaces (msg/srv) into the running virtualenv, without a ROS install.

Run with the virtualenv's Python after ``pip install -e .[ros]``:

    .venv/bin/python scripts/build_interfaces.py [--force]

It uses colcon, ament_cmake and the rosidl generators installed from PyPI (the ros-jazzy-*
wheels). Two traps are handled here so that nobody fixes them by hand:

* The wheels' CMake exports hard-code the include directories of the machine they were built
  on (``/opt/python/cp311-cp311/include/python3.11`` and that machine's numpy). They are
  rewritten, in this virtualenv only, to this interpreter's and this numpy's directories.
* colcon does not look for packages inside a package's folder, and the repository root is
  the rbd_ros package, so the nested interfaces package is named with ``--paths``.

The package is installed into the virtualenv itself (``--merge-install``): its libraries land
in ``<venv>/lib``, which the ROS wheels put on the library path of every Python started from
the virtualenv, so ``import rbd_ros_interfaces`` then works with no environment set up.
A stamp skips the build when the interface files have not changed.
"""
import argparse
import glob
import hashlib
import os
import shutil
import subprocess
import sys
import sysconfig

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE = os.path.join(ROOT, "rbd_ros_interfaces")
BUILT_ON = "/opt/python/cp311-cp311"


def fix_cmake_exports(prefix):
    """Point the wheels' hard-coded include directories at this interpreter's."""
    import numpy
    python_include = sysconfig.get_paths()["include"]
    replacements = {
        f"{BUILT_ON}/include/python{sys.version_info.major}.{sys.version_info.minor}":
            python_include,
        f"{BUILT_ON}/lib/python{sys.version_info.major}.{sys.version_info.minor}"
        "/site-packages/numpy/_core/include": numpy.get_include(),
    }
    changed = 0
    for path in glob.glob(os.path.join(prefix, "share", "*", "cmake", "*.cmake")):
        with open(path, encoding="utf-8") as f:
            text = f.read()
        if BUILT_ON not in text:
            continue
        new = text
        for old, rep in replacements.items():
            new = new.replace(old, rep)
        if new != text:
            with open(path, "w", encoding="utf-8") as f:
                f.write(new)
            changed += 1
    return changed


def source_hash():
    digest = hashlib.sha256(sys.version.encode())
    for path in sorted(glob.glob(os.path.join(PACKAGE, "**", "*"), recursive=True)):
        if os.path.isfile(path):
            digest.update(os.path.relpath(path, PACKAGE).encode())
            with open(path, "rb") as f:
                digest.update(f.read())
    return digest.hexdigest()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--force", action="store_true", help="build even if up to date")
    args = parser.parse_args()
    prefix = sys.prefix
    if prefix == sys.base_prefix:
        sys.exit("run this with a virtualenv's Python: it installs into the virtualenv")
    stamp = os.path.join(prefix, "share", "rbd_ros_interfaces", ".rbd_ros_source_hash")
    want = source_hash()
    if not args.force and os.path.isfile(stamp) and open(stamp).read() == want:
        print("rbd_ros_interfaces: up to date")
        return
    colcon = shutil.which("colcon", path=os.path.join(prefix, "bin"))
    if colcon is None:
        sys.exit("colcon is not installed in this virtualenv: pip install -e .[ros]")
    print(f"rbd_ros_interfaces: fixed {fix_cmake_exports(prefix)} CMake export files")
    env = dict(os.environ)
    env["PATH"] = os.path.join(prefix, "bin") + os.pathsep + env.get("PATH", "")
    for var in ("AMENT_PREFIX_PATH", "CMAKE_PREFIX_PATH"):
        env[var] = prefix + (os.pathsep + env[var] if env.get(var) else "")
    build_base = os.path.join(ROOT, "build", "interfaces")
    cmd = [colcon, "--log-base", os.path.join(build_base, "log"), "build",
           "--paths", PACKAGE, "--merge-install", "--install-base", prefix,
           "--build-base", build_base, "--cmake-args", "-DBUILD_TESTING=OFF",
           f"-DPython3_EXECUTABLE={sys.executable}"]
    print("rbd_ros_interfaces: " + " ".join(cmd))
    subprocess.run(cmd, env=env, check=True, cwd=ROOT)
    with open(stamp, "w") as f:
        f.write(want)


if __name__ == "__main__":
    main()
