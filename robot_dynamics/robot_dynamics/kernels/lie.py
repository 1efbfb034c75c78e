"""The Lie groups of rigid motion on tuples: SO(3), SE(3) and SE(2), their exponential, logarithm
and the right Jacobians of the exponential (Lynch and Park, Modern Robotics, ch. 3; Kim, Lie group
formulation of articulated rigid body dynamics, section 1; Barfoot, State Estimation for
Robotics, section 7.1 for the Jacobians' closed forms).

Twists are [linear; angular] (Pinocchio's order), rotations row-major 9-tuples, quaternions
(x, y, z, w). T exp(xi) moves T by the body twist xi for unit time. The right Jacobian Jr(xi)
maps the rate of the exponential coordinates to the body velocity, d/dt exp(xi) =
exp(xi) (Jr(xi) xi')^ (Pinocchio's Jexp3 / Jexp6); its inverse is Pinocchio's Jlog3 / Jlog6 at
exp(xi): log(exp(xi) exp(d)) = xi + Jr(xi)^-1 d + O(d^2).

The coefficients of the closed forms cancel digits as the angle t goes to 0 (t - sin t ~ t^3 / 6):
below SERIES_MAX they come from their Taylor series (a fixed-count Horner loop), above from the
closed forms, each accurate to a few ulps on either side.
"""
import math

import numpy as np

from .jit import fast
from .spatial import cross3

#: below this angle the coefficients come from their series (the closed forms' cancellation,
#: ~eps / t of the result, stays under 1e-15 above it; the series' truncation, 12 terms, ~1e-24)
SERIES_MAX = 0.5
_N = 12
#: sin t / t, (1 - cos t) / t^2, (t - sin t) / t^3, (t^2 + 2 cos t - 2) / (2 t^4),
#: (2 t - 3 sin t + t cos t) / (2 t^5), as series in t^2
A_SERIES = tuple((-1) ** k / math.factorial(2 * k + 1) for k in range(_N))
B_SERIES = tuple((-1) ** k / math.factorial(2 * k + 2) for k in range(_N))
C_SERIES = tuple((-1) ** k / math.factorial(2 * k + 3) for k in range(_N))
D_SERIES = tuple((-1) ** k / math.factorial(2 * k + 4) for k in range(_N))
E_SERIES = tuple((-1) ** k * (k + 1) / math.factorial(2 * k + 5) for k in range(_N))
#: 1 / t^2 - cot(t / 2) / (2 t) = sum |B_2k| t^(2k-2) / (2k)!  (k >= 1), B the Bernoulli numbers
BERNOULLI = (1 / 6, 1 / 30, 1 / 42, 1 / 30, 5 / 66, 691 / 2730, 7 / 6, 3617 / 510, 43867 / 798, 174611 / 330,
             854513 / 138, 236364091 / 2730)
F_SERIES = tuple(BERNOULLI[k] / math.factorial(2 * k + 2) for k in range(_N))


@fast
def horner(coefficients, z):
    """sum_k coefficients[k] z^k over the _N coefficients."""
    s = coefficients[_N - 1]
    for k in range(_N - 2, -1, -1):
        s = s * z + coefficients[k]
    return s


@fast
def so3_coefficients(t):
    """a = sin t / t, b = (1 - cos t) / t^2, c = (t - sin t) / t^3 of the angle t >= 0."""
    if t < SERIES_MAX:
        z = t * t
        return horner(A_SERIES, z), horner(B_SERIES, z), horner(C_SERIES, z)
    s, co = np.sin(t), np.cos(t)
    return s / t, (1.0 - co) / (t * t), (t - s) / (t * t * t)


@fast
def inverse_coefficient(t):
    """f = 1 / t^2 - (1 + cos t) / (2 t sin t), the [w]^2 coefficient of Jr^-1 and V^-1."""
    if t < SERIES_MAX:
        return horner(F_SERIES, t * t)
    return 1.0 / (t * t) - np.cos(0.5 * t) / (2.0 * t * np.sin(0.5 * t))


@fast
def norm3(w):
    return np.sqrt(w[0] * w[0] + w[1] * w[1] + w[2] * w[2])


@fast
def combine(x, s1, y, s2, z):
    """x + s1 y + s2 z on 3-vectors."""
    return (x[0] + s1 * y[0] + s2 * z[0], x[1] + s1 * y[1] + s2 * z[1], x[2] + s1 * y[2] + s2 * z[2])


