"""Five-bar demo (`make demo-five-bar`): the dynamics node drives a simulated five-bar parallel robot,
a closed kinematic chain with two motors and three passive joints; MuJoCo stands in for Gazebo.

The mechanism is urdf/five_bar.urdf, its loop closed in MuJoCo by a weld equality constraint
(five_bar.py, sim_five_bar.py). Its joint_states carry the two motors only; the node (parameters
loops = ['end_effector right_distal_tip 6d'], joints = the motors) assembles the passive joints from
the loop for every message and answers with the constrained inverse dynamics on the motors (Kim, Lie
group formulation of articulated rigid body dynamics, section 3.1).

Scenario 1, holding: the robot starts at rest at HOLD_POSE; the node's ~/gravity_commands, remapped
onto the effort controller, hold it still; with zero efforts it collapses.
Scenario 2, tracking: the end point follows one turn of a circle (five_bar.circle_point). This
process sends the desired motor motion to the node's ~/reference at every step and adds a PD on the
motors to the node's feedforward (harness.EffortController), then runs the PD alone with the same
gains. The tracking error is the end point's, as MuJoCo puts it (sim_five_bar's end_point).

Every run starts fresh processes with this Python (sim_five_bar in lockstep, the node where used);
this process is the effort controller and the recorder; it prints a table and writes a PNG.
"""
import os
import sys
from dataclasses import dataclass

import numpy as np
from geometry_msgs.msg import PointStamped
from matplotlib.figure import Figure

from . import interrupt
from .five_bar import (BANDWIDTH, CIRCLE_RADIUS, CIRCLE_TIME, HOLD_POSE, LOOPS, MOTORS, SETTLE_TIME, URDF,
                       circle_motors, circle_point, end_point, pd_gains)
from .harness import CONTROLLER, STEP_NS, EffortController, Run, nanoseconds, yaml_list
from .processes import RosSession, arguments, drive, output_path

HOLD_TIME = 5.0          # s of sim time per scenario-1 run
DRIFT_TARGET = 1e-3      # rad: the motors move less than this over HOLD_TIME on the node's gravity torques
NODE_PARAMETERS = ["-p", f"loops:={[' '.join(loop) for loop in LOOPS]}", "-p", f"joints:={yaml_list(MOTORS)}"]


def hold(t):
    return HOLD_POSE, np.zeros(2), np.zeros(2)


def scenario_runs(hold_time=HOLD_TIME):
    start = {"initial_positions": yaml_list(map(float, circle_motors(0.0)[0]))}
    track = CIRCLE_TIME + SETTLE_TIME
    return [Run("1 hold: node gravity_commands", "node", hold_time, hold),
            Run("1 collapse: zero efforts", "zero", hold_time, hold),
            Run("2 circle: feedforward + PD", "feedforward+pd", track, circle_motors, sim=start),
            Run("2 circle: PD alone", "pd", track, circle_motors, sim=start)]


@dataclass
class Recording:
    run: Run
    t: np.ndarray           # sim time of each joint_states [s]
    q: np.ndarray           # motor angles [rad]
    effort: np.ndarray      # efforts the motors applied [N m]
    tp: np.ndarray          # sim time of each end point [s]
    point: np.ndarray       # end point (x, z) [m], MuJoCo's
    real_time_factor: float

    @property
    def motor_error(self):
        """Desired minus measured motor angles [rad]."""
        return np.array([self.run.desired(t)[0] for t in self.t]) - self.q

    @property
    def point_error(self):
        """Distance of the end point from where it should be [m]: the circle's point, or (hold runs)
        the hold pose's end point."""
        desired = np.array([circle_point(t) if self.run.desired is circle_motors else end_point(HOLD_POSE)
                            for t in self.tp])
        return np.linalg.norm(self.point - desired, axis=1)


class Controller(EffortController):
    """harness.EffortController (records the motors, answers with the run's efforts) that also records
    the simulation's end point."""

    def __init__(self, run, kp, kd):
        super().__init__(run, list(MOTORS), kp, kd)
        self.points = []
        self.create_subscription(PointStamped, "end_point", self.on_point, 10)

    def on_point(self, msg):
        t = nanoseconds(msg.header.stamp) * 1e-9
        if not self.points or t > self.points[-1][0]:
            self.points.append((t, [msg.point.x, msg.point.z]))


def sim_command(run):
    parameters = {"controller": CONTROLLER, "initial_positions": yaml_list(map(float, HOLD_POSE)),
                  "rate": 1e9 / STEP_NS, "lockstep": "true", **run.sim}
    return [sys.executable, "-m", "robot_dynamics.demo.sim_five_bar", "--ros-args"] + [
        argument for name, value in parameters.items() for argument in ("-p", f"{name}:={value}")]


def node_command(run):
    """The robot_dynamics node with the five-bar's loop, for the runs that use it (None for the others)."""
    command = [sys.executable, "-m", "robot_dynamics.ros", "--ros-args", "-p", f"urdf_file:={URDF}",
               "-p", "use_sim_time:=true"] + NODE_PARAMETERS
    if run.command == "node":
        return command + ["-r", f"~/gravity_commands:=/{CONTROLLER}/commands"]
    return command if run.command == "feedforward+pd" else None


