"""robot_dynamics.trajectory: sample_trajectory against hand-computed splines of each of
joint_trajectory_controller's `spline` segments (linear, cubic, quintic) before, inside and after
the points, one time and batches; path_through_waypoints against scipy's natural cubic spline;
check_trajectory against batch inverse dynamics (ours and Pinocchio's); every bad input refused by
name."""
import numpy as np
import pytest
from scipy.interpolate import CubicSpline

from oracle import Pair, pin

from robot_dynamics import dynamics as rd
from robot_dynamics.trajectory import Trajectory

TIMES = np.array([0.5, 1.5, 3.5])
P = np.array([[0.0, 1.0], [2.0, -1.0], [1.0, 0.5]])
V = np.array([[0.0, 0.5], [1.0, -2.0], [0.0, 0.0]])
A = np.array([[0.0, 1.0], [-3.0, 2.0], [0.0, 0.0]])


def test_linear_segments_and_the_ends():
    """Positions only: q linear between points, v its slope, a = 0; before the first point the
    first at rest, at the last point's time the last, after it the last at rest."""
    q, v, a = rd.sample_trajectory(TIMES, P, t=1.0)          # halfway through the first segment
    np.testing.assert_allclose(q, [1.0, 0.0], rtol=1e-15)
    np.testing.assert_allclose(v, [2.0, -2.0], rtol=1e-15)
    np.testing.assert_array_equal(a, 0.0)
    q, v, a = rd.sample_trajectory(TIMES, P, t=3.0)          # 3/4 through the second: (2, -1) + 0.75 (-1, 1.5)
    np.testing.assert_allclose(q, [1.25, 0.125], rtol=1e-14)
    np.testing.assert_allclose(v, [-0.5, 0.75], rtol=1e-14)
    for t, point in ((0.0, 0), (0.4999, 0), (3.6, 2), (100.0, 2)):
        q, v, a = rd.sample_trajectory(TIMES, P, t=t)
        np.testing.assert_array_equal(q, P[point])
        np.testing.assert_array_equal(v, 0.0)
        np.testing.assert_array_equal(a, 0.0)
    q, v, a = rd.sample_trajectory(TIMES, P, t=0.5)          # at the first point: segment 0's slope (as the controller)
    np.testing.assert_array_equal(q, P[0])
    np.testing.assert_allclose(v, [2.0, -2.0])


def hermite(p0, v0, p1, v1, T, s):
    """The cubic Hermite segment by its basis functions (q, v, a at s in [0, T])."""
    x = s / T
    h = np.array([2 * x ** 3 - 3 * x ** 2 + 1, x ** 3 - 2 * x ** 2 + x, -2 * x ** 3 + 3 * x ** 2, x ** 3 - x ** 2])
    dh = np.array([6 * x ** 2 - 6 * x, 3 * x ** 2 - 4 * x + 1, -6 * x ** 2 + 6 * x, 3 * x ** 2 - 2 * x]) / T
    ddh = np.array([12 * x - 6, 6 * x - 4, -12 * x + 6, 6 * x - 2]) / T ** 2
    coefficients = np.array([p0, v0 * T, p1, v1 * T])     # (4, joints)
    return h @ coefficients, dh @ coefficients, ddh @ coefficients


def test_cubic_segments_are_hermite_splines():
    for t in (0.5, 0.8, 1.2, 1.5, 2.0, 3.4):
        k = 0 if t < 1.5 else 1
        T = TIMES[k + 1] - TIMES[k]
        expected = hermite(P[k], V[k], P[k + 1], V[k + 1], T, t - TIMES[k])
        for got, want in zip(rd.sample_trajectory(TIMES, P, V, t=t), expected):
            np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-13)
    q, v, a = rd.sample_trajectory(TIMES, P, V, t=3.5)        # the last point as given
    np.testing.assert_array_equal(q, P[2])
    np.testing.assert_array_equal(v, V[2])
    np.testing.assert_array_equal(a, 0.0)


