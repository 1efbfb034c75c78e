"""Constrained hybrid dynamics: accelerations given on some coordinates and torques on the others,
under contacts and closed loops: the unknown torques, the unknown accelerations and the constraint
forces (Kim, Lie group formulation of articulated rigid body dynamics, section 3.3, eqs. 70-80;
Featherstone, Rigid Body Dynamics Algorithms, ch. 8). Conventions (constraints, forces) in
constrained.py's docstring; the algorithm in kernels/constrained_hybrid.py.
"""
from functools import partial

import numpy as np

from . import calling as _call
from . import constraints as _con
from .kernels import constrained_hybrid as _ch

_CHD = _call.Kernel(_ch, "constrained_hybrid")
INCONSISTENT = ("the constraints cannot all hold with these given accelerations{where}: {label} is not met by any "
                "acceleration of the torque-given coordinates (the known accelerations break it, or the constraints "
                "contradict each other)")


def constrained_hybrid_dynamics(model, q, v, known, qdd, tau, contacts=(), loops=(), baumgarte=None, threads=None,
                                out=None, data=None):
    """(qdd, tau, forces) of M qdd + b = tau + J^T forces with the contacts and loops held (Kim,
    eqs. 70-80): where known[k] (a boolean mask over v, or a list of joint names) qdd[k] is given
    and tau[k] sought, elsewhere tau[k] is given and qdd[k] sought; only the given entries are
    read. Returns complete qdd and tau, and the forces (stacked as in constrained.py).

    The torque-given coordinates take the accelerations the constraints leave them:
    (J_v M_vv^-1 J_v^T) f = -(J_u qdd_u + J_v qdd_rv + Jdot v), qdd_rv = M_vv^-1 (tau_v - b_v -
    M_vu qdd_u), then qdd_v and tau_u. Unique when the torque-given coordinates can meet the
    constraints (J_v of full row rank: Kim's m <= n_v). Otherwise, as Kim's section 3.3 says, the
    given accelerations must themselves be compatible with the constraints (A_v qdd_v =
    -A_u qdd_u - Adot qdot must have a solution) and the forces are not unique: these are the
    least-norm ones (the torques tau_u follow from them). Given accelerations the constraints
    cannot meet raise ConstraintError naming the constraint; SingularMassMatrixError where M_vv
    is not positive definite. Nothing known: constrained_forward_dynamics; everything known:
    constrained_inverse_dynamics with every joint actuated (forces 0, tau = ID(q, v, qdd)).
    baumgarte=(kp, kd): as in constrained_forward_dynamics. One state or a batch (known one mask
    for all or one per state); out: three arrays (qdd, tau, forces) to fill and return."""
    d = _call.of(model, data)
    C, labels, m = _con.rows(model, d, contacts, loops)
    gains = _con.gains(baumgarte)
    nv = model.nv
    if type(known) is not np.ndarray or known.dtype != bool:
        known = _con.coordinate_mask(model, d, known, "known")
    if out is None and _call.plain_data(model, d, q, qdd, tau) is not None and _call.plain(v, nv) \
            and _call.plain(known, nv, _call.BOOL, (1,)):
        qdd, tau, forces = qdd.copy(), tau.copy(), np.empty(m)
        if not _CHD.run(model.packed, q, v, known, qdd, tau, C, gains, forces, d.workspace(_ch, m)):
            return qdd, tau, forces
    q = _call.vector(q, model.nq, "q")
    n = _call.batch_size(q)
    v = _call.vector(v, nv, "v", n)
    if known.shape not in ((nv,),) + (((n, nv),) if n else ()):
        raise ValueError(f"known must be a boolean mask of shape ({nv},){f' or ({n}, {nv})' if n else ''} or a list "
                         f"of joint names, got shape {known.shape}")
    known = np.ascontiguousarray(known.reshape(1, nv) if n and known.ndim == 1 else known)
    shape = q.shape[:-1]
    qdd_out, tau_out, forces = _con.outputs(out, (shape + (nv,), shape + (nv,), shape + (m,)))
    qdd_out[...] = _call.vector(qdd, nv, "qdd", n)
    tau_out[...] = _call.vector(tau, nv, "tau", n)
    _call.call(_CHD, model, d, threads, n, (q, v, known, qdd_out, tau_out, C, gains, forces),
               partial(_given, q, v, known, qdd_out, tau_out), m, _con.inconsistent(labels, INCONSISTENT))
    return qdd_out, tau_out, forces


def _given(q, v, known, qdd, tau):
    """The inputs an error names: qdd where known, tau elsewhere (the given entries)."""
    return dict(q=q, v=v, qdd=np.where(known, qdd, 0.0), tau=np.where(known, 0.0, tau))
