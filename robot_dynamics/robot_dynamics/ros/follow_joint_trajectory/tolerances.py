"""joint_trajectory_controller's path and goal tolerances (ros2_controllers, tolerances.hpp and the
controller's update), for a trajectory the node executes itself: the defaults from the parameters,
a goal's tolerances over them, the state error, and the verdict at each sample of the execution.

Rules (control_msgs/msg/JointTolerance and joint_trajectory_controller):
- a tolerance > 0 applies; 0 in a goal keeps the default; -1 in a goal erases it (no check); a
  tolerance of 0 is not checked. Defaults (the controller's `constraints` parameters, here the
  node's execution.path_tolerance, execution.goal_tolerance, execution.stopped_velocity_tolerance
  and execution.goal_time): a path position tolerance and a goal position tolerance per joint (0:
  none), the goal velocity tolerance for every joint (0.01), the goal time (0: none).
- the error is desired - actual; for a continuous joint the shortest angle between them. A velocity
  or acceleration the actual state does not carry (joint_states has no accelerations) is not checked.
- while the trajectory runs (t before its last point, and at its first sample) every joint must
  stay within its path tolerances, or the goal aborts with PATH_TOLERANCE_VIOLATED; from the last
  point's time on, the goal succeeds as soon as every joint is within its goal tolerances, and
  aborts with GOAL_TOLERANCE_VIOLATED once goal_time has passed after the last point without it
  (with goal_time 0 it waits, as joint_trajectory_controller does).
Unlike joint_trajectory_controller, which falls back to its defaults with a log line, a goal whose
tolerances name a joint the controller does not have, or hold a value that is neither > 0, 0 nor -1,
is refused (INVALID_JOINTS, INVALID_GOAL) with the field named.
"""
import math
from dataclasses import dataclass

import numpy as np

from ..parameters import ParameterError
from .codes import (GOAL_TOLERANCE_VIOLATED, INVALID_GOAL, INVALID_JOINTS, PATH_TOLERANCE_VIOLATED, SUCCESSFUL,
                    GoalError, shown)

KINDS = ("position", "velocity", "acceleration")
#: a goal's value that erases a tolerance, matched within float32's epsilon as joint_trajectory_controller does
ERASE = -1.0
_EPS32 = float(np.finfo(np.float32).eps)


@dataclass
class Tolerances:
    """Per joint (`joints`, the controller's order) and kind (KINDS rows), 0 for none: `path` while
    the trajectory runs, `goal` at its end; goal_time [s] after the end (0: no limit)."""
    joints: list
    path: np.ndarray        # (3, n)
    goal: np.ndarray        # (3, n)
    goal_time: float


def defaults(joints, path=(), goal=(), stopped_velocity=0.01, goal_time=0.0):
    """The controller's tolerances from the node's parameters (joint_trajectory_controller's
    `constraints`: <joint>.trajectory, <joint>.goal, stopped_velocity_tolerance, goal_time): path and
    goal, a position tolerance per joint (empty: none); stopped_velocity: the goal velocity tolerance
    of every joint; goal_time [s]. ParameterError naming the parameter."""
    n = len(joints)
    out = Tolerances(list(joints), np.zeros((3, n)), np.zeros((3, n)), 0.0)
    for values, row, name in ((path, out.path[0], "execution.path_tolerance"),
                              (goal, out.goal[0], "execution.goal_tolerance")):
        x = np.asarray(values, dtype=float)
        if x.ndim != 1 or len(x) not in (0, n):
            raise ParameterError(name, f"{name} takes one tolerance per joint ({n}: {list(joints)}) or none, got "
                                       f"{len(x)}")
        bad = np.flatnonzero(~(x >= 0.0) | ~np.isfinite(x))
        if len(bad):
            raise ParameterError(name, f"{name}[{bad[0]}] (joint {joints[bad[0]]!r}) must be a finite number >= 0 "
                                       f"(0: none), got {x[bad[0]]!r}")
        row[:len(x)] = x
    for value, name in ((stopped_velocity, "execution.stopped_velocity_tolerance"), (goal_time, "execution.goal_time")):
        if not (float(value) >= 0.0 and math.isfinite(float(value))):
            raise ParameterError(name, f"{name} must be a finite number >= 0 (0: none), got {value!r}")
    out.goal[1] = float(stopped_velocity)
    out.goal_time = float(goal_time)
    return out


