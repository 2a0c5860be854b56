"""
The Python source of the kernels specialized for one model.

Each kernel is the generic one (``rbd_ros.algorithms``) run once symbolically over the
model's table: joint kinds and axes are known, every constant (placements, axes, inertias,
gravity, subtree masses) is written in as a literal, products with an exact 0 or 1 drop out
and the loops over bodies are unrolled, one scalar per line. What is left is the arithmetic
that depends on the state. Each kernel keeps the contract of its generic twin: it checks
the lengths of its arrays before reading them (numba runs without bounds checks) and the
finiteness of its inputs and of its result, and returns the same status codes
(``rbd_ros.algorithms.common``), so that the wrapper raises the same errors.

Only fixed-base trees of revolute (continuous) and prismatic joints without mimic coupling
qualify (:func:`refusal`): floating-base robots are not where the call floor dominates.
M⁻¹ is generated in ``generate_minv``; ``kernels`` lists every kernel and its signature.
"""
from ..algorithms.common import NOT_FINITE, NOT_FINITE_RESULT, WRONG_SIZE
from ..algorithms.joints import joint_rotates, local_subspace_1dof
from ..model.joints import KINDS
from ..model.layout import P_AXIS, P_GRAVITY, P_IQ, P_IV, P_PARENT, P_PLACEMENT, P_THETA, P_TYPE
from .expressions import (Source, act_force, act_inv_motion, add_vectors, cross_force,
                          cross_motion, inertia_act, inertia_apply, joint_rotation, rotate,
                          rotate_t, snap)

# Bump when the generated code changes for the same model: it is part of the cache key.
GENERATOR_VERSION = 1
# the kinds written out: those moving along or about their axis (the registry's axis_motion)
ONE_DOF_URDF_TYPES = tuple(name for kind in KINDS if kind.axis_motion for name in kind.urdf_types)


def refusal(model):
    """Return why ``model`` cannot be specialized (a short sentence), or None if it can."""
    if model.floating_base:
        return "floating-base model: the generic kernels serve (they are ahead there)"
    if model.coupling is not None:
        return "mimic joints: the coupled (reduced) system is served by the generic kernels"
    if model.nbodies == 0:
        return "the model has no moving body"
    if any(KINDS[k].axis_motion is None for k in model.joint_type):
        return f"only {', '.join(ONE_DOF_URDF_TYPES)} joints are specialized"
    return None


def body_frame(src, p, i):
    """
    Return (R, pos, S): ^λX_i of body i as values in q, and its constant subspace S_i.

    The joint's kind is read as the kernels read it (``algorithms.joints``: whether it
    rotates, its S in its own frame), run here in Python on the model's constants.
    """
    kind, iq = int(p[i, P_TYPE]), int(p[i, P_IQ])
    R0 = [[snap(p[i, P_PLACEMENT + 3 * r + k]) for k in range(3)] for r in range(3)]
    p0 = [snap(x) for x in p[i, P_PLACEMENT + 9:P_PLACEMENT + 12]]
    axis = tuple(snap(x) for x in p[i, P_AXIS:P_AXIS + 3])
    S = tuple(float(x) for x in local_subspace_1dof.py_func(kind, *axis))
    if joint_rotates.py_func(kind):       # X_T X_J = (R0 Rot(axis, q), p0)
        c, s = src.let(f"math.cos(q[{iq}])"), src.let(f"math.sin(q[{iq}])")
        return joint_rotation(src, R0, axis, c, s), tuple(p0), S
    x = src.let(f"q[{iq}]")               # it slides: (R0, p0 + R0 axis q)
    pos = tuple(src.add(p0[r], src.mul(snap(sum(R0[r][k] * axis[k] for k in range(3))), x))
                for r in range(3))
    return R0, pos, S


def theta(p, i):
    return tuple(float(x) for x in p[i, P_THETA:P_THETA + 10])


def gravity_vector(p):
    return [snap(x) for x in p[-1, P_GRAVITY:P_GRAVITY + 3]]


