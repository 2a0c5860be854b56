"""
Operational-space and whole-body quantities against Pinocchio, finite differences and identities.

``frame_jacobian`` in its three reference frames, ``frame_placement``,
``frame_jacobian_time_variation`` (also against a central difference of J along v),
``frame_acceleration_bias``, ``operational_space_inertia`` (Pinocchio's Λ as a user writes
it: computeMinverse, getFrameJacobian, the product and its inverse), ``effective_mass``,
``center_of_mass`` (and its velocity), ``center_of_mass_jacobian``,
``centroidal_momentum_matrix`` and ``centroidal_momentum``: on the named robots (fixed and
floating bases), on every corpus robot both load, on a mimic-coupled robot against its
reduced system, and on a single free body, whose effective mass is known in closed form.
"""
import numpy as np
import pytest

import rbd_ros
from corpus_cases import MASSLESS, coupled_model, movable_pinocchio_robots
from helpers import FIXED_ROBOTS, SEEDS, assert_close, get_robot

TOL = 1e-10
TOL_LAMBDA = 1e-8
REFERENCES = ("local", "world", "local_world_aligned")


def _links(model, count=2):
    """Return the last ``count`` links that move (the distal ones) and the first one."""
    links = [k for k, (body, _, _) in model.link_frames.items() if body >= 0]
    return links[-count:] + links[:1]


def _state(robot, seed):
    q, v = robot.random_state(seed)[:2]
    return q, v


class PinocchioFrame:
    """Pinocchio's quantities of one frame at (q, v), each from Pinocchio's own calls."""

    def __init__(self, robot, q, v, link):
        pin = self.pin = robot.pin
        self.robot, self.pm, self.pd = robot, robot.pm, robot.pd
        self.frame = robot.pm.getFrameId(link, pin.BODY)
        self.qp, self.vp = robot.q_to_pin(q), robot.v_to_pin(v)

    def reference(self, name):
        return {"local": self.pin.LOCAL, "world": self.pin.WORLD,
                "local_world_aligned": self.pin.LOCAL_WORLD_ALIGNED}[name]

    def columns(self, matrix):
        return np.asarray(matrix).reshape(matrix.shape[0], -1)[:, self.robot.perm_v]

    def jacobian(self, reference):
        pin, pm, pd = self.pin, self.pm, self.pd
        pin.computeJointJacobians(pm, pd, self.qp)
        pin.updateFramePlacements(pm, pd)
        return self.columns(pin.getFrameJacobian(pm, pd, self.frame, self.reference(reference)))

    def placement(self):
        self.pin.framesForwardKinematics(self.pm, self.pd, self.qp)
        return self.pd.oMf[self.frame].homogeneous

    def time_variation(self, reference):
        pin, pm, pd = self.pin, self.pm, self.pd
        pin.computeJointJacobiansTimeVariation(pm, pd, self.qp, self.vp)
        pin.updateFramePlacements(pm, pd)
        return self.columns(pin.getFrameJacobianTimeVariation(pm, pd, self.frame,
                                                              self.reference(reference)))

    def acceleration_bias(self, reference):
        pin, pm, pd = self.pin, self.pm, self.pd
        pin.forwardKinematics(pm, pd, self.qp, self.vp, np.zeros(pm.nv))
        pin.updateFramePlacements(pm, pd)
        return pin.getFrameClassicalAcceleration(pm, pd, self.frame,
                                                 self.reference(reference)).vector

    def minv(self):
        upper = np.asarray(self.pin.computeMinverse(self.pm, self.pd, self.qp))
        full = np.triu(upper) + np.triu(upper, 1).T          # Pinocchio fills the upper half
        return full[np.ix_(self.robot.perm_v, self.robot.perm_v)]

    def inverse_lambda(self, reference, rows=6):
        J = self.jacobian(reference)[:rows]
        return J @ self.minv() @ J.T


