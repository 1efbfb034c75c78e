"""Sampling a joint trajectory the way ros2_control's joint_trajectory_controller does with its
`spline` interpolation (joint_trajectory_controller/src/trajectory.cpp, interpolate_between_points):
between points k and k + 1 (t_k <= t < t_k+1), by the fields the points have,

    LINEAR   positions only: q linear in t, v its slope, a = 0
    CUBIC    positions and velocities: the cubic Hermite polynomial of both ends
    QUINTIC  positions, velocities and accelerations: the quintic of both ends

Before the first point the first is held at rest; at the last point's time the last point as
given; after it the last position at rest (a controller holds it).
"""
import numpy as np

from .common import finite
from .jit import fast, released

LINEAR, CUBIC, QUINTIC = 0, 1, 2
#: first_bad's codes
GOOD, BAD_TIMES, NOT_INCREASING, BAD_POSITIONS, BAD_VELOCITIES, BAD_ACCELERATIONS = 0, 1, 2, 3, 4, 5


@released
def first_bad(times, P, V, A, kind):
    """(code, point) of the first input that cannot be sampled: NaN or inf, times not increasing
    (GOOD, -1 if none); V and A are checked for CUBIC and QUINTIC."""
    for k in range(times.shape[0]):
        if not np.isfinite(times[k]):
            return BAD_TIMES, k
        if k and not times[k] > times[k - 1]:
            return NOT_INCREASING, k
    for k in range(P.shape[0]):
        if not finite(P[k]):
            return BAD_POSITIONS, k
        if kind != LINEAR and not finite(V[k]):
            return BAD_VELOCITIES, k
        if kind == QUINTIC and not finite(A[k]):
            return BAD_ACCELERATIONS, k
    return GOOD, -1


@fast
def segment(times, t):
    """k with times[k] <= t < times[k + 1] (bisection; times increasing, t inside)."""
    lo, hi = 0, times.shape[0] - 1
    while hi - lo > 1:
        mid = (lo + hi) >> 1
        if times[mid] <= t:
            lo = mid
        else:
            hi = mid
    return lo


@fast
def sample(times, P, V, A, kind, t, q, v, a):
    """q, v, a at time t of the trajectory (times, positions P, velocities V, accelerations A;
    V and A are read only for CUBIC and QUINTIC)."""
    n, last = P.shape[1], times.shape[0] - 1
    if t < times[0] or t > times[last]:
        k = 0 if t < times[0] else last
        for j in range(n):
            q[j], v[j], a[j] = P[k, j], 0.0, 0.0
        return
    if t == times[last]:
        for j in range(n):
            q[j] = P[last, j]
            v[j] = V[last, j] if kind != LINEAR else 0.0
            a[j] = A[last, j] if kind == QUINTIC else 0.0
        return
    k = segment(times, t)
    T, s = times[k + 1] - times[k], t - times[k]
    if kind == LINEAR:
        for j in range(n):
            slope = (P[k + 1, j] - P[k, j]) / T
            q[j], v[j], a[j] = P[k, j] + s * slope, slope, 0.0
    elif kind == CUBIC:
        T2, T3 = T * T, T * T * T
        for j in range(n):
            p0, v0, p1, v1 = P[k, j], V[k, j], P[k + 1, j], V[k + 1, j]
            c2 = (-3.0 * p0 + 3.0 * p1 - 2.0 * v0 * T - v1 * T) / T2
            c3 = (2.0 * p0 - 2.0 * p1 + v0 * T + v1 * T) / T3
            q[j] = p0 + s * (v0 + s * (c2 + s * c3))
            v[j] = v0 + s * (2.0 * c2 + s * 3.0 * c3)
            a[j] = 2.0 * c2 + s * 6.0 * c3
    else:
        T2 = T * T
        T3, T4, T5 = T2 * T, T2 * T2, T2 * T2 * T
        for j in range(n):
            p0, v0, a0 = P[k, j], V[k, j], A[k, j]
            p1, v1, a1 = P[k + 1, j], V[k + 1, j], A[k + 1, j]
            c2 = 0.5 * a0
            c3 = (-20.0 * p0 + 20.0 * p1 - 3.0 * a0 * T2 + a1 * T2 - 12.0 * v0 * T - 8.0 * v1 * T) / (2.0 * T3)
            c4 = (30.0 * p0 - 30.0 * p1 + 3.0 * a0 * T2 - 2.0 * a1 * T2 + 16.0 * v0 * T + 14.0 * v1 * T) / (2.0 * T4)
            c5 = (-12.0 * p0 + 12.0 * p1 - a0 * T2 + a1 * T2 - 6.0 * v0 * T - 6.0 * v1 * T) / (2.0 * T5)
            q[j] = p0 + s * (v0 + s * (c2 + s * (c3 + s * (c4 + s * c5))))
            v[j] = v0 + s * (2.0 * c2 + s * (3.0 * c3 + s * (4.0 * c4 + s * 5.0 * c5)))
            a[j] = 2.0 * c2 + s * (6.0 * c3 + s * (12.0 * c4 + s * 20.0 * c5))


@released
def sample_rows(times, P, V, A, kind, ts, Q, Vout, Aout):
    """`sample` at each time of ts (rows of Q, Vout, Aout)."""
    for k in range(ts.shape[0]):
        sample(times, P, V, A, kind, ts[k], Q[k], Vout[k], Aout[k])
