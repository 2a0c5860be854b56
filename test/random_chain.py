"""
A tree of given joints with random placements and inertias, built twice from the same numbers.

For the tests of joints no URDF gives the model (``test_planar_joint``'s planar joint below
the root, ``test_new_joint_kind``'s translation joint): an rbd_ros ``Model`` from its arrays
and a Pinocchio model joint by joint.
"""
import numpy as np


def random_rotation(rng):
    """Return a rotation matrix from a normalized random quaternion."""
    quaternion = rng.normal(size=4)
    x, y, z, w = quaternion / np.linalg.norm(quaternion)
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                     [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                     [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


def random_chain(pin, parent, joints, joint_names, seed=11):
    """
    Return (rbd_ros Model, Pinocchio Model) of the tree ``parent`` with ``joints``.

    ``joints``: per body (kind code, axis, Pinocchio's joint model); ``joint_names``: the
    Model's, one per entry of v. Each body's placement in its parent, mass, centre of mass and
    inertia are drawn from ``seed``, the same for both models.
    """
    from rbd_ros.model import Model
    from rbd_ros.model import inertia as rin
    rng = np.random.default_rng(seed)
    pm = pin.Model()
    placements, inertias = [], []
    for i, (lam, (_, _, joint)) in enumerate(zip(parent, joints)):
        R, p = random_rotation(rng), rng.uniform(-0.3, 0.3, 3)
        mass, com = rng.uniform(0.5, 2.0), rng.uniform(-0.1, 0.1, 3)
        A = rng.normal(size=(3, 3))
        centroidal = A @ A.T * 0.01 + 0.01 * np.eye(3)
        placements.append(np.concatenate([R.ravel(), p]))
        inertias.append(rin.compact(mass, com, centroidal))
        jid = pm.addJoint(lam + 1, joint, pin.SE3(R, p), f"j{i}")
        pm.appendBodyToJoint(jid, pin.Inertia(mass, com, centroidal), pin.SE3.Identity())
    model = Model("chain", parent, [kind for kind, _, _ in joints], placements,
                  [axis for _, axis, _ in joints], inertias,
                  body_names=[f"b{i}" for i in range(len(parent))], joint_names=joint_names)
    return model, pm