def _pin_whole_body(robot, q, v):
    """Pinocchio's (c, ċ, J_c, A_G, h_G) at (q, v)."""
    pin, pm, pd = robot.pin, robot.pm, robot.pd
    qp, vp = robot.q_to_pin(q), robot.v_to_pin(v)
    pin.centerOfMass(pm, pd, qp, vp)
    com, vcom = pd.com[0].copy(), pd.vcom[0].copy()
    Jc = np.asarray(pin.jacobianCenterOfMass(pm, pd, qp)).reshape(3, -1)[:, robot.perm_v]
    Ag = np.asarray(pin.ccrba(pm, pd, qp, vp)).reshape(6, -1)[:, robot.perm_v]
    pin.computeCentroidalMomentum(pm, pd, qp, vp)
    return com, vcom, Jc, Ag, pd.hg.vector.copy()


def _compare_frames(robot, q, v, link, what, inertia=True):
    """Every frame call of ours at ``link`` against Pinocchio's, in every reference frame."""
    m = robot.model
    ref = PinocchioFrame(robot, q, v, link)
    assert_close(rbd_ros.frame_placement(m, q, link), ref.placement(), TOL, f"oMf {what}")
    for reference in REFERENCES:
        where = f"{what} {reference}"
        assert_close(rbd_ros.frame_jacobian(m, q, link, reference), ref.jacobian(reference),
                     TOL, f"J {where}")
        assert_close(rbd_ros.frame_jacobian_time_variation(m, q, v, link, reference),
                     ref.time_variation(reference), TOL, f"dJ {where}")
        assert_close(rbd_ros.frame_acceleration_bias(m, q, v, link, reference),
                     ref.acceleration_bias(reference), TOL, f"bias {where}")
        if inertia:                     # not where M is singular (massless links)
            _compare_lambda(m, q, link, reference, ref, where)


def _compare_lambda(m, q, link, reference, ref, where):
    """Λ (6 × 6 and 3 × 3) equals Pinocchio's where its J M⁻¹ Jᵀ is well conditioned."""
    for rows in (6, 3):
        inverse = ref.inverse_lambda(reference, rows)
        try:
            ours = rbd_ros.operational_space_inertia(m, q, link, reference,
                                                     translational=rows == 3)
        except ValueError as exc:
            assert "singular" in str(exc) or "not finite" in str(exc), exc
            assert np.linalg.cond(inverse) > 1e8, (where, rows, np.linalg.cond(inverse))
            continue
        condition = np.linalg.cond(inverse)
        assert condition < 1e12, (where, rows)
        # an inverse loses the condition number times the rounding of J M⁻¹ Jᵀ: near a
        # singular configuration neither library's Λ holds 1e-8
        assert_close(ours, np.linalg.inv(inverse), max(TOL_LAMBDA, 1e-15 * condition),
                     f"Λ {rows} {where}")


def _compare_effective_mass(robot, q, link, what):
    m = robot.model
    ref = PinocchioFrame(robot, q, np.zeros(m.nv), link)
    Jv = ref.jacobian("local_world_aligned")[:3]
    Minv = ref.minv()
    for u in (np.eye(3)[0], np.eye(3)[2], np.array([0.3, -0.5, 0.8])):
        w = Jv.T @ (u / np.linalg.norm(u))
        if np.linalg.norm(w) <= 1e-9 * np.linalg.norm(Jv):
            with pytest.raises(ValueError, match="cannot move"):
                rbd_ros.effective_mass(m, q, link, u)
            continue
        # an inverse of M⁻¹'s quadratic form, as Λ: Λ's tolerance
        assert_close(rbd_ros.effective_mass(m, q, link, u), 1.0 / (w @ Minv @ w), TOL_LAMBDA,
                     f"effective mass {what} {u}")


def _compare_whole_body(robot, q, v, what):
    m = robot.model
    if robot.pin.computeTotalMass(robot.pm) == 0.0:
        with pytest.raises(ValueError, match="total mass is zero"):
            rbd_ros.center_of_mass(m, q)
        return
    com, vcom, Jc, Ag, hg = _pin_whole_body(robot, q, v)
    c, cdot = rbd_ros.center_of_mass(m, q, v)
    assert_close(c, com, TOL, f"com {what}")
    assert_close(rbd_ros.center_of_mass(m, q), com, TOL, f"com without v {what}")
    assert_close(cdot, vcom, TOL, f"vcom {what}")
    assert_close(rbd_ros.center_of_mass_jacobian(m, q), Jc, TOL, f"Jcom {what}")
    assert_close(rbd_ros.centroidal_momentum_matrix(m, q), Ag, TOL, f"Ag {what}")
    assert_close(rbd_ros.centroidal_momentum(m, q, v), hg, TOL, f"hg {what}")