# --- SO(3) ---------------------------------------------------------------------------------------
@fast
def exp3(w):
    """R = exp([w]) = 1 + a [w] + b [w]^2 (Rodrigues)."""
    a, b, _ = so3_coefficients(norm3(w))
    x, y, z = w
    xx, yy, zz, xy, xz, yz = x * x, y * y, z * z, x * y, x * z, y * z
    return (1.0 - b * (yy + zz), b * xy - a * z, b * xz + a * y,
            b * xy + a * z, 1.0 - b * (xx + zz), b * yz - a * x,
            b * xz - a * y, b * yz + a * x, 1.0 - b * (xx + yy))


@fast
def log3(R):
    """w with exp([w]) = R, |w| in [0, pi]: the angle from atan2 of the skew and symmetric parts;
    the axis from the skew part, and from the symmetric part (R + R^T) / 2 = c 1 + (1 - c) u u^T
    past a quarter turn, where the skew part sin(t) u loses digits."""
    k = (0.5 * (R[7] - R[5]), 0.5 * (R[2] - R[6]), 0.5 * (R[3] - R[1]))     # sin(t) u
    s, c = norm3(k), 0.5 * (R[0] + R[4] + R[8] - 1.0)
    t = np.arctan2(s, c)
    if c > 0.0:
        f = 1.0 / horner(A_SERIES, t * t) if t < SERIES_MAX else t / s
        return (f * k[0], f * k[1], f * k[2])
    d = 1.0 - c       # u u^T = (sym(R) - c 1) / d, d in [1, 2]
    uu = ((R[0] - c) / d, (R[4] - c) / d, (R[8] - c) / d)
    i = 0 if uu[0] >= uu[1] and uu[0] >= uu[2] else (1 if uu[1] >= uu[2] else 2)
    ui = np.sqrt(max(uu[i], 0.0))
    if i == 0:
        u = (ui, 0.5 * (R[1] + R[3]) / (d * ui), 0.5 * (R[2] + R[6]) / (d * ui))
    elif i == 1:
        u = (0.5 * (R[1] + R[3]) / (d * ui), ui, 0.5 * (R[5] + R[7]) / (d * ui))
    else:
        u = (0.5 * (R[2] + R[6]) / (d * ui), 0.5 * (R[5] + R[7]) / (d * ui), ui)
    n = norm3(u)
    sign = -1.0 if u[0] * k[0] + u[1] * k[1] + u[2] * k[2] < 0.0 else 1.0
    f = sign * t / n
    return (f * u[0], f * u[1], f * u[2])


@fast
def jexp3_times(w, x):
    """Jr(w) x = x - b w x x + c w x (w x x), the right Jacobian of exp on SO(3)."""
    _, b, c = so3_coefficients(norm3(w))
    wx = cross3(w, x)
    return combine(x, -b, wx, c, cross3(w, wx))


@fast
def jlog3_times(w, x):
    """Jr(w)^-1 x = x + 1/2 w x x + f w x (w x x)."""
    f = inverse_coefficient(norm3(w))
    wx = cross3(w, x)
    return combine(x, 0.5, wx, f, cross3(w, wx))


# --- SE(3) ---------------------------------------------------------------------------------------
@fast
def exp6(xi):
    """(R, p) = exp of the twist xi = [v; w]: R = exp3(w), p = V(w) v, V = 1 + b [w] + c [w]^2."""
    w, v = (xi[3], xi[4], xi[5]), (xi[0], xi[1], xi[2])
    _, b, c = so3_coefficients(norm3(w))
    wv = cross3(w, v)
    return exp3(w), combine(v, b, wv, c, cross3(w, wv))


@fast
def log6(R, p):
    """The twist [v; w] with exp6 = (R, p): w = log3(R), v = V(w)^-1 p, V^-1 = 1 - [w]/2 + f [w]^2."""
    w = log3(R)
    f = inverse_coefficient(norm3(w))
    wp = cross3(w, p)
    v = combine(p, -0.5, wp, f, cross3(w, wp))
    return (v[0], v[1], v[2], w[0], w[1], w[2])