def test_quintic_segments_meet_every_boundary_condition_and_the_minimum_jerk_polynomial():
    """Each quintic segment starts and ends with the points' position, velocity and acceleration;
    from rest to rest it is 10 x^3 - 15 x^4 + 6 x^5 (the minimum-jerk polynomial)."""
    for k in range(2):
        T = TIMES[k + 1] - TIMES[k]
        q, v, a = rd.sample_trajectory(TIMES, P, V, A, t=np.array([TIMES[k], TIMES[k + 1] - 1e-9 * T]))
        for got, want in ((q, P), (v, V), (a, A)):
            np.testing.assert_allclose(got[0], want[k], atol=1e-14)
            np.testing.assert_allclose(got[1], want[k + 1], atol=1e-6)
    times, points, zero = np.array([0.0, 2.0]), np.array([[0.0], [3.0]]), np.zeros((2, 1))
    t = np.linspace(0.0, 1.999, 9)
    x = t / 2
    q, v, a = rd.sample_trajectory(times, points, zero, zero, t=t)
    np.testing.assert_allclose(q[:, 0], 3 * (10 * x ** 3 - 15 * x ** 4 + 6 * x ** 5), atol=1e-14)
    np.testing.assert_allclose(v[:, 0], 3 * (30 * x ** 2 - 60 * x ** 3 + 30 * x ** 4) / 2, atol=1e-13)
    np.testing.assert_allclose(a[:, 0], 3 * (60 * x - 180 * x ** 2 + 120 * x ** 3) / 4, atol=1e-13)


@pytest.mark.parametrize("fields", [(), (V,), (V, A)])
def test_a_batch_of_times_equals_one_time_at_a_time(fields):
    t = np.linspace(-1.0, 5.0, 61)
    Q, Vs, As = rd.sample_trajectory(TIMES, P, *fields, t=t)
    assert Q.shape == Vs.shape == As.shape == (61, 2)
    trajectory = Trajectory(TIMES, P, *fields)
    for k, tk in enumerate(t):
        for got, want in zip(trajectory.sample(tk), (Q[k], Vs[k], As[k])):
            np.testing.assert_array_equal(got, want)
    out = (np.empty(2), np.empty(2), np.empty(2))
    assert trajectory.sample(2.5, out=out) is out
    np.testing.assert_array_equal(out[0], rd.sample_trajectory(TIMES, P, *fields, t=2.5)[0])
    assert trajectory.interpolation == ("linear", "cubic", "quintic")[len(fields)]


def test_the_trajectory_keeps_its_own_arrays():
    positions = P.copy()
    trajectory = Trajectory(TIMES, positions)
    positions[:] = 99.0
    np.testing.assert_array_equal(trajectory.sample(0.0)[0], P[0])


@pytest.mark.parametrize("args, kwargs, message", [
    ((TIMES[::-1], P), {}, r"times must increase: times\[1\] = 1.5 follows times\[0\] = 3.5"),
    (([0.5, 0.5, 1.0], P), {}, r"times must increase: times\[1\]"),
    (([0.5, np.nan, 1.0], P), {}, r"times contains NaN or inf \(times\[1\]\)"),
    ((TIMES[:2], P), {}, r"times must have one entry per point \(3,\)"),
    ((TIMES, P[:, 0]), {}, r"positions must have shape \(points, joints\)"),
    ((TIMES, np.where(P == 2.0, np.inf, P)), {}, r"positions contains NaN or inf \(point 1\)"),
    ((TIMES, P, V[:2]), {}, r"velocities must have the shape of positions \(3, 2\)"),
    ((TIMES, P, np.full((3, 2), np.nan)), {}, r"velocities contains NaN or inf \(point 0\)"),
    ((TIMES, P, V, np.full((3, 2), np.nan)), {}, r"accelerations contains NaN or inf \(point 0\)"),
    ((TIMES, P, None, A), {}, r"accelerations need velocities"),
    ((TIMES, P), dict(t=np.nan), r"t must be finite"),
    ((TIMES, P), dict(t=[[1.0]]), r"t must be a number or a 1-D array"),
    ((TIMES, P), dict(t=[1.0, np.inf]), r"t contains NaN or inf \(t\[1\]\)"),
])
def test_bad_trajectories_are_refused_by_name(args, kwargs, message):
    with pytest.raises(ValueError, match=message):
        rd.sample_trajectory(*args, **{"t": 1.0, **kwargs})


