"""
The source of M⁻¹(q) specialized for one model: Carpentier's recursion, in body frames.

The generic kernel (``rbd_ros.algorithms.minv``) runs the analytical inverse of the LAAS
report 18125 (Algorithm 1, with the corrected line 14 of the seeds' annotated notes) in the
world frame, where a subtree's inertias and force sets add without a change of frame; that
needs every body's world placement. Written out for one model, the body frames are cheaper:
each ^λX_i is a constant placement times one joint rotation, and what is added to the
parent (articulated inertia, force-set columns) is moved once, by X*. The recursion is ABA
(RBDA Table 7.1) at v = 0, g = 0, with τ the identity, one column per degree of freedom:

* backward pass, leaves to root (report lines 8-26): U_i = I^A_i S_i, D_i = S_iᵀ U_i;
  for each column j of subtree(i), M⁻¹[i, j] = D_i⁻¹ (δ_ij - S_iᵀ F_i[:, j]) (lines 11-12)
  and F_λ[:, j] += ^λX_i* (F_i[:, j] + U_i M⁻¹[i, j]) (corrected line 14);
  I^A_λ += ^λX_i* (I^A_i - U_i D_i⁻¹ U_iᵀ) ^iX_λ (lines 15-16);
* forward pass, root to leaves (lines 28-36), row i of the upper triangle: with
  P̄ = ^iX_λ P_λ[:, j], M⁻¹[i, j] -= D_i⁻¹ U_iᵀ P̄ (line 30) and P_i[:, j] = P̄ + S_i M⁻¹[i, j].
"""
from ..model.layout import P_IV, P_PARENT, P_VEND
from .expressions import Source, act_force, act_inv_motion, inertia_apply
from .generate import body_frame, check_lines, result_lines, theta

UNIT = [tuple(1.0 if k == c else 0.0 for k in range(6)) for c in range(6)]


def rigid_matrix(src, th):
    """Return the 6 × 6 spatial inertia of θ as rows of constants (columns I e_c)."""
    columns = [inertia_apply(src, th, e) for e in UNIT]
    return [[columns[c][r] for c in range(6)] for r in range(6)]


def symmetric(values):
    """Return the 6 × 6 of the upper triangle of ``values`` (a function of r <= c)."""
    upper = {(r, c): values(r, c) for r in range(6) for c in range(r, 6)}
    return [[upper[min(r, c), max(r, c)] for c in range(6)] for r in range(6)]


def articulated_act(src, R, p, A):
    """Return ^λX* A ^iX_λ: a child-frame 6 × 6 inertia A in the parent frame."""
    columns = [act_force(src, R, p, [A[r][c] for r in range(6)]) for c in range(6)]
    C = [[columns[c][r] for c in range(6)] for r in range(6)]          # C = X* A
    rows = [act_force(src, R, p, C[r]) for r in range(6)]              # rows of C X*ᵀ
    return symmetric(lambda r, c: rows[r][c])


def backward_pass(src, model, frames, Minv):
    """Run lines 8-26 for every body; return each body's (U_i, D_i⁻¹)."""
    p, nb = model.packed, model.nbodies
    inertia = [rigid_matrix(src, theta(p, i)) for i in range(nb)]
    forces = [dict() for _ in range(nb)]      # F_i[:, j]; absent: 0
    steps = {}
    for i in range(nb - 1, -1, -1):
        R, pos, S = frames[i]
        A, iv, lam = inertia[i], int(p[i, P_IV]), int(p[i, P_PARENT])
        U = tuple(src.dot(A[r], S) for r in range(6))
        Dinv = src.let(f"1.0 / {src.dot(S, U)}")
        steps[i] = (U, Dinv)
        for j in range(iv, int(p[i, P_VEND])):
            F = forces[i].get(j, (0.0,) * 6)
            u = src.sub(1.0 if j == iv else 0.0, src.dot(S, F))
            Minv[iv, j] = src.mul(Dinv, u)                               # lines 11-12
            if lam >= 0:                                                 # corrected line 14
                Fa = tuple(src.add(F[r], src.mul(U[r], Minv[iv, j])) for r in range(6))
                moved = act_force(src, R, pos, Fa)
                old = forces[lam].get(j, (0.0,) * 6)
                forces[lam][j] = tuple(src.add(old[r], moved[r]) for r in range(6))
        if lam >= 0:                                                     # lines 15-16
            Ud = tuple(src.mul(Dinv, x) for x in U)
            Ia = symmetric(lambda r, c: src.sub(A[r][c], src.mul(Ud[r], U[c])))
            moved = articulated_act(src, R, pos, Ia)
            inertia[lam] = symmetric(lambda r, c: src.add(inertia[lam][r][c], moved[r][c]))
    return steps


def forward_pass(src, model, frames, steps, Minv):
    """Run lines 28-36: row i of M⁻¹'s upper triangle, for every body i."""
    p, nb, nv = model.packed, model.nbodies, model.nv
    motions = [dict() for _ in range(nb)]     # P_i[:, j]
    for i in range(nb):
        R, pos, S = frames[i]
        U, Dinv = steps[i]
        iv, lam = int(p[i, P_IV]), int(p[i, P_PARENT])
        for j in range(iv, nv):
            Pl = (act_inv_motion(src, R, pos, motions[lam][j]) if lam >= 0
                  else (0.0,) * 6)
            m = src.add(Minv.get((iv, j), 0.0), src.neg(src.mul(Dinv, src.dot(U, Pl))))
            Minv[iv, j] = m                                              # line 30
            motions[i][j] = tuple(src.add(Pl[r], src.mul(S[r], m)) for r in range(6))


def minv_source(model):
    """``minv(q, Minv)``: M(q)⁻¹, full and symmetric, as ``minv.minv_kernel``."""
    nv = model.nv
    src = Source()
    check_lines(src, "q", model.nq, 1)
    src.emit(f"if Minv.shape[0] != {nv} or Minv.shape[1] != {nv}:")
    src.emit("    return 9")
    frames = [body_frame(src, model.packed, i) for i in range(model.nbodies)]
    Minv = {}
    steps = backward_pass(src, model, frames, Minv)
    forward_pass(src, model, frames, steps, Minv)
    values = []
    for r in range(nv):
        for c in range(nv):
            x = Minv.get((min(r, c), max(r, c)), 0.0)
            src.emit(f"Minv[{r}, {c}] = {x!r}" if isinstance(x, float)
                     else f"Minv[{r}, {c}] = {x}")
            if r <= c:
                values.append(x)
    result_lines(src, values)
    return ("def minv(q, Minv):\n    \"\"\"M(q)⁻¹ by Carpentier's recursion (report 18125, "
            "Algorithm 1), body frames.\"\"\"\n" + "\n".join(src.lines) + "\n")
