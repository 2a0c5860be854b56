"""
The outputs of the node and the replay, without ROS: what each is, its core call, the tick rule.

``rbd_ros.outputs`` gives every public name of its modules; :mod:`rbd_ros.outputs.table` says
how the node, the replay and the bag writer share them.
"""
from .table import (BASE_DOF_NAMES, BY_NAME, CALLS, COLLISION, CONTACT_WRENCH,
                    DEFAULT_COLLISION_THRESHOLD, DEFAULT_MAX_JOINT_AGE, DEFAULT_OBSERVER_GAIN,
                    DEFAULTS, DERIVATIVES, JOINT_MATRIX, JOINT_STATE, JOINT_VECTOR, NAMES,
                    OBSERVER_BY_NAME, OBSERVER_OUTPUTS, ODOMETRY_REASONS, OUTPUTS, REASON_KEYS,
                    REASONS, RESULTS, UNKNOWN_VELOCITY, WRENCH_STAMPED, Computation, Output,
                    TickRule, TickState, array_sizes, check_outputs, compute, compute_batch,
                    computation, dof_names, duplicate_names, effort_known, finite_vector,
                    message_fields, size_error, valid_odometry, zero_unknown)

__all__ = ["BASE_DOF_NAMES", "BY_NAME", "CALLS", "COLLISION", "CONTACT_WRENCH",
           "DEFAULT_COLLISION_THRESHOLD", "DEFAULT_MAX_JOINT_AGE", "DEFAULT_OBSERVER_GAIN",
           "DEFAULTS", "DERIVATIVES", "JOINT_MATRIX", "JOINT_STATE", "JOINT_VECTOR", "NAMES",
           "OBSERVER_BY_NAME", "OBSERVER_OUTPUTS", "ODOMETRY_REASONS", "OUTPUTS", "REASON_KEYS",
           "REASONS", "RESULTS", "UNKNOWN_VELOCITY", "WRENCH_STAMPED", "Computation", "Output",
           "TickRule", "TickState", "array_sizes", "check_outputs", "compute", "compute_batch",
           "computation", "dof_names", "duplicate_names", "effort_known", "finite_vector",
           "message_fields", "size_error", "valid_odometry", "zero_unknown"]
