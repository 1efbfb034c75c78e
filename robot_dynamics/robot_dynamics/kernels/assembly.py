"""Loop assembly: the configuration on the loop closure nearest a guess, by Newton steps on the
loop-closure error over the free coordinates (the position-level counterpart of the
acceleration-level constraints: Featherstone, Rigid Body Dynamics Algorithms, ch. 8.2; Kim, Lie
group formulation of articulated rigid body dynamics, section 3, f(q) = 0 linearized as A qdot).

The error e(q) stacks each loop's [p_a - p_b] (a point) or [p_a - p_b; log(R_a R_b^T)] (a frame),
Baumgarte's position term (constraints.position_error). Its Jacobian along the joints' tangent
spaces is the constraint Jacobian J = J_a - J_b, exactly for the positions and up to terms of the
order of the error for the rotations (d log(R) = w_a - R w_b near R = 1), which keeps Newton's
quadratic convergence. Each step is the least-norm least-squares (Gauss-Newton) step over the free
coordinates F: d = -(J_F^T J_F)^+ J_F^T e (psd.py), shortened to move no coordinate by more than
MAX_STEP, taken whole where it lowers |e|^2 and halved (at most HALVINGS times) where it does not;
q moves along each joint's Lie group (a floating joint's position in its own axes, its quaternion
by the exponential; a planar joint's x, y turned by its angle). The loop is closed when every component of e is within CLOSE_TOL (metres, radians;
a last full step polishes it towards POLISH_TOL); it cannot close when no step lowers |e| (the
least-squares point: a loop the free joints cannot close from there) or after MAX_STEPS steps.
"""
import numpy as np

from ..layout import FREE, JTYPE, NQ, NV, PLANAR, QSRC
from .batch import Algorithm
from .columns import KINEMATICS_END, layout
from .common import NONFINITE, OK, STATUS_BODY, ndofs, rows_then, sized, usable, user_v, views
from .constraints import C_SIZE, constraint_transpose, jacobian_scale, position_error
from .jit import allocating, fast
from .kinematics import kinematics
from .psd import least_norm_solve
from .spatial import matvec3, quaternion_matrix

#: status: loop k cannot close from the guess (code + STATUS_BODY * (k + 1))
NOT_CLOSED = 9
#: closed: every component of the error within this (metres, radians); once there, one more full
#: step is taken while the error is above POLISH_TOL and the step lowers it (the result then sits
#: well inside CLOSE_TOL, not just under it)
CLOSE_TOL, POLISH_TOL = 1e-12, 1e-14
MAX_STEPS, HALVINGS = 100, 30
#: a step moves no coordinate by more than this (rad, m): far from the closure, where the
#: linearization says little, a full Gauss-Newton step near a singular configuration could throw
#: the joints whole turns away; near it the steps are far smaller and Newton's as they are
MAX_STEP = 0.5
#: vectors of nv: the free coordinates, J_F^T e, the solution over F, the step over v, the pivots, a
#: scratch; of nq: the trial q; of m: e and the trial's e
V_FREE, V_G, V_X, V_D, V_PERM, V_TMP, V_ROWS = layout(
    (("FREE", 1), ("G", 1), ("X", 1), ("D", 1), ("PERM", 1), ("TMP", 1)))


@fast
def block_shapes(model, m):
    """The blocks after the bodies' rows: J^T (nv x m), room for J_F^T J_F and its scratch (nv * nv
    each), the vectors of nv, the trial q, e and the trial's e."""
    nv = int(model[-1, NV])
    return (nv, m), (nv * nv,), (nv * nv,), (V_ROWS, nv), (int(model[-1, NQ]),), (m,), (m,)


@allocating
def workspace(model, m):
    """Scratch for one state with m constraint rows: a row per body (kinematics), then the blocks of `blocks`."""
    return rows_then(max(model.shape[0] - 1, 1), KINEMATICS_END, block_shapes(model, m))


@fast
def blocks(model, m, W):
    """C-contiguous views of W past its rows, of `block_shapes`."""
    return views(W.reshape(-1), max(model.shape[0] - 1, 1) * W.shape[1], block_shapes(model, m))


@fast
def loop_errors(C, W, e):
    """e of every loop after `kinematics`; returns |e|^2, max |e_r| and the loop with the largest."""
    r0, sq, big, at = 0, 0.0, 0.0, 0
    for k in range(C.shape[0]):
        x = position_error(C, k, W)
        for r in range(int(C[k, C_SIZE])):
            e[r0 + r] = x[r]
            sq += x[r] * x[r]
            if abs(x[r]) > big:
                big, at = abs(x[r]), k
        r0 += int(C[k, C_SIZE])
    return sq, big, at


