"""
The other rigid-body dynamics libraries on PyPI, behind one interface, for bench_peers.py.

Each adapter loads the same URDF, reads states in rbd_ros's layout (q: base position and
quaternion (x, y, z, w), then the joints in ``model.joint_names`` order; v: base linear and
angular velocity in the base frame, then the joints) and gives results back in that layout,
so that every library is compared with Pinocchio on the same numbers. ``calls(algorithm,
states)`` returns (function, argument lists) with the inputs already in the library's own
types: the timed loop runs only what a user of that library would run per state (setting
the state included). An algorithm a library lacks is absent from ``ALGORITHMS``;
``missing`` says why.

What the peers are given: the URDF without visual, collision, transmission, gazebo, mimic
and ``<dynamics>`` elements (meshes are not shipped; damping and friction are not rigid-body
dynamics, and Pinocchio's default model has no mimic coupling either). Their base conventions:
iDynTree and adam in body-fixed velocity representation (the same as ours); MuJoCo's free
joint has the linear velocity in the world frame and the angular one in the body frame, and
Drake's both in the world frame, with the angular part first: converted through
v_theirs = T v_ours (T = R on the affected 3-vectors), a_theirs = T a_ours + Ṫ v_ours,
τ_ours = Tᵀ τ_theirs, M_ours = Tᵀ M_theirs T.
"""
import re
import xml.etree.ElementTree as ET

import numpy as np

STRIPPED = {"link": ("visual", "collision"),
            "joint": ("dynamics", "mimic", "safety_controller", "calibration")}


def peer_urdf(xml):
    """Return the URDF with only what rigid-body dynamics reads (see the module docstring)."""
    root = ET.fromstring(xml.lstrip("\ufeff").lstrip())
    for child in list(root):
        if child.tag in STRIPPED:
            for sub in list(child):
                if sub.tag in STRIPPED[child.tag]:
                    child.remove(sub)
        elif child.tag not in ("link", "joint", "material"):
            root.remove(child)                    # transmission, gazebo, plugins
    # the URDF default written out: adam reads every <origin> it expects as present
    for element in root.findall("joint") + root.findall("link/inertial"):
        origin = element.find("origin")
        if origin is None:
            origin = ET.SubElement(element, "origin")
        for name in ("xyz", "rpy"):
            origin.set(name, origin.get(name, "0 0 0"))
    return ET.tostring(root, encoding="unicode")


def root_link(xml):
    """Return the name of the URDF's root link (no joint has it as child)."""
    root = ET.fromstring(xml)
    children = {j.find("child").get("link") for j in root.findall("joint")}
    roots = [link.get("name") for link in root.findall("link")
             if link.get("name") not in children]
    return roots[0]


def quat_matrix(x, y, z, w):
    """Rotation matrix of a unit quaternion (x, y, z, w)."""
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                     [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                     [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])


def _cross(a, b):
    return np.array([a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2],
                     a[0] * b[1] - a[1] * b[0]])


class Peer:
    """A library's model of one robot; subclasses fill the conversions and the calls."""

    name = "?"
    ALGORITHMS = ()
    missing = {}

    def __init__(self, model, xml):
        self.model, self.floating = model, model.floating_base
        self.xml, self.root = peer_urdf(xml), root_link(xml)
        self.nj = len(model.joint_names)

    def _theirs(self, T, x, v=None):
        """Return T x in the library's dof order (``v_order``); with ``v``, x is q̈: + Ṫ v."""
        y = T @ x
        if v is not None and self.floating:
            y[:3] += T[:3, :3] @ _cross(v[3:6], v[:3])
        out = np.empty(self.model.nv)
        out[self.v_order] = y
        return out

    def _ours_acceleration(self, T, acc, v):
        """Return our q̈ from the library's, already in our dof order (inverse of _theirs)."""
        acc = acc.copy()
        if self.floating:
            acc[:3] -= T[:3, :3] @ _cross(v[3:6], v[:3])
        return np.linalg.solve(T, acc)


