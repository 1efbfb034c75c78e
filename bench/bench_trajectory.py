"""Benchmark the torque-limited time-optimal parameterization against toppra + Pinocchio, in the same run.

    OPENBLAS_NUM_THREADS=1 python bench/bench_trajectory.py      (after source install/setup.bash)

1. rd.time_parameterize (TOPP-RA: three batched RNEA calls, compiled backward and forward passes)
   against the PyPI toppra 0.6 (TOPPRA with the seidel solver, JointTorqueConstraint with Pinocchio's
   RNEA as its inverse dynamics and JointVelocityConstraint, collocation as ours) on the same 7-DOF
   panda path (arm only: finger joints fixed) through 5 waypoints, sampled at the same 100, 400 and
   1000 gridpoints, the URDF's effort and velocity limits and at 60 % of the effort limits (torque-bound
   on much of the path). Each side is timed from the path samples to the timed profile (toppra: the
   constraints, the instance and compute_parameterization; ours: the call); the durations found are
   printed beside (relative difference). Apart, at 1000 gridpoints: its RNEA batch on one thread (the
   default) and on two.
2. sample_trajectory at one time (what the node pays per joint_states message): the checked function
   on the arrays, and a Trajectory checked once and sampled (its compiled call), on the time-optimal
   trajectory's points (quintic segments) of 100 and 1000 points.

Within each repeat the calls are timed in turn; figures are medians over repeats, ratios the median of
the per-repeat ratios, so that the slow spells of this shared 2-core VM hit both sides.
"""
import os

os.environ["OPENBLAS_NUM_THREADS"] = "1"  # before numpy: OpenBLAS threads fight numba's

import logging
import re
import sysconfig
import tempfile
import time

import numpy as np
import pinocchio as pin
import toppra
import toppra.algorithm
import toppra.constraint as tc

from robot_dynamics import dynamics as rd
from robot_dynamics import load_urdf
from robot_dynamics.trajectory import Trajectory
from timing import medians

logging.getLogger("toppra").setLevel(logging.ERROR)
ROBOTS = os.path.join(sysconfig.get_paths()["purelib"], "cmeel.prefix/share/example-robot-data/robots")
PANDA = f"{ROBOTS}/panda_description/urdf/panda.urdf"
WAYPOINTS = [[0.0, -0.6, 0.0, -2.2, 0.0, 1.6, 0.8], [0.8, 0.2, -0.5, -1.6, 0.6, 2.2, 0.0],
             [1.6, 0.6, 0.4, -0.9, -0.4, 2.8, -1.2], [0.6, -0.3, 1.1, -2.0, 1.2, 1.2, 0.4],
             [-0.8, 0.4, 0.2, -1.2, -1.0, 2.0, 1.8]]
GRIDPOINTS = (100, 400, 1000)
REPEATS = 31


class SampledPath(toppra.interpolator.AbstractGeometricPath):
    """The path as toppra sees it: our samples at our gridpoints."""

    def __init__(self, s, q, dq, ddq):
        self.s, self.samples = s, (q, dq, ddq)

    def __call__(self, path_positions, order=0):
        return self.samples[order][np.searchsorted(self.s, path_positions)]

    @property
    def dof(self):
        return self.samples[0].shape[1]

    @property
    def path_interval(self):
        return np.array([self.s[0], self.s[-1]])

    @property
    def waypoints(self):
        return None


def panda_arm():
    text = re.sub(r'(<joint name="panda_finger_joint\d" type=)"prismatic"', r'\1"fixed"', open(PANDA).read())
    text = text.replace('<mimic joint="panda_finger_joint1"/>', "")
    path = os.path.join(tempfile.mkdtemp(), "panda_arm.urdf")
    with open(path, "w") as f:
        f.write(text)
    return path


def toppra_duration(pmodel, data, s, q, dq, ddq, effort, vmax):
    inv_dyn = lambda q_, v_, a_: pin.rnea(pmodel, data, q_, v_, a_)  # noqa: E731
    constraints = [tc.JointTorqueConstraint(inv_dyn, np.stack((-effort, effort), 1), np.zeros(len(effort)),
                                            discretization_scheme=tc.DiscretizationType.Collocation),
                   tc.JointVelocityConstraint(np.stack((-vmax, vmax), 1))]
    algorithm = toppra.algorithm.TOPPRA(constraints, SampledPath(s, q, dq, ddq), gridpoints=s, solver_wrapper="seidel")
    _, sd, _ = algorithm.compute_parameterization(0.0, 0.0)
    return float(np.sum(2.0 * np.diff(s) / (sd[1:] + sd[:-1])))


