"""The node's trajectory logic without DDS (robot_dynamics.ros.trajectories: no rclpy): a JointTrajectory
as the library's Trajectory over the model's joints, the ~/reference schedule with
joint_trajectory_controller's semantics, and the two services' request -> library -> response, each
against the library called directly (rd.sample_trajectory, rd.time_parameterize, rd.check_trajectory)."""

import numpy as np
import pytest

from robot_dynamics import dynamics as rd
from robot_dynamics.resources import bundled_urdf
from robot_dynamics.ros import trajectories as tr
from robot_dynamics.ros.trajectories import services
from rosconfig import configured

srv = pytest.importorskip("robot_dynamics_interfaces.srv")
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint  # noqa: E402

PUMA = bundled_urdf("puma560")
NS = 10**9


@pytest.fixture(scope="module")
def config():
    return configured(PUMA, urdf_file=PUMA)


def close(a, b, tol=1e-9):
    a, b = np.asarray(a, float), np.asarray(b, float)
    return a.shape == b.shape and np.all(np.abs(a - b) <= tol * (1 + np.abs(b)))


def trajectory(names, times, P, V=None, A=None):
    msg = JointTrajectory(joint_names=list(names))
    for k, t in enumerate(times):
        point = JointTrajectoryPoint(positions=list(map(float, P[k])))
        if V is not None:
            point.velocities = list(map(float, V[k]))
        if A is not None:
            point.accelerations = list(map(float, A[k]))
        tr.set_duration(point.time_from_start, t)
        msg.points.append(point)
    return msg


ORDER = [3, 0, 5, 1, 4, 2]     # the message names the joints in its own order


def points(seed=0, m=4):
    rng = np.random.default_rng(seed)
    return np.array([0.0, 0.4, 1.1, 1.5])[:m], rng.uniform(-1, 1, (m, 6)), rng.uniform(-1, 1, (m, 6)), rng.uniform(-2, 2, (m, 6))


@pytest.mark.parametrize("kind", ["linear", "cubic", "quintic"])
def test_following_samples_as_the_library_in_any_joint_order(config, kind):
    times, P, V, A = points()
    V, A = (None, None) if kind == "linear" else (V, None) if kind == "cubic" else (V, A)
    model = config.model
    names = [model.joint_names[i] for i in ORDER]
    msg = trajectory(names, times, P[:, ORDER], None if V is None else V[:, ORDER], None if A is None else A[:, ORDER])
    cols = tr.Columns(config, msg.joint_names, "reference")
    following = tr.Following(model, 5 * NS, *cols.points(msg.points, rd.neutral(model)), len(msg.points))
    assert following.interpolation == kind and following.end == 5 * NS + 1_500_000_000
    for ns in (4 * NS, 5 * NS, 5 * NS + 123_456_789, 5 * NS + 400_000_000, 6 * NS + 499_999_999, 6 * NS + 500_000_000, 9 * NS):
        q, v, a = rd.sample_trajectory(times, P, V, A, t=(ns - 5 * NS) * 1e-9)
        got = following.sample(ns)
        assert close(got[0], q) and close(got[1], v) and close(got[2], a)
    # before the start: the first point at rest; after the end: the last at rest
    assert close(following.sample(4 * NS)[0], P[0]) and not following.sample(4 * NS)[1].any()
    assert close(following.sample(9 * NS)[0], P[-1]) and not following.sample(9 * NS)[2].any()


def test_columns_refuse_naming_the_joint_the_point_and_the_field(config):
    model = config.model
    names = list(model.joint_names)
    with pytest.raises(ValueError, match=r"reference.joint_names: missing joints \['joint4', 'joint6'\]"):
        tr.Columns(config, [n for n in names if n not in ("joint4", "joint6")], "reference")
    with pytest.raises(ValueError, match=r"unknown joints \['gripper'\]"):
        tr.Columns(config, names + ["gripper"], "reference")
    with pytest.raises(ValueError, match="duplicate joint names"):
        tr.Columns(config, names + ["joint1"], "reference")
    cols = tr.Columns(config, names, "reference")
    times, P, V, A = points()
    held = rd.neutral(model)
    cases = [(trajectory(names, [0.0, 1.0, 1.0, 2.0], P, V), r"points\[2\].time_from_start \(1 s\) must come after"),
             (trajectory(names, times, P, V, A[:, :5]), r"points\[0\].accelerations has 5 values for 6"),
             (trajectory(names, times, P, None, A), "accelerations but no velocities")]
    bad = trajectory(names, times, P, V)
    bad.points[2].velocities[4] = float("nan")
    cases.append((bad, r"points\[2\].velocities contains NaN or inf \(joint 'joint5'\)"))
    partial = trajectory(names, times, P, V)
    partial.points[1].velocities = []
    cases.append((partial, r"points\[1\].velocities has 0 values for 6 joint_names \(velocities: every point or none\)"))
    for msg, words in cases:
        with pytest.raises(ValueError, match=words):
            cols.points(msg.points, held)


