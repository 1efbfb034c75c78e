"""Compiled rigid-body algorithms over Model.packed (see layout.py).

CRBA, ABA, the Jacobian and the Coriolis matrix work in world axes about one reference point o
(the joint origin of layout.ORIGIN_BODY, on the robot; the world origin for a Jacobian): a joint's
motion subspace S is carried there once, children hand their forces and inertias to the parent
without any transform, and the time derivative of such an S is simply v_body x S. Taking o on
the robot rather than at the world origin keeps a robot 1 km out as precise as at the origin
(an inertia about a point d away carries m d^2, and M would lose eps m d^2). RNEA works in each body's joint frame
instead, where S = e_z and the inertia is constant: it needs no placements and no inertias in
the world, which is fewer operations when nothing else needs them. Spatial vectors are
[linear; angular], handled as 6-tuples (kept in registers); 3x3 rotations as row-major 9-tuples.

Kernels take and return the user's coordinates: a joint reads its q and v through the
model's source/scale columns (mimic joints follow their leader) and adds its torque,
times its scale, to its source's (tau = G^T tau_full, M = G^T M_full G).

Each algorithm is one per-state function over a workspace W (a row of scratch per body,
see `workspace`); it is also the single-state entry point. `*_rows` runs it over rows lo..hi
of 2-D inputs on one thread with one workspace; `*_batch` splits the rows over nthreads
(prange over chunks, a workspace each, thread count as an argument so that `cache=True`
holds). One thread goes straight to `*_rows`: calling a parallel function, even on a path
without a parallel region, made a batch several times slower here.

Status codes returned: OK (0), NONFINITE (NaN/inf in an input), BAD_QUATERNION (a floating
joint's quaternion far from unit norm) and SINGULAR (a mass matrix that is not positive definite),
the last two with the body at fault: code + STATUS_BODY * (body + 1); OVERFLOW (a result too
large for a double).
"""
import os

# numba's OpenMP pool spins actively by default; on 2 cores that stalled every batch call ~16 ms
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import math  # noqa: E402
from fractions import Fraction  # noqa: E402

import numpy as np  # noqa: E402
from numba import njit, prange  # noqa: E402

from .layout import (ANGLE, ARMATURE, FREE, GRAVITY, INERTIA, JTYPE, MIMIC, MULTI, NV, ORIGIN_BODY,  # noqa: E402
                     PARENT, PLANAR, POS, PRISMATIC, QOFF, QSCALE, QSRC, QUATERNION_TOL, REVOLUTE, ROT,
                     SUBTREE_END, VSCALE, VSRC)

OK, NONFINITE, BAD_QUATERNION, SINGULAR, OVERFLOW = 0, 1, 2, 3, 4
STATUS_BODY = 16        # a status names its body: code + STATUS_BODY * (body + 1)
#: a pivot of an articulated or joint-space inertia counts as zero below this fraction of the
#: terms it was computed from (twelve digits cancelled: rounding noise, not inertia)
SINGULAR_TOL = 1e-12
WORLD, LOCAL, LOCAL_WORLD_ALIGNED = 0, 1, 2
# a frame spec row: body, reference, rotation (9, row-major) and translation in the body
F_BODY, F_REF, F_ROT, F_POS, F_WRENCH = 0, 1, 2, 11, 14
FRAME_COLS, EXT_COLS = 14, 20   # an external wrench row adds the wrench (6) to a frame spec

# workspace columns, one row per body: world placement, world (then composite) inertia,
# velocity, acceleration, force, bias acceleration, then per coordinate of the joint (up to 6)
# S and U, a 6x6 block (the articulated inertia, or the Coriolis B), ABA's D (1 / D for one
# coordinate, else its Cholesky factor, packed), the joint's unknown coordinates and their u,
# the joint's angle, its sine and cosine, and (row 0 only) the reference point o
W_R, W_P, W_I, W_V, W_A, W_F, W_C = 0, 9, 12, 22, 28, 34, 40
W_S, W_U, W_IA, W_D = 46, 82, 118, 154
W_UNK, W_NUNK, W_UU, W_JOINT, W_ORIGIN = 175, 181, 182, 188, 191
W_X = W_U       # newton_euler's transform from the parent's joint frame, E (9) and r (3)
W_COLS = 194

# The kernels allocate nothing, so they are compiled without numba's reference counting (_nrt=False):
# the atomic increments and decrements around every helper call and array view cost single calls
# 10-25 %. Only `workspace` and the parallel drivers allocate.
fast = njit(cache=True, error_model="numpy", fastmath={"contract"}, _nrt=False)
inline = njit(cache=True, error_model="numpy", fastmath={"contract"}, inline="always", _nrt=False)
allocating = njit(cache=True, error_model="numpy", fastmath={"contract"})
parallel = njit(cache=True, parallel=True, error_model="numpy", fastmath={"contract"})
ZERO6 = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
ZERO3 = (0.0, 0.0, 0.0)
IDENTITY3 = (1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0)


@allocating
def workspace(model):
    """Scratch for one state: a row per body (W_COLS), then a row per user coordinate for the
    dense system of mimic models (M | b | zeros | unknowns | x | L)."""
    nb, nv = model.shape[0] - 1, int(model[-1, NV])
    return np.empty((max(nb + nv, 1), max(W_COLS, 2 * nv + 4)))


# --- small spatial algebra on tuples --------------------------------------------------------
@fast
def get6(A, i, c):
    return (A[i, c], A[i, c + 1], A[i, c + 2], A[i, c + 3], A[i, c + 4], A[i, c + 5])


@fast
def set6(A, i, c, x):
    A[i, c], A[i, c + 1], A[i, c + 2], A[i, c + 3], A[i, c + 4], A[i, c + 5] = x


@fast
def get9(A, i, c):
    return (A[i, c], A[i, c + 1], A[i, c + 2], A[i, c + 3], A[i, c + 4], A[i, c + 5],
            A[i, c + 6], A[i, c + 7], A[i, c + 8])


@fast
def set9(A, i, c, x):
    A[i, c], A[i, c + 1], A[i, c + 2], A[i, c + 3], A[i, c + 4], A[i, c + 5], A[i, c + 6], A[i, c + 7], A[i, c + 8] = x


@fast
def get10(A, i, c):
    return (A[i, c], A[i, c + 1], A[i, c + 2], A[i, c + 3], A[i, c + 4], A[i, c + 5],
            A[i, c + 6], A[i, c + 7], A[i, c + 8], A[i, c + 9])