def _resolve(default, value, field):
    """A goal's tolerance over the default: > 0 it, 0 the default, -1 none; anything else refused."""
    value = float(value)
    if value > 0.0:
        return value
    if value == 0.0:
        return default
    if abs(value - ERASE) < _EPS32:
        return 0.0
    raise GoalError(INVALID_GOAL, f"{field} is {value!r}: a tolerance is > 0, 0 (the default) or -1 (none)")


def from_goal(tolerances, goal):
    """The tolerances a FollowJointTrajectory goal asks for (path_tolerance, goal_tolerance,
    goal_time_tolerance) over the controller's: a new Tolerances. GoalError naming the field.
    The goal's component tolerances (joints of several coordinates) are ignored, as the controller
    ignores them."""
    joints = tolerances.joints
    index = {name: i for i, name in enumerate(joints)}
    out = Tolerances(joints, tolerances.path.copy(), tolerances.goal.copy(), tolerances.goal_time)
    for field, table in (("path_tolerance", out.path), ("goal_tolerance", out.goal)):
        entries = getattr(goal, field)
        if len(entries) > len(joints):
            raise GoalError(INVALID_GOAL, f"goal.{field} has {len(entries)} entries for the controller's {len(joints)} "
                                          f"joints (one per joint at most)")
        for k, entry in enumerate(entries):
            if entry.name not in index:
                raise GoalError(INVALID_JOINTS, f"goal.{field}[{k}].name {shown(entry.name)} is not a joint of the "
                                                f"controller; its joints are {joints}")
            j = index[entry.name]
            for row, kind in enumerate(KINDS):
                table[row, j] = _resolve(table[row, j], getattr(entry, kind),
                                         f"goal.{field}[{k}].{kind} (joint {entry.name!r})")
    duration = goal.goal_time_tolerance
    out.goal_time = _resolve(out.goal_time, duration.sec + duration.nanosec * 1e-9, "goal.goal_time_tolerance")
    return out


def state_error(desired, actual, continuous):
    """desired - actual (3, n) per KINDS row, from (positions, velocities, accelerations) over the
    controller's joints; an actual row that is None (not measured) gives NaN (not checked). For the
    continuous joints (a boolean mask) the position error is the shortest angle, in [-pi, pi)."""
    n = len(desired[0])
    error = np.full((3, n), np.nan)
    for row in range(3):
        if actual[row] is not None and desired[row] is not None:
            error[row] = np.asarray(desired[row], float) - np.asarray(actual[row], float)
    wrap = np.asarray(continuous, bool)
    error[0, wrap] = (error[0, wrap] + math.pi) % (2 * math.pi) - math.pi
    return error


def _first_beyond(table, error):
    """(joint index, kind row) of the first tolerance exceeded, joint by joint, or None."""
    beyond = (table > 0.0) & (np.abs(error) > table)        # NaN (not measured) compares False
    hits = np.argwhere(beyond.T)
    return None if not len(hits) else (int(hits[0][0]), int(hits[0][1]))


def verdict(tolerances, t, end, error):
    """What the controller decides at a sample of the execution, t [s] from the trajectory's start
    (its last point at `end`), with the state error (state_error): (PATH_TOLERANCE_VIOLATED, text)
    while it runs and a joint leaves its path tolerance; from `end` on (SUCCESSFUL, text) once every
    joint is within its goal tolerance, (GOAL_TOLERANCE_VIOLATED, text) once goal_time has passed
    after `end` without that; None: go on."""
    joints = tolerances.joints
    if t < end or t <= 0.0:         # the path while it runs, and at the start (a trajectory of one point)
        hit = _first_beyond(tolerances.path, error)
        if hit is not None:
            j, row = hit
            return PATH_TOLERANCE_VIOLATED, (f"joint {joints[j]!r}: {KINDS[row]} error {error[row, j]:.6g} beyond its "
                                             f"path tolerance {tolerances.path[row, j]:.6g} at t = {t:.6g} s")
    if t < end:
        return None
    hit = _first_beyond(tolerances.goal, error)
    if hit is None:
        return SUCCESSFUL, f"every joint within its goal tolerance at t = {t:.6g} s"
    late = t - end
    if tolerances.goal_time > 0.0 and late > tolerances.goal_time:
        j, row = hit
        return GOAL_TOLERANCE_VIOLATED, (f"joint {joints[j]!r}: {KINDS[row]} error {error[row, j]:.6g} beyond its goal "
                                         f"tolerance {tolerances.goal[row, j]:.6g} {late:.6g} s after the trajectory's "
                                         f"end, more than goal_time_tolerance {tolerances.goal_time:.6g} s")
    return None
