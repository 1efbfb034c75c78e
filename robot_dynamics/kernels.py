"""Compiled rigid-body algorithms over Model.packed (see layout.py).

Everything is expressed in the world frame at the world origin (as Pinocchio does in its
`crba`/`aba`): a joint's motion subspace S is carried to the world once, children hand
their forces and inertias to the parent without any transform, and the time derivative of
a world-frame S is simply v_body x S. Spatial vectors are [linear; angular].

Each algorithm is a per-state function over a workspace (no allocation inside), wrapped by
an entry point for one state (`*_one`) and one for a batch (`*_batch`, prange over chunks,
thread count as an argument so that `cache=True` holds).

Status codes returned by the entry points: OK, NONFINITE (NaN/inf in an input) and
BAD_QUATERNION (free-flyer quaternion far from unit norm).
"""
import os
from collections import namedtuple

# numba's OpenMP pool spins actively by default; on 2 cores that stalled every batch call ~16 ms
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import numpy as np  # noqa: E402
from numba import njit, prange  # noqa: E402

from .layout import (ARMATURE, AXIS, FREE, GRAVITY, INERTIA, IQ, IV, JTYPE, NV,  # noqa: E402
                     PARENT, POS, PRISMATIC, ROT)

OK, NONFINITE, BAD_QUATERNION = 0, 1, 2
WORLD, LOCAL, LOCAL_WORLD_ALIGNED = 0, 1, 2
# a frame spec row: body, reference, rotation (9, row-major) and translation in the body
F_BODY, F_REF, F_ROT, F_POS, F_WRENCH = 0, 1, 2, 11, 14
FRAME_COLS, EXT_COLS = 14, 20   # an external wrench row adds the wrench (6) to a frame spec

fast = njit(cache=True, fastmath=False, error_model="numpy")
parallel = njit(cache=True, parallel=True, error_model="numpy")


# --- small spatial algebra ---------------------------------------------------------------
@fast
def ndofs(jtype):
    return 6 if jtype == FREE else 1


@fast
def cross_motion(m, n, out):
    """out = m x n (spatial motion cross product, [lin; ang])."""
    out[0] = m[4] * n[2] - m[5] * n[1] + m[1] * n[5] - m[2] * n[4]
    out[1] = m[5] * n[0] - m[3] * n[2] + m[2] * n[3] - m[0] * n[5]
    out[2] = m[3] * n[1] - m[4] * n[0] + m[0] * n[4] - m[1] * n[3]
    out[3] = m[4] * n[5] - m[5] * n[4]
    out[4] = m[5] * n[3] - m[3] * n[5]
    out[5] = m[3] * n[4] - m[4] * n[3]


@fast
def cross_force_add(m, f, out):
    """out += m x* f (spatial force cross product)."""
    out[0] += m[4] * f[2] - m[5] * f[1]
    out[1] += m[5] * f[0] - m[3] * f[2]
    out[2] += m[3] * f[1] - m[4] * f[0]
    out[3] += m[4] * f[5] - m[5] * f[4] + m[1] * f[2] - m[2] * f[1]
    out[4] += m[5] * f[3] - m[3] * f[5] + m[2] * f[0] - m[0] * f[2]
    out[5] += m[3] * f[4] - m[4] * f[3] + m[0] * f[1] - m[1] * f[0]


@fast
def inertia_times(I, m, out):
    """out = I m for a 10-parameter inertia (mass, h, rotational inertia about the origin)."""
    mass, hx, hy, hz = I[0], I[1], I[2], I[3]
    out[0] = mass * m[0] - (hy * m[5] - hz * m[4])
    out[1] = mass * m[1] - (hz * m[3] - hx * m[5])
    out[2] = mass * m[2] - (hx * m[4] - hy * m[3])
    out[3] = hy * m[2] - hz * m[1] + I[4] * m[3] + I[7] * m[4] + I[8] * m[5]
    out[4] = hz * m[0] - hx * m[2] + I[7] * m[3] + I[5] * m[4] + I[9] * m[5]
    out[5] = hx * m[1] - hy * m[0] + I[8] * m[3] + I[9] * m[4] + I[6] * m[5]


@fast
def inertia_matrix(I, out):
    """The 6x6 matrix of a 10-parameter inertia: [[m 1, -[h]], [[h], Ibar]]."""
    out[:, :] = 0.0
    for k in range(3):
        out[k, k] = I[0]
    hx, hy, hz = I[1], I[2], I[3]
    out[0, 4], out[0, 5], out[1, 3], out[1, 5], out[2, 3], out[2, 4] = hz, -hy, -hz, hx, hy, -hx
    out[4, 0], out[5, 0], out[3, 1], out[5, 1], out[3, 2], out[4, 2] = hz, -hy, -hz, hx, hy, -hx
    out[3, 3], out[4, 4], out[5, 5] = I[4], I[5], I[6]
    out[3, 4] = out[4, 3] = I[7]
    out[3, 5] = out[5, 3] = I[8]
    out[4, 5] = out[5, 4] = I[9]