@fast
def set10(A, i, c, x):
    A[i, c], A[i, c + 1], A[i, c + 2], A[i, c + 3], A[i, c + 4], A[i, c + 5], A[i, c + 6], A[i, c + 7], \
        A[i, c + 8], A[i, c + 9] = x


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
def inertia_times(A, i, c, m):
    """I m for the 10-parameter inertia A[i, c:c+10] (mass, h, rotational inertia about the origin)."""
    mass, hx, hy, hz = A[i, c], A[i, c + 1], A[i, c + 2], A[i, c + 3]
    return (mass * m[0] - hy * m[5] + hz * m[4],
            mass * m[1] - hz * m[3] + hx * m[5],
            mass * m[2] - hx * m[4] + hy * m[3],
            hy * m[2] - hz * m[1] + A[i, c + 4] * m[3] + A[i, c + 7] * m[4] + A[i, c + 8] * m[5],
            hz * m[0] - hx * m[2] + A[i, c + 7] * m[3] + A[i, c + 5] * m[4] + A[i, c + 9] * m[5],
            hx * m[1] - hy * m[0] + A[i, c + 8] * m[3] + A[i, c + 9] * m[4] + A[i, c + 6] * m[5])


@fast
def symmetric_inertia(W, i):
    """W[i, W_IA:W_IA+21] = body i's inertia W[i, W_I:] as a symmetric 6x6 (see sym6_times)."""
    m, hx, hy, hz = W[i, W_I], W[i, W_I + 1], W[i, W_I + 2], W[i, W_I + 3]
    xx, yy, zz, xy, xz, yz = W[i, W_I + 4], W[i, W_I + 5], W[i, W_I + 6], W[i, W_I + 7], W[i, W_I + 8], W[i, W_I + 9]
    set6(W, i, W_IA, (m, 0.0, 0.0, 0.0, hz, -hy))        # stored explicitly: a loop over a tuple is
    set6(W, i, W_IA + 6, (m, 0.0, -hz, 0.0, hx, m))      # not unrolled, and cost ABA 10 %
    set6(W, i, W_IA + 12, (hy, -hx, 0.0, xx, xy, xz))
    W[i, W_IA + 18], W[i, W_IA + 19], W[i, W_IA + 20] = yy, yz, zz


@fast
def sym6_times(W, i, c, x):
    """A x for a symmetric 6x6 A stored as its upper triangle, row by row, in W[i, c:c+21]."""
    a00, a01, a02, a03, a04, a05 = get6(W, i, c)
    a11, a12, a13, a14, a15 = W[i, c + 6], W[i, c + 7], W[i, c + 8], W[i, c + 9], W[i, c + 10]
    a22, a23, a24, a25 = W[i, c + 11], W[i, c + 12], W[i, c + 13], W[i, c + 14]
    a33, a34, a35, a44, a45, a55 = W[i, c + 15], W[i, c + 16], W[i, c + 17], W[i, c + 18], W[i, c + 19], W[i, c + 20]
    return (a00 * x[0] + a01 * x[1] + a02 * x[2] + a03 * x[3] + a04 * x[4] + a05 * x[5],
            a01 * x[0] + a11 * x[1] + a12 * x[2] + a13 * x[3] + a14 * x[4] + a15 * x[5],
            a02 * x[0] + a12 * x[1] + a22 * x[2] + a23 * x[3] + a24 * x[4] + a25 * x[5],
            a03 * x[0] + a13 * x[1] + a23 * x[2] + a33 * x[3] + a34 * x[4] + a35 * x[5],
            a04 * x[0] + a14 * x[1] + a24 * x[2] + a34 * x[3] + a44 * x[4] + a45 * x[5],
            a05 * x[0] + a15 * x[1] + a25 * x[2] + a35 * x[3] + a45 * x[4] + a55 * x[5])


@inline
def sym6_subtract_outer(W, i, c, x, y):
    """The upper triangle of W[i, c:c+21] -= x y^T (x y^T summed to a symmetric matrix)."""
    k = 0
    for r in range(6):
        for col in range(r, 6):
            W[i, c + k] -= x[r] * y[col]
            k += 1


@fast
def mat6_times(W, i, c, x):
    """W[i, c:c+36] (a row-major 6x6) times x."""
    return (dot6(get6(W, i, c), x), dot6(get6(W, i, c + 6), x), dot6(get6(W, i, c + 12), x),
            dot6(get6(W, i, c + 18), x), dot6(get6(W, i, c + 24), x), dot6(get6(W, i, c + 30), x))


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


# --- sine and cosine together ------------------------------------------------------------
PI = Fraction("3.14159265358979323846264338327950288419716939937510582097494459230781640628620899")


def cody_waite_parts(x, bits=33):
    """x as three doubles, the first two with `bits` significant bits, so that k times them is
    exact for |k| < 2**(53 - bits)."""
    parts = []
    for _ in range(2):
        mantissa, exponent = math.frexp(float(x))
        head = math.ldexp(math.floor(math.ldexp(mantissa, bits)), exponent - bits)
        parts.append(head)
        x -= Fraction(head)
    return (*parts, float(x))


PIO2_1, PIO2_2, PIO2_3 = cody_waite_parts(PI / 2)
TWO_OVER_PI = float(2 / PI)
REDUCE_MAX = 2.0 ** 19      # beyond |k| = 2**19 quarter turns: libm
SIN_TAYLOR = tuple((-1) ** n / math.factorial(2 * n + 1) for n in range(1, 9))   # x^3 .. x^17
COS_TAYLOR = tuple((-1) ** n / math.factorial(2 * n) for n in range(1, 9))       # x^2 .. x^16


@fast
def sin_cos(x):
    """(sin x, cos x): x - k pi/2 = r in [-pi/4, pi/4] (Cody-Waite, pi/2 in three parts), the
    Taylor series of sin r and cos r to r^17 and r^16 (the next terms are below 1e-19), and
    the quadrant k mod 4. About 20 % cheaper than libm's sin and cos here (measured on a
    Jacobian's chain); outside |x| < 2**19 pi/2, and for NaN and inf, libm's."""
    k = np.floor(x * TWO_OVER_PI + 0.5)
    if not abs(k) < REDUCE_MAX:
        return np.sin(x), np.cos(x)
    r = ((x - k * PIO2_1) - k * PIO2_2) - k * PIO2_3
    z = r * r
    ps, pc = SIN_TAYLOR[7], COS_TAYLOR[7]
    for n in range(6, -1, -1):
        ps, pc = ps * z + SIN_TAYLOR[n], pc * z + COS_TAYLOR[n]
    sin_r, cos_r = r + r * z * ps, 1.0 + z * pc
    quadrant = int(k) & 3       # the turn by k pi/2, without branches (random angles defeat prediction)
    odd = quadrant & 1
    sin_x, cos_x = odd * cos_r + (1 - odd) * sin_r, odd * sin_r + (1 - odd) * cos_r
    return (1 - (quadrant & 2)) * sin_x, (1 - ((quadrant + 1) & 2)) * cos_x


@fast
def finite(x):
    for k in range(x.shape[0]):
        if not np.isfinite(x[k]):
            return False
    return True


@fast
def finite_given(known, qdd, tau):
    """qdd is finite where known, tau elsewhere."""
    for k in range(known.shape[0]):
        if not np.isfinite(qdd[k] if known[k] else tau[k]):
            return False
    return True


