"""What the effort command's tests share: Pinocchio's g(q), waiting for a command, its status."""
import numpy as np

from node_helpers import wait_for


def gravity_oracle(robot, q, names):
    """Pinocchio's g(q) of ``robot`` (``oracle.Robot``) for the joints ``names``, in order."""
    pin, pm = robot.pin, robot.pm
    z = np.zeros(pm.nv)
    g = robot.v_from_pin(pin.rnea(pm, pm.createData(), robot.q_to_pin(q), z, z))
    index = {n: k for k, n in enumerate(robot.model.joint_names)}
    return np.array([g[index[n]] for n in names])


def wait_command(got, expected, publish, atol=1e-9, timeout=10.0):
    """
    Call ``publish()`` until a command in ``got`` equals ``expected``; return it.

    Commands carry no stamp: the state each test sends is recognised by its torques.
    """
    def found():
        publish()
        for msg in reversed(list(got)):
            data = np.array(msg.data)
            if data.shape == np.shape(expected) and \
                    np.allclose(data, expected, rtol=1e-9, atol=atol):
                return data
        return None

    def boxed():                        # an array is no truth value: wait_for wants one
        x = found()
        return None if x is None else (x,)
    return wait_for(boxed, timeout, f"a command equal to {np.round(expected, 4)}")[0]


def command_status(h):
    """(level, message) of the effort command's latest /diagnostics status, or (None, '')."""
    for arr in reversed(h.messages("diagnostics")):
        for status in arr.status:
            if status.name.endswith("rbd_dynamics: effort command"):
                return status.level[0], status.message
    return None, ""
