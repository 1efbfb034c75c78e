"""MoveIt demo (`make demo-moveit`): a FollowJointTrajectory goal as MoveIt sends it, to the arm's
controller directly and through the node's ~/follow_joint_trajectory.

The PUMA 560 carries 3 kg on tool0 (sim_arm and the node know it); its MuJoCo actuators saturate at the
URDF effort limits. This process plays MoveIt: the timing demo's path (timing_demo.WAYPOINTS) timed by
uniform joint velocity and acceleration limits, as MoveIt's default time parameterization times a plan
(the URDF's velocity limits, one acceleration limit for every joint, the fastest a 0.5 kg payload
tolerates: timing_demo.uniform_timing), sent as a goal of positions and velocities with no efforts.
The controller is jtc.py's stand-in for joint_trajectory_controller (PID on the tracking error plus the
points' efforts as feedforward, the controller's path and goal tolerances, PATH_TOLERANCE rad while it
runs, GOAL_TOLERANCE rad at the end) commanding sim_arm's efforts, in lockstep:

  (a) the goal straight to the controller: it has no efforts to add (MoveIt sends none), only its PID
      against gravity, 3 kg and a timing made for a lighter load.
  (b) the goal to the node's ~/follow_joint_trajectory with execution.retime never: the node checks the
      plan against the effort limits and refuses it (INVALID_GOAL naming the time, the joint and the
      torque) before anything moves.
  (c) the goal to the node with execution.retime when_infeasible (the default), which forwards it to the
      same controller (execution.controller_action) retimed within EFFORT_SCALE of the effort limits
      (execution.effort_scaling) and with every point's inverse dynamics as its effort.

It prints each run's result (code and error_string, as the client gets them), the duration, the
peak |effort| / limit, the share of steps with a saturated drive and the tracking error, and writes a
plot of the applied effort over its limit and of the tracking error (out/moveit_demo.png).
"""
import os
import sys
import time
from dataclasses import dataclass

import numpy as np
from control_msgs.action import FollowJointTrajectory
from matplotlib.figure import Figure
from rclpy.action import ActionClient
from trajectory_msgs.msg import JointTrajectoryPoint

from .. import dynamics as rd
from ..ros.follow_joint_trajectory import codes
from ..ros.follow_joint_trajectory import tolerances as rules
from ..ros.trajectories import set_duration
from . import interrupt
from .harness import CONTROLLER, Run, node_command, pd_gains, sim_command
from .jtc import TrajectoryController
from .processes import RosSession, arguments, drive, output_path
from .timing_demo import GRIDPOINTS, LIGHT, PAYLOAD, SATURATED, WAYPOINTS, arm, uniform_timing

NAME = "arm_controller"
ACTION = f"/{NAME}/follow_joint_trajectory"
EFFORT_SCALE = 0.9      # of the URDF effort limits, the node's timing (the rest is the PID's)
PATH_TOLERANCE = 0.05   # rad, every joint, while the trajectory runs (the controller's constraints)
GOAL_TOLERANCE = 0.01   # rad, every joint, at the end
GOAL_TIME = 1.0         # s after the end within which the goal tolerance must hold
SETTLE = 0.5            # s of sim time recorded after the goal's end
RESULT_TIMEOUT = 120.0  # s of wall time for a goal's result once sent (the node starts and warms up first)


def moveit_goal(joints, t, q, v):
    """What MoveIt sends for a plan: positions and velocities at each point, no efforts, header stamp 0
    (start now), no tolerances of its own (the controller's constraints apply)."""
    goal = FollowJointTrajectory.Goal()
    goal.trajectory.joint_names = list(joints)
    for k in range(len(t)):
        point = JointTrajectoryPoint(positions=q[k].tolist(), velocities=v[k].tolist())
        set_duration(point.time_from_start, float(t[k]))
        goal.trajectory.points.append(point)
    return goal


@dataclass
class Outcome:
    name: str
    status: int
    result: object          # FollowJointTrajectory.Result
    duration: float         # s of the trajectory the controller executed
    t: np.ndarray
    effort: np.ndarray      # applied efforts
    error: np.ndarray       # desired - measured positions while a goal ran (NaN elsewhere)
    real_time_factor: float


class Planner:
    """This process's MoveIt: sends the goal once the action it targets is up, keeps the result."""

    def __init__(self, node, action, goal):
        self.action, self.goal = action, goal
        self.client = ActionClient(node, FollowJointTrajectory, action)
        self.sent = self.handle = self.answer = None
        self.started = None

    def step(self):
        if self.sent is None and self.client.server_is_ready():
            self.sent, self.started = self.client.send_goal_async(self.goal), time.monotonic()
        elif self.sent is not None and self.sent.done() and self.answer is None:
            self.handle = self.sent.result()
            if not self.handle.accepted:
                raise RuntimeError(f"{self.action}: the goal was rejected")
            self.answer = self.handle.get_result_async()
        if self.started is not None and time.monotonic() - self.started > RESULT_TIMEOUT:
            raise RuntimeError(f"no result from {self.action} within {RESULT_TIMEOUT:g} s")

    @property
    def result(self):
        return self.answer.result() if self.answer is not None and self.answer.done() else None


