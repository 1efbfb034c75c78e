"""Least-norm solutions of A x = b for a symmetric positive semi-definite A: Cholesky with
diagonal pivoting (Higham, Analysis of the Cholesky decomposition of a semi-definite matrix,
1990; Golub and Van Loan, Matrix Computations, 4.2.8) stops at the numerical rank r, so that
P^T A P = C C^T with C (n x r) of full column rank; then C u = P^T b (its first r rows, L11 u =
b_1) and, of the x with C^T P^T x = u, the least-norm one: x = P C (C^T C)^-1 u (C^T C, r x r,
by a plain Cholesky). When r = n this is the usual x = A^-1 b. `factor_psd`, `gram_factor` and
`solve_factored` split it so that one factor serves several right-hand sides. Constraint forces
(constrained.py, constrained_inverse.py, constrained_hybrid.py) and assembly steps (assembly.py)
are solved so: redundant constraints give the least-norm forces instead of a singular system, and
a least-squares problem X s = t has its least-norm solution from X^T X s = X^T t (always
consistent).
"""
import numpy as np

from .cholesky import cholesky
from .jit import fast

#: a pivot counts as zero below this fraction of A's largest diagonal entry: rounding leaves
#: ~n eps of it where A is singular; a genuine direction that weak (a Jacobian's singular value
#: 1e-6 of its largest) is treated as redundant too
RANK_TOL = 1e-12


@fast
def least_norm_solve(A, b, x, perm, G, tmp, n, ref):
    """x = the least-norm solution of A x = b (A n x n symmetric positive semi-definite, full
    storage, destroyed; G an n x n scratch; perm and tmp n scratch numbers). Returns the rank r.
    ref: the size of A's diagonal that the rank is judged against where it is larger than A's own
    (0: A's own). If A x = b has no solution, x is the least-norm solution of the first r pivoted
    equations (check the residual)."""
    r = factor_psd(A, perm, n, ref)
    if r < n:
        gram_factor(A, G, r, n)
    solve_factored(A, G, perm, r, n, b, x, tmp)
    return r


@fast
def factor_psd(A, perm, n, ref):
    """P^T A P = C C^T in place, C (n x r) in A's lower part, by Cholesky with diagonal pivoting
    (perm: the pivots) stopped at the numerical rank r: a pivot below RANK_TOL of A's largest
    diagonal entry, or of ref where that is larger (A = X^T X formed from a product X = Z P that
    projection left at rounding level: its diagonal is judged against Z's, not against its own
    noise). Returns r."""
    big = ref
    for i in range(n):
        perm[i] = i
        big = max(big, A[i, i])
    r = 0
    while r < n:                        # C C^T = P^T A P, column by column, C in A's lower part
        p, best = r, A[r, r]
        for i in range(r + 1, n):
            if A[i, i] > best:
                p, best = i, A[i, i]
        if not best > RANK_TOL * big:
            break
        if p != r:
            swap(A, perm, r, p)
        d = np.sqrt(best)
        A[r, r] = d
        for i in range(r + 1, n):
            A[i, r] /= d
        for j in range(r + 1, n):       # the trailing Schur complement, kept symmetric
            for i in range(j, n):
                A[i, j] -= A[i, r] * A[j, r]
                A[j, i] = A[i, j]
        r += 1
    return r


@fast
def gram_factor(A, G, r, n):
    """G = C^T C (r x r) of `factor_psd`'s C, factored L L^T in place: what a least-norm solve
    needs when r < n."""
    for i in range(r):
        for j in range(i + 1):
            s = 0.0
            for k in range(i, n):       # C[k, i] is zero above the diagonal
                s += A[k, i] * A[k, j]
            G[i, j] = s
    cholesky(G, r, -np.inf, False)


@fast
def solve_factored(A, G, perm, r, n, b, x, tmp):
    """x = the least-norm solution of A x = b from `factor_psd` (A, perm, r) and, if r < n,
    `gram_factor` (G): C u = P^T b (its first r rows), then x = P C (C^T C)^-1 u. b is only read
    (it may be tmp's twin but not x); tmp: n scratch numbers."""
    for k in range(r):                  # L11 u = (P^T b)_1
        y = b[int(perm[k])]
        for j in range(k):
            y -= A[k, j] * x[j]
        x[k] = y / A[k, k]
    if r < n:                           # y = (C^T C)^-1 u, then x = C y
        for i in range(r):              # G = L L^T: L z = u, L^T y = z
            y = x[i]
            for j in range(i):
                y -= G[i, j] * x[j]
            x[i] = y / G[i, i]
        for i in range(r - 1, -1, -1):
            y = x[i]
            for j in range(i + 1, r):
                y -= G[j, i] * x[j]
            x[i] = y / G[i, i]
        for k in range(n):              # C y
            s = 0.0
            for i in range(min(k + 1, r)):
                s += A[k, i] * x[i]
            tmp[k] = s
        for k in range(n):
            x[k] = tmp[k]
    else:                               # L^T x' = u
        for k in range(n - 1, -1, -1):
            y = x[k]
            for j in range(k + 1, n):
                y -= A[j, k] * x[j]
            x[k] = y / A[k, k]
    for k in range(n):                  # x = P x'
        tmp[k] = x[k]
    for k in range(n):
        x[int(perm[k])] = tmp[k]


@fast
def swap(A, perm, r, p):
    """Swap rows and columns r and p of A (and entries of perm)."""
    perm[r], perm[p] = perm[p], perm[r]
    for c in range(A.shape[1]):
        A[r, c], A[p, c] = A[p, c], A[r, c]
    for c in range(A.shape[0]):
        A[c, r], A[c, p] = A[c, p], A[c, r]