@fast
def finite_rows(x):
    for k in range(x.shape[0]):
        if not finite(x[k]):
            return False
    return True


# --- the model's columns ------------------------------------------------------------------
@fast
def parent(model, i):
    return int(model[i, PARENT])


@fast
def ndofs(model, i):
    jt = model[i, JTYPE]
    return 6 if jt == FREE else 3 if jt == PLANAR else 1


@fast
def fail(code, body):
    """A status naming the body at fault."""
    return code + STATUS_BODY * (body + 1)


@fast
def user_v(model, i, d):
    """Index in the user's v (and tau) of coordinate d of body i's joint."""
    return int(model[i, VSRC]) + d


@fast
def add_torque(model, i, d, value, tau):
    """tau += G^T of coordinate d of body i's joint getting `value`."""
    tau[user_v(model, i, d)] += model[i, VSCALE] * value


@fast
def root_acceleration(model):
    """Gravity as a fictitious upward acceleration of the base (Featherstone, RBDA ch. 5)."""
    g = model.shape[0] - 1
    return (-model[g, GRAVITY], -model[g, GRAVITY + 1], -model[g, GRAVITY + 2], 0.0, 0.0, 0.0)


# --- kinematics ------------------------------------------------------------------------------
@fast
def joint_angle(model, q, W, i):
    """Body i's joint angle (or displacement) from the user's q (a mimic joint's from its
    leader's; a planar joint's third coordinate), with its sine and cosine, into
    W[i, W_JOINT:W_JOINT + 3]. A floating joint has none (what it writes is not read)."""
    th = q[int(model[i, ANGLE])] * model[i, QSCALE] + model[i, QOFF]
    W[i, W_JOINT], W[i, W_JOINT + 1], W[i, W_JOINT + 2] = (th,) + sin_cos(th)


@fast
def on_chain(model, i, body):
    """Body i <= body is body or one of its ancestors (its subtree reaches body); body -1: all."""
    return body < 0 or model[i, SUBTREE_END] > body


@fast
def rotate_z(A, s, c):
    """A R_z(th) for s, c = sin th, cos th: row a -> (c a0 + s a1, c a1 - s a0, a2)."""
    return (c * A[0] + s * A[1], c * A[1] - s * A[0], A[2], c * A[3] + s * A[4], c * A[4] - s * A[3], A[5],
            c * A[6] + s * A[7], c * A[7] - s * A[6], A[8])


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


@fast
def quaternion_matrix(x, y, z, w):
    return (1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w),
            2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w),
            2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y))


@fast
def origin(W):
    """The reference point o that the last `kinematics` took S and the inertias about."""
    return (W[0, W_ORIGIN], W[0, W_ORIGIN + 1], W[0, W_ORIGIN + 2])


@fast
def column(R, d):
    """Column d of a row-major 3x3 rotation: its axis d in the outer frame."""
    return (R[d], R[3 + d], R[6 + d])


@fast
def kinematics(model, q, W, body=-1, base_frame=False):
    """World placement (R, p) of every body's joint frame, the S of their coordinates and their
    inertias in world axes about the reference point o (layout.ORIGIN_BODY's joint origin), or
    only the placements and S from the root to `body`, about the world origin (Lynch and Park,
    Modern Robotics, ch. 4: placements as products of exponentials; Featherstone, Rigid Body
    Dynamics Algorithms, ch. 2 for the inertia). Positions are kept relative to o (W_P holds
    p - o, W_ORIGIN holds o), so nothing far from the robot enters a product. A revolute
    joint's S is [r x u; u] for its axis u through r = p - o, a prismatic one's [u; 0]; a
    floating joint's coordinates move the body along and about its own axes e_d ([e_d; 0],
    [r x e_d; e_d]), a planar one's along its x and y and about its z. base_frame: a floating
    root stays at the origin, unrotated, so that its S is the identity (M and C do not depend
    on where the base is).
    Returns BAD_QUATERNION (with the body) for a floating joint whose quaternion is not unit."""
    n = model.shape[0] - 1 if body < 0 else body + 1
    o = reference_point(model, q, int(model[-1, ORIGIN_BODY]), base_frame) if body < 0 else ZERO3
    for i in range(n):  # the joints' q, sin q, cos q first: off the placements' dependency chain
        if on_chain(model, i, body):
            joint_angle(model, q, W, i)
    for i in range(n):
        if not on_chain(model, i, body):
            continue
        par, jt, iq = parent(model, i), model[i, JTYPE], int(model[i, QSRC])
        Rp = get9(W, par, W_R) if par >= 0 else IDENTITY3
        pp = (W[par, W_P], W[par, W_P + 1], W[par, W_P + 2]) if par >= 0 else (-o[0], -o[1], -o[2])
        A = matmul3(Rp, get9(model, i, ROT))
        u = (A[2], A[5], A[8])      # the joint axis z, in the world
        th = W[i, W_JOINT]
        t = matvec3(Rp, (model[i, POS], model[i, POS + 1], model[i, POS + 2]))
        p = (pp[0] + t[0], pp[1] + t[1], pp[2] + t[2])
        if jt == REVOLUTE:
            R = rotate_z(A, W[i, W_JOINT + 1], W[i, W_JOINT + 2])
        elif jt == PRISMATIC:
            R, p = A, (p[0] + th * u[0], p[1] + th * u[1], p[2] + th * u[2])
        elif jt == FREE:
            x, y, z, w = q[iq + 3], q[iq + 4], q[iq + 5], q[iq + 6]
            if abs(x * x + y * y + z * z + w * w - 1.0) > QUATERNION_TOL:
                return fail(BAD_QUATERNION, i)
            if base_frame and par < 0:
                R, p = IDENTITY3, ZERO3
            else:
                R, t = matmul3(A, quaternion_matrix(x, y, z, w)), matvec3(A, (q[iq], q[iq + 1], q[iq + 2]))
                p = (p[0] + t[0], p[1] + t[1], p[2] + t[2])
        else:                       # planar: along the joint frame's x and y, about its z
            R, x, y = rotate_z(A, W[i, W_JOINT + 1], W[i, W_JOINT + 2]), q[iq], q[iq + 1]
            p = (p[0] + x * A[0] + y * A[1], p[1] + x * A[3] + y * A[4], p[2] + x * A[6] + y * A[7])
        set9(W, i, W_R, R)
        W[i, W_P], W[i, W_P + 1], W[i, W_P + 2] = p
        if jt == REVOLUTE:
            set6(W, i, W_S, cross3(p, u) + u)
        elif jt == PRISMATIC:
            set6(W, i, W_S, u + ZERO3)
        elif jt == FREE:
            for d in range(3):
                e = column(R, d)
                set6(W, i, W_S + 6 * d, e + ZERO3)
                set6(W, i, W_S + 18 + 6 * d, cross3(p, e) + e)
        else:
            set6(W, i, W_S, column(R, 0) + ZERO3)
            set6(W, i, W_S + 6, column(R, 1) + ZERO3)
            set6(W, i, W_S + 12, cross3(p, u) + u)
        if body < 0:
            set10(W, i, W_I, world_inertia(R, p, get10(model, i, INERTIA)))
    W[0, W_ORIGIN], W[0, W_ORIGIN + 1], W[0, W_ORIGIN + 2] = o
    return OK


