"""The arm demos' harness (closed_loop_demo, external_demo, timing_demo; five_bar_demo reuses its
controller): the PUMA 560 setup and its targets, quintic references, this process as the effort
controller and recorder of a run, the commands of sim_arm and the robot_dynamics node, and one
run recorded (the loop itself, the processes and Ctrl-C: processes.py).

Every run starts fresh processes with this Python, the setup of launch/demo.launch.py: sim_arm (in
lockstep: each physics step waits for the command answering the state before it) and, where used,
the robot_dynamics node.
"""
import sys
import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import rclpy
from geometry_msgs.msg import WrenchStamped
from rcl_interfaces.srv import GetParameters
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from rclpy.parameter import parameter_value_to_python
from rclpy.time import Time
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from robot_dynamics_interfaces.msg import Contact
from robot_dynamics_interfaces.srv import IdentifyDynamics, IdentifyPayload

from .. import dynamics as rd
from ..resources import bundled_urdf
from .processes import drive, running, spin_until

URDF = bundled_urdf("puma560")
CONTROLLER = "effort_controller"
START_POSE = np.array([0.4, -0.8, 1.2, 0.5, -0.6, 0.3])   # rad; joints 2-5 carry gravity torque here
GOAL_POSE = START_POSE + np.array([0.8, 0.6, -0.8, 1.0, 0.9, -1.0])
HOLD_TIME = 5.0       # s of sim time per scenario-1 run
MOVE_TIME = 2.0       # s of the quintic move, then SETTLE_TIME at the goal
SETTLE_TIME = 0.5
BANDWIDTH = 10.0      # rad/s: PD gains Kp = M_ii w^2, Kd = 2 M_ii w (critically damped joints at START_POSE)
STEP_NS = 1_000_000   # sim_arm's physics step, 1 kHz
SERVICE_TIMEOUT = 10.0  # s for the node's get_parameters to come up and answer


def quintic(start, goal, duration, t):
    """Point-to-point move start -> goal in joint space, theta(s(t)) = start + s(t) (goal - start)
    (Lynch and Park, Modern Robotics, section 9.2), with the quintic time scaling s = 10 r^3 - 15 r^4 + 6 r^5, r = t / T:
    zero velocity and acceleration at both ends. Returns positions, velocities, accelerations."""
    r = min(max(t / duration, 0.0), 1.0)
    delta = goal - start
    s = r**3 * (10 - 15 * r + 6 * r**2)
    ds = 30 * r**2 * (1 - r)**2 / duration
    dds = 60 * r * (1 - r) * (1 - 2 * r) / duration**2
    return start + s * delta, ds * delta, dds * delta


@dataclass
class Run:
    """One closed-loop run. `command` says who sends the efforts: "node" (the node's
    ~/gravity_commands, remapped onto the controller), "zero", "feedforward+pd", "gravity+pd" (the
    node's gravity torques for the measured state plus the PD), "pd", or "jtc" (moveit_demo: the
    joint_trajectory_controller stand-in of jtc.py, with the node as its front when `node` is given)."""
    name: str
    command: str
    duration: float                      # s of sim time
    desired: Callable[[float], tuple]    # t -> desired positions, velocities, accelerations
    sim: dict = field(default_factory=dict)     # more sim_arm parameters (payload, wrench, noise, armature)
    node: dict = field(default_factory=dict)    # more robot_dynamics node parameters
    gains: tuple = None                  # (kp, kd) for this run instead of record()'s
    observe: bool = False                # record ~/external_torques, ~/external_wrench and ~/contact
    identify: dict = None                # IdentifyPayload request fields, sent when the node is up
    trajectory: object = None            # "trajectory+pd": the JointTrajectory the node follows (timing_demo)
    identify_dynamics: dict = None       # IdentifyDynamics request fields, sent once the node is up; the arm
                                         # waits (paused, no command sent) until the estimate is applied


def pd_gains(model, bandwidth=BANDWIDTH):
    inertia = np.diag(rd.mass_matrix(model, START_POSE))
    return inertia * bandwidth**2, 2.0 * inertia * bandwidth


