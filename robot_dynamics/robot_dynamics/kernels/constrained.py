"""Constrained forward dynamics: the accelerations and constraint forces of a robot under contacts
and loop closures (constraints.py), at the acceleration level (Kim, Lie group formulation of
articulated rigid body dynamics, constrained forward dynamics, eqs. 67-69; Featherstone, Rigid
Body Dynamics Algorithms, ch. 8, closed loops).

With forces f acting on the robot (J^T f in joint space), M qdd + b = tau + J^T f and
J qdd = -gamma. The Schur complement solves it: M = L^T D L (ltdl.py), Y = L^-T J^T, the Delassus
matrix A = J M^-1 J^T = Y^T D^-1 Y, f the least-norm solution of A f = -gamma - J M^-1 (tau - b)
(psd.py: redundant constraints do not make it singular), and qdd = M^-1 (tau - b + J^T f).
Constraints that cannot all hold leave a residual in A f = rhs: that is an error naming the
constraint, never a force. `jacobian_terms` gives J and Jdot v alone.

Everything is in world axes about the reference point o (kinematics.py).
"""
import numpy as np

from ..layout import MIMIC, NQ, NV
from .batch import Algorithm
from .aba_derivatives import L_DIAG, L_END, L_LAM, L_ROWS, L_USER, L_X, factor_order
from .columns import layout
from .common import NONFINITE, OK, OVERFLOW, SINGULAR, STATUS_BODY, fail, finite, sized, usable
from .constraints import (INCONSISTENT, RESIDUAL_TOL, constraint_of_row, constraint_terms, prepare, prepared_blocks,
                          prepared_workspace)
from .hybrid import body_of_coordinate
from .jit import allocating, fast
from .ltdl import factor
from .psd import least_norm_solve
from .rnea_derivatives import bias, mass_pairs, vector_row

#: the vectors of the solve, a row each of size m: gamma, rhs, f, the pivots and a scratch
G_GAMMA, G_RHS, G_F, G_PERM, G_TMP, G_ROWS = layout((("GAMMA", 1), ("RHS", 1), ("F", 1), ("PERM", 1), ("TMP", 1)))


@fast
def block_shapes(model, m):
    """The blocks after the rows: the factor's vectors (L_ROWS x nv), H (nv x nv), J^T in the
    factor's order (nv x m), the Delassus matrix A and two m x m scratch blocks, and the solve's
    vectors (G_ROWS x m)."""
    nv = int(model[-1, NV])
    return (L_ROWS, nv), (nv, nv), (nv, m), (m, m), (m, m), (m, m), (G_ROWS, m)


@allocating
def workspace(model, m):
    """Scratch for one state with m constraint rows: `prepare`'s rows, then blocks of `block_shapes`."""
    return prepared_workspace(model, block_shapes(model, m))


@fast
def constrained_dynamics(model, q, v, tau, C, gains, qdd, forces, W):
    """qdd and the constraint forces (stacked in C's order, world axes at each frame a's origin,
    acting on the robot) of one state: see the module docstring. gains = (kp, kd). Returns
    SINGULAR (with the body) where M is not positive definite, INCONSISTENT (with the constraint)
    where the constraints cannot all hold. With K = D^-1/2 L^-T J^T and k = D^-1/2 L^-T (tau - b):
    A = K^T K, rhs = -gamma - K^T k and qdd = L^-1 D^-1/2 (k + K f)."""
    if not (sized(model, q, NQ) and sized(model, v, NV) and sized(model, tau, NV) and usable(q) and usable(v)
            and usable(tau)):
        return NONFINITE
    status, a0 = prepare(model, q, v, W)
    if status != OK:
        return status
    nv, m = int(model[-1, NV]), forces.shape[0]
    V, H, K, A, G, E, vec = prepared_blocks(model, W, block_shapes(model, m))
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
    least_norm_solve(G, rhs, f, perm, E, vec[G_TMP], m, 0.0)
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
def jacobian_terms(model, q, v, C, J, drift, W):
    """J (m x nv, the user's columns) and Jdot v of the constraints of one state (see
    `constraint_terms`, without Baumgarte's terms)."""
    if not (usable(q) and usable(v)):
        return NONFINITE
    status, a0 = prepare(model, q, v, W)
    if status != OK:
        return status
    m = J.shape[0]
    V, H, JT, A, G, E, vec = prepared_blocks(model, W, block_shapes(model, m))
    constraint_terms(model, C, 0.0, 0.0, JT, drift, G[:, :1], W, a0, False)
    for r in range(m):
        for k in range(J.shape[1]):
            J[r, k] = JT[k, r]
    return OK


#: for the batch drivers: q, v, tau in, the constraint rows and gains shared, qdd and the forces out; q, v
#: in, the rows shared, J and Jdot v out
Algorithm(constrained_dynamics, "iiissoo")
Algorithm(jacobian_terms, "iisoo")