class Idyntree(Peer):
    """iDynTree's KinDynComputations (C++, SWIG bindings): RNEA and M, body-fixed velocities."""

    name = "iDynTree"
    ALGORITHMS = ("rnea", "crba")
    missing = {"aba": "no forward dynamics call", "minv": "no M⁻¹ call",
               "rnea_derivatives": "no derivatives"}

    def __init__(self, model, xml):
        super().__init__(model, xml)
        import idyntree.bindings as idt
        self.idt = idt
        loader = idt.ModelLoader()
        if not loader.loadReducedModelFromString(self.xml, list(model.joint_names), "urdf"):
            raise RuntimeError("ModelLoader refused the URDF")
        kd = self.kd = idt.KinDynComputations()
        kd.loadRobotModel(loader.model())
        kd.setFrameVelocityRepresentation(idt.BODY_FIXED_REPRESENTATION)
        kd.setFloatingBase(self.root)
        self.perm = [kd.model().getJointIndex(n) for n in model.joint_names]
        if sorted(self.perm) != list(range(self.nj)):
            raise RuntimeError("joints do not map one to one")
        self.gravity = idt.Vector3.FromPython(list(model.gravity))
        self.torques = idt.FreeFloatingGeneralizedTorques(kd.model())
        self.wrenches = idt.LinkWrenches(kd.model())
        self.wrenches.zero()
        self.M = idt.MatrixDynSize(6 + self.nj, 6 + self.nj)

    def _state(self, q, v=None):
        idt, b = self.idt, 6 if self.floating else 0
        R, p = (quat_matrix(*q[3:7]), q[:3]) if self.floating else (np.eye(3), np.zeros(3))
        s = np.empty(self.nj)
        s[self.perm] = q[7 if self.floating else 0:]
        sd, base_v = np.zeros(self.nj), np.zeros(6)
        if v is not None:
            sd[self.perm] = v[b:]
            base_v[:b] = v[:b]
        return (idt.Transform(idt.Rotation.FromPython(R), idt.Position.FromPython(p)),
                idt.VectorDynSize.FromPython(s), idt.Twist.FromPython(base_v),
                idt.VectorDynSize.FromPython(sd), self.gravity)

    def calls(self, algorithm, states):
        idt, kd, b = self.idt, self.kd, 6 if self.floating else 0
        if algorithm == "rnea":
            def rnea(state, base_a, s_dd):
                kd.setRobotState(*state)
                kd.inverseDynamics(base_a, s_dd, self.wrenches, self.torques)
            args = []
            for q, v, a, _ in states:
                s_dd, base_a = np.empty(self.nj), np.zeros(6)
                s_dd[self.perm], base_a[:b] = a[b:], a[:b]
                args.append((self._state(q, v), idt.Vector6.FromPython(base_a),
                             idt.VectorDynSize.FromPython(s_dd)))
            return rnea, args
        if algorithm == "crba":
            def crba(state):
                kd.setRobotState(*state)
                kd.getFreeFloatingMassMatrix(self.M)
            return crba, [(self._state(q),) for q, _, _, _ in states]
        raise KeyError(algorithm)

    def result(self, algorithm, state):
        fn, args = self.calls(algorithm, [state])
        fn(*args[0])
        b = 6 if self.floating else 0
        order = list(range(b)) + [6 + p for p in self.perm]
        if algorithm == "rnea":
            full = np.r_[self.torques.baseWrench().toNumPy(),        # [force, torque]
                         self.torques.jointTorques().toNumPy()]
            return full[order]
        return self.M.toNumPy()[np.ix_(order, order)]


