"""Dynamics under rigid constraints: contacts and closed kinematic loops (Kim, Lie group
formulation of articulated rigid body dynamics, constrained dynamics; Featherstone, Rigid Body
Dynamics Algorithms, ch. 8). NumPy in and out, one state or a batch, as in dynamics.py.

Constraints:
- contacts: a sequence of (frame, kind) or (frame, kind, target). kind "point": the frame's
  origin does not accelerate (3 forces); "6d": the frame does not move (a wrench, 6). target, if
  given, is where the frame belongs (a world position for "point", a 4x4 world placement for
  "6d"): Baumgarte's position term then pulls it there.
- loops: a sequence of (frame_a, frame_b, kind), two frames of the robot held together, closing a
  kinematic loop: "point", their origins coincide; "6d", the frames coincide.
The constraints hold at the acceleration level: the frames' classical accelerations in world
axes ([p''] or [p''; w'], loops: a's minus b's), the time derivative of their velocities J v in
local_world_aligned axes, equal -(kd J v + kp e) with Baumgarte's gains (kp, kd) (default 0: none),
e the position error ([p_a - p_b] or [p_a - p_b; log(R_a R_b^T)], for loops and contacts with a
target). Pinocchio's point contacts (local_world_aligned) take the same classical acceleration;
its 6d contacts hold the frame's spatial acceleration instead, [p'' - w x p'; w']: the two agree
wherever the contact holds at the velocity level (J v = 0), the state a simulation keeps.

Forces are stacked in the given order, contacts first, then loops: [force] (point) or
[force; torque] (6d) at frame (a)'s origin, in local_world_aligned axes, acting on the robot (a
loop's force acts on frame_a, its opposite on frame_b). Redundant constraints (more than the robot
can resist: four point contacts on one foot, a planar loop closed by a 3-D point) do not make the
system singular: the forces are the least-norm ones (pivoted Cholesky of the Delassus matrix,
kernels/psd.py; a pivot below 1e-12 of the largest counts as redundant). Redundant rows are
consistent only where the velocities meet them (J v = 0 along the redundant directions): a point
held on a foot that also has a 6d contact and still turns has a centripetal acceleration no force
can cancel. Constraints that cannot hold together (the residual of the Delassus system above 1e-8
of its terms), or that constrain nothing (a frame no joint moves, two frames of one body), raise
ConstraintError naming them; never NaN.
"""
import numpy as np

from . import calling as _call
from . import kernels as K
from .kernels import constrained as _c

KINDS = {"point": 3, "6d": 6}
_ZERO_GAINS = np.zeros(2)
_CFD, _CID = _call.Direct(_c.constrained_dynamics), _call.Direct(_c.contact_inverse)


class ConstraintError(ValueError):
    """The constraints cannot hold, or constrain nothing; the message names the frames."""


def _scratch(model, m):
    """The model's single-state workspace for m constraint rows (made on first use)."""
    buffers = (model.workspace or _call.workspace(model)).scratch
    w = buffers.get(("constrained", m))
    if w is None:
        w = buffers["constrained", m] = _c.constrained_workspace(model.packed, m)
    return w


def _kind(kind, what):
    if kind not in KINDS:
        raise ValueError(f"{what}: kind must be 'point' or '6d', got {kind!r}")
    return KINDS[kind]


def _target(target, n, what):
    """A contact's target: a world position (point) or a 4x4 world placement (6d) -> (R, p)."""
    x = np.asarray(target, dtype=float)
    if n == 3:
        if x.shape != (3,) or not np.all(np.isfinite(x)):
            raise ValueError(f"{what}: a point contact's target is a world position (3 finite numbers), "
                             f"got {target!r}")
        return np.eye(3), x
    R = x[:3, :3] if x.shape == (4, 4) else None
    if R is None or not np.all(np.isfinite(x)) or np.abs(R.T @ R - np.eye(3)).max() > 1e-6 \
            or np.linalg.det(R) < 0 or np.any(x[3] != (0, 0, 0, 1)):
        raise ValueError(f"{what}: a 6d contact's target is a 4x4 world placement (a rotation and a "
                         f"translation), got {target!r}")
    return R, x[:3, 3]


def _spec(model, frame):
    return _call.frame_spec(model, frame, "local_world_aligned")