@pytest.mark.pinocchio
@pytest.mark.parametrize("seed", SEEDS[:2])
def test_frames_equal_pinocchio(robot, seed):
    q, v = _state(robot, seed)
    for link in _links(robot.model):
        _compare_frames(robot, q, v, link, f"{robot.name} {link}")
        _compare_effective_mass(robot, q, link, f"{robot.name} {link}")


@pytest.mark.pinocchio
@pytest.mark.parametrize("seed", SEEDS[:2])
def test_whole_body_equals_pinocchio(robot, seed):
    q, v = _state(robot, seed)
    _compare_whole_body(robot, q, v, robot.name)


@pytest.mark.pinocchio
@pytest.mark.parametrize("floating", [False, True], ids=["fixed", "floating"])
def test_corpus_equals_pinocchio(pin, floating):
    """Every corpus robot both load: each call at its distal links equals Pinocchio's."""
    compared = 0
    for name, robot in movable_pinocchio_robots(floating):
        m = robot.model
        q, v = _state(robot, 0)
        for link in _links(m, 1):
            if not robot.pm.existFrame(link, pin.BODY):
                continue
            _compare_frames(robot, q, v, link, f"{name} {link}", name not in MASSLESS)
            if name not in MASSLESS:
                _compare_effective_mass(robot, q, link, f"{name} {link}")
            compared += 1
        _compare_whole_body(robot, q, v, name)
    assert compared >= 40, compared


def test_time_variation_is_the_derivative_of_j_along_v(robot):
    """J̇ = (J(q ⊕ εv) − J(q ⊖ εv)) / 2ε, every reference frame (central difference)."""
    m = robot.model
    q, v = _state(robot, 2)
    eps = 1e-6
    forward, backward = rbd_ros.integrate(m, q, eps * v), rbd_ros.integrate(m, q, -eps * v)
    for link in _links(m):
        for reference in REFERENCES:
            difference = (rbd_ros.frame_jacobian(m, forward, link, reference)
                          - rbd_ros.frame_jacobian(m, backward, link, reference)) / (2 * eps)
            ours = rbd_ros.frame_jacobian_time_variation(m, q, v, link, reference)
            np.testing.assert_allclose(ours, difference, atol=1e-7 * (1 + np.abs(ours).max()),
                                       err_msg=f"{robot.name} {link} {reference}")


@pytest.mark.parametrize("name", FIXED_ROBOTS)
def test_acceleration_is_j_qdd_plus_bias(name):
    """ẍ = J q̈ + bias: the classical acceleration of the frame's origin, by differences."""
    robot = get_robot(name)
    m = robot.model
    q, v = _state(robot, 3)
    qdd = np.random.default_rng(3).normal(size=m.nv)
    for reference in REFERENCES:
        for link in _links(m, 1):
            J = rbd_ros.frame_jacobian(m, q, link, reference)
            predicted = J @ qdd + rbd_ros.frame_acceleration_bias(m, q, v, link, reference)
            measured = _classical_acceleration(m, q, v, qdd, link, reference)
            np.testing.assert_allclose(predicted, measured, atol=1e-6 * (1 + abs(predicted).max()),
                                       err_msg=f"{name} {link} {reference}")


