"""The logic of ~/follow_joint_trajectory without DDS (robot_dynamics.ros.follow_joint_trajectory: no
rclpy): every result code of a goal refused and its error_string, the three retime modes against the
library called directly (rd.time_parameterize's duration, the inverse dynamics at the points, with and
without drive_compensates_gravity), and joint_trajectory_controller's path and goal tolerance rules.
The arm: the PUMA 560 with 3 kg at its last link, as in a MoveIt goal for a loaded arm."""
import math

import numpy as np
import pytest

from robot_dynamics import dynamics as rd
from robot_dynamics.resources import bundled_urdf
from robot_dynamics.ros.follow_joint_trajectory import codes, execution, goal as fjt, tolerances as tol
from robot_dynamics.ros.parameters import ParameterError
from robot_dynamics.ros.trajectories import set_duration
from rosconfig import configured

action = pytest.importorskip("control_msgs.action", reason="control_msgs not built: run make")
from control_msgs.msg import JointTolerance  # noqa: E402
from trajectory_msgs.msg import JointTrajectoryPoint, MultiDOFJointTrajectoryPoint  # noqa: E402

Goal = action.FollowJointTrajectory.Goal
Result = action.FollowJointTrajectory.Result
PUMA = bundled_urdf("puma560")
NS = 10**9
NOW = 1000 * NS


def make_config(**changes):
    return configured(PUMA, urdf_file=PUMA, tip_link="link6", payload__mass=3.0, **changes)


@pytest.fixture(scope="module")
def config():
    return make_config()


@pytest.fixture(scope="module")
def held(config):
    return rd.neutral(config.model) + np.array([0.1, -0.2, 0.3, 0.0, 0.2, -0.1])


def message(names, times, P, V=None, A=None, stamp=0):
    goal = Goal()
    goal.trajectory.joint_names = list(names)
    goal.trajectory.header.stamp.sec, goal.trajectory.header.stamp.nanosec = divmod(stamp, NS)
    for k, t in enumerate(times):
        point = JointTrajectoryPoint(positions=[float(x) for x in P[k]])
        if V is not None:
            point.velocities = [float(x) for x in V[k]]
        if A is not None:
            point.accelerations = [float(x) for x in A[k]]
        set_duration(point.time_from_start, t)
        goal.trajectory.points.append(point)
    return goal


def moveit_plan(start, delta, duration, points=21):
    """A straight joint-space move timed by a quintic (as a time parameterization with uniform
    limits would time it): times, positions, velocities, accelerations."""
    t = np.linspace(0.0, duration, points)
    s = rd.time_scaling("quintic", duration, t)
    delta = np.asarray(delta, float)
    return t, start + s.s[:, None] * delta, s.sd[:, None] * delta, s.sdd[:, None] * delta


DELTA = [1.0, -0.8, 0.9, 1.0, 0.5, 0.3]


def plan_goal(config, held, duration, points=21, order=None, **kwargs):
    names = list(config.joints)
    t, P, V, A = moveit_plan(held, DELTA, duration, points)
    order = order or list(range(6))
    return message([names[i] for i in order], t, P[:, order], V[:, order], A[:, order], **kwargs)


def refused(config, held, goal, options=None, now=NOW):
    with pytest.raises(codes.GoalError) as info:
        fjt.check(config, goal, now, held, options or fjt.Options(), tol.defaults(config.joints))
    return info.value.code, str(info.value)


def prepare(config, held, goal, options, now=NOW, held_v=None):
    plan = fjt.check(config, goal, now, held, options, tol.defaults(config.joints))
    return plan, execution.prepare(config, config.model, plan, held, held_v, options)


# --- goal checks -------------------------------------------------------------------------------------------

