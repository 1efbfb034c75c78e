"""~/time_parameterize and ~/check_trajectory (no rclpy): waypoints -> the torque-limited time-optimal
trajectory (TOPP-RA), and a timed trajectory -> the torques it needs against the limits; request ->
library -> response, run outside the node's lock by the part (part.py: TrajectoryServices)."""
import array
import math

import numpy as np

from ... import dynamics as rd
from ..messages import MAGNITUDE, at_most, magnitude_problem
from . import Columns, set_duration

#: gridpoints of ~/time_parameterize's answer when the request gives 0, and the most it takes (10000:
#: ~0.1 s and ~20 MB on a 7-joint arm; 10^6 took 30 s and 1.5 GB)
GRIDPOINTS, MAX_GRIDPOINTS = 100, 10_000
#: the most samples ~/check_trajectory takes along the interpolation (sample_period too short: refused)
MAX_SAMPLES = 200_000


def scaling(value, name):
    """A scaling factor: (0, 1], 0 meaning 1 (not given)."""
    x = float(value)
    if x == 0.0:
        return 1.0
    if not 0.0 < x <= 1.0:
        raise ValueError(f"{name} must be in (0, 1] (0: 1, not given), got {value!r}")
    return x


def _points(msg, times, *fields):
    """msg.points = one JointTrajectoryPoint per time, the fields (positions, velocities, accelerations,
    effort: (M, n) arrays or None) filled."""
    from trajectory_msgs.msg import JointTrajectoryPoint      # a message type: no rclpy
    names = ("positions", "velocities", "accelerations", "effort")
    points = []
    for k, t in enumerate(times):
        point = JointTrajectoryPoint()
        set_duration(point.time_from_start, float(t))
        for name, x in zip(names, fields):
            if x is not None:
                setattr(point, name, array.array("d", x[k].tobytes()))
        points.append(point)
    msg.points = points


def answer(handler, config, held_q, request, response_type):
    """handler's response (time_parameterize, check_trajectory) to request, made and filled where it
    runs: the node's heavy-request process (ros/worker.py), with that process's buffers."""
    response = response_type()
    handler(config, config.model, held_q, request, response)
    return response


def time_parameterize(config, model, held_q, req, res, data=None):
    """~/time_parameterize: waypoints -> the time-optimal trajectory (TOPP-RA, interpolation scheme) of
    the path through them; its efforts without g(q) with drive_compensates_gravity (the limits hold the
    full torque). data: the caller's buffers (rd.Data of the model), None: the thread's."""
    waypoints = req.waypoints
    gridpoints = int(req.gridpoints) or GRIDPOINTS
    if gridpoints > MAX_GRIDPOINTS:
        raise ValueError(f"gridpoints ({gridpoints}) must be at most {MAX_GRIDPOINTS}")
    at_most(len(waypoints.points), MAX_GRIDPOINTS, "waypoints.points")
    cols = Columns(config, waypoints.joint_names, "waypoints")
    W = _waypoints(cols, waypoints, held_q)
    if gridpoints < len(W):
        raise ValueError(f"gridpoints ({gridpoints}) must be at least the number of waypoints ({len(W)})")
    velocity = cols.limits(config, req.velocity_limits, "velocity_limits", model.velocity_limits,
                           scaling(req.velocity_scaling, "velocity_scaling"))
    acceleration = cols.limits(config, req.acceleration_limits, "acceleration_limits", None,
                               scaling(req.acceleration_scaling, "acceleration_scaling"))
    effort = cols.limits(config, req.effort_limits, "effort_limits", model.effort_limits,
                         scaling(req.effort_scaling, "effort_scaling"))
    s, q, dq, ddq = rd.path_through_waypoints(W, gridpoints)
    tp = rd.time_parameterize(model, s, q, dq, ddq, velocity_limits=velocity, acceleration_limits=acceleration,
                              effort_limits=effort, discretization="interpolation", data=data)
    a, tau = point_accelerations(model, tp, dq, ddq, data)
    if config.drive_compensates_gravity:      # the limits held the full torque; the efforts leave g(q) out
        tau = point_accelerations(config.feedforward_model, tp, dq, ddq)[1]
    for x, name in ((tp.v, "velocities"), (a, "accelerations"), (tau, "efforts")):
        if not np.isfinite(x).all():
            raise ValueError(f"the {name} computed are not finite (the request's values are too large)")
    res.trajectory.joint_names = cols.names
    _points(res.trajectory, tp.t, cols.out(tp.q), cols.out(tp.v), cols.out(a), cols.out(tau))
    res.duration = float(tp.duration)
    res.active_limits = list(tp.limits)
    res.active_limits[0] = res.active_limits[-1] = ""       # at rest at both ends: no limit holds them (the .srv)
    return tp


