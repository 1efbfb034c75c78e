"""Inverse kinematics of one frame: Newton-Raphson on the SE(3) log error (Lynch and Park, Modern
Robotics, section 6.2) with damped least squares (Wampler, IEEE SMC 1986; Nakamura and Hanafusa,
J. Dyn. Sys. 1986), the damping adapted as in Levenberg-Marquardt, and joint limits held as an
active set.

Residual e(q), target T_d, the frame at T(q):
- pose: e = log6(T(q)^-1 T_d), the body twist that carries the frame onto the target in unit
  time ([linear; angular] in the frame's axes). A joint step dq moves the frame by J_b dq (J_b
  the LOCAL Jacobian), so e(q (+) dq) = e - Jr(-e)^-1 J_b dq + O(dq^2) (Jr the right Jacobian of
  exp6: T^-1 T_d becomes exp(-J_b dq) T^-1 T_d): the exact Newton matrix is A = Jr(-e)^-1 J_b;
- position: e = p_d - p(q), A = the linear rows of the LOCAL_WORLD_ALIGNED Jacobian.
Rows with weight 0 are dropped, the others scaled by their weight (W). Each iteration solves
(A A^T + lambda 1) y = W e, dq = A^T y (a Cholesky of the 6 x 6 system), steps to q (+) dq, and keeps
the step if the weighted error fell; lambda then shrinks by max(1/3, 1 - (2 rho - 1)^3), rho the
actual over the predicted decrease (Madsen, Nielsen and Tingleff, Methods for non-linear least
squares problems, 2004), down to the floor `damping`; a rejected step multiplies it by nu = 2, 4,
8, ... Past LAMBDA_MAX no step decreases the error (a local minimum, a joint limit, an unreachable
target): STALLED.
Bounds: a step that would carry a coordinate past its bound moves it onto the bound and holds it
there while the others are solved again (`bounded_step`, an active set), so the iterate never leaves
the limits and the free coordinates still move. A revolute joint whose range spans a whole turn is
not bounded while iterating: q and q +- 2 pi place the frames alike, so it is turned by whole turns
into its range (`into_range`).
"""
import numpy as np

from ..layout import FREE, JTYPE, NQ, NV, PLANAR
from .batch import Algorithm
from .common import NONFINITE, OK, usable
from .configuration import integrate
from .jacobian import WIDTH, frame_jacobian
from .jit import allocating, fast
from .lie import jlog6_times, log6

#: outcomes (besides the kernels' status codes, returned first)
CONVERGED, ITERATIONS, STALLED = 0, 1, 2
#: settings: tolerance, max iterations, damping floor, first damping, position-only task (1.0)
S_TOL, S_MAXIT, S_DAMPING, S_LAMBDA0, S_POSITION = 0, 1, 2, 3, 4
SETTINGS = 5
LAMBDA_MAX = 1e8
#: info columns per target: kernel status, outcome, iterations, error
I_STATUS, I_OUTCOME, I_ITERATIONS, I_ERROR = 0, 1, 2, 3
INFO = 4
#: rows of the scratch array (width max(nq, nv, 6)): J and A (6 each), the trial's J, m x m system
R_J, R_A, R_JT, R_G, R_VEC = 0, 6, 12, 18, 24
#: the vector rows: e, e of the trial, y, dq, q of the trial, free coordinates (1.0), held ones' steps
V_E, V_ET, V_Y, V_DQ, V_QT, V_FREE, V_FIX = 0, 1, 2, 3, 4, 5, 6
ROWS = R_VEC + 7
#: rows of the limits array (per q entry)
L_LOWER, L_UPPER, L_WRAP = 0, 1, 2


@allocating
def workspace(model):
    """One target's scratch: the solver's vectors and matrices (rows R_*, V_*), the Jacobian
    kernel's workspace, H."""
    nq, nv = int(model[-1, NQ]), int(model[-1, NV])
    return np.zeros((ROWS, max(nq, nv, 6))), np.zeros((max(model.shape[0] - 1, 1), WIDTH)), np.zeros((4, 4))


