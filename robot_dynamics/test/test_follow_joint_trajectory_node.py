"""~/follow_joint_trajectory over real DDS, one node for the module (its execution.* parameters changed
between tests): every result code and its error_string; the three retime modes as a controller receives
them (the forwarded goal's duration equal to rd.time_parameterize's, its efforts the inverse dynamics at
its points, with and without drive_compensates_gravity); feedback, result and status relayed from a test
controller's action server, and the client's cancel relayed to it; the node executing a goal itself
with joint_trajectory_controller's path and goal tolerances, and its feedback. The arm: the PUMA 560
carrying 3 kg, as in a MoveIt goal for a loaded arm."""
import time

import numpy as np
import pytest
from rosnode import NodeProcess, RELIABLE

from robot_dynamics import dynamics as rd  # noqa: E402
from robot_dynamics.ros.follow_joint_trajectory import goal as fjt  # noqa: E402
from test_ros_follow_joint_trajectory import DELTA, PUMA, make_config, message, moveit_plan, retimed_directly  # noqa: E402

from action_msgs.msg import GoalStatus  # noqa: E402
from control_msgs.action import FollowJointTrajectory  # noqa: E402
from control_msgs.msg import JointTolerance  # noqa: E402
from rclpy.action import ActionClient, ActionServer, CancelResponse  # noqa: E402
from rclpy.task import Future  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402

pytestmark = pytest.mark.ros      # ROS 2 processes and DDS (pytest -m 'not ros': the library alone)

Result = FollowJointTrajectory.Result
SUCCEEDED, CANCELED, ABORTED = GoalStatus.STATUS_SUCCEEDED, GoalStatus.STATUS_CANCELED, GoalStatus.STATUS_ABORTED
NS = 10**9
#: the arm's configuration before any joint_states: the model's neutral one (the goals start there)
HELD = np.zeros(6)


@pytest.fixture(scope="module")
def config():
    return make_config()


@pytest.fixture(scope="module")
def node():
    process = NodeProcess(f"urdf_file:={PUMA}", "tip_link:=link6", "payload.mass:=3.0")
    yield process
    assert process.stop() == 0, process.output()


class Controller:
    """A controller's FollowJointTrajectory action server in the test process: records each goal,
    publishes one feedback, then ends as `answer` says ((status, Result)) or, with answer None, waits
    for the cancel and reports it."""

    def __init__(self, client, name):
        self.goals, self.cancels, self.answer = [], 0, (SUCCEEDED, Result(error_string="reached"))
        self.release = None
        self.server = ActionServer(client.node, FollowJointTrajectory, name, self.execute,
                                   cancel_callback=self.on_cancel)

    def on_cancel(self, handle):
        self.cancels += 1
        if self.release is not None and not self.release.done():
            self.release.set_result(None)
        return CancelResponse.ACCEPT

    async def execute(self, handle):
        self.goals.append(handle.request)
        feedback = FollowJointTrajectory.Feedback(joint_names=list(handle.request.trajectory.joint_names))
        feedback.desired.positions = list(handle.request.trajectory.points[0].positions)
        feedback.index = 7
        handle.publish_feedback(feedback)
        if self.answer is None:
            self.release = Future()
            await self.release
            handle.canceled()
            return Result(error_string="cancelled by the test controller")
        status, result = self.answer
        {SUCCEEDED: handle.succeed, ABORTED: handle.abort}[status]()
        return result


class Front:
    """The test's action client of the node's ~/follow_joint_trajectory."""

    def __init__(self, client, node):
        self.client = client
        self.action = ActionClient(client.node, FollowJointTrajectory, f"{node.ns}/follow_joint_trajectory")
        assert self.action.wait_for_server(timeout_sec=60.0)

    def send(self, goal, wait=True):
        """The goal sent; (status, result, feedback) once it ended (wait), else (goal handle, feedback)."""
        feedback = []
        sent = self.action.send_goal_async(goal, feedback_callback=lambda m: feedback.append(m.feedback))
        self.client.wait_for(sent.done, what="the goal's acceptance")
        handle = sent.result()
        assert handle.accepted
        if not wait:
            return handle, feedback
        return (*self.result(handle), feedback)

    def result(self, handle, timeout=30.0):
        answer = handle.get_result_async()
        self.client.wait_for(answer.done, timeout=timeout, what="the goal's result")
        return answer.result().status, answer.result().result


