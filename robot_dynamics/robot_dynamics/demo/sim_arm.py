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
- links heavier than the URDF says: `mass_scale` (default 1), every link's mass and inertia times it;
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

import mujoco
import numpy as np
from rcl_interfaces.msg import ParameterDescriptor
from rclpy.parameter import Parameter
from rosgraph_msgs.msg import Clock

from . import simulator
from ..model import per_joint
from ..urdf import inertia_problem
from .mujoco_model import Payload, apply_wrench, clear_wrench, mujoco_arm
from .simulator import numbers



class SimArm(simulator.SimulatedRobot):
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
                              ("wrench.duration", 0.0), ("mass_scale", 1.0)):   # numbers: ints accepted too
            self.declare_parameter(name, default, ParameterDescriptor(dynamic_typing=True))
        self.declare_parameter("wait_for_command", True)
        self.declare_parameter("lockstep", False)
        self.declare_parameter("noise_seed", 0)
        self.declare_parameter("payload.link", "tool0")
        self.declare_parameter("wrench.link", "")
        param = self.param
        number = lambda name, *sizes: numbers(param(name), name, *sizes)  # noqa: E731

        urdf, joints = self.urdf_and_joints()
        self.period_ns = round(1e9 / float(param("rate")))
        payload = Payload(param("payload.link"), number("payload.mass", 1)[0], number("payload.com", 3),
                          number("payload.inertia", 6))
        if payload.mass < 0:
            raise ValueError(f"parameter payload.mass must be >= 0, got {payload.mass}")
        ixx, iyy, izz, ixy, ixz, iyz = payload.inertia
        problem = inertia_problem(payload.mass, np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]]))
        if problem:
            raise ValueError(f"parameter payload.inertia: {problem}")
        self.wrench = (number("wrench.force", 3), number("wrench.torque", 3))
        start, duration = number("wrench.start", 1)[0], number("wrench.duration", 1)[0]
        if duration < 0:
            raise ValueError(f"parameter wrench.duration must be >= 0, got {duration}")
        wrench_link = param("wrench.link")
        self.wrench_steps = (round(start * 1e9 / self.period_ns), round((start + duration) * 1e9 / self.period_ns)) \
            if wrench_link and duration > 0 else None
        self.attach(mujoco_arm(urdf, joints, self.period_ns * 1e-9, param("damping"), param("friction"),
                               param("armature"), payload, wrench_link or None, number("mass_scale", 1)[0]))
        self.noise = number("effort_noise", 1)[0]
        if self.noise < 0:
            raise ValueError(f"parameter effort_noise must be >= 0, got {self.noise}")
        self.rng = np.random.default_rng(param("noise_seed"))
        self.data.qpos[self.qpos_index] = per_joint(param("initial_positions"), self.model.nu, "initial_positions")
        mujoco.mj_forward(self.model, self.data)

        self.start(f"{self.model.nu} joints ({', '.join(self.joint_names)})")

    def publish_state(self):
        stamp = self.stamp()
        self.clock_pub.publish(Clock(clock=stamp))
        effort = self.data.qfrc_actuator[self.dof_index]
        if self.noise:
            effort = effort + self.noise * self.rng.standard_normal(len(effort))
        self.publish_joint_states(stamp, effort)

    def before_step(self):
        """The wrench.* push, during its window of steps."""
        if self.wrench_steps and self.wrench_steps[0] <= self.steps < self.wrench_steps[1]:
            apply_wrench(self.model, self.data, *self.wrench)
        elif self.wrench_steps:
            clear_wrench(self.data)


def main(args=None, signals_received=()):
    """Run until SIGINT or SIGTERM (exit code 0; 1 for a bad parameter or URDF): simulator.main."""
    return simulator.main(SimArm, "sim_arm", args, signals_received)


if __name__ == "__main__":
    sys.exit(main())
