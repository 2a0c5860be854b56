"""``python -m rbd_ros.replay``: the ``rbd_replay`` command."""
import sys

from .cli import main

sys.exit(main())