@pytest.fixture(scope="module")
def front(client, node):
    return Front(client, node)


@pytest.fixture(scope="module")
def controller(client, node):
    return Controller(client, f"{node.ns}_arm/follow_joint_trajectory")


def settings(client, node, **values):
    result = client.set_parameters(node.name, **values)
    assert result.successful, result.reason


def plan(config, duration, stamp=0, points=21):
    t, P, V, A = moveit_plan(HELD, DELTA, duration, points)
    return message(config.joints, t, P, V, A, stamp=stamp), (t, P, V, A)


def forwarded(goal):
    """times, positions, velocities, accelerations, efforts of a goal a controller received."""
    points = goal.trajectory.points
    times = np.array([p.time_from_start.sec + 1e-9 * p.time_from_start.nanosec for p in points])
    return (times, *(np.array([getattr(p, f) for p in points]) for f in ("positions", "velocities", "accelerations",
                                                                        "effort")))


def inverse_dynamics(config, q, v, a, compensated=False):
    tau = rd.inverse_dynamics(config.model, q, v, a)
    return tau - rd.gravity_torques(config.model, q) if compensated else tau


def test_every_refusal_is_a_result_code_with_its_error_string(client, node, front, config):
    settings(client, node, execution__controller_action="", execution__retime="never")
    cases = []
    goal, _ = plan(config, 6.0)
    goal.trajectory.joint_names[2] = "elbow"
    cases.append((goal, Result.INVALID_JOINTS, "trajectory.joint_names[2] 'elbow' is not a joint of the controller; "
                                               "its joints are ['joint1', 'joint2', 'joint3', 'joint4', 'joint5', "
                                               "'joint6']", ""))
    goal, _ = plan(config, 6.0)
    goal.trajectory.points[4].positions[1] = float("nan")
    cases.append((goal, Result.INVALID_GOAL, "trajectory.points[4].positions contains NaN or inf (joint 'joint2')", ""))
    goal, _ = plan(config, 6.0)
    goal.trajectory.points[3].time_from_start = goal.trajectory.points[2].time_from_start
    cases.append((goal, Result.INVALID_GOAL, "trajectory.points[3].time_from_start (0.6 s) must come after points[2]'s "
                                             "(0.6 s)", ""))
    goal, _ = plan(config, 6.0, stamp=time.time_ns() - 30 * NS)
    cases.append((goal, Result.OLD_HEADER_TIMESTAMP, "trajectory.header.stamp ", "s: the trajectory ends 2"))
    goal, _ = plan(config, 0.5)
    cases.append((goal, Result.INVALID_GOAL, "the trajectory is beyond the limits and execution.retime is never: at "
                                             "t = ", "beyond its velocity limit"))
    for goal, code, start, inside in cases:
        if code == Result.OLD_HEADER_TIMESTAMP:     # 30 s old when sent (loaded, the goals before took seconds)
            stamp = goal.trajectory.header.stamp
            stamp.sec, stamp.nanosec = divmod(time.time_ns() - 30 * NS, NS)
        status, result, _ = front.send(goal)
        assert (status, result.error_code) == (ABORTED, code), result
        assert result.error_string.startswith(start) and inside in result.error_string, result.error_string


def test_retime_modes_as_the_controller_receives_them(client, node, front, controller, config):
    """never and when_infeasible keep a feasible plan's timing; when_infeasible and always retime as
    rd.time_parameterize times the path; every point carries the inverse dynamics at its state."""
    settings(client, node, execution__controller_action=f"{node.ns}_arm/follow_joint_trajectory",
             execution__retime="when_infeasible")
    controller.answer = (SUCCEEDED, Result(error_string="reached"))
    fast, (t, P, V, A) = plan(config, 0.5)
    slow, (ts, Ps, Vs, As) = plan(config, 6.0)
    cases = [("never", slow, False), ("when_infeasible", slow, False), ("when_infeasible", fast, True),
             ("always", slow, True)]
    for mode, goal, retimed in cases:
        settings(client, node, execution__retime=mode)
        status, result, _ = front.send(goal)
        assert (status, result.error_code, result.error_string) == (SUCCEEDED, Result.SUCCESSFUL, "reached")
        times, q, v, a, tau = forwarded(controller.goals[-1])
        assert controller.goals[-1].trajectory.joint_names == config.joints
        if retimed:
            tp = retimed_directly(config, np.array([p.positions for p in goal.trajectory.points]))
            assert abs(times[-1] - tp.duration) < 1e-9 and len(times) == len(tp.t), (mode, times[-1], tp.duration)
            assert np.all(np.abs(tau) <= config.model.effort_limits * (1 + 1e-6))
        else:
            assert np.allclose(times, ts, atol=1e-9, rtol=0) and np.array_equal(q, Ps)
        assert np.allclose(tau, inverse_dynamics(config, q, v, a), rtol=1e-9, atol=1e-9)


