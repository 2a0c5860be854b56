"""
Robots with mimic joints for the tests and the benchmark, and their reduced-system oracle.

Synthetic URDFs (:func:`hand_urdf`) put followers where a recursion would find them hardest:
on another branch than their leader, below it, before it in q order, several per leader, a
follower of a follower, revolute and prismatic mixed, negative multipliers and offsets, and a
mimic tag on a fixed joint (ignored).

:class:`ReducedOracle` builds the reduced system from Pinocchio's model without coupling
(``mimic=False``: every joint independent) and a coupling matrix G read here from the XML,
independently of ``rbd_ros.description.mimic_coupling``: τ_r = Gᵀ τ, M_r = Gᵀ M G, q̈_r = M_r⁻¹
(τ_r − Gᵀ b),
∂τ_r/∂x = Gᵀ (∂τ/∂x) G and ∂q̈_r/∂x = −M_r⁻¹ ∂τ_r/∂x at q̈_r (RSS 2018 seed, Eq. 24).
"""
import xml.etree.ElementTree as ET

import numpy as np

MOVABLE = ("revolute", "continuous", "prismatic")

# (name, type, parent link, axis, mimic (leader, multiplier, offset) or None); the child link
# is "l_<name>". Document (and depth-first) order: j4 follows j5, which comes after it.
HAND = (
    ("j1", "revolute", "base", (0, 0, 1), None),
    ("j2", "revolute", "l_j1", (0, 1, 0), None),
    ("j3", "prismatic", "l_j2", (1, 0, 0), None),
    ("j4", "revolute", "l_j3", (0.6, 0, 0.8), ("j5", -0.7, 0.1)),
    ("j5", "revolute", "l_j2", (1, 0, 0), None),
    ("j6", "prismatic", "l_j5", (0, 0, 1), ("j5", 0.05, -0.01)),
    ("j7", "continuous", "l_j6", (0, 1, 0), ("j6", 2.0, 0.3)),      # a follower's follower
    ("j8", "revolute", "l_j7", (1, 1, 0), ("j1", 1.5, 0.0)),         # deep below its leader
    ("w9", "fixed", "l_j8", (1, 0, 0), ("j1", 3.0, 0.0)),            # ignored: fixed
    ("j10", "prismatic", "l_j1", (0, 1, 0), ("j3", -1.0, 0.02)),     # another branch
)
# the same tree with the followers welded (fixed joints): the benchmark's uncoupled twin
WELDED = tuple((n, "fixed" if mim else t, p, ax, None) for n, t, p, ax, mim in HAND)
# one leader, one follower, same joint type: what Pinocchio's own mimic model takes
PAIR = (
    ("j1", "revolute", "base", (0, 0, 1), None),
    ("j2", "revolute", "l_j1", (0, 1, 0), None),
    ("j3", "revolute", "l_j2", (0, 1, 0), ("j2", -0.5, 0.2)),
    ("j4", "prismatic", "l_j1", (1, 0, 0), None),
    ("j5", "prismatic", "l_j1", (-1, 0, 0), ("j4", 1.0, 0.0)),
)


def _inertial(rng):
    """Return a physically valid random inertial element (triangle inequality holds)."""
    mass = rng.uniform(0.2, 2.0)
    principal = rng.uniform(0.01, 0.05, 3)
    principal[2] = rng.uniform(abs(principal[0] - principal[1]), principal[0] + principal[1])
    a, b = np.linalg.qr(rng.normal(size=(3, 3)))
    rot = a * np.sign(np.diag(b))
    inertia = rot @ np.diag(principal) @ rot.T
    com = " ".join(f"{x:.6f}" for x in rng.uniform(-0.05, 0.05, 3))
    names = (("ixx", 0, 0), ("ixy", 0, 1), ("ixz", 0, 2), ("iyy", 1, 1), ("iyz", 1, 2),
             ("izz", 2, 2))
    values = " ".join(f'{n}="{inertia[r, c]:.9f}"' for n, r, c in names)
    return (f'<inertial><origin xyz="{com}" rpy="0 0 0"/><mass value="{mass:.6f}"/>'
            f'<inertia {values}/></inertial>')