@dataclass
class Recording:
    run: Run
    joints: list
    t: np.ndarray        # sim time of each joint_states message [s]
    q: np.ndarray        # positions [rad]
    effort: np.ndarray   # efforts applied by the sim [N m]
    real_time_factor: float
    external: dict = None      # observe: topic -> (stamps [s], values) of the node's observer outputs
    identified: object = None  # identify: the IdentifyPayload response; identify_dynamics: IdentifyDynamics's
    payload: dict = None       # identify: the node's payload.* parameters after it answered
    v: np.ndarray = None       # velocities [rad/s]

    @property
    def error(self):
        """Desired minus measured positions [rad]."""
        return np.array([self.run.desired(t)[0] for t in self.t]) - self.q


def nanoseconds(stamp):
    return Time.from_msg(stamp).nanoseconds


class EffortController(Node):
    """This process's side of the loop: records joint_states and, unless the node commands the arm
    itself, answers each with efforts on <controller>/commands, like a ros2_control controller.

    With feedforward, an answer waits for the node's feedforward for the coming step: the reference
    sent to ~/reference is the desired state at the middle of the step (the best constant torque
    over it), and the node's reply on ~/feedforward_torques (the stamped twin of
    ~/feedforward_commands) carries the reference's stamp, which tells it apart from the node's
    replies to joint_states (stamped at whole steps). With run.observe, an answer also waits for
    the node's three observer outputs for the state (stamped with it): every one is recorded, and
    until the node has discovered this process's subscriptions, the arm waits (sim_arm publishes
    an unanswered state again)."""

    def __init__(self, run, joints, kp, kd):
        super().__init__("closed_loop_demo")
        self.run, self.joints, self.kp, self.kd = run, joints, kp, kd
        self.samples, self.pending = [], None   # pending: (reference stamp [ns], PD efforts, state stamp [ns])
        self.velocities = []                    # the velocities of each sample
        self.hold = False                       # while true, no command is sent (the arm waits, paused)
        self.feedforward = None                 # the node's answer to the pending reference
        self.create_subscription(JointState, "joint_states", self.on_joint_states, 1)
        if run.command != "node":
            self.command_pub = self.create_publisher(Float64MultiArray, f"/{CONTROLLER}/commands", 10)
        if run.command == "feedforward+pd":
            self.reference_pub = self.create_publisher(JointTrajectory, "/robot_dynamics/reference", 10)
            self.create_subscription(JointState, "/robot_dynamics/feedforward_torques",
                                     self.on_feedforward, 10)
        if run.command == "gravity+pd":
            self.create_subscription(JointState, "/robot_dynamics/gravity_torques", self.on_feedforward, 10)
        if run.command == "trajectory+pd":      # the node follows run.trajectory, answering every state
            self.reference_pub = self.create_publisher(JointTrajectory, "/robot_dynamics/reference", 10)
            self.create_subscription(JointState, "/robot_dynamics/feedforward_torques", self.on_feedforward, 10)
            self.followed = False               # until the node answers, the trajectory is sent with each state
        self.external, self.answered = {}, {}     # observer outputs: topic -> [(t, value)], {stamp ns}
        if run.observe:
            for kind, topic, value in ((JointState, "external_torques", lambda m: list(m.effort)),
                                       (WrenchStamped, "external_wrench", wrench_values),
                                       (Contact, "contact", lambda m: m.contact)):
                self.external[topic], self.answered[topic] = [], set()
                self.create_subscription(kind, f"/robot_dynamics/{topic}",
                                         lambda m, k=topic, f=value: self.on_external(k, m, f(m)), 1000)
        self.identify_client = self.create_client(IdentifyPayload, "/robot_dynamics/identify_payload") \
            if run.identify else None
        self.identify_future = None
        self.dynamics_client = self.create_client(IdentifyDynamics, "/robot_dynamics/identify_dynamics") \
            if run.identify_dynamics else None
        self.dynamics_future = None
        self.hold = bool(run.identify_dynamics)

    @property
    def sim_time(self):
        return self.samples[-1][0] if self.samples else 0.0

    def ordered(self, msg, field):
        names = list(msg.name)
        return np.array(getattr(msg, field))[[names.index(name) for name in self.joints]]

    def on_joint_states(self, msg):
        t = nanoseconds(msg.header.stamp) * 1e-9
        q, qd = self.ordered(msg, "position"), self.ordered(msg, "velocity")
        if not self.samples or t > self.sim_time:
            self.samples.append((t, q, self.ordered(msg, "effort")))
            self.velocities.append(qd)
        if self.run.command == "node":
            return
        if self.run.command == "zero":
            return self.send(np.zeros(len(q)))
        q_d, qd_d, _ = self.run.desired(t)
        pd = self.kp * (q_d - q) + self.kd * (qd_d - qd)
        if self.run.command == "pd":
            return self.send(pd)
        if self.run.command in ("gravity+pd", "trajectory+pd"):    # the node answers this state itself
            self.pending = (nanoseconds(msg.header.stamp), pd, nanoseconds(msg.header.stamp))
            if self.run.command == "trajectory+pd" and not self.followed:
                self.reference_pub.publish(self.run.trajectory)
            return
        stamp = nanoseconds(msg.header.stamp) + STEP_NS // 2
        q_mid, qd_mid, qdd_mid = self.run.desired(stamp * 1e-9)
        reference = JointTrajectory(joint_names=self.joints, points=[JointTrajectoryPoint(
            positions=q_mid.tolist(), velocities=qd_mid.tolist(), accelerations=qdd_mid.tolist())])
        reference.header.stamp = Time(nanoseconds=stamp).to_msg()
        self.pending = (stamp, pd, nanoseconds(msg.header.stamp))
        self.reference_pub.publish(reference)

    def on_feedforward(self, msg):
        if self.pending and nanoseconds(msg.header.stamp) == self.pending[0]:
            self.followed = True
            self.feedforward = self.ordered(msg, "effort")
            self.try_send()

    def on_external(self, topic, msg, value):
        stamp = nanoseconds(msg.header.stamp)
        if stamp not in self.answered[topic]:
            self.answered[topic].add(stamp)
            self.external[topic].append((stamp * 1e-9, value))
        self.try_send()

    def try_send(self):
        """Answer the pending state once the node's feedforward (and, with observe, its observer
        outputs for the state) came."""
        if self.pending is None or self.feedforward is None:
            return
        state = self.pending[-1]
        if all(state in stamps for stamps in self.answered.values()):
            self.send(self.feedforward + self.pending[1])
            self.pending = self.feedforward = None

    def send(self, effort):
        if self.hold:
            return
        self.command_pub.publish(Float64MultiArray(data=effort.tolist()))


