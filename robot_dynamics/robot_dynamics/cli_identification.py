"""`robot-dynamics identify` and `robot-dynamics excite` (cli.py registers them): the whole robot's
dynamics identified from a rosbag2 recording of joint_states, written as a URDF; an optimal
excitation trajectory written as a trajectory_msgs/JointTrajectory YAML.
"""
import math
import sys

import numpy as np

from .dynamic_identification import identify_dynamics
from .excitation import excitation_trajectory
from .model import FRICTION_TERMS


def add_parsers(sub, urdf_help, run_identify, run_excite):
    ident = sub.add_parser("identify", help="identify inertias, friction and armature from a rosbag2 of joint_states",
                           description="Identify every body's inertial parameters, joint friction and armature "
                           "from the joint_states (positions, velocities, efforts) in a rosbag2 folder (MCAP or "
                           "sqlite3) and write the URDF with them.")
    ident.add_argument("bag", help="rosbag2 folder")
    ident.add_argument("--urdf", required=True, help=urdf_help)
    ident.add_argument("--out", required=True, help="where to write the identified URDF")
    ident.add_argument("--topic", default="/joint_states", help="the JointState topic (default /joint_states)")
    ident.add_argument("--report", help="write a plot of measured and predicted torques per joint here (PNG)")
    ident.add_argument("--friction", nargs="*", default=list(FRICTION_TERMS), choices=FRICTION_TERMS,
                       help="friction terms to identify (default all three; the flag alone: none, the URDF's kept)")
    ident.add_argument("--no-armature", action="store_true", help="keep the URDF's armature")
    ident.add_argument("--no-feasible", action="store_true",
                       help="bodies as the data say, physical or not (default: physically consistent)")
    ident.add_argument("--cutoff", type=float, help="low-pass cut-off [Hz] of the derived accelerations")
    ident.add_argument("--max-condition", type=float, default=1e4, help="refuse less excitation (default 1e4)")
    ident.set_defaults(run=run_identify)

    ex = sub.add_parser("excite", help="an optimal excitation trajectory as JointTrajectory YAML",
                        description="A periodic trajectory (finite Fourier series, at rest at both ends, within the "
                        "limits) that excites every identifiable parameter, written as the YAML of a "
                        "trajectory_msgs/JointTrajectory: ros2 topic pub --once <controller>/joint_trajectory "
                        "trajectory_msgs/msg/JointTrajectory \"$(cat FILE)\".")
    ex.add_argument("--urdf", required=True, help=urdf_help)
    ex.add_argument("--duration", type=float, required=True, help="one period [s]")
    ex.add_argument("--out", required=True, help="where to write the YAML")
    ex.add_argument("--harmonics", type=int, default=5)
    ex.add_argument("--rate", type=float, default=50.0, help="points per second in the message (default 50)")
    ex.add_argument("--lead-in", type=float, default=3.0,
                    help="time_from_start of the first point [s]: the controller moves there from where the arm is "
                    "(default 3)")
    ex.add_argument("--limit-scale", type=float, default=1.0,
                    help="fraction of the velocity, acceleration and effort limits to use (default 1)")
    for name in ("velocity", "acceleration", "effort"):
        ex.add_argument(f"--{name}-limits", nargs="+", type=float,
                        help=f"{name} limit, one or one per joint (default: " +
                        ("none" if name == "acceleration" else "the URDF's") + ")")
    ex.add_argument("--time-budget", type=float, default=10.0, help="seconds to search (default 10)")
    ex.add_argument("--seed", type=int, default=0)
    ex.set_defaults(run=run_excite)


class Progress:
    """A progress bar on stderr when it is a terminal (nothing otherwise)."""

    def __init__(self, label, stream=sys.stderr):
        self.label, self.stream = label, stream
        self.on = hasattr(stream, "isatty") and stream.isatty()

    def __call__(self, fraction):
        if self.on:
            n = int(30 * fraction)
            self.stream.write(f"\r{self.label} [{'#' * n}{' ' * (30 - n)}] {100 * fraction:3.0f}%")
            if fraction >= 1.0:
                self.stream.write("\n")
            self.stream.flush()