def test_joint_names_are_checked_as_joint_trajectory_controller_does(config, held):
    goal = plan_goal(config, held, 2.0)
    names = list(config.joints)
    cases = [([], "trajectory.joint_names is empty"),
             (names[:5] + [names[0]], "trajectory.joint_names names 'joint1' more than once"),
             (names[:5] + ["elbow"], "trajectory.joint_names[5] 'elbow' is not a joint of the controller; its joints are"),
             (names[:5], "trajectory.joint_names lacks ['joint6']: name every joint of the controller"),
             (names + ["joint7"], "trajectory.joint_names has 7 names, more than the controller's 6 joints"),
             (names[:5] + ["j" * 300], "trajectory.joint_names[5] 'jjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjj'... "
                                       "(300 characters) is longer than 256 characters")]
    for given, expected in cases:
        goal.trajectory.joint_names = given
        code, text = refused(config, held, goal)
        assert code == Result.INVALID_JOINTS and expected in text, text
    goal.trajectory.joint_names = names
    # a joint of the model that the node does not output is not one of the controller's
    five = make_config(joints=names[:5])
    code, text = refused(five, held, plan_goal(config, held, 2.0, order=[0, 1, 2, 3, 5]))
    assert code == Result.INVALID_JOINTS and "(a joint of the model, not one of the controller's)" in text


def test_a_partial_goal_holds_the_joints_it_does_not_name(config, held):
    goal = plan_goal(config, held, 3.0, order=[2, 0, 1, 3, 4])       # joint6 left out, the others in any order
    code, text = refused(config, held, goal)
    assert code == Result.INVALID_JOINTS and "execution.allow_partial_joints_goal is false" in text
    options = fjt.Options(allow_partial_joints_goal=True)
    plan, ex = prepare(config, held, goal, options)
    assert ex.joint_names == ["joint3", "joint1", "joint2", "joint4", "joint5", "joint6"]
    assert np.all(ex.positions[:, 5] == held[5]) and not ex.velocities[:, 5].any()
    assert np.allclose(ex.positions[:, :5], np.array([p.positions for p in goal.trajectory.points]))


def test_malformed_points_are_invalid_goals_naming_the_point_and_the_field(config, held):
    def case(edit, expected, options=None):
        goal = plan_goal(config, held, 2.0, points=5)
        edit(goal.trajectory.points)
        code, text = refused(config, held, goal, options)
        assert code == Result.INVALID_GOAL and expected in text, text

    case(lambda p: p.clear(), "trajectory has no points")
    case(lambda p: setattr(p[2], "positions", [0.0] * 5), "trajectory.points[2].positions has 5 values for 6 joint_names")
    case(lambda p: p[3].positions.__setitem__(4, math.nan), "trajectory.points[3].positions contains NaN or inf (joint 'joint5')")
    case(lambda p: setattr(p[1], "velocities", []), "trajectory.points[1].velocities has 0 values for 6 joint_names")
    case(lambda p: [setattr(x, "velocities", []) for x in p], "the points have accelerations but no velocities")
    case(lambda p: set_duration(p[3].time_from_start, 0.5), "trajectory.points[3].time_from_start (0.5 s) must come "
                                                            "after points[2]'s (1 s)")
    case(lambda p: setattr(p[0].time_from_start, "sec", -1), "trajectory.points[0].time_from_start is negative")
    case(lambda p: setattr(p[1], "effort", [1.0, 2.0]), "trajectory.points[1].effort has 2 values for 6 joint_names")
    case(lambda p: p[4].velocities.__setitem__(2, 0.25), "trajectory.points[4].velocities: joint 'joint3' ends at 0.25, "
                                                         "not at rest (execution.allow_nonzero_velocity_at_trajectory_end")
    goal = plan_goal(config, held, 2.0, points=5)
    goal.trajectory.points[4].velocities[2] = 0.25
    fjt.check(config, goal, NOW, held, fjt.Options(allow_nonzero_velocity_at_trajectory_end=True), tol.defaults(config.joints))
    goal = plan_goal(config, held, 2.0, points=5)
    goal.multi_dof_trajectory.points.append(MultiDOFJointTrajectoryPoint())
    code, text = refused(config, held, goal)
    assert code == Result.INVALID_GOAL and "multi_dof_trajectory is not followed" in text


