"""Time scalings s(t) that take a path parameter from s = 0 to s = 1 at rest at both ends, in
closed form (Lynch and Park, Modern Robotics, section 9.2.2):

    cubic      s = 3 tau^2 - 2 tau^3, tau = t / T                      (third-order polynomial)
    quintic    s = 10 tau^3 - 15 tau^4 + 6 tau^5                       (fifth-order: zero
               acceleration at both ends)
    trapezoid  constant acceleration a, coasting at v, constant deceleration a
    scurve     seven stages of constant jerk: +J, 0, -J (to the coasting speed), coast, -J, 0, +J

Limits are on the path's speed, acceleration and jerk (velocity, acceleration, jerk; also
Lynch and Park's v, a, J / j), in path units per second^k. With T None the scaling is the
fastest one within the limits (`minimum_duration`); with T given it takes exactly T:
cubic and quintic check T against the limits given, the trapezoid takes T and one of v or a
and computes the other (Lynch and Park's two cases), the S-curve takes T with its jerk and
acceleration limits and coasts at the speed that makes it last T. Before t = 0 it rests at s = 0,
after T at s = 1. The second half mirrors the first (s(t) = 1 - s(T - t)), so s(T) = 1 exactly.
"""
import math
from typing import NamedTuple

import numpy as np

KINDS = ("cubic", "quintic", "trapezoid", "scurve")
_NAMES = {"velocity": "velocity", "v": "velocity", "acceleration": "acceleration", "a": "acceleration",
          "jerk": "jerk", "j": "jerk", "J": "jerk"}


class TimeScaling(NamedTuple):
    """s, sd, sdd at the times asked (floats for one time, arrays of its shape for several)."""
    s: object
    sd: object
    sdd: object


def _limits(kind, limits):
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {', '.join(KINDS)}, got {kind!r}")
    out = {"velocity": math.inf, "acceleration": math.inf, "jerk": math.inf}
    for key, value in limits.items():
        if key not in _NAMES:
            raise TypeError(f"time_scaling takes the limits velocity (v), acceleration (a) and jerk (j); got {key!r}")
        try:
            x = float(value)
        except (TypeError, ValueError):
            raise ValueError(f"{_NAMES[key]} limit must be a positive number, got {value!r}") from None
        if not x > 0.0 or math.isnan(x):
            raise ValueError(f"{_NAMES[key]} limit must be a positive number, got {value!r}")
        out[_NAMES[key]] = x
    if kind == "cubic" and out["jerk"] < math.inf:
        raise ValueError("the cubic time scaling has no jerk limit: its acceleration jumps at t = 0 and T "
                         "(use quintic or scurve)")
    if kind == "trapezoid" and out["jerk"] < math.inf:
        raise ValueError("the trapezoid has no jerk limit: its acceleration jumps (use scurve)")
    return out["velocity"], out["acceleration"], out["jerk"]


def minimum_duration(kind, **limits):
    """The shortest T of this time scaling within the limits (velocity, acceleration, jerk)."""
    v, a, j = _limits(kind, limits)
    if kind in ("cubic", "quintic"):
        if math.isinf(min(v, a, j)):
            raise ValueError(f"a minimum-time {kind} time scaling needs a velocity, acceleration or jerk limit")
        return _polynomial_minimum(kind, v, a, j)
    if kind == "trapezoid":
        if math.isinf(a):
            raise ValueError("a trapezoid time scaling needs an acceleration limit")
        return 1.0 / v + v / a if v * v <= a else 2.0 / math.sqrt(a)
    if math.isinf(j):
        raise ValueError("an S-curve time scaling needs a jerk limit")
    return _scurve_stages(_scurve_top_speed(v, a, j), a, j, None)[-1]


def _polynomial_minimum(kind, v, a, j):
    """max |sd| = 3/(2T) (cubic), 15/(8T) (quintic); max |sdd| = 6/T^2, 10/(sqrt(3) T^2); the
    quintic's max |sddd| = 60/T^3 (at both ends)."""
    if kind == "cubic":
        return max(1.5 / v, math.sqrt(6.0 / a))
    return max(1.875 / v, math.sqrt(10.0 / (math.sqrt(3.0) * a)), (60.0 / j) ** (1.0 / 3.0))