def _classical_acceleration(m, q, v, qdd, link, reference, h=1e-5):
    """
    Return the frame's classical acceleration along q + t v + t²/2 q̈ (fixed base), by differences.

    LOCAL_WORLD_ALIGNED: the origin's velocity and ω in the root's axes, differentiated. LOCAL:
    the same rotated into the frame's axes at t = 0. WORLD: ω̇, and d/dt of the velocity of the
    body point at the root's origin, plus ω × it (Pinocchio's classical term).
    """
    def motion(t):
        qt = q + t * v + 0.5 * t * t * qdd
        return rbd_ros.frame_jacobian(m, qt, link, "local_world_aligned") @ (v + t * qdd), qt

    (plus, q_plus), (minus, q_minus) = motion(h), motion(-h)
    derivative = (plus - minus) / (2 * h)
    velocity = motion(0.0)[0]
    if reference == "local_world_aligned":
        return derivative
    R = rbd_ros.frame_placement(m, q, link)[:3, :3]
    if reference == "local":
        return np.concatenate([R.T @ derivative[:3], R.T @ derivative[3:]])
    # WORLD: v_O = v_p − ω × p (the body point at the origin); d/dt, then + ω × v_O

    def world_velocity(qt, twist):
        p = rbd_ros.frame_placement(m, qt, link)[:3, 3]
        return twist[:3] - np.cross(twist[3:], p)

    v_origin_dot = (world_velocity(q_plus, plus) - world_velocity(q_minus, minus)) / (2 * h)
    v_origin = world_velocity(q, velocity)
    return np.concatenate([v_origin_dot + np.cross(velocity[3:], v_origin), derivative[3:]])


FREE_BODY = """<robot name="free_body">
  <link name="body">
    <inertial>
      <origin xyz="{x} {y} {z}" rpy="0.3 -0.2 0.5"/>
      <mass value="2.5"/>
      <inertia ixx="0.04" ixy="0.003" ixz="-0.002" iyy="0.07" iyz="0.001" izz="0.05"/>
    </inertial>
  </link>
</robot>"""


def test_free_body_effective_mass_is_its_mass():
    """At its centre of mass a free body's effective mass is its mass along every direction."""
    m = rbd_ros.load_model(FREE_BODY.format(x=0, y=0, z=0), floating_base=True)
    rng = np.random.default_rng(7)
    for _ in range(5):
        q = m.random_configuration(rng)
        for u in list(np.eye(3)) + list(rng.normal(size=(4, 3))):
            assert abs(rbd_ros.effective_mass(m, q, "body", u) - 2.5) < 1e-12, u
        Lt = rbd_ros.operational_space_inertia(m, q, "body", translational=True)
        np.testing.assert_allclose(Lt, 2.5 * np.eye(3), atol=1e-12)


def test_free_body_effective_mass_off_its_centre():
    """At r from its centre: 1 / m_u = 1 / m + (r × u)ᵀ I_c⁻¹ (r × u) (impulse on a free body)."""
    offset = np.array([0.1, -0.05, 0.2])
    m = rbd_ros.load_model(FREE_BODY.format(x=offset[0], y=offset[1], z=offset[2]),
                           floating_base=True)
    rng = np.random.default_rng(8)
    q = m.random_configuration(rng)
    R = rbd_ros.frame_placement(m, q, "body")[:3, :3]
    rpy_R = _rpy(0.3, -0.2, 0.5)
    I_local = np.array([[0.04, 0.003, -0.002], [0.003, 0.07, 0.001], [-0.002, 0.001, 0.05]])
    I_world = R @ rpy_R @ I_local @ rpy_R.T @ R.T
    r = -R @ offset                         # from the centre of mass to the frame's origin
    for u in rng.normal(size=(5, 3)):
        u = u / np.linalg.norm(u)
        ru = np.cross(r, u)
        expected = 1.0 / (1.0 / 2.5 + ru @ np.linalg.solve(I_world, ru))
        assert abs(rbd_ros.effective_mass(m, q, "body", u) - expected) < 1e-12 * expected


def _rpy(roll, pitch, yaw):
    cr, sr, cp, sp, cy, sy = (np.cos(roll), np.sin(roll), np.cos(pitch), np.sin(pitch),
                              np.cos(yaw), np.sin(yaw))
    Rx = np.array([[1, 0, 0], [0, cr, -sr], [0, sr, cr]])
    Ry = np.array([[cp, 0, sp], [0, 1, 0], [-sp, 0, cp]])
    Rz = np.array([[cy, -sy, 0], [sy, cy, 0], [0, 0, 1]])
    return Rz @ Ry @ Rx


