"""rd.time_scaling against the closed forms of Lynch and Park, Modern Robotics, section 9.2.2: the
cubic and quintic polynomials, the trapezoid (both of its T-given cases and the minimum time), the
S-curve (its seven constant-jerk stages integrated exactly here, stage by stage); minimum times for
the limits, rest outside [0, T], and every bad argument refused by name."""
import math

import numpy as np
import pytest
from scipy.optimize import brentq

from robot_dynamics import dynamics as rd

T_GRID = np.linspace(-0.3, 3.3, 3601)


def jerk_profile(durations, jerks, t):
    """s, sd, sdd at t of the motion from rest at s = 0 with these constant-jerk stages, integrated
    exactly stage by stage (at rest before, coasting on after the last)."""
    s, v, a, start = 0.0, 0.0, 0.0, 0.0
    out = np.zeros((3, len(t)))
    for T, J in zip(durations, jerks):
        h = np.clip(t - start, 0.0, T)
        inside = (t >= start)
        out[0] = np.where(inside, s + v * h + a * h ** 2 / 2 + J * h ** 3 / 6, out[0])
        out[1] = np.where(inside, v + a * h + J * h ** 2 / 2, out[1])
        out[2] = np.where(inside, a + J * h, out[2])
        s, v, a, start = s + v * T + a * T ** 2 / 2 + J * T ** 3 / 6, v + a * T + J * T ** 2 / 2, a + J * T, start + T
    out[2] = np.where(t >= start, 0.0, out[2])
    return out


def check_limits(out, v=np.inf, a=np.inf, j=np.inf, reached=()):
    s, sd, sdd = out
    dt = T_GRID[1] - T_GRID[0]
    assert np.all(np.diff(s) >= -1e-15) and s[0] == 0.0 and s[-1] == 1.0
    assert np.max(sd) <= v * (1 + 1e-12) and np.max(np.abs(sdd)) <= a * (1 + 1e-12)
    assert np.max(np.abs(np.diff(sdd))) <= j * dt * (1 + 1e-9) + 1e-12
    for name, limit, value in (("v", v, np.max(sd)), ("a", a, np.max(np.abs(sdd)))):
        if name in reached:
            assert value == pytest.approx(limit, rel=2e-3), name     # reached within the sampling


@pytest.mark.parametrize("T", [0.5, 1.0, 2.7])
def test_cubic_and_quintic_are_the_polynomials(T):
    tau = np.clip(T_GRID / T, 0, 1)
    inside = (T_GRID >= 0) & (T_GRID <= T)
    s, sd, sdd = rd.time_scaling("cubic", T, T_GRID)
    np.testing.assert_allclose(s, 3 * tau ** 2 - 2 * tau ** 3, atol=1e-15)
    np.testing.assert_allclose(sd, np.where(inside, (6 * tau - 6 * tau ** 2) / T, 0), atol=1e-14)
    np.testing.assert_allclose(sdd, np.where(inside, (6 - 12 * tau) / T ** 2, 0), atol=1e-13)
    s, sd, sdd = rd.time_scaling("quintic", T, T_GRID)
    np.testing.assert_allclose(s, 10 * tau ** 3 - 15 * tau ** 4 + 6 * tau ** 5, atol=1e-15)
    np.testing.assert_allclose(sd, np.where(inside, (30 * tau ** 2 - 60 * tau ** 3 + 30 * tau ** 4) / T, 0), atol=1e-13)
    np.testing.assert_allclose(sdd, np.where(inside, (60 * tau - 180 * tau ** 2 + 120 * tau ** 3) / T ** 2, 0), atol=1e-12)
    one = rd.time_scaling("quintic", T, 0.3 * T)
    assert isinstance(one.s, float) and one.s == pytest.approx(10 * 0.027 - 15 * 0.0081 + 6 * 0.00243, rel=1e-14)


