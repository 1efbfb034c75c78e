"""Compile every kernel once so that numba's on-disk cache is warm (run at install).

Prints the cold time (compile or cache load) and the warm time of each public function. The
compiler is single-threaded, so the work is shared by a process per core (`--jobs`): each takes the
next family of functions not yet taken (those that share kernels, FAMILIES), and the first process
then calls everything once more, which loads what the others compiled (and compiles anything they
left). numba's cache is written by all of them at once: its save is made atomic across them
(`lock_numba_cache`).
"""
import argparse
import copy
import fcntl
import os
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

from . import dynamics as rd
from . import lie
from .resources import bundled_urdf, urdf_dir
from .urdf import load_urdf


def calls(model):
    """One call of every public function: a single state and a small batch (a batch on threads runs
    the same compiled drivers, kernels/batch.py)."""
    rng = np.random.default_rng(0)
    q = rd.neutral(model)
    v, a = rng.normal(size=model.nv), rng.normal(size=model.nv)
    frame = model.frame_names[-1]
    wrench = {frame: np.ones(6)}
    known = np.arange(model.nv) % 2 == 0
    for Q, V, A, K in ((q, v, a, known), tuple(np.tile(x, (2, 1)) for x in (q, v, a, known))):
        yield from state_calls(model, frame, wrench, Q, V, A, K, 1)
    yield "momentum observer", lambda: observe(model, q, v, frame)
    yield "simulate (callable)", lambda: rd.simulate(model, q, v, 1e-3, 1, tau=lambda t, q, v: 0 * v)
    yield "lie", lambda: lie_calls(v[:3] if len(v) >= 3 else np.ones(3))
    yield from trajectory_calls(model)


def state_calls(model, frame, wrench, Q, V, A, K, t):
    """Every public function on one state or one batch (its own scope: each call's lambdas keep
    their Q, V, A, K and t)."""
    yield "inverse_dynamics", lambda: rd.inverse_dynamics(model, Q, V, A, threads=t)
    yield "inverse_dynamics+wrench", lambda: rd.inverse_dynamics(model, Q, V, A, wrench, threads=t)
    yield "gravity_torques", lambda: rd.gravity_torques(model, Q, threads=t)
    yield "mass_matrix", lambda: rd.mass_matrix(model, Q, threads=t)
    yield "coriolis_matrix", lambda: rd.coriolis_matrix(model, Q, V, threads=t)
    yield "forward_dynamics", lambda: rd.forward_dynamics(model, Q, V, A, threads=t)
    yield "hybrid_dynamics", lambda: rd.hybrid_dynamics(model, Q, V, K, A, A, threads=t)
    yield "frame_jacobian", lambda: rd.frame_jacobian(model, Q, frame, threads=t)
    yield "frame_placement", lambda: rd.frame_placement(model, Q, frame, threads=t)
    yield "wrench_to_joint_torques", lambda: rd.wrench_to_joint_torques(model, Q, frame, np.ones(Q.shape[:-1] + (6,)), threads=t)
    yield "joint_torque_regressor", lambda: rd.joint_torque_regressor(model, Q, V, A, threads=t)
    yield "generalized_momentum", lambda: rd.generalized_momentum(model, Q, V)
    yield "inverse_dynamics_derivatives", lambda: rd.inverse_dynamics_derivatives(model, Q, V, A, threads=t)
    yield "forward_dynamics_derivatives", lambda: rd.forward_dynamics_derivatives(model, Q, V, A, threads=t)
    yield "constrained_forward_dynamics", lambda: rd.constrained_forward_dynamics(
        model, Q, V, A, [(frame, "point")], threads=t)
    yield "constraint_jacobian", lambda: rd.constraint_jacobian(model, Q, V, [(frame, "point")])
    yield "contact_inverse_dynamics", lambda: rd.contact_inverse_dynamics(model, Q, 0, 0, [(frame, "6d")], threads=t)
    yield "inverse_kinematics", lambda: rd.inverse_kinematics(model, frame, rd.frame_placement(model, Q, frame), Q,
                                                              restarts=0, threads=t)
    yield "simulate", lambda: rd.simulate(model, Q, V, 1e-3, 2, threads=t)
    yield "center_of_mass", lambda: rd.center_of_mass(model, Q, threads=t)
    yield "center_of_mass_jacobian", lambda: rd.center_of_mass_jacobian(model, Q, threads=t)
    yield "centroidal_momentum_matrix", lambda: rd.centroidal_momentum_matrix(model, Q, threads=t)
    yield "centroidal_state", lambda: rd.centroidal_state(model, Q, V, threads=t)
    yield "potential_energy", lambda: rd.potential_energy(model, Q, threads=t)
    yield "frame_velocity", lambda: rd.frame_velocity(model, Q, V, frame, threads=t)
    yield "frame_acceleration", lambda: rd.frame_acceleration(model, Q, V, A, frame, threads=t)