def test_values_beyond_any_arms_are_refused_naming_the_field(config, held):
    for field, value in (("positions", 1e308), ("velocities", -2e6), ("accelerations", 1e7)):
        goal = plan_goal(config, held, 2.0)
        getattr(goal.trajectory.points[3], field)[2] = value
        code, text = refused(config, held, goal)
        assert code == Result.INVALID_GOAL and text == (f"trajectory.points[3].{field} contains {value:g} (joint "
                                                        f"'joint3'): too large (at most 1e+06 in magnitude)"), text


def test_the_number_of_points_is_bounded_before_any_work(config, held):
    goal = plan_goal(config, held, 2.0, points=2)
    goal.trajectory.points = [goal.trajectory.points[0]] * (fjt.MAX_POINTS + 1)     # would also fail the times
    code, text = refused(config, held, goal)
    assert code == Result.INVALID_GOAL and text == f"trajectory.points has {fjt.MAX_POINTS + 1} points, more than 5000"


def test_a_start_in_the_past_is_an_old_header_timestamp(config, held):
    options = fjt.Options(start_tolerance=0.1)
    ends_before = plan_goal(config, held, 2.0, stamp=NOW - 3 * NS)
    code, text = refused(config, held, ends_before, options)
    assert code == Result.OLD_HEADER_TIMESTAMP and "the trajectory ends 1 s before now" in text
    late = plan_goal(config, held, 2.0, stamp=NOW - 150_000_000)
    code, text = refused(config, held, late, options)
    assert code == Result.OLD_HEADER_TIMESTAMP and "is 0.15 s before now, more than execution.start_tolerance 0.1 s" in text
    tolerances = tol.defaults(config.joints)
    for stamp, start in ((0, NOW), (NOW - 50_000_000, NOW), (NOW + 2 * NS, NOW + 2 * NS)):
        plan = fjt.check(config, plan_goal(config, held, 2.0, stamp=stamp), NOW, held, options, tolerances)
        assert plan.start == start


def test_tolerances_of_the_goal_are_checked(config, held):
    goal = plan_goal(config, held, 2.0)
    goal.path_tolerance = [JointTolerance(name="joint2", position=0.1, velocity=-0.5)]
    code, text = refused(config, held, goal)
    assert code == Result.INVALID_GOAL and text == ("goal.path_tolerance[0].velocity (joint 'joint2') is -0.5: a tolerance "
                                                    "is > 0, 0 (the default) or -1 (none)")
    goal.path_tolerance = [JointTolerance(name="wrist", position=0.1)]
    code, text = refused(config, held, goal)
    assert code == Result.INVALID_JOINTS and "goal.path_tolerance[0].name 'wrist' is not a joint of the controller" in text
    goal.path_tolerance = []
    goal.goal_tolerance = [JointTolerance(name="joint1", position=0.01)] * 7
    code, text = refused(config, held, goal)
    assert code == Result.INVALID_GOAL and "goal.goal_tolerance has 7 entries for the controller's 6 joints" in text
    goal.goal_tolerance = []
    goal.goal_time_tolerance.sec, goal.goal_time_tolerance.nanosec = -2, 0
    code, text = refused(config, held, goal)
    assert code == Result.INVALID_GOAL and "goal.goal_time_tolerance is -2.0" in text


def test_options_are_refused_naming_the_parameter():
    for kwargs, name in (({"retime": "sometimes"}, "execution.retime"), ({"effort_scaling": 0.0}, "execution.effort_scaling"),
                         ({"effort_scaling": 1.5}, "execution.effort_scaling"),
                         ({"start_tolerance": math.inf}, "execution.start_tolerance"),
                         ({"drive_compensates_gravity": 1}, "drive_compensates_gravity"),
                         ({"allow_partial_joints_goal": "yes"}, "execution.allow_partial_joints_goal")):
        with pytest.raises(ParameterError) as info:
            fjt.Options(**kwargs)
        assert info.value.name == name and name in str(info.value)


# --- retiming and efforts ------------------------------------------------------------------------------------