def hand_urdf(joints=HAND, seed=0, name="hand"):
    """Return the URDF text of a tree of ``joints`` (see ``HAND``) with random inertias."""
    rng = np.random.default_rng(seed)
    parts = [f'<?xml version="1.0"?>\n<robot name="{name}">', f'<link name="base">'
             f'{_inertial(rng)}</link>']
    for jname, kind, parent, axis, mimic in joints:
        parts.append(f'<link name="l_{jname}">{_inertial(rng)}</link>')
        xyz = " ".join(f"{x:.4f}" for x in rng.uniform(-0.2, 0.2, 3))
        rpy = " ".join(f"{x:.4f}" for x in rng.uniform(-1.0, 1.0, 3))
        limit = ('<limit lower="-1.2" upper="0.9" effort="10" velocity="2"/>'
                 if kind in ("revolute", "prismatic") else "")
        tag = "" if mimic is None else (f'<mimic joint="{mimic[0]}" multiplier="{mimic[1]}" '
                                        f'offset="{mimic[2]}"/>')
        parts.append(f'<joint name="{jname}" type="{kind}"><parent link="{parent}"/>'
                     f'<child link="l_{jname}"/><origin xyz="{xyz}" rpy="{rpy}"/>'
                     f'<axis xyz="{" ".join(map(str, axis))}"/>{limit}{tag}</joint>')
    parts.append("</robot>")
    return "\n".join(parts)


def coupling_from_xml(xml):
    """
    Return ({follower: (independent leader, multiplier, offset)}, {link: movable joint}).

    Read from the XML with ElementTree; chains resolved by substitution, fixed joints' tags
    ignored.
    """
    root = ET.fromstring(xml)
    tags, child_joint = {}, {}
    for joint in root.iter("joint"):
        if joint.get("type") not in MOVABLE:
            continue
        child_joint[joint.find("child").get("link")] = joint.get("name")
        mimic = joint.find("mimic")
        if mimic is not None:
            tags[joint.get("name")] = (mimic.get("joint"), float(mimic.get("multiplier", 1)),
                                       float(mimic.get("offset", 0)))

    def resolve(name):
        leader, m, o = tags[name]
        if leader not in tags:
            return leader, m, o
        top, m2, o2 = resolve(leader)
        return top, m * m2, m * o2 + o
    return {name: resolve(name) for name in tags}, child_joint


