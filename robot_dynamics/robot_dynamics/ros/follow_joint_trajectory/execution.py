"""A checked goal (goal.Plan) as the front sends it on to the controller or executes it: timed within
the limits as `execution.retime` says, and every point carrying the inverse dynamics of the
trajectory executed (the node's model: payload and armature included).

- never: the plan as timed, checked first (velocity and acceleration limits, and the torques of
  rd.check_trajectory against the effort limits, at its points and SAMPLES samples inside each
  segment of joint_trajectory_controller's interpolation); infeasible: INVALID_GOAL naming the
  time, the joint and the limit.
- when_infeasible: the plan as timed if that check passes, else retimed.
- always: retimed.
Retimed: the path through the plan's distinct positions (rd.path_through_waypoints) timed by
rd.time_parameterize (TOPP-RA, Pham and Pham, T-RO 2018; the interpolation discretization, so that
the limits hold across each segment) within the URDF's (or configured) velocity, acceleration and
effort limits, the effort limits times execution.effort_scaling; its points are the gridpoints
(trajectories.point_accelerations: their accelerations and torques).
Efforts: the inverse dynamics at each point's positions, velocities and accelerations, without the
gravity torques g(q) when the drive compensates gravity itself (drive_compensates_gravity: UR,
Franka); the effort limits always bound the full torque. A trajectory that ends at rest ends with the
torque that holds it there (acceleration 0 at the last point: a retimed one is sent so, and a plan as
timed gets that effort whatever acceleration its last point names): the controller holds its last
point with that effort once it ends, and the decelerating torque of a last segment, held for good,
would push the arm away (the MoveIt demo's arm drifted 1.5 rad in 1 s).
Points with positions only are interpolated linearly by the controller: their velocity jumps at
the points, an infinite acceleration, so such a plan is never feasible unless it stands still.
The trajectory starts where the arm is: a plan whose first point comes after its start is executed
from the measured state (joint_trajectory_controller's point before the trajectory), and so checked.
"""
from dataclasses import dataclass

import numpy as np

from ... import dynamics as rd
from ...time_optimal import coordinate_names
from ...trajectory import OVER
from ..trajectories import Columns
from ..trajectories.services import point_accelerations
from .codes import INVALID_GOAL, GoalError

#: samples inside each segment of the plan where `never` and `when_infeasible` check the limits
SAMPLES = 8
#: gridpoints of a retimed path: PER_SPAN per span between distinct positions, within [GRIDPOINTS, MAX_GRIDPOINTS]
PER_SPAN, GRIDPOINTS, MAX_GRIDPOINTS = 10, 100, 10_000


@dataclass
class Execution:
    """What the front sends on: `joint_names` (the goal's, then the controller's joints it did not
    name, held where measured), points at `times` [s from `start`, ns] with positions, velocities
    and accelerations (None: the plan had none) and efforts, each (M, joints); retimed or not and why
    (`reason`); active_limits: per point of a retimed plan, the limit that holds it (TimedPath.limits)."""
    joint_names: list
    times: np.ndarray
    positions: np.ndarray
    velocities: np.ndarray
    accelerations: np.ndarray
    efforts: np.ndarray
    start: int
    retimed: bool
    reason: str
    active_limits: list = None

    @property
    def duration(self):
        return float(self.times[-1])


def limits(config, options):
    """(velocity, acceleration, effort) limits per velocity coordinate of the model (+inf: none) from
    the options (over the node's output joints) and the URDF; the effort limits times effort_scaling.
    ValueError naming the option, or the joint whose URDF limit is missing."""
    cols, model = Columns(config, config.joints, "execution"), config.model
    return (cols.limits(config, options.velocity_limits, "execution.velocity_limits", model.velocity_limits),
            cols.limits(config, options.acceleration_limits, "execution.acceleration_limits", None),
            cols.limits(config, options.effort_limits, "execution.effort_limits", model.effort_limits,
                        options.effort_scaling))


