"""Constrained hybrid dynamics: given accelerations on some coordinates (u) and given torques on
the others (v), under contacts and loop closures (constraints.py), the unknown torques, the unknown
accelerations and the constraint forces (Kim, Lie group formulation of articulated rigid body
dynamics, section 3.3, eqs. 70-80; Featherstone, Rigid Body Dynamics Algorithms, ch. 8).

    M [qdd_u; qdd_v] + b = [tau_u; tau_v] + J^T f        (70)
    J qdd = -gamma, gamma = Jdot v (+ Baumgarte's terms)  (71)

qdd_v = M_vv^-1 (tau_v - b_v - M_vu qdd_u + J_v^T f) (72) in (71) gives (73):

    (J_v M_vv^-1 J_v^T) f = -(J_u qdd_u + J_v qdd_rv + gamma),  qdd_rv = M_vv^-1 (tau_v - b_v - M_vu qdd_u)

solved through M_vv = L L^T (dense Cholesky), K = L^-1 J_v^T and k = L^-1 (tau_v - b_v - M_vu qdd_u):
K^T K f = -(J_u qdd_u + gamma) - K^T k, f its least-norm solution (psd.py), qdd_v = L^-T (k + K f)
(77, 80) and tau_u = M_u qdd + b_u - J_u^T f (79). Unique where J_v has full row rank (the
torque-given coordinates can meet the constraints: Kim's m <= n_v); otherwise the least-norm forces,
which exist only where the given accelerations leave the constraints satisfiable (Kim, section 3.3):
a residual above RESIDUAL_TOL of the terms is an error naming the constraint. With nothing known
this is constrained forward dynamics (constrained.py, there with the tree-sparse factor).

M, b, J and gamma come from one world-axes pass (`constraints.prepare`), in the user's coordinates.
"""

from ..layout import NQ, NV
from .cholesky import cholesky
from .batch import Algorithm
from .columns import layout
from .common import (NONFINITE, OK, OVERFLOW, SINGULAR, SINGULAR_TOL, STATUS_BODY, fail, finite, sized, usable,
                     usable_given)
from .constraints import (INCONSISTENT, RESIDUAL_TOL, constraint_of_row, constraint_terms, prepare, prepared_blocks,
                          prepared_workspace)
from .hybrid import body_of_coordinate
from .jit import allocating, fast
from .psd import least_norm_solve
from .rnea_derivatives import bias, mass_pairs

#: vectors of nv: the known coordinates then the others, b, k (then qdd_v's right-hand side);
#: vectors of m: gamma, the right-hand side, f, the pivots, a scratch, the row scales
V_ORDER, V_B, V_K, V_ROWS = layout((("ORDER", 1), ("B", 1), ("K", 1)))
M_GAMMA, M_RHS, M_F, M_PERM, M_TMP, M_SCALE, M_ROWS = layout(
    (("GAMMA", 1), ("RHS", 1), ("F", 1), ("PERM", 1), ("TMP", 1), ("SCALE", 1)))


@fast
def block_shapes(model, m):
    """The blocks after the rows: M (nv x nv), room for L (nv * nv), J^T (nv x m), room for K
    (nv * m), the Delassus matrix and two m x m scratch blocks, the vectors (V_ROWS x nv, M_ROWS x m)."""
    nv = int(model[-1, NV])
    return (nv, nv), (nv * nv,), (nv, m), (nv * m,), (m, m), (m, m), (m, m), (V_ROWS, nv), (M_ROWS, m)


@allocating
def workspace(model, m):
    """Scratch for one state with m constraint rows: `prepare`'s rows, then blocks of `block_shapes`."""
    return prepared_workspace(model, block_shapes(model, m))


