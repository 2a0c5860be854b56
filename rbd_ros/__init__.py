"""rbd_ros: rigid-body dynamics of a robot, compiled with numba, for ROS 2.

    import rbd_ros
    model = rbd_ros.load_model("robot.urdf", floating_base=False)
    tau = rbd_ros.rnea(model, q, v, a)
"""
from . import _jit  # noqa: F401  (installs the kernel cache locator before anything compiles)
from . import inertia, robots
from .algorithms.aba import aba
from .algorithms.crba import crba
from .algorithms.rnea import gravity_torques, nonlinear_effects, rnea
from .model import Data, Model
from .urdf import URDFError, load_model

__all__ = ["Data", "Model", "URDFError", "aba", "crba", "gravity_torques", "inertia", "robots",
           "load_model", "nonlinear_effects", "rnea"]
__version__ = "0.1.0"