@fast
def reference_point(model, q, ob, base_frame):
    """World position of body ob's joint origin, the kernels' reference point o (the world
    origin for ob = -1). The bodies above ob are prismatic: they slide but do not turn."""
    R, p = IDENTITY3, ZERO3
    for i in range(ob + 1):
        if not on_chain(model, i, ob):
            continue
        A = get9(model, i, ROT) if i == 0 else matmul3(R, get9(model, i, ROT))
        t = matvec3(R, (model[i, POS], model[i, POS + 1], model[i, POS + 2]))
        p, jt, iq = (p[0] + t[0], p[1] + t[1], p[2] + t[2]), model[i, JTYPE], int(model[i, QSRC])
        if jt == PRISMATIC:
            th = q[iq] * model[i, QSCALE] + model[i, QOFF]
            p = (p[0] + th * A[2], p[1] + th * A[5], p[2] + th * A[8])
        elif jt == FREE:
            if base_frame and parent(model, i) < 0:
                return ZERO3
            t = matvec3(A, (q[iq], q[iq + 1], q[iq + 2]))
            p = (p[0] + t[0], p[1] + t[1], p[2] + t[2])
        elif jt == PLANAR:
            x, y = q[iq], q[iq + 1]
            p = (p[0] + x * A[0] + y * A[1], p[1] + x * A[3] + y * A[4], p[2] + x * A[6] + y * A[7])
        R = A
    return p


@fast
def frame_about_origin(spec, W):
    """Placement (R, p - o) of the frame described by a spec row, its position about the
    reference point o of the last `kinematics`; body -1 is the world."""
    b = int(spec[F_BODY])
    R = (spec[F_ROT], spec[F_ROT + 1], spec[F_ROT + 2], spec[F_ROT + 3], spec[F_ROT + 4], spec[F_ROT + 5],
         spec[F_ROT + 6], spec[F_ROT + 7], spec[F_ROT + 8])
    p = (spec[F_POS], spec[F_POS + 1], spec[F_POS + 2])
    if b < 0:
        o = origin(W)
        return R, (p[0] - o[0], p[1] - o[1], p[2] - o[2])
    Rb = get9(W, b, W_R)
    t = matvec3(Rb, p)
    return matmul3(Rb, R), (W[b, W_P] + t[0], W[b, W_P + 1] + t[1], W[b, W_P + 2] + t[2])


@fast
def frame_in_world(spec, W):
    """World placement (R, p) of the frame described by a spec row; body -1 is the world."""
    if spec[F_BODY] < 0:
        return (spec[F_ROT], spec[F_ROT + 1], spec[F_ROT + 2], spec[F_ROT + 3], spec[F_ROT + 4], spec[F_ROT + 5],
                spec[F_ROT + 6], spec[F_ROT + 7], spec[F_ROT + 8]), (spec[F_POS], spec[F_POS + 1], spec[F_POS + 2])
    R, p = frame_about_origin(spec, W)
    o = origin(W)
    return R, (o[0] + p[0], o[1] + p[1], o[2] + p[2])


@fast
def world_wrench(ext, e, W):
    """External wrench row e about the reference point o, in world axes, from the frame it is
    given in (after `kinematics`)."""
    R, p = frame_about_origin(ext[e], W)
    f = (ext[e, F_WRENCH], ext[e, F_WRENCH + 1], ext[e, F_WRENCH + 2])
    n = (ext[e, F_WRENCH + 3], ext[e, F_WRENCH + 4], ext[e, F_WRENCH + 5])
    ref = ext[e, F_REF]
    if ref == LOCAL:         # rotate the frame's axes onto the world's
        f, n = matvec3(R, f), matvec3(R, n)
    if ref != WORLD:         # applied at the frame origin, p - o from o: n_o = n + (p - o) x f
        pf = cross3(p, f)
    else:                    # given about the world origin: n_o = n - o x f
        pf = cross3(f, origin(W))
    return f + (n[0] + pf[0], n[1] + pf[1], n[2] + pf[2])


@fast
def subtract_external_wrenches(ext, W):
    """W[body, W_F] -= each external wrench, about o (after `kinematics`)."""
    for e in range(ext.shape[0]):
        b = int(ext[e, F_BODY])
        if b >= 0:
            set6(W, b, W_F, axpy(-1.0, world_wrench(ext, e, W), get6(W, b, W_F)))


# --- inverse dynamics --------------------------------------------------------------------------
@fast
def rnea(model, q, v, a, ext, tau, W):
    """Inverse dynamics tau = M a + C v + g - J^T f_ext of one state (see `newton_euler`)."""
    if not (finite(q) and finite(v) and finite(a) and finite_rows(ext)):
        return NONFINITE
    if ext.shape[0]:        # wrenches are placed in the world
        status = kinematics(model, q, W)
        if status != OK:
            return status
    return newton_euler(model, q, v, a, ext, tau, W, ext.shape[0] > 0)


@fast
def transpose3(R):
    return (R[0], R[3], R[6], R[1], R[4], R[7], R[2], R[5], R[8])


@fast
def to_child(E, r, m):
    """A motion m in the parent's joint frame, in the child's: (E (m_lin - r x m_ang), E m_ang)."""
    rw = cross3(r, (m[3], m[4], m[5]))
    return matvec3(E, (m[0] - rw[0], m[1] - rw[1], m[2] - rw[2])) + matvec3(E, (m[3], m[4], m[5]))


@fast
def to_parent(E, r, f):
    """A force f in the child's joint frame, in the parent's: (E^T f_lin, E^T f_ang + r x E^T f_lin)."""
    ET = transpose3(E)
    fl, n = matvec3(ET, (f[0], f[1], f[2])), matvec3(ET, (f[3], f[4], f[5]))
    rf = cross3(r, fl)
    return fl + (n[0] + rf[0], n[1] + rf[1], n[2] + rf[2])


