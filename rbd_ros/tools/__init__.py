"""
Command-line tools built on the core and the node, not part of the node itself.

``demo`` (``rbd_demo``): the node on the bundled arm, driven and reported live;
``trajectory_source`` (``joint_trajectory_source``): a node publishing a robot description
and joint states along a smooth trajectory; ``retime`` (``rbd_retime``): time-optimal timing of
a path under torque limits; ``excite`` (``rbd_excite``): excitation trajectories for
identification; ``warm_cache`` (``rbd_warm_cache``): compiles every kernel into the cache;
``sim`` (``rbd_sim``): a URDF's robot in MuJoCo on ROS topics (``mujoco_robot``: the physics,
``mujoco`` imported only there and only when used).
"""