def bench_time_parameterize(model, pmodel, data, rows):
    print("## time_parameterize vs toppra 0.6 + Pinocchio RNEA, panda arm (7 dof), 5 waypoints (ms, median)")
    for scale in (1.0, 0.6):
        effort, vmax = scale * model.effort_limits, model.velocity_limits
        for n in GRIDPOINTS:
            s, q, dq, ddq = rd.path_through_waypoints(WAYPOINTS, n)
            ours = rd.time_parameterize(model, s, q, dq, ddq, effort_limits=effort).duration
            theirs = toppra_duration(pmodel, data, s, q, dq, ddq, effort, vmax)
            (t1, tt), (x1, _) = medians(
                [lambda: rd.time_parameterize(model, s, q, dq, ddq, effort_limits=effort),
                 lambda: toppra_duration(pmodel, data, s, q, dq, ddq, effort, vmax)], REPEATS)
            print(f"effort x{scale:.1f}  {n:5d} gridpoints   ours {1e3 * t1:7.3f}   toppra {1e3 * tt:7.3f}   "
                  f"toppra / ours x{x1:5.1f}   duration ours {ours:.6f} s, toppra {theirs:.6f} s ({ours / theirs - 1:+.1e})")
            rows.append((scale, n, 1e3 * t1, 1e3 * tt, x1, ours, theirs))


def bench_threads(model, rows):
    """The RNEA batch on two threads (not the default), timed apart: its stalls on a busy VM
    would otherwise fall into the other measurements."""
    s, q, dq, ddq = rd.path_through_waypoints(WAYPOINTS, 1000)
    (t1, t2), (x1, x2) = medians([lambda: rd.time_parameterize(model, s, q, dq, ddq),
                                    lambda: rd.time_parameterize(model, s, q, dq, ddq, threads=2)], REPEATS)
    print(f"\n## threads, 1000 gridpoints: one {1e3 * t1:.3f} ms, two {1e3 * t2:.3f} ms (one / two: x{1 / x1:.2f})")
    rows.append((1e3 * t1, 1e3 * t2))


def bench_sampling(model, rows):
    print("\n## sample_trajectory at one time (µs, median): the node's cost per joint_states message")
    for n in (100, 1000):
        tp = rd.time_parameterize(model, *rd.path_through_waypoints(WAYPOINTS, n))
        trajectory = Trajectory(tp.t, tp.q, tp.v, tp.a)
        t = 0.37 * tp.duration
        (checked, compiled, empty), _ = medians(
            [lambda: rd.sample_trajectory(tp.t, tp.q, tp.v, tp.a, t=t), lambda: trajectory.sample(t),
             lambda: (np.empty(7), np.empty(7), np.empty(7))], REPEATS, 2000)
        print(f"{n:5d} points (quintic)   sample_trajectory {1e6 * checked:6.2f}   Trajectory.sample "
              f"{1e6 * compiled:6.2f}   (three np.empty(7): {1e6 * empty:5.2f})")
        rows.append((n, 1e6 * checked, 1e6 * compiled))


def main():
    path = panda_arm()
    model = load_urdf(path)
    pmodel = pin.buildModelFromUrdf(path)
    data = pmodel.createData()
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    timing, sampling = [], []
    bench_time_parameterize(model, pmodel, data, timing)
    bench_sampling(model, sampling)
    threads = []
    bench_threads(model, threads)
    print(f"\n## Summary (run of {started}; toppra / ours: median of per-repeat ratios)\n")
    print("| effort limits | gridpoints | ours [ms] | toppra + Pinocchio [ms] | toppra / ours | duration: ours vs toppra |")
    print("|---|---:|---:|---:|---:|---:|")
    for scale, n, t1, tt, x1, ours, theirs in timing:
        print(f"| {'URDF' if scale == 1 else f'{scale:.0%} of URDF'} | {n} | {t1:.3f} | {tt:.2f} | {x1:.1f}x | "
              f"{ours / theirs - 1:+.1e} |")
    print("\n| trajectory points | sample_trajectory, one t [µs] | Trajectory.sample, one t [µs] |")
    print("|---:|---:|---:|")
    for n, checked, compiled in sampling:
        print(f"| {n} | {checked:.2f} | {compiled:.2f} |")
    print(f"\ntime_parameterize at 1000 gridpoints: one thread {threads[0][0]:.3f} ms, two {threads[0][1]:.3f} ms")


if __name__ == "__main__":
    main()