def wrench_values(msg):
    w = msg.wrench
    return [w.force.x, w.force.y, w.force.z, w.torque.x, w.torque.y, w.torque.z]


def yaml_list(values):
    return "[" + ", ".join(repr(v) for v in values) + "]"


def yaml_value(value):
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple, np.ndarray)):
        return yaml_list(map(float, value))
    return repr(value)


def ros_parameters(parameters):
    return [argument for name, value in parameters.items() for argument in ("-p", f"{name}:={yaml_value(value)}")]


def sim_command(joints, extra=None):
    parameters = {"urdf_file": URDF, "controller": CONTROLLER, "joints": yaml_list(joints),
                  "initial_positions": yaml_list(map(float, START_POSE)), "rate": 1e9 / STEP_NS,
                  "lockstep": "true", **(extra or {})}
    return [sys.executable, "-m", "robot_dynamics.demo.sim_arm", "--ros-args"] + ros_parameters(parameters)


def node_command(run):
    """The robot_dynamics node, for the runs that use it (None for the others)."""
    command = [sys.executable, "-m", "robot_dynamics.ros", "--ros-args",
               "-p", f"urdf_file:={URDF}", "-p", "use_sim_time:=true"] + ros_parameters(run.node)
    if run.command == "node":
        return command + ["-r", f"~/gravity_commands:=/{CONTROLLER}/commands"]
    if run.command == "jtc":       # the node as the front of the stand-in's action, if it has parameters
        return command if run.node else None
    return command if run.command in ("feedforward+pd", "gravity+pd", "trajectory+pd") else None


