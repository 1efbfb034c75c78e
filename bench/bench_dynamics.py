"""Benchmark robot_dynamics against Pinocchio on panda (fixed base) and talos (free flyer).

    PYTHONPATH=. python bench/bench_dynamics.py

Single calls first: RNEA, gravity, ABA, CRBA and a frame Jacobian for one state on a one-joint arm
(the fixed cost of a call: Python, the checks, the output, the compiled entry point), the bundled
PUMA 560, panda and talos, each call timed in turn with Pinocchio's (thread CPU time, minimum over
the repeats). Then batches (N = 100, 10000) with 1 and 2 threads, against Pinocchio looped in Python
over the batch on one thread. CRBA also into a reused output (out=): a fresh talos batch of
10000 is 115 MB of new pages, which the kernel zeroes before we write them (Pinocchio's loop
overwrites its one data.M).  Each figure is the median over several repeats, after three
warm-up calls: on this VM the first calls that return large fresh arrays ran up to 10x slower
(talos crba, 115 MB a call).  Then times the kernel start (import + first call) in fresh
processes, with numba's on-disk cache as it is (warm) and with an empty cache (cold, recompiles).
"""
import os

os.environ["OPENBLAS_NUM_THREADS"] = "1"  # before numpy: OpenBLAS threads fight numba's

import logging
import re
import statistics
import subprocess
import sys
import sysconfig
import tempfile

import numba
import numpy as np
import pinocchio as pin

from robot_dynamics import dynamics as rd
from robot_dynamics import load_urdf
from robot_dynamics.resources import bundled_urdf
from timing import alternate, goal_table, interleaved_minimum, lane_line

ROBOTS = os.path.join(sysconfig.get_paths()["purelib"], "cmeel.prefix/share/example-robot-data/robots")
CASES = [  # name, urdf, floating base, frame
    ("panda", f"{ROBOTS}/panda_description/urdf/panda.urdf", False, "panda_hand"),
    ("talos", f"{ROBOTS}/talos_data/robots/talos_reduced.urdf", True, "left_sole_link"),
]
# Pinocchio's aba refuses mimic joints and runs on panda without its mimic finger; this row times
# ours on that same model, beside our coupled (mimic) forward dynamics above
SAME_MODEL = ("panda, mimic removed", CASES[0][1], False, "panda_hand", ("aba",))
BATCHES = (100, 10000)
REPEATS = {100: 21, 10000: 11}
#: the batch targets: Pinocchio's loop / ours, one thread, a batch of 10000
GOALS = {("panda", "rnea"): 10, ("panda", "aba"): 6, ("panda", "crba"): 6, ("panda", "crba, into out="): 6,
         ("panda", "frame_jacobian"): 8, ("talos", "rnea"): 7, ("talos", "aba"): 6, ("talos", "crba"): 4,
         ("talos", "crba, into out="): 4}
SINGLE_LOOP = 1000  # calls per timed repeat for N = 1
SINGLE_REPEATS = 40
#: one revolute joint turning a point mass: a call's fixed cost (the kernels' work is a few
#: multiplications), ours against Pinocchio's through its Python bindings
ONE_JOINT = """<robot name="one_joint"><link name="base"/><link name="arm"><inertial><origin xyz="0.1 0 0"/>
<mass value="1"/><inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial></link>
<joint name="joint" type="revolute"><parent link="base"/><child link="arm"/><axis xyz="0 0 1"/>
<limit lower="-3" upper="3" effort="10" velocity="1"/></joint></robot>"""
#: the single-call table's robots: name, URDF (file or text), floating base, frame
SINGLE = [("one joint (fixed cost)", ONE_JOINT, False, "arm"), ("puma560", bundled_urdf("puma560"), False, "tool0"),
          CASES[0], CASES[1]]


def states(nq, nv, floating, n, rng):
    """n random valid states (unit quaternion for a free flyer)."""
    q = rng.uniform(-1.0, 1.0, (n, nq))
    if floating:
        quat = rng.normal(size=(n, 4))
        q[:, 3:7] = quat / np.linalg.norm(quat, axis=1, keepdims=True)
    return q, rng.normal(size=(n, nv)), rng.normal(size=(n, nv))


def pin_model(urdf, floating, mimic):
    if urdf.lstrip().startswith("<"):
        return pin.buildModelFromXML(urdf)
    return pin.buildModelFromUrdf(urdf, pin.JointModelFreeFlyer(), mimic=mimic) if floating \
        else pin.buildModelFromUrdf(urdf, mimic=mimic)


