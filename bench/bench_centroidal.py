"""Benchmark the centre of mass, its Jacobian, the centroidal momentum and its matrix, the energies
and a frame's motion against Pinocchio, in the same run.

    OPENBLAS_NUM_THREADS=1 PYTHONPATH=. python bench/bench_centroidal.py

On panda (with its mimic finger: Pinocchio 4.1 loads it as a mimic joint, so both have the same 8
coordinates) and talos with a free flyer (38): one state (N = 1) and a batch of 10000 on 1 and 2
threads (the matrices also into out=), against Pinocchio called once or looped in Python over the
batch on one thread. The peers: centerOfMass, jacobianCenterOfMass, computeCentroidalMap (A_G
alone; ccrba also forms h_G and I_G), computeCentroidalMomentum, centerOfMass(q, v) followed by
computeCentroidalMomentum(model, data) (c, cdot and h_G, as centroidal_state), computeKineticEnergy,
computePotentialEnergy, forwardKinematics followed by getFrameVelocity or
getFrameClassicalAcceleration (local_world_aligned). Each result is checked against Pinocchio's
first. Within each repeat ours and Pinocchio's are timed in turn; each figure is the median over
repeats, each ratio the median of the per-repeat ratios, so that the slow spells of this shared
2-core VM hit both sides.

Targets: a single call no slower than Pinocchio's for center_of_mass,
center_of_mass_jacobian and centroidal_momentum_matrix; their batches of 10000 at least 3x faster
than Pinocchio's loop on one thread.
"""
import os

os.environ["OPENBLAS_NUM_THREADS"] = "1"  # before numpy: OpenBLAS threads fight numba's

import logging
import sys
import sysconfig

import numba
import numpy as np
import pinocchio as pin

from robot_dynamics import dynamics as rd
from robot_dynamics import load_urdf
from robot_dynamics.resources import bundled_urdf
from timing import medians

ROBOTS = os.path.join(sysconfig.get_paths()["purelib"], "cmeel.prefix/share/example-robot-data/robots")
CASES = [("puma560 (6 dof)", bundled_urdf("puma560"), False, "tool0"),
         ("panda (mimic finger, 8 dof)", f"{ROBOTS}/panda_description/urdf/panda.urdf", False, "panda_hand"),
         ("talos + free flyer (38 dof)", f"{ROBOTS}/talos_data/robots/talos_reduced.urdf", True, "left_sole_link")]
N = 10000
REPEATS = {1: 21, N: 9}
SINGLE_LOOP = 1000
TARGETS = ("center_of_mass", "center_of_mass_jacobian", "centroidal_momentum_matrix")


def to_pin(model, pmodel, q, v):
    """Our state as Pinocchio's, joint by name (continuous joints as cos/sin). With a mimic joint
    that Pinocchio loads as a mimic too, neither has a coordinate for it; one that it loads as an
    independent joint (mimic=False) gets the value its leader gives it (q_full, v_full)."""
    q_full, v_full = q[model.q_source] * model.q_scale + model.q_offset, v[model.v_source] * model.v_scale
    pq, pv = pin.neutral(pmodel), np.zeros(pmodel.nv)
    for b, name in enumerate(model.body_joint_names):
        j = pmodel.joints[pmodel.getJointId(name)]
        if j.nq == 0 or (pmodel.nv == model.nv and model.v_is_mimic[model.idx_v[b]]):
            continue                    # a mimic joint in Pinocchio's model: no coordinate of its own
        x = q_full[model.idx_q[b]:model.idx_q[b] + min(j.nq, 7)]
        pq[j.idx_q:j.idx_q + j.nq] = (np.cos(x[0]), np.sin(x[0])) if model.body_joint_kinds[b] == "continuous" else x
        pv[j.idx_v:j.idx_v + j.nv] = v_full[model.idx_v[b]:model.idx_v[b] + j.nv]
    return pq, pv