def _constraints(model, contacts, loops):
    """Kernel rows for the constraints and a label for each, checked (cached per model for
    constraints named by frames alone, so that repeated calls cost a dictionary lookup)."""
    s = model.workspace or _call.workspace(model)
    cache = getattr(s, "constraint_rows", None)
    if cache is None:
        cache = s.constraint_rows = {}
    try:
        key = (tuple(contacts), tuple(loops))
        return cache[key]
    except TypeError:       # lists inside, or targets (arrays): not cached
        key = None
    except KeyError:
        pass
    if isinstance(contacts, (str, bytes)) or isinstance(loops, (str, bytes)):
        raise ValueError("contacts and loops are sequences of tuples, e.g. [('left_foot', '6d')]")
    rows, labels = [], []
    for k, c in enumerate(contacts):
        what = f"contact {k}"
        if not isinstance(c, (tuple, list)) or len(c) not in (2, 3):
            raise ValueError(f"{what}: expected (frame, kind) or (frame, kind, target), got {c!r}")
        frame, n = c[0], _kind(c[1], what)
        row = np.zeros(_c.C_COLS)
        row[_c.C_SIZE] = n
        row[_c.C_A:_c.C_A + K.FRAME_COLS] = _spec(model, frame)
        if row[_c.C_A + K.F_BODY] < 0:
            raise ConstraintError(f"{what} on frame {frame!r}: no joint moves that frame (it is fixed to the "
                                  "world), so the contact constrains nothing")
        b = row[_c.C_B:_c.C_B + K.FRAME_COLS]
        b[K.F_BODY], b[K.F_ROT:K.F_ROT + 9] = -1, np.eye(3).reshape(9)
        if len(c) == 3:
            R, p = _target(c[2], n, what)
            b[K.F_ROT:K.F_ROT + 9], b[K.F_POS:K.F_POS + 3] = R.reshape(9), p
            row[_c.C_POSITION] = 1.0
        rows.append(row)
        labels.append(f"{what} ({c[1]} on {frame!r})")
    for k, c in enumerate(loops):
        what = f"loop {k}"
        if not isinstance(c, (tuple, list)) or len(c) != 3:
            raise ValueError(f"{what}: expected (frame_a, frame_b, kind), got {c!r}")
        n = _kind(c[2], what)
        row = np.zeros(_c.C_COLS)
        row[_c.C_SIZE], row[_c.C_POSITION] = n, 1.0
        row[_c.C_A:_c.C_A + K.FRAME_COLS], row[_c.C_B:_c.C_B + K.FRAME_COLS] = _spec(model, c[0]), _spec(model, c[1])
        if row[_c.C_A + K.F_BODY] == row[_c.C_B + K.F_BODY]:
            raise ConstraintError(f"{what}: no joint moves frame {c[0]!r} relative to frame {c[1]!r} (they are on "
                                  "one rigid body), so the loop constrains nothing")
        rows.append(row)
        labels.append(f"{what} ({c[2]} between {c[0]!r} and {c[1]!r})")
    C = np.array(rows).reshape(len(rows), _c.C_COLS)
    out = (C, labels, int(C[:, _c.C_SIZE].sum()))
    if key is not None:
        cache[key] = out
    return out


def _gains(baumgarte):
    if baumgarte is None:
        return _ZERO_GAINS
    g = np.asarray(baumgarte, dtype=float).reshape(-1)
    if g.shape != (2,) or not np.all(np.isfinite(g)) or np.any(g < 0):
        raise ValueError(f"baumgarte must be (kp, kd), two finite non-negative gains, got {baumgarte!r}")
    return g


def _run(name, model, n, threads, m, *args):
    return _call.drive(_c, name, model, n, threads, lambda: _scratch(model, m), *args)


def _raise(model, status, labels, inputs, what):
    """Kernel status -> an error: INCONSISTENT names the constraint, the rest as calling.raise_status."""
    status = np.atleast_1d(status)
    bad = np.flatnonzero(status)
    if not len(bad):
        return
    row, code = int(bad[0]), int(status[bad[0]])
    if code % K.STATUS_BODY == _c.INCONSISTENT:
        where = f" (batch row {row})" if len(status) > 1 else ""
        k = code // K.STATUS_BODY - 1
        raise ConstraintError(what(k, where))
    _call.raise_status(model, status, inputs)


def _zero_or(x, n, name, batch):
    """x as a state vector; the number 0 stands for zeros."""
    if np.ndim(x) == 0:
        if x != 0:
            raise ValueError(f"{name} must be an array of {n} numbers (or the number 0 for zeros), got {x!r}")
        return np.zeros((batch, n)) if batch else np.zeros(n)
    return _call.vector(x, n, name, batch)