def algorithms(model, urdf, floating, frame):
    """name -> (ours(q, v, a, threads), Pinocchio's one-state call(q, v, a), extra
    coordinates of its model). Pinocchio's ABA rejects mimic joints, so on a mimic robot it
    gets the model without them: its states repeat the last (mimic finger) coordinate."""
    pmodel = pin_model(urdf, floating, model.has_mimic)
    assert (model.nq, model.nv) == (pmodel.nq, pmodel.nv), (model.nq, model.nv, pmodel.nq, pmodel.nv)
    amodel = pin_model(urdf, floating, False) if model.has_mimic else pmodel
    data, adata, fid = pin.Data(pmodel), pin.Data(amodel), pmodel.getFrameId(frame)
    buffers = {}

    def reused(shape):
        """An output array per shape, written once before (mass_matrix(out=): no fresh pages)."""
        if shape not in buffers:
            buffers[shape] = np.zeros(shape)
        return buffers[shape]
    return {
        "rnea": (lambda q, v, a, t=None: rd.inverse_dynamics(model, q, v, a, threads=t),
                 lambda q, v, a: pin.rnea(pmodel, data, q, v, a), 0),
        "gravity": (lambda q, v, a, t=None: rd.gravity_torques(model, q, threads=t),
                    lambda q, v, a: pin.computeGeneralizedGravity(pmodel, data, q), 0),
        "aba": (lambda q, v, a, t=None: rd.forward_dynamics(model, q, v, a, threads=t),
                lambda q, v, a: pin.aba(amodel, adata, q, v, a), amodel.nv - model.nv),
        "crba": (lambda q, v, a, t=None: rd.mass_matrix(model, q, threads=t),
                 lambda q, v, a: pin.crba(pmodel, data, q), 0),
        "crba, into out=": (lambda q, v, a, t=None: rd.mass_matrix(
            model, q, threads=t, out=reused(q.shape[:-1] + (model.nv, model.nv))),
            lambda q, v, a: pin.crba(pmodel, data, q), 0),
        "frame_jacobian": (lambda q, v, a, t=None: rd.frame_jacobian(model, q, frame, threads=t),
                           lambda q, v, a: pin.computeFrameJacobian(pmodel, data, q, fid, pin.LOCAL_WORLD_ALIGNED), 0),
    }


def pad(x, extra):
    """x with its last column repeated `extra` more times."""
    return np.hstack([x] + [x[:, -1:]] * extra)


def bench_robot(name, urdf, floating, frame, only=None, results=None):
    """Rows (robot, algorithm, N, ours 1 thread, ours 2 threads or None, pin), µs per state, for
    the algorithms in `only` (all by default); with `only`, the URDF's mimic tags are dropped.
    results[robot, algorithm]: the per-repeat ratios and times of the largest batch (goal_table)."""
    results = {} if results is None else results
    model = load_urdf(re.sub(r"<mimic[^>]*/>", "", open(urdf).read()) if only else urdf, floating_base=floating)
    print(f"\n## {name}: nq={model.nq} nv={model.nv} frame={frame} (µs per state, median)")
    states_ = states(model.nq, model.nv, floating, max(BATCHES), np.random.default_rng(0))
    rows = []
    for alg, (ours, theirs, extra) in algorithms(model, urdf, floating, frame).items():
        if only and alg not in only:
            continue
        if alg == "gravity":
            continue            # a single call's case (the batch is inverse dynamics with v = a = 0)
        Q, V, A = states_
        P = [pad(x, extra) for x in states_]
        for n in BATCHES:
            q, v, a = Q[:n], V[:n], A[:n]
            pq, pv, pa = (x[:n] for x in P)
            (t1, t2, ref), (r1, r2, _) = alternate(
                [lambda: ours(q, v, a, 1), lambda: ours(q, v, a, 2),
                 lambda: [theirs(pq[i], pv[i], pa[i]) for i in range(n)]], REPEATS[n])
            t1, t2, ref = (1e6 * t / n for t in (t1, t2, ref))
            x1, x2 = statistics.median(r1), statistics.median(r2)
            print(f"{alg:15s} N={n:<6d} ours 1 thr {t1:8.2f} (x{x1:5.2f})  2 thr {t2:8.2f} "
                  f"(x{x2:5.2f})  pin loop {ref:7.2f}   [x = pin/ours, median of per-repeat ratios]")
            rows.append((name, alg, n, t1, t2, ref))
            if n == max(BATCHES):
                results[name.split(",")[0] if only is None else name, alg] = (r1, r2, t1, t2)
    return rows