def retimed_directly(config, P, velocity=None, acceleration=None, effort_scale=1.0):
    """rd.time_parameterize on the path through the plan's distinct positions, as the front calls it."""
    model = config.model
    W = P[np.concatenate(([True], np.any(np.diff(P, axis=0) != 0.0, axis=1)))]
    gridpoints = min(execution.MAX_GRIDPOINTS, max(execution.GRIDPOINTS, execution.PER_SPAN * (len(W) - 1) + 1))
    s, q, dq, ddq = rd.path_through_waypoints(W, gridpoints)
    return rd.time_parameterize(model, s, q, dq, ddq, velocity_limits=velocity, acceleration_limits=acceleration,
                                effort_limits=model.effort_limits * effort_scale, discretization="interpolation")


def efforts_at_points(config, ex, compensated=False):
    """The inverse dynamics at the points of an Execution (the controller's joint order = the model's)."""
    model = config.model
    order = [ex.joint_names.index(j) for j in model.joint_names]
    q, v, a = (x[:, order] for x in (ex.positions, ex.velocities, ex.accelerations))
    tau = rd.inverse_dynamics(model, q, v, a)
    if compensated:
        tau -= rd.gravity_torques(model, q)
    back = [model.joint_names.index(j) for j in ex.joint_names]
    return tau[:, back]


def test_retime_never_refuses_an_infeasible_plan_naming_the_time_the_joint_and_the_limit(config, held):
    fast = plan_goal(config, held, 0.5)
    code, text = refused_at_prepare(config, held, fast, fjt.Options(retime="never"))
    assert code == Result.INVALID_GOAL
    assert text.startswith("the trajectory is beyond the limits and execution.retime is never: at t = ")
    assert "joint 'joint1' moves at" in text and "beyond its velocity limit 1.92" in text, text
    free = fjt.Options(retime="never", velocity_limits=[100.0] * 6)     # no velocity limit: the torques are
    code, text = refused_at_prepare(config, held, plan_goal(config, held, 0.3), free)
    assert code == Result.INVALID_GOAL and "needs an effort of" in text and "beyond its effort limit" in text, text
    capped = fjt.Options(retime="never", acceleration_limits=[0.1] * 6)     # the plan peaks at 0.16 rad/s^2
    code, text = refused_at_prepare(config, held, plan_goal(config, held, 6.0), capped)
    assert "accelerates at" in text and "beyond its acceleration limit 0.1" in text, text


def refused_at_prepare(config, held, goal, options):
    with pytest.raises(codes.GoalError) as info:
        prepare(config, held, goal, options)
    return info.value.code, str(info.value)


def test_retime_when_infeasible_retimes_an_infeasible_plan_as_time_parameterize_does(config, held):
    goal = plan_goal(config, held, 0.5, order=[5, 3, 1, 0, 2, 4])
    plan, ex = prepare(config, held, goal, fjt.Options())
    assert ex.retimed and ex.reason.startswith("at t = ") and "beyond its velocity limit" in ex.reason
    tp = retimed_directly(config, plan.positions)
    assert ex.duration == tp.duration and ex.duration > 0.5
    assert ex.joint_names == ["joint6", "joint4", "joint2", "joint1", "joint3", "joint5"]
    assert np.allclose(ex.times, tp.t, rtol=0, atol=0) and ex.active_limits == tp.limits
    assert np.allclose(ex.efforts, efforts_at_points(config, ex), rtol=1e-12, atol=1e-9)
    order = [config.model.joint_names.index(j) for j in ex.joint_names]
    assert np.all(np.abs(ex.efforts) <= config.model.effort_limits[order] * (1 + 1e-6))
    assert np.allclose(ex.positions[[0, -1]], plan.positions[[0, -1]][:, order], atol=1e-12)