@fast
def residual(model, q, spec, target, weights, position, J, e, H, W):
    """e(q) (6 entries: the pose error, or the position error and zeros) and J at q; returns
    (status, error, weighted error): the norm of e over the rows of non-zero weight, and of w e."""
    status = frame_jacobian(model, q, spec, J, H, W)
    if status != OK:
        return status, np.inf, np.inf
    if position:
        e[0], e[1], e[2] = target[0, 3] - H[0, 3], target[1, 3] - H[1, 3], target[2, 3] - H[2, 3]
        e[3] = e[4] = e[5] = 0.0
    else:       # T^-1 T_d = (R^T R_d, R^T (p_d - p))
        d = (target[0, 3] - H[0, 3], target[1, 3] - H[1, 3], target[2, 3] - H[2, 3])
        xi = log6((rt_times(H, target, 0, 0), rt_times(H, target, 0, 1), rt_times(H, target, 0, 2),
                   rt_times(H, target, 1, 0), rt_times(H, target, 1, 1), rt_times(H, target, 1, 2),
                   rt_times(H, target, 2, 0), rt_times(H, target, 2, 1), rt_times(H, target, 2, 2)),
                  (H[0, 0] * d[0] + H[1, 0] * d[1] + H[2, 0] * d[2], H[0, 1] * d[0] + H[1, 1] * d[1] + H[2, 1] * d[2],
                   H[0, 2] * d[0] + H[1, 2] * d[1] + H[2, 2] * d[2]))
        for r in range(6):
            e[r] = xi[r]
    err = werr = 0.0
    for r in range(6):
        if weights[r] > 0.0:
            err += e[r] * e[r]
            werr += weights[r] * weights[r] * e[r] * e[r]
    return OK, np.sqrt(err), np.sqrt(werr)


@fast
def rt_times(H, T, r, c):
    """(R_H^T R_T)[r, c]."""
    return H[0, r] * T[0, c] + H[1, r] * T[1, c] + H[2, r] * T[2, c]


@fast
def newton_matrix(weights, position, J, e, A, nv):
    """A = diag(weights) (Jr(-e)^-1 J) for a pose, diag(weights) J_linear for a position, zero rows
    where the weight is 0."""
    for k in range(nv):
        if position:
            col = (J[0, k], J[1, k], J[2, k], 0.0, 0.0, 0.0)
        else:
            col = jlog6_times((-e[0], -e[1], -e[2], -e[3], -e[4], -e[5]), (J[0, k], J[1, k], J[2, k], J[3, k], J[4, k], J[5, k]))
        for r in range(6):
            A[r, k] = weights[r] * col[r]


@fast
def damped_step(A, e, weights, lam, free, fix, G, y, dq, nv):
    """dq = A_F^T (A_F A_F^T + lam 1)^-1 (W e - A_H fix) over the free coordinates F, the held
    ones H moving by fix (Cholesky of the 6 x 6 system; rows of zero weight are zero and give
    y = 0). False if the factor fails."""
    for r in range(6):
        for c in range(r + 1):
            s = 0.0
            for k in range(nv):
                if free[k]:
                    s += A[r, k] * A[c, k]
            G[r, c] = s
        G[r, r] += lam
        s = weights[r] * e[r]
        for k in range(nv):
            if not free[k]:
                s -= A[r, k] * fix[k]
        y[r] = s
    for c in range(6):      # G = L L^T in place (lower triangle)
        d = G[c, c]
        for k in range(c):
            d -= G[c, k] * G[c, k]
        if not d > 0.0:
            return False
        d = np.sqrt(d)
        G[c, c] = d
        for r in range(c + 1, 6):
            s = G[r, c]
            for k in range(c):
                s -= G[r, k] * G[c, k]
            G[r, c] = s / d
    for r in range(6):      # L z = y, L^T y = z
        s = y[r]
        for k in range(r):
            s -= G[r, k] * y[k]
        y[r] = s / G[r, r]
    for r in range(5, -1, -1):
        s = y[r]
        for k in range(r + 1, 6):
            s -= G[k, r] * y[k]
        y[r] = s / G[r, r]
    for k in range(nv):
        s = fix[k]
        if free[k]:
            s = 0.0
            for r in range(6):
                s += A[r, k] * y[r]
        dq[k] = s
    return True