def single_calls(name, urdf, floating, frame, only=None):
    """Rows (robot, algorithm, ours µs, Pinocchio µs) of one state each, the two calls timed in turn
    (`interleaved_minimum`) on a plain state (the fast path): the public function as a user calls
    it, against Pinocchio's binding with its Data made before."""
    model = load_urdf(re.sub(r"<mimic[^>]*/>", "", open(urdf).read()) if only else urdf, floating_base=floating)
    q, v, a = (x[0].copy() for x in states(model.nq, model.nv, floating, 1, np.random.default_rng(0)))
    ours = {"rnea": lambda: rd.inverse_dynamics(model, q, v, a), "gravity": lambda: rd.gravity_torques(model, q),
            "aba": lambda: rd.forward_dynamics(model, q, v, a), "crba": lambda: rd.mass_matrix(model, q),
            "frame_jacobian": lambda: rd.frame_jacobian(model, q, frame)}      # as a user calls them
    rows = []
    for alg, (_, theirs, extra) in algorithms(model, urdf, floating, frame).items():
        if alg not in ours or only and alg not in only:
            continue
        pq, pv, pa = (np.append(x, [x[-1]] * extra) for x in (q, v, a))
        (us, ref), _ = interleaved_minimum([ours[alg], lambda: theirs(pq, pv, pa)], SINGLE_REPEATS, SINGLE_LOOP)
        rows.append((name, alg, 1e6 * us, 1e6 * ref))
        print(f"{name:24s} {alg:15s} ours {1e6 * us:6.2f}  pin {1e6 * ref:6.2f}  ours/pin {us / ref:5.2f}", flush=True)
    return rows


def single_markdown(rows):
    lines = ["| robot | algorithm | ours µs | Pinocchio µs | ours / Pinocchio |", "|---|---|---:|---:|---:|"]
    lines += [f"| {robot} | {alg} | {us:.3f} | {ref:.3f} | {us / ref:.2f} |" for robot, alg, us, ref in rows]
    return "\n".join(lines)


START_SCRIPT = """
import time
t0 = time.perf_counter()
import numpy as np
from robot_dynamics import dynamics as rd, load_urdf
from robot_dynamics.resources import bundled_urdf
t1 = time.perf_counter()
m = load_urdf(bundled_urdf())
z = np.zeros(m.nv)
rd.inverse_dynamics(m, np.zeros(m.nq), z, z)
t2 = time.perf_counter()
print(f"import {t1 - t0:6.2f} s  load + first inverse_dynamics {t2 - t1:6.2f} s  total {t2 - t0:6.2f} s")
"""


def kernel_start(cache_dir=None):
    """Timing line of import + first call in a fresh interpreter (or its error)."""
    env = dict(os.environ)
    if cache_dir:
        env["NUMBA_CACHE_DIR"] = cache_dir
    out = subprocess.run([sys.executable, "-c", START_SCRIPT], env=env, capture_output=True, text=True)
    return out.stdout.strip() if out.returncode == 0 else "FAILED: " + out.stderr.strip().splitlines()[-1]


def markdown(rows):
    lines = ["| robot | algorithm | N | ours µs/state (1 thread) | ours µs/state (2 threads) "
             "| Pinocchio µs/state | ratio ours (1 thread)/Pinocchio |",
             "|---|---|---:|---:|---:|---:|---:|"]
    for robot, alg, n, t1, t2, ref in rows:
        two = "–" if t2 is None else f"{t2:.2f}"
        lines.append(f"| {robot} | {alg} | {n} | {t1:.2f} | {two} | {ref:.2f} | {t1 / ref:.2f} |")
    return "\n".join(lines)


def main():
    logging.getLogger("robot_dynamics").setLevel(logging.ERROR)  # talos' zero-inertia link warnings
    print(f"numpy {np.__version__}, numba {numba.__version__} (batches on 2 threads: Python threads over the "
          f"GIL-releasing one-thread drivers), pinocchio {pin.__version__}, {os.cpu_count()} cores; Pinocchio N>1 = Python loop over the batch")
    print(lane_line())
    print(f"\n## single calls: µs per call, thread CPU time, minimum of {SINGLE_REPEATS} repeats of {SINGLE_LOOP} "
          f"calls, ours and Pinocchio's in turn; load average {os.getloadavg()[0]:.2f}")
    single = [row for case in SINGLE for row in single_calls(*case)] + single_calls(*SAME_MODEL)
    results = {}
    rows = [row for case in CASES + [SAME_MODEL] for row in bench_robot(*case, results=results)]
    print("\n## kernel start: import + first inverse_dynamics on bundled puma560 (fresh process)")
    print("warm numba cache:", kernel_start())
    with tempfile.TemporaryDirectory() as fresh:
        print("cold numba cache:", kernel_start(fresh))
    print(f"\nSingle calls (load average {os.getloadavg()[0]:.2f}; the one-joint rows are the fixed cost of a call):\n")
    print(single_markdown(single))
    print("\n" + markdown(rows))
    print(f"\nBatch goals, this run; {lane_line()}; load average {os.getloadavg()[0]:.2f}")
    print(goal_table(GOALS, results))


if __name__ == "__main__":
    main()
