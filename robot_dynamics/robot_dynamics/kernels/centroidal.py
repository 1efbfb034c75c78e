"""The centre of mass, its Jacobian, the centroidal momentum, its matrix and the kinetic energy
(Kajita et al., Introduction to Humanoid Robotics, ch. 3: momentum, angular momentum and the
centre of mass; Orin and Goswami, Centroidal momentum matrix of a humanoid robot, IROS 2008), in
world axes about the reference point o, from the bodies' inertias there (`kinematics`).

With I_i = (m_i, m_i (c_i - o), Ibar_i) body i's inertia about o and v_i its spatial velocity
(world axes, about o), m = sum m_i and c = o + sum m_i (c_i - o) / m. The momentum of the whole
robot about o is h_o = sum I_i v_i; about the centre of mass h_G = (h_lin, h_ang - (c - o) x h_lin)
(its linear part m cdot: the centre of mass moves at h_lin / m). Coordinate d of joint j moves
j's subtree with S_d: Ic_j S_d is that subtree's momentum (Ic_j its composite inertia about o,
Featherstone, RBDA ch. 6, as in CRBA), so
    A_G column = (F_lin, F_ang - (c - o) x F_lin), F = Ic_j S_d          (h_G = A_G v)
    J_com column = F_lin / m = (m_j S_lin + S_ang x m_j (c_j - o)) / m   (the first four
                   parameters of Ic_j suffice: the subtree's mass and first moment)
Mimic joints add their scale times their column to their leader's. T = 1/2 sum v_i . I_i v_i
+ 1/2 sum armature (scale v)^2 = 1/2 v^T M v, and the potential energy -sum m_i g . c_i =
-g . (m o + sum m_i (c_i - o)). The world-fixed root link is no body: its mass is
not counted (as in Pinocchio, where it belongs to the universe).
"""
import numpy as np

from ..layout import (ARMATURE, FREE, GRAVITY, INERTIA, JTYPE, NQ, NV, ORIGIN_BODY, POS, PRISMATIC, QSRC,
                      QUATERNION_TOL, REVOLUTE, ROT, VSCALE)
from .columns import KINEMATICS_END, W_I, W_JOINT, W_ORIGIN, W_P, W_R, W_S, layout
from .common import (BAD_QUATERNION, NONFINITE, OK, OVERFLOW, chunk, fail, finite, ndofs, parent, usable, user_v,
                     workspace)
from .jit import fast, parallel, prange
from .kinematics import body_velocity, joint_angle, kinematics, origin, reference_point
from .spatial import (IDENTITY3, ZERO6, column, cross3, dot6, get6, get9, inertia_times, matmul3, matvec3,
                      quaternion_matrix, rotate_z, set6, set9)

#: a status of these kernels: the bodies have no mass, so there is no centre of mass
MASSLESS = 5
#: per body: its spatial velocity (world axes, about o)
W_V, WIDTH = layout((("V", 6),), KINEMATICS_END)
#: what `centroidal` writes: centre of mass, its velocity, h_G [linear; angular], kinetic energy
OUT_COM, OUT_VCOM, OUT_H, OUT_T, OUT_LEN = 0, 3, 6, 12, 13