# --- paths through waypoints ---------------------------------------------------------------------
WAYPOINTS = np.array([[0.0, -0.6, 0.0], [0.8, 0.2, -0.5], [1.6, 0.6, 0.4], [0.6, -0.3, 1.1], [-0.8, 0.4, 0.2]])


@pytest.mark.parametrize("gridpoints", [5, 37, 100, 1000])
def test_the_path_is_scipys_natural_spline_over_the_chord_length(gridpoints):
    s, q, dq, ddq = rd.path_through_waypoints(WAYPOINTS, gridpoints)
    knots = np.concatenate(([0.0], np.cumsum(np.linalg.norm(np.diff(WAYPOINTS, axis=0), axis=1))))
    spline = CubicSpline(knots, WAYPOINTS, bc_type="natural")
    assert len(s) == gridpoints and np.all(np.diff(s) > 0) and s[0] == 0.0 and s[-1] == knots[-1]
    assert set(knots) <= set(s)                  # every waypoint is a gridpoint, exactly on the path
    np.testing.assert_array_equal(q[np.isin(s, knots)], WAYPOINTS)
    np.testing.assert_allclose(q, spline(s), atol=1e-13)
    np.testing.assert_allclose(dq, spline(s, 1), atol=1e-12)
    np.testing.assert_allclose(ddq, spline(s, 2), atol=1e-11)
    np.testing.assert_allclose(ddq[[0, -1]], 0.0, atol=1e-12)
    spans = np.diff(np.flatnonzero(np.isin(s, knots)))     # gridpoints shared by length
    np.testing.assert_allclose(spans, (gridpoints - 1) * np.diff(knots) / knots[-1], atol=1.0)


def test_two_waypoints_make_a_straight_line():
    s, q, dq, ddq = rd.path_through_waypoints([[0.0, 0.0], [3.0, 4.0]], 11)
    np.testing.assert_allclose(s, np.linspace(0, 5, 11), atol=1e-15)
    np.testing.assert_allclose(dq, np.tile([0.6, 0.8], (11, 1)), atol=1e-15)
    np.testing.assert_array_equal(ddq, 0.0)


@pytest.mark.parametrize("waypoints, gridpoints, message", [
    ([[0.0, 1.0]], 10, r"waypoints must have shape \(waypoints >= 2, joints\)"),
    ([[0.0, 1.0], [0.0, 1.0], [1.0, 1.0]], 10, r"waypoints 0 and 1 are the same"),
    ([[0.0, 1.0], [np.nan, 1.0]], 10, r"waypoints contains NaN or inf \(waypoint 1\)"),
    ([[0.0, 1.0], [1.0, 1.0], [2.0, 0.0]], 2, r"gridpoints must be an integer >= the number of waypoints \(3\)"),
    ([[0.0, 1.0], [1.0, 1.0]], 10.0, r"gridpoints must be an integer"),
])
def test_bad_waypoints_are_refused_by_name(waypoints, gridpoints, message):
    with pytest.raises(ValueError, match=message):
        rd.path_through_waypoints(waypoints, gridpoints)


# --- check_trajectory ------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def puma():
    return Pair("puma560")


def test_check_trajectory_is_batch_inverse_dynamics(puma):
    model = puma.model
    rng = np.random.default_rng(3)
    times = np.cumsum(rng.uniform(0.01, 0.1, 40))
    q, v, a = rng.uniform(-1, 1, (3, 40, model.nv))
    a[17] *= 1000.0                               # one point beyond the limits
    check = rd.check_trajectory(model, times, q, v, a)
    tau = np.array([puma.ours_v(pin.rnea(puma.pin, puma.data, puma.pin_q(x), puma.pin_v(y), puma.pin_v(z)))
                    for x, y, z in zip(q, v, a)])
    np.testing.assert_allclose(check.tau, tau, rtol=0, atol=1e-9 * np.abs(tau).max())
    np.testing.assert_array_equal(check.tau, rd.inverse_dynamics(model, q, v, a))
    ratio = np.abs(tau) / model.effort_limits
    np.testing.assert_allclose(check.peak, ratio.max(axis=0), rtol=1e-9)
    np.testing.assert_array_equal(check.peak_time, times[ratio.argmax(axis=0)])
    first = np.flatnonzero((ratio > 1).any(axis=1))[0]
    assert not check.feasible and check.first_violation_index == first == 17
    assert check.first_violation_time == times[17]
    assert check.first_violation_joint == model.joint_names[int(np.argmax(ratio[17]))]
    ok = rd.check_trajectory(model, times, q, v, a, effort_limits=1e6)
    assert ok.feasible and ok.first_violation_time is None and ok.first_violation_joint is None


