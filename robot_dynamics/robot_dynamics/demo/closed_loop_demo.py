"""Closed-loop demo (`make demo`): the dynamics node drives a simulated PUMA 560, MuJoCo standing in
for Gazebo.

Scenario 1, gravity compensation: the arm starts at START_POSE. The node's ~/gravity_commands,
remapped onto the arm's effort controller, hold it still; with zero efforts it falls.
Scenario 2, computed-torque tracking: a quintic point-to-point move (Lynch and Park, Modern Robotics, ch. 9) is sent
to the node's ~/reference at every control step; this process adds a PD on the tracking error to the
node's feedforward (a joint trajectory controller with effort feedforward), and then runs the PD
alone with the same gains.
Scenarios 3 (an unknown payload identified) and 4 (a push detected and measured): external_demo.py.

Every run starts fresh processes with this Python, the setup of launch/demo.launch.py: sim_arm
(in lockstep: each physics step waits for the command answering the state before it) and, where
used, the robot_dynamics node. This process is the effort controller and the recorder. It prints a
table of the maximum joint errors and writes a PNG of joint errors and efforts.
"""
import os
import sys

import numpy as np
from matplotlib.figure import Figure

from ..urdf import load_urdf
from . import interrupt
from .harness import (CONTROLLER, GOAL_POSE, HOLD_TIME, MOVE_TIME, SETTLE_TIME, START_POSE, URDF,  # noqa: F401
                      Run, pd_gains, quintic, record)
from .processes import RosSession, arguments, output_path


def hold_start(t):
    return START_POSE, np.zeros_like(START_POSE), np.zeros_like(START_POSE)


def move(t):
    return quintic(START_POSE, GOAL_POSE, MOVE_TIME, t)


def scenario_runs(hold_time=HOLD_TIME):
    return [Run("1 hold: node gravity_commands", "node", hold_time, hold_start),
            Run("1 fall: zero efforts", "zero", hold_time, hold_start),
            Run("2 track: feedforward + PD", "feedforward+pd", MOVE_TIME + SETTLE_TIME, move),
            Run("2 track: PD alone", "pd", MOVE_TIME + SETTLE_TIME, move)]


def table(recordings, kp, kd):
    joints = recordings[0].joints
    header = f"{'run':<32}" + "".join(f"{name:>10}" for name in joints) + f"{'max':>10}{'RTF':>6}"
    lines = ["max |desired - measured| per joint [mrad] (scenario 1: drift from the start pose)", header]
    for rec in recordings:
        worst = 1e3 * np.abs(rec.error).max(axis=0)
        lines.append(f"{rec.run.name:<32}" + "".join(f"{x:10.4g}" for x in worst)
                     + f"{worst.max():10.4g}{rec.real_time_factor:6.2f}")
    lines.append(f"{'PD gains Kp [N m/rad]':<32}" + "".join(f"{x:10.3g}" for x in kp))
    lines.append(f"{'         Kd [N m s/rad]':<32}" + "".join(f"{x:10.3g}" for x in kd))
    return "\n".join(lines)


def plot(recordings, path):
    figure = Figure(figsize=(4 * len(recordings), 7), layout="constrained")
    axes = figure.subplots(2, len(recordings), sharex="col")
    for (error_axis, effort_axis), rec in zip(axes.T, recordings):
        for j, name in enumerate(rec.joints):
            error_axis.plot(rec.t, 1e3 * rec.error[:, j], label=name)
            effort_axis.plot(rec.t, rec.effort[:, j], label=name)
        error_axis.set_title(rec.run.name, fontsize=10, pad=14)
        error_axis.set_ylabel("desired - measured [mrad]")
        effort_axis.set_ylabel("effort [N m]")
        effort_axis.set_xlabel("sim time [s]")
    axes[0, 0].legend(fontsize=8)
    figure.suptitle("robot_dynamics node + sim_arm (MuJoCo, 1 kHz), PUMA 560")
    figure.savefig(path, dpi=90)


def main(argv=None):
    """The demo. Exit code 0, or 130 (143) after Ctrl-C (SIGTERM) with every process it started stopped."""
    parser = arguments(__doc__, "closed_loop_demo.png")
    args = parser.parse_args(argv)
    interrupt.catch()
    with RosSession() as ros:
        interrupt.check()
        from . import external_demo     # imports mujoco (see interrupt.py)
        model = load_urdf(URDF)
        kp, kd = pd_gains(model)
        print(f"closed loop: robot_dynamics node + sim_arm (MuJoCo, 1 kHz) on {URDF}")
        recordings = [record(run, model, kp, kd, show_progress=True) for run in scenario_runs()]
        payload = external_demo.payload_scenario(show_progress=True)
        push = external_demo.push_scenario(show_progress=True)
    if ros.exit_code:
        return ros.exit_code
    print(table(recordings, kp, kd))
    print()
    print(external_demo.payload_table(payload))
    print()
    print(external_demo.push_table(push))
    plot(recordings, output_path(args.output))
    external_output = external_demo.plot_path(args.output)
    external_demo.plot(payload, push, external_output)
    print(f"plots: {os.path.abspath(args.output)}, {os.path.abspath(external_output)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