@fast
def dot6(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3] + a[4] * b[4] + a[5] * b[5]


@fast
def all_finite(x):
    for k in range(x.size):
        if not np.isfinite(x.flat[k]):
            return False
    return True


# --- kinematics ------------------------------------------------------------------------------
@fast
def joint_rotation(model, i, q, R):
    """R = R_tree R_J(q) of body i's joint in its parent (Rodrigues about the joint axis)."""
    ax, ay, az = model[i, AXIS], model[i, AXIS + 1], model[i, AXIS + 2]
    if model[i, JTYPE] == PRISMATIC:
        for r in range(3):
            for c in range(3):
                R[r, c] = model[i, ROT + 3 * r + c]
        return
    th = q[int(model[i, IQ])]
    s, c = np.sin(th), np.cos(th)
    t = 1.0 - c
    J = ((t * ax * ax + c, t * ax * ay - s * az, t * ax * az + s * ay),
         (t * ax * ay + s * az, t * ay * ay + c, t * ay * az - s * ax),
         (t * ax * az - s * ay, t * ay * az + s * ax, t * az * az + c))
    for r in range(3):
        for col in range(3):
            R[r, col] = (model[i, ROT + 3 * r] * J[0][col] + model[i, ROT + 3 * r + 1] * J[1][col]
                         + model[i, ROT + 3 * r + 2] * J[2][col])


@fast
def kinematics(model, q, oR, op, S, Iw, R):
    """World placement (oR, op) of every body, world motion subspace S of every coordinate and
    world inertia Iw of every body (seed 003: PoE placement; seed 004 eq. 22 for inertia).
    Returns BAD_QUATERNION for a free flyer whose quaternion is not unit."""
    nb = model.shape[0] - 1
    for i in range(nb):
        p, iq, iv, jt = int(model[i, PARENT]), int(model[i, IQ]), int(model[i, IV]), model[i, JTYPE]
        if jt == FREE:
            x, y, z, w = q[iq + 3], q[iq + 4], q[iq + 5], q[iq + 6]
            n2 = x * x + y * y + z * z + w * w
            if abs(n2 - 1.0) > 1e-6:
                return BAD_QUATERNION
            R[0, 0], R[0, 1], R[0, 2] = 1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)
            R[1, 0], R[1, 1], R[1, 2] = 2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)
            R[2, 0], R[2, 1], R[2, 2] = 2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)
            local = (q[iq], q[iq + 1], q[iq + 2])
        else:
            joint_rotation(model, i, q, R)
            d = q[iq] if jt == PRISMATIC else 0.0
            local = (model[i, POS] + d * (model[i, ROT] * model[i, AXIS] + model[i, ROT + 1] * model[i, AXIS + 1]
                                          + model[i, ROT + 2] * model[i, AXIS + 2]),
                     model[i, POS + 1] + d * (model[i, ROT + 3] * model[i, AXIS] + model[i, ROT + 4] * model[i, AXIS + 1]
                                              + model[i, ROT + 5] * model[i, AXIS + 2]),
                     model[i, POS + 2] + d * (model[i, ROT + 6] * model[i, AXIS] + model[i, ROT + 7] * model[i, AXIS + 1]
                                              + model[i, ROT + 8] * model[i, AXIS + 2]))
        for r in range(3):
            if p < 0:
                op[i, r] = local[r]
                for c in range(3):
                    oR[i, r, c] = R[r, c]
            else:
                op[i, r] = op[p, r] + oR[p, r, 0] * local[0] + oR[p, r, 1] * local[1] + oR[p, r, 2] * local[2]
                for c in range(3):
                    oR[i, r, c] = oR[p, r, 0] * R[0, c] + oR[p, r, 1] * R[1, c] + oR[p, r, 2] * R[2, c]
        motion_subspace(model, i, iv, jt, oR[i], op[i], S)
        world_inertia(model, i, oR[i], op[i], Iw[i])
    return OK


