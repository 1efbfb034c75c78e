"""M = L^T D L with L unit lower triangular: the factorization that keeps the mass matrix's
branch-induced sparsity (Featherstone, Rigid Body Dynamics Algorithms, ch. 6.5). With the
coordinates in tree order (each after its parent coordinate lam[k] < k), M_ki is zero unless i
is an ancestor of k, and so is L: factoring and solving only walk the chains of ancestors
(talos: ~300 entries below the diagonal where a dense factor has 703). A chain (lam[k] = k - 1)
makes it a dense factorization, used where mimic joints couple coordinates across branches.

H holds M in that order; `factor` overwrites its lower triangle with L below the diagonal and D
on it. Each coordinate's descendants are the contiguous range k + 1 .. end[k] - 1, so the solves
run over contiguous rows and columns rather than up the chains of ancestors (dependent loads). A
block of right-hand sides X has a row per coordinate, so that M^-1 X is a sequence of updates of
whole rows (vectorized).
"""
from .common import SINGULAR_TOL
from .jit import fast, inline


@fast
def factor(H, lam, diag, n):
    """M = L^T D L in place (Featherstone, RBDA ch. 6.5, algorithm LTDL). Returns -1, or the
    first coordinate (from the leaves) whose pivot D_k is not positive: a pivot counts as zero
    when it keeps less than SINGULAR_TOL of M_kk (diag, saved before; the rest cancelled).
    LTDL's innermost loop walks j up the ancestors of i; here it runs over the whole row,
    j = 0 .. i, where H[k, j] is exactly zero off k's ancestors (no fill-in): a few more
    multiplications by zero, but a loop that vectorizes instead of a chain of dependent loads
    (measured ~4x faster on talos)."""
    for k in range(n - 1, -1, -1):
        d = H[k, k]
        if not d > SINGULAR_TOL * diag[k]:
            return k
        i = int(lam[k])
        while i >= 0:
            a = H[k, i] / d
            for j in range(i + 1):
                H[i, j] -= a * H[k, j]
            H[k, i] = a
            i = int(lam[i])
    return -1


@fast
def solve_vector(H, end, n, x):
    """x = M^-1 x for x in the factor's order (after `factor`): L^T y = x, y / D, then L z = y.
    Both triangles by contiguous loops instead of walks up the ancestors: L^T over whole rows of H
    (zero off the ancestors: it vectorizes), L by columns, each coordinate pushed into its
    descendants k + 1 .. end[k] - 1 (~4x faster than the chains on talos)."""
    for i in range(n - 1, -1, -1):
        xi = x[i]
        for j in range(i):
            x[j] -= H[i, j] * xi
    for i in range(n):
        x[i] /= H[i, i]
    for j in range(n):
        xj = x[j]
        for i in range(j + 1, int(end[j])):
            x[i] -= H[i, j] * xj


@fast
def solve_block(H, lam, end, n, X, sign):
    """X = sign M^-1 X for a block X whose row k belongs to coordinate k (after `factor`), every
    column a right-hand side: L^T Y = X pulling from each row's descendants (k + 1 .. end[k] - 1,
    a contiguous range), Y = sign D^-1 Y, then L Z = Y pulling from its ancestors. The row updates
    go four source rows at a time: one load and store of the destination per four (the updates
    are bound by L1 traffic; measured ~1.6x over one at a time; inlined: ~8 % less)."""
    for j in range(n - 1, -1, -1):
        i, e = j + 1, int(end[j])
        while i + 4 <= e:
            update4(X, j, H[i, j], i, H[i + 1, j], i + 1, H[i + 2, j], i + 2, H[i + 3, j], i + 3)
            i += 4
        while i < e:
            update1(X, j, H[i, j], i)
            i += 1
    for i in range(n):
        s = sign / H[i, i]
        for c in range(X.shape[1]):
            X[i, c] *= s
    for i in range(n):
        j0 = int(lam[i])
        while j0 >= 0:
            j1 = int(lam[j0])
            j2 = int(lam[j1]) if j1 >= 0 else -1
            j3 = int(lam[j2]) if j2 >= 0 else -1
            if j3 < 0:
                update1(X, i, H[i, j0], j0)
                j0 = j1
                continue
            update4(X, i, H[i, j0], j0, H[i, j1], j1, H[i, j2], j2, H[i, j3], j3)
            j0 = int(lam[j3])


@inline
def update4(X, r, a0, s0, a1, s1, a2, s2, a3, s3):
    """X[r] -= a0 X[s0] + a1 X[s1] + a2 X[s2] + a3 X[s3] (a loop the compiler vectorizes)."""
    for c in range(X.shape[1]):
        X[r, c] -= (a0 * X[s0, c] + a1 * X[s1, c]) + (a2 * X[s2, c] + a3 * X[s3, c])


@inline
def update1(X, r, a, s):
    """X[r] -= a X[s]."""
    for c in range(X.shape[1]):
        X[r, c] -= a * X[s, c]


@fast
def symmetrize(X):
    """X = (X + X^T) / 2: M^-1 computed by columns is symmetric only to rounding."""
    for r in range(X.shape[0]):
        for c in range(r):
            X[r, c] = X[c, r] = 0.5 * (X[r, c] + X[c, r])
