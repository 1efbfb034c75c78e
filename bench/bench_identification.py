"""Benchmark the inertial-parameter regressor and the momentum observer against Pinocchio.

    PYTHONPATH=. python bench/bench_identification.py

1. The joint torque regressor Y(q, v, a) for one state (N = 1) and for batches (N = 100, 10000)
   on 1 and 2 threads, against Pinocchio's computeJointTorqueRegressor called once or looped in
   Python over the batch on one thread; panda (ours with its mimic finger; Pinocchio's regressor
   refuses mimic joints, so it runs on the URDF without the mimic tag, one coordinate more),
   panda without the mimic tag on both sides, and talos_reduced on a free flyer.
2. What the momentum observer needs per sample, p = M v and beta = g - C^T v: our one-pass
   kernel (`generalized_momentum`) against the matrices route, Pinocchio's (crba,
   computeCoriolisMatrix, computeGeneralizedGravity, then M v and g - C^T v in NumPy) and ours.
3. One observer sample (`MomentumObserver.update`), the wrench estimate at a frame, and for scale
   one inverse dynamics call; the observer over a recorded trajectory (`external_torques`).
4. Payload identification and base parameters, once each (seconds; nothing to compare with).
5. Whole-robot identification (identify_dynamics, physically consistent) of panda's arm from 60 s
   of 1 kHz samples against a plain least squares on Pinocchio's regressor loop and FIGAROH's.

Batches also run into a reused output (`out=`): fresh memory is slow and erratic on this VM
(talos' 10000 regressors are 1 GB).

Each figure is the median over several repeats after three warm-up calls (the numba cache is
warmed first by those calls). Ours and Pinocchio's are timed alternately, repeat by repeat, and
each ratio is the median of the per-repeat ratios: the machine is shared (2 cores), and load
that comes and goes then weighs on both sides alike. Beside the batches, the time to fill an
output array of the same shape (np.empty + one store per entry, compiled) shows how much of a
large batch is only writing its result to memory.
"""
import os

os.environ["OPENBLAS_NUM_THREADS"] = "1"  # before numpy: OpenBLAS threads fight numba's

import logging
import re
import statistics
import sys
import sysconfig
import time

import numba
import numpy as np
import pinocchio as pin

from robot_dynamics import dynamics as rd
from robot_dynamics import load_urdf
from robot_dynamics.resources import bundled_urdf
from timing import lane_line, median_time, medians

ROBOTS = os.path.join(sysconfig.get_paths()["purelib"], "cmeel.prefix/share/example-robot-data/robots")
PANDA = f"{ROBOTS}/panda_description/urdf/panda.urdf"
TALOS = f"{ROBOTS}/talos_data/robots/talos_reduced.urdf"
CASES = [  # name, urdf, floating base, drop the mimic tags, frame
    ("puma560", bundled_urdf("puma560"), False, False, "tool0"),
    ("panda", PANDA, False, False, "panda_hand"),
    ("panda, mimic removed", PANDA, False, True, "panda_hand"),
    ("talos", TALOS, True, False, "gripper_left_base_link"),
]
BATCHES = (100, 10000)
REPEATS = {1: 9, 100: 21, 10000: 5}
SINGLE_LOOP = 1000


@numba.njit(cache=False)
def _fill(Y):
    for s in range(Y.shape[0]):
        for r in range(Y.shape[1]):
            for k in range(Y.shape[2]):
                Y[s, r, k] = 0.0


def output_floor(shape):
    """Seconds to make and fill a fresh array of this shape (the least a batch returning it costs)."""
    def fill():
        _fill(np.empty(shape))
    return median_time(fill, 3)


def states(model, n, rng):
    q = np.atleast_2d(rd.random_configuration(model, rng, n))
    return q, rng.normal(size=(n, model.nv)), rng.normal(size=(n, model.nv))


def pad(x, extra):
    """x with its last column repeated `extra` more times (panda's mimic finger, for Pinocchio)."""
    return np.hstack([x] + [x[:, -1:]] * extra)


def load(urdf, floating, drop_mimic):
    text = re.sub(r"<mimic[^>]*/>", "", open(urdf).read()) if drop_mimic else urdf
    model = load_urdf(text, floating_base=floating)
    pmodel = pin.buildModelFromUrdf(urdf, pin.JointModelFreeFlyer(), mimic=False) if floating \
        else pin.buildModelFromUrdf(urdf, mimic=False)
    return model, pmodel


