"""Benchmark the closed-chain functions: constrained inverse dynamics against our contact inverse
dynamics, and what the node will call per joint_states message on the five-bar.

    OPENBLAS_NUM_THREADS=1 python bench/bench_constrained.py      # after source install/setup.bash

1. solo12 standing on its four point feet (12 contact rows, the base's 6 coordinates passive):
   constrained_inverse_dynamics with the 12 joints actuated (named; "min_force", the motion checked
   against the contacts; and "min_torque") against contact_inverse_dynamics (the same problem, the
   motion not checked), at rest (v = a = 0) and moving (v, a that meet the contacts): one state
   and a batch of 10000 on 1 and 2 threads. Target: within 2x of contact_inverse_dynamics.
2. The five-bar (urdf/five_bar.urdf: two motors, three passive joints, a 6d loop): its gravity
   torques constrained_inverse_dynamics(model, q, 0, 0, motors, loops=...), the node's per-message
   call, beside gravity_torques (the open tree's, what the plain node calls); assemble of the three
   passive joints warm-started from the last solution with the motors moved by 1 mrad (the node's
   other per-message call when joint_states carries only the motors); and constrained hybrid
   dynamics with the motors' accelerations given.

Within each repeat the functions are timed in turn; each figure is the median over repeats after
warm-up calls, each ratio the median of the per-repeat ratios (the shared 2-core VM's slow spells
hit both sides).
"""
import os

os.environ["OPENBLAS_NUM_THREADS"] = "1"  # before numpy: OpenBLAS threads fight numba's

import sys
import sysconfig

import numba
import numpy as np

from robot_dynamics import dynamics as rd
from robot_dynamics import load_urdf
from robot_dynamics.resources import urdf_dir
from timing import medians

ROBOTS = os.path.join(sysconfig.get_paths()["purelib"], "cmeel.prefix/share/example-robot-data/robots")
SOLO = f"{ROBOTS}/solo_description/robots/solo12.urdf"
FEET = [("FL_FOOT", "point"), ("FR_FOOT", "point"), ("HL_FOOT", "point"), ("HR_FOOT", "point")]
FIVE_BAR_LOOPS = (("end_effector", "right_distal_tip", "6d"),)
MOTORS = ("left_base_joint", "right_base_joint")
STANDING = {"FL_HAA": 0.1, "FL_HFE": 0.8, "FL_KFE": -1.6, "HL_HAA": 0.1, "HL_HFE": -0.8, "HL_KFE": 1.6,
            "FR_HAA": -0.1, "FR_HFE": 0.8, "FR_KFE": -1.6, "HR_HAA": -0.1, "HR_HFE": -0.8, "HR_KFE": 1.6}
N, REPEATS, SINGLE_LOOP = 10000, 15, 500


def moving_states(model, q, n, rng):
    """n velocities and accelerations of solo12 at q that meet the four foot contacts."""
    J = rd.constraint_jacobian(model, q, 0, FEET)[0]
    null = np.linalg.svd(J)[2][J.shape[0]:].T
    V = rng.normal(size=(n, null.shape[1])) @ null.T
    Q = np.tile(q, (n, 1))
    drift = rd.constraint_jacobian(model, Q, V, FEET)[1]
    A = -drift @ np.linalg.pinv(J).T + rng.normal(size=(n, null.shape[1])) @ null.T
    return Q, V, A


def bench_solo(rows):
    model = load_urdf(SOLO, floating_base=True)
    joints = [j.name for j in model.joints if j.kind != "floating"]
    q = rd.neutral(model)
    q[2] = 0.235                                # example-robot-data's SRDF posture "standing"
    for name, value in STANDING.items():
        q[model.joint_offset[0] + model.joint_index[name]] = value
    Q, V, A = moving_states(model, q, N, np.random.default_rng(0))
    print(f"\n## solo12 standing, 4 point feet: nv={model.nv}, 12 contact rows, 6 passive (µs per state)")
    cases = [("at rest (v = a = 0)", q, 0, 0, Q, 0, 0), ("moving (v, a meet the contacts)", Q[0], V[0], A[0], Q, V, A)]
    for label, q1, v1, a1, QN, VN, AN in cases:
        fns = [lambda: rd.constrained_inverse_dynamics(model, q1, v1, a1, joints, FEET),
               lambda: rd.constrained_inverse_dynamics(model, q1, v1, a1, joints, FEET, objective="min_torque"),
               lambda: rd.contact_inverse_dynamics(model, q1, v1, a1, FEET)]
        (t_cid, t_min_t, t_ref), (x_cid, x_min_t, _) = medians(fns, REPEATS, SINGLE_LOOP, inverse=True)
        line = [f"{label:34s} N=1     constrained ID {1e6 * t_cid:6.2f} (x{x_cid:4.2f})  min_torque "
                f"{1e6 * t_min_t:6.2f} (x{x_min_t:4.2f})  contact ID {1e6 * t_ref:6.2f}"]
        rows.append(("solo12 standing", label, "1", 1e6 * t_cid, x_cid, 1e6 * t_min_t, x_min_t, 1e6 * t_ref))
        for threads in (1, 2):
            fns = [lambda: rd.constrained_inverse_dynamics(model, QN, VN, AN, joints, FEET, threads=threads),
                   lambda: rd.constrained_inverse_dynamics(model, QN, VN, AN, joints, FEET, objective="min_torque",
                                                           threads=threads),
                   lambda: rd.contact_inverse_dynamics(model, QN, VN, AN, FEET, threads=threads)]
            (t_cid, t_min_t, t_ref), (x_cid, x_min_t, _) = medians(fns, REPEATS, inverse=True)
            t_cid, t_min_t, t_ref = (1e6 * t / N for t in (t_cid, t_min_t, t_ref))
            line.append(f"{'':34s} N={N} {threads} thr constrained ID {t_cid:6.2f} (x{x_cid:4.2f})  min_torque "
                        f"{t_min_t:6.2f} (x{x_min_t:4.2f})  contact ID {t_ref:6.2f}")
            rows.append(("solo12 standing", label, f"{N}, {threads} thr", t_cid, x_cid, t_min_t, x_min_t, t_ref))
        print("\n".join(line))