def check_lines(src, name, n, position, finite=True):
    """Emit the checks of ``check_vector``: length n, then finite entries."""
    src.emit(f"if {name}.shape[0] != {n}:")
    src.emit(f"    return {position * 4 + WRONG_SIZE}")
    if finite and n:                      # x - x is NaN for NaN and ±inf, else 0: no branch
        terms = " + ".join(f"({name}[{k}] - {name}[{k}])" for k in range(n))
        src.emit(f"if not ({terms}) == 0.0:")
        src.emit(f"    return {position * 4 + NOT_FINITE}")


def result_lines(src, values):
    """Emit the status of the result (``vector_status``), given its values; then return 0."""
    names = [x for x in values if not isinstance(x, float)]
    if names:
        terms = " + ".join(f"({x} - {x})" for x in names)
        src.emit(f"if not ({terms}) == 0.0:")
        src.emit(f"    return {NOT_FINITE_RESULT}")
    src.emit("return 0")


def rnea_passes(src, model, velocity, acceleration):
    """
    Run RNEA (RSS 2018 seed Algorithm 1, RBDA Table 5.1, body frames) symbolically.

    As ``rbd_ros.algorithms.rnea.rnea_passes``; q̇ (q̈) read from ``v`` (``a``) or, when
    ``velocity`` (``acceleration``) is False, the constant 0. Return τ as values.
    """
    p, nb = model.packed, model.nbodies
    g = gravity_vector(p)
    motion, force, frames = {}, {}, {}
    for i in range(nb):                                            # line 5
        R, pos, S = body_frame(src, p, i)                          # lines 6-7
        iv, lam = int(p[i, P_IV]), int(p[i, P_PARENT])
        qd = src.let(f"v[{iv}]") if velocity else 0.0
        qdd = src.let(f"a[{iv}]") if acceleration else 0.0
        vp, ap = motion[lam] if lam >= 0 else ((0.0,) * 6, tuple(-x for x in g) + (0.0,) * 3)
        vJ = tuple(src.mul(x, qd) for x in S)
        vi = add_vectors(src, act_inv_motion(src, R, pos, vp), vJ)               # line 8
        aJ = tuple(src.mul(x, qdd) for x in S)
        ai = add_vectors(src, add_vectors(src, act_inv_motion(src, R, pos, ap), aJ),
                         cross_motion(src, vi, vJ))                              # line 9
        th = theta(p, i)
        force[i] = add_vectors(src, inertia_apply(src, th, ai),
                               cross_force(src, vi, inertia_apply(src, th, vi)))  # l. 10-11
        motion[i], frames[i] = (vi, ai), (R, pos, S, lam)
    tau = [0.0] * model.nv
    for i in range(nb - 1, -1, -1):                                # line 14
        R, pos, S, lam = frames[i]
        tau[int(p[i, P_IV])] = src.dot(S, force[i])                # line 15
        if lam >= 0:                                               # lines 16-17
            force[lam] = add_vectors(src, force[lam], act_force(src, R, pos, force[i]))
    return tau


def store_lines(src, out, values):
    for k, x in enumerate(values):
        src.emit(f"{out}[{k}] = {x!r}" if isinstance(x, float) else f"{out}[{k}] = {x}")


def _rnea_at(model, acceleration, signature, summary):
    """Return the source of RNEA with inputs q, v (and a if ``acceleration``), output tau."""
    src = Source()
    inputs = (("q", model.nq), ("v", model.nv)) + ((("a", model.nv),) if acceleration else ())
    for position, (name, n) in enumerate(inputs, 1):
        check_lines(src, name, n, position)
    check_lines(src, "tau", model.nv, len(inputs) + 1, finite=False)
    tau = rnea_passes(src, model, True, acceleration)
    store_lines(src, "tau", tau)
    result_lines(src, tau)
    return _function(signature, summary, src)


def rnea_source(model):
    """``rnea(q, v, a, tau)``: τ = ID(q, v, a) without external forces."""
    return _rnea_at(model, True, "rnea(q, v, a, tau)",
                    "RNEA (RSS 2018 seed Algorithm 1), no f_ext.")


def nonlinear_effects_source(model):
    """``nonlinear_effects(q, v, tau)``: RNEA at q̈ = 0."""
    return _rnea_at(model, False, "nonlinear_effects(q, v, tau)",
                    "RNEA at q̈ = 0 (Algorithm 1).")


