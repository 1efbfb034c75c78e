"""Command line: `robot-dynamics info|torques|demo|identify|excite` (also `python -m robot_dynamics.cli`;
identify and excite: cli_identification.py)."""
import argparse
import math
import re
import sys

import numpy as np

from . import cli_identification
from . import dynamics as rd
from .resources import DEFAULT_MODEL, MODELS, bundled_urdf
from .urdf import URDFError, load_urdf

PROG = "robot-dynamics"
#: names of the coordinates of a multi-coordinate joint, in q and in v
COORDINATES = {"floating": (("x", "y", "z", "qx", "qy", "qz", "qw"), ("vx", "vy", "vz", "wx", "wy", "wz")),
               "planar": (("x", "y", "theta"), ("vx", "vy", "omega"))}
DEMO_STATES = (  # puma560 poses named in urdf/puma560.urdf
    ("zero pose", [0.0, 0.0, 0.0, 0.0, 0.0, 0.0]),
    ("ready (arm straight up)", [0.0, -math.pi / 2, math.pi / 2, 0.0, 0.0, 0.0]),
    ("stretched (arm along +x)", [0.0, 0.0, math.pi / 2, 0.0, 0.0, 0.0]),
)
DEMO_V = [0.5, -0.3, 0.4, 1.0, -0.8, 1.2]
DEMO_A = [1.0, 0.5, -1.0, 2.0, 1.5, -2.0]
TIP_WRENCH = [0.0, 0.0, -10.0, 0.0, 0.0, 0.0]   # 10 N downward force at the tool, no torque


def _load(args):
    """URDF argument: a file, an XML string, or the short name of a bundled model (load_urdf takes all three)."""
    return load_urdf(args.urdf, floating_base=getattr(args, "floating_base", False),
                     root=getattr(args, "root", None), tip=getattr(args, "tip", None),
                     strict=getattr(args, "strict", False))


def _coords(model, velocity):
    """A name per coordinate of q (or v): <joint>.<coordinate> for multi-coordinate joints."""
    names = []
    for j in model.joints:
        parts = COORDINATES.get(j.kind)
        names += [f"{j.name}.{c}" for c in parts[1 if velocity else 0]] if parts else [j.name]
    return names


def _vector(values, model, name, velocity=True):
    """Numbers given as separate arguments and/or comma/space separated strings."""
    names = _coords(model, velocity)
    if values is None:
        return np.zeros(len(names))
    tokens = [t for v in values for t in re.split(r"[,\s]+", v.strip()) if t]
    try:
        x = np.array([float(t) for t in tokens])
    except ValueError as exc:
        raise ValueError(f"--{name}: {exc}") from None
    if len(x) != len(names):
        raise ValueError(f"--{name} takes {len(names)} numbers ({' '.join(names)}), got {len(x)}")
    return x


def _joint_type(model, body):
    kind = model.body_joint_kinds[body]
    if kind in ("revolute", "continuous", "prismatic") and model.body_joint_names[body] not in model.joint_index:
        return kind + ", mimic"
    return kind


def cmd_info(args):
    model = _load(args)
    print(f"robot: {model.name}")
    print(f"nq = {model.nq}, nv = {model.nv}, actuated joints = {len(model.joint_names)}, "
          f"bodies = {model.nb}, frames = {len(model.frame_names)}")
    print("\nkinematic tree (body <- joint [type, axis]):")
    print("world" if model.root_joint else f"{model.frame_names[0]} (fixed to world)")

    def show(parent, depth):
        for b in np.flatnonzero(model.parent == parent):
            axis = "" if model.body_joint_kinds[b] == "floating" else \
                (", normal " if model.body_joint_kinds[b] == "planar" else ", axis ") + \
                " ".join(f"{x:g}" for x in np.round(model.joint_axis[b], 6))
            print(f"{'  ' * depth}- {model.body_names[b]} <- {model.body_joint_names[b]} "
                  f"[{_joint_type(model, b)}{axis}]")
            show(b, depth + 1)

    show(-1, 1)
    multi = [j for j in model.joints if j.kind in COORDINATES]
    if multi:
        print("\nmulti-coordinate joints (first in q and v):")
        for j in multi:
            print(f"  {j.name:<20} {j.kind:<9} q[{j.idx_q}:{j.idx_q + j.nq}] = {' '.join(COORDINATES[j.kind][0])}, "
                  f"v[{j.idx_v}:{j.idx_v + j.nv}] = {' '.join(COORDINATES[j.kind][1])} (child frame)")
    print("\nactuated joints:")
    print(f"  {'joint':<20} {'type':<11} {'lower':>10} {'upper':>10} {'velocity':>10} {'effort':>10}")
    for name, lo, hi, vel, eff in zip(model.joint_names, model.lower_limits, model.upper_limits,
                                      model.velocity_limits, model.effort_limits):
        body = model.body_joint_names.index(name)
        print(f"  {name:<20} {_joint_type(model, body):<11} {lo:>10.4g} {hi:>10.4g} {vel:>10.4g} {eff:>10.4g}")
    print("\nbody masses (fixed links lumped into their body; links fixed to the world excluded):")
    for name, mass in zip(model.body_names, model.inertia[:, 0]):
        print(f"  {name:<20} {mass:10.6g} kg")
    print(f"total mass: {model.total_mass:.6g} kg")
    print(f"\nwarnings: {len(model.warnings) or 'none'}")
    for text in model.warnings:
        print(f"  - {text}")
    return 0


