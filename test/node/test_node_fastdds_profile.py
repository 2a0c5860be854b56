"""
The node's process runs with the package's Fast DDS profile (``rbd_ros.node.fastdds_profile``).

Fast DDS gives a participant a 512 kB shared-memory segment; at 1 kHz talos's outputs fill
it with the ~11 ticks a local subscriber has not read yet, and a publish then waits for a
buffer, the node with it. The process started as users start it (``main``) maps a segment
of 8 MB of its own (no planner process: nothing else of 8 MB to map), unless the
environment chooses a Fast DDS configuration itself.
"""
import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))

from node_cases import ARM7, _run_node_process, xml  # noqa: E402
from node_helpers import shm_segment_sizes, wait_for  # noqa: E402
from rbd_ros.node import fastdds_profile  # noqa: E402

SEGMENT = 8 * 2**20             # config/fastdds_large_messages.xml's segment_size


@pytest.mark.parametrize("choice", [None, "FASTDDS_BUILTIN_TRANSPORTS"])
def test_the_node_process_publishes_through_an_8_mb_segment(tmp_path, monkeypatch, choice):
    for name in fastdds_profile.FASTDDS_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("RMW_IMPLEMENTATION", raising=False)
    if choice:                                      # the user's Fast DDS choice: left be
        monkeypatch.setenv(choice, "DEFAULT")
    ns, proc, log = _run_node_process(tmp_path, {"robot_description": xml(ARM7),
                                                 "planner_process": False})
    try:
        # its own segment is mapped as its participant is made, before discovery can map
        # another participant's: the first one seen is its own
        wait_for(lambda: proc.poll() is not None or max(shm_segment_sizes(proc.pid)) > 0,
                 timeout=60.0, what="the node process's shared-memory segment")
        assert proc.poll() is None, open(log.name).read()[-2000:]
        largest = max(shm_segment_sizes(proc.pid))
        if choice:
            assert largest < SEGMENT, shm_segment_sizes(proc.pid)
        else:
            assert largest >= SEGMENT, shm_segment_sizes(proc.pid)
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        log.close()


def test_the_profile_is_given_only_where_nothing_else_is_chosen():
    profile = fastdds_profile.large_messages_profile()
    assert profile is not None and os.path.isfile(profile)
    assert fastdds_profile.profile_for({}) == profile
    for name in fastdds_profile.FASTDDS_VARIABLES:
        assert fastdds_profile.profile_for({name: "/their/choice"}) is None
    assert fastdds_profile.profile_for({"RMW_IMPLEMENTATION": "rmw_cyclonedds_cpp"}) is None
    environ = {}
    assert fastdds_profile.use_large_messages_profile(environ) == profile
    assert environ == {"FASTRTPS_DEFAULT_PROFILES_FILE": profile}
    mine = {"FASTRTPS_DEFAULT_PROFILES_FILE": "/their/profile.xml"}
    assert fastdds_profile.use_large_messages_profile(mine) is None
    assert mine == {"FASTRTPS_DEFAULT_PROFILES_FILE": "/their/profile.xml"}