def trajectory_calls(model):
    """The trajectory kernels: sampling one time and a batch (each interpolation), and TOPP-RA on a
    path through three waypoints (a copy of the model without gravity and with finite limits, so
    that any robot's path can be timed; skipped for floating and planar joints)."""
    n = model.nv
    times, P = np.array([0.0, 0.5, 1.0]), np.linspace(0.0, 0.3, 3)[:, None] * np.ones(n)
    for fields in ((), (P,), (P, P)):
        yield f"sample_trajectory/{len(fields)}", lambda fields=fields: rd.sample_trajectory(times, P, *fields, t=0.3)
        yield f"Trajectory.sample batch/{len(fields)}", lambda fields=fields: rd.Trajectory(times, P, *fields).sample(times)
    if model.joint_offset == (0, 0):
        light = copy.deepcopy(model)
        light.gravity = [0.0, 0.0, 0.0]
        waypoints = rd.neutral(model) + np.linspace(0.0, 0.3, 3)[:, None] * np.linspace(1.0, -1.0, n)
        path = rd.path_through_waypoints(waypoints, 80)
        yield "time_parameterize", lambda: rd.time_parameterize(light, *path, velocity_limits=2.0,
                                                                acceleration_limits=20.0, effort_limits=1e6)


#: the bundled five-bar parallel robot (urdf/five_bar.urdf): its loop and motors
FIVE_BAR_LOOPS = (("end_effector", "right_distal_tip", "6d"),)
FIVE_BAR_MOTORS = ("left_base_joint", "right_base_joint")


def closed_chain_calls(five_bar):
    """The closed-chain functions on the five-bar (numba compiles per argument types, not per
    robot): a single state and a small batch, as `calls`."""
    q = rd.neutral(five_bar)
    known = np.zeros(five_bar.nv, bool)
    for Q, K in ((q, known), (np.tile(q, (2, 1)), np.tile(known, (2, 1)))):
        yield from loop_calls(five_bar, Q, K, 1)


def loop_calls(five_bar, Q, K, t):
    """The closed-chain functions on one state or one batch (its own scope, as `state_calls`)."""
    Z = np.zeros(Q.shape[:-1] + (five_bar.nv,))
    yield "constrained_inverse_dynamics", lambda: rd.constrained_inverse_dynamics(
        five_bar, Q, 0, 0, FIVE_BAR_MOTORS, loops=FIVE_BAR_LOOPS, threads=t)
    yield "constrained_hybrid_dynamics", lambda: rd.constrained_hybrid_dynamics(
        five_bar, Q, Z, K, Z, Z, loops=FIVE_BAR_LOOPS, threads=t)
    yield "assemble", lambda: rd.assemble(five_bar, Q, FIVE_BAR_LOOPS, fixed=FIVE_BAR_MOTORS, threads=t)


def five_bar_urdf(beside):
    """five_bar.urdf beside the given URDF (an install passes its own copy), else the bundled one."""
    path = os.path.join(os.path.dirname(beside), "five_bar.urdf")
    return path if os.path.exists(path) else os.path.join(urdf_dir(), "five_bar.urdf")


def lie_calls(w):
    """The compiled group operations behind robot_dynamics.lie."""
    xi = np.concatenate((w, w))
    T = lie.exp6(xi)
    lie.log6(T), lie.Jexp6(xi), lie.Jlog6(T), lie.Jexp3(w), lie.Jlog3(lie.exp3(w)), lie.quaternion_exp(w)


def observe(model, q, v, frame):
    """The observer's compiled update and wrench estimate (the node runs them per message), and the
    observer over a recording (identification)."""
    observer = rd.MomentumObserver(model, 50.0)
    observer.reset(q, v, np.zeros(model.nv))
    observer.update(q, v, np.zeros(model.nv), 1e-3)
    observer.wrench(frame)
    rd.external_torques(model, np.tile(q, (2, 1)), np.tile(v, (2, 1)), np.zeros((2, model.nv)), 1e-3, 50.0)


#: public functions that share their kernels with an earlier one: compiled in the same process
FAMILIES = {"inverse_dynamics+wrench": "inverse_dynamics", "gravity_torques": "inverse_dynamics",
            "time_parameterize": "inverse_dynamics", "hybrid_dynamics": "forward_dynamics",
            "frame_placement": "frame_jacobian", "wrench_to_joint_torques": "frame_jacobian",
            "forward_dynamics_derivatives": "inverse_dynamics_derivatives",
            "contact_inverse_dynamics": "constrained_forward_dynamics",
            "center_of_mass_jacobian": "center_of_mass", "centroidal_momentum_matrix": "center_of_mass",
            "centroidal_state": "center_of_mass", "potential_energy": "center_of_mass",
            "frame_acceleration": "frame_velocity"}


