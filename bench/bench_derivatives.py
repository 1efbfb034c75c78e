"""Benchmark the derivatives and the constrained dynamics against Pinocchio, in the same run.

    OPENBLAS_NUM_THREADS=1 PYTHONPATH=. python bench/bench_derivatives.py

1. inverse_dynamics_derivatives and forward_dynamics_derivatives against Pinocchio's
   computeRNEADerivatives and computeABADerivatives on panda (ours with its mimic finger, and both on
   the model without it: Pinocchio's derivatives refuse mimic joints) and talos with a free flyer:
   one state (N = 1) and batches (N = 100, 10000) on 1 and 2 threads, against Pinocchio called once
   or looped in Python over the batch on one thread.
2. constrained_forward_dynamics on solo12 (four point feet) and talos (two 6d soles) against our
   forward_dynamics (ABA), the same route without constraints (M, b, M = L^T D L and the solve: the
   difference is the constraint solve) and Pinocchio's constraintDynamics on the same model.
3. contact_inverse_dynamics(model, q, 0, 0, contacts), the gravity torques of a standing robot, beside
   gravity_torques: what the node would pay at 1 kHz.

Each figure is the median over repeats after warm-up calls (numba's cache is warmed first: the first
call of each kernel compiles or loads it).
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

ROBOTS = os.path.join(sysconfig.get_paths()["purelib"], "cmeel.prefix/share/example-robot-data/robots")
PANDA = f"{ROBOTS}/panda_description/urdf/panda.urdf"
TALOS = f"{ROBOTS}/talos_data/robots/talos_reduced.urdf"
SOLO = f"{ROBOTS}/solo_description/robots/solo12.urdf"
BATCHES = (100, 10000)
REPEATS = {1: 15, 100: 15, 10000: 5}
SINGLE_LOOP = 500


def median_time(fn, repeats, calls=1):
    """Median over `repeats` of the seconds per call of fn(), after three warm-up calls."""
    for _ in range(3):
        fn()
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        for _ in range(calls):
            fn()
        times.append((time.perf_counter() - t) / calls)
    return statistics.median(times)


def states(model, n, rng):
    """n random valid states in our coordinates: q (unit quaternion for a free flyer), v, a."""
    q = np.array([rd.random_configuration(model, rng) for _ in range(n)])
    return q, rng.normal(size=(n, model.nv)), rng.normal(size=(n, model.nv))


def pin_model(urdf, floating):
    return pin.buildModelFromUrdf(urdf, pin.JointModelFreeFlyer()) if floating else pin.buildModelFromUrdf(urdf)


def to_pin(model, pmodel, q):
    """Our q (no mimic joint: the same joints, in the same order) as Pinocchio's (continuous joints
    as cos/sin)."""
    out = np.zeros(pmodel.nq)
    for b, name in enumerate(model.body_joint_names):
        j = pmodel.joints[pmodel.getJointId(name)]
        ours = model.idx_q[b]
        if model.body_joint_kinds[b] == "continuous":
            out[j.idx_q:j.idx_q + 2] = np.cos(q[ours]), np.sin(q[ours])
        else:
            out[j.idx_q:j.idx_q + j.nq] = q[ours:ours + j.nq]
    return out


def without_mimic(urdf):
    return re.sub(r"<mimic[^>]*/>", "", open(urdf).read())


def time_pair(label, ours, theirs, Q, V, A, PQ, PV, PA, rows):
    """ours(q, v, a, threads) and theirs(q, v, a) for N = 1 and the batches."""
    us = 1e6 * median_time(lambda: ours(Q[0], V[0], A[0], None), REPEATS[1], SINGLE_LOOP)
    ref = 1e6 * median_time(lambda: theirs(PQ[0], PV[0], PA[0]), REPEATS[1], SINGLE_LOOP)
    print(f"{label:44s} N=1      ours {us:8.2f}  pin {ref:8.2f}  ours/pin {us / ref:5.2f}")
    rows.append((label, 1, us, None, ref))
    for n in BATCHES:
        q, v, a, pq, pv, pa = Q[:n], V[:n], A[:n], PQ[:n], PV[:n], PA[:n]
        r = REPEATS[n]
        t1 = 1e6 * median_time(lambda: ours(q, v, a, 1), r) / n
        t2 = 1e6 * median_time(lambda: ours(q, v, a, 2), r) / n
        ref = 1e6 * median_time(lambda: [theirs(pq[i], pv[i], pa[i]) for i in range(n)], r) / n
        print(f"{label:44s} N={n:<6d} ours 1 thr {t1:8.2f} (x{ref / t1:5.2f})  2 thr {t2:8.2f} (x{ref / t2:5.2f})  "
              f"pin loop {ref:7.2f}   [x = pin/ours speed-up]")
        rows.append((label, n, t1, t2, ref))


def bench_derivatives(rows):
    rng = np.random.default_rng(0)
    cases = [("panda (ours: mimic finger, 8 dof)", PANDA, False, True),
             ("panda, mimic removed (9 dof)", PANDA, False, False),
             ("talos + free flyer (38 dof)", TALOS, True, False)]
    for name, urdf, floating, mimic in cases:
        model = load_urdf(urdf if mimic else without_mimic(urdf), floating_base=floating)
        pmodel = pin_model(urdf, floating)      # Pinocchio loads mimic joints as independent ones
        data = pmodel.createData()
        Q, V, A = states(model, max(BATCHES), rng)
        if mimic:   # Pinocchio's states: random states of its own (mimic-free) model
            PQ = np.array([pin.randomConfiguration(pmodel, -np.ones(pmodel.nq), np.ones(pmodel.nq)) for _ in range(len(Q))])
            PV, PA = rng.normal(size=(len(Q), pmodel.nv)), rng.normal(size=(len(Q), pmodel.nv))
        else:
            PQ, PV, PA = np.array([to_pin(model, pmodel, q) for q in Q]), V, A
        print(f"\n## {name}: nq={model.nq} nv={model.nv} (µs per state, median)")
        time_pair(f"{name}: d tau (RNEA derivatives)",
                  lambda q, v, a, t: rd.inverse_dynamics_derivatives(model, q, v, a, threads=t),
                  lambda q, v, a: pin.computeRNEADerivatives(pmodel, data, q, v, a), Q, V, A, PQ, PV, PA, rows)
        time_pair(f"{name}: d qdd (ABA derivatives)",
                  lambda q, v, a, t: rd.forward_dynamics_derivatives(model, q, v, a, threads=t),
                  lambda q, v, a: pin.computeABADerivatives(pmodel, data, q, v, a), Q, V, A, PQ, PV, PA, rows)


def pin_contacts(pmodel, frames, kind):
    models = pin.StdVec_RigidConstraintModel()
    for f in frames:
        frame = pmodel.frames[pmodel.getFrameId(f)]
        models.append(pin.RigidConstraintModel(pin.ContactType.CONTACT_3D if kind == "point" else pin.ContactType.CONTACT_6D,
                                               pmodel, frame.parentJoint, frame.placement, pin.LOCAL_WORLD_ALIGNED))
    datas = pin.StdVec_RigidConstraintData()
    for m in models:
        datas.append(m.createData())
    return models, datas


def bench_constrained(rows, gravity_rows):
    rng = np.random.default_rng(1)
    cases = [("solo12, 4 point feet", SOLO, ["FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT"], "point"),
             ("talos, 2 6d soles", TALOS, ["left_sole_link", "right_sole_link"], "6d")]
    for name, urdf, frames, kind in cases:
        model = load_urdf(urdf, floating_base=True)
        pmodel = pin_model(urdf, True)
        data = pmodel.createData()
        contacts = [(f, kind) for f in frames]
        cmodels, cdatas = pin_contacts(pmodel, frames, kind)
        pin.initConstraintDynamics(pmodel, data, cmodels, cdatas)
        settings = pin.ProximalSettings(1e-12, 0.0, 1)
        Q, V, T = states(model, max(BATCHES), rng)
        PQ = np.array([to_pin(model, pmodel, q) for q in Q])
        print(f"\n## {name}: nv={model.nv}, {3 if kind == 'point' else 6}x{len(frames)} constraint rows (µs per state)")
        variants = {
            "constrained_forward_dynamics": lambda q, v, t, th: rd.constrained_forward_dynamics(model, q, v, t, contacts, threads=th),
            "same route, no constraint": lambda q, v, t, th: rd.constrained_forward_dynamics(model, q, v, t, [], threads=th),
            "forward_dynamics (ABA)": lambda q, v, t, th: rd.forward_dynamics(model, q, v, t, threads=th),
        }
        times = {}
        for label, fn in variants.items():
            single = 1e6 * median_time(lambda: fn(Q[0], V[0], T[0], None), REPEATS[1], SINGLE_LOOP)
            n = max(BATCHES)
            batch = 1e6 * median_time(lambda: fn(Q, V, T, 1), REPEATS[n]) / n
            batch2 = 1e6 * median_time(lambda: fn(Q, V, T, 2), REPEATS[n]) / n
            times[label] = (single, batch, batch2)
        pin_single = 1e6 * median_time(lambda: pin.constraintDynamics(pmodel, data, PQ[0], V[0], T[0], cmodels, cdatas, settings),
                                       REPEATS[1], SINGLE_LOOP)
        n = max(BATCHES)
        pin_batch = 1e6 * median_time(lambda: [pin.constraintDynamics(pmodel, data, PQ[i], V[i], T[i], cmodels, cdatas, settings)
                                               for i in range(n)], REPEATS[n]) / n
        cfd, route, fd = (times[k] for k in variants)
        for k, label in enumerate(("N=1", f"N={n} 1 thr", f"N={n} 2 thr")):
            solve = cfd[k] - route[k]
            ref = pin_single if k == 0 else pin_batch
            print(f"{label:12s} constrained {cfd[k]:7.2f}  no-constraint route {route[k]:7.2f}  (constraint solve "
                  f"{solve:6.2f})  ABA {fd[k]:6.2f}  constrained/(ABA + solve) {cfd[k] / (fd[k] + solve):4.2f}  "
                  f"pin constraintDynamics {ref:7.2f} (x{ref / cfd[k]:5.2f})")
            rows.append((name, label, cfd[k], route[k], solve, fd[k], ref))
        q = rd.neutral(model)
        t_cid = 1e6 * median_time(lambda: rd.contact_inverse_dynamics(model, q, 0, 0, contacts), REPEATS[1], SINGLE_LOOP)
        t_g = 1e6 * median_time(lambda: rd.gravity_torques(model, q), REPEATS[1], SINGLE_LOOP)
        print(f"contact_inverse_dynamics(model, q, 0, 0, contacts) {t_cid:6.2f} µs   gravity_torques {t_g:6.2f} µs")
        gravity_rows.append((name, t_cid, t_g))


def markdown(rows, crows, grows):
    lines = ["| case | N | ours µs/state (1 thread) | ours µs/state (2 threads) | Pinocchio µs/state "
             "| Pinocchio / ours (1 thread) | Pinocchio / ours (2 threads) |", "|---|---:|---:|---:|---:|---:|---:|"]
    for label, n, t1, t2, ref in rows:
        two = "–" if t2 is None else f"{t2:.2f}"
        ratio2 = "–" if t2 is None else f"{ref / t2:.2f}"
        lines.append(f"| {label} | {n} | {t1:.2f} | {two} | {ref:.2f} | {ref / t1:.2f} | {ratio2} |")
    lines += ["", "| robot | N | constrained FD | same route, no constraint | constraint solve | ABA "
              "| constrained / (ABA + solve) | Pinocchio constraintDynamics | Pinocchio / ours |",
              "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for name, label, cfd, route, solve, fd, ref in crows:
        lines.append(f"| {name} | {label} | {cfd:.2f} | {route:.2f} | {solve:.2f} | {fd:.2f} | {cfd / (fd + solve):.2f} "
                     f"| {ref:.2f} | {ref / cfd:.2f} |")
    lines += ["", "| robot | contact_inverse_dynamics(q, 0, 0) µs | gravity_torques µs |", "|---|---:|---:|"]
    for name, t_cid, t_g in grows:
        lines.append(f"| {name} | {t_cid:.2f} | {t_g:.2f} |")
    return "\n".join(lines)


def main():
    logging.getLogger("robot_dynamics").setLevel(logging.ERROR)  # talos' zero-inertia link warnings
    print(f"numpy {np.__version__}, numba {numba.__version__}, pinocchio {pin.__version__}, {os.cpu_count()} cores, "
          f"python {sys.version.split()[0]}; Pinocchio N>1 = Python loop over the batch on one thread")
    rows, crows, grows = [], [], []
    bench_derivatives(rows)
    bench_constrained(crows, grows)
    print("\n" + markdown(rows, crows, grows))


if __name__ == "__main__":
    main()
