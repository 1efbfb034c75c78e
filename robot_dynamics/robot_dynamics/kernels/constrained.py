"""Dynamics under rigid constraints: contacts (a frame's origin, or the whole frame, held still)
and loop closures (two frames of the robot held together), at the acceleration level (Kim, Lie
group formulation of articulated rigid body dynamics, constrained dynamics; Featherstone, Rigid
Body Dynamics Algorithms, ch. 8, closed loops).

A constraint k gives rows J_k v (n = 3: the linear rows, n = 6: linear and angular) of the frames'
velocities in world axes at their origins (local_world_aligned): for a contact J_a, for a loop
J_a - J_b. Its acceleration is J qdd + Jdot v, Jdot v the frames' classical accelerations at
qdd = 0 ([p''; w'] with p'' = a_o + w' x p + w x p'), and the constraint asks
J qdd = -gamma, gamma = Jdot v + kd J v + kp e (Baumgarte's stabilisation; e the position error,
[p_a - p_b; log(R_a R_b^T)], where a target is known). With forces f acting on the robot
(J^T f in joint space), M qdd + b = tau + J^T f. The Schur complement solves it: M = L^T D L
(ltdl.py), Y = L^-T J^T, the Delassus matrix A = J M^-1 J^T = Y^T D^-1 Y, f the least-norm
solution of A f = -gamma - J M^-1 (tau - b) (psd.py: redundant constraints do not make it
singular), and qdd = M^-1 (tau - b + J^T f). Constraints that cannot all hold leave a residual in
A f = rhs: that is an error naming the constraint, never a force.

Contact inverse dynamics: the joint torques and contact forces that produce a given acceleration
when the floating joints are not actuated: tau_id = RNEA(q, v, a) must equal J^T f on their rows,
J_u^T f = tau_u; f is its least-norm solution (f = J_u y with J_u^T J_u y = tau_u) and the other
torques are tau_id - J^T f.

Everything is in world axes about the reference point o (kinematics.py).
"""
import numpy as np

from ..layout import FREE, JTYPE, MIMIC, NV, VSCALE
from .aba_derivatives import L_DIAG, L_END, L_LAM, L_ROWS, L_USER, L_X, factor_order
from .columns import W_S, layout
from .common import (FRAME_COLS, F_BODY, NONFINITE, OK, OVERFLOW, SINGULAR, STATUS_BODY, chunk, fail, finite,
                     ndofs, root_acceleration, usable, user_v)
from .hybrid import body_of_coordinate
from .jit import allocating, fast, parallel, prange
from .kinematics import frame_about_origin, kinematics, on_chain
from .ltdl import factor
from .psd import least_norm_solve
from .rnea import WIDTH as RNEA_WIDTH
from .rnea import newton_euler
from .rnea_derivatives import (W_A, W_T0, W_V, WIDTH, Z_END, accelerations, bias, composites, coordinate_terms,
                               mass_pairs, vector_row, velocities)
from .spatial import cross3, get6, matmul3, transpose3

#: a constraint row: its size (3: a point, 6: a frame), frame a and frame b as frame specs (body -1:
#: fixed in the world, at the spec's placement), and 1.0 if the position error counts (a loop, or
#: a contact with a target)
C_SIZE, C_A, C_B, C_POSITION, C_COLS = layout((("SIZE", 1), ("A", FRAME_COLS), ("B", FRAME_COLS), ("POSITION", 1)))
#: status: constraint k cannot hold (code + STATUS_BODY * (k + 1); k = -1: the contacts together)
INCONSISTENT = 5
#: constraints cannot hold when the residual of A f = rhs exceeds this fraction of its terms
RESIDUAL_TOL = 1e-8
#: the vectors of the solve, a row each of size m: gamma, rhs, f, the pivots and a scratch
G_GAMMA, G_RHS, G_F, G_PERM, G_TMP, G_ROWS = layout((("GAMMA", 1), ("RHS", 1), ("F", 1), ("PERM", 1), ("TMP", 1)))


def constraint_count(C):
    """Rows of J for the constraint rows C."""
    return int(sum(C[:, C_SIZE])) if len(C) else 0


