"""Simulated arm, the Gazebo stand-in of the closed-loop demo: a URDF in MuJoCo, stepped in real time.

Interface of a ros2_control arm with one effort controller:
- publishes `joint_states` (sensor_msgs/JointState: positions, velocities and the efforts the
  actuators applied over the step just taken (MuJoCo's qfrc_actuator, after clamping), optionally
  with Gaussian noise; stamped with sim time) and `/clock` after every physics step;
- takes efforts on `<controller>/commands` (std_msgs/Float64MultiArray in `joints` order), like
  effort_controllers/JointGroupEffortController; a command holds until the next one and is clamped
  at the URDF effort limits.

Parameters: `urdf_file` (path) or `robot_description` (URDF text); `controller` (default
`effort_controller`); `joints` (command and state order, default: every joint of the model);
`rate` (physics steps per second, default 1000); `initial_positions`, `damping`, `friction` (one
value per joint or one for all; default 0: no joint damping or dry friction unless set here);
`armature` (rotor inertia Ir*gr^2 [kg m^2], one value per joint or one for all; default 0);
`wait_for_command` (default true: stay paused, like a paused Gazebo, until the first command, so
the arm does not move before the loop is closed); `lockstep` (default false: see below). Visual and
collision geometry is dropped: the arm has no contacts.

What the dynamics node does not know, from parameters:
- `effort_noise` [N m, standard deviation] added to the published efforts (default 0), from a
  generator seeded with `noise_seed` (default 0): the same noise every run;
- a payload: `payload.mass` [kg] (default 0: none), `payload.com` [m] in the frame of
  `payload.link` (default tool0), `payload.inertia` about its COM (ixx iyy izz ixy ixz iyz [kg m^2]),
  a body added to the MuJoCo model of the URDF before compiling;
- an external wrench: `wrench.force` [N] and `wrench.torque` [N m] (world axes) acting at the origin
  of `wrench.link` (default: none) from sim time `wrench.start` [s] for `wrench.duration` [s]
  (MuJoCo's xfrc_applied; a push on the tool).

Sim time advances at most one step per wall-clock period; when the host cannot keep up, the
real-time factor drops below 1 instead of steps being skipped. With `lockstep`, a step also waits
for a command that arrived after the last state was published, as if the controller ran inside the
physics loop (like gz_ros2_control's): the loop then behaves the same however loaded the host is,
only slower. A state left unanswered for simulator.LOCKSTEP_RESEND (a lost message, or nobody listening yet)
is published again.

Run: `sim_arm --ros-args -p urdf_file:=urdf/puma560.urdf` (or `python -m robot_dynamics.demo.sim_arm`).
"""
import sys
import threading

import mujoco
import numpy as np
from rcl_interfaces.msg import ParameterDescriptor
from rclpy.exceptions import ParameterUninitializedException
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.time import Time
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from . import simulator
from ..model import per_joint
from .mujoco_model import Payload, apply_wrench, clear_wrench, mujoco_arm
from ..urdf import inertia_problem, urdf_text



