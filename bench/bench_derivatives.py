"""Benchmark the derivatives and the constrained dynamics against Pinocchio, in the same run.

    OPENBLAS_NUM_THREADS=1 PYTHONPATH=. python bench/bench_derivatives.py [--hybrid: part 4 only]

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
4. hybrid_dynamics_derivatives (every other joint known) on panda without its mimic finger and talos
   with a free flyer, one state and a batch of 1000 on one thread, against central finite differences
   of our hybrid_dynamics (6 nv calls) and Pinocchio's closest algorithm, computeABADerivatives (the
   case with no joint known; Pinocchio has no hybrid derivatives).

Within each repeat ours and Pinocchio's are timed in turn; each figure is the median over repeats
after warm-up calls (which also compile or load numba's cached kernels), each ratio the median of
the per-repeat ratios, so that the slow spells of this shared 2-core VM hit both sides.
"""
import os

os.environ["OPENBLAS_NUM_THREADS"] = "1"  # before numpy: OpenBLAS threads fight numba's

import logging
import re
import sys
import sysconfig

import numba
import numpy as np
import pinocchio as pin

from robot_dynamics import dynamics as rd
from robot_dynamics import load_urdf
from robot_dynamics.resources import bundled_urdf
from timing import lane_line, medians

ROBOTS = os.path.join(sysconfig.get_paths()["purelib"], "cmeel.prefix/share/example-robot-data/robots")
PANDA = f"{ROBOTS}/panda_description/urdf/panda.urdf"
TALOS = f"{ROBOTS}/talos_data/robots/talos_reduced.urdf"
SOLO = f"{ROBOTS}/solo_description/robots/solo12.urdf"
BATCHES = (100, 10000)
REPEATS = {1: 15, 100: 15, 10000: 15}
SINGLE_LOOP = 500


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
    """ours(q, v, a, threads, out) and theirs(q, v, a), for N = 1 and the batches (Pinocchio looped),
    ours into fresh arrays and into reused ones (out=: no fresh pages to fault in)."""
    (us, ref), (x, _) = medians([lambda: ours(Q[0], V[0], A[0], None, None), lambda: theirs(PQ[0], PV[0], PA[0])],
                                  REPEATS[1], SINGLE_LOOP)
    us, ref = 1e6 * us, 1e6 * ref
    print(f"{label:50s} N=1      ours {us:8.2f}  pin {ref:8.2f}  pin/ours {x:5.2f}")
    rows.append((label, 1, (us,), ref, (x,)))
    for n in BATCHES:
        q, v, a, pq, pv, pa = Q[:n], V[:n], A[:n], PQ[:n], PV[:n], PA[:n]
        out = tuple(np.zeros((n, V.shape[1], V.shape[1])) for _ in range(3))
        fns = [lambda: ours(q, v, a, 1, None), lambda: ours(q, v, a, 2, None), lambda: ours(q, v, a, 1, out),
               lambda: ours(q, v, a, 2, out), lambda: [theirs(pq[i], pv[i], pa[i]) for i in range(n)]]
        times, ratios = medians(fns, REPEATS[n])
        t = [1e6 * x / n for x in times]
        print(f"{label:50s} N={n:<6d} ours 1 thr {t[0]:7.2f} (x{ratios[0]:5.2f})  2 thr {t[1]:7.2f} (x{ratios[1]:5.2f})"
              f"  out= 1 thr {t[2]:7.2f} (x{ratios[2]:5.2f})  2 thr {t[3]:7.2f} (x{ratios[3]:5.2f})  pin loop {t[4]:7.2f}"
              "   [x = pin/ours, median of per-repeat ratios]")
        rows.append((label, n, tuple(t[:4]), t[4], tuple(ratios[:4])))