@fast
def motion_subspace(model, i, iv, jt, oR, op, S):
    """World-frame S of body i's coordinates: [p x w; w] for rotation about w through p,
    [d; 0] for sliding along d; the free flyer's six columns are the body axes."""
    for k in range(ndofs(jt)):
        if jt == FREE:
            u = (oR[0, k % 3], oR[1, k % 3], oR[2, k % 3])
            rotates = k >= 3
        else:
            ax, ay, az = model[i, AXIS], model[i, AXIS + 1], model[i, AXIS + 2]
            u = (oR[0, 0] * ax + oR[0, 1] * ay + oR[0, 2] * az,
                 oR[1, 0] * ax + oR[1, 1] * ay + oR[1, 2] * az,
                 oR[2, 0] * ax + oR[2, 1] * ay + oR[2, 2] * az)
            rotates = jt != PRISMATIC
        s = S[iv + k]
        if rotates:
            s[0], s[1], s[2] = op[1] * u[2] - op[2] * u[1], op[2] * u[0] - op[0] * u[2], op[0] * u[1] - op[1] * u[0]
            s[3], s[4], s[5] = u[0], u[1], u[2]
        else:
            s[0], s[1], s[2], s[3], s[4], s[5] = u[0], u[1], u[2], 0.0, 0.0, 0.0


@fast
def world_inertia(model, i, oR, op, out):
    """Body inertia carried to the world origin: h = R h_b + m p,
    Ibar = R Ibar_b R^T - (p y^T + y p^T) + 2 (y.p) 1 - m (p p^T - |p|^2 1), y = R h_b."""
    m = model[i, INERTIA]
    hb = (model[i, INERTIA + 1], model[i, INERTIA + 2], model[i, INERTIA + 3])
    Ib = ((model[i, INERTIA + 4], model[i, INERTIA + 7], model[i, INERTIA + 8]),
          (model[i, INERTIA + 7], model[i, INERTIA + 5], model[i, INERTIA + 9]),
          (model[i, INERTIA + 8], model[i, INERTIA + 9], model[i, INERTIA + 6]))
    y0 = oR[0, 0] * hb[0] + oR[0, 1] * hb[1] + oR[0, 2] * hb[2]
    y1 = oR[1, 0] * hb[0] + oR[1, 1] * hb[1] + oR[1, 2] * hb[2]
    y2 = oR[2, 0] * hb[0] + oR[2, 1] * hb[1] + oR[2, 2] * hb[2]
    y, p = (y0, y1, y2), (op[0], op[1], op[2])
    yp, pp = y0 * p[0] + y1 * p[1] + y2 * p[2], p[0] * p[0] + p[1] * p[1] + p[2] * p[2]
    out[0] = m
    for r in range(3):
        out[1 + r] = y[r] + m * p[r]
    for k in range(6):      # entries xx yy zz xy xz yz
        r, c = (0, 1, 2, 0, 0, 1)[k], (0, 1, 2, 1, 2, 2)[k]
        rot = 0.0
        for a in range(3):
            rot += oR[r, a] * (Ib[a][0] * oR[c, 0] + Ib[a][1] * oR[c, 1] + Ib[a][2] * oR[c, 2])
        diag = 2.0 * yp + m * pp if r == c else 0.0
        out[4 + k] = rot - (p[r] * y[c] + y[r] * p[c]) - m * p[r] * p[c] + diag


@fast
def frame_in_world(spec, oR, op, R, p):
    """World placement (R, p) of the frame described by a spec row; body -1 is the world."""
    b = int(spec[F_BODY])
    for r in range(3):
        p[r] = spec[F_POS + r] if b < 0 else op[b, r]
        for c in range(3):
            if b < 0:
                R[r, c] = spec[F_ROT + 3 * r + c]
            else:
                R[r, c] = (oR[b, r, 0] * spec[F_ROT + c] + oR[b, r, 1] * spec[F_ROT + 3 + c]
                           + oR[b, r, 2] * spec[F_ROT + 6 + c])
        if b >= 0:
            p[r] += oR[b, r, 0] * spec[F_POS] + oR[b, r, 1] * spec[F_POS + 1] + oR[b, r, 2] * spec[F_POS + 2]


@fast
def add_external_wrenches(ext, oR, op, R, p, f):
    """f[body] -= wrench carried to the world origin, from the frame it is given in."""
    for e in range(ext.shape[0]):
        b = int(ext[e, F_BODY])
        if b < 0:
            continue
        frame_in_world(ext[e], oR, op, R, p)
        f0, f1, f2 = f[b, 0], f[b, 1], f[b, 2]
        w, ref = ext[e, F_WRENCH:F_WRENCH + 6], ext[e, F_REF]
        for r in range(3):
            if ref == LOCAL:     # rotate the frame's axes onto the world's
                f[b, r] -= R[r, 0] * w[0] + R[r, 1] * w[1] + R[r, 2] * w[2]
                f[b, 3 + r] -= R[r, 0] * w[3] + R[r, 1] * w[4] + R[r, 2] * w[5]
            else:
                f[b, r] -= w[r]
                f[b, 3 + r] -= w[3 + r]
        if ref != WORLD:         # applied at the frame origin p: n_o = n + p x force
            fx, fy, fz = f[b, 0] - f0, f[b, 1] - f1, f[b, 2] - f2
            f[b, 3] += p[1] * fz - p[2] * fy
            f[b, 4] += p[2] * fx - p[0] * fz
            f[b, 5] += p[0] * fy - p[1] * fx


