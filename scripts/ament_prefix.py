#!/usr/bin/env python3
"""
Make the running virtualenv an ament prefix for rbd_ros (the pip route's ``ros2`` commands).

Run with the virtualenv's Python after ``pip install -e .`` (``./dev.sh setup`` does):

    .venv/bin/python scripts/ament_prefix.py

An editable pip install puts the console scripts in ``bin/`` and nothing in the ament index,
so ``ros2 launch rbd_ros ...`` and ``ros2 run rbd_ros ...`` find nothing. This installs, in
the virtualenv, what colcon installs for an ament_python package, as links to the source tree
(editable, like the pip install: an edit of the launch file or config applies at once):

* ``share/ament_index/resource_index/packages/rbd_ros`` (the resource marker),
* ``share/rbd_ros/``: what ``setup.py``'s ``data_files`` list (package.xml, launch/,
  config/, robots/),
* ``lib/rbd_ros/``: the console scripts of ``setup.py`` (links to ``bin/``), where ``ros2 run``
  looks for executables,
* ``rbd_ros_ament_prefix.pth``: puts the virtualenv on ``AMENT_PREFIX_PATH`` in its Pythons
  (``ros2``, the nodes it starts) when it is not there yet, last (a sourced workspace
  overlays it).

Nothing half-written is left under a final name: each folder is made under a temporary name
beside its final one and renamed into place; files are written to a temporary and renamed.
"""
import os
import shutil
import sys
import sysconfig
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE = "rbd_ros"
# last on the path: an underlay, so a sourced workspace's packages take precedence over it
PTH = ("import os, sys; _p = os.environ.get('AMENT_PREFIX_PATH', ''); "
       "sys.prefix in _p.split(os.pathsep) or os.environ.__setitem__('AMENT_PREFIX_PATH', "
       "os.pathsep.join(filter(None, [_p, sys.prefix])))\n")


def setup_arguments():
    """Return the keyword arguments ``setup.py`` passes to ``setup()`` (it is not run)."""
    import setuptools
    captured = {}
    real, setuptools.setup = setuptools.setup, captured.update
    cwd = os.getcwd()
    try:
        os.chdir(ROOT)                     # setup.py globs relative paths
        with open("setup.py", encoding="utf-8") as f:
            exec(compile(f.read(), "setup.py", "exec"), {"__name__": "__main__"})
    finally:
        setuptools.setup, _ = real, os.chdir(cwd)
    return captured


def write_file(path, text):
    """Write ``text`` to ``path`` through a temporary beside it, renamed into place."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.partial-",
                               dir=os.path.dirname(path))
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)


def install_links(final, links):
    """
    Make the folder ``final`` hold exactly ``links`` ({relative path: target}), as links.

    Built under a temporary name beside ``final``, then renamed into place (the previous
    folder, if any, moved aside first and removed after).
    """
    parent = os.path.dirname(final)
    os.makedirs(parent, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix=f".{os.path.basename(final)}.partial-", dir=parent)
    try:
        for rel, target in links.items():
            path = os.path.join(tmp, rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            os.symlink(target, path)
        os.chmod(tmp, 0o755)
        old = None
        if os.path.lexists(final):
            old = tempfile.mkdtemp(prefix=f".{os.path.basename(final)}.old-", dir=parent)
            os.rename(final, os.path.join(old, "x"))
        os.rename(tmp, final)
        if old is not None:
            shutil.rmtree(old)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def main():
    prefix = sys.prefix
    if prefix == sys.base_prefix:
        sys.exit("run this with a virtualenv's Python: it makes the virtualenv an ament prefix")
    args = setup_arguments()
    share = {}
    for folder, files in args["data_files"]:
        for source in files:
            path = os.path.join(folder, os.path.basename(source))
            share[path] = os.path.join(ROOT, source)
    ours = f"share/{PACKAGE}/"
    install_links(os.path.join(prefix, "share", PACKAGE),
                  {p[len(ours):]: t for p, t in share.items() if p.startswith(ours)})
    scripts = [s.split("=")[0].strip() for s in args["entry_points"]["console_scripts"]]
    install_links(os.path.join(prefix, "lib", PACKAGE),
                  {name: os.path.join(prefix, "bin", name) for name in scripts})
    write_file(os.path.join(sysconfig.get_paths()["purelib"], "rbd_ros_ament_prefix.pth"), PTH)
    # the marker last: the index names the package once everything it points to is there
    write_file(os.path.join(prefix, "share", "ament_index", "resource_index", "packages",
                            PACKAGE), "")
    print(f"ament prefix: {prefix} (share/{PACKAGE}, lib/{PACKAGE}: {', '.join(scripts)})")


if __name__ == "__main__":
    main()
