"""Spatial algebra on tuples (kept in registers): 6-vectors [linear; angular], 3x3 rotations
as row-major 9-tuples, rigid-body inertias as 10 parameters (mass, m c, rotational inertia
about the origin: xx yy zz xy xz yz) and symmetric 6x6 matrices as their upper triangle (21).

The functions on tuples work on numbers and on lanes.LaneVec alike (one state or L at once); those
that read or write a workspace row take the lane argument l last (None, the default: one state,
A[i, c]; a lanes.Lanes marker: A[i, c, 0:L], see lanes.py)."""
from .jit import fast, inline
from .access import add, at, put, sub

ZERO6 = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
ZERO3 = (0.0, 0.0, 0.0)
IDENTITY3 = (1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0)


@fast
def get3(A, i, c, l=None):
    return (at(A, i, c, l), at(A, i, c + 1, l), at(A, i, c + 2, l))


@fast
def set3(A, i, c, x, l=None):
    put(A, i, c, l, x[0])
    put(A, i, c + 1, l, x[1])
    put(A, i, c + 2, l, x[2])


@fast
def get6(A, i, c, l=None):
    return (at(A, i, c, l), at(A, i, c + 1, l), at(A, i, c + 2, l), at(A, i, c + 3, l), at(A, i, c + 4, l),
            at(A, i, c + 5, l))


@fast
def set6(A, i, c, x, l=None):
    put(A, i, c, l, x[0])
    put(A, i, c + 1, l, x[1])
    put(A, i, c + 2, l, x[2])
    put(A, i, c + 3, l, x[3])
    put(A, i, c + 4, l, x[4])
    put(A, i, c + 5, l, x[5])


@fast
def add6(A, i, c, x, l=None):
    """A[i, c:c+6] += x."""
    add(A, i, c, l, x[0])
    add(A, i, c + 1, l, x[1])
    add(A, i, c + 2, l, x[2])
    add(A, i, c + 3, l, x[3])
    add(A, i, c + 4, l, x[4])
    add(A, i, c + 5, l, x[5])


@fast
def get9(A, i, c, l=None):
    return (at(A, i, c, l), at(A, i, c + 1, l), at(A, i, c + 2, l), at(A, i, c + 3, l), at(A, i, c + 4, l),
            at(A, i, c + 5, l), at(A, i, c + 6, l), at(A, i, c + 7, l), at(A, i, c + 8, l))


@fast
def set9(A, i, c, x, l=None):
    put(A, i, c, l, x[0])
    put(A, i, c + 1, l, x[1])
    put(A, i, c + 2, l, x[2])
    put(A, i, c + 3, l, x[3])
    put(A, i, c + 4, l, x[4])
    put(A, i, c + 5, l, x[5])
    put(A, i, c + 6, l, x[6])
    put(A, i, c + 7, l, x[7])
    put(A, i, c + 8, l, x[8])


@fast
def get10(A, i, c, l=None):
    return (at(A, i, c, l), at(A, i, c + 1, l), at(A, i, c + 2, l), at(A, i, c + 3, l), at(A, i, c + 4, l),
            at(A, i, c + 5, l), at(A, i, c + 6, l), at(A, i, c + 7, l), at(A, i, c + 8, l), at(A, i, c + 9, l))


@fast
def set10(A, i, c, x, l=None):
    set9(A, i, c, x[:9], l)
    put(A, i, c + 9, l, x[9])


@fast
def plus(a, b):
    return (a[0] + b[0], a[1] + b[1], a[2] + b[2], a[3] + b[3], a[4] + b[4], a[5] + b[5])


@fast
def axpy(s, x, y):
    """s x + y."""
    return (s * x[0] + y[0], s * x[1] + y[1], s * x[2] + y[2], s * x[3] + y[3], s * x[4] + y[4], s * x[5] + y[5])


@fast
def dot6(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3] + a[4] * b[4] + a[5] * b[5]


@fast
def cross3(a, b):
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


