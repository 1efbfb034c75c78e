"""Constrained inverse dynamics: the torques of the actuated coordinates and the constraint forces
that make a robot under contacts and loop closures (constraints.py) follow a given motion
(q, v, a), its passive coordinates carrying given torques (Kim, Lie group formulation of
articulated rigid body dynamics, section 3.1, eqs. 56-66; Featherstone, Rigid Body Dynamics
Algorithms, ch. 8).

With tau_r = RNEA(q, v, a) = M a + b the unconstrained inverse dynamics, tau_r = tau + J^T f (56);
on the actuated (a) and passive (p) coordinates:

    J_p^T f = tau_pr - tau_p        (57)        tau_a = tau_ar - J_a^T f        (58, 60)

f0, the least-norm solution of (57), is f0 = J_p y with (J_p^T J_p) y = tau_pr - tau_p (psd.py):
Kim's eq. 59 with the pseudo-inverse. It is the unique force when the constraints are as many as
the passive coordinates, and the least constraint force under redundant actuation ("min_force").
"min_torque" (eqs. 62-64) adds the forces z in the null space of J_p^T that minimise |tau_a|:
with P_N = 1 - J_p (J_p^T J_p)^+ J_p^T, the projector onto that null space, and X = J_a^T P_N, z
is the least-norm solution of X^T X z = X^T t0, t0 = tau_ar - J_a^T f0 (the least-squares solution
of X z = t0: eq. 64's s* with N s* = z), so f = f0 + z is also the least force of the least
torques. With every coordinate actuated P_N = 1 and f = (J J^T)^+ J tau_r (eqs. 65-66).
Too few actuators: (57) has no solution (a residual above RESIDUAL_TOL of its terms), an error
naming the passive coordinate left worst, or, asked for least squares, f0 = (J_p^T)^+ (tau_pr -
tau_p), the least-norm solution of (J_p J_p^T) f = J_p (tau_pr - tau_p); the passive rows then do
not balance.

The motion must meet the constraints (Kim's assumption), checked where a tolerance is given and
v or a is not zero: J v = 0 and J a + Jdot v = 0, the frames' velocities and classical
accelerations at a (world-axes passes, rnea_derivatives.py), each row within tolerance x
max(1, the sum of the magnitudes of its terms).
"""

from ..layout import NQ, NV
from .batch import Algorithm
from .columns import layout
from .common import (FRAME_COLS, NONFINITE, OK, OVERFLOW, STATUS_BODY, finite, root_acceleration, rows_then, sized,
                     usable, views)
from .constraints import C_A, C_B, C_SIZE, RESIDUAL_TOL, constraint_transpose, frame_motion, jacobian_scale
from .jit import allocating, fast
from .kinematics import kinematics
from .psd import factor_psd, gram_factor, least_norm_solve, solve_factored
from .rnea import WIDTH as RNEA_WIDTH
from .rnea import newton_euler
from .rnea_derivatives import WIDTH, accelerations, velocities

#: status: constraint k is not met by v (VELOCITY) or by a (ACCELERATION), code + STATUS_BODY * (k + 1);
#: no force balances passive coordinate c (UNREACHABLE, code + STATUS_BODY * (c + 1))
VELOCITY, ACCELERATION, UNREACHABLE = 6, 7, 8
#: options: the objective (MIN_FORCE, MIN_TORQUE), least squares (1.0) and the tolerance of the
#: motion check (negative: not checked)
O_OBJECTIVE, O_LEAST_SQUARES, O_TOLERANCE, O_COLS = 0, 1, 2, 3
MIN_FORCE, MIN_TORQUE = 0.0, 1.0
#: vectors of nv: the passive coordinates then the actuated ones, tau_pr - tau_p, y, a right-hand
#: side, a solution, the pivots, a scratch and t0; vectors of m: f, z, a right-hand side, the pivots
#: and a scratch
V_ORDER, V_C, V_Y, V_B, V_W, V_PERM, V_TMP, V_T0, V_ROWS = layout(
    (("ORDER", 1), ("C", 1), ("Y", 1), ("B", 1), ("W", 1), ("PERM", 1), ("TMP", 1), ("T0", 1)))
M_F, M_Z, M_RHS, M_PERM, M_TMP, M_ROWS = layout((("F", 1), ("Z", 1), ("RHS", 1), ("PERM", 1), ("TMP", 1)))


@fast
def block_shapes(model, m):
    """The blocks after the bodies' rows: J^T (nv x m, the user's order), Y = J_a^T P_N (nv x m),
    room for J_p^T J_p and its Gram factor (nv * nv each), P_N and two m x m scratch blocks, and the
    vectors (V_ROWS x nv, M_ROWS x m)."""
    nv = int(model[-1, NV])
    return (nv, m), (nv, m), (nv * nv,), (nv * nv,), (m, m), (m, m), (m, m), (V_ROWS, nv), (M_ROWS, m)


