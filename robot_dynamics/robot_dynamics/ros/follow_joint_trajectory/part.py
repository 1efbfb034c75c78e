"""~/follow_joint_trajectory (control_msgs/action/FollowJointTrajectory): the front of the arm's controller.

A goal goes through, on the main executor (the action server's callbacks have a reentrant callback group
of their own, so that a goal in progress never blocks the node's parameters, services or ~/reference):

  1. accepted always, then checked (goal.check) and prepared (execution.prepare: retimed or checked
     within the limits, every point with its efforts) on the heavy-request thread, never on the
     joint_states thread. A goal that fails is aborted at once with its result code and an
     error_string naming the joint, the point and the field. joint_trajectory_controller in ROS 2
     rejects such goals in its goal callback instead, but a rejected goal carries no result: MoveIt's
     controller handle then says only "goal was rejected", while for a result it logs the code and
     the error_string (and so does any action client); the ROS 1 controller accepted and aborted too.
  2. forwarded, with execution.controller_action set: a goal of that action with the prepared
     trajectory (header.stamp as given: 0 starts when the controller has it) and the client's
     tolerances; its feedback relayed, its result (error_code, error_string) and status relayed, and
     the client's cancel passed on. A controller whose action is not up within CONTROLLER_WAIT s, or
     that rejects the goal, aborts it (INVALID_GOAL, saying so).
  3. or executed by the node itself: the prepared trajectory becomes its ~/reference (the feedforward
     outputs follow it), and every joint_states message is judged by joint_trajectory_controller's
     path and goal tolerance rules (tolerances.verdict) against the reference sampled at its stamp;
     feedback (desired, actual, error) at FEEDBACK_RATE. Success leaves the last point held; an
     abort (PATH_TOLERANCE_VIOLATED, GOAL_TOLERANCE_VIOLATED), a cancel or a new goal drop it and
     the feedforward holds the arm where it is (its gravity torques), as the controller holds its
     position. A trajectory on ~/reference (or an empty one) replaces the goal's: it is aborted,
     saying so. A new configuration of other joints aborts it too.

A goal is judged only while joint_states come (the node's time is their stamps); the client's cancel
ends it at any time."""
import time
from dataclasses import dataclass
from functools import partial

import numpy as np
from action_msgs.msg import GoalStatus
from control_msgs.action import FollowJointTrajectory
from rclpy.action import ActionClient, ActionServer, CancelResponse
from rclpy.task import Future
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from ... import dynamics as rd
from ..base import Part
from ..messages import error_text
from ..trajectories import NS, Following, set_duration
from ..trajectories.part import ReferenceFeedforward
from ..work import Busy
from . import codes, goal as goal_checks, prepare_with, prepared, tolerances
from .codes import GoalError
from .execution import model_columns, prepare

Result = FollowJointTrajectory.Result
#: s a goal waits for the controller's action server to be discovered
CONTROLLER_WAIT = 2.0
#: feedback messages per second while the node executes a goal (joint_trajectory_controller's
#: action_monitor_rate default)
FEEDBACK_RATE = 20.0
SUCCEEDED, CANCELED = GoalStatus.STATUS_SUCCEEDED, GoalStatus.STATUS_CANCELED


@dataclass
class Running:
    """A goal in progress: its handle, `done` (completed once with its outcome: (terminal event,
    Result)), and, once prepared, either `forwarded` (the controller's goal handle) or `following`
    (the trajectory the node executes, with the controller's joints' q and v columns, tolerances and
    the last feedback)."""
    handle: object
    done: Future
    outcome: tuple = None
    cancel_requested: bool = False
    forwarded: object = None
    following: Following = None
    q_index: np.ndarray = None
    v_index: np.ndarray = None
    tolerances: object = None
    continuous: np.ndarray = None
    feedback: object = None         # (stamp, t, desired, actual, error) of the last message judged
    sent: object = None             # the feedback last published
    reason: str = ""                # how it was timed, for the log


