"""Replay a rosbag2 of joint states through rbd_ros (``rbd_replay``; see ``cli``)."""
from .bag_io import ReplayError, typestore
from .cli import main
from .one_bag import replay
from .options import ReplayOptions
from .recorded_ticks import savgol_derivative

__all__ = ["main", "replay", "ReplayError", "ReplayOptions", "savgol_derivative", "typestore"]
