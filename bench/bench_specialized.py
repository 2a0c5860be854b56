#!/usr/bin/env python3
"""
Experiment for issue 14: whether a kernel generated for one model beats the generic ones.

The fastest published implementations generate code per robot (Pinocchio with CppADCodeGen,
RobCoGen, GRiD): joint kinds and axes known at compile time, zero terms dropped, loops
unrolled. This script measures what that would give here before anything of it enters the
package: it generates the Python source of RNEA for one fixed-base model of revolute and
prismatic joints (Featherstone's RBDA Table 5.1, in body frames), with every constant of the
model (placements, axes, inertias, gravity) written in as a literal, products with an exact
0 or 1 dropped, and one scalar per line; compiles it with numba; checks it against
``rbd_ros.rnea`` (1e-12) and prints, per robot:

  * the generated source's lines, numba's compile time and the size of its on-disk cache;
  * the kernel's own time (looped inside one jitted function) for the generic and the
    generated RNEA, and each one called from Python with preallocated output, beside
    ``rbd_ros.rnea`` and Pinocchio's ``rnea``.

Constants within 1e-14 of 0 (cos(pi/2) from a URDF rpy) count as 0, which moves results by
about 1e-16 relative. Not a part of the package: the decision it informs is in issue 14.

    python bench/bench_specialized.py [--robots arm7,panda,ur5]
"""
import argparse
import importlib.util
import os
import sys
import tempfile
import time

import numba
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "test"))

from oracle import ROBOTS, available, load_quietly  # noqa: E402

from rbd_ros.model import (P_AXIS, P_GRAVITY, P_IQ, P_IV, P_PARENT, P_PLACEMENT,  # noqa: E402
                           P_THETA, P_TYPE, PRISMATIC, REVOLUTE)

TINY = 1e-14


class Source:
    """Scalar expressions written out one per line; exact 0 and 1 folded away."""

    def __init__(self):
        self.lines, self.count = [], 0

    def let(self, expr):
        self.count += 1
        name = f"t{self.count}"
        self.lines.append(f"    {name} = {expr}")
        return name

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
            return consts
        expr = " + ".join(names) + (f" + {consts!r}" if consts != 0.0 else "")
        return names[0] if len(names) == 1 and consts == 0.0 else self.let(expr)

    def neg(self, a):
        return -a if isinstance(a, float) else self.let(f"-{a}")

    def dot(self, xs, ys):
        return self.add(*(self.mul(x, y) for x, y in zip(xs, ys)))

    def cross(self, a, b):
        return (self.add(self.mul(a[1], b[2]), self.neg(self.mul(a[2], b[1]))),
                self.add(self.mul(a[2], b[0]), self.neg(self.mul(a[0], b[2]))),
                self.add(self.mul(a[0], b[1]), self.neg(self.mul(a[1], b[0]))))


def snap(x):
    return 0.0 if abs(x) < TINY else float(x)


def joint_rotation(src, R0, axis, c, s):
    """R0 @ Rot(axis, q) as expressions in c = cos q, s = sin q (Rodrigues, constants folded)."""
    a = np.asarray(axis)
    K = np.array([[0, -a[2], a[1]], [a[2], 0, -a[0]], [-a[1], a[0], 0]])
    A, B, C = np.eye(3) - np.outer(a, a), K, np.outer(a, a)      # Rj = A c + B s + C
    R0 = np.asarray(R0)
    return [[src.add(src.mul(snap((R0 @ A)[r, k]), c), src.mul(snap((R0 @ B)[r, k]), s),
                     snap((R0 @ C)[r, k])) for k in range(3)] for r in range(3)]


def rotate_t(src, R, x):
    return tuple(src.dot([R[0][k], R[1][k], R[2][k]], x) for k in range(3))


def rotate(src, R, x):
    return tuple(src.dot(R[k], x) for k in range(3))


def inertia_apply(src, th, m):
    mass, h = th[0], th[1:4]
    v, w = m[:3], m[3:]
    c, a = src.cross(h, w), src.cross(h, v)
    inertia = ((th[4], th[5], th[7]), (th[5], th[6], th[8]), (th[7], th[8], th[9]))
    lin = tuple(src.add(src.mul(mass, v[k]), src.neg(c[k])) for k in range(3))
    ang = tuple(src.add(src.dot(inertia[k], w), a[k]) for k in range(3))
    return lin + ang