def point_accelerations(model, tp, dq, ddq, data=None):
    """The accelerations and torques a trajectory point carries: the profile's path acceleration is
    constant on each segment (sdd_i, s_i to s_i+1) and jumps at the gridpoints, so gridpoint i gets the
    mean of sdd_i-1 and sdd_i (the first sdd_0, the last the mean of sdd_N-1 and sdd_end): qdd = q' sdd
    + q'' sd^2, and its torques, the mean of the torques on either side, both within the limits with
    the interpolation scheme. A quintic segment between points (joint_trajectory_controller with
    accelerations) must pass a jump within one segment and overshoots it; with the mean, by half as
    much as with either side's value (the demo's path: 12 % above the limits instead of 16 %)."""
    right = np.append(tp.sdd, tp.sdd_end)
    left = np.concatenate((tp.sdd[:1], tp.sdd))
    a = dq * (0.5 * (left + right))[:, None] + ddq * (tp.sd ** 2)[:, None]
    return a, rd.inverse_dynamics(model, tp.q, tp.v, a, data=data)


def _waypoints(cols, waypoints, held_q):
    """The waypoints' positions (W, model joints): timing and the other fields ignored."""
    points = waypoints.points
    if len(points) < 2:
        raise ValueError(f"waypoints has {len(points)} points: give at least 2")
    n = len(cols.names)
    for k, p in enumerate(points):
        if len(p.positions) != n:
            raise ValueError(f"waypoints.points[{k}].positions has {len(p.positions)} values for {n} joint_names")
    x = np.array([p.positions for p in points], dtype=float)
    bad = np.argwhere(~(np.abs(x) <= MAGNITUDE))
    if len(bad):
        k, j = bad[0]
        raise ValueError(f"waypoints.points[{k}].positions contains {magnitude_problem(x[k, j], cols.names[j])}")
    W = np.empty((len(points), cols.count))
    W[:] = held_q[cols.qo:]
    W[:, cols.column] = x
    same = np.flatnonzero(~np.any(np.diff(W, axis=0) != 0.0, axis=1))
    if len(same):
        k = int(same[0])
        raise ValueError(f"waypoints.points[{k}] and [{k + 1}] are the same: the path cannot pass from one to the other")
    return W


def check_trajectory(config, model, held_q, req, res, data=None):
    """~/check_trajectory: the torques a timed trajectory needs at its points (and every sample_period
    along its interpolation) against the effort limits, its velocities and accelerations against theirs
    (velocity: the URDF's unless given; acceleration: only if given). data: as time_parameterize's."""
    cols = Columns(config, req.trajectory.joint_names, "trajectory")
    times, P, V, A = cols.points(req.trajectory.points, held_q)
    period = float(req.sample_period)
    if not (period >= 0.0 and math.isfinite(period)):
        raise ValueError(f"sample_period must be a finite number >= 0 (0: at the points only), got {req.sample_period!r}")
    effort = cols.limits(config, req.effort_limits, "effort_limits", model.effort_limits)
    urdf_velocity = np.where(model.velocity_limits > 0.0, model.velocity_limits, np.inf)   # 0: none given
    velocity = cols.limits(config, req.velocity_limits, "velocity_limits", urdf_velocity)
    acceleration = cols.limits(config, req.acceleration_limits, "acceleration_limits", None)
    ts = times
    if period > 0.0:
        count = (times[-1] - times[0]) / period + 1      # a float: 5e-324 s gives inf, refused below
        if count + len(times) > MAX_SAMPLES:
            raise ValueError(f"sample_period {period:g} s gives {count:.6g} samples over {times[-1] - times[0]:g} s, more "
                             f"than {MAX_SAMPLES}: take a longer period")
        ts = np.union1d(times, times[0] + period * np.arange(math.floor(count)))
        ts = ts[ts <= times[-1]]
    q_cols, v_cols, a_cols = rd.Trajectory(times, P, V, A).sample(ts)
    qo, vo = cols.qo, cols.vo
    Q = np.empty((len(ts), model.nq))
    Q[:, :qo], Q[:, qo:] = held_q[:qo], q_cols
    Vf, Af = np.zeros((len(ts), model.nv)), np.zeros((len(ts), model.nv))
    Vf[:, vo:], Af[:, vo:] = v_cols, a_cols
    check = rd.check_trajectory(model, ts, Q, Vf, Af, effort_limits=effort, velocity_limits=velocity,
                                acceleration_limits=acceleration, data=data)
    if not np.isfinite(check.tau).all():
        raise ValueError("the efforts computed are not finite (the request's values are too large)")
    at_points = np.searchsorted(ts, times)
    tau = cols.out(check.tau[at_points, vo:])
    res.trajectory.header = req.trajectory.header
    res.trajectory.joint_names = cols.names
    _points(res.trajectory, times, *(None if x is None else cols.out(x) for x in (P, V, A)), tau)
    res.peak_ratio = array.array("d", cols.out(check.peak[vo:]).tobytes())
    res.peak_time = array.array("d", cols.out(check.peak_time[vo:]).tobytes())
    res.feasible = bool(check.feasible)
    res.first_violation_time = -1.0 if check.feasible else check.first_violation_time
    res.first_violation_joint = "" if check.feasible else check.first_violation_joint
    res.first_violation_limit = "" if check.feasible else check.first_violation_limit
    res.velocity_peak_ratio = array.array("d", cols.out(check.velocity_peak[vo:]).tobytes())
    res.acceleration_peak_ratio = array.array("d", cols.out(check.acceleration_peak[vo:]).tobytes())
    return check
