"""Constrained inverse dynamics: the torques of the actuated joints and the constraint forces that
make a robot under contacts and closed loops follow a given motion, its passive joints carrying
given torques (Kim, Lie group formulation of articulated rigid body dynamics, section 3.1,
eqs. 56-66; Featherstone, Rigid Body Dynamics Algorithms, ch. 8); contact inverse dynamics is its
case "floating joints passive". Conventions (constraints, forces) in constrained.py's docstring;
the algorithm in kernels/constrained_inverse.py. NumPy in and out, one state or a batch.
"""
from functools import partial

import numpy as np

from . import calling as _call
from . import constraints as _con
from .constraints import ConstraintError
from .kernels import STATUS_BODY
from .kernels import constrained as _c
from .kernels import constrained_inverse as _ci
from .kernels import constraints as _k
from .rigid_body import frame_placement, inverse_dynamics

#: objective -> the kernel's code
OBJECTIVES = {"min_force": _ci.MIN_FORCE, "min_torque": _ci.MIN_TORQUE}
#: the motion check's default tolerance: a row of J v or J a + Jdot v may be off by this times
#: max(1, the sum of the magnitudes of its terms) (m/s, rad/s; m/s^2, rad/s^2)
MOTION_TOL = 1e-8
_CID = _call.Kernel(_ci, "constrained_inverse")
_TERMS = _call.Kernel(_c, "jacobian_terms")


def _options(objective, least_squares, tolerance):
    if not isinstance(least_squares, (bool, np.bool_)):
        raise TypeError(f"least_squares must be True or False, got {least_squares!r}")
    if objective not in OBJECTIVES:
        raise ValueError(f"objective must be 'min_force' or 'min_torque', got {objective!r}")
    if tolerance is not None and not (isinstance(tolerance, (int, float)) and 0 <= tolerance < np.inf):
        raise ValueError(f"tolerance must be a finite non-negative number (or None: unchecked), got {tolerance!r}")
    key = (objective, bool(least_squares), tolerance)
    options = _OPTIONS.get(key)
    if options is None:
        options = _OPTIONS[key] = np.array([OBJECTIVES[objective], float(bool(least_squares)),
                                            -1.0 if tolerance is None else float(tolerance)])
    return options


_OPTIONS = {}
_CONTACT = np.array([_ci.MIN_FORCE, 0.0, -1.0])     # contact inverse dynamics: least force, motion unchecked


def _passive(model, d, actuated):
    """1.0 for each passive coordinate (not in `actuated`, a mask over v or joint names)."""
    return _con.complement(model, d, actuated, "actuated")


def _floating(model, d):
    """1.0 for the coordinates of floating joints (contact inverse dynamics' passive ones)."""
    cache = d.masks
    passive = cache.get("floating passive")
    if passive is None:
        passive = np.zeros(model.nv)
        for j in model.joints:
            if j.kind == "floating":
                passive[j.idx_v:j.idx_v + j.nv] = 1.0
        passive.flags.writeable = False     # as `_passive`'s: the compiled entry point takes one array type
        cache["floating passive"] = passive
    return passive


def constrained_inverse_dynamics(model, q, v, a, actuated, contacts=(), loops=(), passive_torques=None,
                                 objective="min_force", least_squares=False, tolerance=MOTION_TOL, threads=None,
                                 out=None, data=None, check_loops=True):
    """(tau, forces): the joint torques and constraint forces with M a + b = tau + J^T forces
    (Kim, eqs. 56-66), the contacts and loops (see constrained.py) held, only the `actuated`
    coordinates free to take any torque.

    actuated: a boolean mask over v, or a list of joint names (every coordinate of each). The
    passive coordinates carry `passive_torques` (an array over v, finite, of which only the
    passive entries are used; default zero: free joints); tau returns them there.
    - As many independent constraints as passive coordinates (a five-bar's two motors, a
      four-bar's one): the answer is unique.
    - Redundant actuation (more actuators than needed), `objective` picks: "min_force" the least
      constraint force (Kim eq. 59 with the pseudo-inverse: the least-norm solution of
      J_p^T f = tau_pr - tau_p); "min_torque" the least actuated torque |tau_a| (eqs. 62-64),
      and of those the least force. With every joint actuated, "min_force" gives forces 0 and
      tau = ID(q, v, a), "min_torque" f = (J J^T)^+ J ID(q, v, a) (eqs. 65-66).
    - Too few actuators (or a singular configuration): the passive joints' motion cannot be
      produced. ConstraintError naming the passive joints left unbalanced, or with
      least_squares=True the least-squares solution: the forces that come closest to balancing
      the passive joints (f = (J_p^T)^+ (tau_pr - tau_p)) and the actuated torques that go with
      them; the passive rows then do not balance (M a + b != tau + J^T f there).
    The motion must meet the constraints: J v = 0 and J a + Jdot v = 0, each row within
    `tolerance` times max(1, the sum of its terms' magnitudes) (None: not checked; v = a = 0, the
    gravity torques, always meets them); ConstraintError naming the constraint otherwise. The loops
    must be closed at q: check_loops=True (the default) refuses a q whose loop frames are more than
    LOOP_TOL = 1e-6 m apart (or turned by 1e-6 rad, "6d") with a ConstraintError naming the loop and
    its gap (`assemble` closes them from a guess); check_loops=False takes q as given.
    v and a may be the number 0. One state: tau (nv,), forces (m,); a batch (N rows): (N, nv)
    and (N, m) (passive_torques one row for all or one per state). out: two arrays (tau, forces)
    of those shapes to fill and return. Every input checked; never NaN."""
    d = _call.of(model, data)
    C, labels, m = _con.rows(model, d, contacts, loops)
    options = _options(objective, least_squares, tolerance)
    passive = _passive(model, d, actuated)
    if not isinstance(check_loops, (bool, np.bool_)):
        raise TypeError(f"check_loops must be True or False, got {check_loops!r}")
    if check_loops and loops:
        _loops_closed(model, d, q, loops, labels[len(labels) - len(loops):])
    return _solve(model, d, q, v, a, C, labels, m, passive, passive_torques, options, threads, out, False)