@fast
def mass_placements(model, q, W):
    """What the centre of mass needs of `kinematics` (the same placements, written out here without
    the motion subspaces and rotational inertias, ~40 % of its work): each body's joint-frame
    placement (R, p - o) in W_R and W_P, o in W_ORIGIN, and its mass and first moment about o,
    m_i (c_i - o) = m_i (p - o) + R (m c)_i, in W_I[0:4]. BAD_QUATERNION as `kinematics`."""
    nb = model.shape[0] - 1
    o = reference_point(model, q, int(model[-1, ORIGIN_BODY]), False)
    for i in range(nb):
        joint_angle(model, q, W, i)
    for i in range(nb):
        par, jt, iq = parent(model, i), model[i, JTYPE], int(model[i, QSRC])
        Rp = get9(W, par, W_R) if par >= 0 else IDENTITY3
        pp = (W[par, W_P], W[par, W_P + 1], W[par, W_P + 2]) if par >= 0 else (-o[0], -o[1], -o[2])
        A = matmul3(Rp, get9(model, i, ROT))
        t = matvec3(Rp, (model[i, POS], model[i, POS + 1], model[i, POS + 2]))
        p = (pp[0] + t[0], pp[1] + t[1], pp[2] + t[2])
        if jt == REVOLUTE:
            R = rotate_z(A, W[i, W_JOINT + 1], W[i, W_JOINT + 2])
        elif jt == PRISMATIC:
            th = W[i, W_JOINT]
            R, p = A, (p[0] + th * A[2], p[1] + th * A[5], p[2] + th * A[8])
        elif jt == FREE:
            x, y, z, w = q[iq + 3], q[iq + 4], q[iq + 5], q[iq + 6]
            if abs(x * x + y * y + z * z + w * w - 1.0) > QUATERNION_TOL:
                return fail(BAD_QUATERNION, i)
            R, t = matmul3(A, quaternion_matrix(x, y, z, w)), matvec3(A, (q[iq], q[iq + 1], q[iq + 2]))
            p = (p[0] + t[0], p[1] + t[1], p[2] + t[2])
        else:                       # planar: along the joint frame's x and y, about its z
            R, x, y = rotate_z(A, W[i, W_JOINT + 1], W[i, W_JOINT + 2]), q[iq], q[iq + 1]
            p = (p[0] + x * A[0] + y * A[1], p[1] + x * A[3] + y * A[4], p[2] + x * A[6] + y * A[7])
        set9(W, i, W_R, R)
        W[i, W_P], W[i, W_P + 1], W[i, W_P + 2] = p
        m = model[i, INERTIA]
        mc = matvec3(R, (model[i, INERTIA + 1], model[i, INERTIA + 2], model[i, INERTIA + 3]))
        W[i, W_I], W[i, W_I + 1], W[i, W_I + 2], W[i, W_I + 3] = m, mc[0] + m * p[0], mc[1] + m * p[1], mc[2] + m * p[2]
    W[0, W_ORIGIN], W[0, W_ORIGIN + 1], W[0, W_ORIGIN + 2] = o
    return OK


@fast
def sized(model, x, n):
    """x has the model's number of coordinates (column n of the last row: NQ or NV). The API's
    single-state fast paths leave this check to the kernel; elsewhere the inputs are checked first."""
    return x.shape[0] == int(model[-1, n])


@fast
def mass_and_moment(model, W):
    """(m, m (c - o)): total mass and first moment about o of the bodies, after `kinematics`."""
    m, hx, hy, hz = 0.0, 0.0, 0.0, 0.0
    for i in range(model.shape[0] - 1):
        m += W[i, W_I]
        hx += W[i, W_I + 1]
        hy += W[i, W_I + 2]
        hz += W[i, W_I + 3]
    return m, (hx, hy, hz)


@fast
def write_com(W, m, moment, c):
    """c = o + m (c - o) / m."""
    o = origin(W)
    c[0], c[1], c[2] = o[0] + moment[0] / m, o[1] + moment[1] / m, o[2] + moment[2] / m


@fast
def center_of_mass(model, q, c, W):
    """The centre of mass c (3) of one state."""
    if not (sized(model, q, NQ) and usable(q)):
        return NONFINITE
    status = mass_placements(model, q, W)
    if status != OK:
        return status
    m, moment = mass_and_moment(model, W)
    if not m > 0.0:
        return MASSLESS
    write_com(W, m, moment, c)
    return OK if finite(c) else OVERFLOW


@fast
def potential_energy(model, q, e, W):
    """e[0] = -sum m_i g . c_i, the potential energy of one state (g the model's gravity)."""
    if not (sized(model, q, NQ) and usable(q)):
        return NONFINITE
    status = mass_placements(model, q, W)
    if status != OK:
        return status
    m, moment = mass_and_moment(model, W)
    o, g = origin(W), model.shape[0] - 1
    e[0] = -(model[g, GRAVITY] * (moment[0] + m * o[0]) + model[g, GRAVITY + 1] * (moment[1] + m * o[1])
             + model[g, GRAVITY + 2] * (moment[2] + m * o[2]))
    return OK if finite(e) else OVERFLOW