@fast
def newton_euler(model, q, v, a, ext, tau, W, placed):
    """Recursive Newton-Euler (Luh, Walker and Paul, 1980) in each body's joint frame, where a
    one-coordinate joint moves along or about z: with X_i = (E, r) the transform from the
    parent's frame (E its rotation, r the body's origin in the parent: the fixed placement times
    the joint's motion), v_i = X_i v_p + S qd, a_i = X_i a_p + S qdd + v_i x S qd,
    f_i = I_i a_i + v_i x* I_i v_i - f_ext, tau = S^T f_i + armature qdd, f_p += X_i^T f_i; the
    base moves up at g (Featherstone, RBDA ch. 5). A floating joint's S is the identity in
    its own frame, a planar joint's picks x, y and the turn about z. `placed`: `kinematics` has
    run (external wrenches need it), which leaves the joints' angles in W.
    Returns BAD_QUATERNION (with the body) for a floating joint whose quaternion is not unit."""
    nb = model.shape[0] - 1
    for i in range(0 if placed else nb):   # q, sin q, cos q first: a sine on the recursion's chain cost 20 %
        joint_angle(model, q, W, i)
    for i in range(nb):
        par, jt, iq, k = parent(model, i), model[i, JTYPE], int(model[i, QSRC]), user_v(model, i, 0)
        vp = get6(W, par, W_V) if par >= 0 else ZERO6
        ap = get6(W, par, W_A) if par >= 0 else root_acceleration(model)
        R, r = get9(model, i, ROT), (model[i, POS], model[i, POS + 1], model[i, POS + 2])
        if jt == REVOLUTE or jt == PRISMATIC:   # S = e_z, written out: v_i x S qd has four non-zero terms
            th = W[i, W_JOINT]
            qd, qdd = v[k] * model[i, VSCALE], a[k] * model[i, VSCALE]
            if jt == PRISMATIC:
                E, r = transpose3(R), (r[0] + th * R[2], r[1] + th * R[5], r[2] + th * R[8])
                vi, ai = to_child(E, r, vp), to_child(E, r, ap)
                vi = (vi[0], vi[1], vi[2] + qd, vi[3], vi[4], vi[5])
                ai = (ai[0] + vi[4] * qd, ai[1] - vi[3] * qd, ai[2] + qdd, ai[3], ai[4], ai[5])
            else:
                E = transpose3(rotate_z(R, W[i, W_JOINT + 1], W[i, W_JOINT + 2]))
                vi, ai = to_child(E, r, vp), to_child(E, r, ap)
                vi = (vi[0], vi[1], vi[2], vi[3], vi[4], vi[5] + qd)
                ai = (ai[0] + vi[1] * qd, ai[1] - vi[0] * qd, ai[2], ai[3] + vi[4] * qd, ai[4] - vi[3] * qd, ai[5] + qdd)
        else:
            if jt == FREE:
                x, y, z, w = q[iq + 3], q[iq + 4], q[iq + 5], q[iq + 6]
                if abs(x * x + y * y + z * z + w * w - 1.0) > QUATERNION_TOL:
                    return fail(BAD_QUATERNION, i)
                R, t = matmul3(R, quaternion_matrix(x, y, z, w)), matvec3(R, (q[iq], q[iq + 1], q[iq + 2]))
                vJ = (v[k], v[k + 1], v[k + 2], v[k + 3], v[k + 4], v[k + 5])
                aJ = (a[k], a[k + 1], a[k + 2], a[k + 3], a[k + 4], a[k + 5])
            else:           # planar
                t = matvec3(R, (q[iq], q[iq + 1], 0.0))
                R = rotate_z(R, W[i, W_JOINT + 1], W[i, W_JOINT + 2])
                vJ, aJ = (v[k], v[k + 1], 0.0, 0.0, 0.0, v[k + 2]), (a[k], a[k + 1], 0.0, 0.0, 0.0, a[k + 2])
            E, r = transpose3(R), (r[0] + t[0], r[1] + t[1], r[2] + t[2])
            vi, ai = plus(to_child(E, r, vp), vJ), plus(to_child(E, r, ap), aJ)
            if par >= 0:    # at the root v_i = S qd: v_i x S qd = 0
                ai = plus(ai, cross_motion(vi, vJ))
        set6(W, i, W_V, vi)
        set6(W, i, W_A, ai)
        set9(W, i, W_X, E)
        W[i, W_X + 9], W[i, W_X + 10], W[i, W_X + 11] = r
        set6(W, i, W_F, plus(inertia_times(model, i, INERTIA, ai), cross_force(vi, inertia_times(model, i, INERTIA, vi))))
    for e in range(ext.shape[0]):   # each wrench from the reference point o into its body's frame
        b = int(ext[e, F_BODY])
        if b >= 0:
            f = world_wrench(ext, e, W)
            RT, p = transpose3(get9(W, b, W_R)), (W[b, W_P], W[b, W_P + 1], W[b, W_P + 2])
            pf = cross3(p, (f[0], f[1], f[2]))
            local = matvec3(RT, (f[0], f[1], f[2])) + matvec3(RT, (f[3] - pf[0], f[4] - pf[1], f[5] - pf[2]))
            set6(W, b, W_F, axpy(-1.0, local, get6(W, b, W_F)))
    tau[:] = 0.0
    for i in range(nb - 1, -1, -1):
        par, jt, fi = parent(model, i), model[i, JTYPE], get6(W, i, W_F)
        if jt == FREE:
            for d in range(6):
                add_torque(model, i, d, fi[d], tau)
        elif jt == PLANAR:
            add_torque(model, i, 0, fi[0], tau)
            add_torque(model, i, 1, fi[1], tau)
            add_torque(model, i, 2, fi[5], tau)
        else:
            qdd = a[user_v(model, i, 0)] * model[i, VSCALE]
            add_torque(model, i, 0, (fi[2] if jt == PRISMATIC else fi[5]) + model[i, ARMATURE] * qdd, tau)
        if par >= 0:
            r = (W[i, W_X + 9], W[i, W_X + 10], W[i, W_X + 11])
            set6(W, par, W_F, plus(get6(W, par, W_F), to_parent(get9(W, i, W_X), r, fi)))
    return OK


@fast
def rnea_rows(model, Q, V, A, EXT, TAU, status, lo, hi, W):
    for s in range(lo, hi):
        status[s] = rnea(model, Q[s], V[s], A[s], EXT[s], TAU[s], W)


@parallel
def rnea_batch(model, Q, V, A, EXT, TAU, nthreads):
    status = np.zeros(len(Q), np.int64)
    for t in prange(nthreads):
        rnea_rows(model, Q, V, A, EXT, TAU, status, t * len(Q) // nthreads, (t + 1) * len(Q) // nthreads,
                  workspace(model))
    return status


# --- mass matrix -----------------------------------------------------------------------------
@fast
def crba(model, q, M, W):
    """Mass matrix M(q) of one state (see `composite_inertia`)."""
    if not finite(q):
        return NONFINITE
    status = kinematics(model, q, W, base_frame=True)
    if status == OK:
        composite_inertia(model, M, W)
    return status


@fast
def add_symmetric(M, a, b, x):
    """M[a, b] += x and M[b, a] += x (twice x on the diagonal: a mimic joint below its leader)."""
    M[a, b] += x
    M[b, a] += x


