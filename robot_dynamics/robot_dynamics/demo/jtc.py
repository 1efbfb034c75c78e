"""A stand-in for ros2_controllers' joint_trajectory_controller (JTC) with an effort command interface,
for the MoveIt demo (moveit_demo.py): not that controller, a small model of what it does with a
FollowJointTrajectory goal, in this process, on sim_arm's joint_states and commands.

- `/<name>/follow_joint_trajectory`: a goal naming other joints than the controller's is rejected (as
  JTC rejects it); an accepted goal preempts the one running (aborted), starts at header.stamp (0: at
  the last joint_states stamp: the controller's time is the sim's) and is sampled at every joint_states
  stamp as JTC's `spline` interpolation samples it (rd.Trajectory: linear, cubic or quintic by the
  fields present).
- each joint_states is answered on `<controller>/commands` (sim_arm's input) with JTC's PID on the
  position and velocity errors plus the point's effort as feedforward (JTC adds the trajectory's
  efforts to its PID output since 2025; here the efforts between points are interpolated linearly).
  The drives saturate at the URDF limits (sim_arm clamps).
- tolerances: JTC's path and goal tolerance rules (ros/follow_joint_trajectory/tolerances.py, the
  node's own), with the controller's `constraints` given here; a violation aborts the goal with
  PATH_TOLERANCE_VIOLATED or GOAL_TOLERANCE_VIOLATED and the controller holds the position where it
  stopped; success holds the last point. Feedback at 20 Hz of sim time.
- before its first goal it commands nothing: sim_arm stays paused (wait_for_command) with the arm at
  rest, so that every run starts from the same state.

It records every joint_states (sim time, positions, applied efforts) and the desired positions."""
import numpy as np
from control_msgs.action import FollowJointTrajectory
from rclpy.action import ActionServer, CancelResponse, GoalResponse
from rclpy.node import Node
from rclpy.task import Future
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from .. import dynamics as rd
from ..ros.follow_joint_trajectory import tolerances as rules
from ..ros.trajectories import seconds, set_duration, stamp_ns
from .harness import nanoseconds

Result = FollowJointTrajectory.Result
FEEDBACK_PERIOD = 0.05      # s of sim time between feedback messages


class Goal:
    """An accepted goal: its trajectory (in the controller's joint order), efforts, start [ns], tolerances."""

    def __init__(self, handle, joints, tolerances, start):
        trajectory = handle.request.trajectory
        order = [list(trajectory.joint_names).index(j) for j in joints]
        points = trajectory.points
        self.handle, self.done, self.start = handle, Future(), start
        self.times = np.array([seconds(p.time_from_start) for p in points])
        fields = [np.array([getattr(p, f) for p in points])[:, order] if len(getattr(points[0], f)) else None
                  for f in ("positions", "velocities", "accelerations", "effort")]
        self.trajectory = rd.Trajectory(self.times, *fields[:3])
        self.efforts = fields[3] if fields[3] is not None else np.zeros((len(points), len(joints)))
        self.duration = float(self.times[-1])
        self.tolerances = rules.from_goal(tolerances, handle.request)
        self.outcome = None

    def desired(self, t):
        """(q, v, a) and the effort at t s from the start."""
        q, v, a = (x[0] for x in self.trajectory.sample(np.array([t])))
        effort = np.array([np.interp(t, self.times, column) for column in self.efforts.T])
        return q, v, a, effort


