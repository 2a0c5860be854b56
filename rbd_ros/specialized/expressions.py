"""
Scalar expressions written out one per line, with the model's constants folded in.

A value is either a Python float (a constant of the model, known while generating) or the
name of a local variable of the generated kernel. Products with an exact 0 or 1 and sums of
constants are folded here, so what reaches the source is only the arithmetic that depends on
the state. The spatial operations below mirror those of ``rbd_ros.model.spatial`` (same formulas,
same order of terms) on such values; each 6-vector is (linear, angular), as there.
"""
import numpy as np

# A placement entry this close to 0 is 0 (cos(pi/2) = 6e-17 from a URDF rpy): results move
# by about 1e-16 relative, and every product with it drops out.
TINY = 1e-14


def snap(x):
    """Return ``x`` as a float, 0.0 if it is within TINY of 0."""
    return 0.0 if abs(x) < TINY else float(x)


class Source:
    """The lines of a kernel's body under construction, one scalar assignment per line."""

    def __init__(self, indent="    "):
        self.lines, self.count, self.indent = [], 0, indent

    def let(self, expr):
        """Assign ``expr`` to a new local; return its name."""
        self.count += 1
        name = f"t{self.count}"
        self.lines.append(f"{self.indent}{name} = {expr}")
        return name

    def emit(self, line):
        self.lines.append(f"{self.indent}{line}")

    def mul(self, a, b):
        if isinstance(a, float) and isinstance(b, float):
            return a * b
        if isinstance(b, float):
            a, b = b, a
        if isinstance(a, float):
            if a == 0.0:
                return 0.0
            if a == 1.0:
                return b
            if a == -1.0:
                return self.let(f"-{b}")
            return self.let(f"{a!r} * {b}")
        return self.let(f"{a} * {b}")

    def add(self, *terms):
        consts = sum(t for t in terms if isinstance(t, float))
        names = [t for t in terms if not isinstance(t, float)]
        if not names:
            return float(consts)
        if len(names) == 1 and consts == 0.0:
            return names[0]
        return self.let(" + ".join(names) + (f" + {consts!r}" if consts != 0.0 else ""))

    def neg(self, a):
        return -a if isinstance(a, float) else self.let(f"-{a}")

    def sub(self, a, b):
        return self.add(a, self.neg(b))

    def dot(self, xs, ys):
        return self.add(*(self.mul(x, y) for x, y in zip(xs, ys)))

    def cross(self, a, b):
        return (self.sub(self.mul(a[1], b[2]), self.mul(a[2], b[1])),
                self.sub(self.mul(a[2], b[0]), self.mul(a[0], b[2])),
                self.sub(self.mul(a[0], b[1]), self.mul(a[1], b[0])))


def joint_rotation(src, R0, axis, c, s):
    """R0 Rot(axis, q) as values in c = cos q, s = sin q (Rodrigues, constants folded)."""
    a = np.asarray(axis)
    K = np.array([[0, -a[2], a[1]], [a[2], 0, -a[0]], [-a[1], a[0], 0]])
    A, B, C = np.eye(3) - np.outer(a, a), K, np.outer(a, a)      # Rot = A c + B s + C
    R0 = np.asarray(R0)
    RA, RB, RC = R0 @ A, R0 @ B, R0 @ C
    return [[src.add(src.mul(snap(RA[r, k]), c), src.mul(snap(RB[r, k]), s), snap(RC[r, k]))
             for k in range(3)] for r in range(3)]


def rotate(src, R, x):
    """R x."""
    return tuple(src.dot(R[k], x) for k in range(3))


def rotate_t(src, R, x):
    """Rᵀ x."""
    return tuple(src.dot([R[0][k], R[1][k], R[2][k]], x) for k in range(3))


def add_vectors(src, a, b):
    return tuple(src.add(x, y) for x, y in zip(a, b))


def act_inv_motion(src, R, p, m):
    """Return a parent-frame motion in the child frame, (Rᵀ(v + w × p), Rᵀ w)."""
    v, w = m[:3], m[3:]
    return rotate_t(src, R, add_vectors(src, v, src.cross(w, p))) + rotate_t(src, R, w)


def act_force(src, R, p, f):
    """Return a child-frame force in the parent frame, (R f, R n + p × R f)."""
    fl = rotate(src, R, f[:3])
    return fl + add_vectors(src, rotate(src, R, f[3:]), src.cross(p, fl))


def cross_motion(src, m, n):
    """Return the motion cross product m × n (spatial.cross_motion)."""
    v, w = m[:3], m[3:]
    return (add_vectors(src, src.cross(w, n[:3]), src.cross(v, n[3:]))
            + src.cross(w, n[3:]))


def cross_force(src, m, f):
    """Return the force cross product m ×* f (spatial.cross_force)."""
    v, w = m[:3], m[3:]
    return src.cross(w, f[:3]) + add_vectors(src, src.cross(w, f[3:]), src.cross(v, f[:3]))


def inertia_apply(src, th, m):
    """I m for an inertia in θ layout (spatial.inertia_apply)."""
    mass, h = th[0], th[1:4]
    v, w = m[:3], m[3:]
    c, a = src.cross(h, w), src.cross(h, v)
    rows = ((th[4], th[5], th[7]), (th[5], th[6], th[8]), (th[7], th[8], th[9]))
    return (tuple(src.sub(src.mul(mass, v[k]), c[k]) for k in range(3))
            + tuple(src.add(src.dot(rows[k], w), a[k]) for k in range(3)))


def inertia_act(src, R, p, th):
    """
    Return a child-frame inertia (θ layout) in the parent frame (spatial.inertia_act).

    I' = R I Rᵀ + m(|p|² 1 - p pᵀ) + 2(p·h')1 - p h'ᵀ - h' pᵀ, h' = R h.
    """
    mass = th[0]
    h = rotate(src, R, th[1:4])
    rows = ((th[4], th[5], th[7]), (th[5], th[6], th[8]), (th[7], th[8], th[9]))
    T = [[src.dot(R[r], [rows[0][k], rows[1][k], rows[2][k]]) for k in range(3)]
         for r in range(3)]                                       # T = R I
    upper = ((0, 0), (0, 1), (1, 1), (0, 2), (1, 2), (2, 2))     # θ's order
    rot = {(r, c): src.dot(T[r], R[c]) for r, c in upper}        # R I Rᵀ
    diag = src.add(src.mul(mass, src.dot(p, p)), src.mul(2.0, src.dot(p, h)))
    out = [mass] + [src.add(h[k], src.mul(mass, p[k])) for k in range(3)]
    for r, c in upper:
        if r == c:
            out.append(src.add(rot[r, c], diag, src.neg(src.mul(mass, src.mul(p[r], p[r]))),
                               src.neg(src.mul(2.0, src.mul(p[r], h[r])))))
        else:
            out.append(src.add(rot[r, c], src.neg(src.mul(mass, src.mul(p[r], p[c]))),
                               src.neg(src.mul(p[r], h[c])), src.neg(src.mul(h[r], p[c]))))
    return tuple(out)