# --- workspace -----------------------------------------------------------------------------
Work = namedtuple("Work", "oR op S Iw vel acc f Ia U R p s6 t6 D Dinv unknown n_unknown u")
# unknown / n_unknown hold small integers as floats: the whole workspace is one float buffer


@fast
def workspace_size(model):
    nb, nv = model.shape[0] - 1, int(model[-1, NV])
    return 119 * nb + 13 * nv + 60


@fast
def take(buf, at, n):
    """The next n floats of buf after position at, and the new position."""
    return buf[at:at + n], at + n


@fast
def workspace(model, buf):
    """Per-state scratch carved out of one flat buffer of workspace_size (views, no allocation)."""
    nb, nv = model.shape[0] - 1, int(model[-1, NV])
    oR, at = take(buf, 0, 9 * nb)
    op, at = take(buf, at, 3 * nb)
    S, at = take(buf, at, 6 * nv)
    Iw, at = take(buf, at, 10 * nb)
    vel, at = take(buf, at, 6 * nb)
    acc, at = take(buf, at, 6 * nb)
    f, at = take(buf, at, 6 * nb)
    Ia, at = take(buf, at, 36 * nb)
    U, at = take(buf, at, 6 * nv)
    R, at = take(buf, at, 9)
    p, at = take(buf, at, 3)
    s6, at = take(buf, at, 6)
    t6, at = take(buf, at, 6)
    D, at = take(buf, at, 36)
    Dinv, at = take(buf, at, 36 * nb)
    unknown, at = take(buf, at, 6 * nb)
    n_unknown, at = take(buf, at, nb)
    u, at = take(buf, at, nv)
    return Work(oR.reshape((nb, 3, 3)), op.reshape((nb, 3)), S.reshape((nv, 6)), Iw.reshape((nb, 10)),
                vel.reshape((nb, 6)), acc.reshape((nb, 6)), f.reshape((nb, 6)), Ia.reshape((nb, 6, 6)),
                U.reshape((nv, 6)), R.reshape((3, 3)), p, s6, t6, D.reshape((6, 6)), Dinv.reshape((nb, 6, 6)),
                unknown.reshape((nb, 6)), n_unknown, u)


@fast
def start(model, q, w):
    """Common first step: kinematics, or the reason it cannot be done."""
    return kinematics(model, q, w.oR, w.op, w.S, w.Iw, w.R)


@fast
def body_velocity(model, i, S, v, vel, sqd):
    """vel[i] = vel[parent] + S qd (seed 004 eq. 37, world frame); sqd gets S qd."""
    par, iv = int(model[i, PARENT]), int(model[i, IV])
    for k in range(6):
        sqd[k] = 0.0
    for d in range(ndofs(model[i, JTYPE])):
        for k in range(6):
            sqd[k] += S[iv + d, k] * v[iv + d]
    for k in range(6):
        vel[i, k] = sqd[k] + (vel[par, k] if par >= 0 else 0.0)


@fast
def root_acceleration(model, k):
    """Gravity as a fictitious upward acceleration of the base (seed 004 note 6)."""
    return -model[model.shape[0] - 1, GRAVITY + k] if k < 3 else 0.0


# --- inverse dynamics --------------------------------------------------------------------------
@fast
def rnea(model, q, v, a, ext, tau, w):
    """Recursive Newton-Euler (seed 000; seed 004 table 2), in the world frame:
    v_i = v_p + S qd, a_i = a_p + S qdd + v_p x S qd, f_i = I a_i + v_i x* I v_i - f_ext,
    tau = S^T f_i + armature qdd, f_p += f_i."""
    if not (all_finite(q) and all_finite(v) and all_finite(a) and all_finite(ext)):
        return NONFINITE
    status = start(model, q, w)
    if status != OK:
        return status
    S, vel, acc, f, sqd, h = w.S, w.vel, w.acc, w.f, w.s6, w.t6
    nb = model.shape[0] - 1
    for i in range(nb):
        par, iv = int(model[i, PARENT]), int(model[i, IV])
        body_velocity(model, i, S, v, vel, sqd)
        for k in range(6):
            acc[i, k] = root_acceleration(model, k) if par < 0 else acc[par, k]
        for d in range(ndofs(model[i, JTYPE])):
            for k in range(6):
                acc[i, k] += S[iv + d, k] * a[iv + d]
        if par >= 0:
            cross_motion(vel[par], sqd, h)
            for k in range(6):
                acc[i, k] += h[k]
        inertia_times(w.Iw[i], vel[i], h)
        inertia_times(w.Iw[i], acc[i], f[i])
        cross_force_add(vel[i], h, f[i])
    add_external_wrenches(ext, w.oR, w.op, w.R, w.p, f)
    for i in range(nb - 1, -1, -1):
        par, iv = int(model[i, PARENT]), int(model[i, IV])
        for d in range(ndofs(model[i, JTYPE])):
            tau[iv + d] = dot6(S[iv + d], f[i]) + model[i, ARMATURE] * a[iv + d]
        if par >= 0:
            for k in range(6):
                f[par, k] += f[i, k]
    return OK


