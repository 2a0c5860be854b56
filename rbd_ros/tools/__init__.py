"""
Command-line tools built on the dynamics node and the core, not part of the node itself.

``demo`` (``rbd_demo``): the node on the bundled arm, driven and reported live;
``trajectory_source`` (``joint_trajectory_source``): a node publishing a robot description
and joint states along a smooth trajectory.
"""
