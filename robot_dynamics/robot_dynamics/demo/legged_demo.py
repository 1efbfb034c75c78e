"""Legged demo (`make demo-legged`): the dynamics node holds a simulated quadruped standing on the
ground with contact-consistent gravity torques; MuJoCo stands in for Gazebo.

The robot is solo12 (Open Dynamic Robot Initiative; Grimminger et al., "An Open Torque-Controlled
Modular Robot Architecture for Legged Locomotion Research", RA-L 2020) as example-robot-data ships
it: its URDF's inertias, four point feet, 2.5 kg. It starts at rest in the SRDF's "standing"
posture, its feet (spheres of the foot mesh's radius) touching the ground, and for HOLD_TIME of sim
time its joints get the efforts of one of:
  1. the node's contact-consistent gravity torques: floating_base, contacts.frames = the four feet
     (point contacts), ~/gravity_commands remapped onto the effort controller, the sim's base pose
     on the node's ~/base_pose. The torques that hold the robot at rest on its feet, the weight
     shared among the feet (contact inverse dynamics: Featherstone, RBDA ch. 8);
  2. the node's plain gravity torques (no contacts): g(q) with the base held in the air, so each
     leg carries only its own weight;
  3. zero efforts.
Nothing else acts: no feedback, no joint damping or friction in the simulation (the actuators'
rotor inertia, Ir N^2, is the only actuator property modelled; robot_properties_solo's
motor_inertia 4.5e-6 kg m^2 and gear ratio 9). The contact-consistent torques hold the robot in an
equilibrium that is neutral along the motions the feet allow (any nearby standing posture is held
as well), so the base drift measures how consistent the node's torques are with the simulated
robot. Every run starts fresh processes (sim_legged in lockstep, the node where used) with this
Python, as the arm demo does; this process records base pose and joints, prints a table and writes
a PNG.
"""
import os
import sys
from dataclasses import dataclass

import numpy as np
from geometry_msgs.msg import PoseStamped
from matplotlib.figure import Figure
from rclpy.node import Node
from robot_dynamics_interfaces.msg import ContactForces
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from . import interrupt
from .harness import nanoseconds, yaml_list
from .processes import RosSession, arguments, drive, output_path
from .solo12 import ARMATURE, BASE_BOX, BASE_BOX_OFFSET, FEET, FOOT_RADIUS, solo12_files, srdf_posture

CONTROLLER = "effort_controller"
NODE = "robot_dynamics"
HOLD_TIME = 5.0                 # s of sim time per run
DRIFT_TARGET = 0.01             # m: the base moves less than this over HOLD_TIME with contact-consistent gravity
STEP_NS = 1_000_000             # sim_legged's physics step, 1 kHz
FORCES_GRACE = 5.0              # s of sim time a contacts run may go on, past its end, for the node's first contact forces


@dataclass
class Run:
    """One run: `command` is "contacts" (the node's contact-consistent gravity_commands), "gravity"
    (the node's plain gravity_commands) or "zero" (this process answers with zero efforts)."""
    name: str
    command: str
    duration: float


def runs(hold_time=HOLD_TIME):
    return [Run("contact-consistent gravity", "contacts", hold_time),
            Run("plain gravity (base held)", "gravity", hold_time),
            Run("zero efforts", "zero", hold_time)]


@dataclass
class Recording:
    run: Run
    joints: list
    t: np.ndarray           # sim time of each base pose [s]
    position: np.ndarray    # base position [m], world
    quaternion: np.ndarray  # base orientation x y z w
    tq: np.ndarray          # sim time of each joint_states
    q: np.ndarray           # joint positions [rad]
    effort: np.ndarray      # efforts applied by the simulation [N m]
    contact_forces: list    # the node's ~/contact_forces: (t, [[fx fy fz] per foot]) (contacts run)
    real_time_factor: float

    @property
    def displacement(self):
        """Base position minus its first value [m]."""
        return self.position - self.position[0]

    @property
    def drift(self):
        """Largest distance of the base from where it started [m]."""
        return float(np.linalg.norm(self.displacement, axis=1).max())

    @property
    def height_change(self):
        return float(self.displacement[-1, 2])

    @property
    def tilt(self):
        """Largest rotation of the base from its start [rad]."""
        q0 = self.quaternion[0]
        dots = np.clip(np.abs(self.quaternion @ q0), 0.0, 1.0)
        return float((2 * np.arccos(dots)).max())

    @property
    def joint_drift(self):
        return np.abs(self.q - self.q[0]).max(axis=0)


