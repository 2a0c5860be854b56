"""
rbd_ros: rigid-body dynamics of a robot, compiled with numba, for ROS 2.

    import rbd_ros
    model = rbd_ros.load_model("robot.urdf", floating_base=False)
    tau = rbd_ros.rnea(model, q, v, a)
"""
from . import _jit  # noqa: F401  (installs the kernel cache locator before anything compiles)
from .model import inertia
from . import robots
from .algorithms.calls import (aba, aba_derivatives, aba_derivatives_fd, center_of_mass,
                               center_of_mass_jacobian, centroidal_momentum,
                               centroidal_momentum_matrix, compute_all, coriolis_matrix, crba,
                               effective_mass, frame_acceleration_bias, frame_jacobian,
                               frame_jacobian_time_variation, frame_placement, gravity_torques,
                               integrate, inverse_and_forward_dynamics, joint_torque_regressor,
                               minv, minv_cholesky, nonlinear_effects, operational_space_inertia,
                               rnea, rnea_derivatives, rnea_derivatives_fd)
from .algorithms.compute_all import Dynamics
from .algorithms.regressor import body_regressor
from .batch import (aba_batch, aba_derivatives_batch, coriolis_matrix_batch,
                    joint_torque_regressor_batch, minv_batch, rnea_batch, rnea_derivatives_batch)
from . import identification
from .identification import (identify_least_squares, identify_physically_consistent,
                             is_physically_consistent, log_cholesky_from_theta, pseudo_inertia,
                             theta_from_log_cholesky)
from .model import Data, Model
from .retiming.retimer import Retimed, retime
from . import specialized
from .specialized import specialize
from .description.loader import URDFError, load_model
from .description.size_limits import DescriptionLimits, DescriptionTooLarge

__all__ = ["aba", "aba_batch", "aba_derivatives", "aba_derivatives_batch", "aba_derivatives_fd",
           "body_regressor", "compute_all", "coriolis_matrix", "coriolis_matrix_batch", "crba",
           "Data", "DescriptionLimits",
           "DescriptionTooLarge", "Dynamics", "frame_jacobian", "gravity_torques",
           "identification", "identify_least_squares", "identify_physically_consistent",
           "inertia", "integrate", "inverse_and_forward_dynamics", "is_physically_consistent",
           "joint_torque_regressor", "joint_torque_regressor_batch", "load_model",
           "log_cholesky_from_theta", "minv", "minv_batch", "minv_cholesky", "Model",
           "nonlinear_effects", "pseudo_inertia", "Retimed", "retime", "rnea", "rnea_batch",
           "rnea_derivatives", "rnea_derivatives_batch", "rnea_derivatives_fd", "robots",
           "specialize", "specialized", "theta_from_log_cholesky", "URDFError"]
# operational-space and whole-body quantities (issue 36)
__all__ += ["center_of_mass", "center_of_mass_jacobian", "centroidal_momentum",
            "centroidal_momentum_matrix", "effective_mass", "frame_acceleration_bias",
            "frame_jacobian_time_variation", "frame_placement", "operational_space_inertia"]
__version__ = "0.1.0"
