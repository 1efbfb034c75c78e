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

from ..layout import MIMIC, NQ, NV
from .batch import Algorithm
from .columns import layout
from .access import at, at1, first, first1, matrix_at, put, put1
from .blocks import finite_block
from .common import NONFINITE, OK, OVERFLOW, SINGULAR, fail, ndofs, parent, sized, usable
from .hybrid import body_of_coordinate
from .jit import allocating, fast
from .kinematics import kinematics
from .lanes import lanes_count
from .ltdl import factor, solve_block, solve_vector, symmetrize
from .rnea_derivatives import (WIDTH, W_T0, W_TEND, Z_USER, accelerations, base_gravity, bias, composites,
                               coordinate_terms, finite_matrix, mass_pairs, partials, vector_row, velocities)

#: the factor's vectors, a row each of a block after the coordinate rows: each coordinate's parent
#: coordinate, one past its last descendant, its user index, M's diagonal, and a vector
L_LAM, L_END, L_USER, L_DIAG, L_X, L_ROWS = layout((("LAM", 1), ("END", 1), ("USER", 1), ("DIAG", 1), ("X", 1)))


@fast
def workspace_shape(model):
    """Rows and columns of the scratch of one state: a row per body, a row per full coordinate
    and a row for a vector in the user's order, then room for three C-contiguous blocks (`blocks`)."""
    nb, nv, nf = model.shape[0] - 1, int(model[-1, NV]), 0
    for i in range(nb):
        nf += ndofs(model, i)
    width = max(WIDTH, nv)
    return nb + nf + 1 + (L_ROWS * nv + 4 * nv * nv + width - 1) // width, width


@allocating
def workspace(model):
    """Scratch for one state (`workspace_shape`)."""
    return np.empty(workspace_shape(model))


@fast
def blocks(model, W, l=None):
    """C-contiguous views of W past its rows for bodies, coordinates and the vector: the factor's
    vectors (L_ROWS x nv), H (nv x nv: M's lower triangle, then L and D) and the block
    [d tau / dq | d tau / dv | 1] (nv x 3 nv) the solves work on (a column slice of W would have
    unknown strides, and its row updates would not vectorize: measured 3x slower); each with its
    lanes for lanes l."""
    nb, nv = model.shape[0] - 1, int(model[-1, NV])
    nf = 0
    for i in range(nb):
        nf += ndofs(model, i)
    flat = W.reshape(-1)
    start = (nb + nf + 1) * W.shape[1] * lanes_count(l)
    V, start = matrix_at(flat, start, L_ROWS, nv, l)
    H, start = matrix_at(flat, start, nv, nv, l)
    return V, H, matrix_at(flat, start, nv, 3 * nv, l)[0]


@fast
def aba_derivatives(model, q, v, tau, dq, dv, Minv, W):
    """d qdd / dq, d qdd / dv and M^-1 of one state (see the module docstring). SINGULAR (with
    the body) where M is not positive definite; OVERFLOW where a finite input gives inf."""
    if not (sized(model, q, NQ) and sized(model, v, NV) and sized(model, tau, NV) and usable(q) and usable(v)
            and usable(tau)):
        return NONFINITE
    status = kinematics(model, q, W, base_frame=True)
    if status != OK:
        return status
    status = derivative_passes(model, q, v, tau, dq, dv, Minv, W)
    if status == OK and not (finite_matrix(dq) and finite_matrix(dv) and finite_matrix(Minv)):
        return OVERFLOW
    return status


@fast
def aba_derivatives_lanes(model, Q, V, TAU, DQ, DV, MINV, W, lanes):
    """`aba_derivatives` of L states in lanes (the batch drivers' lane step, batch.py)."""
    if kinematics(model, Q, W, -1, True, lanes) != OK:
        return False
    if derivative_passes(model, Q, V, TAU, DQ, DV, MINV, W, lanes) != OK:
        return False
    return finite_block(DQ) and finite_block(DV) and finite_block(MINV)


