"""
The dynamics node's planner services off the tick path: the trajectory services' execution.

``process``: the node's side of the child process that serves them (the default);
``child``: that process (``python -m rbd_ros.node.planner.child``), ``child_node``: its
rclpy node; ``worker``: a thread of the node's process instead (parameter
``planner_process`` false). The handlers they run are the node's
(``rbd_ros.node.trajectories``, ``rbd_ros.node.retime_service``).
"""