class ReducedOracle:
    """
    Pinocchio's model with every joint independent, reduced with G; states by joint name.

    ``joint_names``: the reduced joints in the order of the model under test (the layout of
    its q, v, τ), checked against the XML's independent joints.
    """

    def __init__(self, xml, floating, joint_names, body_names):
        import pinocchio as pin
        self.pin = pin
        self.floating = floating
        self.pm = (pin.buildModelFromXML(xml, pin.JointModelFreeFlyer()) if floating
                   else pin.buildModelFromXML(xml))
        self.pd = self.pm.createData()
        self.followers, child_joint = coupling_from_xml(xml)
        names = [n for n in self.pm.names[1:] if n != "root_joint"]
        assert sorted(joint_names) == sorted(n for n in names if n not in self.followers)
        self.base = 6 if floating else 0
        place = {n: self.base + k for k, n in enumerate(joint_names)}
        self.G = np.zeros((self.pm.nv, self.base + len(joint_names)))
        self.G[:self.base, :self.base] = np.eye(self.base)
        self.rows = []            # per pin joint: (idx_q, nq, idx_v, reduced column, m, o)
        for name in names:
            j = self.pm.joints[self.pm.getJointId(name)]
            leader, m, o = self.followers.get(name, (name, 1.0, 0.0))
            self.G[j.idx_v, place[leader]] = m
            self.rows.append((j.idx_q, j.nq, place[leader] + (1 if floating else 0), m, o))
        # the joint whose frame each of our bodies is (the base: Pinocchio's joint 1)
        self.body_joint = [1 if floating and i == 0 else
                           self.pm.getJointId(child_joint[b]) for i, b in enumerate(body_names)]

    def q(self, q):
        """Pinocchio's full configuration of the reduced ``q``."""
        q = np.asarray(q, np.float64)
        qp = np.zeros(self.pm.nq)
        if self.floating:
            qp[:7] = np.concatenate([q[:3], q[3:7] / np.linalg.norm(q[3:7])])
        for iq, nq, col, m, o in self.rows:
            angle = m * q[col] + o
            qp[iq:iq + nq] = (np.cos(angle), np.sin(angle)) if nq == 2 else angle
        return qp

    def forces(self, fext):
        pin = self.pin
        forces = [pin.Force.Zero() for _ in range(self.pm.njoints)]
        if fext is not None:
            for i, jid in enumerate(self.body_joint):
                forces[jid] = pin.Force(np.asarray(fext[i], np.float64))
        return forces

    def rnea(self, q, v, a, fext=None):
        pin, G = self.pin, self.G
        return G.T @ pin.rnea(self.pm, self.pd, self.q(q), G @ v, G @ a, self.forces(fext))

    def crba(self, q):
        M = self.pin.crba(self.pm, self.pd, self.q(q))
        M = np.triu(M) + np.triu(M, 1).T
        return self.G.T @ M @ self.G

    def aba(self, q, v, tau, fext=None):
        bias = self.rnea(q, v, np.zeros_like(v), fext)
        return np.linalg.solve(self.crba(q), tau - bias)

    def minv(self, q):
        return np.linalg.inv(self.crba(q))

    def rnea_derivatives(self, q, v, a, fext=None):
        pin, G = self.pin, self.G
        pd = self.pd
        pin.computeRNEADerivatives(self.pm, pd, self.q(q), G @ v, G @ a, self.forces(fext))
        dq, dv, M = (np.array(x) for x in (pd.dtau_dq, pd.dtau_dv, pd.M))
        M = np.triu(M) + np.triu(M, 1).T          # Pinocchio fills the upper triangle
        return G.T @ dq @ G, G.T @ dv @ G, G.T @ M @ G

    def aba_derivatives(self, q, v, tau, fext=None):
        qdd = self.aba(q, v, tau, fext)
        dq, dv, M = self.rnea_derivatives(q, v, qdd, fext)
        Minv = np.linalg.inv(M)
        return -Minv @ dq, -Minv @ dv, Minv


def pinocchio_mimic_rnea_crba(pin, pm, model, q, v, a, renamed=None):
    """
    Return (τ, M) of Pinocchio's mimic model ``pm`` at our reduced state, in our joint order.

    ``pm``: built with ``mimic=True`` (no dof for a follower); a floating base is its first
    joint, as ours; a continuous joint's q is (cos, sin) there. ``renamed``: {our joint name:
    its name in ``pm``} where they differ.
    """
    base_q, base_v = model.nq_base, model.nv_base
    assert pm.nv == model.nv
    qp, vp, ap = np.zeros(pm.nq), np.zeros(pm.nv), np.zeros(pm.nv)
    qp[:base_q] = q[:base_q]
    perm = list(range(base_v))                 # our v index -> Pinocchio's
    for k, name in enumerate(model.joint_names):
        joint = pm.joints[pm.getJointId((renamed or {}).get(name, name))]
        angle = q[base_q + k]
        qp[joint.idx_q:joint.idx_q + joint.nq] = \
            (np.cos(angle), np.sin(angle)) if joint.nq == 2 else angle
        perm.append(joint.idx_v)
    assert sorted(perm) == list(range(model.nv))
    vp[perm], ap[perm] = v, a
    pd = pm.createData()
    tau = pin.rnea(pm, pd, qp, vp, ap)[perm]
    M = pin.crba(pm, pd, qp)
    M = np.triu(M) + np.triu(M, 1).T          # Pinocchio fills the upper triangle
    return tau, M[np.ix_(perm, perm)]
