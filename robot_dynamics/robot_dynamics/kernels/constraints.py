"""The constraints as the kernels take them: contacts (a frame's origin, or the whole frame, held
still, or at a target) and loop closures (two frames of the robot held together), each a row of C
(Featherstone, Rigid Body Dynamics Algorithms, ch. 8, loop constraints; Kim, Lie group formulation
of articulated rigid body dynamics, constrained dynamics).

A constraint k gives rows J_k v (n = 3: the linear rows, n = 6: linear and angular) of the frames'
velocities in world axes at their origins (local_world_aligned): for a contact J_a, for a loop
J_a - J_b. Its acceleration is J qdd + Jdot v, Jdot v the frames' classical accelerations at
qdd = 0 ([p''; w'] with p'' = a_o + w' x p + w x p'), and the acceleration-level constraint asks
J qdd = -gamma, gamma = Jdot v + kd J v + kp e (Baumgarte's stabilisation), e the position error
[p_a - p_b; log(R_a R_b^T)] where a target is known (a loop, or a contact with a target): the
error that `assembly.py` drives to zero.

Everything is in world axes about the reference point o (kinematics.py).
"""

from ..layout import NV, VSCALE
from .columns import W_S, layout
from .common import FRAME_COLS, F_BODY, OK, ndofs, root_acceleration, rows_then, user_v, views
from .jit import allocating, fast
from .kinematics import frame_about_origin, kinematics, on_chain
from .lie import log3
from .rnea import WIDTH as RNEA_WIDTH
from .rnea_derivatives import (WIDTH, W_A, W_T0, W_V, Z_END, accelerations, composites, coordinate_terms, vector_row,
                               velocities)
from .spatial import cross3, get6, matmul3, transpose3

#: a constraint row: its size (3: a point, 6: a frame), frame a and frame b as frame specs (body -1:
#: fixed in the world, at the spec's placement), and 1.0 if the position error counts (a loop, or
#: a contact with a target)
C_SIZE, C_A, C_B, C_POSITION, C_COLS = layout((("SIZE", 1), ("A", FRAME_COLS), ("B", FRAME_COLS), ("POSITION", 1)))
#: status: constraint k cannot hold (code + STATUS_BODY * (k + 1); k = -1: the contacts together)
INCONSISTENT = 5
#: constraints cannot hold when the residual of their equations exceeds this fraction of its terms
RESIDUAL_TOL = 1e-8


def constraint_count(C):
    """Rows of J for the constraint rows C."""
    return int(sum(C[:, C_SIZE])) if len(C) else 0


@fast
def frame_motion(model, spec, W, a0):
    """Placement (R, p - o), velocity [p'; w] and classical acceleration [p''; w'] of the frame of
    a spec row, in world axes, after `velocities` and `accelerations` (whose accelerations include
    a0, the base's upward g, taken off here): at qdd = 0 the acceleration is Jdot v, at qdd
    J qdd + Jdot v. A frame fixed in the world is still."""
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
def constraint_transpose(model, C, JT, W):
    """J^T of the constraints (the user's order; a loop: J_a - J_b) after `kinematics`."""
    JT[:, :] = 0.0
    r0 = 0
    for k in range(C.shape[0]):
        n = int(C[k, C_SIZE])
        sa, sb = C[k, C_A:C_A + FRAME_COLS], C[k, C_B:C_B + FRAME_COLS]
        add_jacobian(model, sa, frame_about_origin(sa, W)[1], 1.0, r0, n, JT, W, False)
        if sb[F_BODY] >= 0:
            add_jacobian(model, sb, frame_about_origin(sb, W)[1], -1.0, r0, n, JT, W, False)
        r0 += n


@fast
def jacobian_scale(JT, rows):
    """The largest diagonal entry of J J^T (rows) or of J^T J: the size that the rank of a product
    of J's rows or columns is judged against (psd.factor_psd's ref)."""
    big = 0.0
    if rows:
        for r in range(JT.shape[1]):
            x = 0.0
            for t in range(JT.shape[0]):
                x += JT[t, r] * JT[t, r]
            big = max(big, x)
    else:
        for t in range(JT.shape[0]):
            x = 0.0
            for r in range(JT.shape[1]):
                x += JT[t, r] * JT[t, r]
            big = max(big, x)
    return big


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
        e = (pa[0] - pb[0], pa[1] - pb[1], pa[2] - pb[2]) + (log3(matmul3(Ra, transpose3(Rb))) if n == 6
                                                              else (0.0, 0.0, 0.0))
        position = C[k, C_POSITION] != 0.0
        for r in range(n):
            vel[r0 + r, 0] = va[r] - vb[r]
            gamma[r0 + r] = aa[r] - ab[r] + kd * vel[r0 + r, 0] + (kp * e[r] if position else 0.0)
        r0 += n
    return r0


@allocating
def prepared_workspace(model, shapes):
    """Scratch for `prepare` (a row per body, a row per full coordinate, a vector row), then blocks
    of `shapes` (common.views: `prepared_blocks`)."""
    return rows_then(vector_row(model) + 1, max(WIDTH, RNEA_WIDTH, int(model[-1, NV]), Z_END), shapes)


@fast
def prepared_blocks(model, W, shapes):
    """The blocks of `shapes` after `prepare`'s rows of W (`prepared_workspace`)."""
    return views(W.reshape(-1), (vector_row(model) + 1) * W.shape[1], shapes)


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
def constraint_of_row(C, row):
    """The constraint whose rows include `row`."""
    r0 = 0
    for k in range(C.shape[0]):
        r0 += int(C[k, C_SIZE])
        if row < r0:
            return k
    return C.shape[0] - 1


@fast
def position_error(C, k, W):
    """The position error e of constraint k after `kinematics`: [p_a - p_b] (a point) or
    [p_a - p_b; log(R_a R_b^T)] (a frame), world axes."""
    sa, sb = C[k, C_A:C_A + FRAME_COLS], C[k, C_B:C_B + FRAME_COLS]
    Ra, pa = frame_about_origin(sa, W)
    Rb, pb = frame_about_origin(sb, W)
    e = (pa[0] - pb[0], pa[1] - pb[1], pa[2] - pb[2])
    if C[k, C_SIZE] == 6:
        return e + log3(matmul3(Ra, transpose3(Rb)))
    return e + (0.0, 0.0, 0.0)