def record(run, model, kp, kd, show_progress=False):
    """Run one scenario in closed loop until `run.duration` of sim time (and, with run.identify,
    until the node answered); return its Recording. The arm starts paused; the node (if used) is
    started once this process hears the arm, so that the recording starts with the loop."""
    joints = list(model.joint_names)
    kp, kd = run.gains or (kp, kd)
    controller = EffortController(run, joints, kp, kd)

    def step(executor, children):
        if run.identify and controller.identify_future is None and len(children) == 2 \
                and controller.identify_client.service_is_ready():
            controller.identify_future = controller.identify_client.call_async(IdentifyPayload.Request(**run.identify))
        if run.identify_dynamics is not None:
            identify_dynamics(run, controller, children)
        if controller.sim_time > run.duration + IDENTIFY_TIMEOUT:
            raise RuntimeError(f"{run.name}: no answer from ~/identify_payload {IDENTIFY_TIMEOUT:g} s of "
                               "sim time after the run")

    payload, real_time_factor = drive(
        run, controller, sim_command(joints, run.sim), node_command(run), lambda: controller.samples,
        lambda: controller.sim_time >= run.duration and identified(controller), show_progress, step,
        (lambda executor: node_parameters(controller, executor, PAYLOAD_PARAMETERS)) if run.identify else None)
    t, q, effort = (np.array(column) for column in zip(*controller.samples))
    answer = controller.identify_future.result() if run.identify else \
        controller.dynamics_future.result() if run.identify_dynamics else None
    external = {topic: tuple(np.array(column) for column in zip(*values)) if values else (np.array([]), np.array([]))
                for topic, values in controller.external.items()}
    return Recording(run, joints, t, q, effort, real_time_factor, external or None, answer, payload,
                     np.array(controller.velocities))


def identify_dynamics(run, controller, children):
    """run.identify_dynamics: ask once the node is up; release the arm once the estimate is applied."""
    if controller.dynamics_future is None:
        if len(children) == 2 and controller.dynamics_client.service_is_ready():
            controller.dynamics_future = controller.dynamics_client.call_async(
                IdentifyDynamics.Request(**run.identify_dynamics))
    elif controller.hold and controller.dynamics_future.done():
        response = controller.dynamics_future.result()
        if not response.applied:
            raise RuntimeError(f"{run.name}: ~/identify_dynamics: {response.message}")
        controller.hold = False


IDENTIFY_TIMEOUT = 30.0     # s of sim time past a run's end to wait for ~/identify_payload's answer
PAYLOAD_PARAMETERS = ("payload.link", "payload.mass", "payload.com", "payload.inertia")


def identified(controller):
    """The run asks nothing of ~/identify_payload, or its answer came."""
    return controller.identify_client is None or (controller.identify_future is not None
                                                   and controller.identify_future.done())


def call_node(kind, name, request, parameters=(), timeout=SERVICE_TIMEOUT + 60.0):
    """One answer of the node's service ~/name from a node started for it (URDF and `parameters`, a dict),
    then stopped: the response (a Ctrl-C taken while waiting). RuntimeError if it does not come up or
    answer within `timeout` s (start-up included: the node loads its kernels) or answers success=false."""
    command = [sys.executable, "-m", "robot_dynamics.ros", "--ros-args", "-p", f"urdf_file:={URDF}"] + \
        ros_parameters(dict(parameters))
    client_node = rclpy.create_node(f"demo_client_{name}")
    executor = SingleThreadedExecutor()
    executor.add_node(client_node)
    try:
        with running(command):
            client = client_node.create_client(kind, f"/robot_dynamics/{name}")
            deadline = time.monotonic() + timeout
            spin_until(executor, client.service_is_ready, deadline, f"~/{name} did not come up")
            future = client.call_async(request)
            spin_until(executor, future.done, deadline, f"no answer from ~/{name}")
    finally:
        executor.shutdown()
        client_node.destroy_node()
    response = future.result()
    if not response.success:
        raise RuntimeError(f"~/{name}: {response.message}")
    return response


def node_parameters(controller, executor, names):
    """The node's parameters `names` as {name: value}, from its get_parameters service (within
    SERVICE_TIMEOUT, a Ctrl-C taken at every spin_step)."""
    client = controller.create_client(GetParameters, "/robot_dynamics/get_parameters")
    deadline = time.monotonic() + SERVICE_TIMEOUT
    spin_until(executor, client.service_is_ready, deadline, "the node's get_parameters service did not come up")
    future = client.call_async(GetParameters.Request(names=list(names)))
    spin_until(executor, future.done, deadline, "no answer from the node's get_parameters")
    return {name: parameter_value_to_python(value) for name, value in zip(names, future.result().values)}