def test_a_drive_that_compensates_gravity_gets_efforts_without_g(client, node, front, controller, config):
    settings(client, node, execution__controller_action=f"{node.ns}_arm/follow_joint_trajectory",
             execution__retime="when_infeasible", drive_compensates_gravity=True)
    try:
        controller.answer = (SUCCEEDED, Result())
        for duration in (0.5, 6.0):         # retimed, as timed
            goal, _ = plan(config, duration)
            status, _, _ = front.send(goal)
            times, q, v, a, tau = forwarded(controller.goals[-1])
            assert status == SUCCEEDED and np.allclose(tau, inverse_dynamics(config, q, v, a, compensated=True),
                                                       rtol=1e-9, atol=1e-9)
        assert abs(times[-1] - 6.0) < 1e-9
    finally:
        settings(client, node, drive_compensates_gravity=False)


def test_feedback_result_and_status_are_relayed(client, node, front, controller, config):
    settings(client, node, execution__controller_action=f"{node.ns}_arm/follow_joint_trajectory",
             execution__retime="when_infeasible")
    goal, _ = plan(config, 6.0)
    goal.path_tolerance = [JointTolerance(name="joint2", position=0.05)]
    goal.goal_time_tolerance.sec = 1
    controller.answer = (ABORTED, Result(error_code=Result.PATH_TOLERANCE_VIOLATED, error_string="joint2 left its path"))
    status, result, feedback = front.send(goal)
    assert (status, result.error_code, result.error_string) == (ABORTED, Result.PATH_TOLERANCE_VIOLATED,
                                                                "joint2 left its path")
    client.wait_for(lambda: feedback, what="the relayed feedback")
    assert feedback[0].index == 7 and list(feedback[0].desired.positions) == list(goal.trajectory.points[0].positions)
    received = controller.goals[-1]
    assert received.path_tolerance == goal.path_tolerance and received.goal_time_tolerance.sec == 1


def test_the_clients_cancel_is_relayed(client, node, front, controller, config):
    settings(client, node, execution__controller_action=f"{node.ns}_arm/follow_joint_trajectory")
    controller.answer, cancels = None, controller.cancels
    goal, _ = plan(config, 6.0)
    handle, _ = front.send(goal, wait=False)
    client.wait_for(lambda: controller.release is not None and len(controller.goals), what="the forwarded goal")
    canceling = handle.cancel_goal_async()
    client.wait_for(canceling.done, what="the cancel's answer")
    status, result = front.result(handle)
    assert status == CANCELED and controller.cancels == cancels + 1
    assert result.error_string == "cancelled by the test controller"
    controller.release, controller.answer = None, (SUCCEEDED, Result())


def test_a_controller_that_is_not_there_aborts_the_goal(client, node, front, config):
    settings(client, node, execution__controller_action="/nobody/follow_joint_trajectory")
    goal, _ = plan(config, 6.0)
    status, result, _ = front.send(goal)
    assert (status, result.error_code) == (ABORTED, Result.INVALID_GOAL)
    assert result.error_string == ("the controller's action /nobody/follow_joint_trajectory (execution.controller_action)"
                                   " is not available: no server within 2 s")