class FollowJointTrajectoryFront(Part):

    def __init__(self, node):
        super().__init__(node)
        self.group = node.heavy_group       # reentrant: a goal in progress holds no other callback
        self.feedforward = node.part(ReferenceFeedforward)
        self.config = None
        self.runs = {}              # goal id -> Running, every goal in progress
        self.executing = None       # the Running the node executes itself (one at a time), or None
        self.clients = {}           # controller action name -> ActionClient (made on first use, kept)
        self.last = ""              # the last goal's end, for /diagnostics
        self.server = ActionServer(node, FollowJointTrajectory, "~/follow_joint_trajectory", self.execute,
                                   cancel_callback=self.on_cancel, callback_group=self.group)

    @staticmethod
    def warm(config):
        """A goal of two points over the controller's joints prepared in each retime mode (limits given,
        so that a URDF without limits compiles them too): the checks, TOPP-RA and the efforts."""
        model = config.model
        if not config.joints or model.joint_offset != (0, 0):
            return []
        q = rd.neutral(model)
        idx = [model.joint_index[j] for j in config.joints]
        goal = FollowJointTrajectory.Goal()
        goal.trajectory.joint_names = list(config.joints)
        for k in range(2):
            point = JointTrajectoryPoint(positions=(q[idx] + 0.1 * k).tolist(), velocities=[0.0] * len(idx),
                                         accelerations=[0.0] * len(idx))
            set_duration(point.time_from_start, float(k))
            goal.trajectory.points.append(point)
        n, calls = len(idx), []
        for retime in goal_checks.RETIME:
            options = goal_checks.Options(retime=retime, velocity_limits=(10.0,) * n, acceleration_limits=(10.0,) * n,
                                          effort_limits=(1e6,) * n)
            tol = tolerances.defaults(config.joints)
            calls.append((f"follow_joint_trajectory (retime {retime})", partial(prepare_with, config, goal, q, options,
                                                                                 tol)))
        return calls

    def configure(self, config, keep):
        self.config = config
        run = self.executing
        if run is not None and not keep:
            self._finish(run, "abort", Result.INVALID_GOAL, "the node's model changed (its joints): the goal stopped")

    def announce(self, config, keep):
        if self.executing is not None and self.executing.outcome is not None:
            self._signal(self.executing)

    @property
    def answering(self):
        return self.executing is not None

    # --- the joint_states thread (lock held) ---------------------------------------------------
    def on_state(self, config, state, stamp, velocity, effort):
        """Judge the goal the node executes at this message: the reference the feedforward sampled at its
        stamp (the feedforward answers before this part) against the measured state."""
        run = self.executing
        if run is None or run.outcome is not None:
            return None
        schedule = self.feedforward.schedule
        following = run.following
        if schedule.following is not following:
            if following in schedule.pending:
                return None
            why = ("an empty trajectory on ~/reference cancelled it" if schedule.cancelled else
                   "a trajectory on ~/reference replaced it")
            self._finish(run, "abort", Result.INVALID_GOAL, f"{why}: the goal stopped")
            self.node.after_message.append(lambda: self._signal(run))
            return None
        ns = stamp.sec * NS + stamp.nanosec
        t = (ns - following.start) * 1e-9
        if t < 0.0:
            return None
        q_d, v_d, a_d = following.reference
        desired = (q_d[run.q_index], v_d[run.v_index], a_d[run.v_index])
        actual = (state.q[run.q_index], state.v[run.v_index] if len(velocity) else None, None)
        error = tolerances.state_error(desired, actual, run.continuous)
        run.feedback = (stamp, t, desired, actual, error)
        verdict = tolerances.verdict(run.tolerances, t, following.duration, error)
        if verdict is not None:
            code, text = verdict
            self._finish(run, "succeed" if code == Result.SUCCESSFUL else "abort", code, text)
            self.node.after_message.append(lambda: self._signal(run))
        return None

    # --- the action ----------------------------------------------------------------------------
    def on_cancel(self, handle):
        """The client's cancel: passed on to the controller, or the node's execution stopped (held)."""
        node = self.node
        with node.lock:
            run = self.runs.get(bytes(handle.goal_id.uuid))
            if run is None:
                return CancelResponse.REJECT
            run.cancel_requested = True
            forwarded = run.forwarded
            if run.following is not None:
                self._finish(run, "canceled", Result.SUCCESSFUL, "cancelled by the client")
        if forwarded is not None:
            forwarded.cancel_goal_async()
        self._signal(run)
        return CancelResponse.ACCEPT

    async def execute(self, handle):
        node = self.node
        key = bytes(handle.goal_id.uuid)
        run = Running(handle, Future(executor=node.executor))
        with node.lock:
            self.runs[key] = run
        try:
            event, result = await self._execute(run)
        except GoalError as exc:
            event, result = "abort", Result(error_code=exc.code, error_string=str(exc))
        except Exception as exc:        # never leave a goal without an answer
            event, result = "abort", Result(error_code=Result.INVALID_GOAL,
                                            error_string=error_text(exc) or type(exc).__name__)
        finally:
            with node.lock:
                self.runs.pop(key, None)
        getattr(handle, event)()
        self._said(run, event, result)
        return result

    async def _execute(self, run):
        node, handle = self.node, run.handle
        with node.lock:
            config = self.config
            if config is None or node.config is None:
                raise GoalError(Result.INVALID_GOAL, node.no_model())
            held_q, held_v = node.state.q.copy(), node.state.v.copy()
        now = node.get_clock().now().nanoseconds
        plan, ex = await self._prepared(config, handle.request, now, held_q, held_v)
        run.reason = f"retimed ({ex.reason}) to {ex.duration:.6g} s" if ex.retimed else f"as timed, {ex.duration:.6g} s"
        if run.cancel_requested:
            return "canceled", Result(error_code=Result.SUCCESSFUL, error_string="cancelled by the client before it "
                                                                                "started")
        with node.lock:
            if node.config is not config and (node.config is None or node.config.model.joint_names
                                              != config.model.joint_names or node.config.joints != config.joints):
                raise GoalError(Result.INVALID_GOAL, "the node's model changed while the goal was prepared: send it "
                                                     "again")
        name = config.execution.controller_action
        if name:
            return await self._forward(run, name, ex)
        return await self._self_execute(run, config, plan, ex, held_q)

    async def _prepared(self, *args):
        """prepared(*args) on the node's heavy-request thread (its kernels release the GIL; in the
        heavy-request process, bench_node.py --goals measured the same), awaited; a full queue aborts
        the goal."""
        try:
            work = self.node.heavy("~/follow_joint_trajectory", prepared, *args)
        except Busy as exc:
            raise GoalError(Result.INVALID_GOAL, str(exc)) from None
        return await work

    # --- forwarded to the controller ------------------------------------------------------------
    def _client(self, name):
        if name not in self.clients:
            self.clients[name] = ActionClient(self.node, FollowJointTrajectory, name, callback_group=self.group)
        return self.clients[name]

    async def _forward(self, run, name, ex):
        client, handle = self._client(name), run.handle
        if not client.server_is_ready():
            await self._until(client.server_is_ready, CONTROLLER_WAIT)
            if not client.server_is_ready():
                raise GoalError(Result.INVALID_GOAL, f"the controller's action {name} (execution.controller_action) "
                                                     f"is not available: no server within {CONTROLLER_WAIT:g} s")
        goal = forwarded_goal(handle.request, ex)
        sent = await client.send_goal_async(goal, feedback_callback=lambda msg: handle.publish_feedback(msg.feedback))
        if sent is None or not sent.accepted:
            raise GoalError(Result.INVALID_GOAL, f"the controller's action {name} rejected the goal")
        with self.node.lock:
            run.forwarded = sent
            cancel = run.cancel_requested
        if cancel:
            sent.cancel_goal_async()
        answer = await sent.get_result_async()
        event = ("succeed" if answer.status == SUCCEEDED else
                 "canceled" if answer.status == CANCELED and run.cancel_requested else "abort")
        return event, answer.result

    async def _until(self, ready, timeout):
        """Until ready() or timeout s (a steady timer polls it; rclpy has no event for a server found)."""
        done, end = Future(executor=self.node.executor), time.monotonic() + timeout

        def tick():
            if not done.done() and (ready() or time.monotonic() > end):
                done.set_result(None)
        timer = self.node.create_timer(0.02, tick, callback_group=self.group)
        try:
            await done
        finally:
            self.node.destroy_timer(timer)

    # --- executed by the node --------------------------------------------------------------------
    async def _self_execute(self, run, config, plan, ex, held_q):
        node, model = self.node, config.model
        following = Following(model, ex.start, ex.times, *model_columns(model, ex, held_q), len(ex.times))
        qo, vo = model.joint_offset
        idx = np.array([model.joint_index[j] for j in config.joints], dtype=np.intp)
        run.q_index, run.v_index = qo + idx, vo + idx
        run.tolerances, run.continuous = plan.tolerances, config.execution.continuous
        with node.lock:
            if run.cancel_requested:
                return "canceled", Result(error_code=Result.SUCCESSFUL, error_string="cancelled by the client")
            previous = self.executing
            if previous is not None:        # joint_trajectory_controller: a new goal preempts the running one
                self._finish(previous, "abort", Result.INVALID_GOAL, "preempted by a new goal")
                self.feedforward.hold(previous.following)
            run.following = following
            self.feedforward.follow(following)
            self.executing = run
            node.restep()
        if previous is not None:
            self._signal(previous)
        timer = node.create_timer(1.0 / FEEDBACK_RATE, lambda: self._feedback(run), callback_group=self.group)
        event = "abort"
        try:
            event, code, text = await run.done
        finally:
            node.destroy_timer(timer)
            with node.lock:
                if self.executing is run:
                    self.executing = None
                    node.restep()
                if event != "succeed":
                    self.feedforward.hold(following)
        self._feedback(run)
        return event, Result(error_code=code, error_string=text)

    def _finish(self, run, event, code, text):
        """The goal's outcome, once (lock held); its future is completed by _signal, lock released."""
        if run.outcome is None:
            run.outcome = (event, code, text)

    def _signal(self, run):
        if run.outcome is not None and not run.done.done():
            run.done.set_result(run.outcome)
            self.node._wake()

    def _feedback(self, run):
        with self.node.lock:
            last = run.feedback
        if last is None or last is run.sent:
            return
        run.sent = last
        stamp, t, desired, actual, error = last
        msg = FollowJointTrajectory.Feedback(joint_names=list(run.tolerances.joints))
        msg.header.stamp = stamp
        for point, values in ((msg.desired, desired), (msg.actual, actual), (msg.error, error)):
            for attribute, x in zip(("positions", "velocities", "accelerations"), values):
                if x is not None and np.isfinite(x).all():
                    setattr(point, attribute, np.asarray(x, float).tolist())
            set_duration(point.time_from_start, max(t, 0.0))
        run.handle.publish_feedback(msg)

    def _said(self, run, event, result):
        name = codes.NAMES.get(result.error_code, str(result.error_code))
        text = f"goal {event}: {name}" + (f" ({result.error_string})" if result.error_string else "")
        if run.reason:
            text += f"; {run.reason}"
        self.last = text
        logger = self.node.get_logger()
        if event == "succeed":      # rclpy refuses two severities from one line of code
            logger.info(f"follow_joint_trajectory: {text}")
        else:
            logger.warning(f"follow_joint_trajectory: {text}")

    def status(self):
        """The status "follow_joint_trajectory" (lock held)."""
        running = len(self.runs)
        where = self.config.execution.controller_action if self.config is not None else ""
        values = {"goals in progress": str(running), "executes": where or "itself (~/reference)",
                  "last goal": self.last}
        message = f"{running} goal(s) in progress" if running else "no goal in progress"
        return "follow_joint_trajectory", "OK", message + (f"; last: {self.last}" if self.last else ""), values


def forwarded_goal(request, ex):
    """The goal sent to the controller: the client's header and tolerances, the prepared trajectory."""
    goal = FollowJointTrajectory.Goal(path_tolerance=request.path_tolerance, goal_tolerance=request.goal_tolerance,
                                      component_path_tolerance=request.component_path_tolerance,
                                      component_goal_tolerance=request.component_goal_tolerance,
                                      goal_time_tolerance=request.goal_time_tolerance)
    goal.trajectory = trajectory_message(ex, request.trajectory.header)
    return goal


def trajectory_message(ex, header):
    """An Execution as a trajectory_msgs/JointTrajectory (the fields it has, efforts always)."""
    msg = JointTrajectory(header=header, joint_names=list(ex.joint_names))
    for k, t in enumerate(ex.times):
        point = JointTrajectoryPoint(positions=ex.positions[k].tolist(), effort=ex.efforts[k].tolist())
        if ex.velocities is not None:
            point.velocities = ex.velocities[k].tolist()
        if ex.accelerations is not None:
            point.accelerations = ex.accelerations[k].tolist()
        set_duration(point.time_from_start, float(t))
        msg.points.append(point)
    return msg