@pytest.mark.parametrize("kind, limits, T", [
    ("cubic", dict(velocity=2.0), 0.75),                      # max sd = 3 / (2T)
    ("cubic", dict(acceleration=6.0), 1.0),                   # max sdd = 6 / T^2
    ("cubic", dict(v=2.0, a=6.0), 1.0),
    ("quintic", dict(velocity=1.875), 1.0),                   # 15 / (8T)
    ("quintic", dict(acceleration=10 / math.sqrt(3)), 1.0),   # 10 / (sqrt(3) T^2)
    ("quintic", dict(jerk=60.0), 1.0),                        # 60 / T^3
    ("quintic", dict(v=10.0, a=10.0, j=480.0), (10 / (math.sqrt(3) * 10)) ** 0.5),
    ("trapezoid", dict(v=1.0, a=4.0), 1.25),                  # 1/v + v/a
    ("trapezoid", dict(v=3.0, a=4.0), 1.0),                   # v^2 > a: the triangle, 2 / sqrt(a)
    ("trapezoid", dict(acceleration=4.0), 1.0),
    ("scurve", dict(v=1.0, a=4.0, j=40.0), 1.0 / 4 + 4 / 40 + 1.0),    # v/a + a/j + 1/v
])
def test_minimum_durations_in_closed_form(kind, limits, T):
    assert rd.minimum_duration(kind, **limits) == pytest.approx(T, rel=1e-12)
    out = rd.time_scaling(kind, None, T_GRID, **limits)
    names = {"velocity": "v", "acceleration": "a", "jerk": "j"}
    given = {names.get(k, k): x for k, x in limits.items()}
    check_limits(out, **given)


def test_trapezoid_in_closed_form():
    """v = 1, a = 4: accelerate 0.25 s to s = 1/8, coast, decelerate; both T-given cases."""
    v, a = 1.0, 4.0
    T = 1 / v + v / a
    t, ta = T_GRID, v / a
    s = np.where(t < 0, 0, np.where(t < ta, a * t ** 2 / 2, np.where(t < T - ta, v * t - v * v / (2 * a),
                                                                  np.where(t < T, 1 - a * (T - t) ** 2 / 2, 1))))
    sd = np.where((t <= 0) | (t >= T), 0, np.minimum(np.minimum(a * t, v), a * (T - t)))
    sdd = np.where((t <= 0) | (t >= T), 0, np.where(t < ta, a, np.where(t <= T - ta, 0, -a)))
    for out in (rd.time_scaling("trapezoid", None, t, v=v, a=a), rd.time_scaling("trapezoid", T, t, v=v),
                rd.time_scaling("trapezoid", T, t, a=a)):
        np.testing.assert_allclose(out.s, s, atol=1e-14)
        np.testing.assert_allclose(out.sd, sd, atol=1e-13)
        ok = np.abs(np.abs(t - T / 2) - (T / 2 - ta)) > 1e-9      # away from the jumps of sdd
        np.testing.assert_allclose(out.sdd[ok], sdd[ok], atol=1e-12)
    # Lynch and Park's two T-given formulas: a = v^2 / (v T - 1), v = (a T - sqrt(a) sqrt(a T^2 - 4)) / 2
    out = rd.time_scaling("trapezoid", 2.0, t, v=0.8)
    assert np.max(out.sdd) == pytest.approx(0.64 / 0.6, rel=1e-12) and np.max(out.sd) == pytest.approx(0.8, rel=1e-12)
    out = rd.time_scaling("trapezoid", 2.0, t, a=3.0)
    assert np.max(out.sd) == pytest.approx((6 - math.sqrt(3) * math.sqrt(8)) / 2, rel=1e-12)


