"""Derivatives of forward dynamics, d qdd / dq (tangent space) and d qdd / dv, with M^-1. The
acceleration qdd = M^-1 (tau - C v - g) is the one whose inverse dynamics returns tau, so at
that qdd M d qdd / dq = -d tau / dq and M d qdd / dv = -d tau / dv (Carpentier and Mansard 2018,
Analytical derivatives of rigid body dynamics algorithms, RSS, the derivatives of ABA; Pinocchio's
computeABADerivatives does the same). One state: M and C v + g from one pass of
rnea_derivatives.py at qdd = 0, M = L^T D L keeping its branch-induced sparsity (ltdl.py), qdd,
the inverse-dynamics partials at qdd, then -M^-1 times both and M^-1 itself by sparse row updates
on one block [d tau / dq | d tau / dv | 1].
Models with mimic joints (whose coordinates couple branches) take a dense factor of the same form.
"""
import numpy as np

from ..layout import MIMIC, NV
from .columns import layout
from .common import NONFINITE, OK, OVERFLOW, SINGULAR, chunk, fail, ndofs, parent, usable
from .hybrid import body_of_coordinate
from .jit import allocating, fast, parallel, prange
from .kinematics import kinematics
from .ltdl import factor, solve_block, solve_vector, symmetrize
from .rnea_derivatives import (W_T0, W_TEND, WIDTH, Z_USER, accelerations, base_gravity, bias, composites,
                               coordinate_terms, finite_matrix, mass_pairs, partials, vector_row,
                               velocities)

#: the factor's vectors, a row each of a block after the coordinate rows: each coordinate's parent
#: coordinate, one past its last descendant, its user index, M's diagonal, and a vector
L_LAM, L_END, L_USER, L_DIAG, L_X, L_ROWS = layout((("LAM", 1), ("END", 1), ("USER", 1), ("DIAG", 1), ("X", 1)))