@pytest.mark.pinocchio
@pytest.mark.parametrize("name", ["arm7", "panda"])
def test_arm_effective_mass_from_pinocchio_m_and_j(name):
    """On a 7-dof arm: m_u = 1 / (uᵀ Λ_t⁻¹ u), Λ_t⁻¹ = J_v M⁻¹ J_vᵀ from Pinocchio's crba and J."""
    robot = get_robot(name)
    m = robot.model
    pin, pm, pd = robot.pin, robot.pm, robot.pd
    link = _links(m, 1)[0]
    for seed in SEEDS[:3]:
        q = robot.random_state(seed)[0]
        qp = robot.q_to_pin(q)
        M = robot.matrix_from_pin(pin.crba(pm, pd, qp))
        M = np.triu(M) + np.triu(M, 1).T
        frame = pm.getFrameId(link, pin.BODY)
        Jv = np.asarray(pin.computeFrameJacobian(pm, pd, qp, frame, pin.LOCAL_WORLD_ALIGNED))
        Jv = Jv[:3, robot.perm_v]
        inverse_lambda_t = Jv @ np.linalg.solve(M, Jv.T)
        for u in np.random.default_rng(seed).normal(size=(4, 3)):
            u = u / np.linalg.norm(u)
            assert_close(rbd_ros.effective_mass(m, q, link, u),
                         1.0 / (u @ inverse_lambda_t @ u), 1e-9, f"{name} {u}")


def test_coupled_mimic_equals_the_reduced_system():
    """A mimic-coupled model: every call equals the independent tree's, reduced through G."""
    for floating in (False, True):
        m, independent = coupled_model(floating)
        G = m.coupling.G
        rng = np.random.default_rng(5)
        q, v = m.random_configuration(rng), rng.normal(size=m.nv)
        qf, vf = m.coupling.expand(q), G @ v
        M_r = G.T @ rbd_ros.crba(independent, qf) @ G
        for link in _links(m, 2):
            what = f"floating={floating} {link}"
            assert_close(rbd_ros.frame_placement(m, q, link),
                         rbd_ros.frame_placement(independent, qf, link), 1e-12, what)
            for reference in REFERENCES:
                J_r = rbd_ros.frame_jacobian(independent, qf, link, reference) @ G
                assert_close(rbd_ros.frame_jacobian(m, q, link, reference), J_r, 1e-12, what)
                assert_close(rbd_ros.frame_jacobian_time_variation(m, q, v, link, reference),
                             rbd_ros.frame_jacobian_time_variation(independent, qf, vf, link,
                                                                   reference) @ G, 1e-12, what)
                assert_close(rbd_ros.frame_acceleration_bias(m, q, v, link, reference),
                             rbd_ros.frame_acceleration_bias(independent, qf, vf, link,
                                                             reference), 1e-12, what)
                inverse_t = J_r[:3] @ np.linalg.solve(M_r, J_r[:3].T)
                if np.linalg.cond(inverse_t) > 1e8:     # a link moved by fewer than 3 dofs
                    with pytest.raises(ValueError, match="not defined"):
                        rbd_ros.operational_space_inertia(m, q, link, reference, True)
                    continue
                assert_close(rbd_ros.operational_space_inertia(m, q, link, reference, True),
                             np.linalg.inv(inverse_t), TOL_LAMBDA, what)
            J_v = rbd_ros.frame_jacobian(m, q, link, "local_world_aligned")[:3]
            u = np.array([0.2, 0.6, -0.3]) / np.linalg.norm([0.2, 0.6, -0.3])
            w = J_v.T @ u
            if np.linalg.norm(w) <= 1e-9 * np.linalg.norm(J_v):
                continue
            assert_close(rbd_ros.effective_mass(m, q, link, u),
                         1.0 / (w @ np.linalg.solve(M_r, w)), 1e-9, what)
        c_ind, v_ind = rbd_ros.center_of_mass(independent, qf, vf)
        c, cdot = rbd_ros.center_of_mass(m, q, v)
        assert_close(c, c_ind, 1e-12, "com")
        assert_close(cdot, v_ind, 1e-12, "vcom")
        assert_close(rbd_ros.center_of_mass_jacobian(m, q),
                     rbd_ros.center_of_mass_jacobian(independent, qf) @ G, 1e-12, "Jcom")
        assert_close(rbd_ros.centroidal_momentum_matrix(m, q),
                     rbd_ros.centroidal_momentum_matrix(independent, qf) @ G, 1e-12, "Ag")
        assert_close(rbd_ros.centroidal_momentum(m, q, v),
                     rbd_ros.centroidal_momentum(independent, qf, vf), 1e-12, "hg")