@fast
def rnea_one(model, q, v, a, ext, tau, buf):
    return rnea(model, q, v, a, ext, tau, workspace(model, buf))


@fast
def rnea_rows(model, Q, V, A, EXT, TAU, status, lo, hi):
    w = workspace(model, np.empty(workspace_size(model)))
    for s in range(lo, hi):
        status[s] = rnea(model, Q[s], V[s], A[s], EXT[s], TAU[s], w)


@parallel
def rnea_batch(model, Q, V, A, EXT, TAU, nthreads):
    status = np.zeros(len(Q), np.int64)
    if nthreads == 1:      # no parallel region at all: starting one costs more than small batches take
        rnea_rows(model, Q, V, A, EXT, TAU, status, 0, len(Q))
    else:
        for t in prange(nthreads):
            rnea_rows(model, Q, V, A, EXT, TAU, status, t * len(Q) // nthreads, (t + 1) * len(Q) // nthreads)
    return status


# --- mass matrix -----------------------------------------------------------------------------
@fast
def crba(model, q, M, w):
    """Composite-rigid-body algorithm in the world frame: Ic_p += Ic_i, F = Ic_i S_i,
    M[j, i] = S_j^T F for j on the path from i to the root (the M(q) of seed 002 eq. 9)."""
    if not all_finite(q):
        return NONFINITE
    status = start(model, q, w)
    if status != OK:
        return status
    S, Ic, F = w.S, w.Iw, w.s6
    M[:, :] = 0.0       # bodies on different branches do not couple
    for i in range(model.shape[0] - 2, -1, -1):
        par, iv = int(model[i, PARENT]), int(model[i, IV])
        for d in range(ndofs(model[i, JTYPE])):
            inertia_times(Ic[i], S[iv + d], F)
            j = i
            while j >= 0:
                jv = int(model[j, IV])
                for e in range(ndofs(model[j, JTYPE])):
                    M[jv + e, iv + d] = M[iv + d, jv + e] = dot6(S[jv + e], F)
                j = int(model[j, PARENT])
            M[iv + d, iv + d] += model[i, ARMATURE]
        if par >= 0:
            for k in range(10):
                Ic[par, k] += Ic[i, k]
    return OK


@fast
def crba_one(model, q, M, buf):
    return crba(model, q, M, workspace(model, buf))


@fast
def crba_rows(model, Q, M, status, lo, hi):
    w = workspace(model, np.empty(workspace_size(model)))
    for s in range(lo, hi):
        status[s] = crba(model, Q[s], M[s], w)


@parallel
def crba_batch(model, Q, M, nthreads):
    status = np.zeros(len(Q), np.int64)
    if nthreads == 1:      # no parallel region at all: starting one costs more than small batches take
        crba_rows(model, Q, M, status, 0, len(Q))
    else:
        for t in prange(nthreads):
            crba_rows(model, Q, M, status, t * len(Q) // nthreads, (t + 1) * len(Q) // nthreads)
    return status


# --- forward and hybrid dynamics --------------------------------------------------------------
@fast
def invert_spd(D, n, out):
    """out[:n, :n] = inverse of the symmetric positive definite D[:n, :n] (Gauss-Jordan)."""
    for r in range(n):
        for c in range(n):
            out[r, c] = 1.0 if r == c else 0.0
    for k in range(n):
        piv = 1.0 / D[k, k]
        for c in range(n):
            D[k, c] *= piv
            out[k, c] *= piv
        for r in range(n):
            if r != k:
                fac = D[r, k]
                for c in range(n):
                    D[r, c] -= fac * D[k, c]
                    out[r, c] -= fac * out[k, c]


@fast
def mat6_times(A, x, k):
    return A[k, 0] * x[0] + A[k, 1] * x[1] + A[k, 2] * x[2] + A[k, 3] * x[3] + A[k, 4] * x[4] + A[k, 5] * x[5]


@fast
def hybrid(model, q, v, known, qdd, tau, ext, w):
    """Articulated-body hybrid dynamics (seed 004 section 2.3, eqs. 51-52): coordinates with
    known[k] keep qdd[k] and get tau[k]; the others keep tau[k] and get qdd[k]. With nothing
    known it is Featherstone's ABA (seed 004 table 3; seed 001). World frame; per joint, over
    its unknown columns S_u: U = Ia S_u, D = S_u^T U + armature, u = tau_u - S_u^T pA; the
    parent gets Pa = Ia - U D^-1 U^T and pa = pA + Pa c + U D^-1 u, where c = v_p x S qd
    plus S_k qdd_k of the known columns. Forward: qdd_u = D^-1 (u - U^T a'), and
    tau_k = S_k^T (Ia a + pA) + armature qdd_k for the known ones."""
    if not (all_finite(q) and all_finite(v) and all_finite(qdd) and all_finite(tau) and all_finite(ext)):
        return NONFINITE
    status = start(model, q, w)
    if status != OK:
        return status
    S, vel, c, pA, Ia, U, u = w.S, w.vel, w.f, w.acc, w.Ia, w.U, w.u
    unknown, n_unknown, D, Dinv, sqd = w.unknown, w.n_unknown, w.D, w.Dinv, w.s6
    nb = model.shape[0] - 1
    for i in range(nb):
        par, iv = int(model[i, PARENT]), int(model[i, IV])
        body_velocity(model, i, S, v, vel, sqd)
        if par >= 0:
            cross_motion(vel[par], sqd, c[i])
        else:
            c[i, :] = 0.0
        n_unknown[i] = 0
        for d in range(ndofs(model[i, JTYPE])):
            if known[iv + d]:
                for k in range(6):
                    c[i, k] += S[iv + d, k] * qdd[iv + d]
            else:
                unknown[i, int(n_unknown[i])] = iv + d
                n_unknown[i] += 1
        inertia_matrix(w.Iw[i], Ia[i])
        inertia_times(w.Iw[i], vel[i], sqd)
        pA[i, :] = 0.0
        cross_force_add(vel[i], sqd, pA[i])
    add_external_wrenches(ext, w.oR, w.op, w.R, w.p, pA)
    UDinv = w.t6
    for i in range(nb - 1, -1, -1):
        par, m = int(model[i, PARENT]), int(n_unknown[i])
        for a in range(m):
            ka = int(unknown[i, a])
            for k in range(6):
                U[ka, k] = mat6_times(Ia[i], S[ka], k)
        for a in range(m):
            ka = int(unknown[i, a])
            for b in range(m):
                D[a, b] = dot6(S[ka], U[int(unknown[i, b])])
            D[a, a] += model[i, ARMATURE]
            u[ka] = tau[ka] - dot6(S[ka], pA[i])
        invert_spd(D, m, Dinv[i])
        if par < 0:
            continue
        for r in range(6):
            pA[par, r] += pA[i, r] + mat6_times(Ia[i], c[i], r)
            for col in range(6):
                Ia[par, r, col] += Ia[i, r, col]
        for a in range(m):      # the projection, column a of U D^-1 at a time
            for k in range(6):
                UDinv[k] = 0.0
                for b in range(m):
                    UDinv[k] += U[int(unknown[i, b]), k] * Dinv[i, b, a]
            ka = int(unknown[i, a])
            uc = u[ka] - dot6(U[ka], c[i])
            for r in range(6):
                pA[par, r] += UDinv[r] * uc
                for col in range(6):
                    Ia[par, r, col] -= UDinv[r] * U[ka, col]
    for i in range(nb):
        par, m, iv = int(model[i, PARENT]), int(n_unknown[i]), int(model[i, IV])
        for k in range(6):      # a' = a_p + c, kept in vel (free now)
            vel[i, k] = (root_acceleration(model, k) if par < 0 else vel[par, k]) + c[i, k]
        for a in range(m):
            ka = int(unknown[i, a])
            sqd[a] = u[ka] - dot6(U[ka], vel[i])
        for a in range(m):
            ka = int(unknown[i, a])
            qdd[ka] = 0.0
            for b in range(m):
                qdd[ka] += Dinv[i, a, b] * sqd[b]
            for k in range(6):
                vel[i, k] += S[ka, k] * qdd[ka]
        for d in range(ndofs(model[i, JTYPE])):
            if known[iv + d]:
                tau[iv + d] = model[i, ARMATURE] * qdd[iv + d] + dot6(S[iv + d], pA[i])
                for k in range(6):
                    tau[iv + d] += S[iv + d, k] * mat6_times(Ia[i], vel[i], k)
    return OK


@fast
def hybrid_one(model, q, v, known, qdd, tau, ext, buf):
    return hybrid(model, q, v, known, qdd, tau, ext, workspace(model, buf))


@fast
def hybrid_rows(model, Q, V, KNOWN, QDD, TAU, EXT, status, lo, hi):
    w = workspace(model, np.empty(workspace_size(model)))
    for s in range(lo, hi):
        status[s] = hybrid(model, Q[s], V[s], KNOWN[s], QDD[s], TAU[s], EXT[s], w)


@parallel
def hybrid_batch(model, Q, V, KNOWN, QDD, TAU, EXT, nthreads):
    status = np.zeros(len(Q), np.int64)
    if nthreads == 1:      # no parallel region at all: starting one costs more than small batches take
        hybrid_rows(model, Q, V, KNOWN, QDD, TAU, EXT, status, 0, len(Q))
    else:
        for t in prange(nthreads):
            hybrid_rows(model, Q, V, KNOWN, QDD, TAU, EXT, status,
                        t * len(Q) // nthreads, (t + 1) * len(Q) // nthreads)
    return status


# --- frames: placement and Jacobian -------------------------------------------------------------
@fast
def frame_jacobian(model, q, spec, J, H, w):
    """Placement H (4x4) of a frame and its Jacobian J (6 x nv, rows [linear; angular]) in the
    spec's reference (seed 003: the space Jacobian's columns are the joints' world screws S,
    ours at the world origin; LOCAL_WORLD_ALIGNED shifts them to the frame origin p,
    v_p = v_o + w x p, and LOCAL rotates them into the frame's axes)."""
    if not all_finite(q):
        return NONFINITE
    status = start(model, q, w)
    if status != OK:
        return status
    R, p, col = w.R, w.p, w.s6
    frame_in_world(spec, w.oR, w.op, R, p)
    for r in range(4):
        for c in range(4):
            H[r, c] = (R[r, c] if c < 3 else p[r]) if r < 3 else (1.0 if c == 3 else 0.0)
    J[:, :] = 0.0
    ref = spec[F_REF]
    j = int(spec[F_BODY])
    while j >= 0:
        jv = int(model[j, IV])
        for e in range(ndofs(model[j, JTYPE])):
            s = w.S[jv + e]
            for k in range(6):
                col[k] = s[k]
            if ref != WORLD:
                col[0] += s[4] * p[2] - s[5] * p[1]
                col[1] += s[5] * p[0] - s[3] * p[2]
                col[2] += s[3] * p[1] - s[4] * p[0]
            for k in range(6):
                if ref == LOCAL:    # R^T times each half
                    b = 3 * (k // 3)
                    J[k, jv + e] = R[0, k % 3] * col[b] + R[1, k % 3] * col[b + 1] + R[2, k % 3] * col[b + 2]
                else:
                    J[k, jv + e] = col[k]
        j = int(model[j, PARENT])
    return OK


@fast
def frame_jacobian_one(model, q, spec, J, H, buf):
    return frame_jacobian(model, q, spec, J, H, workspace(model, buf))


@fast
def frame_jacobian_rows(model, Q, spec, J, H, status, lo, hi):
    w = workspace(model, np.empty(workspace_size(model)))
    for s in range(lo, hi):
        status[s] = frame_jacobian(model, Q[s], spec, J[s], H[s], w)


@parallel
def frame_jacobian_batch(model, Q, spec, J, H, nthreads):
    status = np.zeros(len(Q), np.int64)
    if nthreads == 1:      # no parallel region at all: starting one costs more than small batches take
        frame_jacobian_rows(model, Q, spec, J, H, status, 0, len(Q))
    else:
        for t in prange(nthreads):
            frame_jacobian_rows(model, Q, spec, J, H, status, t * len(Q) // nthreads, (t + 1) * len(Q) // nthreads)
    return status


# --- Coriolis matrix -----------------------------------------------------------------------
@fast
def coriolis_body(I6, Iv, vel, B):
    """B = (v x* I - I v x + (I v) xbar*) / 2, so that Mdot = C + C^T and C v = v x* I v
    (the Christoffel-consistent split of seed 002 property 2, per body)."""
    vx = np.zeros((6, 6))        # motion cross product matrix [[w], [v]; 0, [w]]
    wx, vl = vel[3:], vel[:3]
    for blk in range(2):
        o = 3 * blk
        vx[o, o + 1], vx[o, o + 2], vx[o + 1, o + 2] = -wx[2], wx[1], -wx[0]
        vx[o + 1, o], vx[o + 2, o], vx[o + 2, o + 1] = wx[2], -wx[1], wx[0]
    vx[0, 4], vx[0, 5], vx[1, 5], vx[1, 3], vx[2, 3], vx[2, 4] = -vl[2], vl[1], -vl[0], vl[2], -vl[1], vl[0]
    fl, fa = Iv[:3], Iv[3:]
    for r in range(6):
        for c in range(6):
            acc = 0.0
            for k in range(6):     # v x* = -(v x)^T
                acc += -vx[k, r] * I6[k, c] - I6[r, k] * vx[k, c]
            B[r, c] = 0.5 * acc
    # (f xbar*) = [[0, -[fl]], [-[fl], -[fa]]]
    for r in range(3):
        for c in range(3):
            sl = (0.0, -fl[2], fl[1], fl[2], 0.0, -fl[0], -fl[1], fl[0], 0.0)[3 * r + c]
            sa = (0.0, -fa[2], fa[1], fa[2], 0.0, -fa[0], -fa[1], fa[0], 0.0)[3 * r + c]
            B[r, 3 + c] -= 0.5 * sl
            B[3 + r, c] -= 0.5 * sl
            B[3 + r, 3 + c] -= 0.5 * sa


@fast
def coriolis(model, q, v, C, w):
    """Coriolis matrix C(q, v) with Mdot - 2C skew-symmetric: C = sum_k J_k^T (I_k Jdot_k +
    B_k J_k) over bodies, gathered with composite inertias Ic and composite B (Echeandia &
    Wensing's recursion), where the world-frame Sdot of a joint is v_body x S."""
    if not (all_finite(q) and all_finite(v)):
        return NONFINITE
    status = start(model, q, w)
    if status != OK:
        return status
    nb = model.shape[0] - 1
    S, Sdot, vel, Ic, Bc, h, f1, I6 = w.S, w.U, w.vel, w.Iw, w.Ia, w.s6, w.t6, w.D
    f3 = w.f[0]    # any free 6-vector: f is not used here
    for i in range(nb):
        iv = int(model[i, IV])
        body_velocity(model, i, S, v, vel, h)
        for d in range(ndofs(model[i, JTYPE])):
            cross_motion(vel[i], S[iv + d], Sdot[iv + d])
        inertia_matrix(Ic[i], I6)
        inertia_times(Ic[i], vel[i], h)
        coriolis_body(I6, h, vel[i], Bc[i])
    C[:, :] = 0.0
    for i in range(nb - 1, -1, -1):
        par, iv = int(model[i, PARENT]), int(model[i, IV])
        for d in range(ndofs(model[i, JTYPE])):
            b = iv + d
            inertia_times(Ic[i], Sdot[b], f1)       # f1 = Ic Sdot_b + Bc S_b
            inertia_times(Ic[i], S[b], h)           # h = Ic S_b
            for r in range(6):
                f1[r] += mat6_times(Bc[i], S[b], r)
                f3[r] = Bc[i, 0, r] * S[b, 0] + Bc[i, 1, r] * S[b, 1] + Bc[i, 2, r] * S[b, 2] \
                    + Bc[i, 3, r] * S[b, 3] + Bc[i, 4, r] * S[b, 4] + Bc[i, 5, r] * S[b, 5]
            j = i
            while j >= 0:
                jv = int(model[j, IV])
                for e in range(ndofs(model[j, JTYPE])):
                    C[jv + e, b] = dot6(S[jv + e], f1)
                    if j != i:   # b below jv + e: C[b, a] = (Ic S_b) . Sdot_a + (Bc^T S_b) . S_a
                        C[b, jv + e] = dot6(h, Sdot[jv + e]) + dot6(f3, S[jv + e])
                j = int(model[j, PARENT])
        if par >= 0:
            for k in range(10):
                Ic[par, k] += Ic[i, k]
            for r in range(6):
                for c in range(6):
                    Bc[par, r, c] += Bc[i, r, c]
    return OK


@fast
def coriolis_one(model, q, v, C, buf):
    return coriolis(model, q, v, C, workspace(model, buf))


@fast
def coriolis_rows(model, Q, V, C, status, lo, hi):
    w = workspace(model, np.empty(workspace_size(model)))
    for s in range(lo, hi):
        status[s] = coriolis(model, Q[s], V[s], C[s], w)


@parallel
def coriolis_batch(model, Q, V, C, nthreads):
    status = np.zeros(len(Q), np.int64)
    if nthreads == 1:      # no parallel region at all: starting one costs more than small batches take
        coriolis_rows(model, Q, V, C, status, 0, len(Q))
    else:
        for t in prange(nthreads):
            coriolis_rows(model, Q, V, C, status, t * len(Q) // nthreads, (t + 1) * len(Q) // nthreads)
    return status