def gravity_torques_source(model):
    """
    ``gravity_torques(q, tau)``: RNEA at q̇ = q̈ = 0, as ``rnea.gravity_kernel``.

    a_i = -g_i (^iX_λ a_λ, linear only); the backward pass carries the subtree's mass M
    (a constant here) and first moment H about body i's origin, H_λ += R_i H_i + M_i p_i,
    and τ_i = S_iᵀ (M a_i, H × a_i).
    """
    p, nb = model.packed, model.nbodies
    src = Source()
    check_lines(src, "q", model.nq, 1)
    check_lines(src, "tau", model.nv, 2, finite=False)
    g = gravity_vector(p)
    frames, accel = {}, {}
    mass = [theta(p, i)[0] for i in range(nb)]
    moment = [theta(p, i)[1:4] for i in range(nb)]
    for i in range(nb):
        R, pos, S = body_frame(src, p, i)
        lam = int(p[i, P_PARENT])
        accel[i] = rotate_t(src, R, accel[lam] if lam >= 0 else tuple(-x for x in g))
        frames[i] = (R, pos, S, lam)
    tau = [0.0] * model.nv
    for i in range(nb - 1, -1, -1):
        R, pos, S, lam = frames[i]
        a, H = accel[i], moment[i]
        force = tuple(src.mul(mass[i], x) for x in a) + src.cross(H, a)
        tau[int(p[i, P_IV])] = src.dot(S, force)
        if lam >= 0:
            mass[lam] += mass[i]
            moment[lam] = add_vectors(src, moment[lam], add_vectors(
                src, rotate(src, R, H), tuple(src.mul(mass[i], x) for x in pos)))
    store_lines(src, "tau", tau)
    result_lines(src, tau)
    return _function("gravity_torques(q, tau)", "g(q): RNEA at q̇ = q̈ = 0.", src)


def crba_source(model):
    """
    ``crba(q, M)``: the full symmetric M(q), as ``crba.crba_kernel`` (RBDA Table 6.2).

    I^c_i is summed into the parent's frame (I^c_λ += ^λX_i* I^c_i ^iX_λ); the column
    F = I^c_i S_i climbs the ancestors, F ← ^λX_j* F, with M[λ, i] = S_λᵀ F.
    """
    p, nb, nv = model.packed, model.nbodies, model.nv
    src = Source()
    check_lines(src, "q", model.nq, 1)
    src.emit(f"if M.shape[0] != {nv} or M.shape[1] != {nv}:")
    src.emit(f"    return {2 * 4 + WRONG_SIZE}")
    frames = [body_frame(src, p, i) for i in range(nb)]
    composite = [theta(p, i) for i in range(nb)]
    entries = {}
    for i in range(nb - 1, -1, -1):
        R, pos, S = frames[i]
        iv = int(p[i, P_IV])
        F = inertia_apply(src, composite[i], S)                    # F = I^c_i S_i
        entries[iv, iv] = src.dot(S, F)
        j, lam = i, int(p[i, P_PARENT])
        while lam >= 0:                                            # F = ^λX_j* F
            F = act_force(src, frames[j][0], frames[j][1], F)
            entries[int(p[lam, P_IV]), iv] = src.dot(frames[lam][2], F)
            j, lam = lam, int(p[lam, P_PARENT])
        lam = int(p[i, P_PARENT])
        if lam >= 0:
            composite[lam] = add_vectors(src, composite[lam],
                                         inertia_act(src, R, pos, composite[i]))
    values = []
    for r in range(nv):
        for c in range(nv):
            x = entries.get((min(r, c), max(r, c)), 0.0)
            src.emit(f"M[{r}, {c}] = {x!r}" if isinstance(x, float) else f"M[{r}, {c}] = {x}")
            if r <= c:
                values.append(x)
    result_lines(src, values)
    return _function("crba(q, M)", "M(q) by the CRBA (RBDA Table 6.2), full and symmetric.",
                     src)


def _function(signature, summary, src):
    return (f"def {signature}:\n    \"\"\"{summary}\"\"\"\n" + "\n".join(src.lines) + "\n")