def cmd_torques(args):
    model = _load(args)
    if args.gravity is not None:
        model.gravity = args.gravity
    q = _vector(args.q, model, "q", velocity=False)
    v, a = _vector(args.v, model, "v"), _vector(args.a, model, "a")
    tau, g = rd.inverse_dynamics(model, q, v, a), rd.gravity_torques(model, q)
    print(f"{'joint':<20} {'tau':>14} {'g(q)':>14}")
    for name, t, gi in zip(_coords(model, True), tau, g):
        print(f"{name:<20} {t:14.6f} {gi:14.6f}")
    return 0


def cmd_demo(args):
    model = load_urdf(bundled_urdf(args.model))
    n = model.nv
    v, a = np.resize(DEMO_V, n), np.resize(DEMO_A, n)
    tool = "tool0" if "tool0" in model.frames else model.frame_names[-1]
    print(f"robot: {model.name}  joints: {' '.join(model.joint_names)}  total mass: {model.total_mass:.4g} kg")
    states = DEMO_STATES if args.model == "puma560" else (("zero pose", np.zeros(model.nq)),)
    with np.printoptions(precision=5, suppress=True, linewidth=120, floatmode="fixed"):
        print(f"motion: v = ({' '.join(f'{x:g}' for x in v)}) rad/s, "
              f"a = ({' '.join(f'{x:g}' for x in a)}) rad/s^2")
        for title, q in states:
            q = np.asarray(q, float)
            print(f"\n=== {title}: q = {q} ===")
            print(f"g(q) [N m]        = {rd.gravity_torques(model, q)}")
            print(f"M(q) [kg m^2] =\n{rd.mass_matrix(model, q)}")
            tau = rd.inverse_dynamics(model, q, v, a)
            print(f"tau(q, v, a)      = {tau}")
            print(f"J^T F (10 N down at {tool}) = {rd.wrench_to_joint_torques(model, q, tool, TIP_WRENCH)}")
            err = np.abs(rd.forward_dynamics(model, q, v, tau) - a).max()
            print(f"forward(inverse(a)) recovers a: max error {err:.2e}")
    return 0


def _parser():
    p = argparse.ArgumentParser(prog=PROG, description="Rigid-body dynamics of URDF robots.")
    sub = p.add_subparsers(dest="command", required=True)
    urdf_help = f"URDF or .xacro file, or a bundled model ({', '.join(MODELS)})"

    info = sub.add_parser("info", help="describe a robot model")
    info.add_argument("urdf", help=urdf_help)
    info.add_argument("--floating-base", action="store_true", help="add a free-flyer root joint")
    info.add_argument("--root", help="take the subtree below this link")
    info.add_argument("--tip", help="keep only the chain root -> tip")
    info.add_argument("--strict", action="store_true", help="refuse what would only be warned about")
    info.set_defaults(run=cmd_info)

    tq = sub.add_parser("torques", help="inverse dynamics and gravity torques at one state")
    tq.add_argument("urdf", help=urdf_help)
    tq.add_argument("--q", nargs="+", required=True, help="positions (space/comma separated)")
    tq.add_argument("--v", nargs="+", help="velocities (default zero)")
    tq.add_argument("--a", nargs="+", help="accelerations (default zero)")
    tq.add_argument("--floating-base", action="store_true", help="add a free-flyer root joint")
    tq.add_argument("--gravity", nargs=3, type=float, metavar=("GX", "GY", "GZ"))
    tq.set_defaults(run=cmd_torques)

    demo = sub.add_parser("demo", help="dynamics of a bundled arm at a few poses")
    demo.add_argument("--model", default=DEFAULT_MODEL, choices=list(MODELS))
    demo.set_defaults(run=cmd_demo)
    cli_identification.add_parsers(sub, urdf_help, lambda args: cli_identification.identify(args, _load(args)),
                                   lambda args: cli_identification.excite(args, _load(args)))
    return p


def main(argv=None):
    args = _parser().parse_args(argv)
    try:
        return args.run(args)
    except (URDFError, ValueError, KeyError, OSError) as exc:
        msg = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        print(f"{PROG}: error: {msg}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