@fast
def composite_inertia(model, M, W):
    """Composite-rigid-body algorithm (Featherstone, RBDA ch. 6) after `kinematics` in the
    base frame: Ic_p += Ic_i from the leaves up and F = Ic_i S_i, then M_ji = S_j^T F_i for every
    i in j's subtree, a contiguous range of bodies (no walk to the root), plus armature on the
    diagonal. Turns W's inertias into composite ones; F is left in W_U."""
    nb = model.shape[0] - 1
    for i in range(nb - 1, -1, -1):
        for d in range(ndofs(model, i)):
            set6(W, i, W_U + 6 * d, inertia_times(W, i, W_I, get6(W, i, W_S + 6 * d)))
        par = parent(model, i)
        if par >= 0:
            for k in range(10):
                W[par, W_I + k] += W[i, W_I + k]
    M[:, :] = 0.0       # bodies on different branches do not couple
    multi = model[-1, MULTI] != 0.0
    for j in range(nb):
        end, nj = int(model[j, SUBTREE_END]), ndofs(model, j)
        if nj == 1:
            S, a, sj = get6(W, j, W_S), user_v(model, j, 0), model[j, VSCALE]
            M[a, a] += sj * sj * (dot6(S, get6(W, j, W_U)) + model[j, ARMATURE])
            for i in range(j + 1, end):     # each body's first coordinate
                add_symmetric(M, a, user_v(model, i, 0), sj * model[i, VSCALE] * dot6(S, get6(W, i, W_U)))
            if multi:
                other_coordinates(model, M, W, j, end, a, S)
        elif nj == 6 and parent(model, j) < 0:  # the free root, at the origin: S = 1, its rows are Ic and the F below
            r = user_v(model, j, 0)
            for d in range(6):
                set6(M, r + d, r, get6(W, j, W_U + 6 * d))
            for i in range(j + 1, end):
                for d in range(ndofs(model, i)):
                    F, b, x = get6(W, i, W_U + 6 * d), user_v(model, i, d), model[i, VSCALE]
                    add_symmetric(M, r, b, x * F[0])
                    add_symmetric(M, r + 1, b, x * F[1])
                    add_symmetric(M, r + 2, b, x * F[2])
                    add_symmetric(M, r + 3, b, x * F[3])
                    add_symmetric(M, r + 4, b, x * F[4])
                    add_symmetric(M, r + 5, b, x * F[5])
        else:                       # several coordinates: its own block, then the bodies below
            for e in range(nj):
                S, a = get6(W, j, W_S + 6 * e), user_v(model, j, e)
                for d in range(e, nj):
                    M[a, user_v(model, j, d)] = M[user_v(model, j, d), a] = dot6(S, get6(W, j, W_U + 6 * d))
                for i in range(j + 1, end):
                    for d in range(ndofs(model, i)):
                        add_symmetric(M, a, user_v(model, i, d), model[i, VSCALE] * dot6(S, get6(W, i, W_U + 6 * d)))


@fast
def other_coordinates(model, M, W, j, end, a, S):
    """M_ab += S . F for the coordinates after the first of the multi-coordinate joints in
    j's subtree (a: j's coordinate, S its motion)."""
    for i in range(j + 1, end):
        for d in range(1, ndofs(model, i)):
            add_symmetric(M, a, user_v(model, i, d), dot6(S, get6(W, i, W_U + 6 * d)))


@fast
def crba_rows(model, Q, M, status, lo, hi, W):
    for s in range(lo, hi):
        status[s] = crba(model, Q[s], M[s], W)