def run(name, joints, goal, heavy, retime=None):
    """One run: sim_arm, the controller stand-in, the planner sending `goal` to the controller or, with
    `retime` (execution.retime), to the node in front of it; until SETTLE s of sim time after the
    controller's goal ended (at once if the controller got none)."""
    front = retime is not None
    kp, kd = pd_gains(heavy)
    tolerances = rules.defaults(joints, [PATH_TOLERANCE] * len(joints), [GOAL_TOLERANCE] * len(joints),
                                goal_time=GOAL_TIME)
    controller = TrajectoryController(NAME, joints, kp, kd, tolerances, f"/{CONTROLLER}/commands")
    node = {**PAYLOAD, "execution.controller_action": ACTION, "execution.effort_scaling": EFFORT_SCALE,
            "execution.retime": retime} if front else {}
    planned = goal.trajectory.points[-1].time_from_start.sec + 1e-9 * goal.trajectory.points[-1].time_from_start.nanosec
    spec = Run(name, "jtc", planned + SETTLE, desired=None, sim=dict(PAYLOAD), node=node)
    planner = Planner(controller, "/robot_dynamics/follow_joint_trajectory" if front else ACTION, goal)
    ended = []

    def done():
        if planner.result is not None and not ended:
            ended.append(controller.sim_time)
        return bool(ended) and (not controller.executed or controller.sim_time >= ended[0] + SETTLE)

    _, real_time_factor = drive(spec, controller, sim_command(joints, spec.sim), node_command(spec),
                                lambda: controller.samples, done, True, lambda executor, children: planner.step())
    t, q, effort, desired = controller.recorded()
    answer = planner.result
    executed = controller.executed
    return Outcome(name, answer.status, answer.result, executed, t, effort, desired - q, real_time_factor)


def measures(outcome, limits):
    """What the table shows of a run (error NaN: the arm never moved under a goal)."""
    ratio = np.abs(outcome.effort) / limits
    error = 1e3 * np.abs(outcome.error)
    return dict(result=codes.NAMES.get(outcome.result.error_code, str(outcome.result.error_code)),
                duration=outcome.duration, peak=ratio.max(), saturated=100.0 * np.mean((ratio >= SATURATED).any(axis=1)),
                error=np.nanmax(error) if np.isfinite(error).any() else np.nan, rtf=outcome.real_time_factor)


def table(rows):
    lines = [f"{'run':<36}{'result':>26}{'duration':>9}{'peak':>8}{'saturated':>11}{'max err':>9}{'RTF':>6}",
             f"{'':<36}{'':>26}{'[s]':>9}{'tau/lim':>8}{'[% steps]':>11}{'[mrad]':>9}{'':>6}"]
    for name, m in rows:
        lines.append(f"{name:<36}{m['result']:>26}{m['duration']:9.3f}{m['peak']:8.3f}{m['saturated']:11.1f}"
                     f"{m['error']:9.1f}{m['rtf']:6.2f}")
    return "\n".join(lines)


def plot(outcomes, joints, limits, path):
    figure = Figure(figsize=(9.0, 6.0), layout="constrained")
    axes = figure.subplots(2, len(outcomes), sharex="col", sharey="row")
    for column, outcome in enumerate(outcomes):
        top, bottom = axes[0, column], axes[1, column]
        for j, name in enumerate(joints):
            top.plot(outcome.t, outcome.effort[:, j] / limits[j], label=name, linewidth=1)
            bottom.plot(outcome.t, 1e3 * outcome.error[:, j], linewidth=1)
        for y in (1.0, -1.0):
            top.axhline(y, color="k", linestyle="--", linewidth=0.8)
        for y in (1e3 * PATH_TOLERANCE, -1e3 * PATH_TOLERANCE):
            bottom.axhline(y, color="r", linestyle=":", linewidth=0.8)
        top.set_title(outcome.name, fontsize=9)
        bottom.set_xlabel("sim time [s]")
    axes[0, 0].set_ylabel("applied effort / URDF limit")
    axes[1, 0].set_ylabel("tracking error [mrad] (path tolerance dotted)")
    axes[0, 0].legend(fontsize=7, ncol=2)
    figure.suptitle("PUMA 560 + 3 kg: a MoveIt goal to a joint_trajectory_controller stand-in, directly and through "
                    "the node", fontsize=10)
    figure.savefig(path, dpi=90)


def main(argv=None, signals_received=()):
    parser = arguments(__doc__, "moveit_demo.png")
    args = parser.parse_args(argv)
    interrupt.catch(signals_received)
    with RosSession() as ros:
        interrupt.check()
        heavy, light = arm(PAYLOAD["payload.mass"]), arm(LIGHT)
        joints = list(heavy.joint_names)
        t, q, v, a_max = uniform_timing(rd.path_through_waypoints(WAYPOINTS, GRIDPOINTS), light)
        goal = moveit_goal(joints, t, q, v)
        print(f"MoveIt demo: {len(WAYPOINTS)} waypoints, PUMA 560 + {PAYLOAD['payload.mass']:g} kg; the plan: URDF "
              f"velocity limits, uniform acceleration {a_max:.2f} rad/s^2, {t[-1]:.3f} s, {len(t)} points")
        outcomes = [run("(a) MoveIt -> controller", joints, goal, heavy),
                    run("(b) MoveIt -> node (retime never)", joints, goal, heavy, "never"),
                    run("(c) MoveIt -> node -> controller", joints, goal, heavy, "when_infeasible")]
    if ros.exit_code:
        return ros.exit_code
    limits = heavy.effort_limits
    print(table([(o.name, measures(o, limits)) for o in outcomes]))
    for o in outcomes:
        print(f"{o.name}: {codes.NAMES.get(o.result.error_code, o.result.error_code)}: {o.result.error_string}")
    plot([o for o in outcomes if o.duration], joints, limits, output_path(args.output))
    print(f"plot: {os.path.abspath(args.output)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