def test_check_trajectory_holds_velocity_and_acceleration_limits_when_given(puma):
    """A positions-only 1 rad step of joint1 in 0.2 s (5 rad/s against the URDF's 1.92) is infeasible by
    velocity; the first violation names the limit, the point and the joint; without those limits the
    check is the effort one alone."""
    model = puma.model
    times = np.array([0.0, 0.1, 0.2])
    q, v, a = np.zeros((3, 6)), np.zeros((3, 6)), np.zeros((3, 6))
    q[:, 0], v[1, 0] = [0.0, 0.5, 1.0], 5.0
    assert rd.check_trajectory(model, times, q, v, a).feasible
    check = rd.check_trajectory(model, times, q, v, a, velocity_limits=model.velocity_limits)
    assert not check.feasible and (check.first_violation_index, check.first_violation_joint,
                                   check.first_violation_limit) == (1, "joint1", "velocity")
    assert check.velocity_peak[0] == 5.0 / model.velocity_limits[0] and not check.acceleration_peak.any()
    a[2, 3] = -3.0
    check = rd.check_trajectory(model, times, q, v, a, acceleration_limits=2.0)
    assert (check.first_violation_index, check.first_violation_joint, check.first_violation_limit) == (
        2, "joint4", "acceleration") and check.acceleration_peak[3] == 1.5


def test_a_time_optimal_trajectory_checks_feasible_at_its_limits(puma):
    """The output of time_parameterize meets its effort limits exactly where they are active:
    check_trajectory calls it feasible (rounding within 1e-9 of a limit is no violation) with a
    peak of 1 on the limiting joint."""
    model = puma.model
    s, q, dq, ddq = rd.path_through_waypoints([[0, -0.5, 0.5, 0, 0.3, 0], [1.0, 0.2, -0.3, 0.8, -0.4, 1.0],
                                               [0.3, 0.6, 0.2, -0.5, 0.5, -0.5]], 200)
    effort = 0.6 * model.effort_limits
    tp = rd.time_parameterize(model, s, q, dq, ddq, effort_limits=effort)
    check = rd.check_trajectory(model, tp.t, tp.q, tp.v, tp.a, effort_limits=effort)
    assert check.feasible, check.peak
    assert np.max(check.peak) == pytest.approx(1.0, abs=1e-9)
    np.testing.assert_allclose(check.tau, tp.tau, rtol=0, atol=1e-9 * effort.max())


@pytest.mark.parametrize("change, message", [
    (dict(times=[0.0, 0.1, 0.1]), r"times must increase: times\[2\] = 0.1 follows times\[1\] = 0.1"),
    (dict(times=[0.0, np.nan, 0.2]), r"times contains NaN or inf \(times\[1\]\)"),
    (dict(times=[[0.0, 0.1, 0.2]]), r"times must be a 1-D array"),
    (dict(q=np.zeros((2, 6))), r"q must have shape \(3, 6\)"),
    (dict(a=np.zeros((3, 5))), r"a must have shape \(3, 6\)"),
    (dict(effort_limits=0.0), r"effort_limits must be positive"),
    (dict(effort_limits=[1.0] * 5), r"effort_limits takes one number or one per joint \(6\)"),
])
def test_check_trajectory_refuses_bad_inputs_by_name(puma, change, message):
    args = dict(times=[0.0, 0.1, 0.2], q=np.zeros((3, 6)), v=np.zeros((3, 6)), a=np.zeros((3, 6)))
    args.update(change)
    with pytest.raises(ValueError, match=message):
        rd.check_trajectory(puma.model, **args)
