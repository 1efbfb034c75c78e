"""Benchmark inverse kinematics and the simulator against what a user would write with Pinocchio.

    OPENBLAS_NUM_THREADS=1 python bench/bench_kinematics.py      (after source install/setup.bash)

1. rd.inverse_kinematics on panda (panda_hand, full pose, tolerance 1e-10, no restarts) against
   Pinocchio + a NumPy damped-least-squares loop, the user's alternative (Pinocchio's own IK example
   with a full Newton step: framesForwardKinematics, log6, computeFrameJacobian(LOCAL), Jlog6,
   (J J^T + lambda 1)^-1, integrate, clip to the limits), on the same targets and seeds: seeds 0.1 rad
   from a solution (the usual call: the current joint state as seed) and uniform random starts.
   Figures: iterations (placement-and-Jacobian evaluations) per second, and time per solved target;
   ours one call per target, and a batch of the targets on 1 and 2 threads.
2. rd.simulate, RK4, steps per second: panda (fixed base) and talos with a free flyer, one trajectory of
   1000 steps, against a Python RK4 loop over pin.aba and pin.integrate; and Kajita's spinning top on
   its floor (a callable wrench: the stepped path, a library call per stage).

Within each repeat ours and Pinocchio's run in turn; figures are medians over repeats, ratios the
medians of the per-repeat ratios (the shared 2-core VM's slow spells hit both sides).
"""
import os

os.environ["OPENBLAS_NUM_THREADS"] = "1"  # before numpy: OpenBLAS threads fight numba's

import logging
import sysconfig

import numpy as np
import pinocchio as pin

from robot_dynamics import dynamics as rd
from robot_dynamics import load_urdf
from robot_dynamics.demo import kajita
from timing import medians

ROBOTS = os.path.join(sysconfig.get_paths()["purelib"], "cmeel.prefix/share/example-robot-data/robots")
PANDA = f"{ROBOTS}/panda_description/urdf/panda.urdf"
TALOS = f"{ROBOTS}/talos_data/robots/talos_reduced.urdf"
FRAME = "panda_hand"
TARGETS = 200
REPEATS = 7


class PinocchioIK:
    """The user's alternative: Pinocchio's kinematics and a NumPy damped-least-squares Newton loop."""

    def __init__(self, model):
        self.pm = pin.buildModelFromUrdf(PANDA)          # the fingers independent (9 coordinates)
        self.data = self.pm.createData()
        self.fid = self.pm.getFrameId(FRAME)
        self.lo, self.hi = self.pm.lowerPositionLimit, self.pm.upperPositionLimit
        self.iterations = 0

    def q(self, ours):
        return np.concatenate((ours, ours[-1:]))       # finger_joint2 mimics finger_joint1

    def solve(self, T, q0, tol=1e-10, max_iterations=100, damping=1e-12):
        pm, data, goal = self.pm, self.data, pin.SE3(T)
        q = self.q(q0)
        for it in range(1, max_iterations + 1):
            pin.framesForwardKinematics(pm, data, q)
            iMd = data.oMf[self.fid].actInv(goal)
            err = pin.log6(iMd).vector
            if np.linalg.norm(err) <= tol:
                break
            J = -pin.Jlog6(iMd.inverse()) @ pin.computeFrameJacobian(pm, data, q, self.fid, pin.LOCAL)
            v = -J.T @ np.linalg.solve(J @ J.T + damping * np.eye(6), err)
            q = np.clip(pin.integrate(pm, q, v), self.lo, self.hi)
        self.iterations += it
        return np.linalg.norm(err) <= tol


def bench_ik():
    model = load_urdf(PANDA)
    rng = np.random.default_rng(0)
    Q = rd.random_configuration(model, rng, TARGETS)
    T = rd.frame_placement(model, Q, FRAME)
    theirs = PinocchioIK(model)
    print(f"## inverse kinematics, panda {FRAME}, {TARGETS} targets, tolerance 1e-10, max 100 iterations")
    rows = []
    for seeds_name, seeds in (("start 0.1 rad from the answer", Q + rng.normal(scale=0.1, size=Q.shape)),
                              ("random start", rd.random_configuration(model, rng, TARGETS))):
        seeds = np.clip(seeds, model.lower_limits, model.upper_limits)
        ours_single = rd.inverse_kinematics(model, FRAME, T, seeds, restarts=0, threads=1)
        it_ours = int(ours_single.iterations.sum())
        theirs.iterations = 0
        solved = sum(theirs.solve(T[k], seeds[k]) for k in range(TARGETS))
        it_theirs = theirs.iterations
        (t1, tb1, tb2, tp), ratio = medians([
            lambda: [rd.inverse_kinematics(model, FRAME, T[k], seeds[k], restarts=0) for k in range(TARGETS)],
            lambda: rd.inverse_kinematics(model, FRAME, T, seeds, restarts=0, threads=1),
            lambda: rd.inverse_kinematics(model, FRAME, T, seeds, restarts=0, threads=2),
            lambda: [theirs.solve(T[k], seeds[k]) for k in range(TARGETS)]], REPEATS, warmup=1)
        print(f"{seeds_name}: converged ours {ours_single.converged.sum()}/{TARGETS} ({it_ours} iterations), "
              f"Pinocchio + NumPy DLS {solved}/{TARGETS} ({it_theirs} iterations)")
        for label, t, r in (("ours, a call per target", t1, ratio[0]), ("ours, one batch, 1 thread", tb1, ratio[1]),
                            ("ours, one batch, 2 threads", tb2, ratio[2]), ("Pinocchio + NumPy DLS loop", tp, 1.0)):
            its = it_theirs if label.startswith("Pinocchio") else it_ours
            per_it = t / its * 1e6
            speed_up = (tp / it_theirs) / (t / its)
            print(f"  {label:28s} {its / t:11.0f} iterations/s ({per_it:6.2f} us each, x{speed_up:6.1f})  "
                  f"{t / TARGETS * 1e6:8.1f} us per target (x{r:6.1f})")
            rows.append((seeds_name, label, its / t, speed_up, t / TARGETS * 1e6, r))
    return rows