class SimArm(Node):
    def __init__(self):
        super().__init__("sim_arm")
        self.declare_parameter("urdf_file", "")
        self.declare_parameter("robot_description", "")
        self.declare_parameter("controller", "effort_controller")
        self.declare_parameter("joints", Parameter.Type.STRING_ARRAY)
        for name, default in (("rate", 1000.0), ("initial_positions", [0.0]), ("damping", [0.0]),
                              ("friction", [0.0]), ("armature", [0.0]), ("effort_noise", 0.0),
                              ("payload.mass", 0.0), ("payload.com", [0.0] * 3), ("payload.inertia", [0.0] * 6),
                              ("wrench.force", [0.0] * 3), ("wrench.torque", [0.0] * 3), ("wrench.start", 0.0),
                              ("wrench.duration", 0.0)):   # numbers: ints accepted too
            self.declare_parameter(name, default, ParameterDescriptor(dynamic_typing=True))
        self.declare_parameter("wait_for_command", True)
        self.declare_parameter("lockstep", False)
        self.declare_parameter("noise_seed", 0)
        self.declare_parameter("payload.link", "tool0")
        self.declare_parameter("wrench.link", "")
        param = lambda name: self.get_parameter(name).value  # noqa: E731

        urdf = param("robot_description") or (param("urdf_file") and urdf_text(param("urdf_file")))
        if not urdf:
            raise ValueError("set the parameter urdf_file or robot_description")
        try:
            joints = param("joints")
        except ParameterUninitializedException:
            joints = None
        self.period_ns = round(1e9 / float(param("rate")))
        payload = Payload(param("payload.link"), numbers(param, "payload.mass", 1)[0], numbers(param, "payload.com", 3),
                          numbers(param, "payload.inertia", 6))
        if payload.mass < 0:
            raise ValueError(f"parameter payload.mass must be >= 0, got {payload.mass}")
        ixx, iyy, izz, ixy, ixz, iyz = payload.inertia
        problem = inertia_problem(payload.mass, np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]]))
        if problem:
            raise ValueError(f"parameter payload.inertia: {problem}")
        self.wrench = (numbers(param, "wrench.force", 3), numbers(param, "wrench.torque", 3))
        start, duration = numbers(param, "wrench.start", 1)[0], numbers(param, "wrench.duration", 1)[0]
        if duration < 0:
            raise ValueError(f"parameter wrench.duration must be >= 0, got {duration}")
        wrench_link = param("wrench.link")
        self.wrench_steps = (round(start * 1e9 / self.period_ns), round((start + duration) * 1e9 / self.period_ns)) \
            if wrench_link and duration > 0 else None
        self.model = mujoco_arm(urdf, joints, self.period_ns * 1e-9,
                                param("damping"), param("friction"), param("armature"), payload, wrench_link or None)
        self.noise = numbers(param, "effort_noise", 1)[0]
        if self.noise < 0:
            raise ValueError(f"parameter effort_noise must be >= 0, got {self.noise}")
        self.rng = np.random.default_rng(param("noise_seed"))
        self.data = mujoco.MjData(self.model)
        self.joint_names = [self.model.actuator(i).name for i in range(self.model.nu)]
        joint_ids = self.model.actuator_trnid[:, 0]
        self.qpos_index = self.model.jnt_qposadr[joint_ids]
        self.dof_index = self.model.jnt_dofadr[joint_ids]
        initial_positions = per_joint(param("initial_positions"), self.model.nu, "initial_positions")
        self.data.qpos[self.qpos_index] = initial_positions
        mujoco.mj_forward(self.model, self.data)

        self.steps = 0
        self.command = None if param("wait_for_command") else np.zeros(self.model.nu)  # None: paused
        self.lockstep = param("lockstep")
        self.fresh_command = threading.Event()   # a command arrived since the state was published
        self.state_pub = self.create_publisher(JointState, "joint_states", 10)
        self.clock_pub = self.create_publisher(Clock, "/clock", 10)
        command_topic = f"{param('controller')}/commands"
        self.create_subscription(Float64MultiArray, command_topic, self.on_command, 1)
        self.get_logger().info(
            f"{self.model.nu} joints ({', '.join(self.joint_names)}), {param('rate'):g} Hz, efforts on "
            f"{command_topic}" + (", paused until the first command" if self.command is None else "")
            + (", lockstep with the commands" if self.lockstep else ""))

    def on_command(self, msg):
        if len(msg.data) != self.model.nu:
            self.get_logger().error(f"command of {len(msg.data)} efforts for {self.model.nu} joints: ignored",
                                    throttle_duration_sec=1.0)
            return
        if self.command is None:
            self.get_logger().info("first command received: running")
        self.command = np.array(msg.data)
        self.fresh_command.set()

    def publish_state(self):
        stamp = Time(nanoseconds=self.steps * self.period_ns).to_msg()
        self.clock_pub.publish(Clock(clock=stamp))
        msg = JointState(name=self.joint_names)
        msg.header.stamp = stamp
        msg.position = self.data.qpos[self.qpos_index].tolist()
        msg.velocity = self.data.qvel[self.dof_index].tolist()
        effort = self.data.qfrc_actuator[self.dof_index]
        if self.noise:
            effort = effort + self.noise * self.rng.standard_normal(len(effort))
        msg.effort = effort.tolist()
        self.state_pub.publish(msg)

    def _apply_wrench(self):
        """The wrench.* push, during its window of steps."""
        if self.wrench_steps and self.wrench_steps[0] <= self.steps < self.wrench_steps[1]:
            apply_wrench(self.model, self.data, *self.wrench)
        elif self.wrench_steps:
            clear_wrench(self.data)

    def run(self):
        """Until shutdown (simulator.step_loop)."""
        simulator.step_loop(self, self._apply_wrench)


def numbers(param, name, n):
    """Parameter `name` as n finite floats (a number for n = 1); ValueError naming it."""
    value = param(name)
    values = [value] if isinstance(value, (int, float)) and not isinstance(value, bool) else value
    try:
        x = [float(v) for v in values if not isinstance(v, (bool, str))]
    except TypeError:
        x = []
    if len(x) != n or len(values) != n or not np.all(np.isfinite(x)):
        raise ValueError(f"parameter {name} takes {n} finite number{'s' if n > 1 else ''}, got {value!r}")
    return x


def main(args=None, signals_received=()):
    """Run until SIGINT or SIGTERM (exit code 0; 1 for a bad parameter or URDF): simulator.main."""
    return simulator.main(SimArm, "sim_arm", args, signals_received)


if __name__ == "__main__":
    sys.exit(main())