def prepare(config, model, plan, held_q, held_v, options):
    """The Execution of a plan (goal.check) under the options (goal.Options). model: config.model or
    a copy of it with buffers of its own; held_q, held_v: the measured state (held_v None: at rest).
    GoalError(INVALID_GOAL) for a plan `never` may not retime, or that no timing fits the limits."""
    try:
        return _prepare(config, model, plan, held_q, held_v, options, limits(config, options))
    except GoalError:
        raise
    except ValueError as exc:       # the options against the URDF, or a library check: the goal is not executed
        raise GoalError(INVALID_GOAL, str(exc)) from None


def _prepare(config, model, plan, held_q, held_v, options, bounds):
    T, P, V, A = _executed(plan, held_q, held_v)
    violation = None if options.retime == "always" else _violation(model, held_q, T, P, V, A, bounds)
    if options.retime == "never" and violation:
        raise GoalError(INVALID_GOAL, f"the trajectory is beyond the limits and execution.retime is never: {violation}")
    if options.retime == "never" or options.retime == "when_infeasible" and not violation:
        times, q, v, a = plan.times, plan.positions, plan.velocities, plan.accelerations
        q_s, v_s, a_s = rd.Trajectory(T, P, V, A).sample(times)          # what the controller plays at the points
        execution = _outputs(config, model, plan, held_q, times, q, v, a, (q_s, v_s, a_s), options)
        execution.reason = "within the limits as timed"
        return execution
    times, q, v, a, active = _retime(model, P, bounds)
    execution = _outputs(config, model, plan, held_q, times, q, v, a, (q, v, a), options)
    execution.retimed, execution.active_limits = True, active
    execution.reason = violation or "execution.retime is always"
    return execution


def _executed(plan, held_q, held_v):
    """The points the controller interpolates (model-joint columns): the plan's, after the measured
    state at t = 0 when its first point comes later."""
    T, P, V, A = plan.times, plan.positions, plan.velocities, plan.accelerations
    if T[0] <= 0.0:
        return T, P, V, A
    qo, vo = plan.cols.qo, plan.cols.vo
    v0 = np.zeros(P.shape[1]) if held_v is None else held_v[vo:]
    return (np.concatenate(([0.0], T)), np.vstack((held_q[qo:], P)),
            None if V is None else np.vstack((v0, V)), None if A is None else np.vstack((np.zeros(P.shape[1]), A)))


def _full(model, held_q, q, v, a):
    """Model-joint columns (k, joints) -> whole states (k, nq / nv): multi-coordinate joints held, at rest."""
    qo, vo = model.joint_offset
    Q, Vf, Af = np.empty((len(q), model.nq)), np.zeros((len(q), model.nv)), np.zeros((len(q), model.nv))
    Q[:, :qo], Q[:, qo:], Vf[:, vo:], Af[:, vo:] = held_q[:qo], q, v, a
    return Q, Vf, Af