def bench_derivatives(rows):
    rng = np.random.default_rng(0)
    cases = [("puma560 (6 dof)", bundled_urdf("puma560"), False, False),
             ("panda (ours: mimic finger, 8 dof)", PANDA, False, True),
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
                  lambda q, v, a, t, out: rd.inverse_dynamics_derivatives(model, q, v, a, threads=t, out=out),
                  lambda q, v, a: pin.computeRNEADerivatives(pmodel, data, q, v, a), Q, V, A, PQ, PV, PA, rows)
        time_pair(f"{name}: d qdd (ABA derivatives)",
                  lambda q, v, a, t, out: rd.forward_dynamics_derivatives(model, q, v, a, threads=t, out=out),
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
        def ours(contacts_or_none, q, v, t, threads):
            """Constrained FD with the contacts, the same route with none, or ABA (None)."""
            if contacts_or_none is None:
                return rd.forward_dynamics(model, q, v, t, threads=threads)
            return rd.constrained_forward_dynamics(model, q, v, t, contacts_or_none, threads=threads)

        def pin_call(i):
            return pin.constraintDynamics(pmodel, data, PQ[i], V[i], T[i], cmodels, cdatas, settings)
        routes = (contacts, [], None)   # constrained, the same route without constraints, ABA
        single, single_x = medians([(lambda c: lambda: ours(c, Q[0], V[0], T[0], None))(c) for c in routes]
                                     + [lambda: pin_call(0)], REPEATS[1], SINGLE_LOOP)
        n = max(BATCHES)
        many, many_x = medians([(lambda c, th: lambda: ours(c, Q, V, T, th))(c, th) for th in (1, 2) for c in routes]
                                 + [lambda: [pin_call(i) for i in range(n)]], REPEATS[n])
        us = [[1e6 * t for t in single[:3]], [1e6 * t / n for t in many[:3]], [1e6 * t / n for t in many[3:6]]]
        xs = [single_x[0], many_x[0], many_x[3]]
        refs = [1e6 * single[3], 1e6 * many[6] / n, 1e6 * many[6] / n]
        for k, label in enumerate(("N=1", f"N={n} 1 thr", f"N={n} 2 thr")):
            cfd, route, fd = us[k]
            solve = cfd - route
            print(f"{label:12s} constrained {cfd:7.2f}  no-constraint route {route:7.2f}  (constraint solve "
                  f"{solve:6.2f})  ABA {fd:6.2f}  constrained/(ABA + solve) {cfd / (fd + solve):4.2f}  "
                  f"pin constraintDynamics {refs[k]:7.2f} (x{xs[k]:5.2f})")
            rows.append((name, label, cfd, route, solve, fd, refs[k], xs[k]))
        q = rd.neutral(model)
        (t_cid, t_g), _ = medians([lambda: rd.contact_inverse_dynamics(model, q, 0, 0, contacts),
                                     lambda: rd.gravity_torques(model, q)], REPEATS[1], SINGLE_LOOP)
        t_cid, t_g = 1e6 * t_cid, 1e6 * t_g
        print(f"contact_inverse_dynamics(model, q, 0, 0, contacts) {t_cid:6.2f} µs   gravity_torques {t_g:6.2f} µs")
        gravity_rows.append((name, t_cid, t_g))


def bench_hybrid(hrows):
    rng = np.random.default_rng(2)
    n = 1000
    for name, urdf, floating in (("panda, mimic removed (9 dof)", PANDA, False), ("talos + free flyer (38 dof)", TALOS, True)):
        model = load_urdf(without_mimic(urdf), floating_base=floating)
        pmodel = pin_model(urdf, floating)
        data = pmodel.createData()
        Q, V, A = states(model, n, rng)
        T = rng.normal(size=A.shape)
        known = np.arange(model.nv) % 2 == 0
        pq = to_pin(model, pmodel, Q[0])
        h = 1e-6

        def differences(q, v, a, tau):
            """Central differences of hybrid_dynamics in q (tangent space), v and u: 6 nv calls."""
            u = np.where(known, a, tau)
            f = lambda q_, v_, u_: rd.hybrid_dynamics(model, q_, v_, known, u_, u_)  # noqa: E731
            for k in range(model.nv):
                e = np.zeros(model.nv)
                e[k] = h
                f(rd.integrate(model, q, e), v, u), f(rd.integrate(model, q, -e), v, u)
                f(q, v + e, u), f(q, v - e, u), f(q, v, u + e), f(q, v, u - e)

        (t, t_fd, ref), (x, x_fd, _) = medians(
            [lambda: rd.hybrid_dynamics_derivatives(model, Q[0], V[0], known, A[0], T[0]),
             lambda: differences(Q[0], V[0], A[0], T[0]),
             lambda: pin.computeABADerivatives(pmodel, data, pq, V[0], T[0])], 7, 20)
        (tb, ref_b), (xb, _) = medians([lambda: rd.hybrid_dynamics_derivatives(model, Q, V, known, A, T, threads=1),
                                        lambda: [pin.computeABADerivatives(pmodel, data, to_pin(model, pmodel, Q[i]), V[i], T[i])
                                                 for i in range(n)]], 5)
        t, t_fd, ref, tb, ref_b = 1e6 * t, 1e6 * t_fd, 1e6 * ref, 1e6 * tb / n, 1e6 * ref_b / n
        print(f"\n## hybrid_dynamics_derivatives, {name}, every other joint known (µs per state)")
        print(f"N=1     ours {t:8.2f}  finite differences {t_fd:9.2f} (x{t_fd / t:5.1f})  "
              f"pin computeABADerivatives {ref:7.2f} (pin/ours x{x:4.2f})")
        print(f"N={n}  ours 1 thr {tb:8.2f}  pin computeABADerivatives loop {ref_b:7.2f} (pin/ours x{xb:4.2f})")
        hrows.append((name, t, t_fd, ref, x, tb, ref_b, xb))


def markdown(rows, crows, grows):
    lines = ["| case | N | ours µs/state: 1 thread | 2 threads | into out=, 1 thread | into out=, 2 threads "
             "| Pinocchio µs/state | Pinocchio / ours: 1 thread | 2 threads | out=, 1 thread | out=, 2 threads |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for label, n, t, ref, x in rows:
        cells = [f"{v:.2f}" for v in t] + ["–"] * (4 - len(t))
        ratios = [f"{v:.2f}" for v in x] + ["–"] * (4 - len(x))
        lines.append(f"| {label} | {n} | {' | '.join(cells)} | {ref:.2f} | {' | '.join(ratios)} |")
    lines += ["", "| robot | N | constrained FD | same route, no constraint | constraint solve | ABA "
              "| constrained / (ABA + solve) | Pinocchio constraintDynamics | Pinocchio / ours |",
              "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for name, label, cfd, route, solve, fd, ref, x in crows:
        lines.append(f"| {name} | {label} | {cfd:.2f} | {route:.2f} | {solve:.2f} | {fd:.2f} | {cfd / (fd + solve):.2f} "
                     f"| {ref:.2f} | {x:.2f} |")
    lines += ["", "| robot | contact_inverse_dynamics(q, 0, 0) µs | gravity_torques µs |", "|---|---:|---:|"]
    for name, t_cid, t_g in grows:
        lines.append(f"| {name} | {t_cid:.2f} | {t_g:.2f} |")
    return "\n".join(lines)


def hybrid_markdown(hrows):
    lines = ["| hybrid_dynamics_derivatives, every other joint known | N=1 µs | finite differences µs | FD / ours "
             "| Pinocchio computeABADerivatives µs | Pinocchio / ours | N=1000, 1 thread, µs/state | Pinocchio loop "
             "| Pinocchio / ours |", "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for name, t, t_fd, ref, x, tb, ref_b, xb in hrows:
        lines.append(f"| {name} | {t:.2f} | {t_fd:.1f} | {t_fd / t:.1f} | {ref:.2f} | {x:.2f} | {tb:.2f} | {ref_b:.2f} "
                     f"| {xb:.2f} |")
    return "\n".join(lines)


def targets(rows, crows):
    """This run against the targets: single calls no slower than Pinocchio's, a batch of 10000 at
    least 3x faster than Pinocchio's one-thread loop, constrained forward dynamics within 2x of ABA
    plus the constraint solve; with each batch's two-thread scaling (into out=, 1 thread / 2
    threads: ~1.9 when the second core is free, less when the host takes it: steal time does not
    show it on this VM)."""
    def worst(pairs, pick=min):
        value, label = pick(pairs)
        return f"{value:.2f} ({label})"
    single = [(x[0], label) for label, n, t, ref, x in rows if n == 1]
    big = [(label, t, x) for label, n, t, ref, x in rows if n == 10000]
    lines = ["targets, this run (worst case):",
             f"  single call, Pinocchio / ours: {worst(single)}",
             f"  batch of 10000, Pinocchio's loop / ours, 2 threads into out=: {worst([(x[3], b) for b, t, x in big])}, "
             f"fresh outputs: {worst([(x[1], b) for b, t, x in big])}; 1 thread into out=: {worst([(x[2], b) for b, t, x in big])}",
             f"  two-thread scaling into out=: {worst([(t[2] / t[3], b) for b, t, x in big])}",
             f"  constrained FD / (ABA + constraint solve): "
             f"{worst([(cfd / (fd + solve), f'{name}, {label}') for name, label, cfd, route, solve, fd, ref, x in crows], max)}"]
    return "\n".join(lines)


def goals(rows):
    """Issue 25's targets against this run: the derivatives of RNEA and ABA at least 3x faster than
    Pinocchio's loop on one thread, a batch of 10000 (panda without its mimic finger is the model
    Pinocchio's derivatives take; ours with it beside it)."""
    lines = [f"Batch goals, this run; {lane_line()}; load average {os.getloadavg()[0]:.2f}",
             "| case | target | Pinocchio's loop / ours, 1 thread into out= | fresh outputs | 2 threads into out= "
             "| two threads over one (out=) | met |", "|---|---:|---:|---:|---:|---:|---|"]
    for label, n, t, ref, x in rows:
        if n == 10000:
            lines.append(f"| {label} | 3x | {x[2]:.2f}x | {x[0]:.2f}x | {x[3]:.2f}x | {t[2] / t[3]:.2f} "
                         f"| {'yes' if x[2] >= 3 else 'no'} |")
    return "\n".join(lines)


def main():
    logging.getLogger("robot_dynamics").setLevel(logging.ERROR)  # talos' zero-inertia link warnings
    print(f"numpy {np.__version__}, numba {numba.__version__}, pinocchio {pin.__version__}, {os.cpu_count()} cores, "
          f"python {sys.version.split()[0]}; Pinocchio N>1 = Python loop over the batch on one thread")
    print(lane_line())
    rows, crows, grows, hrows = [], [], [], []
    if "--hybrid" not in sys.argv:
        bench_derivatives(rows)
        bench_constrained(crows, grows)
    bench_hybrid(hrows)
    if rows:
        print("\n" + markdown(rows, crows, grows))
    print("\n" + hybrid_markdown(hrows))
    if rows:
        print("\n" + targets(rows, crows))
        print("\n" + goals(rows))


if __name__ == "__main__":
    main()
