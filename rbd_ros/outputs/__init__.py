"""
The dynamics node's outputs and its tick rule, in one place and without ROS.

``rbd_ros.outputs`` gives every public name of its three modules: ``table`` (the outputs),
``core_calls`` (their computation), ``tick_rule`` (when a tick computes or is skipped).

The node (``rbd_ros/node``), the replay tool (``rbd_ros/replay``, offline and ``--live``),
the demo and the bag writer take from here, so that for the same messages and parameters the
node and the replay make the same decisions and compute the same numbers:

* ``OUTPUTS``: each output topic (``~/<name>``): its message type, the float64[] fields that
  carry the numbers and the core results that fill them, whether it needs the measured
  effort, its ``publish_<name>`` parameter and default;
* the core results (``RESULTS``) of one state (:func:`compute`: the node, one core call per
  tick, the cheapest that gives every result needed) and of many (:func:`compute_batch`: the
  replay, the core's batch API);
* the tick rule (:class:`TickRule`): from a merged joint state, compute, or skip and say why
  (``REASONS``: the keys the replay reports and the texts the node logs and counts in
  /diagnostics); and what makes a joint_states or odometry message unusable.

Nothing here imports ROS: the offline replay runs without it.
"""
from .table import (array_sizes, BASE_DOF_NAMES, BY_NAME, CALLS, check_base, check_outputs,
                    COLLISION,
                    CONTACT_WRENCH, DEFAULT_COLLISION_THRESHOLD, DEFAULT_OBSERVER_GAIN, DEFAULTS,
                    DERIVATIVES, dof_names, JOINT_MATRIX, JOINT_STATE, JOINT_VECTOR,
                    message_fields, NAMES, OBSERVER_BY_NAME, OBSERVER_OUTPUTS, Output, OUTPUTS,
                    RESULTS, WRENCH_STAMPED)
from .core_calls import (Computation, computation, compute, compute_batch, ResultBuffer,
                         result_buffer)
from .tick_rule import (DEFAULT_MAX_JOINT_AGE, duplicate_names, effort_known, finite_vector,
                        ODOMETRY_REASONS, REASON_KEYS, REASONS, size_error, TickRule, TickState,
                        UNKNOWN_VELOCITY, valid_odometry, zero_unknown)

__all__ = ["array_sizes", "BASE_DOF_NAMES", "BY_NAME", "CALLS", "check_base", "check_outputs",
           "COLLISION",
           "CONTACT_WRENCH", "DEFAULT_COLLISION_THRESHOLD", "DEFAULT_OBSERVER_GAIN", "DEFAULTS",
           "DERIVATIVES", "dof_names", "JOINT_MATRIX", "JOINT_STATE", "JOINT_VECTOR",
           "message_fields", "NAMES", "OBSERVER_BY_NAME", "OBSERVER_OUTPUTS", "Output", "OUTPUTS",
           "RESULTS", "WRENCH_STAMPED", "Computation", "computation", "compute", "compute_batch",
           "ResultBuffer", "result_buffer",
           "DEFAULT_MAX_JOINT_AGE", "duplicate_names", "effort_known", "finite_vector",
           "ODOMETRY_REASONS", "REASON_KEYS", "REASONS", "size_error", "TickRule", "TickState",
           "UNKNOWN_VELOCITY", "valid_odometry", "zero_unknown"]