class Mujoco(Peer):
    """MuJoCo's URDF import, constraints and passive forces off; a free joint added if floating."""

    name = "MuJoCo"
    ALGORITHMS = ("rnea", "crba", "aba", "minv", "rnea_derivatives")
    missing = {}
    LABELS = {"rnea": "mj_inverse", "crba": "mj_crb + mj_fullM", "aba": "mj_forward",
              "minv": "mj_crb + mj_factorM + mj_solveM",
              "rnea_derivatives": "mjd_inverseFD (finite differences)"}

    def __init__(self, model, xml):
        super().__init__(model, xml)
        import mujoco
        self.mj = mujoco
        text = self.xml.replace(
            ">", '><mujoco><compiler discardvisual="true" fusestatic="false" '
                 'balanceinertia="false"/></mujoco>', 1) if "<mujoco" not in self.xml else \
            self.xml
        spec = mujoco.MjSpec.from_string(text)
        if self.floating:
            spec.worldbody.first_body().add_freejoint()
        m = self.m = spec.compile()
        m.opt.disableflags |= (mujoco.mjtDisableBit.mjDSBL_CONSTRAINT
                               | mujoco.mjtDisableBit.mjDSBL_SPRING
                               | mujoco.mjtDisableBit.mjDSBL_DAMPER)
        m.opt.gravity[:] = model.gravity
        self.d = mujoco.MjData(m)
        self.qadr = np.array([m.joint(n).qposadr[0] for n in model.joint_names])
        self.vadr = np.array([m.joint(n).dofadr[0] for n in model.joint_names])
        if m.nv != model.nv:
            raise RuntimeError(f"nv {m.nv} after import, ours {model.nv}")
        b = 6 if self.floating else 0
        self.v_order = np.r_[np.arange(b), self.vadr].astype(int)
        self.M = np.zeros((m.nv, m.nv))
        self.eye = np.eye(m.nv)
        self.out = np.zeros((m.nv, m.nv))
        self.fd = [np.zeros((m.nv, m.nv)) for _ in range(3)]

    def _T(self, q):
        """v_theirs = T v_ours (MuJoCo's free joint: world-frame linear velocity)."""
        T = np.eye(self.model.nv)
        if self.floating:
            T[:3, :3] = quat_matrix(*q[3:7])
        return T

    def _to(self, q, v=None, a=None):
        qpos = np.empty(self.m.nq)
        if self.floating:
            qpos[:3], qpos[3:7] = q[:3], np.r_[q[6], q[3:6]]      # (w, x, y, z)
        qpos[self.qadr] = q[7 if self.floating else 0:]
        out = [qpos]
        T = self._T(q)
        out += [self._theirs(T, v)] if v is not None else []
        out += [self._theirs(T, a, v)] if a is not None else []
        return out

    def calls(self, algorithm, states):
        mj, m, d = self.mj, self.m, self.d
        if algorithm == "rnea":
            def rnea(qpos, qvel, qacc):
                d.qpos[:], d.qvel[:], d.qacc[:] = qpos, qvel, qacc
                mj.mj_inverse(m, d)
            return rnea, [tuple(self._to(q, v, a)) for q, v, a, _ in states]
        if algorithm == "crba":
            def crba(qpos):
                d.qpos[:] = qpos
                mj.mj_kinematics(m, d)
                mj.mj_comPos(m, d)
                mj.mj_crb(m, d)
                mj.mj_fullM(m, d, self.M)
            return crba, [tuple(self._to(q)) for q, _, _, _ in states]
        if algorithm == "aba":
            def aba(qpos, qvel, tau):
                d.qpos[:], d.qvel[:], d.qfrc_applied[:] = qpos, qvel, tau
                mj.mj_forward(m, d)
            return aba, [(*self._to(q, v), self._force_to(q, t)) for q, v, _, t in states]
        if algorithm == "minv":
            def minv(qpos):
                d.qpos[:] = qpos
                mj.mj_kinematics(m, d)
                mj.mj_comPos(m, d)
                mj.mj_crb(m, d)
                mj.mj_factorM(m, d)
                mj.mj_solveM(m, d, self.out, self.eye)
            return minv, [tuple(self._to(q)) for q, _, _, _ in states]
        if algorithm == "rnea_derivatives":
            def derivatives(qpos, qvel, qacc):
                d.qpos[:], d.qvel[:], d.qacc[:] = qpos, qvel, qacc
                mj.mjd_inverseFD(m, d, 1e-6, 0, self.fd[0], self.fd[1], self.fd[2],
                                 None, None, None, None)
            return derivatives, [tuple(self._to(q, v, a)) for q, v, a, _ in states]
        raise KeyError(algorithm)

    def _force_to(self, q, tau):
        """τ_ours = Tᵀ τ_theirs: τ_theirs = T⁻ᵀ τ_ours, in MuJoCo's dof order."""
        f = np.empty(self.model.nv)
        f[self.v_order] = np.linalg.solve(self._T(q).T, tau)
        return f

    def result(self, algorithm, state):
        q, v, a, tau = state
        fn, args = self.calls(algorithm, [state])
        fn(*args[0])
        T, o = self._T(q), self.v_order
        if algorithm == "rnea":
            return T.T @ self.d.qfrc_inverse[o]
        if algorithm == "crba":
            return T.T @ self.M[np.ix_(o, o)] @ T
        if algorithm == "aba":
            return self._ours_acceleration(T, self.d.qacc[o], v)
        if algorithm == "minv":
            Ti = np.linalg.inv(T)
            return Ti @ self.out[np.ix_(o, o)] @ Ti.T
        # mjd_inverseFD's matrices are transposed (DfDq[i, j] = ∂f_j/∂q_i); fixed base only
        if self.floating:
            raise KeyError("floating-base derivatives: not converted")
        return self.fd[0].T[np.ix_(o, o)]