def generate_rnea(model):
    """Return the source of ``rnea_generated(q, v, a, tau)`` for this model."""
    p = model.packed
    src = Source()
    g = [snap(x) for x in p[-1, P_GRAVITY:P_GRAVITY + 3]]
    motion, force, frames = {}, {}, {}
    for i in range(model.nbodies):
        kind, parent = int(p[i, P_TYPE]), int(p[i, P_PARENT])
        if kind not in (REVOLUTE, PRISMATIC):
            raise ValueError("fixed-base models of revolute and prismatic joints only")
        iq, iv = int(p[i, P_IQ]), int(p[i, P_IV])
        R0 = np.array([snap(x) for x in p[i, P_PLACEMENT:P_PLACEMENT + 9]]).reshape(3, 3)
        p0 = [snap(x) for x in p[i, P_PLACEMENT + 9:P_PLACEMENT + 12]]
        axis = [snap(x) for x in p[i, P_AXIS:P_AXIS + 3]]
        qd, qdd = src.let(f"v[{iv}]"), src.let(f"a[{iv}]")
        if kind == REVOLUTE:
            c, s = src.let(f"math.cos(q[{iq}])"), src.let(f"math.sin(q[{iq}])")
            R = joint_rotation(src, R0, axis, c, s)
            pos = tuple(p0)
            S = (0.0, 0.0, 0.0) + tuple(axis)
        else:
            x = src.let(f"q[{iq}]")
            R = [[float(R0[r, k]) for k in range(3)] for r in range(3)]
            pos = tuple(src.add(p0[r], src.mul(snap(float(R0[r] @ axis)), x)) for r in range(3))
            S = tuple(axis) + (0.0, 0.0, 0.0)
        frames[i] = (R, pos, parent)
        if parent < 0:
            vp, ap = (0.0,) * 6, tuple(-x for x in g) + (0.0, 0.0, 0.0)
        else:
            vp, ap = motion[parent]
        vi = transform_motion(src, R, pos, vp)
        ai = transform_motion(src, R, pos, ap)
        vJ = tuple(src.mul(x, qd) for x in S)
        vi = tuple(src.add(vi[k], vJ[k]) for k in range(6))
        cross_vJ = motion_cross(src, vi, vJ)
        ai = tuple(src.add(ai[k], src.mul(S[k], qdd), cross_vJ[k]) for k in range(6))
        motion[i] = (vi, ai)
        th = [float(x) for x in p[i, P_THETA:P_THETA + 10]]
        f = inertia_apply(src, th, ai)
        bias = force_cross(src, vi, inertia_apply(src, th, vi))
        force[i] = [src.add(f[k], bias[k]) for k in range(6)]
    for i in range(model.nbodies - 1, -1, -1):
        R, pos, parent = frames[i]
        f = force[i]
        src.lines.append(f"    tau[{int(p[i, P_IV])}] = "
                         f"{src.dot(_subspace(p, i), f)}")
        if parent >= 0:
            fl = rotate(src, R, f[:3])
            nl = rotate(src, R, f[3:])
            pxf = src.cross(pos, fl)
            force[parent] = [src.add(force[parent][k], fl[k]) for k in range(3)] + \
                            [src.add(force[parent][3 + k], nl[k], pxf[k]) for k in range(3)]
    body = "\n".join(src.lines)
    return ("import math\n\n\ndef rnea_generated(q, v, a, tau):\n" + body + "\n"), len(
        src.lines)


def _subspace(p, i):
    axis = [snap(x) for x in p[i, P_AXIS:P_AXIS + 3]]
    if int(p[i, P_TYPE]) == REVOLUTE:
        return [0.0, 0.0, 0.0] + axis
    return axis + [0.0, 0.0, 0.0]


def transform_motion(src, R, pos, m):
    """Motion of the parent, in the child's frame: (Rᵀ(v + w × p), Rᵀ w)."""
    v, w = m[:3], m[3:]
    wxp = src.cross(w, pos)
    vo = tuple(src.add(v[k], wxp[k]) for k in range(3))
    return rotate_t(src, R, vo) + rotate_t(src, R, w)


def motion_cross(src, m, n):
    v, w = m[:3], m[3:]
    a, b, c = src.cross(w, n[:3]), src.cross(v, n[3:]), src.cross(w, n[3:])
    return tuple(src.add(a[k], b[k]) for k in range(3)) + c