@parallel
def crba_batch(model, Q, M, nthreads):
    status = np.zeros(len(Q), np.int64)
    for t in prange(nthreads):
        crba_rows(model, Q, M, status, t * len(Q) // nthreads, (t + 1) * len(Q) // nthreads, workspace(model))
    return status


# --- forward and hybrid dynamics --------------------------------------------------------------
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
def hybrid(model, q, v, known, qdd, tau, ext, W):
    """Hybrid dynamics of one state: coordinates with known[k] keep qdd[k] and get tau[k];
    the others keep tau[k] (never written) and get qdd[k]. With nothing known it is forward
    dynamics. Mimic joints couple coordinates, which the articulated-body recursion cannot
    handle: models with them solve the reduced dense system instead. Only the given entries
    are read (qdd[k] where known, tau[k] elsewhere). SINGULAR where the mass matrix is not
    positive definite."""
    if not (finite(q) and finite(v) and finite_given(known, qdd, tau) and finite_rows(ext)):
        return NONFINITE
    status = kinematics(model, q, W)
    if status != OK:
        return status
    if model[-1, MIMIC]:
        status = reduced_hybrid(model, q, v, known, qdd, tau, ext, W)
    else:
        status = articulated_body(model, v, known, qdd, tau, ext, W)
    if status == OK and not (finite(qdd) and finite(tau)):
        return OVERFLOW     # finite inputs, a positive definite M and still inf: absurdly large inputs
    return status


@fast
def articulated_body(model, v, known, qdd, tau, ext, W):
    """Articulated-body hybrid dynamics (Featherstone, RBDA ch. 9; Kim, Lie group
    formulation of articulated rigid body dynamics, hybrid dynamics), after `kinematics`; with
    nothing known it is Featherstone's ABA (RBDA ch. 7). In world axes about o. A joint with
    unknown coordinates S_u (some of its S's columns): U = Ia S_u, D = S_u^T U (+ armature for one
    coordinate), u = tau_u - S_u^T pA; the parent gets Ia - U D^-1 U^T and
    pA + Ia c + U D^-1 (u - U^T c) (with every coordinate known: Ia and pA + Ia c), where
    c = v_p x S qd plus S_k qdd_k of the known ones. Forward: a' = a_p + c,
    qdd_u = D^-1 (u - U^T a'), a = a' + S_u qdd_u, and tau_k = S_k^T (Ia a + pA) + armature qdd_k.
    One coordinate keeps 1 / D; several keep D = L L^T and Y = U L^-T, z = L^-1 u (`project`).
    Ia is kept symmetric: its upper triangle (21 numbers) in W_IA. Returns SINGULAR (with the
    body) where a D is not positive definite."""
    nb = model.shape[0] - 1
    for i in range(nb):
        par = parent(model, i)
        vp = get6(W, par, W_V) if par >= 0 else ZERO6
        vJ, cJ, m = ZERO6, ZERO6, 0     # S qd, S_k qdd_k
        for d in range(ndofs(model, i)):
            S, k = get6(W, i, W_S + 6 * d), user_v(model, i, d)
            vJ = axpy(v[k], S, vJ)
            if known[k]:
                cJ = axpy(qdd[k], S, cJ)
            else:
                W[i, W_UNK + m] = d
                m += 1
        W[i, W_NUNK] = m
        vi = plus(vp, vJ)
        set6(W, i, W_V, vi)
        set6(W, i, W_C, plus(cross_motion(vp, vJ), cJ))
        set6(W, i, W_F, cross_force(vi, inertia_times(W, i, W_I, vi)))
        symmetric_inertia(W, i)
    subtract_external_wrenches(ext, W)
    for i in range(nb - 1, -1, -1):
        par, m, n = parent(model, i), int(W[i, W_NUNK]), ndofs(model, i)
        pA = get6(W, i, W_F)
        if m and n == 1:
            S = get6(W, i, W_S)
            U = sym6_times(W, i, W_IA, S)
            set6(W, i, W_U, U)
            lin, ang, arm = S[0] * U[0] + S[1] * U[1] + S[2] * U[2], S[3] * U[3] + S[4] * U[4] + S[5] * U[5], model[i, ARMATURE]
            D = lin + ang + arm
            if not D > SINGULAR_TOL * (abs(lin) + abs(ang) + arm):
                return fail(SINGULAR, i)
            W[i, W_D] = 1.0 / D
            W[i, W_UU] = tau[user_v(model, i, 0)] - dot6(S, pA)
        elif m and not project(model, tau, i, m, pA, W):
            return fail(SINGULAR, i)
        if par < 0:
            continue
        c = get6(W, i, W_C)
        pa = plus(pA, sym6_times(W, i, W_IA, c))
        for k in range(21):
            W[par, W_IA + k] += W[i, W_IA + k]
        if m and n == 1:
            U, dinv = get6(W, i, W_U), W[i, W_D]
            UDinv = (dinv * U[0], dinv * U[1], dinv * U[2], dinv * U[3], dinv * U[4], dinv * U[5])
            pa = axpy(W[i, W_UU] - dot6(U, c), UDinv, pa)
            sym6_subtract_outer(W, par, W_IA, UDinv, U)
        else:
            for a in range(m):       # U D^-1 U^T = Y Y^T, U D^-1 (u - U^T c) = Y (z - Y^T c)
                Y = get6(W, i, W_U + 6 * a)
                pa = axpy(W[i, W_UU + a] - dot6(Y, c), Y, pa)
                sym6_subtract_outer(W, par, W_IA, Y, Y)
        set6(W, par, W_F, plus(get6(W, par, W_F), pa))
    for i in range(nb):
        par, m, n = parent(model, i), int(W[i, W_NUNK]), ndofs(model, i)
        ai = plus(get6(W, par, W_A) if par >= 0 else root_acceleration(model), get6(W, i, W_C))
        if m and n == 1:
            x = W[i, W_D] * (W[i, W_UU] - dot6(get6(W, i, W_U), ai))
            qdd[user_v(model, i, 0)] = x
            ai = axpy(x, get6(W, i, W_S), ai)
        elif m:
            ai = solve_projected(model, qdd, i, m, ai, W)
        set6(W, i, W_A, ai)
        if m == n:
            continue            # no known coordinate: no torque to report
        f = plus(sym6_times(W, i, W_IA, ai), get6(W, i, W_F))
        for d in range(n):
            k = user_v(model, i, d)
            if known[k]:
                tau[k] = model[i, ARMATURE] * qdd[k] + dot6(get6(W, i, W_S + 6 * d), f)
    return OK


@fast
def packed(a, b):
    """Offset of entry (a, b), b <= a, of a lower triangle stored row by row."""
    return a * (a + 1) // 2 + b


@fast
def project(model, tau, i, m, pA, W):
    """For the m unknown coordinates S_u of body i's joint: D = S_u^T Ia S_u factored L L^T into
    W_D (packed, 1 / L_aa on the diagonal), Y = U L^-T (U = Ia S_u) into W_U and
    z = L^-1 (tau_u - S_u^T pA) into W_UU. False if D is not positive definite."""
    for a in range(m):
        S = get6(W, i, W_S + 6 * int(W[i, W_UNK + a]))
        U = sym6_times(W, i, W_IA, S)
        set6(W, i, W_U + 6 * a, U)
        W[i, W_UU + a] = tau[user_v(model, i, int(W[i, W_UNK + a]))] - dot6(S, pA)
        for b in range(a + 1):
            W[i, W_D + packed(a, b)] = dot6(get6(W, i, W_S + 6 * int(W[i, W_UNK + b])), U)
    for a in range(m):          # Cholesky, row by row
        y = d0 = W[i, W_D + packed(a, a)]
        for b in range(a):
            y -= W[i, W_D + packed(a, b)] ** 2
        if not y > SINGULAR_TOL * abs(d0):
            return False
        inv = 1.0 / np.sqrt(y)
        W[i, W_D + packed(a, a)] = inv
        for r in range(a + 1, m):
            y = W[i, W_D + packed(r, a)]
            for b in range(a):
                y -= W[i, W_D + packed(r, b)] * W[i, W_D + packed(a, b)]
            W[i, W_D + packed(r, a)] = y * inv
    for a in range(m):          # Y = U L^-T and z = L^-1 u, by forward substitution
        Y, z = get6(W, i, W_U + 6 * a), W[i, W_UU + a]
        for b in range(a):
            Lab = W[i, W_D + packed(a, b)]
            Y, z = axpy(-Lab, get6(W, i, W_U + 6 * b), Y), z - Lab * W[i, W_UU + b]
        inv = W[i, W_D + packed(a, a)]
        set6(W, i, W_U + 6 * a, (inv * Y[0], inv * Y[1], inv * Y[2], inv * Y[3], inv * Y[4], inv * Y[5]))
        W[i, W_UU + a] = inv * z
    return True


@fast
def solve_projected(model, qdd, i, m, ai, W):
    """qdd_u = L^-T (z - Y^T a') for body i's m unknown coordinates (after `project`); returns
    a' + S_u qdd_u."""
    for a in range(m):
        W[i, W_UU + a] -= dot6(get6(W, i, W_U + 6 * a), ai)
    for a in range(m - 1, -1, -1):  # L^T x = z - Y^T a'
        x = W[i, W_UU + a]
        for r in range(a + 1, m):
            x -= W[i, W_D + packed(r, a)] * W[i, W_UU + r]
        W[i, W_UU + a] = x * W[i, W_D + packed(a, a)]
    for a in range(m):
        d = int(W[i, W_UNK + a])
        qdd[user_v(model, i, d)] = W[i, W_UU + a]
        ai = axpy(W[i, W_UU + a], get6(W, i, W_S + 6 * d), ai)
    return ai


@fast
def body_of_coordinate(model, k):
    """The first body whose joint moves user coordinate k."""
    for i in range(model.shape[0] - 1):
        for d in range(ndofs(model, i)):
            if user_v(model, i, d) == k:
                return i
    return -1


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
def hybrid_rows(model, Q, V, KNOWN, QDD, TAU, EXT, status, lo, hi, W):
    """KNOWN: a mask per state, or one row for every state."""
    for s in range(lo, hi):
        status[s] = hybrid(model, Q[s], V[s], KNOWN[s if len(KNOWN) > 1 else 0], QDD[s], TAU[s], EXT[s], W)


@parallel
def hybrid_batch(model, Q, V, KNOWN, QDD, TAU, EXT, nthreads):
    status = np.zeros(len(Q), np.int64)
    for t in prange(nthreads):
        hybrid_rows(model, Q, V, KNOWN, QDD, TAU, EXT, status,
                    t * len(Q) // nthreads, (t + 1) * len(Q) // nthreads, workspace(model))
    return status


# --- frames: placement and Jacobian -------------------------------------------------------------
@fast
def frame_jacobian(model, q, spec, J, H, W):
    """Placement H (4x4) of a frame and its Jacobian J (6 x nv, rows [linear; angular]) in the
    spec's reference (Lynch and Park, Modern Robotics, ch. 5: the space Jacobian's columns are the joints' world screws S,
    ours at the world origin; LOCAL_WORLD_ALIGNED shifts them to the frame origin p,
    v_p = v_o + w x p, and LOCAL rotates them into the frame's axes)."""
    if not finite(q):
        return NONFINITE
    status = kinematics(model, q, W, int(spec[F_BODY]))
    if status != OK:
        return status
    R, p = frame_in_world(spec, W)
    for r in range(3):
        H[r, 0], H[r, 1], H[r, 2], H[r, 3] = R[3 * r], R[3 * r + 1], R[3 * r + 2], p[r]
    H[3, 0], H[3, 1], H[3, 2], H[3, 3] = 0.0, 0.0, 0.0, 1.0
    J[:, :] = 0.0
    ref, RT, body = spec[F_REF], transpose3(R), int(spec[F_BODY])
    for j in range(body + 1):
        if not on_chain(model, j, body):
            continue
        g = model[j, VSCALE]
        for e in range(ndofs(model, j)):
            s = get6(W, j, W_S + 6 * e)
            lin, ang = (s[0], s[1], s[2]), (s[3], s[4], s[5])
            if ref != WORLD:
                wp = cross3(ang, p)
                lin = (lin[0] + wp[0], lin[1] + wp[1], lin[2] + wp[2])
            if ref == LOCAL:    # R^T times each half
                lin, ang = matvec3(RT, lin), matvec3(RT, ang)
            k = user_v(model, j, e)
            J[0, k] += g * lin[0]
            J[1, k] += g * lin[1]
            J[2, k] += g * lin[2]
            J[3, k] += g * ang[0]
            J[4, k] += g * ang[1]
            J[5, k] += g * ang[2]
    return OK


@fast
def frame_jacobian_rows(model, Q, spec, J, H, status, lo, hi, W):
    for s in range(lo, hi):
        status[s] = frame_jacobian(model, Q[s], spec, J[s], H[s], W)


@parallel
def frame_jacobian_batch(model, Q, spec, J, H, nthreads):
    status = np.zeros(len(Q), np.int64)
    for t in prange(nthreads):
        frame_jacobian_rows(model, Q, spec, J, H, status, t * len(Q) // nthreads, (t + 1) * len(Q) // nthreads,
                            workspace(model))
    return status


# --- Coriolis matrix -----------------------------------------------------------------------
@fast
def coriolis_body(W, i, vel):
    """W[i, W_IA] (6x6, row-major) = B = (v x* I - I v x + (I v) xbar*) / 2, so that Mdot = C + C^T
    and C v = v x* I v (the Christoffel-consistent split that makes Mdot - 2C skew-symmetric, per body); its
    column k is (v x* (I e_k) - I (v x e_k) + e_k x* (I v)) / 2, as (I v) xbar* m = m x* (I v)."""
    h = inertia_times(W, i, W_I, vel)
    for k in range(6):
        e = (1.0 if k == 0 else 0.0, 1.0 if k == 1 else 0.0, 1.0 if k == 2 else 0.0,
             1.0 if k == 3 else 0.0, 1.0 if k == 4 else 0.0, 1.0 if k == 5 else 0.0)
        col = plus(axpy(-1.0, inertia_times(W, i, W_I, cross_motion(vel, e)),
                        cross_force(vel, inertia_times(W, i, W_I, e))), cross_force(e, h))
        W[i, W_IA + k], W[i, W_IA + 6 + k], W[i, W_IA + 12 + k] = 0.5 * col[0], 0.5 * col[1], 0.5 * col[2]
        W[i, W_IA + 18 + k], W[i, W_IA + 24 + k], W[i, W_IA + 30 + k] = 0.5 * col[3], 0.5 * col[4], 0.5 * col[5]


@fast
def coriolis(model, q, v, C, W):
    """Coriolis matrix C(q, v) with Mdot - 2C skew-symmetric: C = sum_k J_k^T (I_k Jdot_k +
    B_k J_k) over bodies, gathered with composite inertias Ic and composite B (Echeandia &
    Wensing's recursion), where the world-frame Sdot of a joint is v_body x S (kept in W_U)."""
    if not (finite(q) and finite(v)):
        return NONFINITE
    status = kinematics(model, q, W)
    if status != OK:
        return status
    nb = model.shape[0] - 1
    for i in range(nb):
        par = parent(model, i)
        vi = get6(W, par, W_V) if par >= 0 else ZERO6
        for d in range(ndofs(model, i)):
            vi = axpy(v[user_v(model, i, d)] * model[i, VSCALE], get6(W, i, W_S + 6 * d), vi)
        set6(W, i, W_V, vi)
        for d in range(ndofs(model, i)):
            set6(W, i, W_U + 6 * d, cross_motion(vi, get6(W, i, W_S + 6 * d)))
        coriolis_body(W, i, vi)
    C[:, :] = 0.0
    for i in range(nb - 1, -1, -1):
        par, si = parent(model, i), model[i, VSCALE]
        for d in range(ndofs(model, i)):
            S, b = get6(W, i, W_S + 6 * d), user_v(model, i, d)
            h = inertia_times(W, i, W_I, S)                                         # Ic S_b
            f1 = plus(inertia_times(W, i, W_I, get6(W, i, W_U + 6 * d)), mat6_times(W, i, W_IA, S))
            f3 = ZERO6                                                              # Bc^T S_b
            for r in range(6):
                f3 = axpy(S[r], get6(W, i, W_IA + 6 * r), f3)
            j = i
            while j >= 0:
                sj = si * model[j, VSCALE]
                for e in range(ndofs(model, j)):
                    a = user_v(model, j, e)
                    C[a, b] += sj * dot6(get6(W, j, W_S + 6 * e), f1)
                    if j != i:   # b below a: C[b, a] = (Ic S_b) . Sdot_a + (Bc^T S_b) . S_a
                        C[b, a] += sj * (dot6(h, get6(W, j, W_U + 6 * e)) + dot6(f3, get6(W, j, W_S + 6 * e)))
                j = parent(model, j)
        if par >= 0:
            for k in range(10):
                W[par, W_I + k] += W[i, W_I + k]
            for k in range(36):
                W[par, W_IA + k] += W[i, W_IA + k]
    return OK


@fast
def coriolis_rows(model, Q, V, C, status, lo, hi, W):
    for s in range(lo, hi):
        status[s] = coriolis(model, Q[s], V[s], C[s], W)


@parallel
def coriolis_batch(model, Q, V, C, nthreads):
    status = np.zeros(len(Q), np.int64)
    for t in prange(nthreads):
        coriolis_rows(model, Q, V, C, status, t * len(Q) // nthreads, (t + 1) * len(Q) // nthreads, workspace(model))
    return status
