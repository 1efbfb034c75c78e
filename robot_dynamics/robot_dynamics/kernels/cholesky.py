"""The library's dense Cholesky factorization, A = L L^T in place (Golub and Van Loan, Matrix
Computations, algorithm 4.2.1, by columns), for one state or L states in lanes (lanes.py): the
reduced system of mimic models (hybrid.py), constrained hybrid dynamics' M_vv and the least-norm
solves' Gram matrices (psd.py) factor with it."""
from .access import at, put
from .jit import inline
from .lanes import all_lanes, sqrt


@inline
def cholesky(A, n, tol, reciprocal, l=None):
    """L of the symmetric positive definite n x n matrix in A's lower triangle, into that triangle
    (the upper one is not read): 1 / L_jj on the diagonal when `reciprocal` (for solves that
    multiply by it), L_jj otherwise. Returns -1, or the first column whose pivot keeps no more than
    tol times A_jj (the rest cancelled: A is not positive definite, in some lane; tol = -inf
    checks nothing)."""
    for j in range(n):
        y = d0 = at(A, j, j, l)
        for k in range(j):
            y -= at(A, j, k, l) * at(A, j, k, l)
        if not all_lanes(y > tol * abs(d0)):
            return j
        d = sqrt(y)
        inv = 1.0 / d if reciprocal else d
        put(A, j, j, l, inv)
        for i in range(j + 1, n):
            y = at(A, i, j, l)
            for k in range(j):
                y -= at(A, i, k, l) * at(A, j, k, l)
            put(A, i, j, l, y * inv if reciprocal else y / d)
    return -1