def functions(model, pmodel, data, frame):
    """name -> (ours(q, v, a, threads, out), Pinocchio's call(q, v, a) giving the same result (its
    Force or Motion objects as they come), the result's rows if it is a matrix that takes out=)."""
    fid = pmodel.getFrameId(frame)
    lwa = pin.LOCAL_WORLD_ALIGNED

    def pin_state(q, v):
        c = pin.centerOfMass(pmodel, data, q, v)
        return c, data.vcom[0], pin.computeCentroidalMomentum(pmodel, data)

    def pin_frame(q, v, a, get):
        pin.forwardKinematics(pmodel, data, q, v, a)
        return get(pmodel, data, fid, lwa)
    return {
        "center_of_mass": (lambda q, v, a, t, o: rd.center_of_mass(model, q, threads=t),
                           lambda q, v, a: pin.centerOfMass(pmodel, data, q), None),
        "center_of_mass_jacobian": (lambda q, v, a, t, o: rd.center_of_mass_jacobian(model, q, threads=t, out=o),
                                    lambda q, v, a: pin.jacobianCenterOfMass(pmodel, data, q), 3),
        "centroidal_momentum_matrix": (lambda q, v, a, t, o: rd.centroidal_momentum_matrix(model, q, threads=t, out=o),
                                       lambda q, v, a: pin.computeCentroidalMap(pmodel, data, q), 6),
        "centroidal_momentum": (lambda q, v, a, t, o: rd.centroidal_momentum(model, q, v, threads=t),
                                lambda q, v, a: pin.computeCentroidalMomentum(pmodel, data, q, v), None),
        "centroidal_state": (lambda q, v, a, t, o: rd.centroidal_state(model, q, v, threads=t),
                             lambda q, v, a: pin_state(q, v), None),
        "kinetic_energy": (lambda q, v, a, t, o: rd.kinetic_energy(model, q, v, threads=t),
                           lambda q, v, a: pin.computeKineticEnergy(pmodel, data, q, v), None),
        "potential_energy": (lambda q, v, a, t, o: rd.potential_energy(model, q, threads=t),
                             lambda q, v, a: pin.computePotentialEnergy(pmodel, data, q), None),
        "frame_velocity": (lambda q, v, a, t, o: rd.frame_velocity(model, q, v, frame, threads=t),
                           lambda q, v, a: pin_frame(q, v, a, pin.getFrameVelocity), None),
        "frame_acceleration": (lambda q, v, a, t, o: rd.frame_acceleration(model, q, v, a, frame, threads=t),
                               lambda q, v, a: pin_frame(q, v, a, pin.getFrameClassicalAcceleration), None),
    }


def flat(x):
    """A result as one flat array: tuples joined, Pinocchio's Force and Motion as [linear; angular]."""
    if isinstance(x, tuple):
        return np.concatenate([flat(y) for y in x])
    return np.ravel(np.concatenate([x.linear, x.angular]) if isinstance(x, (pin.Force, pin.Motion)) else x)


def coordinate_map(model, pmodel):
    """G with v_pin = G v: Pinocchio orders the coordinates depth-first, ours joint by joint as the
    URDF lists them; a mimic joint that Pinocchio loads as an independent one follows its leader."""
    G = np.zeros((pmodel.nv, model.nv))
    for b, name in enumerate(model.body_joint_names):
        j = pmodel.joints[pmodel.getJointId(name)]
        if j.nv == 0 or (pmodel.nv == model.nv and model.v_is_mimic[model.idx_v[b]]):
            continue
        for d in range(j.nv):
            G[j.idx_v + d, model.v_source[model.idx_v[b] + d]] += model.v_scale[model.idx_v[b] + d]
    return G


def same(ours, theirs, what, G):
    """ours and Pinocchio's result agree (a matrix's columns mapped onto ours by G)."""
    if isinstance(theirs, np.ndarray) and theirs.ndim == 2:
        theirs = theirs @ G
    ours, theirs = flat(ours), flat(theirs)
    err = np.abs(ours - theirs).max() / max(1.0, np.abs(theirs).max())
    assert err < 1e-9, f"{what}: ours and Pinocchio's differ by {err:.2e}"


def pin_models(urdf, floating):
    """Pinocchio's model with mimic joints (the same coordinates as ours) and without (each one an
    independent joint: for the algorithms that refuse mimic joints), each with its data."""
    def build(mimic):
        pmodel = pin.buildModelFromUrdf(urdf, pin.JointModelFreeFlyer(), mimic=mimic) if floating \
            else pin.buildModelFromUrdf(urdf, mimic=mimic)
        return pmodel, pmodel.createData()
    return build(True), build(False)


