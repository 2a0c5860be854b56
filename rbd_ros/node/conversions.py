"""numpy arrays <-> ROS messages, in bulk (rclpy float64[] fields are array.array('d'))."""
import array

import numpy as np

BASE_DOF_NAMES = ("base_vx", "base_vy", "base_vz", "base_wx", "base_wy", "base_wz")


def dof_names(model):
    """One name per entry of v: the base's six (floating base), then the joints."""
    return (BASE_DOF_NAMES if model.floating_base else ()) + tuple(model.joint_names)


def doubles(x):
    """A float64[] message field from a numpy array: one memcpy, no per-element checks."""
    out = array.array("d")
    out.frombytes(memoryview(np.ascontiguousarray(x, np.float64)).cast("B"))
    return out


def vector(values):
    """A float64[] field (array.array) as a numpy array, without copying."""
    if getattr(values, "typecode", None) == "d":
        return np.frombuffer(values, np.float64)
    return np.asarray(values, np.float64)


def fill_joint_vector(msg, header, names, data):
    msg.header = header
    msg.names = names
    msg.data = doubles(data)
    return msg


def fill_joint_matrix(msg, header, names, matrix):
    msg.header = header
    msg.names = names
    msg.rows, msg.cols = (int(n) for n in matrix.shape)
    msg.data = doubles(matrix)
    return msg


def fill_derivatives(msg, header, names, d_dq, d_dv):
    msg.header = header
    msg.names = names
    msg.size = int(d_dq.shape[0])
    msg.d_dq = doubles(d_dq)
    msg.d_dv = doubles(d_dv)
    return msg