def test_retime_keeps_a_feasible_plan_with_the_efforts_of_its_points(config, held):
    goal = plan_goal(config, held, 6.0)
    for mode in ("never", "when_infeasible"):
        plan, ex = prepare(config, held, goal, fjt.Options(retime=mode))
        assert not ex.retimed and ex.reason == "within the limits as timed"
        assert np.array_equal(ex.times, plan.times) and np.array_equal(ex.positions, plan.positions)
        assert np.allclose(ex.efforts, efforts_at_points(config, ex), rtol=1e-12, atol=1e-9)
    plan, ex = prepare(config, held, goal, fjt.Options(retime="always"))
    tp = retimed_directly(config, plan.positions)
    assert ex.retimed and ex.reason == "execution.retime is always" and ex.duration == tp.duration < 6.0


def test_effort_scaling_lowers_the_effort_limits_of_the_timing(config, held):
    goal = plan_goal(config, held, 0.3)
    plan, full = prepare(config, held, goal, fjt.Options(velocity_limits=[100.0] * 6))
    plan, half = prepare(config, held, goal, fjt.Options(velocity_limits=[100.0] * 6, effort_scaling=0.5))
    tp = retimed_directly(config, plan.positions, velocity=100.0, effort_scale=0.5)
    assert half.duration == tp.duration > full.duration
    assert np.all(np.abs(half.efforts) <= 0.5 * config.model.effort_limits * (1 + 1e-6))


def test_drive_compensates_gravity_leaves_out_g_but_the_limits_bound_the_full_torque(config, held):
    goal = plan_goal(config, held, 0.5)
    for mode, duration in (("when_infeasible", 0.5), ("never", 6.0)):
        goal = plan_goal(config, held, duration)
        plan, ex = prepare(config, held, goal, fjt.Options(retime=mode, drive_compensates_gravity=True))
        assert np.allclose(ex.efforts, efforts_at_points(config, ex, compensated=True), rtol=1e-12, atol=1e-9)
        plan, full = prepare(config, held, goal, fjt.Options(retime=mode))
        assert np.array_equal(ex.times, full.times) and not np.allclose(ex.efforts, full.efforts)
    # a slow plan whose gravity torque is beyond a low limit of joint2: still refused with the compensation
    low = list(config.model.effort_limits)
    low[1] = 0.5 * abs(rd.gravity_torques(config.model, held)[1])
    code, text = refused_at_prepare(config, held, plan_goal(config, held, 20.0),
                                    fjt.Options(retime="never", effort_limits=low, drive_compensates_gravity=True))
    assert code == Result.INVALID_GOAL and "joint 'joint2' needs an effort of" in text


def test_points_with_positions_only_are_interpolated_linearly_so_never_feasible_when_moving(config, held):
    t, P, _, _ = moveit_plan(held, DELTA, 6.0, points=5)
    goal = message(config.joints, t, P)
    code, text = refused_at_prepare(config, held, goal, fjt.Options(retime="never"))
    assert "at t = 0 s joint 'joint1' changes velocity by 0.0690104 at once (points with positions only are " \
           "interpolated linearly: an infinite acceleration)" in text, text
    plan, ex = prepare(config, held, goal, fjt.Options())
    assert ex.retimed and ex.duration == retimed_directly(config, plan.positions).duration
    still = message(config.joints, [1.0, 2.0], [held, held])          # standing still: feasible as timed
    plan, ex = prepare(config, held, still, fjt.Options(retime="never"))
    assert not ex.retimed and ex.velocities is None
    assert np.allclose(ex.efforts, rd.gravity_torques(config.model, np.array([held, held])), atol=1e-9)


def test_a_plan_whose_first_point_comes_later_starts_from_the_measured_state(config, held):
    target = held + np.array(DELTA)
    goal = message(config.joints, [3.0], [target], [np.zeros(6)], [np.zeros(6)])
    plan, ex = prepare(config, held, goal, fjt.Options(retime="always"))
    assert np.allclose(ex.positions[0], held, atol=1e-12) and np.allclose(ex.positions[-1], target, atol=1e-12)
    tp = retimed_directly(config, np.array([held, target]))
    assert ex.duration == tp.duration
    # measured in motion: the interpolation from the moving state is what `never` checks
    moving = np.full(6, 3.0)
    code, text = refused_at_prepare_moving(config, held, goal, moving)
    assert "at t = 0 s joint 'joint1' moves at 3, beyond its velocity limit 1.92" in text, text
    plan, ex = prepare(config, held, goal, fjt.Options(retime="never"))
    assert not ex.retimed and ex.times.tolist() == [3.0]