@allocating
def aba_derivatives_workspace(model):
    """Scratch for one state: a row per body, a row per full coordinate and a row for a vector
    in the user's order, then room for three C-contiguous blocks (`blocks`)."""
    nb, nv, nf = model.shape[0] - 1, int(model[-1, NV]), 0
    for i in range(nb):
        nf += ndofs(model, i)
    width = max(WIDTH, nv)
    return np.empty((nb + nf + 1 + (L_ROWS * nv + 4 * nv * nv + width - 1) // width, width))


@fast
def blocks(model, W):
    """C-contiguous views of W past its rows for bodies, coordinates and the vector: the factor's
    vectors (L_ROWS x nv), H (nv x nv: M's lower triangle, then L and D) and the block
    [d tau / dq | d tau / dv | 1] (nv x 3 nv) the solves work on (a column slice of W would have
    unknown strides, and its row updates would not vectorize: measured 3x slower)."""
    nb, nv = model.shape[0] - 1, int(model[-1, NV])
    nf = 0
    for i in range(nb):
        nf += ndofs(model, i)
    flat = W.reshape(-1)
    start = (nb + nf + 1) * W.shape[1]
    V = flat[start:start + L_ROWS * nv].reshape(L_ROWS, nv)
    start += L_ROWS * nv
    H = flat[start:start + nv * nv].reshape(nv, nv)
    start += nv * nv
    return V, H, flat[start:start + 3 * nv * nv].reshape(nv, 3 * nv)


@fast
def aba_derivatives(model, q, v, tau, dq, dv, Minv, W):
    """d qdd / dq, d qdd / dv and M^-1 of one state (see the module docstring). SINGULAR (with
    the body) where M is not positive definite; OVERFLOW where a finite input gives inf."""
    if not (usable(q) and usable(v) and usable(tau)):
        return NONFINITE
    status = kinematics(model, q, W, base_frame=True)
    if status != OK:
        return status
    a0 = base_gravity(model, q)
    nv = int(model[-1, NV])
    vec = W[vector_row(model), :nv]         # qdd = 0, then b, then qdd
    vec[:] = 0.0
    velocities(model, v, W, True)
    accelerations(model, v, vec, a0, W)
    composites(model, W, True, True)
    coordinate_terms(model, a0, W, True, False)
    V, H, X = blocks(model, W)
    mass_pairs(model, H, W, True, not model[-1, MIMIC])     # M, in the factor's order
    bias(model, vec, W)
    lam, end, user, diag, x = V[L_LAM], V[L_END], V[L_USER], V[L_DIAG], V[L_X]
    factor_order(model, H, W, V)
    bad = factor(H, lam, diag, nv)
    if bad >= 0:
        return fail(SINGULAR, body_of_coordinate(model, int(user[bad])))
    for t in range(nv):
        x[t] = tau[int(user[t])] - vec[int(user[t])]
    solve_vector(H, end, nv, x)
    for t in range(nv):
        vec[int(user[t])] = x[t]            # qdd
    accelerations(model, v, vec, a0, W)     # forces at qdd (the inertias and momenta stand)
    composites(model, W, False, False)
    coordinate_terms(model, a0, W, False, True)
    # the block, a row per coordinate in the factor's order: tree order, or the user's with mimic joints
    partials(model, a0, X[:, :nv], X[:, nv:2 * nv], H, W, False, not model[-1, MIMIC])
    for t in range(nv):
        for c in range(2 * nv, 3 * nv):
            X[t, c] = 0.0
        X[t, 2 * nv + int(user[t])] = -1.0  # the solve's sign is -1 for the two others
    solve_block(H, lam, end, nv, X, -1.0)
    for t in range(nv):                     # out of the block, row by row (views: the loops vectorize)
        a, b, c, x = dq[int(user[t])], dv[int(user[t])], Minv[int(user[t])], X[t]
        for k in range(nv):
            a[k] = x[k]
        for k in range(nv):
            b[k] = x[nv + k]
        for k in range(nv):
            c[k] = x[2 * nv + k]
    symmetrize(Minv)
    if not (finite_matrix(dq) and finite_matrix(dv) and finite_matrix(Minv)):
        return OVERFLOW
    return OK


@fast
def factor_order(model, H, W, V):
    """Each coordinate's parent, descendants' end, user index and M's diagonal (rows of V) in the
    order the factor takes, where `mass_pairs(..., tree)` put M into H: tree order without mimic
    joints (the coordinate rows of rnea_derivatives: lam is the joint's previous coordinate, or the
    parent's last), else the user's order as a chain (dense)."""
    nb, nv = model.shape[0] - 1, int(model[-1, NV])
    lam, end, user, diag = V[L_LAM], V[L_END], V[L_USER], V[L_DIAG]
    if model[-1, MIMIC]:
        for t in range(nv):
            lam[t], end[t], user[t] = t - 1, nv, t
    else:
        for i in range(nb):
            t, par = int(W[i, W_T0]), parent(model, i)
            for d in range(ndofs(model, i)):
                user[t + d], end[t + d] = W[nb + t + d, Z_USER], W[i, W_TEND]
                lam[t + d] = t + d - 1 if d else (W[par, W_T0] + ndofs(model, par) - 1 if par >= 0 else -1)
    for r in range(nv):
        diag[r] = H[r, r]


@fast
def aba_derivatives_rows(model, Q, V, TAU, DQ, DV, MINV, status, lo, hi, W):
    """`aba_derivatives` over states lo..hi of the batch, on one thread, with one workspace."""
    for s in range(lo, hi):
        status[s] = aba_derivatives(model, Q[s], V[s], TAU[s], DQ[s], DV[s], MINV[s], W)


@parallel
def aba_derivatives_batch(model, Q, V, TAU, DQ, DV, MINV, nthreads):
    """`aba_derivatives` over a batch on nthreads threads (a workspace each)."""
    status = np.zeros(len(Q), np.int64)
    for t in prange(nthreads):
        lo, hi = chunk(t, len(Q), nthreads)
        aba_derivatives_rows(model, Q, V, TAU, DQ, DV, MINV, status, lo, hi, aba_derivatives_workspace(model))
    return status
