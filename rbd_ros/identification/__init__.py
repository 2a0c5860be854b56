"""
Inertial parameter identification and the parametrizations it needs.

θ = [m, m·cx, m·cy, m·cz, Ixx, Ixy, Iyy, Ixz, Iyz, Izz] per body (about its joint frame
origin) is linear in the dynamics, τ = Y(q, v, v̇) θ
(:func:`rbd_ros.joint_torque_regressor`), but not every θ is a body. Here:

* the 4×4 pseudo-inertia J(θ) = [[Σ, h], [hᵀ, m]], Σ = ½ tr(I) 1 - I: θ belongs to a body
  (a positive mass density) iff J ≻ 0 (:func:`pseudo_inertia`, :func:`theta_from_pseudo_inertia`,
  :func:`is_physically_consistent`);
* the log-Cholesky parameters φ = [α, d1, d2, d3, s12, s23, s13, t1, t2, t3] with
  J = U Uᵀ, U = e^α [[e^d1, s12, s13, t1], [0, e^d2, s23, t2], [0, 0, e^d3, t3], [0, 0, 0, 1]]:
  every φ ∈ R¹⁰ gives a physical θ and back (:func:`theta_from_log_cholesky`,
  :func:`log_cholesky_from_theta`, analytic Jacobian :func:`theta_jacobian`);
* identification from sampled states and torques: linear least squares on the identifiable
  combinations (:func:`identify_least_squares`) and a physically consistent nonlinear least
  squares on φ (:func:`identify_physically_consistent`).

Every parametrization function accepts one body (shape (10,)) or a stack (shape (..., 10)).
"""
from .least_squares import (IdentificationResult, identify_least_squares,
                            is_physically_consistent, log_cholesky_from_theta, pseudo_inertia,
                            theta_from_log_cholesky, theta_from_pseudo_inertia, theta_jacobian)
from .physically_consistent import identify_physically_consistent

__all__ = ["IdentificationResult", "identify_least_squares", "identify_physically_consistent",
           "is_physically_consistent", "log_cholesky_from_theta", "pseudo_inertia",
           "theta_from_log_cholesky", "theta_from_pseudo_inertia", "theta_jacobian"]
