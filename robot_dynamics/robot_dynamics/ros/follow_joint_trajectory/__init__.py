"""~/follow_joint_trajectory: the node's control_msgs/action/FollowJointTrajectory front of the arm's
controller, which MoveIt (or any client) uses in place of the controller's own action. Its logic
without rclpy (tested without DDS), its parameters (`execution.*`) and settings here; the action
server in part.py.

    codes       the action's result codes; GoalError (a code and its error_string)
    goal        a goal checked as joint_trajectory_controller checks one, with bounds on its size:
                Options (execution.*), check -> Plan
    execution   a Plan as sent on: retimed within the limits (execution.retime) or checked, every
                point with its inverse dynamics (drive_compensates_gravity): prepare -> Execution
    tolerances  joint_trajectory_controller's path and goal tolerances for a trajectory the node
                executes itself: defaults, from_goal, state_error, verdict

The controller's joints are the node's output joints (parameter `joints`).
"""
import re
from dataclasses import dataclass

import numpy as np

from ..parameters import ParameterError, ParameterSpec, a_boolean, a_string, floats, in_range, non_negative, one_of, \
    positive
from . import goal as goal_checks
from . import tolerances as tolerance_rules
from .codes import GoalError
from .execution import prepare

#: a ROS name as rcl takes one for an action: absolute, relative or private (~/), tokens of letters,
#: digits and underscores, not starting with a digit
_ACTION_NAME = re.compile(r"^(~/|/)?[A-Za-z_][A-Za-z0-9_]*(/[A-Za-z_][A-Za-z0-9_]*)*$")


def _action_name(value):
    value = a_string(value)
    if value and (len(value) > 256 or not _ACTION_NAME.match(value)):
        raise ValueError
    return value


def _limits(value):
    """Empty (the URDF's), or one finite number > 0 per `joints` entry (the count is checked in settings)."""
    return positive(floats(value))


def _tolerances(value):
    return non_negative(floats(value))


PARAMETERS = {
    "execution.controller_action": ParameterSpec(
        "", "the controller's FollowJointTrajectory action a goal is forwarded to, retimed and with its efforts "
            "(e.g. /arm_controller/follow_joint_trajectory); empty: the node executes it itself as its ~/reference "
            "(the feedforward outputs), judged by the execution.*_tolerance parameters",
        "empty or an action name (e.g. /arm_controller/follow_joint_trajectory)", _action_name),
    "execution.retime": ParameterSpec(
        "when_infeasible", "never: a goal as timed, refused if beyond the limits (naming the time, joint and limit); "
                           "when_infeasible: retimed (TOPP-RA) only if beyond them; always: retimed",
        f"one of {', '.join(goal_checks.RETIME)}", one_of(*goal_checks.RETIME)),
    "execution.effort_scaling": ParameterSpec(
        1.0, "the share of the effort limits a goal is timed within (the rest for the controller's feedback)",
        "a number in (0, 1]", in_range(0.0, 1.0, low_open=True)),
    "execution.velocity_limits": ParameterSpec(
        [], "velocity limits of the goals' timing [rad/s or m/s], one per `joints` entry (empty: the URDF's)",
        "empty, or one finite number > 0 per `joints` entry", _limits),
    "execution.acceleration_limits": ParameterSpec(
        [], "acceleration limits of the goals' timing [rad/s^2 or m/s^2], one per `joints` entry (empty: none)",
        "empty, or one finite number > 0 per `joints` entry", _limits),
    "execution.effort_limits": ParameterSpec(
        [], "effort limits of the goals' timing [N m or N], one per `joints` entry (empty: the URDF's); times "
            "execution.effort_scaling", "empty, or one finite number > 0 per `joints` entry", _limits),
    "execution.allow_partial_joints_goal": ParameterSpec(
        False, "take goals that name only some of `joints` (the others held where measured), as "
               "joint_trajectory_controller's parameter of that name", "true or false", a_boolean),
    "execution.allow_nonzero_velocity_at_trajectory_end": ParameterSpec(
        False, "take goals whose last point moves, as joint_trajectory_controller's parameter of that name",
        "true or false", a_boolean),
    "execution.start_tolerance": ParameterSpec(
        0.1, "how far in the past [s] a goal's header.stamp may put its start (beyond: OLD_HEADER_TIMESTAMP)",
        "a number of seconds in [0, 60]", in_range(0.0, 60.0)),
    "execution.path_tolerance": ParameterSpec(
        [], "a goal executed by the node: position tolerance [rad or m] of each `joints` entry while it runs "
            "(empty or 0: none); a goal's path_tolerance overrides it", "empty, or one finite number >= 0 per "
                                                                        "`joints` entry", _tolerances),
    "execution.goal_tolerance": ParameterSpec(
        [], "a goal executed by the node: position tolerance [rad or m] of each `joints` entry at its end "
            "(empty or 0: none); a goal's goal_tolerance overrides it", "empty, or one finite number >= 0 per "
                                                                        "`joints` entry", _tolerances),
    "execution.stopped_velocity_tolerance": ParameterSpec(
        0.01, "a goal executed by the node: velocity tolerance [rad/s or m/s] of every joint at its end (0: none)",
        "a finite number >= 0", lambda v: non_negative(floats(v, scalar=True))),
    "execution.goal_time": ParameterSpec(
        0.0, "a goal executed by the node: the time [s] after its end within which every joint must be within "
             "its goal tolerances (0: no limit); a goal's goal_time_tolerance overrides it",
        "a finite number of seconds >= 0", lambda v: non_negative(floats(v, scalar=True))),
}