@fast
def cross_motion(m, n):
    """m x n (spatial motion cross product, [lin; ang])."""
    return (m[4] * n[2] - m[5] * n[1] + m[1] * n[5] - m[2] * n[4],
            m[5] * n[0] - m[3] * n[2] + m[2] * n[3] - m[0] * n[5],
            m[3] * n[1] - m[4] * n[0] + m[0] * n[4] - m[1] * n[3],
            m[4] * n[5] - m[5] * n[4],
            m[5] * n[3] - m[3] * n[5],
            m[3] * n[4] - m[4] * n[3])


@fast
def cross_force(m, f):
    """m x* f (spatial force cross product)."""
    return (m[4] * f[2] - m[5] * f[1],
            m[5] * f[0] - m[3] * f[2],
            m[3] * f[1] - m[4] * f[0],
            m[4] * f[5] - m[5] * f[4] + m[1] * f[2] - m[2] * f[1],
            m[5] * f[3] - m[3] * f[5] + m[2] * f[0] - m[0] * f[2],
            m[3] * f[4] - m[4] * f[3] + m[0] * f[1] - m[1] * f[0])


@fast
def inertia_times(A, i, c, m, l=None):
    """I m for the 10-parameter inertia A[i, c:c+10] (mass, h, rotational inertia about the origin)."""
    mass, hx, hy, hz = at(A, i, c, l), at(A, i, c + 1, l), at(A, i, c + 2, l), at(A, i, c + 3, l)
    return (mass * m[0] - hy * m[5] + hz * m[4],
            mass * m[1] - hz * m[3] + hx * m[5],
            mass * m[2] - hx * m[4] + hy * m[3],
            hy * m[2] - hz * m[1] + at(A, i, c + 4, l) * m[3] + at(A, i, c + 7, l) * m[4] + at(A, i, c + 8, l) * m[5],
            hz * m[0] - hx * m[2] + at(A, i, c + 7, l) * m[3] + at(A, i, c + 5, l) * m[4] + at(A, i, c + 9, l) * m[5],
            hx * m[1] - hy * m[0] + at(A, i, c + 8, l) * m[3] + at(A, i, c + 9, l) * m[4] + at(A, i, c + 6, l) * m[5])


@fast
def sym6_times(W, i, c, x, l=None):
    """A x for a symmetric 6x6 A stored as its upper triangle, row by row, in W[i, c:c+21]."""
    a00, a01, a02, a03, a04, a05 = get6(W, i, c, l)
    a11, a12, a13, a14, a15 = at(W, i, c + 6, l), at(W, i, c + 7, l), at(W, i, c + 8, l), at(W, i, c + 9, l), \
        at(W, i, c + 10, l)
    a22, a23, a24, a25 = at(W, i, c + 11, l), at(W, i, c + 12, l), at(W, i, c + 13, l), at(W, i, c + 14, l)
    a33, a34, a35 = at(W, i, c + 15, l), at(W, i, c + 16, l), at(W, i, c + 17, l)
    a44, a45, a55 = at(W, i, c + 18, l), at(W, i, c + 19, l), at(W, i, c + 20, l)
    return (a00 * x[0] + a01 * x[1] + a02 * x[2] + a03 * x[3] + a04 * x[4] + a05 * x[5],
            a01 * x[0] + a11 * x[1] + a12 * x[2] + a13 * x[3] + a14 * x[4] + a15 * x[5],
            a02 * x[0] + a12 * x[1] + a22 * x[2] + a23 * x[3] + a24 * x[4] + a25 * x[5],
            a03 * x[0] + a13 * x[1] + a23 * x[2] + a33 * x[3] + a34 * x[4] + a35 * x[5],
            a04 * x[0] + a14 * x[1] + a24 * x[2] + a34 * x[3] + a44 * x[4] + a45 * x[5],
            a05 * x[0] + a15 * x[1] + a25 * x[2] + a35 * x[3] + a45 * x[4] + a55 * x[5])


@inline
def sym6_subtract_outer(W, i, c, x, y, l=None):
    """The upper triangle of W[i, c:c+21] -= x y^T (x y^T summed to a symmetric matrix)."""
    k = 0
    for r in range(6):
        for col in range(r, 6):
            sub(W, i, c + k, l, x[r] * y[col])
            k += 1