def families(named_calls):
    """The calls grouped by FAMILIES (each family's in their order), families in order of first call."""
    groups = {}
    for name, call in named_calls:
        groups.setdefault(FAMILIES.get(name, name), []).append((name, call))
    return list(groups.values())


def timed(name, call, quiet):
    """Call twice: the first compiles (or loads from the cache), the second shows the warm time."""
    t0 = time.perf_counter()
    call()
    cold = time.perf_counter() - t0
    t0 = time.perf_counter()
    call()
    if not quiet:
        print(f"  {name:26s} first call {cold * 1e3:9.1f} ms   next {1e6 * (time.perf_counter() - t0):8.1f} us",
              flush=True)


def compile_families(groups, claims, quiet):
    """Each family not yet taken by another process (a file per family created in `claims`: the
    first to create it takes it)."""
    for k, group in enumerate(groups):
        try:
            os.close(os.open(os.path.join(claims, f"family-{k}"), os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        except FileExistsError:
            continue
        for name, call in group:
            timed(name, call, quiet)


def lock_numba_cache(folder):
    """Make numba's cache saves atomic across the processes that compile at once. A save reads the
    function's index, picks a data file name that is not in it, writes the data and then the index:
    two processes saving overloads of one function (a helper every kernel calls) at the same moment
    could pick the same name, and the index then point at the other overload's machine code. An
    exclusive lock on a file in `folder` around each save prevents it. False (nothing changed) if
    this numba has no such save."""
    from numba.core import caching
    save = getattr(getattr(caching, "IndexDataCacheFile", None), "save", None)
    if save is None:
        return False
    path = os.path.join(folder, "save.lock")

    def locked_save(self, key, data):
        with open(path, "a") as fh:
            fcntl.flock(fh, fcntl.LOCK_EX)      # released when the file closes
            return save(self, key, data)
    caching.IndexDataCacheFile.save = locked_save
    return True


def default_jobs():
    """A process per core this one may use, at most 4 (each compile peaks at ~1.5 GB)."""
    return max(1, min(4, len(os.sched_getaffinity(0))))


def main(argv=None):
    """python -m robot_dynamics.warm [--quiet] [--urdf PATH] [--jobs N]: every kernel compiled (or
    loaded from the cache), on the bundled PUMA 560 or the URDF at PATH (an install passes its own
    copy), by N processes (default: a process per core, at most 4)."""
    parser = argparse.ArgumentParser(prog="python -m robot_dynamics.warm", description=__doc__.split("\n")[0])
    parser.add_argument("--quiet", action="store_true", help="print only the total time")
    parser.add_argument("--urdf", default=None, help="the robot to compile with (default: the bundled PUMA 560)")
    parser.add_argument("--jobs", type=int, default=None, help="processes compiling at once (default: a process "
                        "per core, at most 4)")
    parser.add_argument("--claims", default=None, help=argparse.SUPPRESS)   # a helper process: the shared folder
    args = parser.parse_args(argv)
    if args.jobs is not None and args.jobs < 1:
        parser.error(f"--jobs must be at least 1, got {args.jobs}")
    quiet = args.quiet
    urdf = args.urdf or bundled_urdf()
    model, five_bar = load_urdf(urdf), load_urdf(five_bar_urdf(urdf))
    named_calls = [*calls(model), *closed_chain_calls(five_bar)]
    if args.claims:                     # a helper started by main below
        if lock_numba_cache(args.claims):
            compile_families(families(named_calls), args.claims, quiet)
        return
    jobs = default_jobs() if args.jobs is None else args.jobs
    total = time.perf_counter()
    claims = tempfile.mkdtemp(prefix="robot_dynamics-warm-")
    try:
        if jobs > 1 and lock_numba_cache(claims):
            helper = [sys.executable, "-m", "robot_dynamics.warm", "--claims", claims, *(["--quiet"] if quiet else []),
                      *(["--urdf", args.urdf] if args.urdf else [])]
            helpers = [subprocess.Popen(helper) for _ in range(jobs - 1)]
            try:
                compile_families(families(named_calls), claims, quiet)
            finally:
                failed = [code for code in (p.wait() for p in helpers) if code]
            if failed:
                print(f"robot_dynamics.warm: {len(failed)} helper process(es) failed (exit {failed}); "
                      "what they left is compiled below")
            if not quiet:
                print("  every function once more (loads what the other processes compiled):")
        for name, call in named_calls:
            timed(name, call, quiet)
    finally:
        shutil.rmtree(claims, ignore_errors=True)
    print(f"kernels ready in {time.perf_counter() - total:.1f} s ({jobs} process{'es' if jobs > 1 else ''})")


if __name__ == "__main__":
    main()