def test_refusals_say_why():
    """Λ of a frame with fewer than 6 dof, a direction it cannot move along, bad arguments."""
    m = get_robot("pendulum").model
    q = m.random_configuration(0)
    link = _links(m, 1)[0]
    with pytest.raises(ValueError, match="fewer than 6 degrees of freedom"):
        rbd_ros.operational_space_inertia(m, q, link)
    with pytest.raises(ValueError, match="direction is the zero vector"):
        rbd_ros.effective_mass(m, q, link, np.zeros(3))
    with pytest.raises(ValueError, match="direction has the wrong size"):
        rbd_ros.effective_mass(m, q, link, np.ones(4))
    with pytest.raises(ValueError, match="direction contains NaN"):
        rbd_ros.effective_mass(m, q, link, [np.nan, 0, 1])
    with pytest.raises(ValueError, match="reference must be one of"):
        rbd_ros.frame_jacobian(m, q, link, "global")
    with pytest.raises(ValueError, match="reference must be one of"):
        rbd_ros.frame_acceleration_bias(m, q, np.zeros(m.nv), link, ["local"])
    with pytest.raises(ValueError, match="no link"):
        rbd_ros.frame_placement(m, q, "no_such_link")
    # after a call has cached the link's lookups (model.frame_lookups), neither a reference
    # nor a link that looks like one of its keys gets through
    rbd_ros.frame_placement(m, q, link)
    rbd_ros.frame_jacobian(m, q, link, "world")
    for reference in (None, "", ("world",)):
        with pytest.raises(ValueError, match="reference must be one of"):
            rbd_ros.frame_jacobian(m, q, link, reference)
    for bad in ((link, "world"), (link, None), [link], None, 5):
        with pytest.raises(ValueError, match="no link"):
            rbd_ros.frame_jacobian(m, q, bad)
        with pytest.raises(ValueError, match="no link"):
            rbd_ros.frame_placement(m, q, bad)
    with pytest.raises(ValueError, match="v has the wrong size"):
        rbd_ros.center_of_mass(m, q, np.zeros(m.nv + 1))
    # a pendulum's point moves along one line (or not at all, on the axis): not across it
    J = rbd_ros.frame_jacobian(m, q, link, "local_world_aligned")[:3]
    assert m.nv == 1
    axis = _normal_to(J[:, 0]) if np.linalg.norm(J[:, 0]) > 0 else np.array([0.0, 0.0, 1.0])
    with pytest.raises(ValueError, match="cannot move its origin along"):
        rbd_ros.effective_mass(m, q, link, axis)


def _normal_to(x):
    """Return a unit vector normal to the 3-vector x."""
    y = np.cross(x, [1.0, 0.0, 0.0])
    if np.linalg.norm(y) < 1e-3 * np.linalg.norm(x):
        y = np.cross(x, [0.0, 1.0, 0.0])
    return y / np.linalg.norm(y)


def test_out_and_data(robot):
    """out= is written and returned, data= gives the same numbers as the model's workspace."""
    m = robot.model
    q, v = _state(robot, 4)
    link = _links(m, 1)[0]
    data = rbd_ros.Data(m)
    for name, args, shape in (("frame_placement", (q, link), (4, 4)),
                              ("frame_jacobian_time_variation", (q, v, link), (6, m.nv)),
                              ("center_of_mass_jacobian", (q,), (3, m.nv)),
                              ("centroidal_momentum_matrix", (q,), (6, m.nv))):
        function = getattr(rbd_ros, name)
        fresh = function(m, *args)
        out = np.full(shape, np.nan)
        assert function(m, *args, out=out, data=data) is out
        np.testing.assert_array_equal(out, fresh)
    np.testing.assert_array_equal(rbd_ros.centroidal_momentum(m, q, v, data=data),
                                  rbd_ros.centroidal_momentum(m, q, v))