@fast
def mat6_times(W, i, c, x, l=None):
    """W[i, c:c+36] (a row-major 6x6) times x."""
    return (dot6(get6(W, i, c, l), x), dot6(get6(W, i, c + 6, l), x), dot6(get6(W, i, c + 12, l), x),
            dot6(get6(W, i, c + 18, l), x), dot6(get6(W, i, c + 24, l), x), dot6(get6(W, i, c + 30, l), x))


@fast
def matmul3(A, B):
    return (A[0] * B[0] + A[1] * B[3] + A[2] * B[6], A[0] * B[1] + A[1] * B[4] + A[2] * B[7],
            A[0] * B[2] + A[1] * B[5] + A[2] * B[8], A[3] * B[0] + A[4] * B[3] + A[5] * B[6],
            A[3] * B[1] + A[4] * B[4] + A[5] * B[7], A[3] * B[2] + A[4] * B[5] + A[5] * B[8],
            A[6] * B[0] + A[7] * B[3] + A[8] * B[6], A[6] * B[1] + A[7] * B[4] + A[8] * B[7],
            A[6] * B[2] + A[7] * B[5] + A[8] * B[8])


@fast
def matvec3(A, x):
    return (A[0] * x[0] + A[1] * x[1] + A[2] * x[2], A[3] * x[0] + A[4] * x[1] + A[5] * x[2],
            A[6] * x[0] + A[7] * x[1] + A[8] * x[2])


@fast
def transpose3(R):
    return (R[0], R[3], R[6], R[1], R[4], R[7], R[2], R[5], R[8])


@fast
def column(R, d):
    """Column d of a row-major 3x3 rotation: its axis d in the outer frame."""
    return (R[d], R[3 + d], R[6 + d])


@fast
def rotate_z(A, s, c):
    """A R_z(th) for s, c = sin th, cos th: row a -> (c a0 + s a1, c a1 - s a0, a2)."""
    return (c * A[0] + s * A[1], c * A[1] - s * A[0], A[2], c * A[3] + s * A[4], c * A[4] - s * A[3], A[5],
            c * A[6] + s * A[7], c * A[7] - s * A[6], A[8])


@fast
def quaternion_matrix(x, y, z, w):
    return (1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w),
            2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w),
            2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y))


@inline
def world_inertia(R, p, I):
    """A body inertia I (10 parameters, body frame) carried to a point p away (Featherstone,
    RBDA ch. 2: I_A = X* I_B X, on the 10 parameters): h = R h_b + m p, Ibar = R Ibar_b R^T - (p y^T + y p^T) + 2 (y.p) 1
    - m (p p^T - |p|^2 1), y = R h_b."""
    m = I[0]
    y = matvec3(R, (I[1], I[2], I[3]))
    T = matmul3((I[4], I[7], I[8], I[7], I[5], I[9], I[8], I[9], I[6]), (R[0], R[3], R[6], R[1], R[4], R[7], R[2], R[5], R[8]))
    d = 2.0 * (y[0] * p[0] + y[1] * p[1] + y[2] * p[2]) + m * (p[0] * p[0] + p[1] * p[1] + p[2] * p[2])
    h = (y[0] + m * p[0], y[1] + m * p[1], y[2] + m * p[2])
    return (m, h[0], h[1], h[2],
            R[0] * T[0] + R[1] * T[3] + R[2] * T[6] - 2.0 * p[0] * y[0] - m * p[0] * p[0] + d,
            R[3] * T[1] + R[4] * T[4] + R[5] * T[7] - 2.0 * p[1] * y[1] - m * p[1] * p[1] + d,
            R[6] * T[2] + R[7] * T[5] + R[8] * T[8] - 2.0 * p[2] * y[2] - m * p[2] * p[2] + d,
            R[0] * T[1] + R[1] * T[4] + R[2] * T[7] - p[0] * y[1] - y[0] * p[1] - m * p[0] * p[1],
            R[0] * T[2] + R[1] * T[5] + R[2] * T[8] - p[0] * y[2] - y[0] * p[2] - m * p[0] * p[2],
            R[3] * T[2] + R[4] * T[5] + R[5] * T[8] - p[1] * y[2] - y[1] * p[2] - m * p[1] * p[2])