@fast
def constrained_hybrid(model, q, v, known, qdd, tau, C, gains, forces, W):
    """Constrained hybrid dynamics of one state: coordinates with known[k] keep qdd[k] and get
    tau[k], the others keep tau[k] and get qdd[k]; the forces in C's order (world axes at each
    frame a's origin, acting on the robot). gains = (kp, kd). Returns SINGULAR (with the body)
    where M_vv is not positive definite, INCONSISTENT (with the constraint) where the constraints
    cannot hold with the given accelerations."""
    if not (sized(model, q, NQ) and sized(model, v, NV) and sized(model, known, NV) and sized(model, qdd, NV)
            and sized(model, tau, NV) and usable(q) and usable(v) and usable_given(known, qdd, tau)):
        return NONFINITE
    status, a0 = prepare(model, q, v, W)
    if status != OK:
        return status
    nv, m = int(model[-1, NV]), forces.shape[0]
    M, L, JT, K, A, G, E, vn, vm = prepared_blocks(model, W, block_shapes(model, m))
    mass_pairs(model, M, W, False, False)           # M and b in the user's order
    order, b, k = vn[V_ORDER], vn[V_B], vn[V_K]
    bias(model, b, W)
    gamma, rhs, f, scale = vm[M_GAMMA], vm[M_RHS], vm[M_F], vm[M_SCALE]
    constraint_terms(model, C, gains[0], gains[1], JT, gamma, G[:, :1], W, a0, False)
    nu = 0
    for j in range(nv):                 # the known coordinates first, then the torque-given ones
        if known[j]:
            order[nu] = j
            nu += 1
    n = nu
    for j in range(nv):
        if not known[j]:
            order[n] = j
            n += 1
    n -= nu
    Lv, Kv = L[:n * n].reshape(n, n), K[:n * m].reshape(n, m)
    for i in range(n):                  # M_vv, k = tau_v - b_v - M_vu qdd_u, K = J_v^T
        ti = int(order[nu + i])
        x = tau[ti] - b[ti]
        for j in range(nu):
            x -= M[ti, int(order[j])] * qdd[int(order[j])]
        k[i] = x
        for j in range(i + 1):
            Lv[i, j] = M[ti, int(order[nu + j])]
        for r in range(m):
            Kv[i, r] = JT[ti, r]
    bad = cholesky(Lv, n, SINGULAR_TOL, False)
    if bad >= 0:
        return fail(SINGULAR, body_of_coordinate(model, int(order[nu + bad])))
    for i in range(n):                  # L^-1 of k and of J_v^T together
        x = k[i]
        for j in range(i):
            x -= Lv[i, j] * k[j]
        k[i] = x / Lv[i, i]
        for r in range(m):
            x = Kv[i, r]
            for j in range(i):
                x -= Lv[i, j] * Kv[j, r]
            Kv[i, r] = x / Lv[i, i]
    for r in range(m):                  # A = K^T K, rhs = -(J_u qdd_u + gamma) - K^T k, the terms' sizes
        x, t = -gamma[r], abs(gamma[r])
        for j in range(nu):
            y = JT[int(order[j]), r] * qdd[int(order[j])]
            x, t = x - y, t + abs(y)
        for i in range(n):
            x, t = x - Kv[i, r] * k[i], t + abs(Kv[i, r] * k[i])
        rhs[r], scale[r] = x, t
        for c in range(r + 1):
            y = 0.0
            for i in range(n):
                y += Kv[i, r] * Kv[i, c]
            A[r, c] = A[c, r] = G[r, c] = G[c, r] = y
    least_norm_solve(G, rhs, f, vm[M_PERM], E, vm[M_TMP], m, 0.0)
    worst, at, big = 0.0, 0, 0.0        # the residual A f - rhs against the terms
    for r in range(m):
        y, t = -rhs[r], scale[r]
        for c in range(m):
            y += A[r, c] * f[c]
            t += abs(A[r, c] * f[c])
        big = max(big, t)
        if abs(y) > worst:
            worst, at = abs(y), r
    if worst > RESIDUAL_TOL * big:
        return INCONSISTENT + STATUS_BODY * (constraint_of_row(C, at) + 1)
    for i in range(n):                  # qdd_v = L^-T (k + K f)
        x = k[i]
        for r in range(m):
            x += Kv[i, r] * f[r]
        k[i] = x
    for i in range(n - 1, -1, -1):
        x = k[i]
        for j in range(i + 1, n):
            x -= Lv[j, i] * k[j]
        k[i] = x / Lv[i, i]
        qdd[int(order[nu + i])] = k[i]
    for j in range(nu):                 # tau_u = M_u qdd + b_u - J_u^T f
        tj = int(order[j])
        x = b[tj]
        for c in range(nv):
            x += M[tj, c] * qdd[c]
        for r in range(m):
            x -= JT[tj, r] * f[r]
        tau[tj] = x
    for r in range(m):
        forces[r] = f[r]
    if not (finite(qdd) and finite(tau) and finite(forces)):
        return OVERFLOW
    return OK


#: for the batch drivers: q, v in, the mask of known coordinates (one for all or one per state), qdd and
#: tau given and sought, the constraint rows and gains shared, the forces out
Algorithm(constrained_hybrid, "iirbbsso")