class Drake(Peer):
    """Drake's MultibodyPlant (continuous): inverse dynamics, M, time derivatives (ABA)."""

    name = "Drake"
    ALGORITHMS = ("rnea", "crba", "aba")
    missing = {"minv": "no M⁻¹ call", "rnea_derivatives": "autodiff only, no direct call"}

    def __init__(self, model, xml):
        super().__init__(model, xml)
        from pydrake.multibody.parsing import Parser
        from pydrake.multibody.plant import MultibodyPlant
        from pydrake.multibody.tree import MultibodyForces
        plant = self.plant = MultibodyPlant(0.0)
        Parser(plant).AddModelsFromString(self.xml, "urdf")
        if not self.floating and self.root != "world":     # a link named world is Drake's
            plant.WeldFrames(plant.world_frame(), plant.GetFrameByName(self.root))
        plant.mutable_gravity_field().set_gravity_vector(model.gravity)
        plant.Finalize()
        if plant.num_velocities() != model.nv:
            raise RuntimeError(f"nv {plant.num_velocities()}, ours {model.nv}")
        self.ctx = plant.CreateDefaultContext()
        self.forces = MultibodyForces(plant)
        self.qadr = [plant.GetJointByName(n).position_start() for n in model.joint_names]
        self.vadr = [plant.GetJointByName(n).velocity_start() for n in model.joint_names]
        base = plant.GetBodyByName(self.root)
        self.base_q = base.floating_positions_start() if self.floating else 0
        self.base_v = base.floating_velocities_start_in_v() if self.floating else 0
        b = self.base_v
        # ours [linear, angular] -> Drake [angular, linear]
        self.v_order = np.r_[[b + 3, b + 4, b + 5, b, b + 1, b + 2] if self.floating else [],
                             self.vadr].astype(int)
        self.port = plant.get_applied_generalized_force_input_port()

    def _T(self, q):
        T = np.eye(self.model.nv)
        if self.floating:
            R = quat_matrix(*q[3:7])
            T[:3, :3], T[3:6, 3:6] = R, R
        return T

    def _to(self, q, v=None, a=None):
        qd = np.empty(self.plant.num_positions())
        if self.floating:
            s = self.base_q
            qd[s:s + 4], qd[s + 4:s + 7] = np.r_[q[6], q[3:6]], q[:3]
        qd[self.qadr] = q[7 if self.floating else 0:]
        out, T = [qd], self._T(q)
        out += [self._theirs(T, v)] if v is not None else []
        out += [self._theirs(T, a, v)] if a is not None else []
        return out

    def calls(self, algorithm, states):
        plant, ctx = self.plant, self.ctx
        if algorithm == "rnea":
            def rnea(qd, vd, ad):
                plant.SetPositions(ctx, qd)
                plant.SetVelocities(ctx, vd)
                plant.CalcForceElementsContribution(ctx, self.forces)
                return plant.CalcInverseDynamics(ctx, ad, self.forces)
            return rnea, [tuple(self._to(q, v, a)) for q, v, a, _ in states]
        if algorithm == "crba":
            def crba(qd):
                plant.SetPositions(ctx, qd)
                return plant.CalcMassMatrix(ctx)
            return crba, [tuple(self._to(q)) for q, _, _, _ in states]
        if algorithm == "aba":
            def aba(qd, vd, td):
                plant.SetPositions(ctx, qd)
                plant.SetVelocities(ctx, vd)
                self.port.FixValue(ctx, td)
                return plant.EvalTimeDerivatives(ctx).get_generalized_velocity().CopyToVector()
            args = []
            for q, v, _, t in states:
                td = np.empty(self.model.nv)
                td[self.v_order] = np.linalg.solve(self._T(q).T, t)
                args.append((*self._to(q, v), td))
            return aba, args
        raise KeyError(algorithm)

    def result(self, algorithm, state):
        q, v, a, tau = state
        fn, args = self.calls(algorithm, [state])
        out, T, o = np.asarray(fn(*args[0])), self._T(q), self.v_order
        if algorithm == "rnea":
            return T.T @ out[o]
        if algorithm == "crba":
            return T.T @ out[np.ix_(o, o)] @ T
        return self._ours_acceleration(T, out[o], v)


