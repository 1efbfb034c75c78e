"""Timing demo (`make demo-timing`): a planned path becomes a trajectory the arm can deliver.

The PUMA 560 carries 3 kg on tool0 (sim_arm and the node both know it); its MuJoCo actuators saturate at
the URDF effort limits, as real drives do. A path through WAYPOINTS (the natural cubic spline of
rd.path_through_waypoints) is timed three ways, each sent once to the node's ~/reference as a
JointTrajectory (positions and velocities: joint_trajectory_controller's cubic segments); the node
answers every joint_states with the computed torque of the trajectory at its stamp, and this process
adds a PD on the tracking error (harness.py, "trajectory+pd"):

  (a) joint velocity and acceleration limits, as MoveIt's default time parameterization uses them:
      the URDF's velocity limits and the fastest acceleration limit, the same for every joint, that a
      LIGHT payload tolerates within the effort limits. With 3 kg the drives saturate.
  (b) the node's ~/time_parameterize (TOPP-RA, torque-limited, EFFORT_SCALE of the limits: room for the PD).
  (c) (a) slowed down uniformly (times x k) until it needs no more than EFFORT_SCALE of the limits
      too: the user's workaround today.

It prints durations, peak |tau| / limit, the share of steps with a saturated drive and the tracking
errors, and writes a plot of |tau| / limit over time (out/timing_demo.png).
"""
import os
import sys

import numpy as np
from matplotlib.figure import Figure
from rclpy.time import Time
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from .. import dynamics as rd
from ..payload import add_payload
from ..urdf import load_urdf
from . import interrupt
from .harness import START_POSE, URDF, Run, call_node, pd_gains, record
from .processes import RosSession, arguments, output_path

WAYPOINTS = np.array([START_POSE, [1.2, -0.2, 0.4, 1.5, 0.3, -0.7], [0.2, 0.3, -0.2, 0.4, 1.0, 0.5],
                      [-0.5, -0.6, 0.9, -0.6, -0.4, 1.2], START_POSE])
PAYLOAD = {"payload.link": "tool0", "payload.mass": 3.0, "payload.com": [0.0, 0.0, 0.05],
           "payload.inertia": [0.005, 0.005, 0.005, 0.0, 0.0, 0.0]}
LIGHT = 0.5             # kg: the payload (a)'s limits are chosen for
EFFORT_SCALE = 0.9      # of the URDF effort limits, for (b) and (c): the rest is the PD's
GRIDPOINTS = 100
START = 0.3             # s of sim time: the trajectories start here (the arm holds the first point before)
SETTLE = 0.5            # s after the end
CHECK_PERIOD = 1e-3     # s between the samples the timings are checked at (the control period)
SATURATED = 0.999       # |effort| / limit counted as saturated


def arm(mass):
    model = load_urdf(URDF)
    add_payload(model, PAYLOAD["payload.link"], mass, PAYLOAD["payload.com"], PAYLOAD["payload.inertia"])
    return model


def peak_ratio(model, t, q, v, effort_limits):
    """The largest |tau| / limit the timing (points t, q, v: cubic segments) needs, every CHECK_PERIOD s."""
    ts = np.union1d(t, np.arange(0.0, t[-1], CHECK_PERIOD))
    Q, Vs, A = rd.Trajectory(t, q, v).sample(ts)
    return rd.check_trajectory(model, ts, Q, Vs, A, effort_limits=effort_limits).peak.max()


def largest(feasible, lo, hi, steps=30):
    """The largest x in [lo, hi] with feasible(x) (monotone; feasible(lo) holds), by bisection."""
    for _ in range(steps):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if feasible(mid) else (lo, mid)
    return lo


def uniform_timing(path, light):
    """(a): time-optimal within joint velocity and acceleration limits only (no torques), as MoveIt's
    default: the URDF's velocity limits (MoveIt reads them) and one acceleration limit for every joint,
    the fastest whose timing the light-payload arm follows within its effort limits. (t, q, v, a_max)."""
    def timing(a_max):
        tp = rd.time_parameterize(light, *path, velocity_limits=light.velocity_limits, acceleration_limits=a_max,
                                  effort_limits=np.inf, discretization="interpolation")
        return tp.t, tp.q, tp.v
    a_max = largest(lambda a: peak_ratio(light, *timing(a), light.effort_limits) <= 1.0, 0.1, 200.0)
    t, q, v = timing(a_max)
    used = np.abs(np.diff(v, axis=0) / np.diff(t)[:, None]).max()     # above it the velocity limits bind
    return t, q, v, min(a_max, used)


def slowed(heavy, t, q, v):
    """(c): (a) with times x k, velocities / k, the smallest k within EFFORT_SCALE of the limits."""
    limits = EFFORT_SCALE * heavy.effort_limits
    inverse = largest(lambda r: peak_ratio(heavy, t / r, q, v * r, limits) <= 1.0, 0.05, 1.0)
    return t / inverse, q, v * inverse, 1.0 / inverse


