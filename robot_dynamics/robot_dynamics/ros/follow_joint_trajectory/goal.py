"""A FollowJointTrajectory goal checked as joint_trajectory_controller checks one (ros2_controllers:
validate_trajectory_msg, allow_partial_joints_goal, allow_nonzero_velocity_at_trajectory_end, the
goal's tolerances), before any work, into the plan the front executes: each refusal is a result code
of control_msgs/action/FollowJointTrajectory with an error_string naming the joint, the point and the
field. joint_trajectory_controller only logs why it rejects a goal; the codes follow its ROS 1
predecessor, which returned them: INVALID_JOINTS for joint names that do not match the controller's,
INVALID_GOAL for malformed points or values, OLD_HEADER_TIMESTAMP for a start in the past.

Bounds on work (refused beyond them, the field named): at most MAX_POINTS points, joint names of at
most MAX_NAME characters and no more names than the controller has joints, at most one tolerance
entry per joint, positions, velocities and accelerations of at most MAX_MAGNITUDE; error strings
quote at most codes.SHOWN characters of a name.
"""
import math
from dataclasses import dataclass

import numpy as np

from ..parameters import ParameterError
from ..trajectories import NS, Columns, stamp_ns
from .codes import INVALID_GOAL, INVALID_JOINTS, OLD_HEADER_TIMESTAMP, GoalError, shown
from .tolerances import from_goal

#: the most points a goal's trajectory may have (MoveIt's plans: tens to a few thousand)
MAX_POINTS = 5000
#: the longest joint name taken, in characters
MAX_NAME = 256
#: the largest magnitude of a position [rad, m], velocity or acceleration taken (beyond: no arm's)
MAX_MAGNITUDE = 1e6
RETIME = ("never", "when_infeasible", "always")
#: joint_trajectory_controller's threshold for "at rest" at the trajectory's end (float32's epsilon)
AT_REST = float(np.finfo(np.float32).eps)


@dataclass
class Options:
    """How the front takes and executes goals (the node's `execution.*` parameters and the two of
    joint_trajectory_controller's it honours). Per-joint limits are over the node's output joints
    (`joints`), empty for the URDF's (velocity, effort) or none (acceleration); the effort limits are
    multiplied by effort_scaling. start_tolerance [s]: how far in the past a goal's header.stamp may
    put its start (a retimed plan starts when the front has it; a goal reaches the node within
    milliseconds, 0.1 s leaves room for a loaded machine)."""
    retime: str = "when_infeasible"
    effort_scaling: float = 1.0
    velocity_limits: tuple = ()
    acceleration_limits: tuple = ()
    effort_limits: tuple = ()
    drive_compensates_gravity: bool = False
    allow_partial_joints_goal: bool = False
    allow_nonzero_velocity_at_trajectory_end: bool = False
    start_tolerance: float = 0.1

    def __post_init__(self):
        if self.retime not in RETIME:
            raise ParameterError("execution.retime", f"execution.retime must be one of {RETIME}, got {self.retime!r}")
        for name in ("effort_scaling", "start_tolerance"):
            value = getattr(self, name)
            if not (isinstance(value, (int, float)) and math.isfinite(value) and value >= 0.0) or \
                    name == "effort_scaling" and not 0.0 < value <= 1.0:
                form = "in (0, 1]" if name == "effort_scaling" else "a finite number of seconds >= 0"
                raise ParameterError(f"execution.{name}", f"execution.{name} must be {form}, got {value!r}")
        for name in ("drive_compensates_gravity", "execution.allow_partial_joints_goal",
                     "execution.allow_nonzero_velocity_at_trajectory_end"):
            value = getattr(self, name.removeprefix("execution."))
            if not isinstance(value, bool):
                raise ParameterError(name, f"{name} must be true or false, got {value!r}")


@dataclass
class Plan:
    """A goal checked: its joints (`cols`, over the model's joints; `names` the goal's order) and
    points (times [s] from the start, positions (M, model joints) with the joints it does not name
    held where measured, velocities and accelerations or None), the start [ns, the node's clock],
    and the tolerances of its execution."""
    cols: Columns
    names: list
    times: np.ndarray
    positions: np.ndarray
    velocities: np.ndarray
    accelerations: np.ndarray
    start: int
    tolerances: object


