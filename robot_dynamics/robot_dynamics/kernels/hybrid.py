"""Forward and hybrid dynamics of models with mimic joints, which couple coordinates (the
articulated-body recursion of aba.py cannot): the reduced system
M_uu qdd_u = tau_u - b_u - M_uk qdd_k solved by Cholesky (Kim, Lie group formulation of
articulated rigid body dynamics, hybrid dynamics). `aba` calls it for those models."""
from ..layout import FREE, JTYPE, NV
from .cholesky import cholesky
from .access import at, at1, first1, put, put1
from .common import OK, SINGULAR, SINGULAR_TOL, fail, ndofs, user_v
from .crba import WIDTH as CRBA_WIDTH
from .crba import composite_inertia
from .jit import fast
from .kinematics import kinematics
from .rnea import WIDTH as RNEA_WIDTH
from .rnea import newton_euler

#: RNEA then CRBA on the same rows (and the dense rows after the bodies': common.body_rows)
WIDTH = max(RNEA_WIDTH, CRBA_WIDTH)


@fast
def reduced_hybrid(model, q, v, known, qdd, tau, ext, W, l=None):
    """Hybrid dynamics as the reduced system M_uu qdd_u = tau_u - b_u - M_uk qdd_k (Kim, Lie
    group formulation, hybrid dynamics), after `kinematics`: b = C v + g - J^T f_ext by RNEA with
    qdd = 0, M by CRBA, M_uu gathered and factored L L^T (Cholesky); tau_k = M_k qdd + b_k.
    Returns SINGULAR (with the body of the failing coordinate) if M_uu is not positive definite
    (in some lane). One state, or L states in lanes l (see lanes.py)."""
    nb, nv = model.shape[0] - 1, int(model[-1, NV])
    M, L = W[nb:, :nv], W[nb:, nv + 4:2 * nv + 4]
    b, zero, unknown, x = W[nb:, nv], W[nb:, nv + 1], W[nb:, nv + 2], W[nb:, nv + 3]
    zero[:] = 0.0
    newton_euler(model, q, v, zero, ext, b, W, True, l)
    if nb and model[0, JTYPE] == FREE:  # composite_inertia takes a free root at the origin
        kinematics(model, q, W, -1, True, l)
    M[:] = 0.0
    composite_inertia(model, M, W, l)
    n = 0
    for r in range(nv):
        if not known[r]:
            put1(unknown, n, l, r)
            n += 1
    for j in range(n):          # x = tau_u - b_u - M_uk qdd_k, L = the lower triangle of M_uu
        r = int(first1(unknown, j, l))
        y = at1(tau, r, l) - at1(b, r, l)
        for c in range(nv):
            if known[c]:
                y -= at(M, r, c, l) * at1(qdd, c, l)
        put1(x, j, l, y)
        for k in range(j + 1):
            put(L, j, k, l, at(M, r, int(first1(unknown, k, l)), l))
    failed = cholesky_solve(L, x, n, l)
    if failed >= 0:
        return fail(SINGULAR, body_of_coordinate(model, int(first1(unknown, failed, l))))
    for j in range(n):
        put1(qdd, int(first1(unknown, j, l)), l, at1(x, j, l))
    for r in range(nv):
        if known[r]:
            y = at1(b, r, l)
            for c in range(nv):
                y += at(M, r, c, l) * at1(qdd, c, l)
            put1(tau, r, l, y)
    return OK


@fast
def cholesky_solve(L, x, n, l=None):
    """x = A^-1 x for the symmetric positive definite n x n matrix A given by the lower triangle
    of L, which becomes its Cholesky factor (A = L L^T, 1 / L_jj kept on the diagonal). Returns -1,
    or the first row whose pivot is not positive (in some lane: A is not positive definite)."""
    bad = cholesky(L, n, SINGULAR_TOL, True, l)
    if bad >= 0:
        return bad
    for j in range(n):          # L y = x
        y = at1(x, j, l)
        for k in range(j):
            y -= at(L, j, k, l) * at1(x, k, l)
        put1(x, j, l, y * at(L, j, j, l))
    for j in range(n - 1, -1, -1):   # L^T x = y
        y = at1(x, j, l)
        for k in range(j + 1, n):
            y -= at(L, k, j, l) * at1(x, k, l)
        put1(x, j, l, y * at(L, j, j, l))
    return -1


@fast
def body_of_coordinate(model, k):
    """The first body whose joint moves user coordinate k."""
    for i in range(model.shape[0] - 1):
        for d in range(ndofs(model, i)):
            if user_v(model, i, d) == k:
                return i
    return -1