@allocating
def workspace(model, m):
    """Scratch for one state with m constraint rows: a row per body, then the blocks of `blocks`."""
    return rows_then(max(model.shape[0] - 1, 1), max(WIDTH, RNEA_WIDTH), block_shapes(model, m))


@fast
def blocks(model, m, W):
    """C-contiguous views of W past its rows, of `block_shapes`."""
    return views(W.reshape(-1), max(model.shape[0] - 1, 1) * W.shape[1], block_shapes(model, m))


@fast
def is_zero(x):
    for k in range(x.shape[0]):
        if x[k] != 0.0:
            return False
    return True


@fast
def check_motion(model, C, v, a, JT, W, tol):
    """J v = 0 and J a + Jdot v = 0 for every constraint, each row within tol x max(1, its terms),
    after `kinematics` and J^T: the frames' velocities and classical accelerations at a. Returns
    OK, or VELOCITY / ACCELERATION with the first constraint that fails."""
    a0 = root_acceleration(model)
    velocities(model, v, W, False)
    accelerations(model, v, a, a0, W)
    r0 = 0
    for k in range(C.shape[0]):
        n = int(C[k, C_SIZE])
        R, p, va, aa = frame_motion(model, C[k, C_A:C_A + FRAME_COLS], W, a0)
        R, p, vb, ab = frame_motion(model, C[k, C_B:C_B + FRAME_COLS], W, a0)
        for r in range(n):
            jvt, ja, jat = 0.0, 0.0, 0.0
            for t in range(JT.shape[0]):
                x, y = JT[t, r0 + r] * v[t], JT[t, r0 + r] * a[t]
                jvt, ja, jat = jvt + abs(x), ja + y, jat + abs(y)
            res_v, res_a = va[r] - vb[r], aa[r] - ab[r]
            if abs(res_v) > tol * max(1.0, jvt):
                return VELOCITY + STATUS_BODY * (k + 1)
            if abs(res_a) > tol * max(1.0, jat + abs(res_a - ja)):
                return ACCELERATION + STATUS_BODY * (k + 1)
        r0 += n
    return OK


@fast
def constrained_inverse(model, q, v, a, C, passive, tp, options, ext, tau, forces, W):
    """tau (passive coordinates: tp) and the constraint forces (C's order, world axes at each frame
    a's origin, acting on the robot) that produce acceleration a: see the module docstring.
    passive[k] != 0: coordinate k is passive. Returns VELOCITY or ACCELERATION (with the
    constraint) for a motion that breaks the constraints, UNREACHABLE (with the coordinate) when
    no force balances the passive coordinates."""
    if not (sized(model, q, NQ) and sized(model, v, NV) and sized(model, a, NV) and sized(model, tp, NV)
            and usable(q) and usable(v) and usable(a) and usable(tp)):
        return NONFINITE
    status = newton_euler(model, q, v, a, ext, tau, W, False)      # tau_r
    if status != OK:
        return status
    status = kinematics(model, q, W)
    if status != OK:
        return status
    nv, m = int(model[-1, NV]), forces.shape[0]
    JT, Y, B, Bg, PN, S, E, vn, vm = blocks(model, m, W)
    constraint_transpose(model, C, JT, W)
    if options[O_TOLERANCE] >= 0.0 and not (is_zero(v) and is_zero(a)):
        status = check_motion(model, C, v, a, JT, W, options[O_TOLERANCE])
        if status != OK:
            return status
    order, c, y, perm, tmp = vn[V_ORDER], vn[V_C], vn[V_Y], vn[V_PERM], vn[V_TMP]
    npas = 0
    for k in range(nv):                 # the passive coordinates first, then the actuated ones
        if passive[k] != 0.0:
            order[npas] = k
            npas += 1
    na = npas
    for k in range(nv):
        if passive[k] == 0.0:
            order[na] = k
            na += 1
    na -= npas
    f = vm[M_F]
    f[:] = 0.0
    Bp, Bgp = B[:npas * npas].reshape(npas, npas), Bg[:npas * npas].reshape(npas, npas)
    rank = 0
    if npas:
        scale = 0.0
        for i in range(npas):           # B = J_p^T J_p, c = tau_pr - tau_p
            pi = int(order[i])
            c[i] = tau[pi] - tp[pi]
            scale = max(scale, abs(c[i]))
            for j in range(i + 1):
                s, pj = 0.0, int(order[j])
                for r in range(m):
                    s += JT[pi, r] * JT[pj, r]
                Bp[i, j] = Bp[j, i] = s
        rank = factor_psd(Bp, perm, npas, jacobian_scale(JT, False))
        if rank < npas:
            gram_factor(Bp, Bgp, rank, npas)
        solve_factored(Bp, Bgp, perm, rank, npas, c, y, tmp)
        for r in range(m):              # f0 = J_p y
            s = 0.0
            for i in range(npas):
                s += JT[int(order[i]), r] * y[i]
            f[r] = s
        worst, at = 0.0, 0              # J_p^T f0 = c?
        for i in range(npas):
            pi = int(order[i])
            s = 0.0
            for r in range(m):
                s += JT[pi, r] * f[r]
                scale = max(scale, abs(JT[pi, r] * f[r]))
            if abs(s - c[i]) > worst:
                worst, at = abs(s - c[i]), pi
        if worst > RESIDUAL_TOL * scale:
            if options[O_LEAST_SQUARES] == 0.0:
                return UNREACHABLE + STATUS_BODY * (at + 1)
            least_squares_forces(JT, order, c, npas, f, S, E, vm)
    if options[O_OBJECTIVE] == MIN_TORQUE and na and m:
        least_torques(JT, order, npas, na, tau, Bp, Bgp, perm, rank, f, Y, PN, S, E, vn, vm)
    for k in range(nv):                 # tau = tau_r - J^T f, the passive coordinates' given
        s = 0.0
        for r in range(m):
            s += JT[k, r] * f[r]
        tau[k] -= s
    for i in range(npas):
        tau[int(order[i])] = tp[int(order[i])]
    for r in range(m):
        forces[r] = f[r]
    if not (finite(tau) and finite(forces)):
        return OVERFLOW
    return OK


