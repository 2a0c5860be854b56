"""
rbd_replay without ``-o``: a fresh output directory in the working directory, never the bag's.

The bag's folder may be read-only or a source tree (``data/example_arm7``); a second run
without ``-o`` must not fail on the first one's output (it did: exit status 2, "exists").
"""
import os
import shutil

from rbd_ros.replay import cli

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BAG = os.path.join(ROOT, "data", "example_arm7")


def test_twice_without_output_writes_two_fresh_directories_in_the_working_directory(
        tmp_path, monkeypatch):
    source = tmp_path / "bags"
    shutil.copytree(BAG, source / "example_arm7")
    before = sorted(os.listdir(source))
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    argv = [str(source / "example_arm7"), "--outputs", "torques", "--no-plots", "--no-progress"]
    assert cli.main(argv) == 0
    assert cli.main(argv) == 0
    assert sorted(os.listdir(source)) == before, "nothing written beside the bag"
    assert sorted(os.listdir(work)) == ["example_arm7_replay", "example_arm7_replay_2",
                                        "example_arm7_replay_2_report",
                                        "example_arm7_replay_report"]


def test_the_default_output_skips_a_name_whose_report_directory_exists(tmp_path):
    (tmp_path / "bag_replay_report").mkdir()
    assert cli.default_output("/elsewhere/bag", str(tmp_path)) == \
        str(tmp_path / "bag_replay_2")
    assert cli.default_output("/elsewhere/bag.mcap/", str(tmp_path)) == \
        str(tmp_path / "bag_replay_2")