def refused_at_prepare_moving(config, held, goal, held_v):
    with pytest.raises(codes.GoalError) as info:
        prepare(config, held, goal, fjt.Options(retime="never"), held_v=held_v)
    return info.value.code, str(info.value)


def test_a_path_no_timing_fits_is_an_invalid_goal(config, held):
    tiny = list(0.01 * config.model.effort_limits)
    code, text = refused_at_prepare(config, held, plan_goal(config, held, 0.5), fjt.Options(effort_limits=tiny))
    assert code == Result.INVALID_GOAL and text.startswith("no timing of the trajectory's path fits the limits: gravity "
                                                           "alone needs"), text


def test_a_goal_that_stands_still_is_one_point_at_rest(config, held):
    goal = message(config.joints, [0.0, 1.0], [held, held], [np.zeros(6)] * 2, [np.zeros(6)] * 2)
    plan, ex = prepare(config, held, goal, fjt.Options(retime="always"))
    assert ex.times.tolist() == [0.0] and np.array_equal(ex.positions[0], held) and not ex.velocities.any()
    assert np.allclose(ex.efforts[0], rd.gravity_torques(config.model, held), atol=1e-9)


# --- path and goal tolerances ----------------------------------------------------------------------------------

JOINTS = ["a", "b", "c"]


def test_default_tolerances_are_the_controllers_constraints():
    t = tol.defaults(JOINTS, path=[0.1, 0.0, 0.2], goal=[0.01, 0.02, 0.0], goal_time=0.5)
    assert t.path.tolist() == [[0.1, 0.0, 0.2], [0, 0, 0], [0, 0, 0]]
    assert t.goal.tolist() == [[0.01, 0.02, 0.0], [0.01] * 3, [0, 0, 0]] and t.goal_time == 0.5
    for kwargs, name, text in (
            (dict(path=[0.1]), "execution.path_tolerance", " takes one tolerance per joint (3"),
            (dict(goal=[0.1, -1.0, 0.0]), "execution.goal_tolerance", "[1] (joint 'b') must be a finite number >= 0"),
            (dict(stopped_velocity=math.nan), "execution.stopped_velocity_tolerance", " must be a finite number >= 0"),
            (dict(goal_time=-1.0), "execution.goal_time", " must be a finite number >= 0")):
        with pytest.raises(ParameterError) as info:
            tol.defaults(JOINTS, **kwargs)
        assert info.value.name == name and name + text in str(info.value), str(info.value)


def test_a_goals_tolerances_override_keep_or_erase_the_defaults():
    base = tol.defaults(JOINTS, path=[0.1, 0.1, 0.1], goal=[0.01, 0.01, 0.01], goal_time=0.5)
    goal = Goal(path_tolerance=[JointTolerance(name="b", position=0.3, velocity=2.0, acceleration=-1.0),
                                JointTolerance(name="c", position=-1.0)],
                goal_tolerance=[JointTolerance(name="a", position=0.0, velocity=-1.0)])
    goal.goal_time_tolerance.sec = 2
    t = tol.from_goal(base, goal)
    assert t.path.tolist() == [[0.1, 0.3, 0.0], [0, 2.0, 0], [0, 0, 0]]
    assert t.goal.tolist() == [[0.01, 0.01, 0.01], [0.0, 0.01, 0.01], [0, 0, 0]] and t.goal_time == 2.0
    goal.goal_time_tolerance.sec = -1                  # -1 erases: no time limit, as the controller does
    assert tol.from_goal(base, goal).goal_time == 0.0
    assert base.path.tolist() == [[0.1] * 3, [0] * 3, [0] * 3]      # the defaults unchanged


