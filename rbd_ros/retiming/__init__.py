"""Time-optimal retiming of a path under the robot's torque and velocity limits (TOPP-RA)."""
from .retimer import Retimed, retime

__all__ = ["Retimed", "retime"]