def check(config, goal, now, held_q, options, tolerances):
    """The goal (FollowJointTrajectory.Goal) as a Plan, or GoalError with the Result code and the
    error_string. now: the node's clock [ns]; held_q: the measured configuration (the joints the goal
    does not name stay there); tolerances: the controller's (tolerances.defaults)."""
    trajectory, joints = goal.trajectory, config.joints
    names, points = trajectory.joint_names, trajectory.points
    _bounds(names, points, joints)
    if len(goal.multi_dof_trajectory.joint_names) or len(goal.multi_dof_trajectory.points):
        raise GoalError(INVALID_GOAL, "multi_dof_trajectory is not followed: this controller's joints have one "
                                      "coordinate each; leave it empty")
    names = list(names)
    _joints(names, joints, config.model, options.allow_partial_joints_goal)
    optional = np.ones(len(config.model.joint_names), bool)      # the joints not named are held
    cols = Columns(config, names, "trajectory", optional)
    try:
        times, positions, velocities, accelerations = cols.points(points, held_q, magnitude=MAX_MAGNITUDE)
    except ValueError as exc:
        raise GoalError(INVALID_GOAL, str(exc)) from None
    _efforts(points, len(names))
    if velocities is not None and not options.allow_nonzero_velocity_at_trajectory_end:
        last = np.abs(cols.out(velocities[-1]))
        moving = np.flatnonzero(last > AT_REST)
        if len(moving):
            j = int(moving[0])
            raise GoalError(INVALID_GOAL, f"trajectory.points[{len(points) - 1}].velocities: joint {names[j]!r} ends at "
                                          f"{last[j]:.6g}, not at rest (execution.allow_nonzero_velocity_at_trajectory_end "
                                          f"is false)")
    start = _start(trajectory.header.stamp, times[-1], now, options.start_tolerance)
    return Plan(cols, names, times, positions, velocities, accelerations, start, from_goal(tolerances, goal))


def _bounds(names, points, joints):
    if len(names) > len(joints):
        raise GoalError(INVALID_JOINTS, f"trajectory.joint_names has {len(names)} names, more than the controller's "
                                        f"{len(joints)} joints {joints}")
    for k, name in enumerate(names):
        if len(name) > MAX_NAME:
            raise GoalError(INVALID_JOINTS, f"trajectory.joint_names[{k}] {shown(name)} is longer than {MAX_NAME} "
                                            f"characters")
    if len(points) > MAX_POINTS:
        raise GoalError(INVALID_GOAL, f"trajectory.points has {len(points)} points, more than {MAX_POINTS}")


def _joints(names, joints, model, partial):
    """joint_trajectory_controller's joint checks: names given, each once, each a joint of the
    controller, every joint named unless partial goals are allowed."""
    if not names:
        raise GoalError(INVALID_JOINTS, f"trajectory.joint_names is empty: name the controller's joints {joints}")
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise GoalError(INVALID_JOINTS, f"trajectory.joint_names names {', '.join(map(shown, twice))} more than once")
    for k, name in enumerate(names):
        if name not in joints:
            also = " (a joint of the model, not one of the controller's)" if name in model.joint_index else ""
            raise GoalError(INVALID_JOINTS, f"trajectory.joint_names[{k}] {shown(name)} is not a joint of the "
                                            f"controller{also}; its joints are {joints}")
    missing = [j for j in joints if j not in names]
    if missing and not partial:
        raise GoalError(INVALID_JOINTS, f"trajectory.joint_names lacks {missing}: name every joint of the controller "
                                        f"{joints} (execution.allow_partial_joints_goal is false)")


def _efforts(points, n):
    for k, point in enumerate(points):
        if len(point.effort) not in (0, n):
            raise GoalError(INVALID_GOAL, f"trajectory.points[{k}].effort has {len(point.effort)} values for {n} "
                                          f"joint_names (every joint or none; the efforts sent on are computed)")


def _start(stamp, duration, now, tolerance):
    """The start [ns]: header.stamp, zero meaning now; a start in the past by up to `tolerance` [s]
    is now; earlier, or a trajectory that ends before now, is OLD_HEADER_TIMESTAMP."""
    start = stamp_ns(stamp)
    if start == 0:
        return now
    if start + round(duration * NS) < now:
        raise GoalError(OLD_HEADER_TIMESTAMP, f"trajectory.header.stamp {start / NS:.9f} s: the trajectory ends "
                                              f"{(now - start) / NS - duration:.6g} s before now ({now / NS:.9f} s)")
    if start < now - round(tolerance * NS):
        raise GoalError(OLD_HEADER_TIMESTAMP, f"trajectory.header.stamp {start / NS:.9f} s is {(now - start) / NS:.6g} s "
                                              f"before now, more than execution.start_tolerance {tolerance:g} s")
    return max(start, now)