@pytest.mark.parametrize("limits, T", [
    (dict(v=1.0, a=4.0, j=40.0), None),          # every limit reached, coasting
    (dict(v=5.0, a=4.0, j=40.0), None),          # no coast: the peak speed stays below v
    (dict(v=1.0, a=20.0, j=40.0), None),         # the acceleration never reaches a
    (dict(a=4.0, j=40.0), 2.0),                  # T given: coasting speed from T
    (dict(a=50.0, j=40.0), 3.0),                 # T given, acceleration below a
])
def test_scurve_against_its_stages_integrated(limits, T):
    """The S-curve equals the exact integral of its seven constant-jerk stages (+j, 0, -j, coast,
    -j, 0, +j) from the durations it implies, ends at s = 1 at rest, keeps every limit, and lasts T
    when T is given."""
    out = rd.time_scaling("scurve", T, T_GRID, **limits)
    j, a = limits["j"], limits["a"]
    s, sd, sdd = (np.asarray(x) for x in out)

    def stages(vp):      # speeding up to vp: jerk j for Tj, acceleration held for Tc, jerk -j for Tj
        Tj = a / j if vp >= a * a / j else math.sqrt(vp / j)
        Tc = vp / a - a / j if vp >= a * a / j else 0.0
        return Tj, Tc, 1 / vp - (2 * Tj + Tc)        # the coast: what is left of s = 1 at speed vp
    if T is None:       # the fastest: coast at v, or at the speed whose speeding up and slowing down meet
        vp = min(limits["v"], brentq(lambda w: stages(w)[2], 1e-9, 1e3))
    else:
        vp = brentq(lambda w: 2 * (2 * stages(w)[0] + stages(w)[1]) + stages(w)[2] - T, 1e-9,
                    brentq(lambda w: stages(w)[2], 1e-9, 1e3))
    Tj, Tc, Tv = stages(vp)
    expected = jerk_profile([Tj, Tc, Tj, Tv, Tj, Tc, Tj], [j, 0, -j, 0, -j, 0, j], T_GRID)
    np.testing.assert_allclose(s, expected[0], atol=1e-12)
    np.testing.assert_allclose(sd, expected[1], atol=1e-11)
    np.testing.assert_allclose(sdd, expected[2], atol=1e-9)
    duration = 2 * (2 * Tj + Tc) + Tv
    if T is not None:
        assert duration == pytest.approx(T, rel=1e-9)
    else:
        assert duration == pytest.approx(rd.minimum_duration("scurve", **limits), rel=1e-12)
    check_limits(out, v=limits.get("v", np.inf), a=a, j=j)


def test_rest_outside_the_motion_and_one_time():
    for kind, limits in (("cubic", {}), ("quintic", {}), ("trapezoid", dict(v=1.0)), ("scurve", dict(a=4, j=40))):
        out = rd.time_scaling(kind, 2.0, [-1.0, 0.0, 2.0, 5.0], **limits)
        np.testing.assert_array_equal(out.s, [0, 0, 1, 1])
        np.testing.assert_array_equal(out.sd, 0)
        if kind != "cubic":
            np.testing.assert_allclose(out.sdd, 0, atol=1e-12)


@pytest.mark.parametrize("call, message", [
    (lambda: rd.time_scaling("linear", 1.0, 0.5), "kind must be one of cubic, quintic, trapezoid, scurve"),
    (lambda: rd.time_scaling("cubic", 0.0, 0.5), "T must be a positive finite duration"),
    (lambda: rd.time_scaling("cubic", "long", 0.5), "T must be a positive duration"),
    (lambda: rd.time_scaling("cubic", 1.0, np.nan), "t contains NaN or inf"),
    (lambda: rd.time_scaling("cubic", None, 0.5), "needs a velocity, acceleration or jerk limit"),
    (lambda: rd.time_scaling("cubic", 1.0, 0.5, jerk=10.0), "cubic time scaling has no jerk limit"),
    (lambda: rd.time_scaling("cubic", 1.0, 0.5, v=1.0), r"T = 1 s is shorter than the cubic's minimum 1.5 s"),
    (lambda: rd.time_scaling("quintic", 1.0, 0.5, speed=1.0), "takes the limits velocity"),
    (lambda: rd.time_scaling("quintic", 1.0, 0.5, a=-1.0), "acceleration limit must be a positive number"),
    (lambda: rd.time_scaling("trapezoid", 1.0, 0.5), "exactly one of the velocity and acceleration"),
    (lambda: rd.time_scaling("trapezoid", 1.0, 0.5, v=1.0, a=4.0), "exactly one of the velocity and acceleration"),
    (lambda: rd.time_scaling("trapezoid", 1.0, 0.5, v=0.9), r"needs 1 < v T <= 2"),
    (lambda: rd.time_scaling("trapezoid", 1.0, 0.5, a=3.0), r"shorter than the trapezoid's minimum"),
    (lambda: rd.time_scaling("trapezoid", None, 0.5, v=1.0), "needs an acceleration limit"),
    (lambda: rd.time_scaling("scurve", None, 0.5, v=1.0, a=1.0), "needs a jerk limit"),
    (lambda: rd.time_scaling("scurve", 0.5, 0.5, a=4.0, j=40.0), "shorter than the S-curve's minimum"),
])
def test_bad_arguments_are_refused_by_name(call, message):
    with pytest.raises((ValueError, TypeError), match=message):
        call()