def test_output_joints_only_others_held_where_measured(config):
    """joints = the first three: a trajectory of those; the wrist stays at the measured position, at rest."""
    small = configured(PUMA, urdf_file=PUMA, joints=["joint3", "joint1", "joint2"])
    held = np.linspace(0.1, 0.6, 6)
    times, P, V, _ = points()
    cols = tr.Columns(small, ["joint1", "joint2", "joint3"], "reference")
    T, Q, Vf, Af = cols.points(trajectory(["joint1", "joint2", "joint3"], times, P[:, :3], V[:, :3]).points, held)
    assert np.all(Q[:, 3:] == held[3:]) and not Vf[:, 3:].any() and Af is None and close(Q[:, :3], P[:, :3])


def follower(model, start, times, P):
    return tr.Following(model, start, np.asarray(times, float), np.asarray(P, float), None, None, len(times))


def test_schedule_future_start_replacement_mid_way_and_cancel(config):
    model = config.model
    a = follower(model, 10 * NS, [0.0, 2.0], [np.zeros(6), np.ones(6)])
    b = follower(model, 11 * NS, [0.0, 1.0], [np.full(6, 2.0), np.full(6, 3.0)])
    c = follower(model, 13 * NS, [0.0, 1.0], [np.full(6, 4.0), np.full(6, 5.0)])
    schedule = tr.Schedule()
    assert schedule.at(1) is None
    schedule.take(a)                                    # none served: a serves at once, before its start too
    assert schedule.at(9 * NS) is a and close(a.sample(9 * NS)[0], np.zeros(6)) and not a.sample(9 * NS)[1].any()
    assert schedule.at(10 * NS + NS // 2) is a and close(a.sample(10 * NS + NS // 2)[0], np.full(6, 0.25))
    schedule.take(c)                                    # starts later: a serves until then
    schedule.take(b)                                    # starts before c: c is dropped, b replaces a from 11 s
    assert schedule.pending == [b] and schedule.at(11 * NS - 1) is a
    assert schedule.at(11 * NS) is b and schedule.at(14 * NS) is b and schedule.done
    schedule.take(follower(model, 12 * NS, [0.0, 1.0], [np.zeros(6), np.ones(6)]))   # starts in the past: now
    assert schedule.following.start == 12 * NS and not schedule.pending
    assert schedule.cancel() and not schedule.cancel()           # said once
    assert schedule.at(15 * NS) is None and schedule.cancelled
    schedule.take(c)
    assert not schedule.cancelled and schedule.at(15 * NS) is c


def waypoints(names, W):
    msg = JointTrajectory(joint_names=list(names))
    msg.points = [JointTrajectoryPoint(positions=list(map(float, w))) for w in W]
    return msg


W = np.array([[0.0, -0.3, 0.2, 0.0, 0.3, 0.0], [0.8, -0.8, 0.6, 0.5, -0.2, 0.4],
              [1.4, -0.2, 0.1, -0.3, 0.5, 0.9], [0.5, 0.3, -0.4, 0.2, 0.1, -0.2]])


def test_time_parameterize_service_equals_the_library(config):
    model = config.model
    names = [model.joint_names[i] for i in ORDER]
    req = srv.TimeParameterize.Request(waypoints=waypoints(names, W[:, ORDER]), velocity_scaling=0.5,
                                       effort_scaling=0.8, acceleration_limits=[20.0] * 6, gridpoints=60)
    res = srv.TimeParameterize.Response()
    services.time_parameterize(config, model, rd.neutral(model), req, res)
    s, q, dq, ddq = rd.path_through_waypoints(W, 60)
    tp = rd.time_parameterize(model, s, q, dq, ddq, velocity_limits=0.5 * model.velocity_limits, acceleration_limits=20.0,
                              effort_limits=0.8 * model.effort_limits, discretization="interpolation")
    assert res.duration == tp.duration and list(res.trajectory.joint_names) == names
    assert len(res.trajectory.points) == 60 and list(res.active_limits) == [""] + tp.limits[1:-1] + [""]
    got = lambda field: np.array([getattr(p, field) for p in res.trajectory.points])      # noqa: E731
    assert close(got("positions"), tp.q[:, ORDER]) and close(got("velocities"), tp.v[:, ORDER])
    t = np.array([tr.seconds(p.time_from_start) for p in res.trajectory.points])
    assert np.all(np.abs(t - tp.t) <= 0.5e-9)
    # the points' torques are the inverse dynamics of their states, within the (scaled) limits
    assert close(got("effort"), rd.inverse_dynamics(model, tp.q, tp.v, got("accelerations")[:, np.argsort(ORDER)])[:, ORDER])
    assert np.all(np.abs(got("effort")) <= 0.8 * model.effort_limits[ORDER] * (1 + 1e-9))


@pytest.mark.parametrize("fields, words", [
    (dict(velocity_scaling=1.5), r"velocity_scaling must be in \(0, 1\]"),
    (dict(effort_scaling=-0.1), r"effort_scaling must be in \(0, 1\]"),
    (dict(effort_limits=[1.0] * 5), "effort_limits has 5 values for 6 joint_names"),
    (dict(velocity_limits=[1.0, 1.0, 0.0, 1.0, 1.0, 1.0]), r"velocity_limits\[2\] \(joint 'joint3'\) must be positive"),
    (dict(gridpoints=3), r"gridpoints \(3\) must be at least the number of waypoints \(4\)"),
    (dict(waypoints=waypoints(["joint1", "joint2"], W[:, :2])), r"missing joints \['joint3'"),
    (dict(waypoints=waypoints([f"joint{k}" for k in range(1, 7)], W[:1])), "waypoints has 1 points: give at least 2"),
    (dict(waypoints=waypoints([f"joint{k}" for k in range(1, 7)], W[[0, 0, 1]])), r"points\[0\] and \[1\] are the same"),
    (dict(effort_limits=[1.0] * 6), "gravity alone"),
])
def test_time_parameterize_refuses_malformed_requests_with_reasons(config, fields, words):
    req = srv.TimeParameterize.Request(waypoints=waypoints([f"joint{k}" for k in range(1, 7)], W))
    for k, v in fields.items():
        setattr(req, k, v)
    with pytest.raises(ValueError, match=words):
        services.time_parameterize(config, config.model, rd.neutral(config.model), req, srv.TimeParameterize.Response())


def test_check_trajectory_service_equals_the_library(config):
    model = config.model
    names = [model.joint_names[i] for i in ORDER]
    times, P, V, A = points(3)
    V, A = 3 * V, 20 * A
    req = srv.CheckTrajectory.Request(trajectory=trajectory(names, times, P[:, ORDER], V[:, ORDER], A[:, ORDER]),
                                      sample_period=0.01)
    res = srv.CheckTrajectory.Response()
    services.check_trajectory(config, model, rd.neutral(model), req, res)
    ts = np.union1d(times, np.arange(151) * 0.01)
    ts = ts[ts <= times[-1]]
    q, v, a = rd.sample_trajectory(times, P, V, A, t=ts)
    check = rd.check_trajectory(model, ts, q, v, a, velocity_limits=model.velocity_limits)     # the URDF's: the default
    assert close(res.peak_ratio, check.peak[ORDER]) and close(res.peak_time, check.peak_time[ORDER])
    assert close(res.velocity_peak_ratio, check.velocity_peak[ORDER]) and not any(res.acceleration_peak_ratio)
    assert res.feasible == check.feasible and not res.feasible
    assert res.first_violation_time == check.first_violation_time and res.first_violation_joint == check.first_violation_joint
    assert res.first_violation_limit == check.first_violation_limit == "velocity"
    effort_only = srv.CheckTrajectory.Request(trajectory=req.trajectory, sample_period=0.01,
                                              velocity_limits=[float("inf")] * 6)
    services.check_trajectory(config, model, rd.neutral(model), effort_only, res)
    check = rd.check_trajectory(model, ts, q, v, a)
    assert (res.first_violation_time, res.first_violation_joint, res.first_violation_limit) == (
        check.first_violation_time, check.first_violation_joint, "effort")
    tau = np.array([p.effort for p in res.trajectory.points])
    assert close(tau, rd.inverse_dynamics(model, P, V, A)[:, ORDER])
    for fields, words in ((dict(sample_period=-1.0), "sample_period must be a finite number >= 0"),
                          (dict(sample_period=1e-9), "more than 200000"),
                          (dict(effort_limits=[0.0] * 6), r"effort_limits\[0\] \(joint 'joint4'\) must be positive")):
        bad = srv.CheckTrajectory.Request(trajectory=req.trajectory, **fields)
        with pytest.raises(ValueError, match=words):
            services.check_trajectory(config, model, rd.neutral(model), bad, srv.CheckTrajectory.Response())