def bench_robot(name, urdf, floating, frame, rows):
    model = load_urdf(urdf, floating_base=floating)
    (pmodel, data), full = pin_models(urdf, floating)
    assert pmodel.nv == model.nv and np.all(pmodel.gravity.linear == model.gravity)
    rng = np.random.default_rng(0)
    Q = np.array([rd.random_configuration(model, rng) for _ in range(N)])
    V, A = rng.normal(size=(N, model.nv)), rng.normal(size=(N, model.nv))
    states = {}
    for pm in (pmodel, full[0]):
        mapped = [to_pin(model, pm, q, v) + to_pin(model, pm, q, a)[1:] for q, v, a in zip(Q, V, A)]
        states[id(pm)] = tuple(np.array([s[k] for s in mapped]) for k in range(3))
    print(f"\n## {name}: nq={model.nq} nv={model.nv} frame={frame} (µs per state, median; x = Pinocchio / ours)")
    mimic_table, full_table = functions(model, pmodel, data, frame), functions(model, *full, frame)
    for fname, (ours, theirs, matrix_rows) in mimic_table.items():
        PQ, PV, PA = states[id(pmodel)]
        try:
            expected = theirs(PQ[0], PV[0], PA[0])
            peer = "mimic"
        except RuntimeError as error:   # "This algorithm does not support Joint Mimic type in the model."
            if "Mimic" not in str(error):
                raise
            theirs = full_table[fname][1]
            PQ, PV, PA = states[id(full[0])]
            expected, peer = theirs(PQ[0], PV[0], PA[0]), "independent joints"
        same(ours(Q[0], V[0], A[0], None, None), expected, f"{name} {fname}",
             coordinate_map(model, pmodel if peer == "mimic" else full[0]))
        (t1, ref1), (x1, _) = medians([lambda: ours(Q[0], V[0], A[0], None, None), lambda: theirs(PQ[0], PV[0], PA[0])],
                                        REPEATS[1], SINGLE_LOOP)
        fns = [lambda: ours(Q, V, A, 1, None), lambda: ours(Q, V, A, 2, None)]
        if matrix_rows:
            out = np.zeros((N, matrix_rows, model.nv))
            fns += [lambda: ours(Q, V, A, 1, out), lambda: ours(Q, V, A, 2, out)]
        times, ratios = medians(fns + [lambda: [theirs(PQ[i], PV[i], PA[i]) for i in range(N)]], REPEATS[N])
        us = [1e6 * t / N for t in times]
        line = (f"{fname:27s} N=1 ours {1e6 * t1:6.2f} pin {1e6 * ref1:6.2f} (x{x1:5.2f})   N={N} 1 thr {us[0]:6.2f} "
                f"(x{ratios[0]:5.2f}) 2 thr {us[1]:6.2f} (x{ratios[1]:5.2f})")
        if matrix_rows:
            line += f"  out= 1 thr {us[2]:6.2f} (x{ratios[2]:5.2f}) 2 thr {us[3]:6.2f} (x{ratios[3]:5.2f})"
        print(line + f"  pin loop {us[-1]:6.2f}" + ("" if peer == "mimic" else f"  [Pinocchio's model: {peer}]"))
        rows.append((name, fname if peer == "mimic" else f"{fname} (Pinocchio: {peer})", 1e6 * t1, 1e6 * ref1, x1,
                     us[:-1], us[-1], ratios[:-1]))


def markdown(rows):
    lines = ["| robot | function | N=1 ours µs | N=1 Pinocchio µs | Pinocchio / ours | N=10000 ours µs/state: 1 thread "
             "| 2 threads | out=, 1 thread | out=, 2 threads | Pinocchio loop µs/state | Pinocchio / ours: 1 thread "
             "| 2 threads | out=, 1 thread | out=, 2 threads |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for robot, fname, t1, ref1, x1, us, ref, ratios in rows:
        cells = [f"{v:.2f}" for v in us] + ["–"] * (4 - len(us))
        xs = [f"{v:.2f}" for v in ratios] + ["–"] * (4 - len(ratios))
        lines.append(f"| {robot} | {fname} | {t1:.2f} | {ref1:.2f} | {x1:.2f} | {' | '.join(cells)} | {ref:.2f} "
                     f"| {' | '.join(xs)} |")
    return "\n".join(lines)


def targets(rows):
    """This run against the targets (the three functions of TARGETS, worst case over the robots)."""
    picked = [r for r in rows if r[1] in TARGETS]
    single = min((x1, f"{robot}, {fname}") for robot, fname, t1, ref1, x1, us, ref, ratios in picked)
    batch = min((ratios[0], f"{robot}, {fname}") for robot, fname, t1, ref1, x1, us, ref, ratios in picked)
    out = min((ratios[2], f"{robot}, {fname}") for robot, fname, t1, ref1, x1, us, ref, ratios in picked if len(ratios) > 2)
    met = single[0] >= 1.0 and batch[0] >= 3.0
    return "\n".join([f"targets, this run (worst case of {', '.join(TARGETS)}): {'met' if met else 'NOT met'}",
                      f"  single call, Pinocchio / ours (>= 1): {single[0]:.2f} ({single[1]})",
                      f"  batch of {N}, 1 thread, Pinocchio's loop / ours (>= 3): {batch[0]:.2f} ({batch[1]}); "
                      f"into out=: {out[0]:.2f} ({out[1]})"])


def main():
    logging.getLogger("robot_dynamics").setLevel(logging.ERROR)  # talos' zero-inertia link warnings
    print(f"numpy {np.__version__}, numba {numba.__version__}, pinocchio {pin.__version__}, {os.cpu_count()} cores, "
          f"python {sys.version.split()[0]}; Pinocchio N>1 = Python loop over the batch on one thread")
    rows = []
    for case in CASES:
        bench_robot(*case, rows)
    print("\n" + markdown(rows))
    print("\n" + targets(rows))


if __name__ == "__main__":
    main()