class TrajectoryController(Node):
    """The stand-in (see the module). joints: its joints (sim_arm's order); kp, kd: its PID's gains (no
    integral term: the feedforward carries the steady torques); tolerances: its constraints
    (tolerances.defaults); command_topic: sim_arm's."""

    _count = 0

    def __init__(self, name, joints, kp, kd, tolerances, command_topic):
        TrajectoryController._count += 1     # a node name per run: rosout keeps a destroyed node's a moment
        super().__init__(f"{name}_stand_in_{TrajectoryController._count}")
        self.joints, self.kp, self.kd, self.tolerances = list(joints), kp, kd, tolerances
        self.goal, self.hold = None, None       # the goal running; (q, effort) held without one
        self.samples = []                       # (t, q, applied effort, desired q or NaN)
        self.last_stamp, self.next_feedback = 0, 0.0
        self.executed = 0.0                     # the duration [s] of the last goal taken
        self.command_pub = self.create_publisher(Float64MultiArray, command_topic, 10)
        self.create_subscription(JointState, "joint_states", self.on_joint_states, 1)
        self.server = ActionServer(self, FollowJointTrajectory, f"/{name}/follow_joint_trajectory", self.execute,
                                   goal_callback=self.on_goal, cancel_callback=lambda handle: CancelResponse.ACCEPT)

    @property
    def sim_time(self):
        return self.samples[-1][0] if self.samples else 0.0

    def on_goal(self, request):
        names = request.trajectory.joint_names
        ok = sorted(names) == sorted(self.joints) and len(request.trajectory.points) > 0
        return GoalResponse.ACCEPT if ok else GoalResponse.REJECT

    async def execute(self, handle):
        start = stamp_ns(handle.request.trajectory.header.stamp) or self.last_stamp
        goal = Goal(handle, self.joints, self.tolerances, start)
        if self.goal is not None:
            self.finish(self.goal, "abort", Result.INVALID_GOAL, "preempted by a new goal")
        self.goal, self.next_feedback, self.executed = goal, 0.0, goal.duration
        event, code, text = await goal.done
        if event == "succeed":
            handle.succeed()
        elif handle.is_cancel_requested:
            handle.canceled()
        else:
            handle.abort()
        return Result(error_code=code, error_string=text)

    def finish(self, goal, event, code, text, hold=None):
        if goal.outcome is None:
            goal.outcome = (event, code, text)
            goal.done.set_result(goal.outcome)
        if self.goal is goal:
            self.goal, self.hold = None, hold

    def on_joint_states(self, msg):
        ns = nanoseconds(msg.header.stamp)
        names = list(msg.name)
        order = [names.index(j) for j in self.joints]
        q, qd = np.array(msg.position)[order], np.array(msg.velocity)[order]
        self.last_stamp = ns
        goal = self.goal
        desired = np.full(len(q), np.nan)
        if goal is not None and goal.handle.is_cancel_requested:
            self.finish(goal, "canceled", Result.SUCCESSFUL, "", hold=(q, np.zeros(len(q))))
            goal = None
        if goal is not None:
            t = max((ns - goal.start) * 1e-9, 0.0)
            q_d, v_d, _, effort = goal.desired(t)
            desired = q_d
            self.send(effort + self.kp * (q_d - q) + self.kd * (v_d - qd))
            error = rules.state_error((q_d, v_d, None), (q, qd, None), np.zeros(len(q), bool))
            self.feedback(goal, msg, t, (q_d, v_d), (q, qd), error)
            verdict = rules.verdict(goal.tolerances, t, goal.duration, error)
            if verdict is not None:
                code, text = verdict
                if code == Result.SUCCESSFUL:
                    self.finish(goal, "succeed", code, text, hold=(goal.desired(goal.duration)[0], effort))
                else:       # JTC holds the position where it stopped
                    self.finish(goal, "abort", code, text, hold=(q, np.zeros(len(q))))
        elif self.hold is not None:
            q_h, effort = self.hold
            desired = q_h
            self.send(effort + self.kp * (q_h - q) - self.kd * qd)
        if not self.samples or ns * 1e-9 > self.sim_time:
            self.samples.append((ns * 1e-9, q, np.array(msg.effort)[order], desired))

    def feedback(self, goal, msg, t, desired, actual, error):
        if t < self.next_feedback and t > 0.0:
            return
        self.next_feedback = t + FEEDBACK_PERIOD
        out = FollowJointTrajectory.Feedback(joint_names=self.joints)
        out.header.stamp = msg.header.stamp
        for point, values in ((out.desired, desired), (out.actual, actual), (out.error, error[:2])):
            point.positions, point.velocities = values[0].tolist(), values[1].tolist()
            set_duration(point.time_from_start, t)
        goal.handle.publish_feedback(out)

    def send(self, effort):
        self.command_pub.publish(Float64MultiArray(data=effort.tolist()))

    def recorded(self):
        """t, q, applied effort, desired q (NaN without a goal), each an array."""
        return tuple(np.array(column) for column in zip(*self.samples))