@fast
def q_times(v, w, x, t):
    """Q(v, w) x of the SE(3) left Jacobian [[Jl(w), Q], [0, Jl(w)]] (Barfoot, eq. 7.86), t = |w|:
    Q = [v]/2 + c ([w][v] + [v][w] + [w][v][w]) + d ([w]^2[v] + [v][w]^2 - 3 [w][v][w])
        + e ([w][v][w]^2 + [w]^2[v][w])."""
    if t < SERIES_MAX:
        z = t * t
        c, d, e = horner(C_SERIES, z), horner(D_SERIES, z), horner(E_SERIES, z)
    else:
        s, co = np.sin(t), np.cos(t)
        t2 = t * t
        c, d, e = (t - s) / (t2 * t), (t2 + 2.0 * co - 2.0) / (2.0 * t2 * t2), (2.0 * t - 3.0 * s + t * co) / (2.0 * t2 * t2 * t)
    vx = cross3(v, x)               # [v] x
    wx = cross3(w, x)               # [w] x
    wvx = cross3(w, vx)             # [w][v] x
    vwx = cross3(v, wx)             # [v][w] x
    wvwx = cross3(w, vwx)           # [w][v][w] x
    wwvx = cross3(w, wvx)           # [w]^2 [v] x
    vwwx = cross3(v, cross3(w, wx))   # [v][w]^2 x
    wvwwx = cross3(w, cross3(v, cross3(w, wx)))   # [w][v][w]^2 x
    wwvwx = cross3(w, wvwx)         # [w]^2 [v][w] x
    return tuple_sum(vx, wvx, vwx, wvwx, wwvx, vwwx, wvwwx, wwvwx, c, d, e)


@fast
def tuple_sum(vx, wvx, vwx, wvwx, wwvx, vwwx, wvwwx, wwvwx, c, d, e):
    return (0.5 * vx[0] + c * (wvx[0] + vwx[0] + wvwx[0]) + d * (wwvx[0] + vwwx[0] - 3.0 * wvwx[0])
            + e * (wvwwx[0] + wwvwx[0]),
            0.5 * vx[1] + c * (wvx[1] + vwx[1] + wvwx[1]) + d * (wwvx[1] + vwwx[1] - 3.0 * wvwx[1])
            + e * (wvwwx[1] + wwvwx[1]),
            0.5 * vx[2] + c * (wvx[2] + vwx[2] + wvwx[2]) + d * (wwvx[2] + vwwx[2] - 3.0 * wvwx[2])
            + e * (wvwwx[2] + wwvwx[2]))


@fast
def jexp6_times(xi, x):
    """Jr(xi) x = [Jr(w) x_v + Q(-v, -w) x_w; Jr(w) x_w] (Jr(xi) = Jl(-xi))."""
    v, w = (xi[0], xi[1], xi[2]), (xi[3], xi[4], xi[5])
    xv, xw = (x[0], x[1], x[2]), (x[3], x[4], x[5])
    a = jexp3_times(w, xv)
    b = q_times((-v[0], -v[1], -v[2]), (-w[0], -w[1], -w[2]), xw, norm3(w))
    c = jexp3_times(w, xw)
    return (a[0] + b[0], a[1] + b[1], a[2] + b[2], c[0], c[1], c[2])


@fast
def jlog6_times(xi, x):
    """Jr(xi)^-1 x = [A x_v - A Q(-v, -w) A x_w; A x_w], A = Jr(w)^-1 (Pinocchio's Jlog6 at exp(xi))."""
    v, w = (xi[0], xi[1], xi[2]), (xi[3], xi[4], xi[5])
    xv, xw = (x[0], x[1], x[2]), (x[3], x[4], x[5])
    aw = jlog3_times(w, xw)
    q = q_times((-v[0], -v[1], -v[2]), (-w[0], -w[1], -w[2]), aw, norm3(w))
    lin = jlog3_times(w, (xv[0] - q[0], xv[1] - q[1], xv[2] - q[2]))
    return (lin[0], lin[1], lin[2], aw[0], aw[1], aw[2])


# --- SE(2): a planar joint's [x y theta], velocity [vx vy omega] in its own frame ----------------------
@fast
def jlog2_times(xi, x):
    """Jr(xi)^-1 x on SE(2), xi = [vx vy t]: Jr = [[Jrot, c], [0, 1]] with Jrot = [[a, t b], [-t b, a]]
    and c = [[b, t c3], [-t c3, b]] [-vy; vx] (a, b, c3 = so3_coefficients(|t|), sign-adjusted)."""
    t = xi[2]
    a, b, c3 = so3_coefficients(abs(t))
    tb, tc = t * b, t * c3          # (1 - cos t) / t and (t - sin t) / t^2, odd in t
    jx, jy = -xi[1], xi[0]
    cx, cy = b * jx + tc * jy, -tc * jx + b * jy
    rx, ry = x[0] - cx * x[2], x[1] - cy * x[2]
    det = a * a + tb * tb
    return ((a * rx - tb * ry) / det, (tb * rx + a * ry) / det, x[2])