@fast
def retract(model, q, free, d, step, out):
    """out = q moved by step x d along the free coordinates (d over v): one-coordinate joints add,
    a floating joint moves along and turns about its own axes, a planar one in its own x-y."""
    nb, nq, nv = model.shape[0] - 1, int(model[-1, NQ]), int(model[-1, NV])
    for j in range(nq):
        out[j] = q[j]
    multi = 0
    for i in range(nb):
        jt = model[i, JTYPE]
        if jt != FREE and jt != PLANAR:
            continue
        k, iq = user_v(model, i, 0), int(model[i, QSRC])
        multi += ndofs(model, i)
        if free[k] == 0.0:
            continue
        if jt == PLANAR:
            th = q[iq + 2]
            c, s, vx, vy = np.cos(th), np.sin(th), step * d[k], step * d[k + 1]
            out[iq], out[iq + 1], out[iq + 2] = q[iq] + c * vx - s * vy, q[iq + 1] + s * vx + c * vy, th + step * d[k + 2]
            continue
        x, y, z, w = q[iq + 3], q[iq + 4], q[iq + 5], q[iq + 6]
        t = matvec3(quaternion_matrix(x, y, z, w), (step * d[k], step * d[k + 1], step * d[k + 2]))
        out[iq], out[iq + 1], out[iq + 2] = q[iq] + t[0], q[iq + 1] + t[1], q[iq + 2] + t[2]
        wx, wy, wz = step * d[k + 3], step * d[k + 4], step * d[k + 5]
        th = np.sqrt(wx * wx + wy * wy + wz * wz)
        h, c = (np.sin(0.5 * th) / th, np.cos(0.5 * th)) if th > 1e-12 else (0.5, 1.0)
        a, b, cc, dd = h * wx, h * wy, h * wz, c        # q (x) exp(w / 2)
        nx, ny = w * a + dd * x + y * cc - z * b, w * b + dd * y + z * a - x * cc
        nz, nw = w * cc + dd * z + x * b - y * a, w * dd - x * a - y * b - z * cc
        norm = np.sqrt(nx * nx + ny * ny + nz * nz + nw * nw)
        out[iq + 3], out[iq + 4], out[iq + 5], out[iq + 6] = nx / norm, ny / norm, nz / norm, nw / norm
    for k in range(multi, nv):          # one-coordinate joints: q index = v index + nq - nv
        if free[k] != 0.0:
            out[k + nq - nv] = q[k + nq - nv] + step * d[k]


@fast
def assemble(model, q0, C, free, q, W):
    """q on the loop closure from the guess q0, moving only the coordinates with free[k] != 0 (a
    mask over v): see the module docstring. Returns OK, or NOT_CLOSED with the loop whose error
    is largest at the last q (q holds it)."""
    if not (sized(model, q0, NQ) and usable(q0)):
        return NONFINITE
    nv, m = int(model[-1, NV]), 0
    for k in range(C.shape[0]):
        m += int(C[k, C_SIZE])
    JT, N, Ng, vn, qt, e, et = blocks(model, m, W)
    ids, g, x_f, d, perm, tmp = vn[V_FREE], vn[V_G], vn[V_X], vn[V_D], vn[V_PERM], vn[V_TMP]
    nf = 0
    for k in range(nv):
        if free[k] != 0.0:
            ids[nf] = k
            nf += 1
    Nf, Ngf = N[:nf * nf].reshape(nf, nf), Ng[:nf * nf].reshape(nf, nf)
    for j in range(q0.shape[0]):
        q[j] = q0[j]
    status = kinematics(model, q, W)
    if status != OK:
        return status
    sq, big, at = loop_errors(C, W, e)
    for step in range(MAX_STEPS):
        if big <= POLISH_TOL:
            return OK
        constraint_transpose(model, C, JT, W)
        for i in range(nf):             # J_F^T J_F d = J_F^T e
            ti = int(ids[i])
            x = 0.0
            for r in range(m):
                x += JT[ti, r] * e[r]
            g[i] = x
            for j in range(i + 1):
                x, tj = 0.0, int(ids[j])
                for r in range(m):
                    x += JT[ti, r] * JT[tj, r]
                Nf[i, j] = Nf[j, i] = x
        least_norm_solve(Nf, g, x_f, perm, Ngf, tmp, nf, jacobian_scale(JT, False))
        big_step = 0.0
        for i in range(nf):
            big_step = max(big_step, abs(x_f[i]))
        cap = MAX_STEP / big_step if big_step > MAX_STEP else 1.0
        for k in range(nv):             # the step over v
            d[k] = 0.0
        for i in range(nf):
            d[int(ids[i])] = cap * x_f[i]
        alpha, moved = 1.0, False
        for h in range(HALVINGS if big > CLOSE_TOL else 1):
            retract(model, q, free, d, -alpha, qt)
            status = kinematics(model, qt, W)
            if status != OK:
                return status
            sq_t, big_t, at_t = loop_errors(C, W, et)
            if sq_t < sq:
                for j in range(q.shape[0]):
                    q[j] = qt[j]
                for r in range(m):
                    e[r] = et[r]
                sq, big, at, moved = sq_t, big_t, at_t, True
                break
            alpha *= 0.5
        if not moved:
            return OK if big <= CLOSE_TOL else NOT_CLOSED + STATUS_BODY * (at + 1)
    return OK if big <= CLOSE_TOL else NOT_CLOSED + STATUS_BODY * (at + 1)


#: for the batch drivers: the guess in, the loop rows and the free coordinates shared, q out
Algorithm(assemble, "isso")
