"""Time-optimal retiming of a path under the robot's torque and velocity limits (TOPP-RA)."""
