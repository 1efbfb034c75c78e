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
from .access import at, at1, first1, put, put1, sub, sub1
from .common import SINGULAR_TOL
from .jit import fast, inline
from .lanes import all_lanes


@fast
def factor(H, lam, diag, n, l=None):
    """M = L^T D L in place (Featherstone, RBDA ch. 6.5, algorithm LTDL). Returns -1, or the
    first coordinate (from the leaves) whose pivot D_k is not positive (in some lane: one state, or
    L states in lanes l, see lanes.py): a pivot counts as zero when it keeps less than
    SINGULAR_TOL of M_kk (diag, saved before; the rest cancelled).
    LTDL's innermost loop walks j up the ancestors of i; here it runs over the whole row,
    j = 0 .. i, where H[k, j] is exactly zero off k's ancestors (no fill-in): a few more
    multiplications by zero, but a loop that vectorizes instead of a chain of dependent loads
    (measured ~4x faster on talos)."""
    for k in range(n - 1, -1, -1):
        d = at(H, k, k, l)
        if not all_lanes(d > SINGULAR_TOL * at1(diag, k, l)):
            return k
        i = int(first1(lam, k, l))
        while i >= 0:
            a = at(H, k, i, l) / d
            for j in range(i + 1):
                sub(H, i, j, l, a * at(H, k, j, l))
            put(H, k, i, l, a)
            i = int(first1(lam, i, l))
    return -1


@fast
def solve_vector(H, end, n, x, l=None):
    """x = M^-1 x for x in the factor's order (after `factor`): L^T y = x, y / D, then L z = y.
    Both triangles by contiguous loops instead of walks up the ancestors: L^T over whole rows of H
    (zero off the ancestors: it vectorizes), L by columns, each coordinate pushed into its
    descendants k + 1 .. end[k] - 1 (~4x faster than the chains on talos)."""
    for i in range(n - 1, -1, -1):
        xi = at1(x, i, l)
        for j in range(i):
            sub1(x, j, l, at(H, i, j, l) * xi)
    for i in range(n):
        put1(x, i, l, at1(x, i, l) / at(H, i, i, l))
    for j in range(n):
        xj = at1(x, j, l)
        for i in range(j + 1, int(first1(end, j, l))):
            sub1(x, i, l, at(H, i, j, l) * xj)


@fast
def solve_block(H, lam, end, n, X, sign, l=None):
    """X = sign M^-1 X for a block X whose row k belongs to coordinate k (after `factor`), every
    column a right-hand side: L^T Y = X pulling from each row's descendants (k + 1 .. end[k] - 1,
    a contiguous range), Y = sign D^-1 Y, then L Z = Y pulling from its ancestors. The row updates
    go four source rows at a time: one load and store of the destination per four (the updates
    are bound by L1 traffic; measured ~1.6x over one at a time; inlined: ~8 % less)."""
    for j in range(n - 1, -1, -1):
        i, e = j + 1, int(first1(end, j, l))
        while i + 4 <= e:
            update4(X, j, at(H, i, j, l), i, at(H, i + 1, j, l), i + 1, at(H, i + 2, j, l), i + 2,
                    at(H, i + 3, j, l), i + 3, l)
            i += 4
        while i < e:
            update1(X, j, at(H, i, j, l), i, l)
            i += 1
    for i in range(n):
        s = sign / at(H, i, i, l)
        for c in range(X.shape[1]):
            put(X, i, c, l, at(X, i, c, l) * s)
    for i in range(n):
        j0 = int(first1(lam, i, l))
        while j0 >= 0:
            j1 = int(first1(lam, j0, l))
            j2 = int(first1(lam, j1, l)) if j1 >= 0 else -1
            j3 = int(first1(lam, j2, l)) if j2 >= 0 else -1
            if j3 < 0:
                update1(X, i, at(H, i, j0, l), j0, l)
                j0 = j1
                continue
            update4(X, i, at(H, i, j0, l), j0, at(H, i, j1, l), j1, at(H, i, j2, l), j2, at(H, i, j3, l), j3, l)
            j0 = int(first1(lam, j3, l))


@inline
def update4(X, r, a0, s0, a1, s1, a2, s2, a3, s3, l=None):
    """X[r] -= a0 X[s0] + a1 X[s1] + a2 X[s2] + a3 X[s3] (a loop the compiler vectorizes)."""
    for c in range(X.shape[1]):
        sub(X, r, c, l, (a0 * at(X, s0, c, l) + a1 * at(X, s1, c, l)) + (a2 * at(X, s2, c, l) + a3 * at(X, s3, c, l)))


@inline
def update1(X, r, a, s, l=None):
    """X[r] -= a X[s]."""
    for c in range(X.shape[1]):
        sub(X, r, c, l, a * at(X, s, c, l))


@fast
def symmetrize(X, l=None):
    """X = (X + X^T) / 2: M^-1 computed by columns is symmetric only to rounding."""
    for r in range(X.shape[0]):
        for c in range(r):
            x = 0.5 * (at(X, r, c, l) + at(X, c, r, l))
            put(X, r, c, l, x)
            put(X, c, r, l, x)