def identify(args, model):
    from .bags import read_joint_states
    t, names, q, v, effort = read_joint_states(args.bag, args.topic, model.joint_names, Progress("reading"))
    later = np.r_[True, np.diff(t) > 0]
    if not later.all():
        print(f"{int((~later).sum())} samples with a repeated or earlier stamp left out")
        t, q, v, effort = t[later], q[later], v[later], effort[later]
    rate = (len(t) - 1) / (t[-1] - t[0]) if len(t) > 1 and t[-1] > t[0] else float("nan")
    print(f"{args.bag}: {len(t)} samples of {len(names)} joints on {args.topic}, {t[-1] - t[0]:.3f} s at "
          f"{rate:.4g} Hz")
    est = identify_dynamics(model, q, v, effort, t=t, friction=args.friction or (), armature=not args.no_armature,
                            feasible=not args.no_feasible, cutoff=args.cutoff, max_condition=args.max_condition,
                            progress=Progress("identifying"))
    rms = np.sqrt(np.mean(effort * effort, axis=0))
    print(f"\nidentified from {est.rows} equations; condition number {est.condition_number:.4g}; "
          f"{'physically consistent' if est.physical else 'NOT physically consistent'}")
    print(f"{'joint':<20} {'RMS torque':>11} {'residual':>11} {'viscous':>11} {'coulomb':>11} {'offset':>11} "
          f"{'armature':>11}")
    for j, name in enumerate(names):
        f = est.friction[name]
        print(f"{name:<20} {rms[j]:11.5g} {est.residual[j]:11.5g} {f['viscous']:11.5g} {f['coulomb']:11.5g} "
              f"{f['offset']:11.5g} {est.armature[name]:11.5g}")
    print("\nparameters that changed most (URDF -> identified):")
    for name, before, after in est.changes()[:10]:
        print(f"  {name:<28} {before:12.6g} -> {after:12.6g}")
    with open(args.out, "w") as fh:
        fh.write(est.to_urdf())
    print(f"\nwrote {args.out}")
    if args.report:
        _plot(args.report, t, names, effort, est.predict(q, v, _accelerations(v, t, args.cutoff)), est)
        print(f"wrote {args.report}")
    return 0


def excite(args, model):
    import yaml
    scale = args.limit_scale
    if not (math.isfinite(scale) and 0 < scale <= 1):
        raise ValueError(f"--limit-scale must be in (0, 1], got {scale}")
    limits = {name: scale * np.asarray(getattr(args, f"{name}_limits") if getattr(args, f"{name}_limits")
                                       else default, float)
              for name, default in (("velocity", model.velocity_limits), ("acceleration", np.inf),
                                    ("effort", model.effort_limits))}
    traj = excitation_trajectory(model, args.duration, args.harmonics, limits["velocity"], limits["acceleration"],
                                 limits["effort"], rng=args.seed, time_budget=args.time_budget)
    msg = traj.to_joint_trajectory(args.rate, args.lead_in)
    with open(args.out, "w") as fh:
        yaml.safe_dump(msg, fh, default_flow_style=None, sort_keys=False)
    q, v, _ = traj.sample(np.linspace(0, traj.duration, 2001))
    starts = np.median(traj.start_condition_numbers)
    print(f"excitation of {len(model.joint_names)} joints, {traj.duration:g} s, {traj.harmonics} harmonics: "
          f"condition number {traj.condition_number:.4g} (random starts within the same limits: median {starts:.4g})")
    print(f"{'joint':<20} {'start':>9} {'min':>9} {'max':>9} {'|v| max':>9} {'limit':>9}")
    for j, name in enumerate(model.joint_names):
        print(f"{name:<20} {q[0, j]:9.4g} {q[:, j].min():9.4g} {q[:, j].max():9.4g} {np.abs(v[:, j]).max():9.4g} "
              f"{limits['velocity'][j] if limits['velocity'].size > 1 else float(limits['velocity']):9.4g}")
    print(f"\nwrote {args.out} ({len(msg['points'])} points, the first at {args.lead_in:g} s); send it with\n"
          f"  ros2 topic pub --once /<controller>/joint_trajectory trajectory_msgs/msg/JointTrajectory "
          f"\"$(cat {args.out})\"")
    return 0


def _accelerations(v, t, cutoff):
    from .dynamic_identification import accelerations
    return accelerations(v, t, cutoff)


def _plot(path, t, names, measured, predicted, est):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise ValueError("--report needs matplotlib (pip install matplotlib)") from None
    n = len(names)
    fig, axes = plt.subplots(n, 1, figsize=(10, 1.8 * n + 0.6), sharex=True, squeeze=False)
    for j, ax in enumerate(axes[:, 0]):
        ax.plot(t - t[0], measured[:, j], lw=0.8, label="measured")
        ax.plot(t - t[0], predicted[:, j], lw=0.8, label="identified model")
        ax.set_ylabel(f"{names[j]}\n[N m]", fontsize=8)
        ax.text(0.01, 0.85, f"residual RMS {est.residual[j]:.3g}", transform=ax.transAxes, fontsize=8)
    axes[0, 0].legend(loc="upper right", fontsize=8)
    axes[-1, 0].set_xlabel("time [s]")
    fig.suptitle("joint torques: measured and predicted by the identified model")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