def time_scaling(kind, T, t, **limits):
    """s, sd, sdd at times t (a number or an array) of the time scaling `kind` (cubic, quintic,
    trapezoid, scurve) lasting T seconds, or the fastest within the limits when T is None."""
    v, a, j = _limits(kind, limits)
    tt = np.asarray(t, dtype=float)
    if not np.all(np.isfinite(tt)):
        raise ValueError("t contains NaN or inf")
    if T is not None:
        try:
            T = float(T)
        except (TypeError, ValueError):
            raise ValueError(f"T must be a positive duration in seconds or None, got {T!r}") from None
        if not (T > 0.0 and math.isfinite(T)):
            raise ValueError(f"T must be a positive finite duration in seconds or None, got {T!r}")
    if kind in ("cubic", "quintic"):
        shortest = _polynomial_minimum(kind, v, a, j) if min(v, a, j) < math.inf else 0.0
        if T is None:
            T = minimum_duration(kind, **limits)
        elif T < shortest * (1.0 - 1e-12):
            raise ValueError(f"T = {T:g} s is shorter than the {kind}'s minimum {shortest:.9g} s for these limits")
        out = _polynomial(kind, T, tt)
    elif kind == "trapezoid":
        out = _trapezoid(T, tt, v, a)
    else:
        out = _scurve(T, tt, v, a, j)
    return TimeScaling(*(x if tt.ndim else float(x) for x in out))


def _polynomial(kind, T, t):
    tau = np.clip(t / T, 0.0, 1.0)
    if kind == "cubic":
        s = tau * tau * (3.0 - 2.0 * tau)
        sd = 6.0 * tau * (1.0 - tau) / T
        sdd = (6.0 - 12.0 * tau) / (T * T)
    else:
        s = tau ** 3 * (10.0 + tau * (-15.0 + 6.0 * tau))
        sd = 30.0 * tau * tau * (1.0 - tau) ** 2 / T
        sdd = 60.0 * tau * (1.0 + tau * (-3.0 + 2.0 * tau)) / (T * T)
    outside = (t < 0.0) | (t > T)
    return s, np.where(outside, 0.0, sd), np.where(outside, 0.0, sdd)


def _trapezoid(T, t, v, a):
    """Lynch and Park's trapezoid: T from v and a, or a from v and T (v^2 / (v T - 1), needs
    1 < v T <= 2), or v from a and T ((a T - sqrt(a) sqrt(a T^2 - 4)) / 2, needs a T^2 >= 4)."""
    if T is None:
        if math.isinf(a):
            raise ValueError("a minimum-time trapezoid needs an acceleration limit")
        v = min(v, math.sqrt(a))                # v^2 > a: the triangle, top speed sqrt(a)
        T = 1.0 / v + v / a
    elif math.isinf(a) == math.isinf(v):
        raise ValueError("a trapezoid of given T takes exactly one of the velocity and acceleration limits "
                         "(the other follows: Lynch and Park, section 9.2.2.3)")
    elif math.isinf(a):
        if not 1.0 < v * T <= 2.0 * (1.0 + 1e-12):
            raise ValueError(f"a trapezoid of T = {T:g} s at velocity {v:g} needs 1 < v T <= 2, got v T = {v * T:g}")
        v = min(v, 2.0 / T)
        a = v * v / (v * T - 1.0)
    else:
        if a * T * T < 4.0 * (1.0 - 1e-12):
            raise ValueError(f"T = {T:g} s is shorter than the trapezoid's minimum {2.0 / math.sqrt(a):.9g} s at "
                             f"acceleration {a:g} (a T^2 >= 4)")
        v = (a * T - math.sqrt(a) * math.sqrt(max(a * T * T - 4.0, 0.0))) / 2.0
    ta = v / a
    return _mirrored(T, t, lambda h: (np.where(h < ta, 0.5 * a * h * h, v * h - 0.5 * v * ta),
                                      np.where(h < ta, a * h, v), np.where(h < ta, a, 0.0)))


def _mirrored(T, t, first_half):
    """A rest-to-rest profile from its first half: s(t) = 1 - s(T - t), sd(t) = sd(T - t),
    sdd(t) = -sdd(T - t) after T / 2; at rest outside [0, T]."""
    late = t > 0.5 * T
    h = np.clip(np.where(late, T - t, t), 0.0, 0.5 * T)
    s, sd, sdd = (np.asarray(x, dtype=float) for x in first_half(h))
    outside = (t <= 0.0) | (t >= T)
    s = np.where(late, 1.0 - s, s)
    sd = np.where(outside, 0.0, sd)
    sdd = np.where(outside, 0.0, np.where(late, -sdd, sdd))
    return np.where(t <= 0.0, 0.0, np.where(t >= T, 1.0, s)), sd, sdd


