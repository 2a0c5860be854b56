"""rbd_ros: rigid-body dynamics of a robot, compiled with numba, for ROS 2.

    import rbd_ros
    model = rbd_ros.load_model("robot.urdf", floating_base=False)
    tau = rbd_ros.rnea(model, q, v, a)
"""
from . import _jit  # noqa: F401  (installs the kernel cache locator before anything compiles)
from . import inertia, robots
from .algorithms.aba import aba
from .algorithms.aba_derivatives import aba_derivatives
from .algorithms.crba import crba
from .algorithms.finite_differences import aba_derivatives_fd, integrate, rnea_derivatives_fd
from .algorithms.minv import minv
from .algorithms.minv_cholesky import minv_cholesky
from .algorithms.rnea import gravity_torques, nonlinear_effects, rnea
from .algorithms.rnea_derivatives import rnea_derivatives
from .model import Data, Model
from .urdf import URDFError, load_model

__all__ = ["Data", "Model", "URDFError", "aba", "aba_derivatives", "aba_derivatives_fd", "crba",
           "gravity_torques", "inertia", "integrate", "load_model", "minv", "minv_cholesky",
           "nonlinear_effects", "rnea", "rnea_derivatives", "rnea_derivatives_fd", "robots"]
__version__ = "0.1.0"
