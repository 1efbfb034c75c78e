"""time_parameterize(discretization="interpolation"), the second scheme of Pham and Pham (IEEE T-RO
2018; toppra's DiscretizationType.Interpolation): each segment's path acceleration u_i held within the
limits at both of its ends. Against the PyPI toppra package with the same scheme and Pinocchio's RNEA
on the same samples at the same gridpoints: the same duration within 0.1 % (observed at most 2.1e-9) on
panda (arm only) and ur5 at 100 and 1000 gridpoints, with acceleration limits too; every effort,
acceleration and velocity limit met at both ends of every segment by Pinocchio's torques (1e-9);
and what it is for: a trajectory interpolated between the gridpoints (cubic segments, as
joint_trajectory_controller with positions and velocities) stays within the limits where the
collocation profile of the same path breaks them by far (the demo's path and payload)."""
import numpy as np
import pytest

from oracle import URDFS, pin
from test_time_optimal import EFFORT_SCALE, WAYPOINTS
from topp_oracle import INTERPOLATION, panda_arm_urdf, pin_pair, toppra_solve

from robot_dynamics import dynamics as rd
from robot_dynamics import load_urdf
from robot_dynamics.payload import add_payload
from robot_dynamics.resources import bundled_urdf


@pytest.fixture(scope="module")
def arms(tmp_path_factory):
    folder = tmp_path_factory.mktemp("arms")
    return {"panda": pin_pair(panda_arm_urdf(folder)), "ur5": pin_pair(URDFS["ur5"])}


def segment_ends_met(pair, tp, dq, ddq, effort, vmax, accel=None):
    """At the start (u_i, x_i) and the end (u_i, x_i+1) of every segment, Pinocchio's torques within
    the effort limits, the accelerations within theirs and the speeds within the velocity limits."""
    x = tp.sd ** 2
    for k, (start, stop) in enumerate(((slice(0, -1), slice(0, -1)), (slice(1, None), slice(1, None)))):
        qs, xs = tp.q[start], x[stop][:, None]
        a = dq[start] * tp.sdd[:, None] + ddq[start] * xs
        v = dq[start] * np.sqrt(xs)
        tau = np.array([pin.rnea(pair.pin, pair.data, qi, vi, ai) for qi, vi, ai in zip(qs, v, a)])
        assert np.all(np.abs(tau) <= effort * (1 + 1e-9)), ("segment end" if k else "segment start",
                                                            np.max(np.abs(tau) / effort))
        assert np.all(np.abs(v) <= vmax * (1 + 1e-9))
        if accel is not None:
            assert np.all(np.abs(a) <= accel * (1 + 1e-9)), np.max(np.abs(a) / accel)


@pytest.mark.parametrize("gridpoints", [100, 1000])
@pytest.mark.parametrize("robot", ["panda", "ur5"])
def test_same_duration_as_toppra_and_limits_met_at_both_ends_of_every_segment(arms, robot, gridpoints):
    pair = arms[robot]
    model = pair.model
    s, q, dq, ddq = rd.path_through_waypoints(WAYPOINTS[robot], gridpoints)
    effort, vmax = EFFORT_SCALE[robot] * model.effort_limits, model.velocity_limits
    tp = rd.time_parameterize(model, s, q, dq, ddq, effort_limits=effort, discretization="interpolation")
    _, duration = toppra_solve(pair, s, q, dq, ddq, effort, vmax, scheme=INTERPOLATION)
    assert abs(tp.duration / duration - 1) < 1e-3, (tp.duration, duration)
    segment_ends_met(pair, tp, dq, ddq, effort, vmax)


def test_acceleration_limits_with_interpolation(arms):
    pair = arms["panda"]
    model = pair.model
    s, q, dq, ddq = rd.path_through_waypoints(WAYPOINTS["panda"][:3], 200)
    effort, vmax, accel = 0.6 * model.effort_limits, model.velocity_limits, np.full(7, 6.0)
    tp = rd.time_parameterize(model, s, q, dq, ddq, effort_limits=effort, acceleration_limits=accel,
                              discretization="interpolation")
    _, duration = toppra_solve(pair, s, q, dq, ddq, effort, vmax, accel=accel, scheme=INTERPOLATION)
    assert abs(tp.duration / duration - 1) < 1e-3, (tp.duration, duration)
    segment_ends_met(pair, tp, dq, ddq, effort, vmax, accel)
    assert any(name.startswith("acceleration") for name in tp.limits)


#: the trajectory demo's path (demo/trajectory_demo.py): the PUMA carrying 3 kg through five waypoints
PUMA_WAYPOINTS = [[0.4, -0.8, 1.2, 0.5, -0.6, 0.3], [1.2, -1.5, 0.5, 1.3, 0.4, -0.7], [-0.3, -0.4, 1.7, -0.6, 0.9, 1.0],
                  [0.7, -1.3, 0.7, 0.9, -0.5, -0.6], [0.4, -0.8, 1.2, 0.5, -0.6, 0.3]]


def interpolated_peak(model, tp, effort):
    """max |tau| / limit along the trajectory interpolated with cubic segments through the gridpoints'
    positions and velocities, sampled every 0.5 ms."""
    t = np.arange(0.0, tp.duration, 5e-4)
    q, v, a = rd.Trajectory(tp.t, tp.q, tp.v).sample(t)
    return rd.check_trajectory(model, t, q, v, a, effort_limits=effort).peak.max()


def test_between_the_gridpoints_the_interpolated_trajectory_stays_within_the_limits():
    """Collocation leaves u_i free where a joint's inertia term is near zero at gridpoint i (a dynamic
    singularity): the profile dips sharply there, and the trajectory through the gridpoints needs twice
    the torque limit between them; with interpolation it stays within 1 % of the limits."""
    model = load_urdf(bundled_urdf("puma560"))
    model.armature = [1.141, 4.754, 0.862, 0.202, 0.181, 0.206]
    add_payload(model, "tool0", 3.0, [0.0, 0.0, 0.05], [0.004, 0.004, 0.004, 0.0, 0.0, 0.0])
    effort = 0.9 * model.effort_limits
    s, q, dq, ddq = rd.path_through_waypoints(PUMA_WAYPOINTS, 100)
    peaks = {scheme: interpolated_peak(model, rd.time_parameterize(model, s, q, dq, ddq, effort_limits=effort,
                                                                   discretization=scheme), effort)
             for scheme in ("collocation", "interpolation")}
    assert peaks["interpolation"] < 1.01 and peaks["collocation"] > 1.5, peaks


def test_a_bad_discretization_is_refused_by_name(arms):
    model = arms["ur5"].model
    s, q, dq, ddq = rd.path_through_waypoints(WAYPOINTS["ur5"], 20)
    with pytest.raises(ValueError, match="discretization must be one of"):
        rd.time_parameterize(model, s, q, dq, ddq, discretization="trapezoid")