class Adam(Peer):
    """adam's numpy backend (pure Python/numpy): M, bias forces (RNEA = M a + h) and ABA."""

    name = "adam"
    ALGORITHMS = ("rnea", "crba", "aba")
    missing = {"minv": "no M⁻¹ call", "rnea_derivatives": "only through its autodiff backends"}

    def __init__(self, model, xml):
        super().__init__(model, xml)
        from adam import Representations
        from adam.numpy import KinDynComputations
        g = np.r_[model.gravity, 0.0, 0.0, 0.0]
        self.kd = KinDynComputations(self.xml, list(model.joint_names), root_link=self.root,
                                     gravity=g)
        self.kd.set_frame_velocity_representation(Representations.BODY_FIXED_REPRESENTATION)
        if not self.floating:                  # its ABA is floating-base only
            self.ALGORITHMS = ("rnea", "crba")
            self.missing = dict(self.missing, aba="floating-base ABA only")

    def _to(self, q, v=None):
        H = np.eye(4)
        b = 6 if self.floating else 0
        if self.floating:
            H[:3, :3], H[:3, 3] = quat_matrix(*q[3:7]), q[:3]
        out = [H, np.array(q[7 if self.floating else 0:])]
        if v is not None:
            out += [np.r_[v[:b], np.zeros(6 - b)], np.array(v[b:])]
        return out

    def calls(self, algorithm, states):
        kd = self.kd
        if algorithm == "rnea":
            def rnea(H, s, vb, sd, acc):
                return kd.mass_matrix(H, s) @ acc + kd.bias_force(H, s, vb, sd)
            b = 6 if self.floating else 0
            return rnea, [(*self._to(q, v), np.r_[a[:b], np.zeros(6 - b), a[b:]])
                          for q, v, a, _ in states]
        if algorithm == "crba":
            return kd.mass_matrix, [tuple(self._to(q)) for q, _, _, _ in states]
        if algorithm == "aba":
            return kd.aba, [(*self._to(q, v), np.array(t[6:])) for q, v, _, t in states]
        raise KeyError(algorithm)

    def result(self, algorithm, state):
        fn, args = self.calls(algorithm, [state])
        out = np.asarray(fn(*args[0]))
        keep = slice(0, None) if self.floating else slice(6, None)
        if algorithm == "crba":
            return out[keep, keep]
        return out[keep]


PEERS = (Idyntree, Mujoco, Drake, Adam)


def short_reason(exc):
    """One short line for a peer that cannot load a robot or run an algorithm."""
    text = re.sub(r"\s+", " ", f"{type(exc).__name__}: {exc}").strip()
    return text[:90] + ("…" if len(text) > 90 else "")
