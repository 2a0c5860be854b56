#!/usr/bin/env bash
# Developer entry point. Every command first makes sure the virtualenv is ready.
#   ./dev.sh demo    set up, then run the main job: rbd_demo (the dynamics node on the bundled
#                    arm, live report; args go to rbd_demo, e.g. --duration 30 --all-outputs)
#   ./dev.sh test    set up, then run the whole test suite (args go to pytest, e.g. test/core:
#                    the tests that need no ROS; test/node, test/replay: the node's, the replay's)
#   ./dev.sh bench   set up, then run the core benchmark against Pinocchio on all robots
#   ./dev.sh docs    set up, then build the manual (doc/) into doc/_build/html, warnings as
#                    errors (sphinx-build -W -n), offline
#   ./dev.sh setup   only set up
# Setup makes the venv an ament prefix for rbd_ros (scripts/ament_prefix.py) and, where
# ../shared/ros-tools exists (CI, developers' machines), installs the ROS 2 command-line tools
# (ros2 launch/run/param/...) into it, which the end-to-end tests use.
# Environment: RBD_VENV (default .venv), PYTHON (default python3).
set -euo pipefail
cd "$(dirname "$0")"
VENV=${RBD_VENV:-.venv}
PYTHON=${PYTHON:-python3}

setup() {
    if [ ! -x "$VENV/bin/python" ]; then
        "$PYTHON" -m venv "$VENV"
    fi
    # pip is quick when everything is already there; the stamp skips it entirely
    local stamp="$VENV/.rbd_ros_setup" want
    want=$(cat setup.py | sha256sum | cut -c1-16)
    if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
        "$VENV/bin/python" -m pip install -q --upgrade pip
        "$VENV/bin/python" -m pip install -q -e ".[test,bench,ros,doc,sim]"
        echo "$want" > "$stamp"
    fi
    # the node's messages and services (skipped when up to date)
    "$VENV/bin/python" scripts/build_interfaces.py
    # share/rbd_ros, lib/rbd_ros and the index marker: ros2 launch/run rbd_ros in the venv
    "$VENV/bin/python" scripts/ament_prefix.py
    if [ -x ../shared/ros-tools/install.sh ]; then
        ../shared/ros-tools/install.sh "$VENV"
    fi
    # every kernel compiled into the cache now, in parallel, with progress (a minute or
    # more after an install or an update; seconds when they are cached)
    "$VENV/bin/python" -m rbd_ros.tools.warm_cache
}

cmd=${1:-demo}
shift || true
case "$cmd" in
    setup) setup ;;
    demo)  setup; exec "$VENV/bin/rbd_demo" "$@" ;;
    test)  setup; exec "$VENV/bin/python" -m pytest "$@" ;;
    bench) setup; exec "$VENV/bin/python" bench/bench_core.py "$@" ;;
    docs)  setup; exec "$VENV/bin/python" -m sphinx -W -n --keep-going -q -b html doc doc/_build/html "$@" ;;
    *) echo "usage: $0 {demo|test|bench|docs|setup} [args...]" >&2; exit 2 ;;
esac