@allocating
def constrained_workspace(model, m):
    """Scratch for one state with m constraint rows: a row per body, a row per full coordinate, a
    vector row, then the blocks of `blocks`."""
    nb, nv, nf = model.shape[0] - 1, int(model[-1, NV]), 0
    for i in range(nb):
        nf += ndofs(model, i)
    width = max(WIDTH, RNEA_WIDTH, nv, Z_END)
    extra = L_ROWS * nv + 2 * nv * nv + nv * m + 3 * m * m + G_ROWS * m
    return np.empty((nb + nf + 1 + (extra + width - 1) // width, width))


@fast
def blocks(model, m, W):
    """C-contiguous views of W past its rows: the factor's vectors (L_ROWS x nv), H (nv x nv), a
    scratch Mu (nv x nv), J^T in the factor's order (nv x m), the Delassus matrix A and two m x m
    scratch blocks, and the solve's vectors (G_ROWS x m)."""
    nb, nv, nf = model.shape[0] - 1, int(model[-1, NV]), 0
    for i in range(nb):
        nf += ndofs(model, i)
    flat = W.reshape(-1)
    s = (nb + nf + 1) * W.shape[1]
    V = flat[s:s + L_ROWS * nv].reshape(L_ROWS, nv)
    s += L_ROWS * nv
    H = flat[s:s + nv * nv].reshape(nv, nv)
    s += nv * nv
    Mu = flat[s:s + nv * nv].reshape(nv, nv)
    s += nv * nv
    JT = flat[s:s + nv * m].reshape(nv, m)
    s += nv * m
    A = flat[s:s + m * m].reshape(m, m)
    s += m * m
    G = flat[s:s + m * m].reshape(m, m)
    s += m * m
    E = flat[s:s + m * m].reshape(m, m)
    s += m * m
    return V, H, Mu, JT, A, G, E, flat[s:s + G_ROWS * m].reshape(G_ROWS, m)


@fast
def frame_motion(model, spec, W, a0):
    """Placement (R, p - o), velocity [p'; w] and classical acceleration at qdd = 0 [p''; w'] of
    the frame of a spec row, in world axes, after `accelerations` at qdd = 0 (whose accelerations
    include a0, the base's upward g, taken off here); a frame fixed in the world is still."""
    R, p = frame_about_origin(spec, W)
    b = int(spec[F_BODY])
    if b < 0:
        z = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
        return R, p, z, z
    v, a = get6(W, b, W_V), get6(W, b, W_A)
    w, wd = (v[3], v[4], v[5]), (a[3], a[4], a[5])
    wp, wdp = cross3(w, p), cross3(wd, p)
    pd = (v[0] + wp[0], v[1] + wp[1], v[2] + wp[2])
    wpd = cross3(w, pd)
    pdd = (a[0] - a0[0] + wdp[0] + wpd[0], a[1] - a0[1] + wdp[1] + wpd[1], a[2] - a0[2] + wdp[2] + wpd[2])
    return R, p, pd + w, pdd + wd


@fast
def add_jacobian(model, spec, p, sign, r0, n, JT, W, tree):
    """JT[t, r0:r0 + n] += sign (G^T of) the frame's Jacobian columns at its origin p (about o):
    each coordinate on the chain to its body moves it at S_lin + S_ang x p, turns it at S_ang.
    Rows: the factor's order (tree: tree order, else the user's)."""
    b = int(spec[F_BODY])
    for i in range(b + 1):
        if not on_chain(model, i, b):
            continue
        s = sign * model[i, VSCALE]
        for d in range(ndofs(model, i)):
            S = get6(W, i, W_S + 6 * d)
            t = int(W[i, W_T0]) + d if tree else user_v(model, i, d)
            wp = cross3((S[3], S[4], S[5]), p)
            JT[t, r0], JT[t, r0 + 1], JT[t, r0 + 2] = (JT[t, r0] + s * (S[0] + wp[0]), JT[t, r0 + 1] + s * (S[1] + wp[1]),
                                                       JT[t, r0 + 2] + s * (S[2] + wp[2]))
            if n == 6:
                JT[t, r0 + 3] += s * S[3]
                JT[t, r0 + 4] += s * S[4]
                JT[t, r0 + 5] += s * S[5]


@fast
def rotation_log(R):
    """The rotation vector (axis times angle) of a rotation matrix (Lynch and Park, Modern
    Robotics, ch. 3: the matrix logarithm of SO(3)), from its skew part, and near a half turn from
    its symmetric part."""
    w = (0.5 * (R[7] - R[5]), 0.5 * (R[2] - R[6]), 0.5 * (R[3] - R[1]))
    s, c = np.sqrt(w[0] * w[0] + w[1] * w[1] + w[2] * w[2]), 0.5 * (R[0] + R[4] + R[8] - 1.0)
    th = np.arctan2(s, c)
    if s > 1e-6 or c > 0.0:
        k = th / s if s > 0.0 else 1.0
        return (k * w[0], k * w[1], k * w[2])
    # near a half turn: the axis from the largest column of (R + 1) / 2 = u u^T
    best, col = -1.0, 0
    for j in range(3):
        x = (R[j] + (1.0 if j == 0 else 0.0), R[3 + j] + (1.0 if j == 1 else 0.0), R[6 + j] + (1.0 if j == 2 else 0.0))
        nx = x[0] * x[0] + x[1] * x[1] + x[2] * x[2]
        if nx > best:
            best, col = nx, j
    x = (R[col] + (1.0 if col == 0 else 0.0), R[3 + col] + (1.0 if col == 1 else 0.0), R[6 + col] + (1.0 if col == 2 else 0.0))
    k = th / np.sqrt(best)
    return (k * x[0], k * x[1], k * x[2])


@fast
def constraint_terms(model, C, kp, kd, JT, gamma, vel, W, a0, tree):
    """J^T (rows in the factor's order), gamma = Jdot v + kd J v + kp e and J v (vel[r, 0]) of every
    constraint, after `accelerations` at qdd = 0. Returns the row count."""
    JT[:, :] = 0.0
    r0 = 0
    for k in range(C.shape[0]):
        n = int(C[k, C_SIZE])
        sa, sb = C[k, C_A:C_A + FRAME_COLS], C[k, C_B:C_B + FRAME_COLS]
        Ra, pa, va, aa = frame_motion(model, sa, W, a0)
        Rb, pb, vb, ab = frame_motion(model, sb, W, a0)
        add_jacobian(model, sa, pa, 1.0, r0, n, JT, W, tree)
        if sb[F_BODY] >= 0:
            add_jacobian(model, sb, pb, -1.0, r0, n, JT, W, tree)
        e = (pa[0] - pb[0], pa[1] - pb[1], pa[2] - pb[2]) + (rotation_log(matmul3(Ra, transpose3(Rb))) if n == 6
                                                              else (0.0, 0.0, 0.0))
        position = C[k, C_POSITION] != 0.0
        for r in range(n):
            vel[r0 + r, 0] = va[r] - vb[r]
            gamma[r0 + r] = aa[r] - ab[r] + kd * vel[r0 + r, 0] + (kp * e[r] if position else 0.0)
        r0 += n
    return r0


@fast
def prepare(model, q, v, W):
    """Kinematics in world axes about o, velocities and accelerations at qdd = 0, composite inertias
    and forces, P = Ic S: what M, b, J and Jdot v are made of. Returns (status, a0)."""
    a0 = root_acceleration(model)
    status = kinematics(model, q, W)
    if status != OK:
        return status, a0
    zero = W[vector_row(model), :int(model[-1, NV])]
    zero[:] = 0.0
    velocities(model, v, W, False)
    accelerations(model, v, zero, a0, W)
    composites(model, W, True, False)
    coordinate_terms(model, a0, W, True, False)
    return OK, a0


@fast
def constrained_dynamics(model, q, v, tau, C, gains, qdd, forces, W):
    """qdd and the constraint forces (stacked in C's order, world axes at each frame a's origin,
    acting on the robot) of one state: see the module docstring. gains = (kp, kd). Returns
    SINGULAR (with the body) where M is not positive definite, INCONSISTENT (with the constraint)
    where the constraints cannot all hold. With K = D^-1/2 L^-T J^T and k = D^-1/2 L^-T (tau - b):
    A = K^T K, rhs = -gamma - K^T k and qdd = L^-1 D^-1/2 (k + K f)."""
    if not (usable(q) and usable(v) and usable(tau)):
        return NONFINITE
    status, a0 = prepare(model, q, v, W)
    if status != OK:
        return status
    nv, m = int(model[-1, NV]), forces.shape[0]
    V, H, Mu, K, A, G, E, vec = blocks(model, m, W)
    mass_pairs(model, H, W, False, not model[-1, MIMIC])    # M in world axes, in the factor's order
    b = W[vector_row(model), :nv]
    bias(model, b, W)
    factor_order(model, H, W, V)
    lam, end, user, diag, x = V[L_LAM], V[L_END], V[L_USER], V[L_DIAG], V[L_X]
    bad = factor(H, lam, diag, nv)
    if bad >= 0:
        return fail(SINGULAR, body_of_coordinate(model, int(user[bad])))
    gamma, rhs, f, perm = vec[G_GAMMA], vec[G_RHS], vec[G_F], vec[G_PERM]
    constraint_terms(model, C, gains[0], gains[1], K, gamma, G[:, :1], W, a0, not model[-1, MIMIC])
    for t in range(nv):
        x[t] = tau[int(user[t])] - b[int(user[t])]
    for i in range(nv - 1, -1, -1):     # L^-T of (tau - b) and of J^T together
        j = int(lam[i])
        while j >= 0:
            h = H[i, j]
            x[j] -= h * x[i]
            for r in range(m):
                K[j, r] -= h * K[i, r]
            j = int(lam[j])
    for t in range(nv):                 # D^-1/2 of both
        s = 1.0 / np.sqrt(H[t, t])
        x[t] *= s
        for r in range(m):
            K[t, r] *= s
    scale = 0.0
    for r in range(m):                  # A = K^T K, rhs = -gamma - K^T k
        y = -gamma[r]
        for t in range(nv):
            y -= K[t, r] * x[t]
        rhs[r] = y
        scale = max(scale, abs(y))
        for c in range(r + 1):
            y = 0.0
            for t in range(nv):
                y += K[t, r] * K[t, c]
            A[r, c] = A[c, r] = G[r, c] = G[c, r] = y
    least_norm_solve(G, rhs, f, perm, E, m)
    worst, at, fmax = 0.0, 0, 0.0       # the residual A f - rhs
    for r in range(m):
        fmax = max(fmax, abs(f[r]))
    for r in range(m):
        y = -rhs[r]
        for c in range(m):
            y += A[r, c] * f[c]
            scale = max(scale, abs(A[r, c]) * fmax)
        if abs(y) > worst:
            worst, at = abs(y), r
    if worst > RESIDUAL_TOL * scale:
        return INCONSISTENT + STATUS_BODY * (constraint_of_row(C, at) + 1)
    for t in range(nv):                 # qdd = L^-1 D^-1/2 (k + K f)
        y = x[t]
        for r in range(m):
            y += K[t, r] * f[r]
        x[t] = y / np.sqrt(H[t, t])
    for j in range(nv):                 # L^-1: each coordinate pushed into its descendants
        xj = x[j]
        for i in range(j + 1, int(end[j])):
            x[i] -= H[i, j] * xj
    for t in range(nv):
        qdd[int(user[t])] = x[t]
    for r in range(m):
        forces[r] = f[r]
    if not (finite(qdd) and finite(forces)):
        return OVERFLOW
    return OK


@fast
def constraint_of_row(C, row):
    """The constraint whose rows include `row`."""
    r0 = 0
    for k in range(C.shape[0]):
        r0 += int(C[k, C_SIZE])
        if row < r0:
            return k
    return C.shape[0] - 1


@fast
def jacobian_terms(model, q, v, C, J, drift, W):
    """J (m x nv, the user's columns) and Jdot v of the constraints of one state (see
    `constraint_terms`, without Baumgarte's terms)."""
    if not (usable(q) and usable(v)):
        return NONFINITE
    status, a0 = prepare(model, q, v, W)
    if status != OK:
        return status
    m = J.shape[0]
    V, H, Mu, JT, A, G, E, vec = blocks(model, m, W)
    constraint_terms(model, C, 0.0, 0.0, JT, drift, G[:, :1], W, a0, False)
    for r in range(m):
        for k in range(J.shape[1]):
            J[r, k] = JT[k, r]
    return OK


@fast
def contact_inverse(model, q, v, a, C, ext, tau, forces, W):
    """Joint torques (zero on floating joints) and contact forces (C's order, world axes at the
    frames' origins, acting on the robot) that produce acceleration a: see the module docstring.
    Returns INCONSISTENT (k = -1) if the contacts cannot produce the floating joints' forces."""
    if not (usable(q) and usable(v) and usable(a)):
        return NONFINITE
    status = newton_euler(model, q, v, a, ext, tau, W, False)
    if status != OK:
        return status
    status = kinematics(model, q, W)
    if status != OK:
        return status
    nb, nv, m = model.shape[0] - 1, int(model[-1, NV]), forces.shape[0]
    V, H, Mu, JT, A, G, E, vec = blocks(model, m, W)
    JT[:, :] = 0.0
    r0 = 0
    for k in range(C.shape[0]):         # J^T, rows in the user's order
        n = int(C[k, C_SIZE])
        sa = C[k, C_A:C_A + FRAME_COLS]
        R, p = frame_about_origin(sa, W)
        add_jacobian(model, sa, p, 1.0, r0, n, JT, W, False)
        r0 += n
    unactuated, tu, y, perm = V[L_X], V[L_LAM], V[L_END], V[L_USER]
    nu = 0                              # the floating joints' coordinates
    for i in range(nb):
        if model[i, JTYPE] == FREE:
            for d in range(6):
                unactuated[nu] = user_v(model, i, d)
                nu += 1
    forces[:] = 0.0
    if nu:
        B, scratch = Mu[:nu, :nu], H[:nu, :nu]
        scale = 0.0
        for i in range(nu):             # B = J_u^T J_u, tu = tau_u
            ui = int(unactuated[i])
            tu[i] = tau[ui]
            scale = max(scale, abs(tau[ui]))
            for j in range(i + 1):
                s, uj = 0.0, int(unactuated[j])
                for r in range(m):
                    s += JT[ui, r] * JT[uj, r]
                B[i, j] = B[j, i] = s
        least_norm_solve(B, tu, y, perm, scratch, nu)
        for r in range(m):              # f = J_u y
            s = 0.0
            for i in range(nu):
                s += JT[int(unactuated[i]), r] * y[i]
            forces[r] = s
        worst = 0.0                     # J_u^T f = tau_u?
        for i in range(nu):
            ui = int(unactuated[i])
            s = 0.0
            for r in range(m):
                s += JT[ui, r] * forces[r]
                scale = max(scale, abs(JT[ui, r] * forces[r]))
            worst = max(worst, abs(s - tau[ui]))
        if worst > RESIDUAL_TOL * scale:
            return INCONSISTENT
    for k in range(nv):                 # tau - J^T f
        s = 0.0
        for r in range(m):
            s += JT[k, r] * forces[r]
        tau[k] -= s
    for i in range(nu):
        tau[int(unactuated[i])] = 0.0
    if not (finite(tau) and finite(forces)):
        return OVERFLOW
    return OK


@fast
def constrained_dynamics_rows(model, Q, V, TAU, C, gains, QDD, F, status, lo, hi, W):
    """`constrained_dynamics` over states lo..hi of the batch, on one thread, with one workspace."""
    for s in range(lo, hi):
        status[s] = constrained_dynamics(model, Q[s], V[s], TAU[s], C, gains, QDD[s], F[s], W)


@parallel
def constrained_dynamics_batch(model, Q, V, TAU, C, gains, QDD, F, nthreads):
    """`constrained_dynamics` over a batch on nthreads threads (a workspace each)."""
    status = np.zeros(len(Q), np.int64)
    for t in prange(nthreads):
        lo, hi = chunk(t, len(Q), nthreads)
        constrained_dynamics_rows(model, Q, V, TAU, C, gains, QDD, F, status, lo, hi,
                                  constrained_workspace(model, F.shape[1]))
    return status


@fast
def contact_inverse_rows(model, Q, V, A, C, ext, TAU, F, status, lo, hi, W):
    """`contact_inverse` over states lo..hi of the batch, on one thread, with one workspace."""
    for s in range(lo, hi):
        status[s] = contact_inverse(model, Q[s], V[s], A[s], C, ext, TAU[s], F[s], W)


@parallel
def contact_inverse_batch(model, Q, V, A, C, ext, TAU, F, nthreads):
    """`contact_inverse` over a batch on nthreads threads (a workspace each)."""
    status = np.zeros(len(Q), np.int64)
    for t in prange(nthreads):
        lo, hi = chunk(t, len(Q), nthreads)
        contact_inverse_rows(model, Q, V, A, C, ext, TAU, F, status, lo, hi, constrained_workspace(model, F.shape[1]))
    return status


@fast
def jacobian_terms_rows(model, Q, V, C, J, D, status, lo, hi, W):
    """`jacobian_terms` over states lo..hi of the batch, on one thread, with one workspace."""
    for s in range(lo, hi):
        status[s] = jacobian_terms(model, Q[s], V[s], C, J[s], D[s], W)