@fast
def com_jacobian(model, q, J, W):
    """The Jacobian J (3 x nv) of the centre of mass of one state: column S_lin m_j / m +
    S_ang x m_j (c_j - o) / m for subtree j (module docstring), written per joint type from its
    placement: u x m_j (c_j - p) / m about an axis u through p, m_j u / m along it."""
    if not (sized(model, q, NQ) and usable(q)):
        return NONFINITE
    status = mass_placements(model, q, W)
    if status != OK:
        return status
    m, moment = mass_and_moment(model, W)
    if not m > 0.0:
        return MASSLESS
    J[:, :] = 0.0
    inv = 1.0 / m
    for j in range(model.shape[0] - 2, -1, -1):    # leaves first: j's subtree is summed when j comes
        mj, hx, hy, hz = W[j, W_I], W[j, W_I + 1], W[j, W_I + 2], W[j, W_I + 3]
        par = parent(model, j)
        if par >= 0:
            W[par, W_I] += mj
            W[par, W_I + 1] += hx
            W[par, W_I + 2] += hy
            W[par, W_I + 3] += hz
        f, jt, k, R = mj * inv, model[j, JTYPE], user_v(model, j, 0), get9(W, j, W_R)
        r = ((hx - mj * W[j, W_P]) * inv, (hy - mj * W[j, W_P + 1]) * inv, (hz - mj * W[j, W_P + 2]) * inv)
        if jt == REVOLUTE:          # r = m_j (c_j - p) / m
            add_column(J, k, model[j, VSCALE], cross3(column(R, 2), r))
        elif jt == PRISMATIC:
            add_column(J, k, model[j, VSCALE] * f, column(R, 2))
        elif jt == FREE:
            for d in range(3):
                add_column(J, k + d, f, column(R, d))
                add_column(J, k + 3 + d, 1.0, cross3(column(R, d), r))
        else:
            add_column(J, k, f, column(R, 0))
            add_column(J, k + 1, f, column(R, 1))
            add_column(J, k + 2, 1.0, cross3(column(R, 2), r))
    return OK


@fast
def add_column(J, k, s, x):
    """J[:, k] += s x (a mimic joint adds to its leader's column)."""
    J[0, k] += s * x[0]
    J[1, k] += s * x[1]
    J[2, k] += s * x[2]


@fast
def centroidal_matrix(model, q, A, W):
    """The centroidal momentum matrix A (6 x nv, h_G = A v) of one state (module docstring)."""
    if not (sized(model, q, NQ) and usable(q)):
        return NONFINITE
    status = kinematics(model, q, W)
    if status != OK:
        return status
    m, moment = mass_and_moment(model, W)
    if not m > 0.0:
        return MASSLESS
    r = (moment[0] / m, moment[1] / m, moment[2] / m)      # c - o
    A[:, :] = 0.0
    for j in range(model.shape[0] - 2, -1, -1):    # leaves first: j's inertia is its subtree's when j comes
        par, g = parent(model, j), model[j, VSCALE]
        if par >= 0:
            for e in range(10):
                W[par, W_I + e] += W[j, W_I + e]
        for d in range(ndofs(model, j)):
            F = inertia_times(W, j, W_I, get6(W, j, W_S + 6 * d))
            rf = cross3(r, (F[0], F[1], F[2]))
            k = user_v(model, j, d)
            A[0, k] += g * F[0]
            A[1, k] += g * F[1]
            A[2, k] += g * F[2]
            A[3, k] += g * (F[3] - rf[0])
            A[4, k] += g * (F[4] - rf[1])
            A[5, k] += g * (F[5] - rf[2])
    return OK