# --- quaternions (x, y, z, w) ---------------------------------------------------------------------
@fast
def quaternion_exp(w):
    """The unit quaternion of exp3(w): (sin(t/2) u, cos(t/2))."""
    t = norm3(w)
    h = 0.5 * horner(A_SERIES, 0.25 * t * t) if t < SERIES_MAX else np.sin(0.5 * t) / t
    return (h * w[0], h * w[1], h * w[2], np.cos(0.5 * t))


@fast
def quaternion_multiply(p, q):
    """p q (Hamilton product, x y z w)."""
    return (p[3] * q[0] + q[3] * p[0] + p[1] * q[2] - p[2] * q[1],
            p[3] * q[1] + q[3] * p[1] + p[2] * q[0] - p[0] * q[2],
            p[3] * q[2] + q[3] * p[2] + p[0] * q[1] - p[1] * q[0],
            p[3] * q[3] - p[0] * q[0] - p[1] * q[1] - p[2] * q[2])


# --- array drivers for the public module (robot_dynamics.lie): one row per element ------------------------
@fast
def exp3_rows(W, out):
    for k in range(W.shape[0]):
        R = exp3((W[k, 0], W[k, 1], W[k, 2]))
        for i in range(9):
            out[k, i] = R[i]


@fast
def log3_rows(R, out):
    for k in range(R.shape[0]):
        w = log3((R[k, 0], R[k, 1], R[k, 2], R[k, 3], R[k, 4], R[k, 5], R[k, 6], R[k, 7], R[k, 8]))
        out[k, 0], out[k, 1], out[k, 2] = w


@fast
def exp6_rows(X, out):
    """out[k] = the 12 numbers R (row-major) and p of exp6(X[k])."""
    for k in range(X.shape[0]):
        R, p = exp6((X[k, 0], X[k, 1], X[k, 2], X[k, 3], X[k, 4], X[k, 5]))
        for i in range(9):
            out[k, i] = R[i]
        out[k, 9], out[k, 10], out[k, 11] = p


@fast
def log6_rows(T, out):
    """T[k] = R (row-major) and p, 12 numbers."""
    for k in range(T.shape[0]):
        xi = log6((T[k, 0], T[k, 1], T[k, 2], T[k, 3], T[k, 4], T[k, 5], T[k, 6], T[k, 7], T[k, 8]),
                  (T[k, 9], T[k, 10], T[k, 11]))
        for i in range(6):
            out[k, i] = xi[i]


@fast
def jacobian3_rows(W, inverse, out):
    """out[k] = Jr(W[k]) (inverse: Jr(W[k])^-1) as 9 numbers, column by column applied to e_j."""
    for k in range(W.shape[0]):
        w = (W[k, 0], W[k, 1], W[k, 2])
        for j in range(3):
            e = (1.0 if j == 0 else 0.0, 1.0 if j == 1 else 0.0, 1.0 if j == 2 else 0.0)
            col = jlog3_times(w, e) if inverse else jexp3_times(w, e)
            out[k, j], out[k, 3 + j], out[k, 6 + j] = col


@fast
def jacobian6_rows(X, inverse, out):
    """out[k] = Jr(X[k]) (inverse: Jr(X[k])^-1) as 36 numbers, row-major."""
    for k in range(X.shape[0]):
        xi = (X[k, 0], X[k, 1], X[k, 2], X[k, 3], X[k, 4], X[k, 5])
        for j in range(6):
            e = (1.0 if j == 0 else 0.0, 1.0 if j == 1 else 0.0, 1.0 if j == 2 else 0.0,
                 1.0 if j == 3 else 0.0, 1.0 if j == 4 else 0.0, 1.0 if j == 5 else 0.0)
            col = jlog6_times(xi, e) if inverse else jexp6_times(xi, e)
            for i in range(6):
                out[k, 6 * i + j] = col[i]


@fast
def quaternion_exp_rows(W, out):
    for k in range(W.shape[0]):
        out[k, 0], out[k, 1], out[k, 2], out[k, 3] = quaternion_exp((W[k, 0], W[k, 1], W[k, 2]))
