"""The result of :func:`rbd_ros.retime`: a retimed trajectory, sample by sample."""
from collections import namedtuple

# Retimed.binding indexes this: which limit is closest to binding at a sample
KINDS = ("none", "velocity", "acceleration", "effort")

Retimed = namedtuple("Retimed", "t q v a tau duration s binding binding_joint binding_ratio "
                                "time_scale timings")
Retimed.__doc__ = """
A retimed trajectory, as :func:`rbd_ros.retime` returns it (K samples).

Parameters
----------
t : ndarray, shape (K,)
    Time of each sample, s, from 0 to ``duration``.
q : ndarray, shape (K, nq)
    Configurations (rad or m).
v : ndarray, shape (K, nv)
    Velocities (rad/s or m/s).
a : ndarray, shape (K, nv)
    Accelerations (rad/s² or m/s²).
tau : ndarray, shape (K, nv)
    Joint torques (N·m or N), the joint parameters' included.
duration : float
    The trajectory's duration, s.
s : ndarray, shape (K,)
    The path parameter of each sample, 0 to 1 (normalized chord length).
binding : ndarray of int, shape (K,)
    The limit closest to binding per sample, an index in ``KINDS`` ("none", "velocity",
    "acceleration", "effort"); 0 where no limit reaches ``BINDS`` (99 %) of itself.
binding_joint : ndarray of int, shape (K,)
    That limit's joint, an index in ``model.joint_names``; -1 for none.
binding_ratio : ndarray, shape (K,)
    ``|x| / limit`` of that limit.
time_scale : float
    The uniform slow-down applied after TOPP-RA so that every sample is within the limits
    (1.0: none).
timings : dict
    Seconds spent in "dynamics", "toppra" and "samples".
"""