def constrained_forward_dynamics(model, q, v, tau, contacts, loops=(), baumgarte=None, threads=None):
    """(qdd, forces) of M qdd + C v + g = tau + J^T forces with the contacts and loops held (see the
    module docstring): M = L^T D L (tree sparsity), the Delassus matrix A = J M^-1 J^T, forces the
    least-norm solution of A f = -gamma - J M^-1 (tau - b), qdd = M^-1 (tau - b + J^T f).
    baumgarte=(kp, kd): Baumgarte's stabilisation, J qdd + Jdot v = -kd J v - kp e.
    forces: (m,) for one state, (N, m) for a batch, m = 3 per point and 6 per 6d constraint.
    ConstraintError naming the constraint where they cannot all hold; SingularMassMatrixError."""
    C, labels, m = _constraints(model, contacts, loops)
    gains = _gains(baumgarte)
    if _call.plain_state(model, q, v, tau):
        qdd, forces = np.empty(model.nv), np.empty(m)
        if not _CFD.run(model.packed, q, v, tau, C, gains, qdd, forces, _scratch(model, m)):
            return qdd, forces
    q = _call.vector(q, model.nq, "q")
    n = _call.batch_size(q)
    v = _call.vector(v, model.nv, "v", n)
    tau = _call.vector(tau, model.nv, "tau", n)
    qdd = _call.fresh(q.shape[:-1] + (model.nv,))
    forces = np.empty(q.shape[:-1] + (m,))
    status = _run("constrained_dynamics", model, n, threads, m, q, v, tau, C, gains, qdd, forces) if n \
        else _c.constrained_dynamics(model.packed, q, v, tau, C, gains, qdd, forces, _scratch(model, m))
    _raise(model, status, labels, dict(q=q, v=v, tau=tau), lambda k, where: (
        f"the constraints cannot all hold at this state{where}: {labels[k]} is not met by any acceleration "
        f"that meets the others (contradictory constraints, or a Baumgarte position error along a direction "
        f"no joint can move)"))
    return qdd, forces


def contact_inverse_dynamics(model, q, v, a, contacts, threads=None):
    """(tau, forces): the joint torques and contact forces that produce acceleration a, with the
    floating joints (a free-flying base, or any URDF floating joint) unactuated, their torques zero
    (planar joints count as actuated: a mobile base drives them): the contacts must supply
    the inverse dynamics' floating rows, J_u^T forces = ID(q, v, a)_u, and tau = ID(q, v, a) -
    J^T forces. Of the force distributions that do, the least-norm one (sum of squared force and
    torque components, in world axes; documented choice: it spreads the load evenly and keeps
    tangential forces small, but knows nothing of friction cones or unilateral contact). Without a
    floating joint every torque is available and the forces are zero. v and a may be the number 0
    (at rest: gravity compensation of a standing robot, contact_inverse_dynamics(model, q, 0, 0,
    contacts)). a should meet the contacts (J a + Jdot v = 0) for the forces to be physical; it is
    not checked. ConstraintError if the contacts cannot produce the floating rows (a single point
    contact cannot hold a base's moment)."""
    C, labels, m = _constraints(model, contacts, ())
    if _call.plain(q, model.nq):      # one state: 0 or plain arrays for v and a go straight to the kernel
        s = model.workspace or _call.workspace(model)
        zv, za = type(v) is int and v == 0, type(a) is int and a == 0
        if (zv or _call.plain(v, model.nv)) and (za or _call.plain(a, model.nv)):
            tau, forces = np.empty(model.nv), np.empty(m)
            if not _CID.run(model.packed, q, s.zero if zv else v, s.zero if za else a, C, _call.NO_EXT, tau, forces,
                            _scratch(model, m)):
                return tau, forces
    q = _call.vector(q, model.nq, "q")
    n = _call.batch_size(q)
    v = _zero_or(v, model.nv, "v", n)
    a = _zero_or(a, model.nv, "a", n)
    tau = _call.fresh(q.shape[:-1] + (model.nv,))
    forces = np.empty(q.shape[:-1] + (m,))
    status = _run("contact_inverse", model, n, threads, m, q, v, a, C, _call.NO_EXT, tau, forces) if n \
        else _c.contact_inverse(model.packed, q, v, a, C, _call.NO_EXT, tau, forces, _scratch(model, m))
    _raise(model, status, labels, dict(q=q, v=v, a=a), lambda k, where: (
        f"the contacts cannot hold the floating base at this state{where}: no forces at "
        f"{', '.join(labels)} produce the base's share of the inverse dynamics (too few contacts, or "
        f"contacts that cannot resist a moment)"))
    return tau, forces


def constraint_jacobian(model, q, v, contacts, loops=()):
    """(J, Jdot_v) of the constraints (rows stacked as the forces: see the module docstring), J in
    local_world_aligned axes at each frame (a)'s origin (a loop: J_a - J_b), Jdot v the classical
    accelerations at qdd = 0, ([p''] or [p''; w'], loops a's minus b's). One state: (m, nv) and (m,);
    a batch (on one thread): (N, m, nv) and (N, m)."""
    C, labels, m = _constraints(model, contacts, loops)
    q = _call.vector(q, model.nq, "q")
    n = _call.batch_size(q)
    v = _zero_or(v, model.nv, "v", n)
    J = _call.fresh(q.shape[:-1] + (m, model.nv))
    drift = np.empty(q.shape[:-1] + (m,))
    if n:
        status = np.zeros(n, np.int64)
        _c.jacobian_terms_rows(model.packed, q, v, C, J, drift, status, 0, n, _scratch(model, m))
    else:
        status = _c.jacobian_terms(model.packed, q, v, C, J, drift, _scratch(model, m))
    _call.raise_status(model, status, dict(q=q, v=v))
    return J, drift