#: the execution.* parameters given per `joints` entry
PER_JOINT = ("execution.velocity_limits", "execution.acceleration_limits", "execution.effort_limits",
             "execution.path_tolerance", "execution.goal_tolerance")


@dataclass
class ExecutionSettings:
    """config.execution: how the front takes, times and executes goals."""
    options: goal_checks.Options
    tolerances: tolerance_rules.Tolerances     # the controller's defaults (a goal's own override them)
    controller_action: str                      # '' : the node executes goals itself
    continuous: np.ndarray                      # per `joints` entry: a continuous joint (its error wraps)


def settings(params, config):
    """config.execution (ExecutionSettings): the execution.* parameters checked against the joints."""
    n = len(config.joints)
    for name in PER_JOINT:
        if len(params[name]) not in (0, n):
            raise ParameterError(name, f"parameter {name} takes one value per `joints` entry ({n}: {config.joints}) "
                                       f"or none; got {len(params[name])} values")
    options = goal_checks.Options(
        retime=params["execution.retime"], effort_scaling=params["execution.effort_scaling"],
        velocity_limits=tuple(params["execution.velocity_limits"]),
        acceleration_limits=tuple(params["execution.acceleration_limits"]),
        effort_limits=tuple(params["execution.effort_limits"]),
        drive_compensates_gravity=bool(params.get("drive_compensates_gravity", False)),
        allow_partial_joints_goal=params["execution.allow_partial_joints_goal"],
        allow_nonzero_velocity_at_trajectory_end=params["execution.allow_nonzero_velocity_at_trajectory_end"],
        start_tolerance=params["execution.start_tolerance"])
    tolerances = tolerance_rules.defaults(
        config.joints, params["execution.path_tolerance"], params["execution.goal_tolerance"],
        params["execution.stopped_velocity_tolerance"], params["execution.goal_time"])
    model = config.model
    continuous = np.array([model.continuous[model.joint_index[j]] for j in config.joints], bool)
    return {"execution": ExecutionSettings(options, tolerances, params["execution.controller_action"], continuous)}


def parts():
    from .part import FollowJointTrajectoryFront
    return (FollowJointTrajectoryFront,)


def prepared(config, goal, now, held_q, held_v):
    """A goal checked and prepared as the configuration says (goal.check, execution.prepare): the
    Execution to send on, or GoalError with the result code and error_string. What the heavy-request
    worker runs, never the joint_states thread. now: the node's clock [ns]; held_q, held_v: the
    measured state."""
    settings = config.execution
    plan = goal_checks.check(config, goal, now, held_q, settings.options, settings.tolerances)
    return plan, prepare(config, config.model, plan, held_q, held_v, settings.options)


def prepare_with(config, goal, held_q, options, tol):
    """A goal checked and prepared with these options and tolerances (the warm-up's, at time 0)."""
    plan = goal_checks.check(config, goal, 0, held_q, options, tol)
    return prepare(config, config.model, plan, held_q, None, options)


__all__ = ["ExecutionSettings", "GoalError", "PARAMETERS", "settings", "parts", "prepare_with", "prepared"]