def test_the_state_error_is_desired_minus_actual_and_wraps_continuous_joints():
    desired = (np.array([3.1, 1.0, 0.5]), np.array([0.1, 0.2, 0.3]), np.zeros(3))
    actual = (np.array([-3.1, 0.5, 0.5]), np.array([0.0, 0.0, 0.0]), None)
    error = tol.state_error(desired, actual, [True, False, False])
    assert np.allclose(error[0], [6.2 - 2 * math.pi, 0.5, 0.0]) and np.allclose(error[1], [0.1, 0.2, 0.3])
    assert np.isnan(error[2]).all()                    # not measured (joint_states has no accelerations): not checked


def test_the_verdicts_follow_joint_trajectory_controller():
    t = tol.defaults(JOINTS, path=[0.1, 0.1, 0.1], goal=[0.01, 0.01, 0.01], goal_time=0.5)
    error = np.zeros((3, 3))
    assert tol.verdict(t, 1.0, 2.0, error) is None
    error[0, 1] = -0.15
    code, text = tol.verdict(t, 1.0, 2.0, error)
    assert code == Result.PATH_TOLERANCE_VIOLATED and text == ("joint 'b': position error -0.15 beyond its path "
                                                              "tolerance 0.1 at t = 1 s")
    error[0, 1] = 0.05                                  # within the path, beyond the goal tolerance
    assert tol.verdict(t, 1.0, 2.0, error) is None
    assert tol.verdict(t, 2.3, 2.0, error) is None     # after the end, within goal_time: waits
    code, text = tol.verdict(t, 2.6, 2.0, error)
    assert code == Result.GOAL_TOLERANCE_VIOLATED and text == (
        "joint 'b': position error 0.05 beyond its goal tolerance 0.01 0.6 s after the trajectory's end, more than "
        "goal_time_tolerance 0.5 s")
    error[0, 1] = 0.005
    assert tol.verdict(t, 2.0, 2.0, error)[0] == Result.SUCCESSFUL
    error[1, 2] = 0.02                                  # moving at the end: beyond stopped_velocity_tolerance 0.01
    assert tol.verdict(t, 2.2, 2.0, error) is None
    assert tol.verdict(t, 3.0, 2.0, error)[1].startswith("joint 'c': velocity error 0.02 beyond its goal tolerance 0.01")
    error[1, 2] = math.nan                              # velocity not measured: not checked
    assert tol.verdict(t, 3.0, 2.0, error)[0] == Result.SUCCESSFUL
    forever = tol.defaults(JOINTS, goal=[0.01] * 3)     # goal_time 0: waits as long as it takes
    error[0, 0] = 0.5
    assert tol.verdict(forever, 1e6, 2.0, error) is None
    # a trajectory of one point: its first sample is checked against the path and the goal at once
    assert tol.verdict(t, 0.0, 0.0, error)[0] == Result.PATH_TOLERANCE_VIOLATED
    error[0, 0] = 0.0
    assert tol.verdict(t, 0.0, 0.0, error)[0] == Result.SUCCESSFUL


def test_a_trajectory_that_ends_at_rest_ends_with_the_torque_that_holds_it(config, held):
    """The controller holds the last point with its effort once the trajectory ends: a decelerating
    torque there would push the arm away."""
    plan, ex = prepare(config, held, plan_goal(config, held, 0.5), fjt.Options())      # retimed
    assert ex.retimed and not ex.velocities[-1].any() and not ex.accelerations[-1].any()
    assert np.allclose(ex.efforts[-1], rd.gravity_torques(config.model, ex.positions[-1]), atol=1e-9)
    goal = plan_goal(config, held, 6.0)
    goal.trajectory.points[-1].accelerations = [-0.05] * 6          # as timed, its last point still braking
    plan, ex = prepare(config, held, goal, fjt.Options(retime="never"))
    assert not ex.retimed and ex.accelerations[-1].tolist() == [-0.05] * 6
    assert np.allclose(ex.efforts[-1], rd.gravity_torques(config.model, ex.positions[-1]), atol=1e-9)
    assert np.allclose(ex.efforts[:-1], efforts_at_points(config, ex)[:-1], rtol=1e-12, atol=1e-9)