#: check_loops: how far apart (m) or turned (rad, "6d" loops) a loop's two frames may be at q
LOOP_TOL = 1e-6


def _loops_closed(model, d, q, loops, labels):
    """ConstraintError naming the first loop whose frames are open beyond LOOP_TOL at q (and the batch row)."""
    q = _call.vector(q, model.nq, "q")
    for (frame_a, frame_b, kind), label in zip(loops, labels):
        Ha, Hb = frame_placement(model, q, frame_a, data=d), frame_placement(model, q, frame_b, data=d)
        gap = np.linalg.norm(Ha[..., :3, 3] - Hb[..., :3, 3], axis=-1)
        turn = np.zeros_like(gap)
        if kind == "6d":
            R = np.swapaxes(Hb[..., :3, :3], -1, -2) @ Ha[..., :3, :3]
            turn = np.arccos(np.clip((np.trace(R, axis1=-2, axis2=-1) - 1) / 2, -1.0, 1.0))
        bad = np.flatnonzero(np.atleast_1d((gap > LOOP_TOL) | (turn > LOOP_TOL) | ~np.isfinite(gap + turn)))
        if len(bad):
            r = int(bad[0])
            g, t = np.atleast_1d(gap)[r], np.atleast_1d(turn)[r]
            where = f" (batch row {r})" if q.ndim == 2 else ""
            raise ConstraintError(f"{label} is open at q{where}: its frames are {g:.3g} m apart"
                                  + (f", {t:.3g} rad turned" if kind == "6d" else "")
                                  + f" (check_loops allows {LOOP_TOL:g}); close it with rd.assemble first, or pass "
                                    "check_loops=False to take q as given")


def contact_inverse_dynamics(model, q, v, a, contacts, threads=None, data=None):
    """(tau, forces): the joint torques and contact forces that produce acceleration a, with the
    floating joints (a free-flying base, or any URDF floating joint) unactuated, their torques zero
    (planar joints count as actuated: a mobile base drives them): the case "floating joints
    passive" of constrained_inverse_dynamics, with the least constraint force and the motion not
    checked. The contacts must supply the inverse dynamics' floating rows,
    J_u^T forces = ID(q, v, a)_u, and tau = ID(q, v, a) - J^T forces. Of the force distributions
    that do, the least-norm one (sum of squared force and torque components, in world axes;
    documented choice: it spreads the load evenly and keeps tangential forces small, but knows
    nothing of friction cones or unilateral contact). Without a floating joint every torque is
    available and the forces are zero. v and a may be the number 0 (at rest: gravity compensation
    of a standing robot, contact_inverse_dynamics(model, q, 0, 0, contacts)). a should meet the
    contacts (J a + Jdot v = 0) for the forces to be physical; it is not checked.
    ConstraintError if the contacts cannot produce the floating rows (a single point contact cannot
    hold a base's moment)."""
    d = _call.of(model, data)
    C, labels, m = _con.rows(model, d, contacts, ())
    return _solve(model, d, q, v, a, C, labels, m, _floating(model, d), None, _CONTACT, threads, None, True)