@fast
def bounded_step(A, e, weights, lam, free, fix, q, limits, G, y, dq, nv, oq, ov):
    """The damped step with the joints' bounds as an active set: a free coordinate whose step
    crosses its bound is moved onto the bound (held there) and the rest solved again, until
    none crosses (at most nv passes). Coordinates that wrap (a revolute joint with a range of a
    turn or more) have no bound while iterating."""
    for _ in range(nv + 1):
        if not damped_step(A, e, weights, lam, free, fix, G, y, dq, nv):
            return False
        crossed = False
        for k in range(ov, nv):
            j = k - ov + oq
            if free[k] and limits[L_WRAP, j] == 0.0:
                x = q[j] + dq[k]
                if x > limits[L_UPPER, j] or x < limits[L_LOWER, j]:
                    free[k], crossed = 0.0, True
                    fix[k] = (limits[L_UPPER, j] if x > limits[L_UPPER, j] else limits[L_LOWER, j]) - q[j]
        if not crossed:
            return True
    return True


@fast
def into_range(q, limits, oq):
    """Bounded coordinates clamped into their range (rounding only: steps stop at the bounds),
    wrapping ones turned by whole turns into it."""
    for j in range(oq, q.shape[0]):
        lo, hi = limits[L_LOWER, j], limits[L_UPPER, j]
        if limits[L_WRAP, j] != 0.0:
            if q[j] > hi or q[j] < lo:
                q[j] = lo + np.mod(q[j] - lo, 2.0 * np.pi)
        else:
            q[j] = min(max(q[j], lo), hi)


@fast
def solve(model, q0, spec, target, weights, limits, settings, q, e, S, W, H):
    """Inverse kinematics from q0 into q (and the residual e); returns (status, outcome,
    iterations, error). limits: rows L_LOWER, L_UPPER (+-inf where unbounded) and L_WRAP (1.0:
    a revolute joint whose range spans a turn) per q entry. An iteration is one evaluation of
    the frame's placement and Jacobian."""
    nq, nv = q.shape[0], int(model[-1, NV])
    if not (usable(q0) and usable(target[0]) and usable(target[1]) and usable(target[2])):
        return NONFINITE, ITERATIONS, 0, np.inf
    # views of exactly their lengths: the scratch is max(nq, nv, 6) wide, and `usable` reads a whole q
    J, A, JT, G = S[R_J:R_J + 6, :nv], S[R_A:R_A + 6, :nv], S[R_JT:R_JT + 6, :nv], S[R_G:R_G + 6, :6]
    et, y, dq, qt = S[R_VEC + V_ET, :6], S[R_VEC + V_Y, :6], S[R_VEC + V_DQ, :nv], S[R_VEC + V_QT, :nq]
    free, fix = S[R_VEC + V_FREE, :nv], S[R_VEC + V_FIX, :nv]
    position = settings[S_POSITION] != 0.0
    tol, maxit, floor = settings[S_TOL], int(settings[S_MAXIT]), settings[S_DAMPING]
    oq, ov = single_offsets(model)
    for k in range(nq):
        q[k] = q0[k]
    into_range(q, limits, oq)
    status, err, werr = residual(model, q, spec, target, weights, position, J, e, H, W)
    if status != OK:
        return status, ITERATIONS, 1, err
    lam, nu, it = max(settings[S_LAMBDA0], floor), 2.0, 1
    while err > tol and it < maxit:
        newton_matrix(weights, position, J, e, A, nv)
        accepted = False
        while not accepted and it < maxit and lam <= LAMBDA_MAX:
            for k in range(nv):     # every coordinate free; bounded_step holds those its step pushes out
                free[k], fix[k] = 1.0, 0.0
            if bounded_step(A, e, weights, lam, free, fix, q, limits, G, y, dq, nv, oq, ov):
                integrate(model, q, dq, 1.0, qt)
                into_range(qt, limits, oq)
                gain = predicted_reduction(A, dq, weights, e, nv)
                status, err_t, werr_t = residual(model, qt, spec, target, weights, position, JT, et, H, W)
                it += 1
                rho = 0.5 * (werr - werr_t) * (werr + werr_t) / gain if gain > 0.0 else -1.0
                if status == OK and werr_t < werr and rho > 0.0:
                    for k in range(nq):
                        q[k] = qt[k]
                    for r in range(6):
                        e[r] = et[r]
                        for k in range(nv):
                            J[r, k] = JT[r, k]
                    err, werr, accepted = err_t, werr_t, True
                    lam, nu = max(lam * max(1.0 / 3.0, 1.0 - (2.0 * rho - 1.0) ** 3), floor), 2.0
                    continue
            lam, nu = lam * nu, 2.0 * nu
        if not accepted:
            if lam > LAMBDA_MAX:
                return OK, STALLED, it, err
            break
    return OK, (CONVERGED if err <= tol else ITERATIONS), it, err