def record(run, kp, kd, show_progress=False):
    """One run in closed loop until `run.duration` of sim time; its Recording. The robot stays paused
    until the first command; the node is started once this process hears the robot."""
    controller = Controller(run, kp, kd)
    _, real_time_factor = drive(run, controller, sim_command(run), node_command(run), lambda: controller.samples,
                                lambda: controller.sim_time >= run.duration and controller.points
                                and controller.points[-1][0] >= run.duration, show_progress)
    t, q, effort = (np.array(column) for column in zip(*controller.samples))
    tp, point = (np.array(column) for column in zip(*controller.points))
    return Recording(run, t, q, effort, tp, point, real_time_factor)


def table(recordings, kp, kd):
    lines = [f"five-bar: hold {recordings[0].run.duration:g} s (target: motor drift < {1e3 * DRIFT_TARGET:g} mrad "
             f"with the node's gravity torques), circle r = {1e3 * CIRCLE_RADIUS:g} mm in {CIRCLE_TIME:g} s + "
             f"{SETTLE_TIME:g} s at rest",
             f"{'run':<32}{'motor err max':>14}{'end pt RMS':>12}{'end pt max':>12}"
             f"{'peak |tau| L':>14}{'peak |tau| R':>14}{'RTF':>6}",
             f"{'':<32}{'[mrad]':>14}{'[mm]':>12}{'[mm]':>12}{'[N m]':>14}{'[N m]':>14}"]
    for rec in recordings:
        error = rec.point_error
        peak = np.abs(rec.effort).max(axis=0)
        lines.append(f"{rec.run.name:<32}{1e3 * np.abs(rec.motor_error).max():14.4g}"
                     f"{1e3 * np.sqrt(np.mean(error**2)):12.4g}{1e3 * error.max():12.4g}"
                     f"{peak[0]:14.4g}{peak[1]:14.4g}{rec.real_time_factor:6.2f}")
    lines.append(f"PD gains Kp {np.round(kp, 3).tolist()} N m/rad, Kd {np.round(kd, 3).tolist()} N m s/rad "
                 f"(motors' reduced inertia at the hold pose, {BANDWIDTH:g} rad/s)")
    return "\n".join(lines)


def plot(recordings, path):
    figure = Figure(figsize=(4 * len(recordings) + 4, 7), layout="constrained")
    axes = figure.subplots(2, len(recordings) + 1)
    for (error_axis, effort_axis), rec in zip(axes[:, :-1].T, recordings):
        circle = rec.run.desired is circle_motors
        if circle:
            error_axis.plot(rec.tp, 1e3 * rec.point_error, label="end point")
            error_axis.set_ylabel("end point error [mm]")
        else:
            for j, name in enumerate(MOTORS):
                error_axis.plot(rec.t, 1e3 * rec.motor_error[:, j], label=name)
            error_axis.set_ylabel("desired - measured [mrad]")
            error_axis.legend(fontsize=8)
        for j, name in enumerate(MOTORS):
            effort_axis.plot(rec.t, rec.effort[:, j], label=name)
        error_axis.set_title(rec.run.name, fontsize=10)
        effort_axis.set_ylabel("effort [N m]")
        effort_axis.set_xlabel("sim time [s]")
    axes[1, 0].legend(fontsize=8)
    for axis in axes[:, -1]:
        axis.remove()
    path_axis = figure.add_subplot(axes[0, 0].get_gridspec()[:, -1])
    desired = np.array([circle_point(t) for t in np.linspace(0.0, CIRCLE_TIME, 200)])
    path_axis.plot(1e3 * desired[:, 0], 1e3 * desired[:, 1], "k--", label="desired")
    for rec in recordings:
        if rec.run.desired is circle_motors:
            path_axis.plot(1e3 * rec.point[:, 0], 1e3 * rec.point[:, 1], label=rec.run.name[10:])
    path_axis.set_aspect("equal")
    path_axis.set_xlabel("x [mm]")
    path_axis.set_ylabel("z [mm]")
    path_axis.set_title("end point path", fontsize=10)
    path_axis.legend(fontsize=8)
    figure.suptitle("robot_dynamics node (closed loop: constrained dynamics) + sim_five_bar (MuJoCo, 1 kHz)")
    figure.savefig(path, dpi=90)


def main(argv=None):
    """The demo. Exit code 0, or 130 (143) after Ctrl-C (SIGTERM) with every process it started stopped."""
    parser = arguments(__doc__, "five_bar_demo.png")
    parser.add_argument("--hold-time", type=float, default=HOLD_TIME, help="s of sim time per hold run "
                                                                           "(default: %(default)s)")
    args = parser.parse_args(argv)
    interrupt.catch()
    from ..urdf import load_urdf
    kp, kd = pd_gains(load_urdf(URDF))
    with RosSession() as ros:
        interrupt.check()
        print(f"five-bar: robot_dynamics node + sim_five_bar (MuJoCo, 1 kHz) on {URDF}")
        recordings = [record(run, kp, kd, show_progress=True) for run in scenario_runs(args.hold_time)]
    if ros.exit_code:
        return ros.exit_code
    print(table(recordings, kp, kd))
    plot(recordings, output_path(args.output))
    print(f"plot: {os.path.abspath(args.output)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