class Recorder(Node):
    """This process's side: records the base pose, joint_states (and the node's contact forces) and,
    in the zero-effort run, answers each joint_states with zero efforts, like a controller."""

    def __init__(self, run, joints):
        super().__init__("legged_demo")
        self.run, self.joints = run, joints
        self.poses, self.states, self.forces = [], [], []
        self.create_subscription(PoseStamped, f"/{NODE}/base_pose", self.on_pose, 10)
        self.create_subscription(JointState, "joint_states", self.on_joint_states, 10)
        self.create_subscription(ContactForces, f"/{NODE}/contact_forces", self.on_forces, 10)
        if run.command == "zero":
            self.command_pub = self.create_publisher(Float64MultiArray, f"/{CONTROLLER}/commands", 10)

    @property
    def sim_time(self):
        return self.states[-1][0] if self.states else 0.0

    def complete(self):
        """The run's duration of joint states and base poses is in, and in the contacts run the
        node's contact forces too: their subscription matches the node on its own and may do so
        after the commands reach the robot (it goes on for at most FORCES_GRACE more)."""
        duration = self.run.duration
        waiting = self.run.command == "contacts" and not self.forces and self.sim_time < duration + FORCES_GRACE
        return self.sim_time >= duration and bool(self.poses) and self.poses[-1][0] >= duration and not waiting

    def on_pose(self, msg):
        t = nanoseconds(msg.header.stamp) * 1e-9
        if not self.poses or t > self.poses[-1][0]:
            p, o = msg.pose.position, msg.pose.orientation
            self.poses.append((t, [p.x, p.y, p.z], [o.x, o.y, o.z, o.w]))

    def on_joint_states(self, msg):
        t = nanoseconds(msg.header.stamp) * 1e-9
        names = list(msg.name)
        order = [names.index(name) for name in self.joints]
        if not self.states or t > self.sim_time:
            self.states.append((t, np.array(msg.position)[order], np.array(msg.effort)[order]))
        if self.run.command == "zero":
            self.command_pub.publish(Float64MultiArray(data=[0.0] * len(self.joints)))

    def on_forces(self, msg):
        forces = [[w.wrench.force.x, w.wrench.force.y, w.wrench.force.z] for w in msg.wrenches]
        self.forces.append((nanoseconds(msg.header.stamp) * 1e-9, forces))


def sim_command(urdf, joints, posture, root):
    parameters = {
        "urdf_file": urdf, "controller": CONTROLLER, "joints": yaml_list(joints), "feet": yaml_list(FEET),
        "foot_radius": FOOT_RADIUS, "base_box": yaml_list(BASE_BOX), "base_box_offset": yaml_list(BASE_BOX_OFFSET),
        "initial_positions": yaml_list([float(posture[j]) for j in joints]), "initial_base_pose": yaml_list(root),
        "armature": ARMATURE, "rate": 1e9 / STEP_NS, "lockstep": "true"}
    return [sys.executable, "-m", "robot_dynamics.demo.sim_legged", "--ros-args",
            "-r", f"base_pose:=/{NODE}/base_pose"] + [
        argument for name, value in parameters.items() for argument in ("-p", f"{name}:={value}")]


def node_command(run, urdf):
    """The robot_dynamics node for the runs that use it (None for the zero-effort run)."""
    if run.command == "zero":
        return None
    command = [sys.executable, "-m", "robot_dynamics.ros", "--ros-args", "-p", f"urdf_file:={urdf}",
               "-p", "floating_base:=true", "-p", "use_sim_time:=true", "-p", f"armature:={ARMATURE}",
               "-r", f"~/gravity_commands:=/{CONTROLLER}/commands"]
    if run.command == "contacts":
        command += ["-p", f"contacts.frames:={yaml_list(FEET)}", "-p", "contacts.kind:=point"]
    return command