def bench_regressor(name, urdf, floating, drop_mimic, frame):
    model, pmodel = load(urdf, floating, drop_mimic)
    data, extra = pmodel.createData(), pmodel.nv - model.nv
    print(f"\n## regressor, {name}: nv={model.nv} bodies={model.nb} Y {model.nv}x{10 * model.nb} "
          f"(Pinocchio nv={pmodel.nv}; µs per state, median)")
    Q, V, A = states(model, max(BATCHES), np.random.default_rng(0))
    P = [pad(x, extra) for x in (Q, V, A)]
    rows = []
    (us, ref), (ratio, _) = medians(
        [lambda: rd.joint_torque_regressor(model, Q[0], V[0], A[0]),
         lambda: pin.computeJointTorqueRegressor(pmodel, data, P[0][0], P[1][0], P[2][0])], REPEATS[1], SINGLE_LOOP)
    us, ref = 1e6 * us, 1e6 * ref
    print(f"N=1      ours {us:8.2f}  pin {ref:8.2f}  ours/pin {1 / ratio:5.2f}")
    rows.append((name, "regressor", 1, us, None, ref, 1 / ratio, None, None, None))
    for n in BATCHES:
        q, v, a = Q[:n], V[:n], A[:n]
        pq, pv, pa = (x[:n] for x in P)
        out = np.empty((n, model.nv, 10 * model.nb))
        (t1, t2, t3, ref), (x1, x2, x3, _) = medians(
            [lambda: rd.joint_torque_regressor(model, q, v, a, threads=1),
             lambda: rd.joint_torque_regressor(model, q, v, a, threads=2),
             lambda: rd.joint_torque_regressor(model, q, v, a, threads=1, out=out),
             lambda: [pin.computeJointTorqueRegressor(pmodel, data, pq[i], pv[i], pa[i]) for i in range(n)]],
            REPEATS[n])
        t1, t2, t3, ref = (1e6 * t / n for t in (t1, t2, t3, ref))
        floor = 1e6 * output_floor((n, model.nv, 10 * model.nb)) / n
        print(f"N={n:<6d} ours 1 thr {t1:8.2f} (x{x1:5.2f})  2 thr {t2:8.2f} (x{x2:5.2f})  1 thr into out= "
              f"{t3:8.2f} (x{x3:5.2f})  pin loop {ref:8.2f}   [x = pin/ours speed-up]   making and filling a "
              f"fresh output alone {floor:6.2f}")
        rows.append((name, "regressor", n, t1, t2, ref, 1 / x1, floor, t3, 1 / x3))
    return rows


def bench_observer(name, urdf, floating, drop_mimic, frame):
    model, pmodel = load(urdf, floating, drop_mimic)
    data, extra = pmodel.createData(), pmodel.nv - model.nv
    rng = np.random.default_rng(1)
    Q, V, A = states(model, 10000, rng)
    q, v, tau = Q[0], V[0], A[0]
    pq, pv = pad(Q[:1], extra)[0], pad(V[:1], extra)[0]
    print(f"\n## momentum observer, {name} (µs per state, median)")

    def pin_terms():
        M = pin.crba(pmodel, data, pq)
        M = np.triu(M) + np.triu(M, 1).T
        C = pin.computeCoriolisMatrix(pmodel, data, pq, pv)
        return M @ pv, pin.computeGeneralizedGravity(pmodel, data, pq) - C.T @ pv

    def our_matrices():
        return rd.mass_matrix(model, q) @ v, rd.gravity_torques(model, q) - rd.coriolis_matrix(model, q, v).T @ v
    rows = []
    (ours, mats, ref), (r1, _, _) = medians(
        [lambda: rd.generalized_momentum(model, q, v), our_matrices, pin_terms], REPEATS[1], SINGLE_LOOP)
    ours, mats, ref = 1e6 * ours, 1e6 * mats, 1e6 * ref
    print(f"p, beta  ours one pass {ours:7.2f}   ours via M, C, g {mats:7.2f}   pin via M, C, g {ref:7.2f}   "
          f"ours/pin {1 / r1:5.2f}")
    rows.append((name, "p = M v, beta = g - C^T v", 1, ours, None, ref, 1 / r1, None, None, None))
    obs = rd.MomentumObserver(model, 50.0)
    obs.reset(q, v, tau)
    up = 1e6 * median_time(lambda: obs.update(q, v, tau, 1e-3), REPEATS[1], SINGLE_LOOP)
    wr = 1e6 * median_time(lambda: obs.wrench(frame), REPEATS[1], SINGLE_LOOP)
    wrd = 1e6 * median_time(lambda: obs.wrench(frame, damping=1e-3), REPEATS[1], SINGLE_LOOP)
    idy = 1e6 * median_time(lambda: rd.inverse_dynamics(model, q, v, tau), REPEATS[1], SINGLE_LOOP)
    print(f"MomentumObserver.update {up:6.2f}   wrench({frame!r}) {wr:6.2f} (damped {wrd:6.2f})   "
          f"for scale: inverse_dynamics {idy:6.2f}")
    for n in BATCHES:
        T = np.arange(n) * 1e-3
        t1 = 1e6 * median_time(lambda: rd.external_torques(model, Q[:n], V[:n], A[:n], 1e-3, 50.0, threads=1),
                               REPEATS[n]) / n
        t2 = 1e6 * median_time(lambda: rd.external_torques(model, Q[:n], V[:n], A[:n], np.diff(T), 50.0, threads=2),
                               REPEATS[n]) / n
        print(f"external_torques over N={n:<6d} 1 thr {t1:6.2f}  2 thr {t2:6.2f}  µs per sample")
    return rows, (name, up, wr, wrd, idy)