def _violation(model, held_q, T, P, V, A, bounds):
    """The first place where the trajectory the controller interpolates through the points leaves the
    limits, as text (time, joint, value, limit), or None."""
    names, vo = coordinate_names(model), model.joint_offset[1]
    if V is None:                                     # linear: the velocity jumps at the points
        slopes = np.diff(P, axis=0) / np.diff(T)[:, None]
        rest = np.zeros((1, P.shape[1]))
        jumps = np.diff(np.vstack((rest, slopes, rest)), axis=0)
        moving = np.argwhere(jumps != 0.0)
        if len(moving):
            k, j = moving[0]
            return (f"at t = {T[k]:.6g} s joint {names[vo + j]!r} changes velocity by {jumps[k, j]:.6g} at once (points "
                    f"with positions only are interpolated linearly: an infinite acceleration)")
    inner = (T[:-1, None] + np.diff(T)[:, None] * (np.arange(1, SAMPLES + 1) / (SAMPLES + 1))).ravel()
    ts = np.sort(np.concatenate((T, inner)))
    q, v, a = rd.Trajectory(T, P, V, A).sample(ts)
    Q, Vf, Af = _full(model, held_q, q, v, a)
    velocity, acceleration, effort = bounds
    found = []
    for x, limit, verb, kind in ((Vf, velocity, "moves", "velocity"), (Af, acceleration, "accelerates", "acceleration")):
        over = np.argwhere(np.abs(x) > limit * OVER)
        if len(over):
            k, j = over[0]
            found.append((k, f"joint {names[j]!r} {verb} at {x[k, j]:.6g}, beyond its {kind} limit {limit[j]:.6g}"))
    check = rd.check_trajectory(model, ts, Q, Vf, Af, effort_limits=effort)
    if not np.isfinite(check.tau).all():
        raise GoalError(INVALID_GOAL, "the efforts the trajectory needs are not finite (the goal's values are too large)")
    if not check.feasible:
        k = check.first_violation_index
        j = int(np.argmax(check.ratio[k]))
        found.append((k, f"joint {names[j]!r} needs an effort of {check.tau[k, j]:.6g}, beyond its effort limit "
                         f"{effort[j]:.6g}"))
    if not found:
        return None
    k, text = min(found, key=lambda item: item[0])
    return f"at t = {ts[k]:.6g} s {text}"


def _retime(model, P, bounds):
    """The time-optimal trajectory along the path through the distinct positions of P: times and
    positions, velocities, accelerations at its gridpoints, and what limit holds each."""
    distinct = np.concatenate(([True], np.any(np.diff(P, axis=0) != 0.0, axis=1)))
    W = P[distinct]
    if len(W) == 1:                                  # nothing moves: the position, at rest
        zero = np.zeros_like(W)
        return np.zeros(1), W, zero, zero, [""]
    gridpoints = min(MAX_GRIDPOINTS, max(GRIDPOINTS, PER_SPAN * (len(W) - 1) + 1))
    velocity, acceleration, effort = bounds
    try:
        s, q, dq, ddq = rd.path_through_waypoints(W, gridpoints)
        tp = rd.time_parameterize(model, s, q, dq, ddq, velocity_limits=velocity, acceleration_limits=acceleration,
                                  effort_limits=effort, discretization="interpolation")
    except ValueError as exc:
        raise GoalError(INVALID_GOAL, f"no timing of the trajectory's path fits the limits: {exc}") from None
    a, _ = point_accelerations(model, tp, dq, ddq)
    a[-1] = 0.0         # the end is at rest: the controller holds the last point, with its effort
    return tp.t, tp.q, tp.v, a, tp.limits


def _outputs(config, model, plan, held_q, times, q, v, a, played, options):
    """The Execution over the goal's joints and the controller's others: the points (q, v, a as sent,
    model-joint columns) and the efforts at the states the controller plays there (`played`)."""
    names = plan.names + [j for j in config.joints if j not in plan.names]
    cols = Columns(config, names, "trajectory")
    q_p, v_p, a_p = played
    if a_p is not None and (v_p is None or not v_p[-1].any()):
        a_p = a_p.copy()
        a_p[-1] = 0.0   # ends at rest: the last effort is what holds the arm there once the controller stops
    Q, Vf, Af = _full(model, held_q, q_p, v_p, a_p)
    tau = rd.inverse_dynamics(model, Q, Vf, Af)
    if options.drive_compensates_gravity:
        tau = tau - rd.gravity_torques(model, Q)
    vo = model.joint_offset[1]
    out = [None if x is None else cols.out(x) for x in (q, v, a)] + [cols.out(tau[:, vo:])]
    for x, what in zip(out, ("positions", "velocities", "accelerations", "efforts")):
        if x is not None and not np.isfinite(x).all():
            raise GoalError(INVALID_GOAL, f"the {what} computed are not finite (the goal's values are too large)")
    return Execution(names, np.asarray(times, float), *out, start=plan.start, retimed=False, reason="")