def force_cross(src, m, f):
    v, w = m[:3], m[3:]
    a, b, c = src.cross(w, f[:3]), src.cross(w, f[3:]), src.cross(v, f[:3])
    return a + tuple(src.add(b[k], c[k]) for k in range(3))


def compile_generated(source, cache_dir):
    """Write the source to a file, import it, compile with numba's disk cache; (fn, s, bytes)."""
    path = os.path.join(cache_dir, "rnea_generated.py")
    with open(path + ".tmp", "w", encoding="utf-8") as f:
        f.write(source)
    os.replace(path + ".tmp", path)
    spec = importlib.util.spec_from_file_location("rnea_generated", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    sig = numba.void(numba.float64[::1], numba.float64[::1], numba.float64[::1],
                     numba.float64[::1])
    t0 = time.perf_counter()
    saved, numba.config.CACHE_DIR = numba.config.CACHE_DIR, cache_dir   # read per locator
    try:
        fn = numba.njit(sig, cache=True, nogil=True)(module.rnea_generated)
    finally:
        numba.config.CACHE_DIR = saved
    seconds = time.perf_counter() - t0
    cache_bytes = sum(os.path.getsize(os.path.join(root, name))
                      for root, _, names in os.walk(cache_dir) for name in names
                      if name.endswith((".nbi", ".nbc")))
    return fn, seconds, cache_bytes


def best_of(fn, calls, repeat=5):
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        best = min(best, (time.perf_counter() - t0) / calls)
    return best * 1e6


def looped(kernel):
    """Return a jitted loop of ``kernel(*args)`` n times: the kernel's cost without dispatch."""
    @numba.njit
    def loop(n, args):
        for _ in range(n):
            kernel(*args)
    return loop


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--robots", default="arm7,panda,ur5")
    ap.add_argument("--calls", type=int, default=20000)
    args = ap.parse_args()
    import pinocchio as pin
    import rbd_ros
    from rbd_ros.algorithms.rnea import rnea_kernel
    print(f"{'robot':<6} {'nv':>3} {'lines':>6} {'compile s':>9} {'cache kB':>8} "
          f"{'max diff':>9} | kernel only µs: {'generic':>7} {'generated':>9} | from Python µs: "
          f"{'rbd_ros.rnea':>12} {'generated':>9} {'pin.rnea':>8}")
    for robot in [r for r in args.robots.split(",") if available(r)]:
        path, floating = ROBOTS[robot]
        model = load_quietly(path, floating, mimic="independent")
        source, lines = generate_rnea(model)
        with tempfile.TemporaryDirectory() as cache:
            fn, compile_s, cache_bytes = compile_generated(source, cache)
            rng = np.random.default_rng(0)
            q = model.random_configuration(rng)
            v, a = rng.normal(size=(2, model.nv))
            tau = np.empty(model.nv)
            diff = 0.0
            for _ in range(100):
                q = model.random_configuration(rng)
                v, a = rng.normal(size=(2, model.nv))
                fn(q, v, a, tau)
                ref = rbd_ros.rnea(model, q, v, a)
                diff = max(diff, float(np.max(np.abs(tau - ref)) / max(1.0, np.max(np.abs(ref)))))
            n = args.calls
            generated_loop, generic_loop = looped(fn), looped(rnea_kernel)
            gen_args = (q, v, a, tau)
            generic_args = (model.packed, model.data.body, q, v, a, model.data.no_fext, tau)
            generated_loop(1, gen_args)
            generic_loop(1, generic_args)
            k_gen = best_of(lambda: generated_loop(n, gen_args), 1) / n
            k_generic = best_of(lambda: generic_loop(n, generic_args), 1) / n
            pm = pin.buildModelFromUrdf(path)
            pd = pm.createData()
            py_ours = best_of(lambda: rbd_ros.rnea(model, q, v, a), n)
            py_gen = best_of(lambda: fn(q, v, a, tau), n)
            py_pin = best_of(lambda: pin.rnea(pm, pd, q, v, a), n)
        print(f"{robot:<6} {model.nv:>3} {lines:>6} {compile_s:>9.2f} {cache_bytes / 1e3:>8.0f} "
              f"{diff:>9.1e} | {'':>15}{k_generic:>7.3f} {k_gen:>9.3f} | {'':>15}"
              f"{py_ours:>12.3f} {py_gen:>9.3f} {py_pin:>8.3f}", flush=True)


if __name__ == "__main__":
    main()