@fast
def least_squares_forces(JT, order, c, npas, f, S, E, vm):
    """f = (J_p^T)^+ c: the least-norm solution of (J_p J_p^T) f = J_p c (always consistent)."""
    m = f.shape[0]
    rhs = vm[M_RHS]
    for r in range(m):
        s = 0.0
        for i in range(npas):
            s += JT[int(order[i]), r] * c[i]
        rhs[r] = s
        for r2 in range(r + 1):
            s = 0.0
            for i in range(npas):
                pi = int(order[i])
                s += JT[pi, r] * JT[pi, r2]
            S[r, r2] = S[r2, r] = s
    least_norm_solve(S, rhs, f, vm[M_PERM], E, vm[M_TMP], m, jacobian_scale(JT, True))


@fast
def least_torques(JT, order, npas, na, tau, Bp, Bgp, perm, rank, f, Y, PN, S, E, vn, vm):
    """f += z, the null-space forces of J_p^T that minimise |tau_ar - J_a^T f| (Kim, eqs. 62-64):
    P_N = 1 - J_p B^+ J_p^T (B = J_p^T J_p factored in Bp, Bgp), Y = X = J_a^T P_N, t0 = tau_ar -
    J_a^T f0, z the least-norm solution of Y^T Y z = Y^T t0."""
    m = f.shape[0]
    b, w, tmp, t0 = vn[V_B], vn[V_W], vn[V_TMP], vn[V_T0]
    for r in range(m):                  # P_N, a column at a time
        for i in range(npas):
            b[i] = JT[int(order[i]), r]
        if npas:
            solve_factored(Bp, Bgp, perm, rank, npas, b, w, tmp)
        for s in range(m):
            x = 1.0 if s == r else 0.0
            for i in range(npas):
                x -= JT[int(order[i]), s] * w[i]
            PN[s, r] = x
    for j in range(na):                 # Y = J_a^T P_N, t0 = tau_ar - J_a^T f0
        t = int(order[npas + j])
        x = tau[t]
        for r in range(m):
            x -= JT[t, r] * f[r]
        t0[j] = x
        for s in range(m):
            x = 0.0
            for r in range(m):
                x += JT[t, r] * PN[r, s]
            Y[j, s] = x
    z, rhs = vm[M_Z], vm[M_RHS]
    for r in range(m):                  # Y^T Y z = Y^T t0
        x = 0.0
        for j in range(na):
            x += Y[j, r] * t0[j]
        rhs[r] = x
        for s in range(r + 1):
            x = 0.0
            for j in range(na):
                x += Y[j, r] * Y[j, s]
            S[r, s] = S[s, r] = x
    big = 0.0                           # Y^T Y judged against J_a J_a^T: what projection left at rounding level is 0
    for r in range(m):
        x = 0.0
        for j in range(na):
            x += JT[int(order[npas + j]), r] ** 2
        big = max(big, x)
    least_norm_solve(S, rhs, z, vm[M_PERM], E, vm[M_TMP], m, big)
    for r in range(m):
        f[r] += z[r]


#: for the batch drivers: q, v, a in, the constraint rows and passive coordinates shared, the passive
#: torques (one row for all or one per state), the options and the external wrenches shared, tau and
#: the forces out
Algorithm(constrained_inverse, "iiissrssoo")