def pin_rk4(pm, data, q, v, dt, steps):
    """A user's RK4 over pin.aba and pin.integrate (stage configurations q (+) c v_stage)."""
    tau = np.zeros(pm.nv)
    for _ in range(steps):
        a1 = pin.aba(pm, data, q, v, tau)
        v2 = v + 0.5 * dt * a1
        a2 = pin.aba(pm, data, pin.integrate(pm, q, 0.5 * dt * v), v2, tau)
        v3 = v + 0.5 * dt * a2
        a3 = pin.aba(pm, data, pin.integrate(pm, q, 0.5 * dt * v2), v3, tau)
        v4 = v + dt * a3
        a4 = pin.aba(pm, data, pin.integrate(pm, q, dt * v3), v4, tau)
        q = pin.integrate(pm, q, dt / 6 * (v + 2 * v2 + 2 * v3 + v4))
        v = v + dt / 6 * (a1 + 2 * a2 + 2 * a3 + a4)
    return q, v


def bench_simulate():
    print("\n## simulate, RK4, dt = 1 ms, 1000 steps, zero torque (steps per second)")
    rows = []
    for name, urdf, floating in (("panda", PANDA, False), ("talos + free flyer", TALOS, True)):
        model = load_urdf(urdf, floating_base=floating)
        pm = pin.buildModelFromUrdf(urdf, pin.JointModelFreeFlyer()) if floating else pin.buildModelFromUrdf(urdf)
        data = pm.createData()
        q0 = rd.neutral(model)
        v0 = np.random.default_rng(1).normal(scale=0.1, size=model.nv)
        pq, pv = (np.concatenate((q0, q0[-1:])), np.concatenate((v0, v0[-1:]))) if model.has_mimic else (q0, v0)
        (ours, theirs), ratio = medians([lambda: rd.simulate(model, q0, v0, 1e-3, 1000),
                                     lambda: pin_rk4(pm, data, pq, pv, 1e-3, 1000)], 5, warmup=1)
        print(f"{name:20s} ours {1000 / ours:9.0f} steps/s  Pinocchio RK4 loop {1000 / theirs:8.0f} steps/s  "
              f"(x{ratio[0]:5.1f})")
        rows.append((name, 1000 / ours, 1000 / theirs, ratio[0]))
    model, q0, v0 = kajita.top_model()
    floor = kajita.floor(model)
    (top,), _ = medians([lambda: rd.simulate(model, q0, v0, 0.002, 200, external_wrenches=floor)], 3, warmup=1)
    print(f"Kajita's top on its floor (a callable: the stepped path) {200 / top:7.0f} steps/s")
    rows.append(("Kajita's top, floor callable", 200 / top, None, None))
    return rows


def markdown(ik, sim):
    lines = ["| IK, panda | ours / Pinocchio + NumPy | iterations/s | x (per iteration) | µs per target | x (per target) |",
             "|---|---|---:|---:|---:|---:|"]
    lines += [f"| {s} | {label} | {its:.0f} | {x:.1f} | {us:.1f} | {r:.1f} |" for s, label, its, x, us, r in ik]
    lines += ["", "| simulate, RK4, 1000 steps | ours steps/s | Pinocchio RK4 loop steps/s | x |", "|---|---:|---:|---:|"]
    lines += [f"| {n} | {a:.0f} | {'–' if b is None else f'{b:.0f}'} | {'–' if r is None else f'{r:.1f}'} |"
              for n, a, b, r in sim]
    return "\n".join(lines)


def main():
    logging.getLogger("robot_dynamics").setLevel(logging.ERROR)
    print(f"numpy {np.__version__}, pinocchio {pin.__version__}, {os.cpu_count()} cores; x = speed-up over Pinocchio")
    ik, sim = bench_ik(), bench_simulate()
    print("\n" + markdown(ik, sim))


if __name__ == "__main__":
    main()