def _solve(model, d, q, v, a, C, labels, m, passive, tp, options, threads, out, contact):
    nv = model.nv
    if out is None and _call.plain_data(model, d, q) is not None:   # one state, plain arrays or 0: the kernel
        zv, za, zt = type(v) is int and v == 0, type(a) is int and a == 0, tp is None
        if (zv or _call.plain(v, nv)) and (za or _call.plain(a, nv)) and (zt or _call.plain(tp, nv)):
            tau, forces = np.empty(nv), np.empty(m)
            if not _CID.run(model.packed, q, d.zero if zv else v, d.zero if za else a, C, passive,
                            d.zero if zt else tp, options, _call.NO_EXT, tau, forces, d.workspace(_ci, m)):
                return tau, forces
    q = _call.vector(q, model.nq, "q")
    n = _call.batch_size(q)
    v = _con.zero_or(v, nv, "v", n)
    a = _con.zero_or(a, nv, "a", n)
    if tp is None:
        tp = np.zeros((1, nv)) if n else np.zeros(nv)
    else:
        tp = _call.vector(tp, nv, "passive_torques", n if np.ndim(tp) == 2 else 0)
        tp = tp.reshape(1, nv) if n and tp.ndim == 1 else tp
    tau, forces = _con.outputs(out, (q.shape[:-1] + (nv,), q.shape[:-1] + (m,)))
    _call.call(_CID, model, d, threads, n, (q, v, a, C, passive, tp, options, _call.NO_EXT, tau, forces), None,
               m, partial(_raise, d, q, v, a, tp, C, labels, passive, options, contact))
    return tau, forces


def _raise(data, q, v, a, tp, C, labels, passive, options, contact, model, status, inputs):
    """A kernel status as an error naming the constraint (a motion that breaks it), the passive
    joints (a motion the actuators cannot produce) or the input."""
    status = np.atleast_1d(status)
    bad = np.flatnonzero(status)
    if not len(bad):
        return
    row, code = int(bad[0]), int(status[bad[0]])
    kind, k = code % STATUS_BODY, code // STATUS_BODY - 1
    where = f" (batch row {row})" if len(status) > 1 else ""
    pick = (lambda x: x[row if len(x) > 1 else 0] if x.ndim == 2 else x)     # one state's inputs
    if kind in (_ci.VELOCITY, _ci.ACCELERATION):
        raise ConstraintError(_motion_message(model, data, pick(q), pick(v), pick(a), C, labels, k, kind, options,
                                              where))
    if kind == _ci.UNREACHABLE:
        if contact:
            raise ConstraintError(
                f"the contacts cannot hold the floating base at this state{where}: no forces at "
                f"{', '.join(labels)} produce the base's share of the inverse dynamics (too few contacts, or "
                "contacts that cannot resist a moment)")
        raise ConstraintError(_unreachable_message(model, data, pick(q), pick(v), pick(a), pick(tp), C, labels,
                                                   passive, where))
    _call.raise_status(model, status, dict(q=q, v=v, a=a, passive_torques=tp))


def _rows_jacobian(model, data, q, v, C):
    """J and Jdot v of kernel rows C at one state (the error paths)."""
    m = int(C[:, _k.C_SIZE].sum())
    J, drift = np.empty((m, model.nv)), np.empty(m)
    _TERMS.kernel(model.packed, q, v, C, J, drift, _call.of(model, data).workspace(_c, m))
    return J, drift


def _motion_message(model, data, q, v, a, C, labels, k, kind, options, where):
    J, drift = _rows_jacobian(model, data, q, v, C)
    r0 = int(sum(C[:k, _k.C_SIZE]))
    rows = slice(r0, r0 + int(C[k, _k.C_SIZE]))
    if kind == _ci.VELOCITY:
        level, residual, rule = "velocity", (J @ v)[rows], "J v = 0: the velocities must keep it"
    else:
        level, residual, rule = ("acceleration", (J @ a + drift)[rows],
                                 "J a + Jdot v = 0: the accelerations must keep it")
    return (f"the motion does not meet {labels[k]} at the {level} level{where}: its rows give "
            f"{np.array2string(residual, precision=4)} where {rule} (tolerance {options[_ci.O_TOLERANCE]:g} of "
            "the terms; tolerance=None skips the check)")


def _unreachable_message(model, data, q, v, a, tp, C, labels, passive, where):
    p = np.flatnonzero(passive)
    J = _rows_jacobian(model, data, q, v, C)[0]
    c = inverse_dynamics(model, q, v, a, data=data)[p] - tp[p]
    Jp = J[:, p]
    f = np.linalg.lstsq(Jp.T, c, rcond=None)[0]
    residual = Jp.T @ f - c
    scale = max(np.abs(c).max(initial=0.0), np.abs(Jp.T * f).max(initial=0.0), 1e-300)
    off = [i for i in np.argsort(-np.abs(residual)) if abs(residual[i]) > 1e-8 * scale]
    rank = np.linalg.matrix_rank(Jp, tol=1e-6 * max(np.abs(Jp).max(initial=0.0), 1e-300))
    names = _con.coordinate_names(model, p[off])
    return (f"the actuated joints cannot produce this motion{where}: the passive joint(s) {names} cannot follow "
            f"the given accelerations, no constraint force balances their equations (left over after the "
            f"least-squares forces: {np.array2string(-residual[off], precision=4)}). "
            f"{', '.join(labels) or 'No constraint'} act(s) on only {rank} of the {len(p)} passive coordinates: "
            "too few actuators, or a singular configuration; least_squares=True returns that least-squares solution")
