"""The ROS 2 node: thin glue between messages and the dynamics core (no maths here)."""