def record(run, urdf, joints, posture, root, show_progress=False):
    """One run in closed loop until `run.duration` of sim time; its Recording. The robot stays paused
    until the first command; the node is started once this process hears the robot."""
    recorder = Recorder(run, joints)
    _, real_time_factor = drive(run, recorder, sim_command(urdf, joints, posture, root), node_command(run, urdf),
                                lambda: recorder.states, recorder.complete, show_progress)
    t, position, quaternion = (np.array(column) for column in zip(*recorder.poses))
    tq, q, effort = (np.array(column) for column in zip(*recorder.states))
    return Recording(run, joints, t, position, quaternion, tq, q, effort, recorder.forces, real_time_factor)


def table(recordings, total_weight):
    lines = [f"solo12 standing, {recordings[0].run.duration:g} s of sim time per run (target: base drift < "
             f"{1e3 * DRIFT_TARGET:g} mm with contact-consistent gravity)",
             f"{'run':<30}{'base drift':>12}{'height change':>15}{'base tilt':>11}{'joint drift':>13}{'RTF':>6}",
             f"{'':<30}{'[mm]':>12}{'[mm]':>15}{'[mrad]':>11}{'[mrad]':>13}"]
    for rec in recordings:
        lines.append(f"{rec.run.name:<30}{1e3 * rec.drift:12.4g}{1e3 * rec.height_change:15.4g}"
                     f"{1e3 * rec.tilt:11.4g}{1e3 * rec.joint_drift.max():13.4g}{rec.real_time_factor:6.2f}")
    for rec in recordings:
        if rec.contact_forces:
            t, forces = rec.contact_forces[-1]
            normal = [f[2] for f in forces]
            lines.append(f"node's ~/contact_forces at {t:.3f} s, normal force per foot [N]: "
                         + ", ".join(f"{name} {fz:.3f}" for name, fz in zip(FEET, normal))
                         + f" (sum {sum(normal):.3f}; weight {total_weight:.3f})")
    return "\n".join(lines)


def plot(recordings, path):
    figure = Figure(figsize=(4.2 * len(recordings), 7), layout="constrained")
    axes = figure.subplots(2, len(recordings), sharex="col")
    for (pose_axis, effort_axis), rec in zip(axes.T, recordings):
        for k, axis in enumerate("xyz"):
            pose_axis.plot(rec.t, 1e3 * rec.displacement[:, k], label=f"base {axis}")
        for j, name in enumerate(rec.joints):
            effort_axis.plot(rec.tq, rec.effort[:, j], label=name, linewidth=0.8)
        pose_axis.set_title(f"{rec.run.name}\nbase drift {1e3 * rec.drift:.3g} mm", fontsize=10)
        pose_axis.set_ylabel("base position - start [mm]")
        effort_axis.set_ylabel("effort [N m]")
        effort_axis.set_xlabel("sim time [s]")
    axes[0, 0].legend(fontsize=8)
    axes[1, 0].legend(fontsize=6, ncol=2)
    figure.suptitle("robot_dynamics node + sim_legged (MuJoCo, 1 kHz): solo12 standing on its feet")
    figure.savefig(path, dpi=90)


def main(argv=None):
    """The demo. Exit code 0, 1 without solo12's files, or 130 (143) after Ctrl-C (SIGTERM) with every process it
    started stopped."""
    parser = arguments(__doc__, "legged_demo.png")
    parser.add_argument("--hold-time", type=float, default=HOLD_TIME, help="s of sim time per run (default: %(default)s)")
    args = parser.parse_args(argv)
    interrupt.catch()
    try:
        urdf, srdf = solo12_files()
    except FileNotFoundError as exc:
        print(exc, file=sys.stderr)
        return 1
    from ..urdf import load_urdf
    model = load_urdf(urdf, floating_base=True)
    posture, root = srdf_posture(srdf)
    with RosSession() as ros:
        interrupt.check()
        print(f"legged robot standing: robot_dynamics node + sim_legged (MuJoCo, 1 kHz), solo12 from {urdf}")
        recordings = [record(run, urdf, list(model.joint_names), posture, root, show_progress=True)
                      for run in runs(args.hold_time)]
    if ros.exit_code:
        return ros.exit_code
    print(table(recordings, model.total_mass * 9.81))
    plot(recordings, output_path(args.output))
    print(f"plot: {os.path.abspath(args.output)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