class Arm:
    """joint_states for the node, stamped from `start` [ns]: positions on the goal's trajectory plus an
    offset, sent reliably in batches, each batch's answer (~/gravity_torques) awaited."""

    def __init__(self, client, node, config):
        self.client, self.node, self.config = client, node, config
        self.answers = client.inbox.get(f"{node.ns}/gravity_torques") or client.listen(
            JointState, f"{node.ns}/gravity_torques", RELIABLE)

    def send(self, stamps, q, v):
        for k, stamp in enumerate(stamps):
            self.send_one(stamp, q[k], v[k])
        last = int(stamps[-1])
        self.client.wait_for(lambda: any(m.header.stamp.sec * NS + m.header.stamp.nanosec == last
                                         for m in self.answers), what="the node's answer to the joint_states",
                             every=1.0, action=lambda: self.send_one(last, q[-1], v[-1]))

    def send_one(self, stamp, q, v):
        msg = JointState(name=list(self.config.joints), position=q.tolist(), velocity=v.tolist())
        msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(int(stamp), NS)
        self.client.publish(JointState, self.node.joint_states, msg, RELIABLE)


def run_itself(client, arm, front, goal, trajectory, start, offset, until, step=0.05):
    """A goal the node executes itself, with joint_states along the trajectory (+ offset(t)) every step
    s from start until the goal ends or `until` s; (status, result, feedback)."""
    handle, feedback = front.send(goal, wait=False)
    answer = handle.get_result_async()
    t = 0.0
    while not answer.done() and t <= until:
        q, v, _ = trajectory.sample(np.array([t]))
        arm.send([start + round(t * NS)], q + offset(t), v)
        t += step
    client.wait_for(answer.done, what="the goal's result")
    return answer.result().status, answer.result().result, feedback


def test_the_node_executes_a_goal_itself_with_the_controllers_tolerances(client, node, front, config):
    settings(client, node, execution__controller_action="", execution__retime="never",
             execution__path_tolerance=[0.1] * 6, execution__goal_tolerance=[0.01] * 6, execution__goal_time=0.5)
    arm = Arm(client, node, config)
    duration = 1.0
    start = time.time_ns() + 2 * NS
    goal, (t, P, V, A) = plan(config, duration, stamp=start, points=6)
    trajectory = rd.Trajectory(t, P, V, A)
    # on its path: SUCCESSFUL once at its end, feedback on the way
    status, result, feedback = run_itself(client, arm, front, goal, trajectory, start, lambda s: 0.0, 3.0)
    assert (status, result.error_code) == (SUCCEEDED, Result.SUCCESSFUL), result
    assert result.error_string.startswith("every joint within its goal tolerance at t = 1")
    assert feedback and feedback[-1].joint_names == config.joints and len(feedback[-1].actual.positions) == 6
    # 0.2 rad off joint3 from t = 0.5 s: PATH_TOLERANCE_VIOLATED; 0.05 rad off joint1 from t = 0.9 s, within
    # the path but not the goal tolerance: GOAL_TOLERANCE_VIOLATED once goal_time has passed after the end
    for joint, offset, after, code, text in (
            (2, 0.2, 0.5, Result.PATH_TOLERANCE_VIOLATED, "joint 'joint3': position error -0.2 beyond its path "
                                                          "tolerance 0.1 at t = 0.5"),
            (0, 0.05, 0.9, Result.GOAL_TOLERANCE_VIOLATED, "joint 'joint1': position error -0.05 beyond its goal "
                                                           "tolerance 0.01")):
        start += 5 * NS
        goal.trajectory.header.stamp.sec, goal.trajectory.header.stamp.nanosec = divmod(start, NS)
        off = np.eye(6)[joint] * offset
        status, result, _ = run_itself(client, arm, front, goal, trajectory, start, lambda s: off * (s >= after), 3.0)
        assert (status, result.error_code) == (ABORTED, code), result
        assert result.error_string.startswith(text), result.error_string
    assert result.error_string.endswith("more than goal_time_tolerance 0.5 s")


def test_a_cancel_stops_the_goal_the_node_executes(client, node, front, config):
    settings(client, node, execution__controller_action="", execution__retime="never")
    goal, _ = plan(config, 6.0, stamp=time.time_ns() + 100 * NS)       # starts later: waits for its start
    handle, _ = front.send(goal, wait=False)
    client.spin_for(0.3)
    canceling = handle.cancel_goal_async()
    client.wait_for(canceling.done, what="the cancel's answer")
    status, result = front.result(handle)
    assert status == CANCELED and result.error_string.startswith("cancelled by the client")