def _scurve_top_speed(v, a, j):
    """The coasting speed of the fastest S-curve: v, or lower where speeding up to v and
    slowing down again would overshoot s = 1 (no coast: vp Ta(vp) = 1)."""
    if a * a / j < math.inf:
        vp = 2.0 * a / (a * a / j + math.sqrt((a * a / j) ** 2 + 4.0 * a))   # vp^2/a + vp a/j = 1
        if vp < a * a / j:
            vp = (j / 4.0) ** (1.0 / 3.0)                                    # 2 vp sqrt(vp/j) = 1
    else:
        vp = (j / 4.0) ** (1.0 / 3.0)
    return min(v, vp)


def _scurve_stages(vp, a, j, T):
    """Jerk time Tj, constant-acceleration time Tc, coasting time Tv for top speed vp (the
    acceleration peaks at a when vp >= a^2 / j, else at sqrt(vp j)), and the duration."""
    if vp >= a * a / j:
        Tj, Tc = a / j, vp / a - a / j
    else:
        Tj, Tc = math.sqrt(vp / j), 0.0
    Ta = 2.0 * Tj + Tc
    Tv = (1.0 - vp * Ta) / vp if T is None else T - 2.0 * Ta
    return Tj, Tc, max(Tv, 0.0), 2.0 * Ta + max(Tv, 0.0)


def _scurve_speed_for(T, v, a, j):
    """The top speed that makes the S-curve last T: vp/a + a/j + 1/vp = T (acceleration
    reaching a) or 2 sqrt(vp/j) + 1/vp = T (a cubic in w = sqrt(vp))."""
    top = _scurve_top_speed(v, a, j)
    shortest = _scurve_stages(top, a, j, None)[-1]
    if T < shortest * (1.0 - 1e-12):
        raise ValueError(f"T = {T:g} s is shorter than the S-curve's minimum {shortest:.9g} s for these limits")
    if math.isfinite(a):
        c = T - a / j
        disc = c * c - 4.0 / a
        if disc >= 0.0:
            vp = 2.0 / (c + math.sqrt(disc))        # the smaller root of vp^2/a - c vp + 1 = 0
            if vp >= a * a / j:
                return min(vp, top)
    roots = np.roots([2.0 / math.sqrt(j), -T, 0.0, 1.0])
    w = min(r.real for r in roots if abs(r.imag) <= 1e-9 * abs(r) and r.real > 0.0)
    return min(w * w, top)


def _scurve(T, t, v, a, j):
    if math.isinf(j):
        raise ValueError("an S-curve time scaling needs a jerk limit")
    if T is None:
        vp = _scurve_top_speed(v, a, j)
    else:
        if math.isinf(a) and math.isfinite(v):
            raise ValueError("an S-curve of given T takes its jerk and acceleration limits (the coasting speed "
                             "follows), not a velocity limit alone")
        vp = _scurve_speed_for(T, v, a, j)
    Tj, Tc, Tv, T = _scurve_stages(vp, a, j, T)
    ap = j * Tj                                     # the peak acceleration
    # the first half: +J for Tj, ap for Tc, -J for Tj (at vp), coast to T / 2
    t1, t2, t3 = Tj, Tj + Tc, 2.0 * Tj + Tc
    v1, s1 = 0.5 * j * Tj * Tj, j * Tj ** 3 / 6.0
    v2, s2 = v1 + ap * Tc, s1 + v1 * Tc + 0.5 * ap * Tc * Tc
    s3 = s2 + v2 * Tj + 0.5 * ap * Tj * Tj - j * Tj ** 3 / 6.0

    def first_half(h):
        d1, d2, d3, d4 = h, h - t1, h - t2, h - t3
        return (np.select([h < t1, h < t2, h < t3], [j * d1 ** 3 / 6.0, s1 + v1 * d2 + 0.5 * ap * d2 * d2,
                                                     s2 + v2 * d3 + 0.5 * ap * d3 * d3 - j * d3 ** 3 / 6.0],
                          s3 + vp * d4),
                np.select([h < t1, h < t2, h < t3], [0.5 * j * d1 * d1, v1 + ap * d2, v2 + ap * d3 - 0.5 * j * d3 * d3],
                          vp),
                np.select([h < t1, h < t2, h < t3], [j * d1, ap + 0.0 * d2, ap - j * d3], 0.0))
    return _mirrored(T, t, first_half)
