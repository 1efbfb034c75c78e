"""Identification demo (`make demo-identify`): the node identifies the arm as it really is, and tracks
better with it.

The PUMA 560 in MuJoCo (sim_arm) is not its URDF: every link MASS_SCALE times heavier, a TOOL on tool0
the URDF does not know, and on every joint viscous (DAMPING) and dry (FRICTION) friction and ARMATURE.

1. Excitation: the node's ~/excitation_trajectory (Swevers' Fourier series within LIMIT_SCALING of the
   URDF velocity and effort limits), followed through the node's feedforward (the URDF's model) + a PD
   (harness.py, "trajectory+pd"; the same gains in every run, BANDWIDTH on the real arm's mass matrix
   diagonal); joint_states recorded (positions, velocities, the efforts applied).
2. The recording written as a rosbag2 (robot_dynamics.bags.write_joint_states, sqlite3) and read back.
3. A test trajectory the excitation did not contain (quintic moves through TEST_POSES), twice: the node
   with the URDF's model; and a node that first identifies the bag (~/identify_dynamics, bag, apply:
   the arm waits, paused, until the estimate is applied) and then serves the identified model.

It prints, per joint, the tracking error of both runs and the torque prediction error of both models
(the efforts measured along the URDF run against each model's inverse dynamics + friction there),
the identified friction and armature against the simulation's, and writes out/identify_demo.png.
"""
import os
import shutil
import sys
import tempfile

import numpy as np
from matplotlib.figure import Figure
from rclpy.time import Time

from .. import dynamics as rd
from ..bags import read_joint_states, write_joint_states
from ..dynamic_identification import accelerations
from ..payload import add_payload
from ..urdf import load_urdf
from . import interrupt
from .harness import URDF, Run, call_node, pd_gains, quintic, record, yaml_list
from .processes import RosSession, arguments, output_path

MASS_SCALE = 1.25
TOOL = {"payload.link": "tool0", "payload.mass": 1.2, "payload.com": [0.0, 0.02, 0.08],
        "payload.inertia": [2e-3, 2e-3, 1.5e-3, 0.0, 0.0, 0.0]}
DAMPING = [2.0, 1.6, 1.2, 0.5, 0.4, 0.3]       # N m s/rad, viscous
FRICTION = [3.0, 2.5, 2.0, 0.8, 0.6, 0.5]      # N m, dry (MuJoCo's frictionloss)
ARMATURE = [0.4, 0.3, 0.2, 0.05, 0.04, 0.03]   # kg m^2
EXCITATION = dict(duration=12.0, harmonics=4, limit_scaling=0.5, time_budget=5.0, rate=100.0)
TEST_POSES = np.array([[0.3, -0.9, 1.4, 0.6, -0.5, 0.4], [1.1, -0.3, 0.6, -0.4, 0.7, -0.6],
                       [-0.4, -1.3, 1.9, 0.9, 0.2, 1.0], [0.3, -0.9, 1.4, 0.6, -0.5, 0.4]])
SEGMENT = 1.5       # s per quintic move of the test trajectory
BANDWIDTH = 20.0    # rad/s: the PD's, on the real arm's mass matrix diagonal (gains tuned on the arm itself:
                    # the URDF's would leave the wrist, lighter than its rotor and its friction, stuck)
START = 0.3         # s of sim time: the trajectories start here (the arm holds the first point before)
SETTLE = 0.5        # s after the end


def sim_parameters():
    """sim_arm's parameters of the arm as it really is."""
    return {"mass_scale": MASS_SCALE, "damping": yaml_list(DAMPING), "friction": yaml_list(FRICTION),
            "armature": yaml_list(ARMATURE), **TOOL}


def real_arm():
    """The simulated arm as a Model: what the node should find (friction: viscous DAMPING, Coulomb
    FRICTION, no offset)."""
    model = load_urdf(URDF)
    for b in range(model.nb):
        model.set_body_inertia(b, model.inertia[b] * MASS_SCALE)
    add_payload(model, TOOL["payload.link"], TOOL["payload.mass"], TOOL["payload.com"], TOOL["payload.inertia"])
    model.friction = np.c_[DAMPING, FRICTION, np.zeros(6)]
    model.armature = ARMATURE
    return model