@fast
def centroidal(model, q, v, out, W):
    """out (OUT_LEN) = the centre of mass, its velocity, the centroidal momentum h_G [linear;
    angular] and the kinetic energy of one state, in one pass over the bodies (module docstring)."""
    if not (sized(model, q, NQ) and sized(model, v, NV) and usable(q) and usable(v)):
        return NONFINITE
    status = kinematics(model, q, W)
    if status != OK:
        return status
    h, twice_t = ZERO6, 0.0
    for i in range(model.shape[0] - 1):
        par = parent(model, i)
        vi = body_velocity(model, v, W, i, get6(W, par, W_V) if par >= 0 else ZERO6)
        set6(W, i, W_V, vi)
        hi = inertia_times(W, i, W_I, vi)
        h = (h[0] + hi[0], h[1] + hi[1], h[2] + hi[2], h[3] + hi[3], h[4] + hi[4], h[5] + hi[5])
        twice_t += dot6(vi, hi)
        if ndofs(model, i) == 1:
            qd = model[i, VSCALE] * v[user_v(model, i, 0)]
            twice_t += model[i, ARMATURE] * qd * qd
    m, moment = mass_and_moment(model, W)
    out[OUT_T] = 0.5 * twice_t
    if not m > 0.0:                 # the kinetic energy alone (of the rotors) is defined
        out[:OUT_T] = 0.0
        return MASSLESS if finite(out) else OVERFLOW
    c = out[OUT_COM:OUT_COM + 3]
    write_com(W, m, moment, c)
    rf = cross3((moment[0] / m, moment[1] / m, moment[2] / m), (h[0], h[1], h[2]))
    out[OUT_VCOM], out[OUT_VCOM + 1], out[OUT_VCOM + 2] = h[0] / m, h[1] / m, h[2] / m
    out[OUT_H], out[OUT_H + 1], out[OUT_H + 2] = h[0], h[1], h[2]
    out[OUT_H + 3], out[OUT_H + 4], out[OUT_H + 5] = h[3] - rf[0], h[4] - rf[1], h[5] - rf[2]
    return OK if finite(out) else OVERFLOW


# --- batches: <name>_rows on one thread, <name>_batch over threads (kernels/__init__.py) -----------
@fast
def center_of_mass_rows(model, Q, C, status, lo, hi, W):
    for s in range(lo, hi):
        status[s] = center_of_mass(model, Q[s], C[s], W)


@parallel
def center_of_mass_batch(model, Q, C, nthreads):
    status = np.zeros(len(Q), np.int64)
    for t in prange(nthreads):
        lo, hi = chunk(t, len(Q), nthreads)
        center_of_mass_rows(model, Q, C, status, lo, hi, workspace(model, WIDTH))
    return status


@fast
def potential_energy_rows(model, Q, E, status, lo, hi, W):
    for s in range(lo, hi):
        status[s] = potential_energy(model, Q[s], E[s], W)


@parallel
def potential_energy_batch(model, Q, E, nthreads):
    status = np.zeros(len(Q), np.int64)
    for t in prange(nthreads):
        lo, hi = chunk(t, len(Q), nthreads)
        potential_energy_rows(model, Q, E, status, lo, hi, workspace(model, WIDTH))
    return status


@fast
def com_jacobian_rows(model, Q, J, status, lo, hi, W):
    for s in range(lo, hi):
        status[s] = com_jacobian(model, Q[s], J[s], W)


@parallel
def com_jacobian_batch(model, Q, J, nthreads):
    status = np.zeros(len(Q), np.int64)
    for t in prange(nthreads):
        lo, hi = chunk(t, len(Q), nthreads)
        com_jacobian_rows(model, Q, J, status, lo, hi, workspace(model, WIDTH))
    return status


@fast
def centroidal_matrix_rows(model, Q, A, status, lo, hi, W):
    for s in range(lo, hi):
        status[s] = centroidal_matrix(model, Q[s], A[s], W)


@parallel
def centroidal_matrix_batch(model, Q, A, nthreads):
    status = np.zeros(len(Q), np.int64)
    for t in prange(nthreads):
        lo, hi = chunk(t, len(Q), nthreads)
        centroidal_matrix_rows(model, Q, A, status, lo, hi, workspace(model, WIDTH))
    return status


@fast
def centroidal_rows(model, Q, V, OUT, status, lo, hi, W):
    for s in range(lo, hi):
        status[s] = centroidal(model, Q[s], V[s], OUT[s], W)


@parallel
def centroidal_batch(model, Q, V, OUT, nthreads):
    status = np.zeros(len(Q), np.int64)
    for t in prange(nthreads):
        lo, hi = chunk(t, len(Q), nthreads)
        centroidal_rows(model, Q, V, OUT, status, lo, hi, workspace(model, WIDTH))
    return status