@fast
def derivative_passes(model, q, v, tau, dq, dv, Minv, W, l=None):
    """After `kinematics` in the base frame: M and b = C v + g at qdd = 0, M = L^T D L, qdd, the
    inverse-dynamics partials at qdd and the solve on the block, for one state or L states in lanes
    l (see lanes.py). SINGULAR (with the body) where M is not positive definite in some lane."""
    a0 = base_gravity(model, q, l)
    nv = int(model[-1, NV])
    vec = W[vector_row(model), :nv]         # qdd = 0, then b, then qdd
    vec[:] = 0.0
    velocities(model, v, W, True, l)
    accelerations(model, v, vec, a0, W, l)
    composites(model, W, True, True, l)
    coordinate_terms(model, a0, W, True, False, l)
    V, H, X = blocks(model, W, l)
    mass_pairs(model, H, W, True, not model[-1, MIMIC], l)     # M, in the factor's order
    bias(model, vec, W, l)
    lam, end, user, diag, x = V[L_LAM], V[L_END], V[L_USER], V[L_DIAG], V[L_X]
    factor_order(model, H, W, V, l)
    bad = factor(H, lam, diag, nv, l)
    if bad >= 0:
        return fail(SINGULAR, body_of_coordinate(model, int(first1(user, bad, l))))
    for t in range(nv):
        u = int(first1(user, t, l))
        put1(x, t, l, at1(tau, u, l) - at1(vec, u, l))
    solve_vector(H, end, nv, x, l)
    for t in range(nv):
        put1(vec, int(first1(user, t, l)), l, at1(x, t, l))    # qdd
    accelerations(model, v, vec, a0, W, l)  # forces at qdd (the inertias and momenta stand)
    composites(model, W, False, False, l)
    coordinate_terms(model, a0, W, False, True, l)
    # the block, a row per coordinate in the factor's order: tree order, or the user's with mimic joints
    partials(model, a0, X[:, :nv], X[:, nv:2 * nv], H, W, False, not model[-1, MIMIC], l)
    for t in range(nv):
        for c in range(2 * nv, 3 * nv):
            put(X, t, c, l, 0.0)
        put(X, t, 2 * nv + int(first1(user, t, l)), l, -1.0)   # the solve's sign is -1 for the two others
    solve_block(H, lam, end, nv, X, -1.0, l)
    for t in range(nv):                     # out of the block, row by row
        u = int(first1(user, t, l))
        for k in range(nv):
            put(dq, u, k, l, at(X, t, k, l))
        for k in range(nv):
            put(dv, u, k, l, at(X, t, nv + k, l))
        for k in range(nv):
            put(Minv, u, k, l, at(X, t, 2 * nv + k, l))
    symmetrize(Minv, l)
    return OK


@fast
def factor_order(model, H, W, V, l=None):
    """Each coordinate's parent, descendants' end, user index and M's diagonal (rows of V) in the
    order the factor takes, where `mass_pairs(..., tree)` put M into H: tree order without mimic
    joints (the coordinate rows of rnea_derivatives: lam is the joint's previous coordinate, or the
    parent's last), else the user's order as a chain (dense)."""
    nb, nv = model.shape[0] - 1, int(model[-1, NV])
    lam, end, user, diag = V[L_LAM], V[L_END], V[L_USER], V[L_DIAG]
    if model[-1, MIMIC]:
        for t in range(nv):
            put1(lam, t, l, t - 1)
            put1(end, t, l, nv)
            put1(user, t, l, t)
    else:
        for i in range(nb):
            t, par = int(first(W, i, W_T0, l)), parent(model, i)
            for d in range(ndofs(model, i)):
                put1(user, t + d, l, first(W, nb + t + d, Z_USER, l))
                put1(end, t + d, l, first(W, i, W_TEND, l))
                put1(lam, t + d, l, t + d - 1 if d else (first(W, par, W_T0, l) + ndofs(model, par) - 1 if par >= 0 else -1))
    for r in range(nv):
        put1(diag, r, l, at(H, r, r, l))


#: for the batch drivers: q, v, tau in, d qdd / dq, d qdd / dv and M^-1 out
Algorithm(aba_derivatives, "iiiooo", aba_derivatives_lanes)