def test_trajectory(t):
    """The test trajectory's desired (q, v, a) at time t [s] from its start: quintic moves through TEST_POSES."""
    k = int(min(max(t, 0.0) // SEGMENT, len(TEST_POSES) - 2))
    return quintic(TEST_POSES[k], TEST_POSES[k + 1], SEGMENT, t - k * SEGMENT)


def sampled(desired, duration, period=0.01):
    """(times, q, v, a) of a desired-state function every `period` s over [0, duration]."""
    times = np.linspace(0.0, duration, int(round(duration / period)) + 1)
    q, v, a = (np.array(x) for x in zip(*(desired(t) for t in times)))
    return times, q, v, a


def message(joints, times, q, v, a):
    """A JointTrajectory starting at sim time START."""
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint    # noqa: PLC0415
    msg = JointTrajectory(joint_names=joints)
    msg.header.stamp = Time(nanoseconds=round(START * 1e9)).to_msg()
    for k, tk in enumerate(times):
        point = JointTrajectoryPoint(positions=q[k].tolist(), velocities=v[k].tolist(), accelerations=a[k].tolist())
        point.time_from_start.sec, point.time_from_start.nanosec = divmod(round(tk * 1e9), 10**9)
        msg.points.append(point)
    return msg


def trajectory_run(name, joints, times, q, v, a, **extra):
    """A "trajectory+pd" run of the points (times, q, v, a), from the first point at rest."""
    trajectory = rd.Trajectory(times, q, v, a)
    return Run(name, "trajectory+pd", START + times[-1] + SETTLE, lambda s: trajectory.sample(s - START),
               sim={**sim_parameters(), "initial_positions": yaml_list(map(float, q[0]))},
               trajectory=message(joints, times, q, v, a), **extra)


def excitation(joints):
    """The node's ~/excitation_trajectory: (times, q, v, a) and the response."""
    from robot_dynamics_interfaces.srv import ExcitationTrajectory     # noqa: PLC0415
    response = call_node(ExcitationTrajectory, "excitation_trajectory", ExcitationTrajectory.Request(**EXCITATION))
    points = response.trajectory.points
    assert list(response.trajectory.joint_names) == joints
    times = np.array([p.time_from_start.sec + 1e-9 * p.time_from_start.nanosec for p in points])
    return (times, *(np.array([getattr(p, f) for p in points]) for f in ("positions", "velocities", "accelerations")),
            response)


def to_bag(rec, folder):
    """The recording as a rosbag2 (sqlite3) in folder/excitation, read back: (path, samples)."""
    path = os.path.join(folder, "excitation")
    keep = np.r_[True, np.diff(rec.t) > 0]
    write_joint_states(path, rec.t[keep], rec.joints, rec.q[keep], rec.v[keep], rec.effort[keep])
    t, names, q, v, effort = read_joint_states(path, joint_names=rec.joints)
    assert names == rec.joints and np.array_equal(q, rec.q[keep]) and np.array_equal(effort, rec.effort[keep])
    return path, len(t)


def predictions(rec, models):
    """RMS per joint of measured effort minus each model's inverse dynamics + friction along a recording
    (accelerations: the zero-phase filtered derivative of the velocities, as identification takes them)."""
    keep = np.r_[True, np.diff(rec.t) > 0]
    t, q, v, effort = rec.t[keep], rec.q[keep], rec.v[keep], rec.effort[keep]
    a = accelerations(v, t)
    inside = slice(50, -50)                     # the filter's edges left out
    return [np.sqrt(np.mean((effort - rd.inverse_dynamics(m, q, v, a) - rd.friction_torques(m, v))[inside] ** 2,
                            axis=0)) for m in models]


def tracking(rec):
    """(RMS, max) per joint of the tracking error [mrad] while the trajectory runs and settles."""
    error = 1e3 * rec.error[rec.t >= START]
    return np.sqrt(np.mean(error ** 2, axis=0)), np.abs(error).max(axis=0)


def table(joints, urdf_run, identified_run, prediction, identified, real):
    (rms_u, max_u), (rms_i, max_i) = tracking(urdf_run), tracking(identified_run)
    head = f"{'':<44}" + "".join(f"{name:>9}" for name in joints)
    rows = [("tracking RMS [mrad], URDF model", rms_u), ("tracking RMS [mrad], identified model", rms_i),
            ("tracking max [mrad], URDF model", max_u), ("tracking max [mrad], identified model", max_i),
            ("torque prediction RMS [N m], URDF model", prediction[0]),
            ("torque prediction RMS [N m], identified model", prediction[1]),
            ("viscous [N m s/rad]: simulated", real.friction[:, 0]), ("                    identified", identified.friction[:, 0]),
            ("Coulomb [N m]: simulated (frictionloss)", real.friction[:, 1]),
            ("               identified", identified.friction[:, 1]),
            ("armature [kg m^2]: simulated", real.armature), ("                  identified", identified.armature)]
    lines = [head] + [f"{name:<44}" + "".join(f"{x:9.3g}" for x in values) for name, values in rows]
    return "\n".join(lines)


def plot(joints, urdf_run, identified_run, prediction, path):
    figure = Figure(figsize=(13, 3.8), layout="constrained")
    error_axis, track_axis, torque_axis = figure.subplots(1, 3)
    for rec, label in ((urdf_run, "URDF model"), (identified_run, "identified model")):
        error_axis.plot(rec.t, 1e3 * np.abs(rec.error).max(axis=1), label=label, linewidth=1)
    error_axis.set_xlabel("sim time [s]")
    error_axis.set_ylabel("max |desired - measured| over joints [mrad]")
    error_axis.legend(fontsize=8)
    x, width = np.arange(len(joints)), 0.38
    for axis, (a, b), unit in ((track_axis, (tracking(urdf_run)[0], tracking(identified_run)[0]), "tracking RMS [mrad]"),
                               (torque_axis, prediction, "torque prediction RMS [N m]")):
        axis.bar(x - width / 2, a, width, label="URDF model")
        axis.bar(x + width / 2, b, width, label="identified model")
        axis.set_xticks(x, joints, fontsize=8)
        axis.set_ylabel(unit)
    track_axis.legend(fontsize=8)
    figure.suptitle(f"PUMA 560 in MuJoCo, links x{MASS_SCALE:g}, a {TOOL['payload.mass']:g} kg tool, friction and "
                    "armature: node feedforward + PD on a test trajectory")
    figure.savefig(path, dpi=90)


def main(argv=None, signals_received=()):
    parser = arguments(__doc__, "identify_demo.png")
    args = parser.parse_args(argv)
    interrupt.catch(signals_received)
    folder = tempfile.mkdtemp(prefix="identify_demo_")
    try:
        with RosSession() as ros:
            interrupt.check()
            model = load_urdf(URDF)
            joints = list(model.joint_names)
            kp, kd = pd_gains(real_arm(), BANDWIDTH)
            print(f"identification demo: PUMA 560 in MuJoCo, links x{MASS_SCALE:g}, {TOOL['payload.mass']:g} kg tool, "
                  "friction and armature the URDF does not have")
            times, q, v, a, response = excitation(joints)
            print(f"excitation (~/excitation_trajectory): {response.message}")
            excite = record(trajectory_run("1 excitation: URDF model + PD", joints, times, q, v, a), model, kp, kd,
                            show_progress=True)
            bag, samples = to_bag(excite, folder)
            print(f"  recorded {samples} joint_states, written as a rosbag2 (sqlite3) and read back: {bag}")
            test = sampled(test_trajectory, SEGMENT * (len(TEST_POSES) - 1))
            urdf_run = record(trajectory_run("2 test: URDF model + PD", joints, *test), model, kp, kd,
                              show_progress=True)
            identified_run = record(trajectory_run("3 test: identified model + PD", joints, *test,
                                                   identify_dynamics={"bag": bag, "apply": True}),
                                    model, kp, kd, show_progress=True)
        if ros.exit_code:
            return ros.exit_code
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    answer = identified_run.identified
    print(f"~/identify_dynamics: {answer.message}")
    identified = load_urdf(answer.urdf)
    prediction = predictions(urdf_run, (model, identified))
    print(table(joints, urdf_run, identified_run, prediction, identified, real_arm()))
    plot(joints, urdf_run, identified_run, prediction, output_path(args.output))
    print(f"plot: {os.path.abspath(args.output)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