def bench_five_bar(node_rows):
    model = load_urdf(os.path.join(urdf_dir(), "five_bar.urdf"))
    motors = [model.joint_index[j] for j in MOTORS]
    q = rd.assemble(model, np.array([0.2, 0.0, 0.0, -0.1, 0.0]), FIVE_BAR_LOOPS, fixed=MOTORS)
    step = np.zeros(model.nq)
    step[motors] = 1e-3
    moved = q + step        # the motors 1 mrad on, the passive joints at the last solution
    known = np.isin(np.arange(model.nv), motors)
    z = np.zeros(model.nv)
    print(f"\n## five-bar: nv={model.nv}, a 6d loop, 2 motors, 3 passive joints (µs per call)")
    fns = [lambda: rd.constrained_inverse_dynamics(model, q, 0, 0, MOTORS, loops=FIVE_BAR_LOOPS),
           lambda: rd.assemble(model, moved, FIVE_BAR_LOOPS, fixed=MOTORS),
           lambda: rd.constrained_hybrid_dynamics(model, q, z, known, z, z, loops=FIVE_BAR_LOOPS),
           lambda: rd.gravity_torques(model, q)]
    (t_g, t_asm, t_hd, t_plain), _ = medians(fns, REPEATS, SINGLE_LOOP)
    for label, t in (("constrained gravity: constrained_inverse_dynamics(q, 0, 0, motors)", t_g),
                     ("assemble, warm start, motors moved 1 mrad", t_asm),
                     ("constrained_hybrid_dynamics, motors' qdd given", t_hd),
                     ("gravity_torques (open tree, the plain node's call)", t_plain)):
        print(f"{label:70s} {1e6 * t:6.2f}")
        node_rows.append((label, 1e6 * t))
    extra = 1e6 * (t_g + t_asm - t_plain)
    print(f"the node's per-message library calls for the five-bar (constrained gravity + assemble) add {extra:.2f} µs "
          "over gravity_torques")
    node_rows.append(("added per message over the plain node (constrained gravity + assemble - gravity_torques)", extra))


def markdown(rows, node_rows):
    lines = ["| robot | state | N | constrained ID µs/state | / contact ID | min_torque µs/state | / contact ID "
             "| contact_inverse_dynamics µs/state |", "|---|---|---|---:|---:|---:|---:|---:|"]
    for robot, label, n, t, x, tm, xm, ref in rows:
        lines.append(f"| {robot} | {label} | {n} | {t:.2f} | {x:.2f} | {tm:.2f} | {xm:.2f} | {ref:.2f} |")
    lines += ["", "| five-bar, one call | µs |", "|---|---:|"] + [f"| {label} | {t:.2f} |" for label, t in node_rows]
    return "\n".join(lines)


def main():
    print(f"numpy {np.__version__}, numba {numba.__version__}, {os.cpu_count()} cores, python {sys.version.split()[0]}")
    rows, node_rows = [], []
    bench_solo(rows)
    bench_five_bar(node_rows)
    print("\n" + markdown(rows, node_rows))
    worst = max(rows, key=lambda r: r[4])
    print(f"\ntarget, this run: constrained inverse dynamics / contact inverse dynamics on solo12 at most 2: worst "
          f"{worst[4]:.2f} ({worst[1]}, N={worst[2]}); min_torque worst {max(r[6] for r in rows):.2f}")


if __name__ == "__main__":
    main()