def bench_identification():
    model, _ = load(PANDA, False, False)
    rng = np.random.default_rng(2)
    print("\n## identification, panda (seconds, once; median of 5)")
    for n in (1000, 10000):
        q, v, a = states(model, n, rng)
        tau = rd.inverse_dynamics(model, q, v, a)
        t = median_time(lambda: rd.identify_payload(model, "panda_hand", q, v, a, tau), 5)
        ts = median_time(lambda: rd.identify_payload(model, "panda_hand", q, None, None, tau), 5)
        tm = median_time(lambda: rd.identify_payload_from_momentum(model, "panda_hand", q, v, tau, 1e-3), 5)
        print(f"identify_payload N={n:<6d} dynamic {t:7.4f}  static {ts:7.4f}  from momentum {tm:7.4f}")
    for name, urdf, floating in (("panda", PANDA, False), ("talos", TALOS, True)):
        m = load_urdf(urdf, floating_base=floating)
        tb = median_time(lambda: rd.base_parameters(m), 5)
        print(f"base_parameters {name}: {tb:7.3f} s ({len(rd.base_parameters(m).names)} of {10 * m.nb} parameters)")


def bench_whole_robot(seconds=60.0, rate=1000.0, repeats=3):
    """Whole-robot identification of panda's 7-DOF arm (the hand welded on, no fingers) from
    `seconds` of `rate` Hz samples along an excitation trajectory, the synthetic truth of the tests
    (robot_dynamics/test/identification_truth.py: links 20-35 % heavier, a 1.2 kg tool, friction,
    armature; 0.05 N m noise): identify_dynamics (physically consistent; and from velocities only,
    a = None) against a plain least squares on Pinocchio's computeJointTorqueRegressor looped over
    the samples in Python (with viscous, Coulomb, offset and armature columns; numpy's lstsq) and
    against FIGAROH (its regressor, zero-column elimination, pivoted-QR base parameters and least
    squares), each timed in turn within a repeat. Returns the rows of the summary."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "robot_dynamics", "test"))
    import identification_truth as truth_data
    name = "panda"
    prior, truth = truth_data.prior(name), truth_data.truth(name)
    t = np.arange(int(seconds * rate)) / rate
    q, v, a, tau = truth_data.measure(name, t, np.random.default_rng(0))
    n, nv = q.shape
    pmodel = pin.buildModelFromXML(truth_data.urdf_of_model(prior))
    pdata = pmodel.createData()

    def pinocchio_least_squares():
        Y = np.empty((n, nv, 10 * nv + 4 * nv))
        for k in range(n):
            Y[k, :, :10 * nv] = pin.computeJointTorqueRegressor(pmodel, pdata, q[k], v[k], a[k])
        Y[:, :, 10 * nv:] = 0.0
        for j in range(nv):
            Y[:, j, 10 * nv + 4 * j:10 * nv + 4 * j + 4] = np.c_[v[:, j], np.clip(v[:, j] / 0.01, -1, 1), np.ones(n),
                                                                 a[:, j]]
        return np.linalg.lstsq(Y.reshape(n * nv, -1), tau.reshape(-1), rcond=None)[0]

    runs = {"ours, feasible": lambda: rd.identify_dynamics(prior, q, v, tau, a=a),
            "ours, feasible, a = None": lambda: rd.identify_dynamics(prior, q, v, tau, t=t),
            "least squares on Pinocchio's regressor loop": pinocchio_least_squares}
    try:
        import figaroh.tools.qrdecomposition as figaroh_qr
        import figaroh.tools.regressor as figaroh_regressor
        robot = type("Robot", (), {"model": pmodel, "data": pdata})()
        config = {"has_friction": True, "has_actuator_inertia": True, "has_joint_offset": True,
                  "is_joint_torques": True, "act_idxv": list(range(nv))}

        def figaroh():
            W = figaroh_regressor.build_regressor_basic(robot, q, v, a, config)
            names = {f"p{i}": 0.0 for i in range(W.shape[1])}
            eliminated, kept = figaroh_regressor.get_index_eliminate(W, names, 1e-6)
            return figaroh_qr.QRDecomposer().decompose_with_pivoting(
                tau.T.reshape(-1), figaroh_regressor.build_regressor_reduced(W, eliminated), kept)
        runs["FIGAROH"] = figaroh
    except ImportError as exc:
        print(f"(FIGAROH not installed: {exc})")
    print(f"\n## whole-robot identification, {name} 7-DOF: {seconds:g} s of {rate:g} Hz samples ({n} x {nv}); "
          f"seconds, median of {repeats} runs taken in turn")
    times = {k: [] for k in runs}
    results = {}
    for _ in range(repeats):
        for k, fn in runs.items():
            start = time.perf_counter()
            results[k] = fn()
            times[k].append(time.perf_counter() - start)
    qh, vh, ah, tauh = truth_data.held_out(name)
    ref = statistics.median(times["least squares on Pinocchio's regressor loop"])
    rows = []
    for k in runs:
        tk = statistics.median(times[k])
        accuracy = ""
        if k.startswith("ours"):
            est = results[k]
            err = np.sqrt(np.mean((est.predict(qh, vh, ah) - tauh) ** 2))
            accuracy = f"  held-out error {err / truth_data.TORQUE_NOISE:.3f} x noise, physical: {est.physical}"
        print(f"{k:<45} {tk:8.3f} s   {tk / ref:5.2f}x the plain least squares{accuracy}")
        rows.append((k, tk, tk / ref))
    ours = statistics.median(times["ours, feasible"])
    fig = f", FIGAROH / ours {statistics.median(times['FIGAROH']) / ours:.2f}x" if "FIGAROH" in times else ""
    print(f"Goal: identify_dynamics (feasible) in at most 3x the plain least squares: {ours / ref:.2f}x "
          f"({'met' if ours <= 3 * ref else 'NOT met'}){fig}")
    return rows


def markdown(rows, observer_rows):
    lines = ["| robot | algorithm | N | ours µs/state (1 thread) | ours (2 threads) | Pinocchio µs/state "
             "| ratio ours (1 thread)/Pinocchio | ours into out= (1 thread) | its ratio | a fresh output alone |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for robot, alg, n, t1, t2, ref, ratio, floor, t3, r3 in rows:
        two, fill = ("–" if x is None else f"{x:.2f}" for x in (t2, floor))
        reuse = "– | –" if t3 is None else f"{t3:.2f} | {r3:.2f}"
        lines.append(f"| {robot} | {alg} | {n} | {t1:.2f} | {two} | {ref:.2f} | {ratio:.2f} | {reuse} | {fill} |")
    lines += ["", "| robot | MomentumObserver.update µs | wrench µs (damped) | inverse_dynamics µs |",
              "|---|---:|---:|---:|"]
    for robot, up, wr, wrd, idy in observer_rows:
        lines.append(f"| {robot} | {up:.2f} | {wr:.2f} ({wrd:.2f}) | {idy:.2f} |")
    return "\n".join(lines)


def main():
    logging.getLogger("robot_dynamics").setLevel(logging.ERROR)  # talos' zero-inertia link warnings
    print(f"numpy {np.__version__}, numba {numba.__version__}, pinocchio {pin.__version__}, {os.cpu_count()} cores, "
          f"load average {os.getloadavg()[0]:.2f}; Pinocchio N>1 = Python loop over the batch")
    print(lane_line())
    rows = [row for case in CASES for row in bench_regressor(*case)]
    observer_rows = []
    for case in CASES:
        r, o = bench_observer(*case)
        rows += r
        observer_rows.append(o)
    bench_identification()
    bench_whole_robot()
    print(f"\nload average at the end {os.getloadavg()[0]:.2f}")
    print("\n" + markdown(rows, observer_rows))
    print(f"\nGoal: the regressor at least 6x faster than Pinocchio's loop, one thread, a batch of "
          f"10000; {lane_line()}")
    print("| robot | Pinocchio's loop / ours, fresh output | into out= | met (either) |\n|---|---:|---:|---|")
    for robot, alg, n, t1, t2, ref, ratio, floor, t3, r3 in rows:
        if alg == "regressor" and n == 10000:
            print(f"| {robot} | {1 / ratio:.2f}x | {1 / r3:.2f}x | {'yes' if max(1 / ratio, 1 / r3) >= 6 else 'no'} |")


if __name__ == "__main__":
    main()