@fast
def predicted_reduction(A, dq, weights, e, nv):
    """|r|^2 / 2 - |r - A dq|^2 / 2 with r = W e: the decrease of the weighted error's square
    that the linear model promises for the step (Madsen, Nielsen and Tingleff, 2004)."""
    s = 0.0
    for r in range(6):
        a = 0.0
        for k in range(nv):
            a += A[r, k] * dq[k]
        s += weights[r] * e[r] * a - 0.5 * a * a
    return s


@fast
def first_bad_transform(T, tol):
    """Index of the first T[n] that is not a rigid transform (NaN or inf, a rotation block off
    orthonormal by more than tol or with determinant -1, last row not [0 0 0 1]), or -1."""
    for n in range(T.shape[0]):
        ok = T[n, 3, 0] == 0.0 and T[n, 3, 1] == 0.0 and T[n, 3, 2] == 0.0 and T[n, 3, 3] == 1.0
        for r in range(3):
            for c in range(4):
                ok = ok and np.isfinite(T[n, r, c])
            for c in range(3):
                d = T[n, 0, r] * T[n, 0, c] + T[n, 1, r] * T[n, 1, c] + T[n, 2, r] * T[n, 2, c]
                ok = ok and abs(d - (1.0 if r == c else 0.0)) <= tol
        det = (T[n, 0, 0] * (T[n, 1, 1] * T[n, 2, 2] - T[n, 1, 2] * T[n, 2, 1])
               - T[n, 0, 1] * (T[n, 1, 0] * T[n, 2, 2] - T[n, 1, 2] * T[n, 2, 0])
               + T[n, 0, 2] * (T[n, 1, 0] * T[n, 2, 1] - T[n, 1, 1] * T[n, 2, 0]))
        if not (ok and det > 0.0):
            return n
    return -1


@fast
def single_offsets(model):
    """Where the one-coordinate joints start in q and in v (after the floating and planar joints)."""
    oq = ov = 0
    for i in range(model.shape[0] - 1):
        if model[i, JTYPE] == FREE:
            oq, ov = oq + 7, ov + 6
        elif model[i, JTYPE] == PLANAR:
            oq, ov = oq + 3, ov + 3
    return oq, ov


@fast
def ik(model, q0, spec, target, weights, limits, settings, q, e, info, S, W, H):
    """`solve` from q0 for one target, its outcome, iterations and error into info (I_*); returns
    the kernel status (of the seed: NONFINITE, BAD_QUATERNION), also info[I_STATUS]."""
    status, outcome, it, err = solve(model, q0, spec, target, weights, limits, settings, q, e, S, W, H)
    info[I_STATUS], info[I_OUTCOME], info[I_ITERATIONS], info[I_ERROR] = status, outcome, it, err
    return status


#: for the batch drivers: the seed in, the frame spec shared, the target in, weights, limits and settings
#: shared, q, e and info out
Algorithm(ik, "isisssooo")