def service_timing(joints):
    """(b): the node's ~/time_parameterize (a node started for it, with the payload, then stopped)."""
    from robot_dynamics_interfaces.srv import TimeParameterize     # noqa: PLC0415
    waypoints = JointTrajectory(joint_names=joints, points=[JointTrajectoryPoint(positions=w.tolist())
                                                            for w in WAYPOINTS])
    response = call_node(TimeParameterize, "time_parameterize", TimeParameterize.Request(
        waypoints=waypoints, effort_scaling=EFFORT_SCALE, gridpoints=GRIDPOINTS), PAYLOAD)
    points = response.trajectory.points
    t = np.array([p.time_from_start.sec + 1e-9 * p.time_from_start.nanosec for p in points])
    return t, np.array([p.positions for p in points]), np.array([p.velocities for p in points]), response


def message(joints, t, q, v):
    msg = JointTrajectory(joint_names=joints)
    msg.header.stamp = Time(nanoseconds=round(START * 1e9)).to_msg()
    for k in range(len(t)):
        point = JointTrajectoryPoint(positions=q[k].tolist(), velocities=v[k].tolist())
        point.time_from_start.sec, point.time_from_start.nanosec = divmod(round(t[k] * 1e9), 10**9)
        msg.points.append(point)
    return msg


def run(name, joints, t, q, v):
    trajectory = rd.Trajectory(t, q, v)
    return Run(name, "trajectory+pd", START + t[-1] + SETTLE, lambda s: trajectory.sample(s - START),
               sim=dict(PAYLOAD), node=dict(PAYLOAD), trajectory=message(joints, t, q, v))


def measures(rec, limits):
    ratio = np.abs(rec.effort) / limits
    error = 1e3 * np.abs(rec.error)
    return dict(duration=rec.run.duration - START - SETTLE, peak=ratio.max(),
                saturated=100.0 * np.mean((ratio >= SATURATED).any(axis=1)),
                error=error.max(), final=error[-1].max(), rtf=rec.real_time_factor)


def table(rows):
    lines = [f"{'timing':<52}{'duration':>9}{'peak':>9}{'saturated':>11}{'max err':>9}{'end err':>9}{'RTF':>6}",
             f"{'':<52}{'[s]':>9}{'tau/lim':>9}{'[% steps]':>11}{'[mrad]':>9}{'[mrad]':>9}{'':>6}"]
    for name, m in rows:
        lines.append(f"{name:<52}{m['duration']:9.3f}{m['peak']:9.3f}{m['saturated']:11.1f}{m['error']:9.2f}"
                     f"{m['final']:9.2f}{m['rtf']:6.2f}")
    return "\n".join(lines)


def plot(recordings, limits, path):
    figure = Figure(figsize=(4.2 * len(recordings), 3.6), layout="constrained")
    axes = figure.subplots(1, len(recordings), sharey=True)
    for axis, rec in zip(axes, recordings):
        for j, name in enumerate(rec.joints):
            axis.plot(rec.t, rec.effort[:, j] / limits[j], label=name, linewidth=1)
        axis.axhline(1.0, color="k", linestyle="--", linewidth=0.8)
        axis.axhline(-1.0, color="k", linestyle="--", linewidth=0.8)
        axis.set_title(rec.run.name, fontsize=9)
        axis.set_xlabel("sim time [s]")
    axes[0].set_ylabel("applied effort / URDF limit")
    axes[0].legend(fontsize=7, ncol=2)
    figure.suptitle("PUMA 560 + 3 kg: node feedforward + PD in MuJoCo, drives saturating at the limits")
    figure.savefig(path, dpi=90)


def main(argv=None, signals_received=()):
    parser = arguments(__doc__, "timing_demo.png")
    args = parser.parse_args(argv)
    interrupt.catch(signals_received)
    with RosSession() as ros:
        interrupt.check()
        heavy, light = arm(PAYLOAD["payload.mass"]), arm(LIGHT)
        joints = list(heavy.joint_names)
        path = rd.path_through_waypoints(WAYPOINTS, GRIDPOINTS)
        t_a, q_a, v_a, a_max = uniform_timing(path, light)
        t_b, q_b, v_b, _ = service_timing(joints)
        t_c, q_c, v_c, k = slowed(heavy, t_a, q_a, v_a)
        names = [f"(a) URDF velocity limits, uniform a {a_max:.2f} rad/s^2",
                 "(b) ~/time_parameterize (TOPP-RA)", f"(c) (a) slowed down x {k:.2f}"]
        print(f"timing demo: {len(WAYPOINTS)} waypoints, PUMA 560 + {PAYLOAD['payload.mass']:g} kg; (a)'s limits for "
              f"{LIGHT:g} kg; (b), (c) within {EFFORT_SCALE:g} of the effort limits")
        kp, kd = pd_gains(heavy)
        runs = [run(name, joints, *timing) for name, timing in
                zip(names, ((t_a, q_a, v_a), (t_b, q_b, v_b), (t_c, q_c, v_c)))]
        recordings = [record(r, heavy, kp, kd, show_progress=True) for r in runs]
    if ros.exit_code:
        return ros.exit_code
    limits = heavy.effort_limits
    print(table([(rec.run.name, measures(rec, limits)) for rec in recordings]))
    plot(recordings, limits, output_path(args.output))
    print(f"plot: {os.path.abspath(args.output)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
