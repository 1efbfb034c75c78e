"""Dynamics under rigid constraints: contacts and closed kinematic loops (Kim, Lie group
formulation of articulated rigid body dynamics, section 3; Featherstone, Rigid Body Dynamics
Algorithms, ch. 8). NumPy in and out, one state or a batch, as in dynamics.py. This module:
constrained forward dynamics and the constraint Jacobian, with the conventions every constrained
algorithm shares (below); constrained_inverse.py (inverse dynamics with passive joints, contact
inverse dynamics), constrained_hybrid.py and assembly.py (loop closure) build on them.

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
from . import constraints as _con
from .constraints import KINDS, ConstraintError  # noqa: F401 (importable from here, as before)
from .kernels import constrained as _c

_CFD = _call.Kernel(_c, "constrained_dynamics")
INCONSISTENT = ("the constraints cannot all hold at this state{where}: {label} is not met by any acceleration that "
                "meets the others (contradictory constraints, or a Baumgarte position error along a direction no joint "
                "can move)")
_TERMS = _call.Kernel(_c, "jacobian_terms")


def constrained_forward_dynamics(model, q, v, tau, contacts, loops=(), baumgarte=None, threads=None, data=None):
    """(qdd, forces) of M qdd + C v + g = tau + J^T forces with the contacts and loops held (see the
    module docstring): M = L^T D L (tree sparsity), the Delassus matrix A = J M^-1 J^T, forces the
    least-norm solution of A f = -gamma - J M^-1 (tau - b), qdd = M^-1 (tau - b + J^T f).
    baumgarte=(kp, kd): Baumgarte's stabilisation, J qdd + Jdot v = -kd J v - kp e.
    forces: (m,) for one state, (N, m) for a batch, m = 3 per point and 6 per 6d constraint.
    ConstraintError naming the constraint where they cannot all hold; SingularMassMatrixError."""
    d = _call.of(model, data)
    C, labels, m = _con.rows(model, d, contacts, loops)
    gains = _con.gains(baumgarte)
    if _call.plain_data(model, d, q, v, tau) is not None:
        qdd, forces = np.empty(model.nv), np.empty(m)
        if not _CFD.run(model.packed, q, v, tau, C, gains, qdd, forces, d.workspace(_c, m)):
            return qdd, forces
    q = _call.vector(q, model.nq, "q")
    n = _call.batch_size(q)
    v = _call.vector(v, model.nv, "v", n)
    tau = _call.vector(tau, model.nv, "tau", n)
    qdd = _call.fresh(q.shape[:-1] + (model.nv,))
    forces = np.empty(q.shape[:-1] + (m,))
    _call.call(_CFD, model, d, threads, n, (q, v, tau, C, gains, qdd, forces), dict(q=q, v=v, tau=tau), m,
               _con.inconsistent(labels, INCONSISTENT))
    return qdd, forces


def constraint_jacobian(model, q, v, contacts, loops=(), data=None):
    """(J, Jdot_v) of the constraints (rows stacked as the forces: see the module docstring), J in
    local_world_aligned axes at each frame (a)'s origin (a loop: J_a - J_b), Jdot v the classical
    accelerations at qdd = 0, ([p''] or [p''; w'], loops a's minus b's). One state: (m, nv) and (m,);
    a batch (on one thread): (N, m, nv) and (N, m)."""
    d = _call.of(model, data)
    C, labels, m = _con.rows(model, d, contacts, loops)
    q = _call.vector(q, model.nq, "q")
    n = _call.batch_size(q)
    v = _con.zero_or(v, model.nv, "v", n)
    J = _call.fresh(q.shape[:-1] + (m, model.nv))
    drift = np.empty(q.shape[:-1] + (m,))
    _call.call(_TERMS, model, d, 1, n, (q, v, C, J, drift), dict(q=q, v=v), m)
    return J, drift
