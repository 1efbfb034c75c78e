"""Forward and hybrid dynamics of models with mimic joints, which couple coordinates (the
articulated-body recursion of aba.py cannot): the reduced system
M_uu qdd_u = tau_u - b_u - M_uk qdd_k solved by Cholesky (Kim, Lie group formulation of
articulated rigid body dynamics, hybrid dynamics). `aba` calls it for those models."""
import numpy as np

from ..layout import FREE, JTYPE, NV
from .common import OK, SINGULAR, SINGULAR_TOL, fail, ndofs, user_v
from .crba import WIDTH as CRBA_WIDTH
from .crba import composite_inertia
from .jit import fast
from .kinematics import kinematics
from .rnea import WIDTH as RNEA_WIDTH
from .rnea import newton_euler

#: RNEA then CRBA on the same rows (and the dense rows after the bodies': common.workspace)
WIDTH = max(RNEA_WIDTH, CRBA_WIDTH)


@fast
def reduced_hybrid(model, q, v, known, qdd, tau, ext, W):
    """Hybrid dynamics as the reduced system M_uu qdd_u = tau_u - b_u - M_uk qdd_k (Kim, Lie
    group formulation, hybrid dynamics), after `kinematics`: b = C v + g - J^T f_ext by RNEA with
    qdd = 0, M by CRBA, M_uu gathered and factored L L^T (Cholesky); tau_k = M_k qdd + b_k.
    Returns SINGULAR (with the body of the failing coordinate) if M_uu is not positive definite."""
    nb, nv = model.shape[0] - 1, int(model[-1, NV])
    M, L = W[nb:, :nv], W[nb:, nv + 4:2 * nv + 4]
    b, zero, unknown, x = W[nb:, nv], W[nb:, nv + 1], W[nb:, nv + 2], W[nb:, nv + 3]
    zero[:] = 0.0
    newton_euler(model, q, v, zero, ext, b, W, True)
    if nb and model[0, JTYPE] == FREE:  # composite_inertia takes a free root at the origin
        kinematics(model, q, W, base_frame=True)
    M[:] = 0.0
    composite_inertia(model, M, W)
    n = 0
    for r in range(nv):
        if not known[r]:
            unknown[n] = r
            n += 1
    for j in range(n):          # x = tau_u - b_u - M_uk qdd_k, L = the lower triangle of M_uu
        r = int(unknown[j])
        y = tau[r] - b[r]
        for c in range(nv):
            if known[c]:
                y -= M[r, c] * qdd[c]
        x[j] = y
        for k in range(j + 1):
            L[j, k] = M[r, int(unknown[k])]
    failed = cholesky_solve(L, x, n)
    if failed >= 0:
        return fail(SINGULAR, body_of_coordinate(model, int(unknown[failed])))
    for j in range(n):
        qdd[int(unknown[j])] = x[j]
    for r in range(nv):
        if known[r]:
            y = b[r]
            for c in range(nv):
                y += M[r, c] * qdd[c]
            tau[r] = y
    return OK


@fast
def cholesky_solve(L, x, n):
    """x = A^-1 x for the symmetric positive definite n x n matrix A given by the lower triangle
    of L, which becomes its Cholesky factor (A = L L^T, 1 / L_jj kept on the diagonal). Returns -1,
    or the first row whose pivot is not positive (A is not positive definite)."""
    for j in range(n):
        y = d0 = L[j, j]
        for k in range(j):
            y -= L[j, k] * L[j, k]
        if not y > SINGULAR_TOL * abs(d0):
            return j
        dinv = 1.0 / np.sqrt(y)
        L[j, j] = dinv
        for i in range(j + 1, n):
            y = L[i, j]
            for k in range(j):
                y -= L[i, k] * L[j, k]
            L[i, j] = y * dinv
    for j in range(n):          # L y = x
        y = x[j]
        for k in range(j):
            y -= L[j, k] * x[k]
        x[j] = y * L[j, j]
    for j in range(n - 1, -1, -1):   # L^T x = y
        y = x[j]
        for k in range(j + 1, n):
            y -= L[k, j] * x[k]
        x[j] = y * L[j, j]
    return -1


@fast
def body_of_coordinate(model, k):
    """The first body whose joint moves user coordinate k."""
    for i in range(model.shape[0] - 1):
        for d in range(ndofs(model, i)):
            if user_v(model, i, d) == k:
                return i
    return -1
